//! The System V AMD64 calling convention and frame layout.
//!
//! # Contract
//!
//! - Arguments: integers in `rdi, rsi, rdx, rcx, r8, r9`, floats in `xmm0`–`xmm7`, in order
//!   per class; the rest on the stack in 8-byte slots at `[rbp + 16 + 8*i]`, in order.
//! - Results: integers in `rax, rdx`, floats in `xmm0, xmm1`; the rest in a return area of
//!   8-byte slots in result order, whose address the caller passes as a hidden first argument
//!   (rdi; the integer parameters then start at rsi).
//! - Callee-saved `rbx, r12`–`r15` are saved only when the allocator used them; everything
//!   else is caller-saved and clobbered by calls.
//! - **Scratch registers.** `r11` and `xmm15` are never allocated, so no value lives in them
//!   across an instruction boundary. Two users rely on that, and only they may write them:
//!   the allocator's edits (moves and spills between instructions), and the encoder, which
//!   uses them as temporaries inside one instruction (`emit.rs`: wide comparisons, i128
//!   selects and conversions, float constants and conversions, atomic loops, jump tables,
//!   stack probes). The regalloc checker enforces this (`MachineEnv::scratch`): no operand
//!   may be allocated to them, and every instruction clobbers them, so a value an edit puts
//!   there must be consumed by edits before the next instruction. The prologue's
//!   stack-limit check also uses `r10`, before any value is in a register other than the
//!   arguments (`r10` carries none).
//! - `rbp` is the frame pointer whenever there is a frame: a function with calls, incoming
//!   stack arguments, stack slots, spills or saved registers. A leaf with none of these sets
//!   up nothing (no `push rbp`, no `sub rsp`) and returns with a bare `ret`.
//! - After the prologue `rsp` is 16-byte aligned, so calls need no adjustment.
//! - `fast`, `cold` and `tail` are treated as System V (the callee and caller agree because
//!   both are compiled here); `windows_fastcall` is Windows x64 (see its functions below);
//!   `winch` is described in [`super::winch`]; other conventions are unsupported.
//! - A function also saves the callee-saved registers of its convention that its calls may
//!   clobber (a System V function calling a winch one saves rbx, r12–r15 around it all).

use std::sync::OnceLock;

use kestrel_ir::{CallConv, Function, Signature, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, PReg, PRegSet, RegClass, VReg};
use smallvec::{smallvec, SmallVec};

use super::asm::sse::FloatSize;
use super::asm::Gpr;
use super::asm::Size;
use super::inst::{
    gpr_preg, AluInst, CallDest, ControlInst, FrameValue, Inst, LoadKind, Mem, MemInst, StoreKind,
};
use super::winch;
use crate::machinst::frame::{self, Frame, FrameAbi, FrameOptions, FrameUse};
use crate::machinst::lower::{Lower, Results, ValueRegs};
use crate::machinst::operands::FixedRegs;
use crate::machinst::vcode::VCode;
use crate::machinst::CodegenError;

const INT_ARGS: [Gpr; 6] = [Gpr::RDI, Gpr::RSI, Gpr::RDX, Gpr::RCX, Gpr::R8, Gpr::R9];
const INT_RETS: [Gpr; 2] = [Gpr::RAX, Gpr::RDX];
const CALLEE_SAVED: [Gpr; 5] = [Gpr::RBX, Gpr::R12, Gpr::R13, Gpr::R14, Gpr::R15];

pub(super) fn xmm_preg(n: usize) -> PReg {
    PReg::new(n, RegClass::Float)
}

/// The locations of one value's parts: one, or two for an `i128` (low first).
pub type Parts<T> = SmallVec<[T; 2]>;

/// The locations of a signature's parameters or results, one [`Parts`] per value; inline for
/// up to eight values, so computing a call's locations allocates nothing for most calls.
pub type SigLocs<T> = SmallVec<[Parts<T>; 8]>;

