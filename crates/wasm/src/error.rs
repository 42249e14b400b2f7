//! Errors for bad input and failed linking: each names the place (a byte offset in the
//! binary, an import's module and field, a function) and the problem. None of them is a
//! panic: malformed, invalid and unsupported modules all come back as a [`WasmError`].

use crate::trap::Trap;

/// Why a module could not be compiled or instantiated.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// The binary is not well-formed or not valid WebAssembly (wasmparser's verdict).
    #[error("invalid module at byte {offset:#x}: {message}")]
    Invalid { offset: usize, message: String },
    /// A text module (`.wat`) is malformed: the text reader's message, with the path, line
    /// and column of the problem.
    #[error("malformed text module: {message}")]
    Text { message: String },
    /// The module is valid but uses a proposal or construct Kestrel does not support yet.
    #[error("unsupported at byte {offset:#x}: {feature}")]
    Unsupported { offset: usize, feature: String },
    /// The translator could not build IR for a function (an internal error: a bug).
    #[error("function {func} at byte {offset:#x}: could not build IR: {message}")]
    Translate { func: u32, offset: usize, message: String },
    /// The backend or the JIT refused the translated code.
    #[error("function {func}: {message}")]
    Compile { func: u32, message: String },
    /// An import is missing or does not match what the module expects.
    #[error("import `{module}`.`{field}`: {message}")]
    Link { module: String, field: String, message: String },
    /// Instantiation trapped (a segment out of bounds, or the start function trapped).
    #[error("instantiation trapped: {0}")]
    Trap(#[from] Trap),
    /// A resource could not be had (memory for a linear memory or a table).
    #[error("{0}")]
    Resource(String),
}

impl WasmError {
    /// Turn a wasmparser error into [`WasmError::Invalid`], or into
    /// [`WasmError::Unsupported`] when the module would be valid with every proposal enabled
    /// (see [`crate::features::classify`]).
    pub(crate) fn from_parser(e: wasmparser::BinaryReaderError) -> Self {
        WasmError::Invalid {
            offset: e.offset(),
            message: e.message().to_string(),
        }
    }

    /// Whether this error says a proposal or construct is not supported (as opposed to the
    /// module being wrong).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, WasmError::Unsupported { .. })
    }
}
