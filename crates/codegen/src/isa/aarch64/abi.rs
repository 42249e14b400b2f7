//! The AAPCS64 calling convention (as Linux uses it) and frame layout.
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
//!   value occupies) are saved only when the allocator used them; everything else is
//!   caller-saved and clobbered by calls.
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
//! - `system_v`, `fast`, `cold` and `tail` are all AAPCS64 here (both sides are compiled
//!   here). So is `windows_fastcall`: the Windows Arm64 convention is AAPCS64 for the
//!   scalar arguments and results CLIF has (its differences are variadic calls, which CLIF
//!   lacks, and `x18`, which this backend never touches), and Cranelift's AArch64 backend
//!   treats it the same way. `winch` is described in [`super::winch`]. Other conventions
//!   (`apple_aarch64`, which packs stack arguments and extends narrow ones; `probestack`;
//!   `patchable`) are unsupported.
//! - Vector values are unsupported (no register class holds them yet). A `stack_limit` is
//!   checked in the prologue (`stack_limit.rs`).
//!
//! Cost: O(parameters + results) per call and per function entry; the frame layout is one
//! pass over the instructions, the allocations, the edits and the stack slots.

use std::sync::OnceLock;

use kestrel_ir::{CallConv, Function, Signature, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, PReg, PRegSet, RegClass, VReg};
use smallvec::SmallVec;

use super::asm::{FpMemSize, Gpr, MemSize, Vreg as FpReg};
use super::inst::{
    fp_preg, gpr_preg, AluInst, CallDest, ControlInst, FrameValue, Inst, LoadKind, Mem, MemInst,
    StoreKind,
};
use crate::machinst::frame::{self, Frame, FrameAbi, FrameOptions, FrameUse};
use crate::machinst::lower::{Lower, Results};
use crate::machinst::operands::FixedRegs;
use crate::machinst::vcode::VCode;
use crate::machinst::CodegenError;

/// Argument and result registers per class.
const ARG_REGS: usize = 8;

fn x(n: usize) -> PReg {
    PReg::new(n, RegClass::Int)
}

fn v(n: usize) -> PReg {
    PReg::new(n, RegClass::Float)
}

/// Where one argument goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Reg(PReg),
    /// The two registers of an `i128`, low half first.
    Pair(PReg, PReg),
    /// Byte offset in the stack-argument area (an `i128`: its low half; the high one 8
    /// bytes further).
    Stack(i32),
}

/// Hands out argument (or result) registers per class and stack (or area) offsets in
/// AAPCS64's order, pairs included.
struct Assigner {
    next: [usize; 2],
    stack: u32,
}

/// Where an assigner put one value: registers, or a byte offset in memory.
enum Place {
    One(PReg),
    Two(PReg, PReg),
    Mem(i32),
}

impl Assigner {
    fn new() -> Self {
        Assigner {
            next: [0; 2],
            stack: 0,
        }
    }

    fn place(&mut self, ty: Type) -> Result<Place, CodegenError> {
        let (class, n) = class_of(ty)?;
        let next = &mut self.next[class as usize];
        if n == 2 {
            // An even-numbered pair, or 16 aligned bytes of memory and no more registers.
            *next = next.next_multiple_of(2);
            if *next + 2 <= ARG_REGS {
                *next += 2;
                return Ok(Place::Two(
                    class_reg(class, *next - 2),
                    class_reg(class, *next - 1),
                ));
            }
            *next = ARG_REGS;
            self.stack = self.stack.next_multiple_of(16);
            self.stack += 16;
            return Ok(Place::Mem(self.stack as i32 - 16));
        }
        if *next < ARG_REGS {
            *next += 1;
            return Ok(Place::One(class_reg(class, *next - 1)));
        }
        self.stack += 8;
        Ok(Place::Mem(self.stack as i32 - 8))
    }
}

fn check_call_conv(cc: CallConv) -> Result<(), CodegenError> {
    match cc {
        CallConv::SystemV
        | CallConv::Fast
        | CallConv::Cold
        | CallConv::Tail
        | CallConv::WindowsFastcall
        | CallConv::Winch => Ok(()),
        other => Err(CodegenError::unsupported(format!(
            "calling convention `{}` on aarch64",
            other.name()
        ))),
    }
}