/// Where one argument or result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Reg(PReg),
    /// Byte offset in the stack-argument area.
    Stack(i32),
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
            "calling convention `{}`",
            other.name()
        ))),
    }
}

/// How values of `ty` live in registers: class and count (`i128` in two GPRs, low first).
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

pub(super) fn regs_of(ty: Type) -> Result<(RegClass, usize), CodegenError> {
    value_regs(ty).ok_or_else(|| CodegenError::Unsupported {
        opcode: None,
        ty: Some(ty),
        what: "argument or result type in the calling convention".into(),
    })
}

/// Where one result part goes: a return register, or an offset in the return area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetLoc {
    Reg(PReg),
    Area(i32),
}

/// Locations of the results of `sig`, one list per result (two parts for `i128`), and the
/// size of the return area. Each part takes the next return register of its class (rax, rdx;
/// xmm0, xmm1); the rest go to the return area in order, 8 bytes each. A non-empty area is
/// passed by the caller as a hidden first argument (in rdi).
pub fn ret_locs(sig: &Signature) -> Result<(SigLocs<RetLoc>, u32), CodegenError> {
    check_call_conv(sig.call_conv)?;
    if sig.call_conv == CallConv::WindowsFastcall {
        return fastcall_ret_locs(sig);
    }
    if sig.call_conv == CallConv::Winch {
        return winch::ret_locs(sig);
    }
    let mut locs = SigLocs::with_capacity(sig.returns.len());
    let area = walk_sysv_rets(sig, |k, loc| {
        if k == locs.len() {
            locs.push(Parts::new());
        }
        locs[k].push(loc);
    })?;
    Ok((locs, area))
}

/// Gives each result part of `sig` its System V location, in order, as `each(result index,
/// location)` (see [`ret_locs`]); returns the size of the return area.
fn walk_sysv_rets(
    sig: &Signature,
    mut each: impl FnMut(usize, RetLoc),
) -> Result<u32, CodegenError> {
    let (mut ints, mut floats, mut area) = (0, 0, 0u32);
    for (k, p) in sig.returns.iter().enumerate() {
        let (class, n) = regs_of(p.value_type)?;
        for _ in 0..n {
            let reg = match class {
                RegClass::Int if ints < INT_RETS.len() => {
                    ints += 1;
                    Some(gpr_preg(INT_RETS[ints - 1]))
                }
                RegClass::Float if floats < 2 => {
                    floats += 1;
                    Some(xmm_preg(floats - 1))
                }
                _ => None,
            };
            each(
                k,
                match reg {
                    Some(r) => RetLoc::Reg(r),
                    None => {
                        area += 8;
                        RetLoc::Area(area as i32 - 8)
                    }
                },
            );
        }
    }
    Ok(area)
}

/// Windows x64: one result, in rax or xmm0.
fn fastcall_ret_locs(sig: &Signature) -> Result<(SigLocs<RetLoc>, u32), CodegenError> {
    match sig.returns.as_slice() {
        [] => Ok((SigLocs::new(), 0)),
        [p] => match regs_of(p.value_type)? {
            (RegClass::Int, 1) => Ok((smallvec![smallvec![RetLoc::Reg(gpr_preg(Gpr::RAX))]], 0)),
            (RegClass::Float, 1) => Ok((smallvec![smallvec![RetLoc::Reg(xmm_preg(0))]], 0)),
            _ => Err(CodegenError::unsupported(
                "an i128 result under windows_fastcall",
            )),
        },
        _ => Err(CodegenError::unsupported(
            "several results under windows_fastcall",
        )),
    }
}

