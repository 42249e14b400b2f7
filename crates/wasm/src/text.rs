//! The WebAssembly text format: a `.wat` module read into the binary form that
//! [`crate::Module`] compiles.
//!
//! Requires nothing of the text; guarantees that a malformed one (not UTF-8, not lexically or
//! syntactically a module, an unknown name or label, a bad literal) is a
//! [`WasmError::Text`] naming the line and column, never a panic. The text reader is the
//! `wat` crate, kept in step with `wasmparser`; semantic checks (types, limits) are the
//! validator's, run when the binary is compiled. Cost: linear in the text's length.

use std::path::Path;

use crate::error::WasmError;

/// The binary module that `text` spells; `path`, when given, names the file in the error.
pub fn wat_to_binary(text: &[u8], path: Option<&Path>) -> Result<Vec<u8>, WasmError> {
    let where_ = || path.map_or_else(|| "text".to_string(), |p| p.display().to_string());
    let text = std::str::from_utf8(text).map_err(|e| WasmError::Text {
        message: format!("{}: not UTF-8 at byte {}", where_(), e.valid_up_to()),
    })?;
    wat::parse_str(text).map_err(|mut e| {
        if let Some(p) = path {
            e.set_path(p);
        }
        WasmError::Text {
            message: e.to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_reads_into_its_binary() {
        let bytes = wat_to_binary(
            b"(module (func (export \"f\") (result i32) i32.const 7))",
            None,
        )
        .expect("a well-formed module");
        assert!(bytes.starts_with(b"\0asm\x01\0\0\0"));
        crate::Module::new(&bytes).expect("the binary compiles");
    }

    #[test]
    fn malformed_text_names_the_line_and_column() {
        let err = wat_to_binary(b"(module\n  (func (result i32) i32.const 1_))", None)
            .expect_err("a literal with a trailing underscore is malformed");
        let WasmError::Text { message } = err else {
            panic!("expected a text error, got {err:?}");
        };
        assert!(message.contains(":2:"), "no line in {message:?}");
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_with_the_path() {
        let err =
            wat_to_binary(b"(module \xff)", Some(Path::new("bad.wat"))).expect_err("not UTF-8");
        assert_eq!(
            err.to_string(),
            "malformed text module: bad.wat: not UTF-8 at byte 8"
        );
    }

    #[test]
    fn an_unknown_label_is_malformed() {
        let err = wat_to_binary(b"(module (func br $nowhere))", None).expect_err("unknown label");
        assert!(matches!(err, WasmError::Text { .. }), "{err:?}");
    }
}
