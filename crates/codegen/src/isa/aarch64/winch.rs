//! The `winch` calling convention on AArch64: how Cranelift calls code compiled by
//! Wasmtime's baseline compiler, and how such code calls Cranelift's.
//!
//! # Contract
//!
//! - Parameters as AAPCS64 ([`super::abi`]), except the return-area pointer: when the
//!   return area is not empty it travels in `x0` (not `x8`), and integer parameters start
//!   at `x1`.
//! - Only the last result gets a register: `x0` if it is an integer, `v0` if a float. Every
//!   other result goes to the return area, packed: each takes exactly its byte size, in no
//!   particular alignment, and the first result lies at the highest offset (a result at
//!   forward position `p` of size `s` in an area of `total` bytes sits at `total - p - s`).
//!   The area itself is rounded up to 16 bytes. Area accesses are exactly as wide as the
//!   result's type.
//! - Callee-saved registers are AAPCS64's (`x19`–`x28`, `d8`–`d15`) for a function of this
//!   convention, but a *call* of one may overwrite `x19`–`x27` and every FP register besides
//!   the caller-saved ones: only `x28` (the baseline compiler's shadow stack pointer) and
//!   the frame registers survive it.
//! - `i128` values, and results with an extension attribute (whose slot widths Cranelift
//!   treats inconsistently between layout and access), are unsupported and say so.
//!
//! Cost: O(parameters + results) per signature.

use kestrel_ir::{ArgumentExtension, Signature, Type};
use kestrel_regalloc::{PReg, PRegSet, RegClass};

use super::abi::{A64Abi, RetLoc};
use super::asm::{FpMemSize, MemSize};
use super::inst::{LoadKind, StoreKind};
use crate::machinst::abi;
use crate::machinst::CodegenError;

/// Rejects what the convention cannot carry here (see the module contract).
pub fn check(sig: &Signature) -> Result<(), CodegenError> {
    if sig
        .params
        .iter()
        .chain(&sig.returns)
        .any(|p| p.value_type == Type::I128)
    {
        return Err(CodegenError::unsupported(
            "i128 under the winch convention on aarch64",
        ));
    }
    if let Some(p) = sig
        .params
        .iter()
        .chain(&sig.returns)
        .find(|p| p.value_type.is_vector())
    {
        return Err(CodegenError::unsupported(format!(
            "vector argument or result of type {} under the winch convention on aarch64",
            p.value_type
        )));
    }
    if sig
        .returns
        .iter()
        .any(|p| p.extension != ArgumentExtension::None)
    {
        return Err(CodegenError::unsupported(
            "a winch result with a uext/sext attribute on aarch64",
        ));
    }
    Ok(())
}

/// Each result part of a winch signature with its location; returns the (16-byte rounded)
/// area size (see the module contract).
pub fn each_ret_loc(sig: &Signature, each: impl FnMut(usize, RetLoc)) -> Result<u32, CodegenError> {
    check(sig)?;
    let total = abi::winch_results::<A64Abi>(sig, Type::bytes, |c| PReg::new(0, c), each)?;
    Ok(total.next_multiple_of(16))
}

/// The store and load of a result of type `ty` in the return area, exactly its width.
pub fn area_access(ty: Type) -> (StoreKind, LoadKind) {
    let int = |size| {
        (
            StoreKind::Int { size },
            LoadKind::Int {
                size,
                signed: false,
            },
        )
    };
    match ty {
        Type::F32 => (
            StoreKind::Float {
                size: FpMemSize::S32,
            },
            LoadKind::Float {
                size: FpMemSize::S32,
            },
        ),
        Type::F64 => (
            StoreKind::Float {
                size: FpMemSize::S64,
            },
            LoadKind::Float {
                size: FpMemSize::S64,
            },
        ),
        _ if ty.is_vector() => (
            StoreKind::Float {
                size: FpMemSize::S128,
            },
            LoadKind::Float {
                size: FpMemSize::S128,
            },
        ),
        _ => int(match ty.bytes() {
            1 => MemSize::S8,
            2 => MemSize::S16,
            4 => MemSize::S32,
            _ => MemSize::S64,
        }),
    }
}