/// Windows x64: argument `i` in rcx, rdx, r8, r9 (or xmm`i`) for `i < 4`, the rest on the
/// stack above the caller's 32-byte shadow area.
fn fastcall_param_locs(sig: &Signature) -> Result<SigLocs<Loc>, CodegenError> {
    const ARGS: [Gpr; 4] = [Gpr::RCX, Gpr::RDX, Gpr::R8, Gpr::R9];
    sig.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Ok(smallvec![match regs_of(p.value_type)? {
                (_, 2) => {
                    return Err(CodegenError::unsupported(
                        "an i128 argument under windows_fastcall",
                    ));
                }
                (RegClass::Int, _) if i < 4 => Loc::Reg(gpr_preg(ARGS[i])),
                (RegClass::Float, _) if i < 4 => Loc::Reg(xmm_preg(i)),
                _ => Loc::Stack(FASTCALL_SHADOW as i32 + 8 * (i as i32 - 4)),
            }])
        })
        .collect()
}

/// The stack space a Windows x64 caller reserves for the callee's register arguments.
const FASTCALL_SHADOW: u32 = 32;

/// Bytes of outgoing-argument area a call of a function of convention `cc` needs at least.
pub fn min_out_area(cc: CallConv) -> u32 {
    if cc == CallConv::WindowsFastcall {
        FASTCALL_SHADOW
    } else {
        0
    }
}

/// Registers a call of a function of convention `cc` may overwrite.
pub(super) fn call_clobbers(cc: CallConv) -> PRegSet {
    let mut set = caller_saved();
    if cc == CallConv::Winch {
        CALLEE_SAVED.iter().for_each(|&g| set.add(gpr_preg(g)));
    }
    set
}

/// How a result part of type `ty` is stored to and loaded from the return area of `cc`:
/// 8-byte slots, except winch's exact-width ones.
fn area_access(cc: CallConv, ty: Type, class: RegClass) -> (StoreKind, LoadKind) {
    if cc == CallConv::Winch {
        winch::area_access(ty)
    } else {
        let kind = match class {
            RegClass::Int => StoreKind::Int { size: Size::S64 },
            RegClass::Float => StoreKind::Float {
                size: FloatSize::F64,
            },
        };
        (kind, load_kind_of(class))
    }
}

/// Whether calls of `sig` pass a hidden return-area pointer.
pub fn needs_ret_area(sig: &Signature) -> bool {
    match sig.call_conv {
        CallConv::WindowsFastcall | CallConv::Winch => {
            ret_locs(sig).is_ok_and(|(_, area)| area > 0)
        }
        cc => check_call_conv(cc).is_ok() && walk_sysv_rets(sig, |_, _| {}).is_ok_and(|a| a > 0),
    }
}

/// Whether some parameter of `sig` arrives on the stack (for a supported signature).
pub fn has_stack_params(sig: &Signature) -> bool {
    let on_stack = |loc: Loc| matches!(loc, Loc::Stack(_));
    match sig.call_conv {
        CallConv::WindowsFastcall => {
            param_locs(sig).is_ok_and(|locs| locs.iter().flatten().any(|&l| on_stack(l)))
        }
        cc => {
            let mut any = false;
            check_call_conv(cc).is_ok()
                && walk_sysv_params(sig, needs_ret_area(sig), |_, l| any |= on_stack(l)).is_ok()
                && any
        }
    }
}

/// Locations of the parameters of `sig`, one list per parameter (two parts for `i128`: both
/// in registers, or both on the stack in a 16-byte-aligned pair of slots). With a return
/// area, rdi carries its address and the parameters start at rsi.
pub fn param_locs(sig: &Signature) -> Result<SigLocs<Loc>, CodegenError> {
    param_locs_given(sig, needs_ret_area(sig))
}

/// Where the first part of parameter `index` of `sig` arrives (see [`param_locs`]), found
/// without building the lists.
pub fn param_loc(sig: &Signature, index: usize) -> Result<Loc, CodegenError> {
    check_call_conv(sig.call_conv)?;
    if sig.call_conv == CallConv::WindowsFastcall {
        return fastcall_param_locs(sig)?
            .get(index)
            .map(|parts| parts[0])
            .ok_or_else(|| param_out_of_range(sig, index));
    }
    let mut found = None;
    walk_sysv_params(sig, needs_ret_area(sig), |k, loc| {
        if k == index && found.is_none() {
            found = Some(loc);
        }
    })?;
    found.ok_or_else(|| param_out_of_range(sig, index))
}

