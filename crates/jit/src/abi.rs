//! Where each argument and result of a call from the host goes, for the trampoline.
//!
//! Contract: the locations are the target's own (`TargetIsa::call_locations`), translated into the trampoline's register images, so the
//! host calls JIT code exactly as JIT code calls JIT code. Each part of a value (one, or two
//! for an `i128`, low half first) goes to an argument register (`gprs`/`fprs` of the
//! trampoline's context, in the host's argument-register order), or to an 8-byte stack
//! slot (`[sp + 8*i]` at the call); each result part comes back in a return register or at
//! an offset of the *return area*, which the host allocates and whose address it passes
//! where the convention says (an argument register, or the dedicated register AAPCS64
//! names, `x8`). Narrow integer arguments are widened to 64 bits: zero-extended for `uext`,
//! sign-extended otherwise (the callee must not rely on the upper bits unless the
//! attribute says so).
//!
//! Per host (see `arch/x64.rs` and `arch/aarch64.rs` for the details):
//! - x86-64, `system_v`, `fast`, `cold`, `tail`: System V (rdi, rsi, rdx, rcx, r8, r9;
//!   xmm0–xmm7; results in rax, rdx / xmm0, xmm1, the rest in the area, whose address goes
//!   in rdi); `winch`: System V arguments, the last result in a register, the others in the
//!   area packed as the backend packs them; `windows_fastcall`: arguments by position in
//!   rcx, rdx, r8, r9 / xmm0–xmm3, the rest above a 32-byte shadow area.
//! - AArch64, every convention the backend compiles: AAPCS64 (x0–x7, v0–v7 for arguments
//!   and results, `i128` in an even register pair, the area's address in x8; `winch` passes
//!   it in x0).
//!
//! A `winch` callee preserves no register but the frame and stack pointers, which the
//! trampoline allows for. A `tail` callee pops its stack arguments when it returns; both trampolines
//! restore `sp` from their frame pointer, so that needs nothing more.
//!
//! Cost: O(parameters + results) per signature.

use kestrel_ir::{ArgumentExtension, CallConv, Signature, Type};
use kestrel_regalloc::{PReg, RegClass};

use kestrel_codegen::isa::{PartLoc, TargetIsa};

use crate::arch::host;
use crate::error::CallError;

/// Integer argument registers the trampoline loads.
pub(crate) const ARG_GPRS: usize = host::ARG_GPR_ENC.len();
/// Float argument registers the trampoline loads (the first `ARG_FPRS` of the class).
pub(crate) const ARG_FPRS: usize = host::ARG_FPRS;
/// Integer result registers the trampoline saves.
pub(crate) const RET_GPRS: usize = host::RET_GPR_ENC.len();
/// Float result registers the trampoline saves (the first `RET_FPRS` of the class).
pub(crate) const RET_FPRS: usize = host::RET_FPRS;

/// Where one 64-bit part of an argument goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum ArgLoc {
    /// An integer register, by index into the host's argument registers.
    Gpr(usize),
    /// A float register, by number.
    Fpr(usize),
    /// One 8-byte stack slot, by index (`[sp + 8*i]` at the call).
    Stack(usize),
}

/// Where one 64-bit part of a result comes back.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum RetLoc {
    /// An integer register, by index into the host's result registers.
    Gpr(usize),
    /// A float register, by number.
    Fpr(usize),
    /// Byte offset in the return area; the part is as wide as its type (8 bytes for a half
    /// of an `i128`).
    Area(usize),
}

/// Where the return area's address goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum AreaPtr {
    /// Argument register `gprs[i]`.
    Gpr(usize),
    /// The host's dedicated indirect-result register (AArch64's x8; x86-64 has none).
    Indirect,
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
    /// Bytes of return area; if non-zero, its address is passed at `area_ptr`.
    pub ret_area: usize,
    pub area_ptr: AreaPtr,
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
    let missing = || unsupported("an argument in a register the trampoline does not load");
    match r.class() {
        RegClass::Int => host::ARG_GPR_ENC
            .iter()
            .position(|&e| e == n)
            .map(ArgLoc::Gpr)
            .ok_or_else(missing),
        RegClass::Float if n < ARG_FPRS => Ok(ArgLoc::Fpr(n)),
        RegClass::Float => Err(missing()),
    }
}

fn ret_reg(r: PReg) -> Result<RetLoc, CallError> {
    let n = r.hw_enc();
    let missing = || unsupported("a result in a register the trampoline does not save");
    match r.class() {
        RegClass::Int => host::RET_GPR_ENC
            .iter()
            .position(|&e| e == n)
            .map(RetLoc::Gpr)
            .ok_or_else(missing),
        RegClass::Float if n < RET_FPRS => Ok(RetLoc::Fpr(n)),
        RegClass::Float => Err(missing()),
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
    let backend_refused = || unsupported(host::refusal(sig.call_conv));
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
    let area_ptr = if host::area_ptr_is_indirect(sig.call_conv) {
        AreaPtr::Indirect
    } else {
        AreaPtr::Gpr(0)
    };
    if let AreaPtr::Gpr(i) = area_ptr {
        if ret_area > 0 && args.iter().any(|a| a.2.contains(&ArgLoc::Gpr(i))) {
            return Err(unsupported(
                "an argument in the register where the return-area pointer goes",
            ));
        }
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
        area_ptr,
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
