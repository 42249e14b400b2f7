//! Where each argument and result of a call from the host goes, for the trampoline.
//!
//! Contract: the locations are the target's own (`TargetIsa::call_locations`, here the
//! x86-64 backend's), translated into the trampoline's register images, so the host calls
//! JIT code exactly as JIT code calls JIT code. For
//! `system_v`, `fast`, `cold` and `tail` (which the backend compiles as System V) that is:
//! - integer arguments (`i8`–`i64`) take the next of rdi, rsi, rdx, rcx, r8, r9; floats the next
//!   of xmm0–xmm7; when a class runs out, the argument goes to the next 8-byte stack slot
//!   (`[rsp]` at the call, upwards, in argument order);
//! - an `i128` takes two consecutive integer registers (low half first) if two are left,
//!   otherwise two stack slots starting at a 16-byte aligned one, and the integer registers
//!   that were left stay unused by it (later narrower arguments may still take them);
//! - narrow integers are widened to 64 bits: zero-extended for `uext`, sign-extended otherwise
//!   (the callee must not rely on the upper bits unless the attribute says so);
//! - results, one 64-bit part at a time (an `i128` is two parts, low first): each part takes
//!   the next return register of its class (rax, rdx; xmm0, xmm1); the parts left over go to
//!   the *return area*, 8 bytes each in result order (offset 0, 8, 16, …). A signature with a
//!   non-empty return area takes the area's address as a hidden first argument in rdi, and its
//!   integer arguments start at rsi. An `i128` may be split: low half in rdx, high half in the
//!   area. An `f32` part occupies the low 4 bytes of its 8.
//!
//! `winch` is placed by the backend too: System V arguments, only the last result in a
//! register (rax or xmm0), the others in the return area at the backend's offsets, each as
//! wide as its type (see the x86-64 backend's `winch.rs`). A winch callee preserves no
//! register but rbp and rsp, which the trampoline allows for.
//!
//! `windows_fastcall` is placed by the backend too: arguments in rcx, rdx, r8, r9 / xmm0–xmm3
//! by position, the rest above a 32-byte shadow area (which becomes four zeroed stack slots
//! here), at most one result. The trampoline preserves everything System V requires, a subset
//! of what Windows x64 callees preserve, so calling such code from it is sound.

use kestrel_codegen::isa::{PartLoc, TargetIsa};
use kestrel_ir::{ArgumentExtension, CallConv, Signature, Type};
use kestrel_regalloc::{PReg, RegClass};

use crate::error::CallError;

/// Integer argument registers.
pub(crate) const ARG_GPRS: usize = 6;
/// Float argument registers.
pub(crate) const ARG_XMMS: usize = 8;
/// Hardware encodings of rdi, rsi, rdx, rcx, r8, r9: the trampoline's `gprs` order.
const ARG_GPR_ENC: [usize; ARG_GPRS] = [7, 6, 2, 1, 8, 9];
/// Hardware encodings of rax, rdx: the trampoline's `ret_gprs` order.
const RET_GPR_ENC: [usize; 2] = [0, 2];

/// Where one 64-bit part of an argument goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum ArgLoc {
    /// An integer register, by index into rdi, rsi, rdx, rcx, r8, r9.
    Gpr(usize),
    /// A float register, xmm0–xmm7.
    Xmm(usize),
    /// One 8-byte stack slot, by index (`[rsp + 8*i]` at the call).
    Stack(usize),
}

/// Where one 64-bit part of a result comes back.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum RetLoc {
    /// rax (0) or rdx (1).
    Gpr(usize),
    /// xmm0 or xmm1.
    Xmm(usize),
    /// Byte offset in the return area; the part is as wide as its type (8 bytes for a half
    /// of an `i128`).
    Area(usize),
}

/// The location of every argument and result part of one signature.
#[derive(Clone, Debug)]
pub(crate) struct CallPlan {
    /// Per argument: its type, extension and parts (two for `i128`, low first).
    pub args: Vec<(Type, ArgumentExtension, Vec<ArgLoc>)>,
    /// Per result: its type and parts (two for `i128`, low first).
    pub rets: Vec<(Type, Vec<RetLoc>)>,
    /// 8-byte stack slots the arguments need.
    pub stack_slots: usize,
    /// Bytes of return area; if non-zero, its address is passed in rdi (`gprs[0]`).
    pub ret_area: usize,
}

fn unsupported(reason: &'static str) -> CallError {
    CallError::UnsupportedSignature { reason }
}

/// Whether the host can call functions of convention `cc` (those the backend compiles).
pub(crate) fn callable_conv(cc: CallConv) -> bool {
    matches!(
        cc,
        CallConv::SystemV
            | CallConv::Fast
            | CallConv::Cold
            | CallConv::Tail
            | CallConv::WindowsFastcall
            | CallConv::Winch
    )
}