fn param_out_of_range(sig: &Signature, index: usize) -> CodegenError {
    CodegenError::unsupported(format!(
        "parameter {index} of a signature with {} parameters",
        sig.params.len()
    ))
}

/// The size of `sig`'s return area (0: none), or why its results are unsupported: what
/// [`ret_locs`] returns besides the locations.
fn ret_area_size(sig: &Signature) -> Result<u32, CodegenError> {
    match sig.call_conv {
        CallConv::WindowsFastcall | CallConv::Winch => ret_locs(sig).map(|(_, area)| area),
        cc => {
            check_call_conv(cc)?;
            walk_sysv_rets(sig, |_, _| {})
        }
    }
}

/// Numbers the locations a signature walk visits within their value: a value's parts (two
/// for `i128`) come one after another.
struct PartCounter {
    value: usize,
    part: usize,
}

impl Default for PartCounter {
    fn default() -> Self {
        PartCounter {
            value: usize::MAX,
            part: 0,
        }
    }
}

impl PartCounter {
    /// The part index of the next location visited, which belongs to value `k`.
    fn part_of(&mut self, k: usize) -> usize {
        self.part = if self.value == k { self.part + 1 } else { 0 };
        self.value = k;
        self.part
    }
}

/// Each parameter part of `sig` with its location, in order, as `each(parameter index,
/// location)` (see [`param_locs`]), without building the lists; `ret_area` says whether
/// a return-area pointer comes first.
fn each_param_loc(
    sig: &Signature,
    ret_area: bool,
    mut each: impl FnMut(usize, Loc),
) -> Result<(), CodegenError> {
    check_call_conv(sig.call_conv)?;
    if sig.call_conv == CallConv::WindowsFastcall {
        for (k, parts) in fastcall_param_locs(sig)?.into_iter().enumerate() {
            parts.into_iter().for_each(|loc| each(k, loc));
        }
        return Ok(());
    }
    walk_sysv_params(sig, ret_area, each)
}

/// Each result part of `sig` with its location, in order, as `each(result index,
/// location)` (see [`ret_locs`]); returns the size of the return area. Every result's type
/// is checked before its parts are visited.
fn each_ret_loc(sig: &Signature, mut each: impl FnMut(usize, RetLoc)) -> Result<u32, CodegenError> {
    match sig.call_conv {
        CallConv::WindowsFastcall | CallConv::Winch => {
            let (locs, area) = ret_locs(sig)?;
            for (k, parts) in locs.into_iter().enumerate() {
                parts.into_iter().for_each(|loc| each(k, loc));
            }
            Ok(area)
        }
        cc => {
            check_call_conv(cc)?;
            walk_sysv_rets(sig, each)
        }
    }
}

/// [`param_locs`] for a caller that already knows whether `sig` passes a return-area
/// pointer (from its [`ret_locs`]).
fn param_locs_given(sig: &Signature, ret_area: bool) -> Result<SigLocs<Loc>, CodegenError> {
    check_call_conv(sig.call_conv)?;
    if sig.call_conv == CallConv::WindowsFastcall {
        return fastcall_param_locs(sig);
    }
    let mut locs = SigLocs::with_capacity(sig.params.len());
    walk_sysv_params(sig, ret_area, |k, loc| {
        if k == locs.len() {
            locs.push(Parts::new());
        }
        locs[k].push(loc);
    })?;
    Ok(locs)
}

