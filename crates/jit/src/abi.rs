//! Where System V AMD64 puts each argument and result, for the host trampoline.
//!
//! Contract: this is the calling convention of `system_v`, `fast` and `cold` functions, and the
//! code generator's x64 ABI must agree with it exactly:
//! - integer arguments (`i8`–`i64`) take the next of rdi, rsi, rdx, rcx, r8, r9; floats the next
//!   of xmm0–xmm7; when a class runs out, the argument goes to the next 8-byte stack slot
//!   (`[rsp]` at the call, upwards, in argument order);
//! - an `i128` takes two consecutive integer registers (low half first) if two are left,
//!   otherwise two stack slots starting at a 16-byte aligned one, and the integer registers
//!   that were left stay unused by it (later narrower arguments may still take them);
//! - narrow integers are widened to 64 bits: zero-extended for `uext`, sign-extended otherwise
//!   (the callee must not rely on the upper bits unless the attribute says so);
//! - integer results come back in rax then rdx (an `i128` in rax:rdx, only as the first
//!   integer result), float results in xmm0 then xmm1.
//!
//! More results than those registers hold need the implicit struct-return convention, which
//! the backend's ABI work has yet to define; [`classify`] reports them as unsupported. That is
//! the hook: add a hidden pointer argument here and read the extra results from its memory.

use kestrel_ir::{ArgumentExtension, Signature, Type};

use crate::error::CallError;

/// Integer argument registers.
pub(crate) const ARG_GPRS: usize = 6;
/// Float argument registers.
pub(crate) const ARG_XMMS: usize = 8;

/// Where one argument goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum ArgLoc {
    /// An integer register, by index into rdi, rsi, rdx, rcx, r8, r9.
    Gpr(usize),
    /// Two consecutive integer registers, low half in the first.
    GprPair(usize),
    /// A float register, xmm0–xmm7.
    Xmm(usize),
    /// One 8-byte stack slot, by index.
    Stack(usize),
    /// Two consecutive stack slots, low half first; the first is 16-byte aligned.
    StackPair(usize),
}

/// Where one result comes back.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum RetLoc {
    /// rax (0) or rdx (1).
    Gpr(usize),
    /// rax:rdx.
    GprPair,
    /// xmm0 or xmm1.
    Xmm(usize),
}

/// The location of every argument and result of one signature.
#[derive(Clone, Debug)]
pub(crate) struct CallPlan {
    pub args: Vec<(Type, ArgumentExtension, ArgLoc)>,
    pub rets: Vec<(Type, RetLoc)>,
    /// 8-byte stack slots the arguments need.
    pub stack_slots: usize,
}

fn unsupported(reason: &'static str) -> CallError {
    CallError::UnsupportedSignature { reason }
}

/// Assign every argument and result of `sig` a location.
pub(crate) fn classify(sig: &Signature) -> Result<CallPlan, CallError> {
    let (mut gpr, mut xmm, mut slot) = (0, 0, 0);
    let mut args = Vec::with_capacity(sig.params.len());
    for p in &sig.params {
        let ty = p.value_type;
        let loc = if ty == Type::I128 {
            if gpr + 2 <= ARG_GPRS {
                gpr += 2;
                ArgLoc::GprPair(gpr - 2)
            } else {
                slot += slot % 2;
                slot += 2;
                ArgLoc::StackPair(slot - 2)
            }
        } else if ty.is_int() {
            if gpr < ARG_GPRS {
                gpr += 1;
                ArgLoc::Gpr(gpr - 1)
            } else {
                slot += 1;
                ArgLoc::Stack(slot - 1)
            }
        } else if ty.is_float() {
            if xmm < ARG_XMMS {
                xmm += 1;
                ArgLoc::Xmm(xmm - 1)
            } else {
                slot += 1;
                ArgLoc::Stack(slot - 1)
            }
        } else {
            return Err(unsupported(
                "an argument type is neither an integer nor a float",
            ));
        };
        args.push((ty, p.extension, loc));
    }

    let (mut rgpr, mut rxmm) = (0, 0);
    let mut rets = Vec::with_capacity(sig.returns.len());
    const SRET: &str = "more results than rax, rdx, xmm0 and xmm1 hold \
                        (the implicit struct-return convention is not defined yet)";
    for r in &sig.returns {
        let ty = r.value_type;
        let loc = if ty == Type::I128 {
            if rgpr != 0 {
                return Err(unsupported(SRET));
            }
            rgpr = 2;
            RetLoc::GprPair
        } else if ty.is_int() {
            if rgpr >= 2 {
                return Err(unsupported(SRET));
            }
            rgpr += 1;
            RetLoc::Gpr(rgpr - 1)
        } else if ty.is_float() {
            if rxmm >= 2 {
                return Err(unsupported(SRET));
            }
            rxmm += 1;
            RetLoc::Xmm(rxmm - 1)
        } else {
            return Err(unsupported(
                "a result type is neither an integer nor a float",
            ));
        };
        rets.push((ty, loc));
    }
    Ok(CallPlan {
        args,
        rets,
        stack_slots: slot,
    })
}

