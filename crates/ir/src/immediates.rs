//! Immediate operands: condition codes, trap codes, memory flags, atomic operations.
//!
//! Each is a small `Copy` type with a `name`/`from_name` pair matching CLIF's spelling, so the
//! parser and printer agree by construction.

use std::fmt;

macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
        pub enum $name { $($variant),* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The CLIF spelling.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),* }
            }

            /// Parse the CLIF spelling.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

named_enum!(
    /// Integer comparison condition.
    IntCC {
        Equal = "eq",
        NotEqual = "ne",
        SignedLessThan = "slt",
        SignedGreaterThanOrEqual = "sge",
        SignedGreaterThan = "sgt",
        SignedLessThanOrEqual = "sle",
        UnsignedLessThan = "ult",
        UnsignedGreaterThanOrEqual = "uge",
        UnsignedGreaterThan = "ugt",
        UnsignedLessThanOrEqual = "ule",
    }
);

impl IntCC {
    /// The condition that holds exactly when `self` does not.
    pub fn inverse(self) -> IntCC {
        use IntCC::*;
        match self {
            Equal => NotEqual,
            NotEqual => Equal,
            SignedLessThan => SignedGreaterThanOrEqual,
            SignedGreaterThanOrEqual => SignedLessThan,
            SignedGreaterThan => SignedLessThanOrEqual,
            SignedLessThanOrEqual => SignedGreaterThan,
            UnsignedLessThan => UnsignedGreaterThanOrEqual,
            UnsignedGreaterThanOrEqual => UnsignedLessThan,
            UnsignedGreaterThan => UnsignedLessThanOrEqual,
            UnsignedLessThanOrEqual => UnsignedGreaterThan,
        }
    }

    /// The condition with the operands swapped (`a < b` ⇔ `b > a`).
    pub fn swap_args(self) -> IntCC {
        use IntCC::*;
        match self {
            Equal | NotEqual => self,
            SignedLessThan => SignedGreaterThan,
            SignedGreaterThan => SignedLessThan,
            SignedGreaterThanOrEqual => SignedLessThanOrEqual,
            SignedLessThanOrEqual => SignedGreaterThanOrEqual,
            UnsignedLessThan => UnsignedGreaterThan,
            UnsignedGreaterThan => UnsignedLessThan,
            UnsignedGreaterThanOrEqual => UnsignedLessThanOrEqual,
            UnsignedLessThanOrEqual => UnsignedGreaterThanOrEqual,
        }
    }
}

named_enum!(
    /// Floating-point comparison condition. "Unordered" means at least one operand is NaN.
    FloatCC {
        Ordered = "ord",
        Unordered = "uno",
        Equal = "eq",
        NotEqual = "ne",
        OrderedNotEqual = "one",
        UnorderedOrEqual = "ueq",
        LessThan = "lt",
        LessThanOrEqual = "le",
        GreaterThan = "gt",
        GreaterThanOrEqual = "ge",
        UnorderedOrLessThan = "ult",
        UnorderedOrLessThanOrEqual = "ule",
        UnorderedOrGreaterThan = "ugt",
        UnorderedOrGreaterThanOrEqual = "uge",
    }
);

named_enum!(
    /// The read-modify-write operation of `atomic_rmw`.
    AtomicRmwOp {
        Add = "add",
        Sub = "sub",
        And = "and",
        Nand = "nand",
        Or = "or",
        Xor = "xor",
        Xchg = "xchg",
        Umin = "umin",
        Umax = "umax",
        Smin = "smin",
        Smax = "smax",
    }
);

/// Why a program trapped. Five reserved codes plus user codes `user1` … `user250`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct TrapCode(u8);

impl TrapCode {
    const RESERVED_START: u8 = 251;
    pub const STACK_OVERFLOW: TrapCode = TrapCode(251);
    pub const INTEGER_OVERFLOW: TrapCode = TrapCode(252);
    pub const HEAP_OUT_OF_BOUNDS: TrapCode = TrapCode(253);
    pub const INTEGER_DIVISION_BY_ZERO: TrapCode = TrapCode(254);
    pub const BAD_CONVERSION_TO_INTEGER: TrapCode = TrapCode(255);

    /// A user trap code; `None` unless `1 <= code <= 250`.
    pub const fn user(code: u8) -> Option<TrapCode> {
        if code == 0 || code >= Self::RESERVED_START {
            None
        } else {
            Some(TrapCode(code))
        }
    }

    /// The raw byte (never zero), for encoding trap tables.
    pub fn as_raw(self) -> u8 {
        self.0
    }

    /// The code [`as_raw`](Self::as_raw) encoded; `None` for 0.
    pub const fn from_raw(raw: u8) -> Option<TrapCode> {
        if raw == 0 {
            None
        } else {
            Some(TrapCode(raw))
        }
    }

    /// Parse `int_divz`, `user7`, …
    pub fn from_name(s: &str) -> Option<TrapCode> {
        Some(match s {
            "stk_ovf" => Self::STACK_OVERFLOW,
            "int_ovf" => Self::INTEGER_OVERFLOW,
            "heap_oob" => Self::HEAP_OUT_OF_BOUNDS,
            "int_divz" => Self::INTEGER_DIVISION_BY_ZERO,
            "bad_toint" => Self::BAD_CONVERSION_TO_INTEGER,
            _ => {
                let digits = s.strip_prefix("user")?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                return TrapCode::user(digits.parse().ok()?);
            }
        })
    }
}

