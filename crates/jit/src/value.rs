//! Values passed to and returned from JIT code through the host trampoline.

use kestrel_ir::Type;

/// One scalar argument or result of a function called from the host.
#[derive(Copy, Clone, PartialEq, Debug)]
pub enum Value {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    I128(i128),
    F32(f32),
    F64(f64),
}

impl Value {
    /// The IR type of this value.
    pub fn ty(self) -> Type {
        match self {
            Value::I8(_) => Type::I8,
            Value::I16(_) => Type::I16,
            Value::I32(_) => Type::I32,
            Value::I64(_) => Type::I64,
            Value::I128(_) => Type::I128,
            Value::F32(_) => Type::F32,
            Value::F64(_) => Type::F64,
        }
    }

    /// The value's bits, zero-extended to 128 (floats as their IEEE-754 bits).
    pub fn to_bits(self) -> u128 {
        match self {
            Value::I8(v) => v as u8 as u128,
            Value::I16(v) => v as u16 as u128,
            Value::I32(v) => v as u32 as u128,
            Value::I64(v) => v as u64 as u128,
            Value::I128(v) => v as u128,
            Value::F32(v) => v.to_bits() as u128,
            Value::F64(v) => v.to_bits() as u128,
        }
    }

    /// A value of type `ty` from the low bits of `bits` (higher bits are ignored).
    /// `None` if `ty` is not a scalar type the trampoline can carry.
    pub fn from_bits(ty: Type, bits: u128) -> Option<Value> {
        Some(match ty {
            Type::I8 => Value::I8(bits as u8 as i8),
            Type::I16 => Value::I16(bits as u16 as i16),
            Type::I32 => Value::I32(bits as u32 as i32),
            Type::I64 => Value::I64(bits as u64 as i64),
            Type::I128 => Value::I128(bits as i128),
            Type::F32 => Value::F32(f32::from_bits(bits as u32)),
            Type::F64 => Value::F64(f64::from_bits(bits as u64)),
            _ => return None,
        })
    }
}