/// Gives each parameter part of `sig` its System V location, in order, as `each(parameter
/// index, location)` (see [`param_locs`]); `ret_area` says whether rdi carries a
/// return-area pointer first.
fn walk_sysv_params(
    sig: &Signature,
    ret_area: bool,
    mut each: impl FnMut(usize, Loc),
) -> Result<(), CodegenError> {
    let (mut ints, mut floats, mut stack) = (usize::from(ret_area), 0, 0i32);
    for (k, p) in sig.params.iter().enumerate() {
        let (class, n) = regs_of(p.value_type)?;
        match class {
            RegClass::Int if ints + n <= INT_ARGS.len() => {
                for &r in &INT_ARGS[ints..ints + n] {
                    each(k, Loc::Reg(gpr_preg(r)));
                }
                ints += n;
            }
            RegClass::Float if floats < 8 => {
                each(k, Loc::Reg(xmm_preg(floats)));
                floats += 1;
            }
            _ => {
                if n == 2 {
                    stack += stack % 2;
                }
                for i in stack..stack + n as i32 {
                    each(k, Loc::Stack(8 * i));
                }
                stack += n as i32;
            }
        }
    }
    Ok(())
}

fn store_kind_of(v: VReg) -> StoreKind {
    match v.class() {
        RegClass::Int => StoreKind::Int { size: Size::S64 },
        RegClass::Float => StoreKind::Float {
            size: FloatSize::F64,
        },
    }
}

fn load_kind_of(class: RegClass) -> LoadKind {
    match class {
        RegClass::Int => LoadKind::Int { size: Size::S64 },
        RegClass::Float => LoadKind::Float {
            size: FloatSize::F64,
        },
    }
}

/// The allocator's view of the machine.
pub fn machine_env() -> &'static MachineEnv {
    static ENV: OnceLock<MachineEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let ints = [
            Gpr::RAX,
            Gpr::RCX,
            Gpr::RDX,
            Gpr::RSI,
            Gpr::RDI,
            Gpr::R8,
            Gpr::R9,
            Gpr::R10,
            Gpr::RBX,
            Gpr::R12,
            Gpr::R13,
            Gpr::R14,
            Gpr::R15,
        ];
        MachineEnv {
            allocatable: [
                ints.iter().map(|&g| gpr_preg(g)).collect(),
                (0..15).map(xmm_preg).collect(),
            ],
            caller_saved: caller_saved(),
            scratch: [Some(gpr_preg(Gpr::R11)), Some(xmm_preg(15))],
        }
    })
}

/// Registers a call may overwrite.
pub fn caller_saved() -> PRegSet {
    let mut set: PRegSet = [
        Gpr::RAX,
        Gpr::RCX,
        Gpr::RDX,
        Gpr::RSI,
        Gpr::RDI,
        Gpr::R8,
        Gpr::R9,
        Gpr::R10,
        Gpr::R11,
    ]
    .iter()
    .map(|&g| gpr_preg(g))
    .collect();
    for i in 0..16 {
        set.add(xmm_preg(i));
    }
    set
}

/// Copy `v` into a fresh vreg if it was already placed in another fixed register, so each
/// vreg has one fixed constraint per instruction.
fn distinct(ctx: &mut Lower<'_, Inst>, seen: &mut SmallVec<[VReg; 8]>, v: VReg) -> VReg {
    if !seen.contains(&v) {
        seen.push(v);
        return v;
    }
    let copy = ctx.alloc_vreg(v.class());
    ctx.emit(AluInst::Mov { dst: copy, src: v });
    copy
}

/// The vreg of the incoming return-area pointer, created on first use: lowering is bottom-up,
/// so a `return` in the entry block is lowered before the arguments are defined.
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

