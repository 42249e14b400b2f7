//! The AAPCS64 calling convention (as Linux uses it) and `winch`, as the shared
//! calling-convention and frame code (`machinst::abi`, `machinst::frame`) reads them.
//!
//! # Contract
//!
//! - Arguments: integers in `x0`–`x7`, floats in `v0`–`v7` (`s`/`d`), in order per class; the
//!   rest on the stack in 8-byte slots at `[x29 + 16 + off]` (the caller's `[sp + off]`),
//!   in order. Narrow integers carry unspecified upper bits, as AAPCS64 allows. An `i128`
//!   takes an even-numbered pair of `x` registers (low half in the even one, AAPCS64's
//!   rule C.9: an odd next register is skipped), or, when fewer than two remain, a
//!   16-byte-aligned 16-byte stack slot, and no later integer goes in a register (C.11).
//! - Results: integers in `x0`–`x7`, floats in `v0`–`v7`, in order per class (AAPCS64 uses
//!   `x0`/`x1` and `v0`–`v3`; functions with more results than that are only called by code
//!   this backend compiled, which agrees); the rest in a return area of 8-byte slots in
//!   result order, whose address the caller passes in `x8` (AAPCS64's indirect result
//!   register), allocated in the caller's frame above its outgoing arguments. An `i128`
//!   result takes an even-numbered register pair (`x0`/`x1` first) or a 16-byte-aligned
//!   16-byte area slot, as its argument would.
//! - Callee-saved `x19`–`x28` and `d8`–`d15` (the low 64 bits of `v8`–`v15`, all a scalar
//!   value occupies) are saved only when the allocator used them or a call may clobber
//!   them; everything else is caller-saved and clobbered by calls.
//! - `x29` is the frame pointer and `x30` the link register whenever there is a frame (a
//!   function with calls, incoming stack arguments, stack slots, spills or saved registers),
//!   which `stp x29, x30, [sp, #-16]!; mov x29, sp` sets up. A leaf with none of these sets
//!   up nothing and returns with a bare `ret`. `sp` stays 16-byte aligned.
//! - **Scratch registers.** `x16`, `x17` and `v31` are never allocated, so no value lives in
//!   them across an instruction boundary. `x16` and `v31` are the allocator's scratch
//!   registers (`MachineEnv::scratch`: its edits may use them between instructions, and the
//!   regalloc checker treats every instruction as clobbering them); the encoder uses `x16`,
//!   `x17` and `v31` as temporaries inside one instruction (constants, large offsets,
//!   division, conversions, jump tables, veneers). The linker's call veneers clobber `x16`
//!   and `x17` too, which is why AAPCS64 reserves them. `x18` (the platform register) is
//!   never touched.
//! - `system_v`, `fast` and `cold` are all AAPCS64 here (both sides are compiled here).
//!   `tail` (Cranelift's tail-call convention) places arguments and results and saves
//!   registers as AAPCS64 does, but the callee pops its stack arguments (`add sp, sp, #N`
//!   before `ret`, N the area rounded up to 16 bytes), and a `return_call` replaces the frame
//!   in place (`emit.rs`); an indirect tail call's target is in `x9` ([`TAIL_TARGET`]). So is `windows_fastcall`: the Windows Arm64 convention is AAPCS64 for the
//!   scalar arguments and results CLIF has (its differences are variadic calls, which CLIF
//!   lacks, and `x18`, which this backend never touches), and Cranelift's AArch64 backend
//!   treats it the same way. `winch` is described in [`super::winch`]. Other conventions
//!   (`apple_aarch64`, which packs stack arguments and extends narrow ones; `probestack`;
//!   `patchable`) are unsupported.
//! - A function also saves the callee-saved registers its calls may clobber (one calling
//!   `winch` code saves `x19`–`x27` and `d8`–`d15` it would otherwise not touch; the shared
//!   frame layout, `machinst::frame`).
//! - Vectors (128-bit) are arguments and results in `v0`–`v7` with the floats, in order,
//!   the rest in 16-byte, 16-aligned stack or return-area slots (AAPCS64 C.1–C.3, the
//!   shared `Assigner::place_vector`); not under `winch`. Since only `d8`–`d15` survive a
//!   call, every call of a function with vector values clobbers `v8`–`v15` as the
//!   allocator sees it ([`vector_call_clobbers`]). A `stack_limit` is checked in the
//!   prologue (`stack_limit.rs`).
//!
//! Cost: O(parameters + results) per call and per function entry; the frame layout is one
//! pass over the instructions, the allocations, the edits and the stack slots.