/// How values of `ty` live in registers: integers up to 64 bits in one `x` register, `i128`
/// in two (low half first), `f32` and `f64` in one FP register; nothing else yet.
pub fn value_regs(ty: Type) -> Option<(RegClass, usize)> {
    if ty.is_int() && ty.bits() <= 64 {
        Some((RegClass::Int, 1))
    } else if ty == Type::I128 {
        Some((RegClass::Int, 2))
    } else if ty == Type::F32 || ty == Type::F64 {
        Some((RegClass::Float, 1))
    } else {
        None
    }
}

fn class_of(ty: Type) -> Result<(RegClass, usize), CodegenError> {
    value_regs(ty).ok_or_else(|| CodegenError::Unsupported {
        opcode: None,
        ty: Some(ty),
        what: "argument or result type in the aarch64 calling convention".into(),
    })
}

/// The register of the `i`-th value of `class` (argument or result).
fn class_reg(class: RegClass, i: usize) -> PReg {
    match class {
        RegClass::Int => x(i),
        RegClass::Float => v(i),
    }
}

/// Locations of the parameters of `sig`, one per parameter.
pub fn param_locs(sig: &Signature) -> Result<SmallVec<[Loc; 8]>, CodegenError> {
    let mut assign = params_assigner(sig)?;
    let mut locs = SmallVec::with_capacity(sig.params.len());
    for p in &sig.params {
        locs.push(match assign.place(p.value_type)? {
            Place::One(r) => Loc::Reg(r),
            Place::Two(lo, hi) => Loc::Pair(lo, hi),
            Place::Mem(off) => Loc::Stack(off),
        });
    }
    Ok(locs)
}

/// Whether some parameter of `sig` arrives on the stack (for a supported signature), found
/// without building the location list.
pub fn has_stack_params(sig: &Signature) -> bool {
    let Ok(mut assign) = params_assigner(sig) else {
        return false;
    };
    let mut on_stack = false;
    sig.params.iter().all(|p| match assign.place(p.value_type) {
        Ok(place) => {
            on_stack |= matches!(place, Place::Mem(_));
            true
        }
        Err(_) => false,
    }) && on_stack
}

/// Where one result goes: a register, or an offset in the return area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetLoc {
    Reg(PReg),
    /// The two registers of an `i128`, low half first.
    Pair(PReg, PReg),
    /// A byte offset in the return area (an `i128`: its low half, the high one 8 further).
    Area(i32),
}

/// Locations of the results of `sig`, one per result, and the size of the return area
/// (passed in x8 when not 0).
pub fn ret_locs(sig: &Signature) -> Result<(SmallVec<[RetLoc; 4]>, u32), CodegenError> {
    check_call_conv(sig.call_conv)?;
    if sig.call_conv == CallConv::Winch {
        return super::winch::ret_locs(sig);
    }
    let mut assign = Assigner::new();
    let mut locs = SmallVec::with_capacity(sig.returns.len());
    for p in &sig.returns {
        locs.push(match assign.place(p.value_type)? {
            Place::One(r) => RetLoc::Reg(r),
            Place::Two(lo, hi) => RetLoc::Pair(lo, hi),
            Place::Mem(off) => RetLoc::Area(off),
        });
    }
    Ok((locs, assign.stack))
}

/// The size of `sig`'s return area ([`ret_locs`]'s second half, without the locations).
fn ret_area_size(sig: &Signature) -> Result<u32, CodegenError> {
    check_call_conv(sig.call_conv)?;
    if sig.call_conv == CallConv::Winch {
        return Ok(super::winch::ret_locs(sig)?.1);
    }
    let mut assign = Assigner::new();
    for p in &sig.returns {
        assign.place(p.value_type)?;
    }
    Ok(assign.stack)
}

/// The register of the return area's address: x8 (x0 under `winch`).
fn ret_area_reg(cc: CallConv) -> PReg {
    match cc {
        CallConv::Winch => gpr_preg(Gpr::X0),
        _ => gpr_preg(Gpr::X8),
    }
}

