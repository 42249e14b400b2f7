//! Wasm traps and their IR trap codes, in one place: the translator emits these codes, the
//! runtime maps a native trap's code back to a [`Trap`]. Messages are the spec's wording (the
//! spec tests' `assert_trap` strings start with them).

use kestrel_ir::TrapCode;

/// `unreachable` executed.
pub(crate) const UNREACHABLE: TrapCode = user(1);
/// `call_indirect` index at or past the table's length.
pub(crate) const TABLE_OUT_OF_BOUNDS: TrapCode = user(2);
/// `call_indirect` to a null table entry.
pub(crate) const NULL_REFERENCE: TrapCode = user(3);
/// `call_indirect` to a function of another type.
pub(crate) const BAD_SIGNATURE: TrapCode = user(4);
/// A host function reported a trap.
pub(crate) const HOST: TrapCode = user(5);
/// `table.get`/`set`/`fill`/`copy`/`init` out of bounds.
pub(crate) const TABLE_ACCESS: TrapCode = user(6);

const fn user(code: u8) -> TrapCode {
    match TrapCode::user(code) {
        Some(c) => c,
        None => panic!("user trap codes are 1..=250"),
    }
}

/// Why Wasm execution stopped before returning.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Trap {
    #[error("unreachable")]
    Unreachable,
    #[error("out of bounds memory access")]
    MemoryOutOfBounds,
    #[error("out of bounds table access")]
    TableOutOfBounds,
    #[error("undefined element")]
    UndefinedElement,
    #[error("uninitialized element")]
    UninitializedElement,
    #[error("indirect call type mismatch")]
    BadSignature,
    #[error("integer divide by zero")]
    IntegerDivideByZero,
    #[error("integer overflow")]
    IntegerOverflow,
    #[error("invalid conversion to integer")]
    BadConversionToInteger,
    #[error("call stack exhausted")]
    StackOverflow,
    /// A host function trapped, with its message.
    #[error("host trap: {0}")]
    Host(String),
    /// Not a fault: a host function ended the execution on the program's request with this
    /// exit code (WASI `proc_exit`). It unwinds like a trap; embedders treat it as the
    /// program's end (see `wasi::Wasi::run_start`).
    #[error("exit with code {0}")]
    Exit(i32),
    /// A trap code Kestrel-generated Wasm code never uses (a bug if seen).
    #[error("unexpected trap code {0}")]
    Other(String),
}

impl Trap {
    /// The Wasm trap for an IR trap code hit by translated code.
    pub fn from_code(code: TrapCode) -> Trap {
        match code {
            TrapCode::STACK_OVERFLOW => Trap::StackOverflow,
            TrapCode::INTEGER_OVERFLOW => Trap::IntegerOverflow,
            TrapCode::HEAP_OUT_OF_BOUNDS => Trap::MemoryOutOfBounds,
            TrapCode::INTEGER_DIVISION_BY_ZERO => Trap::IntegerDivideByZero,
            TrapCode::BAD_CONVERSION_TO_INTEGER => Trap::BadConversionToInteger,
            UNREACHABLE => Trap::Unreachable,
            TABLE_OUT_OF_BOUNDS => Trap::UndefinedElement,
            NULL_REFERENCE => Trap::UninitializedElement,
            BAD_SIGNATURE => Trap::BadSignature,
            HOST => Trap::Host("a host function trapped".into()),
            TABLE_ACCESS => Trap::TableOutOfBounds,
            other => Trap::Other(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_the_translator_emits_maps_to_its_own_trap() {
        let codes = [
            (UNREACHABLE, Trap::Unreachable),
            (TABLE_OUT_OF_BOUNDS, Trap::UndefinedElement),
            (NULL_REFERENCE, Trap::UninitializedElement),
            (BAD_SIGNATURE, Trap::BadSignature),
            (TrapCode::HEAP_OUT_OF_BOUNDS, Trap::MemoryOutOfBounds),
            (TrapCode::STACK_OVERFLOW, Trap::StackOverflow),
            (TABLE_ACCESS, Trap::TableOutOfBounds),
        ];
        for (code, trap) in codes {
            assert_eq!(Trap::from_code(code), trap);
        }
        assert_eq!(
            Trap::IntegerDivideByZero.to_string(),
            "integer divide by zero"
        );
    }
}
