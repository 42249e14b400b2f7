//! Value types.
//!
//! A [`Type`] is one byte: the low nibble is the lane kind (`i8` … `f64`), the high nibble is
//! log2 of the lane count. Scalars have a lane count of one (high nibble zero); a vector type
//! (`i32x4` = lane `i32`, log2 lanes 2) has 2 to 16 lanes and at most 128 bits in all, as the
//! vector types of CLIF 0.135 (`i8x16` … `f64x2`, the 64-bit `i8x8` … `f32x2`, and the small
//! `i8x2`, `i16x2`). The value 0 is [`Type::INVALID`], used for "no type" (for example the
//! controlling type of an instruction that has none).

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
    pub const F16: Type = Type(8);
    pub const F128: Type = Type(9);

    pub const I8X16: Type = Type(Type::I8.0 | (4 << LOG2_LANES_SHIFT));
    pub const I16X8: Type = Type(Type::I16.0 | (3 << LOG2_LANES_SHIFT));
    pub const I32X4: Type = Type(Type::I32.0 | (2 << LOG2_LANES_SHIFT));
    pub const I64X2: Type = Type(Type::I64.0 | (1 << LOG2_LANES_SHIFT));
    pub const F32X4: Type = Type(Type::F32.0 | (2 << LOG2_LANES_SHIFT));
    pub const F64X2: Type = Type(Type::F64.0 | (1 << LOG2_LANES_SHIFT));

    /// The scalar types the backends compile, in a fixed order (useful for tests and
    /// generators); `f16` and `f128` are interpreter-only and not listed.
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

    /// A float scalar (`f16`, `f32`, `f64`, `f128`).
    #[inline]
    pub fn is_float(self) -> bool {
        self.is_scalar() && self.lane_type().is_float_lane()
    }

    /// A vector type (two or more lanes).
    #[inline]
    pub fn is_vector(self) -> bool {
        self.log2_lanes() != 0
    }

    /// Whether the lanes are integers (a scalar integer is its own lane).
    #[inline]
    pub fn is_int_lane(self) -> bool {
        (Type::I8.0..=Type::I128.0).contains(&(self.0 & LANE_MASK))
    }

    /// Whether the lanes are floats (a scalar float is its own lane).
    #[inline]
    pub fn is_float_lane(self) -> bool {
        matches!(
            Type(self.0 & LANE_MASK),
            Type::F16 | Type::F32 | Type::F64 | Type::F128
        )
    }

    /// A type the interpreter runs but the backends do not compile: a vector, `f16` or `f128`.
    #[inline]
    pub fn is_interpreter_only(self) -> bool {
        self.is_vector() || self.lane_type() == Type::F16 || self.lane_type() == Type::F128
    }

    /// The number of lanes (1 for scalars).
    #[inline]
    pub fn lane_count(self) -> u32 {
        1 << self.log2_lanes()
    }

    /// The vector of `lanes` lanes of this lane type (`lanes` = 1: the lane type itself), if
    /// it is a valid type: a power of two up to 16 lanes, at most 128 bits in all.
    pub fn by(self, lanes: u32) -> Option<Type> {
        let lane = self.lane_type();
        if lane.is_invalid() || !lanes.is_power_of_two() || lanes > 16 {
            return None;
        }
        if lanes > 1 && lane.lane_bits() * lanes > 128 {
            return None;
        }
        Some(Type(
            lane.0 | ((lanes.trailing_zeros() as u8) << LOG2_LANES_SHIFT),
        ))
    }

    /// The same lane count with lanes of another type (`f32x4` with `i32` lanes is `i32x4`).
    #[inline]
    pub fn with_lane(self, lane: Type) -> Option<Type> {
        lane.by(self.lane_count())
    }

    /// Lanes twice as wide and half as many (`i8x16` → `i16x8`): the result of `swiden_low`.
    pub fn merge_lanes(self) -> Option<Type> {
        let wide = self.lane_type().double_width_lane()?;
        wide.by(self.lane_count() / 2)
    }

    /// Lanes half as wide and twice as many (`i16x8` → `i8x16`): the result of `snarrow`.
    pub fn split_lanes(self) -> Option<Type> {
        let narrow = self.lane_type().half_width_lane()?;
        narrow.by(self.lane_count() * 2)
    }

    /// The lane type of twice the width, in the same kind (`i16` → `i32`, `f32` → `f64`).
    fn double_width_lane(self) -> Option<Type> {
        match self {
            Type::F16 => Some(Type::F32),
            Type::F32 => Some(Type::F64),
            Type::F64 => Some(Type::F128),
            t if t.is_int() => t.double_width(),
            _ => None,
        }
    }

    /// The lane type of half the width, in the same kind.
    fn half_width_lane(self) -> Option<Type> {
        match self {
            Type::F32 => Some(Type::F16),
            Type::F64 => Some(Type::F32),
            Type::F128 => Some(Type::F64),
            t if t.is_int() => t.half_width(),
            _ => None,
        }
    }

    /// Width of one lane in bits (0 for INVALID).
    #[inline]
    pub fn lane_bits(self) -> u32 {
        match self.lane_type() {
            Type::I8 => 8,
            Type::I16 | Type::F16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
            Type::I128 | Type::F128 => 128,
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

    /// The integer type with the same lane width and lane count (`f32` → `i32`,
    /// `f32x4` → `i32x4`).
    #[inline]
    pub fn as_int(self) -> Type {
        Type::int_with_bits(self.lane_bits())
            .and_then(|lane| self.with_lane(lane))
            .unwrap_or(Type::INVALID)
    }

    /// Parse a type name such as `i32`, `f64` or `i32x4`.
    pub fn from_name(name: &str) -> Option<Type> {
        if let Some((lane, lanes)) = name.split_once('x') {
            let lanes: u32 = lanes.parse().ok().filter(|&n: &u32| n >= 2)?;
            if lanes.to_string().len() != name.len() - lane.len() - 1 {
                return None; // `i32x04` and the like
            }
            return Type::from_name(lane).filter(|t| t.is_scalar())?.by(lanes);
        }
        Some(match name {
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "i128" => Type::I128,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "f16" => Type::F16,
            "f128" => Type::F128,
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
            Type::F16 => "f16",
            Type::F128 => "f128",
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
        assert_eq!(Type::from_name("i32x4"), Some(Type::I32X4));
        assert_eq!(Type::from_name("i8x8").map(|t| t.bits()), Some(64));
        for bad in [
            "i64x4", "i8x32", "i32x3", "i32x1", "i32x04", "i128x2", "x4", "i32x",
        ] {
            assert_eq!(Type::from_name(bad), None, "{bad}");
        }
        for name in ["f16", "f128", "f16x8", "i16x2", "f64x2"] {
            assert_eq!(Type::from_name(name).unwrap().to_string(), name);
        }
    }

    #[test]
    fn lane_shapes() {
        assert_eq!(Type::I8X16.merge_lanes(), Some(Type::I16X8));
        assert_eq!(Type::I16X8.split_lanes(), Some(Type::I8X16));
        assert_eq!(Type::F32X4.merge_lanes(), Some(Type::F64X2));
        assert_eq!(Type::F32X4.as_int(), Type::I32X4);
        assert_eq!(Type::F16.as_int(), Type::I16);
        assert!(Type::F16.is_float() && Type::F128.is_float() && !Type::F32X4.is_float());
        assert!(Type::F32X4.is_float_lane() && Type::I64X2.is_int_lane());
        assert!(Type::I64X2.is_interpreter_only() && !Type::I64.is_interpreter_only());
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
