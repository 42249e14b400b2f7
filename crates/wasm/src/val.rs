//! Values passed to and returned from Wasm functions by the host.

use kestrel_jit::Value;
use wasmparser::ValType;

/// A Wasm value. Floats are kept as their bits so NaN payloads survive the round trip.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Val {
    I32(i32),
    I64(i64),
    F32(u32),
    F64(u64),
}

impl Val {
    /// The Wasm type of the value.
    pub fn ty(self) -> ValType {
        match self {
            Val::I32(_) => ValType::I32,
            Val::I64(_) => ValType::I64,
            Val::F32(_) => ValType::F32,
            Val::F64(_) => ValType::F64,
        }
    }

    /// The zero value of a numeric type (`None` for types Kestrel does not support).
    pub fn zero(ty: ValType) -> Option<Val> {
        Some(match ty {
            ValType::I32 => Val::I32(0),
            ValType::I64 => Val::I64(0),
            ValType::F32 => Val::F32(0),
            ValType::F64 => Val::F64(0),
            _ => return None,
        })
    }

    /// The value's bits, zero-extended to 64 (the layout of a global's cell).
    pub fn to_bits(self) -> u64 {
        match self {
            Val::I32(v) => v as u32 as u64,
            Val::I64(v) => v as u64,
            Val::F32(v) => v as u64,
            Val::F64(v) => v,
        }
    }

    /// A value of numeric type `ty` from the low bits of `bits`.
    pub fn from_bits(ty: ValType, bits: u64) -> Option<Val> {
        Some(match ty {
            ValType::I32 => Val::I32(bits as u32 as i32),
            ValType::I64 => Val::I64(bits as i64),
            ValType::F32 => Val::F32(bits as u32),
            ValType::F64 => Val::F64(bits),
            _ => return None,
        })
    }

    pub(crate) fn to_jit(self) -> Value {
        match self {
            Val::I32(v) => Value::I32(v),
            Val::I64(v) => Value::I64(v),
            Val::F32(v) => Value::F32(f32::from_bits(v)),
            Val::F64(v) => Value::F64(f64::from_bits(v)),
        }
    }

    pub(crate) fn from_jit(v: Value) -> Option<Val> {
        Some(match v {
            Value::I32(v) => Val::I32(v),
            Value::I64(v) => Val::I64(v),
            Value::F32(v) => Val::F32(v.to_bits()),
            Value::F64(v) => Val::F64(v.to_bits()),
            _ => return None,
        })
    }
}
