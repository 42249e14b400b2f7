//! Wasm types and signatures as IR types and signatures.
//!
//! Every translated function, imported function and table entry uses one shape:
//! `(vmctx: i64, params...) -> results` under the `tail` convention (System V's / AAPCS64's
//! registers; the callee pops its stack arguments, which lets `return_call` replace a
//! frame), with `vmctx` marked as the `vmctx` parameter (the backend's stack-limit check
//! starts from it).

use kestrel_ir::{AbiParam, ArgumentPurpose, CallConv, Signature, Type};
use wasmparser::{FuncType, ValType};

use crate::error::WasmError;

/// The IR type of a Wasm value type: numbers as themselves, `funcref` and `externref` as
/// `i64`; vector and GC reference types are not supported yet.
pub fn ir_type(ty: ValType, offset: usize) -> Result<Type, WasmError> {
    match ty {
        ValType::I32 => Ok(Type::I32),
        ValType::I64 => Ok(Type::I64),
        ValType::F32 => Ok(Type::F32),
        ValType::F64 => Ok(Type::F64),
        // References are addresses or host values (see `runtime/vmctx.rs`).
        ValType::Ref(r) if r.is_func_ref() || r.is_extern_ref() => Ok(Type::I64),
        other => Err(WasmError::Unsupported {
            offset,
            feature: format!("values of type {other}"),
        }),
    }
}

/// The IR signature of a Wasm function of type `ty`.
pub fn wasm_signature(ty: &FuncType, offset: usize) -> Result<Signature, WasmError> {
    let mut sig = Signature::new(CallConv::Tail);
    sig.params.push(AbiParam {
        purpose: ArgumentPurpose::VMContext,
        ..AbiParam::new(Type::I64)
    });
    for &p in ty.params() {
        sig.params.push(AbiParam::new(ir_type(p, offset)?));
    }
    for &r in ty.results() {
        sig.returns.push(AbiParam::new(ir_type(r, offset)?));
    }
    Ok(sig)
}