/// The 64-bit register image of a narrow integer argument.
pub(crate) fn widen(ty: Type, ext: ArgumentExtension, bits: u128) -> u64 {
    let width = ty.bits();
    if width >= 64 {
        return bits as u64;
    }
    let low = bits as u64 & ((1u64 << width) - 1);
    match ext {
        ArgumentExtension::Uext => low,
        ArgumentExtension::Sext | ArgumentExtension::None => {
            let shift = 64 - width;
            (((low << shift) as i64) >> shift) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_ir::{AbiParam, CallConv};

    fn sig(params: &[Type], returns: &[Type]) -> Signature {
        let mut s = Signature::new(CallConv::SystemV);
        s.params = params.iter().map(|t| AbiParam::new(*t)).collect();
        s.returns = returns.iter().map(|t| AbiParam::new(*t)).collect();
        s
    }

    #[test]
    fn i128_skips_to_aligned_stack_pair() {
        let plan = classify(&sig(
            &[Type::I64; 5]
                .iter()
                .copied()
                .chain([Type::I128, Type::I64, Type::I64, Type::I128])
                .collect::<Vec<_>>(),
            &[],
        ))
        .unwrap();
        let locs: Vec<_> = plan.args.iter().map(|a| a.2).collect();
        assert_eq!(locs[4], ArgLoc::Gpr(4));
        assert_eq!(locs[5], ArgLoc::StackPair(0));
        assert_eq!(locs[6], ArgLoc::Gpr(5));
        assert_eq!(locs[7], ArgLoc::Stack(2));
        assert_eq!(locs[8], ArgLoc::StackPair(4));
        assert_eq!(plan.stack_slots, 6);
    }

    #[test]
    fn too_many_results_is_the_sret_hook() {
        assert!(classify(&sig(&[], &[Type::I64, Type::I64, Type::I64])).is_err());
        assert!(classify(&sig(&[], &[Type::I64, Type::I128])).is_err());
        let plan = classify(&sig(&[], &[Type::I64, Type::F64, Type::I32, Type::F32])).unwrap();
        let locs: Vec<_> = plan.rets.iter().map(|r| r.1).collect();
        assert_eq!(
            locs,
            [
                RetLoc::Gpr(0),
                RetLoc::Xmm(0),
                RetLoc::Gpr(1),
                RetLoc::Xmm(1)
            ]
        );
    }

    #[test]
    fn widening_follows_the_attribute() {
        assert_eq!(widen(Type::I8, ArgumentExtension::Uext, 0xff), 0xff);
        assert_eq!(widen(Type::I8, ArgumentExtension::Sext, 0xff), u64::MAX);
        assert_eq!(
            widen(Type::I32, ArgumentExtension::None, 0x8000_0000),
            0xffff_ffff_8000_0000
        );
    }
}
