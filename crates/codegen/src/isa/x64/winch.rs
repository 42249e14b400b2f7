//! The `winch` calling convention: how Cranelift calls Wasmtime's baseline compiler's code.
//!
//! # Contract
//!
//! - Parameters as System V, including the hidden return-area pointer in rdi (integer
//!   parameters then start at rsi) when the return area is non-empty.
//! - Only the last result gets a register: rax if it is an integer, xmm0 if a float. Every
//!   other result goes to the return area.
//! - Area layout: the results are first placed in order at offsets `o`, each taking exactly
//!   its byte size (packed, unaligned), or, if any *parameter* has a `uext`/`sext` attribute,
//!   8 bytes each. With `total` the end of the last one (the area's size), a result's offset
//!   is `total - o - size`: the first result lies at the highest offset.
//! - Area accesses are exactly as wide as the result's type.
//! - No register is callee-saved: a winch function saves none (besides rbp, the frame
//!   pointer), and a call of one clobbers every allocatable register.
//! - `i128` anywhere in the signature is unsupported (Cranelift requires the LLVM ABI
//!   extensions for it).

use kestrel_ir::{ArgumentExtension, Signature, Type};
use kestrel_regalloc::RegClass;

use super::abi::{xmm_preg, RetLoc, X64Abi};
use super::asm::moves::ExtMode;
use super::asm::sse::FloatSize;
use super::asm::{Gpr, Size};
use super::inst::{gpr_preg, LoadKind, StoreKind};
use crate::machinst::abi;
use crate::machinst::CodegenError;

/// Each result part of a winch signature with its location; returns the area's size (see
/// the module contract).
pub fn each_ret_loc(sig: &Signature, each: impl FnMut(usize, RetLoc)) -> Result<u32, CodegenError> {
    if sig
        .params
        .iter()
        .chain(&sig.returns)
        .any(|p| p.value_type == Type::I128)
    {
        return Err(CodegenError::unsupported("i128 under the winch convention"));
    }
    let widened = sig
        .params
        .iter()
        .any(|p| p.extension != ArgumentExtension::None);
    // Widened slots are all 8 bytes, so every offset is 8-aligned; packed slots are not
    // aligned at all.
    let size = |ty: Type| if widened { 8 } else { ty.bytes() };
    let last_reg = |class| match class {
        RegClass::Int => gpr_preg(Gpr::RAX),
        RegClass::Float => xmm_preg(0),
    };
    abi::winch_results::<X64Abi>(sig, size, last_reg, each)
}

/// The store and load of a result of type `ty` in the return area, exactly its width.
pub fn area_access(ty: Type) -> (StoreKind, LoadKind) {
    match ty {
        Type::I8 => (
            StoreKind::Int { size: Size::S8 },
            LoadKind::Zext { mode: ExtMode::BL },
        ),
        Type::I16 => (
            StoreKind::Int { size: Size::S16 },
            LoadKind::Zext { mode: ExtMode::WL },
        ),
        Type::I32 => (
            StoreKind::Int { size: Size::S32 },
            LoadKind::Int { size: Size::S32 },
        ),
        Type::F32 => (
            StoreKind::Float {
                size: FloatSize::F32,
            },
            LoadKind::Float {
                size: FloatSize::F32,
            },
        ),
        Type::F64 => (
            StoreKind::Float {
                size: FloatSize::F64,
            },
            LoadKind::Float {
                size: FloatSize::F64,
            },
        ),
        // A 64-bit vector: its 8 bytes; a 128-bit one (System V stack arguments and return
        // areas).
        ty if ty.is_vector() && ty.bits() == 64 => (
            StoreKind::Float {
                size: FloatSize::F64,
            },
            LoadKind::Float {
                size: FloatSize::F64,
            },
        ),
        ty if ty.is_vector() => (StoreKind::Vec, LoadKind::Vec),
        // I64 (ret_locs refuses I128; regs_of refuses the rest).
        _ => (
            StoreKind::Int { size: Size::S64 },
            LoadKind::Int { size: Size::S64 },
        ),
    }
}