/// An assigner for `sig`'s parameters, past the return-area pointer where the
/// convention passes it in an argument register (`winch`).
fn params_assigner(sig: &Signature) -> Result<Assigner, CodegenError> {
    check_call_conv(sig.call_conv)?;
    let mut assign = Assigner::new();
    if sig.call_conv == CallConv::Winch {
        super::winch::check(sig)?;
        if ret_area_size(sig)? > 0 {
            assign.next[RegClass::Int as usize] = 1;
        }
    }
    Ok(assign)
}

/// How a result of type `ty` and class `class` is stored into and loaded from the return
/// area under convention `cc`.
fn area_access(cc: CallConv, ty: Type, class: RegClass) -> (StoreKind, LoadKind) {
    match cc {
        CallConv::Winch => super::winch::area_access(ty),
        _ => slot_access(class),
    }
}

/// The vreg of the incoming return-area pointer, created on first use: lowering is
/// bottom-up, so a `return` in the entry block is lowered before the arguments are defined.
fn ret_area_ptr(ctx: &mut Lower<'_, Inst>) -> VReg {
    match ctx.ret_area_ptr {
        Some(v) => v,
        None => {
            let v = ctx.alloc_vreg(RegClass::Int);
            ctx.ret_area_ptr = Some(v);
            v
        }
    }
}

/// How a stack argument of `class` is stored and loaded: all 8 bytes of its register.
fn slot_access(class: RegClass) -> (StoreKind, LoadKind) {
    match class {
        RegClass::Int => (
            StoreKind::Int { size: MemSize::S64 },
            LoadKind::Int {
                size: MemSize::S64,
                signed: false,
            },
        ),
        RegClass::Float => (
            StoreKind::Float {
                size: FpMemSize::S64,
            },
            LoadKind::Float {
                size: FpMemSize::S64,
            },
        ),
    }
}

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

/// Copy `vr` into a fresh vreg if it was already placed in another fixed register, so each
/// vreg has one fixed constraint per instruction.
fn distinct(ctx: &mut Lower<'_, Inst>, seen: &mut SmallVec<[VReg; 8]>, vr: VReg) -> VReg {
    if !seen.contains(&vr) {
        seen.push(vr);
        return vr;
    }
    let copy = ctx.alloc_vreg(vr.class());
    ctx.emit(AluInst::Mov { dst: copy, src: vr });
    copy
}

/// Define the entry block's parameters from the incoming registers and stack slots.
pub fn gen_args(ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
    // The stack limit's computation is planned here, where an error can be reported (a
    // limit the prologue cannot compute), and kept for the frame layout.
    let stack_limit = super::stack_limit::plan(ctx.f)?;
    ctx.set_stack_limit(stack_limit);
    let locs = param_locs(ctx.signature())?;
    let mut args = FixedRegs::new();
    let mut stack = Vec::new();
    if ret_area_size(ctx.signature())? > 0 {
        let ptr = ret_area_ptr(ctx);
        args.push((ptr, ret_area_reg(ctx.signature().call_conv)));
    }
    for (&p, loc) in params.iter().zip(locs) {
        match loc {
            Loc::Reg(r) => args.push((ctx.value_vreg(p), r)),
            Loc::Pair(lo, hi) => {
                let [vlo, vhi] = ctx.value_pair(p);
                args.extend([(vlo, lo), (vhi, hi)]);
            }
            Loc::Stack(off) => {
                for (i, &vr) in ctx.value_regs(p).regs().iter().enumerate() {
                    stack.push(MemInst::Load {
                        kind: slot_access(vr.class()).1,
                        dst: vr,
                        mem: Mem::IncomingArg {
                            off: off + 8 * i as i32,
                        },
                        trap: None,
                    });
                }
            }
        }
    }
    ctx.emit(ControlInst::Args { args });
    for i in stack {
        ctx.emit(i);
    }
    Ok(())
}