fn arg_reg(r: PReg) -> Result<ArgLoc, CallError> {
    let n = r.hw_enc();
    match r.class() {
        RegClass::Int => ARG_GPR_ENC
            .iter()
            .position(|&e| e == n)
            .map(ArgLoc::Gpr)
            .ok_or_else(|| unsupported("an argument in a register the trampoline does not load")),
        RegClass::Float if n < ARG_XMMS => Ok(ArgLoc::Xmm(n)),
        RegClass::Float => Err(unsupported(
            "an argument in a register the trampoline does not load",
        )),
    }
}

fn ret_reg(r: PReg) -> Result<RetLoc, CallError> {
    let n = r.hw_enc();
    match r.class() {
        RegClass::Int => RET_GPR_ENC
            .iter()
            .position(|&e| e == n)
            .map(RetLoc::Gpr)
            .ok_or_else(|| unsupported("a result in a register the trampoline does not save")),
        RegClass::Float if n < 2 => Ok(RetLoc::Xmm(n)),
        RegClass::Float => Err(unsupported(
            "a result in a register the trampoline does not save",
        )),
    }
}

/// Whether the trampoline moves values of type `ty`: integers (`i128` as two parts) and
/// scalar floats.
fn trampoline_type(ty: Type) -> bool {
    (ty.is_int() && ty.bits() <= 128) || ty == Type::F32 || ty == Type::F64
}

