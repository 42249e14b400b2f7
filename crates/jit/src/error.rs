//! Errors: what the user of the module did wrong, said so they can fix it.

use kestrel_ir::{CallConv, TrapCode, Type};

use crate::module::FuncId;

/// Why declaring, defining, finalizing or looking up a function failed.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// A declaration or definition the module rules out (shared with `kestrel-object`).
    #[error(transparent)]
    Decl(#[from] kestrel_module::DeclError),
    #[error("function `{name}` could not be compiled: {error}")]
    Compile {
        name: String,
        error: kestrel_codegen::machinst::CodegenError,
    },
    #[error("symbol `{name}` was not found in the JIT's symbol table nor in the process (dlsym); register it with `JitBuilder::symbol`")]
    UndefinedSymbol { name: String },
    #[error("function `{name}` is declared as local but was never defined; call `define_function` before finalizing")]
    UndefinedFunction { name: String },
    #[error("`{from}` refers to `{name}`, which is not declared in the module; declare it (local or import) or use `RelocTarget::Symbol`")]
    UnknownFunction { from: String, name: String },
    #[error("`{name}` is not a finalized local function or data object of this module, so it cannot be freed")]
    NotFreeable { name: String },
    #[error("function `{name}` has not been finalized yet; call `finalize_definitions` first")]
    NotFinalized { name: String },
    #[error("function `{name}`: {what} at offset {offset:#x} lies outside its {len} code bytes")]
    OutOfBounds {
        name: String,
        what: &'static str,
        offset: u32,
        len: usize,
    },
    #[error("function `{name}`: the {kind:?} relocation at offset {offset:#x} cannot reach `{target}` at {address:#x}")]
    RelocOutOfRange {
        name: String,
        offset: u32,
        kind: crate::RelocKind,
        target: String,
        address: u64,
    },
    #[error("function `{name}`: the {kind:?} relocation at offset {offset:#x} belongs to another ISA's code; this JIT places {isa} code only")]
    ForeignReloc {
        name: String,
        kind: crate::RelocKind,
        offset: u32,
        isa: &'static str,
    },
    #[error("the module compiles for {isa}, but this process runs {host} code; a JIT module's ISA must be the host's")]
    ForeignIsa { isa: &'static str, host: &'static str },
    #[error("function `{name}` uses calling convention `{}`, which the JIT cannot call into", call_conv.name())]
    UnsupportedCallConv { name: String, call_conv: CallConv },
    #[error("code too large: {bytes} bytes in one finalize")]
    CodeTooLarge { bytes: usize },
    #[error("too many live code regions (at most {max}); finalize fewer, larger batches")]
    TooManyRegions { max: usize },
    #[error("{op} failed: {source}")]
    Memory { op: &'static str, source: std::io::Error },
}

/// A native trap caught in JIT code: which trap site fired.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, thiserror::Error)]
#[error("trap {code} at offset {offset:#x} of {func:?}")]
pub struct Trap {
    /// The trap code recorded for the faulting instruction.
    pub code: TrapCode,
    /// Offset of the faulting instruction from the start of its function.
    pub offset: u32,
    /// The function that contains the faulting instruction.
    pub func: FuncId,
    /// The source location the IR gave the faulting instruction (a front end's `@srcloc`,
    /// or its line when the function was parsed from text), if it had one.
    pub srcloc: Option<u32>,
}

/// Why a call from the host did not produce results.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The JIT code trapped at a registered trap site.
    #[error(transparent)]
    Trap(#[from] Trap),
    #[error("expected {expected} arguments, got {got}")]
    ArgumentCount { expected: usize, got: usize },
    #[error("argument {index} must be {expected}, got {got}")]
    ArgumentType { index: usize, expected: Type, got: Type },
    #[error("the trampoline cannot call this signature: {reason}")]
    UnsupportedSignature { reason: &'static str },
    #[error(transparent)]
    Jit(#[from] JitError),
}

impl CallError {
    /// The trap, if the call trapped.
    pub fn trap(&self) -> Option<Trap> {
        match self {
            CallError::Trap(t) => Some(*t),
            _ => None,
        }
    }
}