use std::sync::OnceLock;

use kestrel_ir::{CallConv, Signature, Type, Value};
use kestrel_regalloc::{MachineEnv, PReg, PRegSet, RegClass, VReg};
use smallvec::SmallVec;

use super::asm::{Gpr, Vreg as FpReg};
use super::inst::{
    fp_preg, gpr_preg, AluInst, CallDest, ControlInst, FrameValue, Inst, Mem, MemInst,
};
use super::winch::area_access as exact_access;
use crate::machinst::abi::{self, Abi, AbiMem, Pairs, RegConv};
pub use crate::machinst::abi::{libcall_signature, Loc, Parts, RetLoc, SigLocs};
use crate::machinst::frame::FrameUse;
use crate::machinst::lower::{Lower, Results, ValueRegs};
use crate::machinst::operands::FixedRegs;
use crate::machinst::CodegenError;

/// The bytes of the stack-argument slot a store fills: 16 for a vector (a `q` store),
/// else 8.
fn out_slot_bytes(kind: &super::inst::StoreKind) -> u32 {
    match kind {
        super::inst::StoreKind::Float {
            size: super::asm::FpMemSize::S128,
        } => 16,
        _ => 8,
    }
}

fn x(n: usize) -> PReg {
    PReg::new(n, RegClass::Int)
}

fn v(n: usize) -> PReg {
    PReg::new(n, RegClass::Float)
}

const fn class_regs<const N: usize>(class: RegClass) -> [PReg; N] {
    let mut regs = [PReg::new(0, class); N];
    let mut i = 0;
    while i < N {
        regs[i] = PReg::new(i, class);
        i += 1;
    }
    regs
}

/// AAPCS64 arguments and results: `x0`–`x7` and `v0`–`v7`; an `i128` in an even pair or
/// 16 aligned bytes of memory. A 128-bit vector (AAPCS64 C.1–C.3: a short vector in the
/// next `v` register, else 16 aligned bytes of stack) is placed by the shared
/// `Assigner::place_vector` from the same `v0`–`v7` (`value_regs` admits vectors through
/// `abi::vector_value_regs`), and moved as a `q` register.
const AAPCS64: RegConv = RegConv {
    ints: &class_regs::<8>(RegClass::Int),
    floats: &class_regs::<8>(RegClass::Float),
    pairs: Pairs::EvenPairOrMemory,
};

/// The pinned register of `enable_pinned_reg` (`x21`, as Cranelift's AArch64 backend pins
/// it).
pub const PINNED_REG: PReg = PReg::new(21, RegClass::Int);

/// The allocator's view of the machine.
pub fn machine_env() -> &'static MachineEnv {
    static ENV: OnceLock<MachineEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        // Caller-saved registers first (no save needed), then callee-saved ones.
        let ints = (0..16).chain(19..29).map(x).collect();
        let floats = (0..8).chain(16..31).chain(8..16).map(v).collect();
        MachineEnv {
            allocatable: [ints, floats],
            caller_saved: caller_saved(),
            scratch: [Some(gpr_preg(Gpr::X16)), Some(fp_preg(scratch_fp()))],
        }
    })
}

/// The register of an indirect tail call's target: no argument register, not callee-saved,
/// not a scratch register.
pub(super) const TAIL_TARGET: PReg = PReg::new(9, RegClass::Int);

/// `v31`, the FP scratch register.
pub(super) fn scratch_fp() -> FpReg {
    FpReg::new(31).expect("v31")
}