/// Assign every argument and result part of `sig` the location `isa` gives it.
pub(crate) fn classify(isa: &dyn TargetIsa, sig: &Signature) -> Result<CallPlan, CallError> {
    for p in sig.params.iter().chain(&sig.returns) {
        if !trampoline_type(p.value_type) {
            return Err(unsupported(
                "an argument or result type is neither an integer nor a float",
            ));
        }
    }
    let backend_refused = || {
        unsupported(if sig.call_conv == CallConv::WindowsFastcall {
            "windows_fastcall passes no i128 and returns at most one result"
        } else {
            "the x86-64 backend cannot place this signature"
        })
    };
    let locs = isa.call_locations(sig).map_err(|_| backend_refused())?;
    let (param_locs, ret_locs, ret_area) = (locs.params, locs.returns, locs.ret_area);

    let mut stack_slots = 0;
    let mut args = Vec::with_capacity(sig.params.len());
    for (p, locs) in sig.params.iter().zip(param_locs) {
        let parts = locs
            .into_iter()
            .map(|loc| match loc {
                PartLoc::Reg(r) => arg_reg(r),
                PartLoc::Area(_) => Err(unsupported("an argument in the return area")),
                PartLoc::Stack(disp) => {
                    let disp = disp as usize;
                    debug_assert_eq!(disp % 8, 0);
                    stack_slots = stack_slots.max(disp / 8 + 1);
                    Ok(ArgLoc::Stack(disp / 8))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        args.push((p.value_type, p.extension, parts));
    }
    let ret_area = ret_area as usize;
    if ret_area > 0 && args.iter().any(|a| a.2.contains(&ArgLoc::Gpr(0))) {
        return Err(unsupported(
            "an argument in rdi, where the return-area pointer goes",
        ));
    }
    let mut rets = Vec::with_capacity(sig.returns.len());
    for (r, locs) in sig.returns.iter().zip(ret_locs) {
        let parts = locs
            .into_iter()
            .map(|loc| match loc {
                PartLoc::Reg(r) => ret_reg(r),
                PartLoc::Stack(_) => Err(unsupported("a result in the argument area")),
                PartLoc::Area(off) => {
                    let off = off as usize;
                    debug_assert!(off + part_bytes(r.value_type) <= ret_area);
                    Ok(RetLoc::Area(off))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        rets.push((r.value_type, parts));
    }
    Ok(CallPlan {
        args,
        rets,
        stack_slots,
        ret_area,
    })
}

/// Bytes of one part of a result of type `ty` (an `i128` has two 8-byte parts).
pub(crate) fn part_bytes(ty: Type) -> usize {
    ty.bytes().min(8) as usize
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
    use kestrel_ir::AbiParam;

    /// The x86-64 target the plans below are written for.
    fn x64() -> std::sync::Arc<dyn TargetIsa> {
        kestrel_codegen::isa::lookup("x86_64").unwrap().finish()
    }

    fn sig(params: &[Type], returns: &[Type]) -> Signature {
        sig_cc(CallConv::SystemV, params, returns)
    }

    fn sig_cc(cc: CallConv, params: &[Type], returns: &[Type]) -> Signature {
        let mut s = Signature::new(cc);
        s.params = params.iter().map(|t| AbiParam::new(*t)).collect();
        s.returns = returns.iter().map(|t| AbiParam::new(*t)).collect();
        s
    }

    fn arg_locs(plan: &CallPlan) -> Vec<Vec<ArgLoc>> {
        plan.args.iter().map(|a| a.2.clone()).collect()
    }

    fn ret_locs(plan: &CallPlan) -> Vec<Vec<RetLoc>> {
        plan.rets.iter().map(|r| r.1.clone()).collect()
    }

    #[test]
    fn i128_skips_to_aligned_stack_pair() {
        let plan = classify(
            &*x64(),
            &sig(
                &[Type::I64; 5]
                    .iter()
                    .copied()
                    .chain([Type::I128, Type::I64, Type::I64, Type::I128])
                    .collect::<Vec<_>>(),
                &[],
            ),
        )
        .unwrap();
        let locs = arg_locs(&plan);
        assert_eq!(locs[4], [ArgLoc::Gpr(4)]);
        assert_eq!(locs[5], [ArgLoc::Stack(0), ArgLoc::Stack(1)]);
        assert_eq!(locs[6], [ArgLoc::Gpr(5)]);
        assert_eq!(locs[7], [ArgLoc::Stack(2)]);
        assert_eq!(locs[8], [ArgLoc::Stack(4), ArgLoc::Stack(5)]);
        assert_eq!(plan.stack_slots, 6);
        assert_eq!(plan.ret_area, 0);
    }

    #[test]
    fn results_beyond_the_registers_go_to_the_area() {
        let plan = classify(
            &*x64(),
            &sig(&[], &[Type::I64, Type::F64, Type::I32, Type::F32]),
        )
        .unwrap();
        assert_eq!(
            ret_locs(&plan),
            [
                vec![RetLoc::Gpr(0)],
                vec![RetLoc::Xmm(0)],
                vec![RetLoc::Gpr(1)],
                vec![RetLoc::Xmm(1)]
            ]
        );
        assert_eq!(plan.ret_area, 0);

        // i64 in rax, the i128 split between rdx and the area, then the area in order.
        let plan = classify(
            &*x64(),
            &sig(
                &[Type::I64],
                &[
                    Type::I64,
                    Type::I128,
                    Type::F32,
                    Type::F32,
                    Type::F64,
                    Type::I8,
                ],
            ),
        )
        .unwrap();
        assert_eq!(
            ret_locs(&plan),
            [
                vec![RetLoc::Gpr(0)],
                vec![RetLoc::Gpr(1), RetLoc::Area(0)],
                vec![RetLoc::Xmm(0)],
                vec![RetLoc::Xmm(1)],
                vec![RetLoc::Area(8)],
                vec![RetLoc::Area(16)],
            ]
        );
        assert_eq!(plan.ret_area, 24);
        // The hidden pointer takes rdi; the first argument moves to rsi.
        assert_eq!(arg_locs(&plan), [vec![ArgLoc::Gpr(1)]]);
    }

    #[test]
    fn tail_is_system_v_and_fastcall_has_a_shadow_area() {
        let tail = classify(
            &*x64(),
            &sig_cc(CallConv::Tail, &[Type::I64; 7], &[Type::I64; 3]),
        )
        .unwrap();
        assert_eq!(tail.ret_area, 8);
        assert_eq!(arg_locs(&tail)[4], [ArgLoc::Gpr(5)]);
        assert_eq!(arg_locs(&tail)[5], [ArgLoc::Stack(0)]);
        let win = classify(
            &*x64(),
            &sig_cc(
                CallConv::WindowsFastcall,
                &[Type::I64, Type::F64, Type::I64, Type::I64, Type::I64],
                &[Type::I64],
            ),
        )
        .unwrap();
        assert_eq!(
            arg_locs(&win),
            [
                vec![ArgLoc::Gpr(3)],
                vec![ArgLoc::Xmm(1)],
                vec![ArgLoc::Gpr(4)],
                vec![ArgLoc::Gpr(5)],
                vec![ArgLoc::Stack(4)],
            ]
        );
        assert_eq!(win.stack_slots, 5);
        assert!(classify(
            &*x64(),
            &sig_cc(CallConv::WindowsFastcall, &[], &[Type::I64, Type::I64])
        )
        .is_err());
    }

    #[test]
    fn winch_packs_the_area_in_reverse() {
        let rets = [Type::I8, Type::F64, Type::I16, Type::F32];
        let plan = classify(&*x64(), &sig_cc(CallConv::Winch, &[Type::I64; 6], &rets)).unwrap();
        // Forward i8 at 0, f64 at 1, i16 at 9 (total 11), mirrored; the f32 in xmm0.
        let expected = [
            [RetLoc::Area(10)],
            [RetLoc::Area(2)],
            [RetLoc::Area(0)],
            [RetLoc::Xmm(0)],
        ];
        assert_eq!(ret_locs(&plan), expected.map(Vec::from));
        assert_eq!(plan.ret_area, 11);
        assert_eq!(arg_locs(&plan)[5], [ArgLoc::Stack(0)]);
        // A `uext` parameter widens every slot to 8 bytes.
        let mut s = sig_cc(CallConv::Winch, &[Type::I8], &rets);
        s.params[0].extension = ArgumentExtension::Uext;
        let expected = [
            [RetLoc::Area(16)],
            [RetLoc::Area(8)],
            [RetLoc::Area(0)],
            [RetLoc::Xmm(0)],
        ];
        assert_eq!(
            ret_locs(&classify(&*x64(), &s).unwrap()),
            expected.map(Vec::from)
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