/// `return vals…`.
pub fn gen_return(ctx: &mut Lower<'_, Inst>, vals: &[Value]) -> Result<(), CodegenError> {
    let (locs, _) = ret_locs(ctx.signature())?;
    let cc = ctx.signature().call_conv;
    let mut seen = SmallVec::new();
    let mut rets = FixedRegs::with_capacity(locs.len());
    for (&val, loc) in vals.iter().zip(locs) {
        match loc {
            RetLoc::Reg(r) => {
                let vr = ctx.value_vreg(val);
                rets.push((distinct(ctx, &mut seen, vr), r));
            }
            RetLoc::Pair(lo, hi) => {
                let [vlo, vhi] = ctx.value_pair(val);
                rets.push((distinct(ctx, &mut seen, vlo), lo));
                rets.push((distinct(ctx, &mut seen, vhi), hi));
            }
            RetLoc::Area(off) => {
                let base = ret_area_ptr(ctx);
                let ty = ctx.value_type(val);
                for (i, &vr) in ctx.value_regs(val).regs().iter().enumerate() {
                    ctx.emit(MemInst::Store {
                        kind: area_access(cc, ty, vr.class()).0,
                        src: vr,
                        mem: Mem::Reg {
                            base,
                            off: off + 8 * i as i32,
                        },
                        trap: None,
                    });
                }
            }
        }
    }
    ctx.emit(ControlInst::Ret { rets });
    Ok(())
}

/// A call of `callee` with signature `sig` and arguments `args`; returns the result vregs.
pub fn gen_call(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[Value],
) -> Result<Results, CodegenError> {
    let locs = param_locs(sig)?;
    // Each argument as its location asks for it (a misuse is recorded, never read wrong).
    let arg_regs: SmallVec<[ArgRegs; 8]> = args
        .iter()
        .zip(&locs)
        .map(|(&a, loc)| match loc {
            Loc::Reg(_) => smallvec::smallvec![ctx.value_vreg(a)],
            Loc::Pair(..) => ctx.value_pair(a).into_iter().collect(),
            Loc::Stack(_) => ctx.value_regs(a).regs().iter().copied().collect(),
        })
        .collect();
    gen_call_regs(ctx, callee, sig, &arg_regs)
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
    let locs = param_locs(sig)?;
    let (rets, area) = ret_locs(sig)?;
    let mut seen = SmallVec::new();
    let mut regs = FixedRegs::with_capacity(args.len() + rets.len() + 1);
    if area > 0 {
        let ptr = ctx.alloc_vreg(RegClass::Int);
        ctx.emit(MemInst::RetAreaAddr {
            dst: ptr,
            size: area,
        });
        regs.push((ptr, ret_area_reg(sig.call_conv)));
    }
    for (vrs, loc) in args.iter().zip(locs) {
        match loc {
            Loc::Reg(r) => regs.push((distinct(ctx, &mut seen, vrs[0]), r)),
            Loc::Pair(lo, hi) => {
                regs.push((distinct(ctx, &mut seen, vrs[0]), lo));
                regs.push((distinct(ctx, &mut seen, vrs[1]), hi));
            }
            Loc::Stack(off) => {
                for (i, &vr) in vrs.iter().enumerate() {
                    ctx.emit(MemInst::Store {
                        kind: slot_access(vr.class()).0,
                        src: vr,
                        mem: Mem::OutgoingArg {
                            off: off + 8 * i as i32,
                        },
                        trap: None,
                    });
                }
            }
        }
    }
    let num_uses = regs.len() as u32;
    let mut results = Results::new();
    let mut loads: SmallVec<[MemInst; 2]> = SmallVec::new();
    for (p, loc) in sig.returns.iter().zip(rets) {
        let (class, n) = class_of(p.value_type)?;
        let vrs: SmallVec<[VReg; 2]> = (0..n).map(|_| ctx.alloc_vreg(class)).collect();
        results.extend(vrs.iter().copied());
        match loc {
            RetLoc::Reg(r) => regs.push((vrs[0], r)),
            RetLoc::Pair(lo, hi) => regs.extend([(vrs[0], lo), (vrs[1], hi)]),
            RetLoc::Area(off) => {
                for (i, &vr) in vrs.iter().enumerate() {
                    loads.push(MemInst::Load {
                        kind: area_access(sig.call_conv, p.value_type, class).1,
                        dst: vr,
                        mem: Mem::RetArea {
                            off: off + 8 * i as i32,
                        },
                        trap: None,
                    });
                }
            }
        }
    }
    ctx.emit(ControlInst::Call {
        dest: callee,
        regs,
        num_uses,
        conv: sig.call_conv,
    });
    for load in loads {
        ctx.emit(load);
    }
    Ok(results)
}