/// Define the entry block's parameters from the incoming registers and stack slots.
pub fn gen_args(ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
    // The stack limit's computation is planned here, where an error can be reported (a
    // limit the prologue cannot compute), and kept for the frame layout.
    let stack_limit = super::stack_limit::plan(ctx.f)?;
    ctx.set_stack_limit(stack_limit);
    let sig = ctx.signature();
    let ret_area = ret_area_size(sig)?;
    let mut args = FixedRegs::with_capacity(params.len() + 1);
    let mut stack = Vec::new();
    if ret_area > 0 {
        let ptr = ret_area_ptr(ctx);
        args.push((ptr, gpr_preg(INT_ARGS[0])));
    }
    let mut parts = PartCounter::default();
    each_param_loc(sig, ret_area > 0, |k, loc| {
        let part = parts.part_of(k);
        let Some(&p) = params.get(k) else {
            return;
        };
        let Some(&v) = ctx.value_regs(p).regs().get(part) else {
            return;
        };
        match loc {
            Loc::Reg(r) => args.push((v, r)),
            Loc::Stack(disp) => stack.push(MemInst::Load {
                kind: load_kind_of(v.class()),
                dst: v,
                mem: Mem::IncomingArg { disp },
                trap: None,
            }),
        }
    })?;
    ctx.emit(ControlInst::Args { args });
    for i in stack {
        ctx.emit(i);
    }
    Ok(())
}

/// `return vals…`.
pub fn gen_return(ctx: &mut Lower<'_, Inst>, vals: &[Value]) -> Result<(), CodegenError> {
    let sig = ctx.signature();
    let cc = sig.call_conv;
    let mut seen = SmallVec::new();
    let mut rets = FixedRegs::with_capacity(vals.len());
    let mut parts = PartCounter::default();
    each_ret_loc(sig, |k, loc| {
        let part = parts.part_of(k);
        let Some(&v) = vals.get(k) else {
            return;
        };
        let Some(&vr) = ctx.value_regs(v).regs().get(part) else {
            return;
        };
        match loc {
            RetLoc::Reg(r) => rets.push((distinct(ctx, &mut seen, vr), r)),
            RetLoc::Area(disp) => {
                let ty = ctx.value_type(v);
                let base = ret_area_ptr(ctx);
                ctx.emit(MemInst::Store {
                    kind: area_access(cc, ty, vr.class()).0,
                    src: vr,
                    mem: Mem::Reg { base, disp },
                    trap: None,
                });
            }
        }
    })?;
    ctx.emit(ControlInst::Ret { rets });
    Ok(())
}