/// What a call of a winch function may overwrite beyond AAPCS64's caller-saved registers:
/// `x19`–`x27` and `v8`–`v15`.
pub fn extra_clobbers() -> PRegSet {
    (19..28)
        .map(|n| PReg::new(n, RegClass::Int))
        .chain((8..16).map(|n| PReg::new(n, RegClass::Float)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::abi::{call_clobbers, caller_saved, param_locs, ret_locs, Loc};
    use super::*;
    use kestrel_ir::{AbiParam, CallConv};

    fn sig(params: &[Type], returns: &[Type]) -> Signature {
        let mut sig = Signature::new(CallConv::Winch);
        sig.params = params.iter().map(|&t| AbiParam::new(t)).collect();
        sig.returns = returns.iter().map(|&t| AbiParam::new(t)).collect();
        sig
    }

    /// The rules of the module contract, worked out by hand for one signature: results
    /// i8, i16, f32, i32, f64 packed to 1 + 2 + 4 + 4 + 8 = 19 bytes, the first at the top.
    #[test]
    fn results_pack_reversed_and_the_area_pointer_takes_x0() {
        let s = sig(
            &[Type::I64, Type::F64, Type::I32],
            &[
                Type::I8,
                Type::I16,
                Type::F32,
                Type::I32,
                Type::F64,
                Type::I64,
            ],
        );
        let (rets, area) = ret_locs(&s).unwrap();
        let offsets: Vec<i32> = rets
            .iter()
            .flatten()
            .filter_map(|l| match l {
                RetLoc::Area(o) => Some(*o),
                _ => None,
            })
            .collect();
        assert_eq!(offsets, [18, 16, 12, 8, 0]);
        assert_eq!(*rets[5], [RetLoc::Reg(PReg::new(0, RegClass::Int))]);
        assert_eq!(area, 32, "19 bytes rounded up to 16");
        let params = param_locs(&s).unwrap();
        let x = |n| Loc::Reg(PReg::new(n, RegClass::Int));
        assert_eq!(*params[0], [x(1)], "x0 carries the area");
        assert_eq!(*params[1], [Loc::Reg(PReg::new(0, RegClass::Float))]);
        assert_eq!(*params[2], [x(2)]);
    }

    #[test]
    fn a_single_result_needs_no_area_and_a_float_goes_to_v0() {
        let s = sig(&[Type::I64], &[Type::F32]);
        let (rets, area) = ret_locs(&s).unwrap();
        assert_eq!(*rets[0], [RetLoc::Reg(PReg::new(0, RegClass::Float))]);
        assert_eq!(area, 0);
        let params = param_locs(&s).unwrap();
        assert_eq!(*params[0], [Loc::Reg(PReg::new(0, RegClass::Int))]);
    }

    #[test]
    fn i128_and_extended_results_are_refused_by_name() {
        let err = ret_locs(&sig(&[Type::I128], &[Type::I64])).unwrap_err();
        assert!(err.to_string().contains("i128"), "{err}");
        let mut s = sig(&[], &[Type::I8, Type::I64]);
        s.returns[0].extension = ArgumentExtension::Uext;
        let err = param_locs(&s).unwrap_err();
        assert!(err.to_string().contains("uext/sext"), "{err}");
    }

    #[test]
    fn a_winch_call_clobbers_x19_to_x27_and_all_fp_registers_but_keeps_x28() {
        let set = call_clobbers(CallConv::Winch);
        for n in 19..28 {
            assert!(set.contains(PReg::new(n, RegClass::Int)), "x{n}");
        }
        assert!(!set.contains(PReg::new(28, RegClass::Int)));
        for n in 0..32 {
            assert!(set.contains(PReg::new(n, RegClass::Float)), "v{n}");
        }
        assert!(caller_saved().difference(set).is_empty());
        assert_eq!(call_clobbers(CallConv::SystemV), caller_saved());
    }
}