impl fmt::Display for TrapCode {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            Self::STACK_OVERFLOW => f.write_str("stk_ovf"),
            Self::INTEGER_OVERFLOW => f.write_str("int_ovf"),
            Self::HEAP_OUT_OF_BOUNDS => f.write_str("heap_oob"),
            Self::INTEGER_DIVISION_BY_ZERO => f.write_str("int_divz"),
            Self::BAD_CONVERSION_TO_INTEGER => f.write_str("bad_toint"),
            TrapCode(n) => write!(f, "user{n}"),
        }
    }
}

/// Which disjoint memory region an access touches, if known: one of the older fixed
/// regions, or `regionN`, declared in the function's preamble
/// ([`crate::function::AliasRegionData`]). Accesses in different regions never alias.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AliasRegion {
    Heap,
    Table,
    Vmctx,
    /// `regionN`: index `N` into [`crate::Function::alias_regions`].
    Declared(u32),
}

impl fmt::Display for AliasRegion {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            AliasRegion::Heap => f.write_str("heap"),
            AliasRegion::Table => f.write_str("table"),
            AliasRegion::Vmctx => f.write_str("vmctx"),
            AliasRegion::Declared(n) => write!(f, "region{n}"),
        }
    }
}

/// Byte order of a memory access.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Endianness {
    Little,
    Big,
}

/// Flags on a memory access.
///
/// By default an access may trap with `heap_oob`; `notrap` promises it does not, and another
/// trap code may be named instead. Printed in a fixed order so printing is canonical.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct MemFlags {
    /// `None` means `notrap`.
    pub trap_code: Option<TrapCode>,
    pub aligned: bool,
    pub readonly: bool,
    pub can_move: bool,
    pub endianness: Option<Endianness>,
    pub alias_region: Option<AliasRegion>,
}

impl Default for MemFlags {
    fn default() -> Self {
        MemFlags::new()
    }
}

impl MemFlags {
    /// Default flags: may trap with `heap_oob`, native endianness.
    pub const fn new() -> Self {
        MemFlags {
            trap_code: Some(TrapCode::HEAP_OUT_OF_BOUNDS),
            aligned: false,
            readonly: false,
            can_move: false,
            endianness: None,
            alias_region: None,
        }
    }

    /// `notrap aligned`, the flags of frame accesses.
    pub const fn trusted() -> Self {
        let mut f = MemFlags::new();
        f.trap_code = None;
        f.aligned = true;
        f
    }

    /// Apply one flag word. Returns `Ok(false)` when `word` is not a flag at all, and an error
    /// when it is a flag that conflicts with one already set.
    pub fn set_by_name(&mut self, word: &str) -> Result<bool, &'static str> {
        match word {
            "notrap" => self.trap_code = None,
            "aligned" => self.aligned = true,
            "readonly" => self.readonly = true,
            "can_move" => self.can_move = true,
            "little" | "big" => {
                let e = if word == "little" {
                    Endianness::Little
                } else {
                    Endianness::Big
                };
                if self.endianness.is_some_and(|old| old != e) {
                    return Err("cannot set both big and little endian");
                }
                self.endianness = Some(e);
            }
            "heap" => self.alias_region = Some(AliasRegion::Heap),
            "table" => self.alias_region = Some(AliasRegion::Table),
            "vmctx" => self.alias_region = Some(AliasRegion::Vmctx),
            _ => match TrapCode::from_name(word) {
                Some(code) => self.trap_code = Some(code),
                None => return Ok(false),
            },
        }
        Ok(true)
    }
}

impl fmt::Display for MemFlags {
    /// Prints each non-default flag preceded by a space (empty for default flags).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.trap_code {
            None => f.write_str(" notrap")?,
            Some(TrapCode::HEAP_OUT_OF_BOUNDS) => {}
            Some(code) => write!(f, " {code}")?,
        }
        if self.aligned {
            f.write_str(" aligned")?;
        }
        if self.readonly {
            f.write_str(" readonly")?;
        }
        if self.can_move {
            f.write_str(" can_move")?;
        }
        match self.endianness {
            Some(Endianness::Little) => f.write_str(" little")?,
            Some(Endianness::Big) => f.write_str(" big")?,
            None => {}
        }
        if let Some(r) = self.alias_region {
            write!(f, " {r}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_codes_round_trip() {
        for &cc in IntCC::ALL {
            assert_eq!(IntCC::from_name(cc.name()), Some(cc));
            assert_eq!(cc.inverse().inverse(), cc);
            assert_eq!(cc.swap_args().swap_args(), cc);
        }
        for &cc in FloatCC::ALL {
            assert_eq!(FloatCC::from_name(cc.name()), Some(cc));
        }
        assert_eq!(FloatCC::ALL.len(), 14);
    }

    #[test]
    fn trap_codes() {
        assert_eq!(TrapCode::from_name("user1"), TrapCode::user(1));
        assert_eq!(TrapCode::from_name("user0"), None);
        assert_eq!(TrapCode::from_name("user251"), None);
        assert_eq!(TrapCode::from_name("user"), None);
        assert_eq!(TrapCode::from_name("user+1"), None);
        for name in [
            "stk_ovf",
            "int_ovf",
            "heap_oob",
            "int_divz",
            "bad_toint",
            "user42",
        ] {
            assert_eq!(TrapCode::from_name(name).unwrap().to_string(), name);
        }
    }

    #[test]
    fn mem_flags() {
        let mut f = MemFlags::new();
        assert_eq!(f.to_string(), "");
        assert_eq!(f.set_by_name("notrap"), Ok(true));
        assert_eq!(f.set_by_name("aligned"), Ok(true));
        assert_eq!(f.set_by_name("little"), Ok(true));
        assert!(f.set_by_name("big").is_err());
        assert_eq!(f.set_by_name("v3"), Ok(false));
        assert_eq!(f.to_string(), " notrap aligned little");
        assert_eq!(MemFlags::trusted().to_string(), " notrap aligned");
    }
}