/// Registers a call of a function of convention `cc` may overwrite.
pub fn call_clobbers(cc: CallConv) -> PRegSet {
    match cc {
        CallConv::Winch => caller_saved().union(super::winch::extra_clobbers()),
        _ => caller_saved(),
    }
}

/// Registers a call may overwrite: `x0`–`x18`, `x30`, and every FP register but `v8`–`v15`.
pub fn caller_saved() -> PRegSet {
    let mut set: PRegSet = (0..19).map(x).collect();
    set.add(gpr_preg(Gpr::LR));
    for i in (0..8).chain(16..32) {
        set.add(v(i));
    }
    set
}

/// `v8`–`v15`: AAPCS64 preserves only their low 64 bits across a call, so a 128-bit
/// vector does not survive a call in them (`MachInst::vector_call_clobbers`). A function
/// that itself uses them saves and restores the low 64 bits (`d8`–`d15`), all its caller
/// may rely on.
pub fn vector_call_clobbers() -> PRegSet {
    (8..16).map(v).collect()
}

/// The registers of one argument: one, or an `i128`'s two (low half first).
pub type ArgRegs = SmallVec<[VReg; 2]>;

/// A call of `callee` with signature `sig` and the arguments in `args` (one entry per
/// parameter, as many registers as its type takes); returns the result vregs.
pub fn gen_call_regs(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[ArgRegs],
) -> Result<Results, CodegenError> {
    let regs: SmallVec<[ValueRegs; 8]> = args
        .iter()
        .map(|a| match **a {
            [lo, hi] => ValueRegs::two(lo, hi),
            _ => ValueRegs::one(a[0]),
        })
        .collect();
    abi::gen_call_parts::<A64Abi>(ctx, callee, sig, &regs)
}

impl Abi for A64Abi {
    type Inst = Inst;
    const FLOAT_SAVE_BYTES: u32 = 8;
    const RET_AREA_ALIGN: u32 = 1;

    fn callee_saved(_cc: CallConv) -> &'static [PReg] {
        &CALLEE_SAVED_REGS
    }
    const CONV_ERROR_SUFFIX: &'static str = " on aarch64";
    const STACK_LIMIT_ADD_BITS: u32 = 64;

    fn value_regs(ty: Type) -> Option<(RegClass, usize)> {
        abi::scalar_value_regs(ty).or_else(|| abi::vector_value_regs(ty))
    }

    fn each_param_loc(
        sig: &Signature,
        ret_area: bool,
        each: impl FnMut(usize, Loc),
    ) -> Result<(), CodegenError> {
        // Under `winch` the return-area pointer takes x0 (AAPCS64 passes it in x8).
        let winch = sig.call_conv == CallConv::Winch;
        if winch {
            super::winch::check(sig)?;
        }
        let skip_ints = usize::from(winch && ret_area);
        abi::assign_in_order::<A64Abi, _>(AAPCS64, skip_ints, &sig.params, each).map(drop)
    }

    fn each_ret_loc(sig: &Signature, each: impl FnMut(usize, RetLoc)) -> Result<u32, CodegenError> {
        match sig.call_conv {
            CallConv::Winch => super::winch::each_ret_loc(sig, each),
            _ => abi::assign_in_order::<A64Abi, _>(AAPCS64, 0, &sig.returns, each),
        }
    }

    fn ret_area_reg(cc: CallConv) -> PReg {
        match cc {
            CallConv::Winch => gpr_preg(Gpr::X0),
            _ => gpr_preg(Gpr::X8),
        }
    }

    abi::abi_inst_builders!(off);
}

abi::abi_entry_points!(A64Abi, Inst, off);

/// AArch64's facts for the shared ABI and frame code.
pub struct A64Abi;

