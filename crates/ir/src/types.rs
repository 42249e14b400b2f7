//! Value types.
//!
//! A [`Type`] is one byte: the low nibble is the lane kind (`i8` … `f64`), the high nibble is
//! log2 of the lane count. Scalars have a lane count of one (high nibble zero), so vector types
//! (`i32x4` = lane `i32`, log2 lanes 2) fit the same encoding when they are added; today the
//! parser and verifier accept scalars only. The value 0 is [`Type::INVALID`], used for
//! "no type" (for example the controlling type of an instruction that has none).

use std::fmt;

/// The type of an SSA value.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Type(u8);

const LANE_MASK: u8 = 0x0f;
const LOG2_LANES_SHIFT: u8 = 4;

impl Type {
    /// No type.
    pub const INVALID: Type = Type(0);
    pub const I8: Type = Type(1);
    pub const I16: Type = Type(2);
    pub const I32: Type = Type(3);
    pub const I64: Type = Type(4);
    pub const I128: Type = Type(5);
    pub const F32: Type = Type(6);
    pub const F64: Type = Type(7);

    /// All scalar types, in a fixed order (useful for tests and generators).
    pub const SCALARS: [Type; 7] = [
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::I128,
        Type::F32,
        Type::F64,
    ];

    /// The lane type: the type itself for a scalar.
    #[inline]
    pub fn lane_type(self) -> Type {
        Type(self.0 & LANE_MASK)
    }

    /// log2 of the number of lanes (0 for scalars).
    #[inline]
    pub fn log2_lanes(self) -> u8 {
        self.0 >> LOG2_LANES_SHIFT
    }

    #[inline]
    pub fn is_invalid(self) -> bool {
        self == Type::INVALID
    }

    #[inline]
    pub fn is_scalar(self) -> bool {
        !self.is_invalid() && self.log2_lanes() == 0
    }

    /// An integer scalar (`i8` … `i128`).
    #[inline]
    pub fn is_int(self) -> bool {
        self.is_scalar() && (Type::I8.0..=Type::I128.0).contains(&self.0)
    }

    /// A float scalar (`f32`, `f64`).
    #[inline]
    pub fn is_float(self) -> bool {
        self == Type::F32 || self == Type::F64
    }

    /// Width of one lane in bits (0 for INVALID).
    #[inline]
    pub fn lane_bits(self) -> u32 {
        match self.lane_type() {
            Type::I8 => 8,
            Type::I16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
            Type::I128 => 128,
            _ => 0,
        }
    }

    /// The one-byte encoding: a dense key for tables indexed by type.
    #[inline]
    pub fn repr(self) -> u8 {
        self.0
    }

    /// Width of the whole value in bits.
    #[inline]
    pub fn bits(self) -> u32 {
        self.lane_bits() << self.log2_lanes()
    }

    /// Width of the whole value in bytes.
    #[inline]
    pub fn bytes(self) -> u32 {
        self.bits() / 8
    }

    /// The integer type of a given width in bits, if there is one.
    #[inline]
    pub fn int_with_bits(bits: u32) -> Option<Type> {
        match bits {
            8 => Some(Type::I8),
            16 => Some(Type::I16),
            32 => Some(Type::I32),
            64 => Some(Type::I64),
            128 => Some(Type::I128),
            _ => None,
        }
    }

    /// The integer type twice as wide, if there is one.
    #[inline]
    pub fn double_width(self) -> Option<Type> {
        if self.is_int() {
            Type::int_with_bits(self.bits() * 2)
        } else {
            None
        }
    }

    /// The integer type half as wide, if there is one.
    #[inline]
    pub fn half_width(self) -> Option<Type> {
        if self.is_int() {
            Type::int_with_bits(self.bits() / 2)
        } else {
            None
        }
    }

    /// The integer type with the same width (`f32` → `i32`).
    #[inline]
    pub fn as_int(self) -> Type {
        Type::int_with_bits(self.bits()).unwrap_or(Type::INVALID)
    }

    /// Parse a type name such as `i32` or `f64`.
    pub fn from_name(name: &str) -> Option<Type> {
        Some(match name {
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "i128" => Type::I128,
            "f32" => Type::F32,
            "f64" => Type::F64,
            _ => return None,
        })
    }

    fn lane_name(self) -> &'static str {
        match self.lane_type() {
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::I128 => "i128",
            Type::F32 => "f32",
            Type::F64 => "f64",
            _ => "invalid",
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.log2_lanes() == 0 {
            f.write_str(self.lane_name())
        } else {
            write!(f, "{}x{}", self.lane_name(), 1u32 << self.log2_lanes())
        }
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for ty in Type::SCALARS {
            assert_eq!(Type::from_name(&ty.to_string()), Some(ty));
        }
        assert_eq!(Type::from_name("i32x4"), None);
    }

    #[test]
    fn widths() {
        assert_eq!(Type::I128.bits(), 128);
        assert_eq!(Type::F32.bytes(), 4);
        assert_eq!(Type::I32.double_width(), Some(Type::I64));
        assert_eq!(Type::I8.half_width(), None);
        assert_eq!(Type::F64.as_int(), Type::I64);
        assert!(Type::I128.is_int() && !Type::F32.is_int() && Type::F32.is_float());
    }

    #[test]
    fn vector_encoding_has_room() {
        let i32x4 = Type(Type::I32.0 | (2 << LOG2_LANES_SHIFT));
        assert_eq!(i32x4.lane_type(), Type::I32);
        assert_eq!(i32x4.bits(), 128);
        assert!(!i32x4.is_scalar());
        assert_eq!(i32x4.to_string(), "i32x4");
    }
}