/// The frame for `f` given its allocation (the shared layout, `machinst::frame`); with
/// `preserve_frame_pointers`, a frame even where nothing needs one; with a
/// `probe_interval`, probes when the frame is at least that large.
pub fn compute_frame(
    f: &Function,
    vcode: &VCode<Inst>,
    ra: &Output,
    preserve_frame_pointers: bool,
    probe_interval: Option<u32>,
) -> Frame {
    let options = FrameOptions {
        preserve_frame_pointers,
        probe_interval,
    };
    frame::compute_frame::<A64Abi>(f, vcode, ra, options)
}

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

impl FrameAbi for A64Abi {
    type Inst = Inst;
    const FLOAT_SAVE_BYTES: u32 = 8;
    const RET_AREA_ALIGN: u32 = 1;

    fn frame_use(inst: &Inst) -> FrameUse {
        match inst {
            Inst::Mem(MemInst::RetAreaAddr { size, .. }) => FrameUse::RetArea { size: *size },
            Inst::Mem(MemInst::Store {
                mem: Mem::OutgoingArg { off },
                ..
            }) => FrameUse::OutgoingArg {
                end: *off as u32 + 8,
            },
            Inst::Control(ControlInst::Call { conv, .. }) => FrameUse::Call(*conv),
            // Reading x29 or the saved x30 needs the frame that holds them.
            Inst::Mem(MemInst::FrameValue {
                what: FrameValue::FramePointer | FrameValue::ReturnAddress,
                ..
            }) => FrameUse::FrameRead,
            _ => FrameUse::None,
        }
    }

    fn callee_saved(_cc: CallConv) -> &'static [PReg] {
        &CALLEE_SAVED_REGS
    }

    fn has_stack_params(sig: &Signature) -> bool {
        has_stack_params(sig)
    }
}

/// The signature of a runtime-library helper: AAPCS64, these parameter and result types.
pub fn libcall_signature(params: &[Type], returns: &[Type]) -> Signature {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params = params
        .iter()
        .map(|&t| kestrel_ir::AbiParam::new(t))
        .collect();
    sig.returns = returns
        .iter()
        .map(|&t| kestrel_ir::AbiParam::new(t))
        .collect();
    sig
}

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
        assert_eq!(locs[0], Loc::Reg(x(0)));
        assert_eq!(locs[2], Loc::Reg(v(0)));
        assert_eq!(locs[8], Loc::Reg(x(7)));
        assert_eq!(locs[9], Loc::Stack(0));
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
        assert_eq!(locs[0], Loc::Reg(x(0)));
        // x1 is skipped: a pair starts at an even register.
        assert_eq!(locs[1], Loc::Pair(x(2), x(3)));
        assert_eq!(locs[2], Loc::Reg(x(4)));
        assert_eq!(locs[3], Loc::Pair(x(6), x(7)));
        assert_eq!(locs[4], Loc::Stack(0));
        assert_eq!(locs[5], Loc::Stack(16));
        // Seven integers leave one register: the i128 goes to the stack, and so does
        // every later integer (AAPCS64 C.11), 16-byte aligned.
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params = vec![AbiParam::new(Type::I64); 7];
        sig.params
            .extend([Type::I128, Type::I64].map(AbiParam::new));
        let locs = param_locs(&sig).unwrap();
        assert_eq!((locs[7], locs[8]), (Loc::Stack(0), Loc::Stack(16)));
        sig.params.insert(0, AbiParam::new(Type::I64));
        let locs = param_locs(&sig).unwrap();
        assert_eq!((locs[8], locs[9]), (Loc::Stack(0), Loc::Stack(16)));
        let mut sig = Signature::new(CallConv::SystemV);
        sig.returns = [Type::I8, Type::I128].map(AbiParam::new).to_vec();
        let (locs, area) = ret_locs(&sig).unwrap();
        assert_eq!((locs[1], area), (RetLoc::Pair(x(2), x(3)), 0));
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
        assert_eq!(
            (locs[7], locs[8], area),
            (RetLoc::Reg(x(7)), RetLoc::Area(0), 8)
        );
    }
}
