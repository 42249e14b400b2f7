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
    /// A function reference: an opaque engine address, 0 for null. Valid while the
    /// function's instance (or host function) lives.
    FuncRef(u64),
    /// An external reference: the host's value, or null.
    ExternRef(Option<u64>),
}

impl Val {
    /// The Wasm type of the value.
    pub fn ty(self) -> ValType {
        match self {
            Val::I32(_) => ValType::I32,
            Val::I64(_) => ValType::I64,
            Val::F32(_) => ValType::F32,
            Val::F64(_) => ValType::F64,
            Val::FuncRef(_) => ValType::FUNCREF,
            Val::ExternRef(_) => ValType::EXTERNREF,
        }
    }

    /// The default value of a type: zero or null (`None` for types Kestrel does not
    /// support).
    pub fn default_for(ty: ValType) -> Option<Val> {
        Val::from_bits(ty, 0)
    }

    /// The value's bits, zero-extended to 64: the layout of a global's cell and of a table
    /// entry (an externref is its value plus one, null is 0).
    pub fn to_bits(self) -> u64 {
        match self {
            Val::I32(v) => v as u32 as u64,
            Val::I64(v) => v as u64,
            Val::F32(v) => v as u64,
            Val::F64(v) | Val::FuncRef(v) => v,
            Val::ExternRef(None) => 0,
            Val::ExternRef(Some(v)) => v.wrapping_add(1),
        }
    }

    /// A value of type `ty` from the low bits of `bits` (the inverse of `to_bits`).
    pub fn from_bits(ty: ValType, bits: u64) -> Option<Val> {
        Some(match ty {
            ValType::I32 => Val::I32(bits as u32 as i32),
            ValType::I64 => Val::I64(bits as i64),
            ValType::F32 => Val::F32(bits as u32),
            ValType::F64 => Val::F64(bits),
            ValType::Ref(r) if r.is_func_ref() => Val::FuncRef(bits),
            ValType::Ref(r) if r.is_extern_ref() => Val::ExternRef(bits.checked_sub(1)),
            _ => return None,
        })
    }

    pub(crate) fn to_jit(self) -> Value {
        match self {
            Val::I32(v) => Value::I32(v),
            Val::I64(v) => Value::I64(v),
            Val::F32(v) => Value::F32(f32::from_bits(v)),
            Val::F64(v) => Value::F64(f64::from_bits(v)),
            Val::FuncRef(_) | Val::ExternRef(_) => Value::I64(self.to_bits() as i64),
        }
    }

    /// The value of Wasm type `ty` the JIT returned as `v`.
    pub(crate) fn from_jit(ty: ValType, v: Value) -> Option<Val> {
        let bits = match v {
            Value::I32(v) => v as u32 as u64,
            Value::I64(v) => v as u64,
            Value::F32(v) => v.to_bits() as u64,
            Value::F64(v) => v.to_bits(),
            _ => return None,
        };
        Val::from_bits(ty, bits)
    }
}