/// `x19`–`x28`, then `d8`–`d15`: AAPCS64's callee-saved registers, under every convention
/// this backend supports.
const CALLEE_SAVED_REGS: [PReg; 18] = {
    let mut regs = [PReg::new(0, RegClass::Int); 18];
    let mut i = 0;
    while i < 10 {
        regs[i] = PReg::new(19 + i, RegClass::Int);
        i += 1;
    }
    while i < 18 {
        regs[i] = PReg::new(i - 2, RegClass::Float);
        i += 1;
    }
    regs
};

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_ir::AbiParam;

    #[test]
    fn nine_integer_arguments_spill_one_to_the_stack() {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params = vec![AbiParam::new(Type::I64); 9];
        sig.params.insert(2, AbiParam::new(Type::F64));
        let locs = param_locs(&sig).unwrap();
        assert_eq!(*locs[0], [Loc::Reg(x(0))]);
        assert_eq!(*locs[2], [Loc::Reg(v(0))]);
        assert_eq!(*locs[8], [Loc::Reg(x(7))]);
        assert_eq!(*locs[9], [Loc::Stack(0)]);
    }

    #[test]
    fn scratch_registers_are_never_allocated() {
        let env = machine_env();
        for r in [
            gpr_preg(Gpr::X16),
            gpr_preg(Gpr::X17),
            gpr_preg(Gpr::X18),
            fp_preg(scratch_fp()),
        ] {
            assert!(!env.allocatable.iter().flatten().any(|&a| a == r), "{r:?}");
        }
        assert!(!env.allocatable[0].contains(&gpr_preg(Gpr::FP)));
        assert!(!env.allocatable[0].contains(&gpr_preg(Gpr::LR)));
        assert_eq!(env.allocatable[0].len(), 26);
        assert_eq!(env.allocatable[1].len(), 31);
    }

    #[test]
    fn i128_takes_an_even_pair_or_an_aligned_stack_slot() {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params = [
            Type::I64,
            Type::I128,
            Type::I64,
            Type::I128,
            Type::I128,
            Type::I64,
        ]
        .map(AbiParam::new)
        .to_vec();
        let locs = param_locs(&sig).unwrap();
        assert_eq!(*locs[0], [Loc::Reg(x(0))]);
        // x1 is skipped: a pair starts at an even register.
        assert_eq!(*locs[1], [Loc::Reg(x(2)), Loc::Reg(x(3))]);
        assert_eq!(*locs[2], [Loc::Reg(x(4))]);
        assert_eq!(*locs[3], [Loc::Reg(x(6)), Loc::Reg(x(7))]);
        assert_eq!(*locs[4], [Loc::Stack(0), Loc::Stack(8)]);
        assert_eq!(*locs[5], [Loc::Stack(16)]);
        // Seven integers leave one register: the i128 goes to the stack, and so does
        // every later integer (AAPCS64 C.11), 16-byte aligned.
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params = vec![AbiParam::new(Type::I64); 7];
        sig.params
            .extend([Type::I128, Type::I64].map(AbiParam::new));
        let locs = param_locs(&sig).unwrap();
        assert_eq!(*locs[7], [Loc::Stack(0), Loc::Stack(8)]);
        assert_eq!(*locs[8], [Loc::Stack(16)]);
        sig.params.insert(0, AbiParam::new(Type::I64));
        let locs = param_locs(&sig).unwrap();
        assert_eq!(*locs[8], [Loc::Stack(0), Loc::Stack(8)]);
        assert_eq!(*locs[9], [Loc::Stack(16)]);
        let mut sig = Signature::new(CallConv::SystemV);
        sig.returns = [Type::I8, Type::I128].map(AbiParam::new).to_vec();
        let (locs, area) = ret_locs(&sig).unwrap();
        assert_eq!(*locs[1], [RetLoc::Reg(x(2)), RetLoc::Reg(x(3))]);
        assert_eq!(area, 0);
    }

    #[test]
    fn unsupported_types_and_conventions_are_errors() {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(Type::INVALID));
        assert!(param_locs(&sig).is_err());
        let sig = Signature::new(CallConv::AppleAarch64);
        assert!(param_locs(&sig).is_err());
        let mut sig = Signature::new(CallConv::SystemV);
        sig.returns = vec![AbiParam::new(Type::I32); 9];
        let (locs, area) = ret_locs(&sig).unwrap();
        assert_eq!(*locs[7], [RetLoc::Reg(x(7))]);
        assert_eq!((&*locs[8], area), (&[RetLoc::Area(0)][..], 8));
    }
}
