//! Typed runtime values: what callers pass in and get back.
//!
//! Inside the interpreter every value is a canonical `u128` slot (see `ops`); a [`DataValue`]
//! is the typed view used at the boundary. Equality is bit equality, so two NaNs are equal
//! exactly when their bit patterns are, which is what run tests compare.

use std::fmt;

use kestrel_ir::literal::{format_f128, format_f16, format_f32, format_f64, format_vector};
use kestrel_ir::Type;

use crate::ops;

/// A value of one of the IR's types.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum DataValue {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    I128(i128),
    /// IEEE-754 bits.
    F32(u32),
    /// IEEE-754 bits.
    F64(u64),
    /// IEEE-754 bits.
    F16(u16),
    /// IEEE-754 bits.
    F128(u128),
    /// A vector: its type and its lanes, lane 0 in the low bits (the bits above the
    /// vector's width are zero).
    Vector(Type, u128),
}

impl DataValue {
    pub fn ty(self) -> Type {
        match self {
            DataValue::I8(_) => Type::I8,
            DataValue::I16(_) => Type::I16,
            DataValue::I32(_) => Type::I32,
            DataValue::I64(_) => Type::I64,
            DataValue::I128(_) => Type::I128,
            DataValue::F32(_) => Type::F32,
            DataValue::F64(_) => Type::F64,
            DataValue::F16(_) => Type::F16,
            DataValue::F128(_) => Type::F128,
            DataValue::Vector(ty, _) => ty,
        }
    }

    /// The canonical slot (zero-extended bits).
    pub fn to_slot(self) -> u128 {
        match self {
            DataValue::I8(v) => v as u8 as u128,
            DataValue::I16(v) => v as u16 as u128,
            DataValue::I32(v) => v as u32 as u128,
            DataValue::I64(v) => v as u64 as u128,
            DataValue::I128(v) => v as u128,
            DataValue::F32(b) => b as u128,
            DataValue::F64(b) => b as u128,
            DataValue::F16(b) => b as u128,
            DataValue::F128(b) => b,
            DataValue::Vector(_, bits) => bits,
        }
    }

    /// The value of type `ty` held in a canonical slot. `None` for an invalid type.
    pub fn from_slot(ty: Type, slot: u128) -> Option<DataValue> {
        Some(match ty {
            Type::I8 => DataValue::I8(slot as u8 as i8),
            Type::I16 => DataValue::I16(slot as u16 as i16),
            Type::I32 => DataValue::I32(slot as u32 as i32),
            Type::I64 => DataValue::I64(slot as u64 as i64),
            Type::I128 => DataValue::I128(slot as i128),
            Type::F32 => DataValue::F32(slot as u32),
            Type::F64 => DataValue::F64(slot as u64),
            Type::F16 => DataValue::F16(slot as u16),
            Type::F128 => DataValue::F128(slot),
            t if t.is_vector() && t.bits() > 0 => {
                DataValue::Vector(t, ops::truncate(slot, t.bits().max(8)))
            }
            _ => return None,
        })
    }

    /// An integer of type `ty` from the low bits of `bits` (wrapping).
    pub fn int(ty: Type, bits: i128) -> Option<DataValue> {
        if !ty.is_int() {
            return None;
        }
        DataValue::from_slot(ty, ops::truncate(bits as u128, ty.bits()))
    }

    /// True for a nonzero integer (how a bare `; run: %f(…)` is judged).
    pub fn is_truthy(self) -> bool {
        match self {
            DataValue::F32(_)
            | DataValue::F64(_)
            | DataValue::F16(_)
            | DataValue::F128(_)
            | DataValue::Vector(..) => false,
            _ => self.to_slot() != 0,
        }
    }
}

impl fmt::Display for DataValue {
    /// Run-line literal syntax: integers in signed decimal, floats as CLIF float literals.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            DataValue::I8(v) => write!(f, "{v}"),
            DataValue::I16(v) => write!(f, "{v}"),
            DataValue::I32(v) => write!(f, "{v}"),
            DataValue::I64(v) => write!(f, "{v}"),
            DataValue::I128(v) => write!(f, "{v}"),
            DataValue::F32(b) => f.write_str(&format_f32(b)),
            DataValue::F64(b) => f.write_str(&format_f64(b)),
            DataValue::F16(b) => f.write_str(&format_f16(b)),
            DataValue::F128(b) => f.write_str(&format_f128(b)),
            DataValue::Vector(ty, bits) => f.write_str(&format_vector(bits, ty)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip() {
        let values = [
            DataValue::I8(-1),
            DataValue::I16(i16::MIN),
            DataValue::I32(7),
            DataValue::I64(-5),
            DataValue::I128(i128::MIN),
            DataValue::F32(0x7fc0_0001),
            DataValue::F64(0x8000_0000_0000_0000),
            DataValue::F16(0x7e01),
            DataValue::F128(1 << 127),
            DataValue::Vector(Type::I32X4, u128::MAX),
            DataValue::Vector(Type::I8.by(8).unwrap(), 0xff),
        ];
        for v in values {
            assert_eq!(DataValue::from_slot(v.ty(), v.to_slot()), Some(v));
        }
        assert_eq!(DataValue::I8(-1).to_slot(), 0xff, "slots are zero-extended");
        assert_eq!(DataValue::int(Type::I8, 0x1ff), Some(DataValue::I8(-1)));
    }

    #[test]
    fn display_uses_run_line_syntax() {
        assert_eq!(DataValue::I32(-3).to_string(), "-3");
        assert_eq!(DataValue::F32(0x3fc0_0000).to_string(), "0x1.800000p0");
        assert!(DataValue::I8(2).is_truthy() && !DataValue::I8(0).is_truthy());
        let v = DataValue::Vector(Type::I16.by(4).unwrap(), 0xffff_0000_0001_0002);
        assert_eq!(v.to_string(), "[2 1 0 -1]");
    }
}
