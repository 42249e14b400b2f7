//! CLIF text: parsing ([`parse_functions`], [`parse_bytes`]) and printing (`Display` for
//! [`crate::Function`], in `printer.rs`).
//!
//! Contract. The parser accepts Cranelift's CLIF syntax for the IR Kestrel supports and returns
//! compact functions that keep the text's value and block numbers and carry a source map (see
//! `parser/mod.rs`). Top-level `test`, `set` and `target` lines are skipped: the test runner
//! reads them itself. The printer writes Cranelift's layout, and its output parses back to a
//! function that prints identically (the round-trip property the tests check). Malformed
//! input never panics; it yields a [`ParseError`] with `file:line:col`.

mod error;
mod lexer;
mod parser;
mod printer;

pub use error::ParseError;

use crate::function::Function;

/// Parse every function in `text`; `file` names the input in error messages.
pub fn parse_functions(text: &str, file: &str) -> Result<Vec<Function>, ParseError> {
    parser::Parser::new(text, file)?.parse_all()
}

/// Parse `text` one function at a time, calling `each` with every function as soon as it
/// is parsed (so a caller can time or process functions one by one). Stops at the first
/// error. A text without functions is an error, as for [`parse_functions`].
pub fn parse_each(
    text: &str,
    file: &str,
    mut each: impl FnMut(Function),
) -> Result<(), ParseError> {
    let mut parser = parser::Parser::new(text, file)?;
    let mut any = false;
    while let Some(f) = parser.parse_next()? {
        any = true;
        each(f);
    }
    if !any {
        return Err(parser.error_here("expected 'function': the file defines no functions"));
    }
    Ok(())
}

/// Like [`parse_functions`] for raw bytes: invalid UTF-8 is an error at the first bad byte.
pub fn parse_bytes(bytes: &[u8], file: &str) -> Result<Vec<Function>, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_functions(text, file),
        Err(e) => Err(ParseError::invalid_utf8(file, bytes, e.valid_up_to())),
    }
}