/// A call of `callee` with signature `sig`; returns the result vregs.
/// The signature of a runtime-library helper: System V, these parameter and result types.
pub fn libcall_signature(params: &[Type], returns: &[Type]) -> Signature {
    let mut sig = Signature::new(kestrel_ir::CallConv::SystemV);
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

pub fn gen_call(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[Value],
) -> Result<Results, CodegenError> {
    let regs: SmallVec<[ValueRegs; 8]> = args.iter().map(|&a| ctx.value_regs(a)).collect();
    gen_call_parts(ctx, callee, sig, &regs)
}

/// [`gen_call`] with arguments already in vregs (one vreg per argument, each one register).
pub fn gen_call_regs(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[VReg],
) -> Result<Results, CodegenError> {
    let regs: SmallVec<[ValueRegs; 8]> = args.iter().map(|&v| ValueRegs::one(v)).collect();
    gen_call_parts(ctx, callee, sig, &regs)
}

fn gen_call_parts(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[ValueRegs],
) -> Result<Results, CodegenError> {
    // The signature is walked, not turned into location lists: a call is common enough
    // for the lists' copies to show in the compile time.
    let area = ret_area_size(sig)?;
    let mut seen = SmallVec::new();
    // Argument uses, then result defs: every register part (an `i128` result may take one
    // more), and the return-area pointer.
    let capacity = args.iter().map(|r| r.regs().len()).sum::<usize>() + sig.returns.len();
    let mut regs = FixedRegs::with_capacity(capacity + 1);
    if area > 0 {
        let ptr = ctx.alloc_vreg(RegClass::Int);
        ctx.emit(MemInst::RetAreaAddr {
            dst: ptr,
            size: area,
        });
        regs.push((ptr, gpr_preg(INT_ARGS[0])));
    }
    let mut parts = PartCounter::default();
    each_param_loc(sig, area > 0, |k, loc| {
        let part = parts.part_of(k);
        let Some(&v) = args.get(k).and_then(|a| a.regs().get(part)) else {
            return;
        };
        match loc {
            Loc::Reg(r) => regs.push((distinct(ctx, &mut seen, v), r)),
            Loc::Stack(disp) => ctx.emit(MemInst::Store {
                kind: store_kind_of(v),
                src: v,
                mem: Mem::OutgoingArg { disp },
                trap: None,
            }),
        }
    })?;
    let num_uses = regs.len() as u32;
    let mut results = Results::new();
    let mut loads: SmallVec<[MemInst; 2]> = SmallVec::new();
    each_ret_loc(sig, |k, loc| {
        let ty = sig.returns[k].value_type;
        // The walk has checked every result's type before visiting its parts.
        let Ok((class, _)) = regs_of(ty) else {
            return;
        };
        let v = ctx.alloc_vreg(class);
        results.push(v);
        match loc {
            RetLoc::Reg(r) => regs.push((v, r)),
            RetLoc::Area(disp) => loads.push(MemInst::Load {
                kind: area_access(sig.call_conv, ty, class).1,
                dst: v,
                mem: Mem::RetArea { disp },
                trap: None,
            }),
        }
    })?;
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
/// `preserve_frame_pointers`, an `rbp` frame even where nothing needs one.
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
    frame::compute_frame::<X64Abi>(f, vcode, ra, options)
}

/// x86-64's facts for the shared ABI and frame code.
pub struct X64Abi;

const fn gprs<const N: usize>(encs: [usize; N]) -> [PReg; N] {
    let mut regs = [PReg::new(0, RegClass::Int); N];
    let mut i = 0;
    while i < N {
        regs[i] = PReg::new(encs[i], RegClass::Int);
        i += 1;
    }
    regs
}

/// System V: rbx, r12–r15.
const SYSV_CALLEE_SAVED: [PReg; 5] = gprs([3, 12, 13, 14, 15]);

/// Windows x64: rbx, r12–r15, rsi, rdi, then xmm6–xmm15.
const FASTCALL_CALLEE_SAVED: [PReg; 17] = {
    let ints = gprs([3, 12, 13, 14, 15, 6, 7]);
    let mut regs = [PReg::new(0, RegClass::Int); 17];
    let mut i = 0;
    while i < 17 {
        regs[i] = if i < 7 {
            ints[i]
        } else {
            PReg::new(i - 1, RegClass::Float)
        };
        i += 1;
    }
    regs
};

impl FrameAbi for X64Abi {
    type Inst = Inst;
    const FLOAT_SAVE_BYTES: u32 = 16;
    const RET_AREA_ALIGN: u32 = 16;

    fn frame_use(inst: &Inst) -> FrameUse {
        match inst {
            Inst::Mem(MemInst::RetAreaAddr { size, .. }) => FrameUse::RetArea { size: *size },
            Inst::Mem(MemInst::Store {
                mem: Mem::OutgoingArg { disp },
                ..
            }) => FrameUse::OutgoingArg {
                end: *disp as u32 + 8,
            },
            // A call needs `rbp` for the alignment at the call site.
            Inst::Control(ControlInst::Call { conv, .. }) => FrameUse::Call(*conv),
            Inst::Mem(MemInst::FrameValue {
                what: FrameValue::FramePointer | FrameValue::ReturnAddress,
                ..
            }) => FrameUse::FrameRead,
            _ => FrameUse::None,
        }
    }

    fn callee_saved(cc: CallConv) -> &'static [PReg] {
        match cc {
            CallConv::Winch => &[],
            CallConv::WindowsFastcall => &FASTCALL_CALLEE_SAVED,
            _ => &SYSV_CALLEE_SAVED,
        }
    }

    fn min_out_area(cc: CallConv) -> u32 {
        min_out_area(cc)
    }

    fn has_stack_params(sig: &Signature) -> bool {
        has_stack_params(sig)
    }
}
