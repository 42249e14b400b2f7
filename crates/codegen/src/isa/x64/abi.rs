//! The System V AMD64 calling convention and frame layout.
//!
//! # Contract
//!
//! - Arguments: integers in `rdi, rsi, rdx, rcx, r8, r9`, floats in `xmm0`–`xmm7`, in order
//!   per class; the rest on the stack in 8-byte slots at `[rbp + 16 + 8*i]`, in order.
//! - Results: integers in `rax, rdx`, floats in `xmm0, xmm1`; more results than that are
//!   reported as unsupported (no hidden return area yet).
//! - Callee-saved `rbx, r12`–`r15` (and `rbp`, always used as the frame pointer) are saved
//!   only when the allocator used them; everything else is caller-saved and clobbered by
//!   calls. `r11` and `xmm15` are never allocated: they are the edit scratch registers.
//! - After the prologue `rsp` is 16-byte aligned, so calls need no adjustment.
//! - `fast`, `cold` and `tail` are treated as System V (the callee and caller agree because
//!   both are compiled here); other conventions are unsupported.

use std::sync::OnceLock;

use kestrel_ir::{CallConv, Function, Opcode, Signature, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, PReg, PRegSet, RegClass, VReg};

use super::asm::Gpr;
use super::emit::Frame;
use super::inst::{gpr_preg, CallDest, Inst};
use crate::machinst::lower::Lower;
use crate::machinst::vcode::VCode;
use crate::machinst::CodegenError;

const INT_ARGS: [Gpr; 6] = [Gpr::RDI, Gpr::RSI, Gpr::RDX, Gpr::RCX, Gpr::R8, Gpr::R9];
const INT_RETS: [Gpr; 2] = [Gpr::RAX, Gpr::RDX];
const CALLEE_SAVED: [Gpr; 5] = [Gpr::RBX, Gpr::R12, Gpr::R13, Gpr::R14, Gpr::R15];

fn xmm_preg(n: usize) -> PReg {
    PReg::new(n, RegClass::Float)
}

/// Where one argument or result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Reg(PReg),
    /// Byte offset in the stack-argument area.
    Stack(i32),
}

fn check_call_conv(cc: CallConv) -> Result<(), CodegenError> {
    match cc {
        CallConv::SystemV | CallConv::Fast | CallConv::Cold | CallConv::Tail => Ok(()),
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

fn regs_of(ty: Type) -> Result<(RegClass, usize), CodegenError> {
    value_regs(ty).ok_or_else(|| CodegenError::Unsupported {
        opcode: None,
        ty: Some(ty),
        what: "argument or result type in the calling convention".into(),
    })
}

/// Locations of the parameters of `sig`, one list per parameter (two parts for `i128`: both
/// in registers, or both on the stack in a 16-byte-aligned pair of slots).
pub fn param_locs(sig: &Signature) -> Result<Vec<Vec<Loc>>, CodegenError> {
    check_call_conv(sig.call_conv)?;
    let (mut ints, mut floats, mut stack) = (0, 0, 0i32);
    sig.params
        .iter()
        .map(|p| {
            let (class, n) = regs_of(p.value_type)?;
            Ok(match class {
                RegClass::Int if ints + n <= INT_ARGS.len() => {
                    ints += n;
                    (ints - n..ints)
                        .map(|i| Loc::Reg(gpr_preg(INT_ARGS[i])))
                        .collect()
                }
                RegClass::Float if floats < 8 => {
                    floats += 1;
                    vec![Loc::Reg(xmm_preg(floats - 1))]
                }
                _ => {
                    if n == 2 {
                        stack += stack % 2;
                    }
                    stack += n as i32;
                    (stack - n as i32..stack)
                        .map(|i| Loc::Stack(8 * i))
                        .collect()
                }
            })
        })
        .collect()
}

/// Registers of the results of `sig`, one list per result.
pub fn ret_regs(sig: &Signature) -> Result<Vec<Vec<PReg>>, CodegenError> {
    check_call_conv(sig.call_conv)?;
    let (mut ints, mut floats) = (0, 0);
    sig.returns
        .iter()
        .map(|p| {
            let (class, n) = regs_of(p.value_type)?;
            match class {
                RegClass::Int if ints + n <= INT_RETS.len() => {
                    ints += n;
                    Ok((ints - n..ints).map(|i| gpr_preg(INT_RETS[i])).collect())
                }
                RegClass::Float if floats < 2 => {
                    floats += 1;
                    Ok(vec![xmm_preg(floats - 1)])
                }
                _ => Err(CodegenError::unsupported(
                    "more results than return registers (no hidden return area yet)",
                )),
            }
        })
        .collect()
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
fn distinct(ctx: &mut Lower<'_, Inst>, seen: &mut Vec<VReg>, v: VReg) -> VReg {
    if !seen.contains(&v) {
        seen.push(v);
        return v;
    }
    let copy = ctx.alloc_vreg(v.class());
    ctx.emit(Inst::Mov { dst: copy, src: v });
    copy
}

/// Define the entry block's parameters from the incoming registers and stack slots.
pub fn gen_args(ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
    let locs = param_locs(ctx.signature())?;
    let mut args = Vec::new();
    let mut stack = Vec::new();
    for (&p, locs) in params.iter().zip(locs) {
        let regs = ctx.value_regs(p);
        for (&v, loc) in regs.regs().iter().zip(locs) {
            match loc {
                Loc::Reg(r) => args.push((v, r)),
                Loc::Stack(off) if v.class() == RegClass::Int => stack.push(Inst::StackArg {
                    dst: v,
                    offset: 16 + off,
                }),
                Loc::Stack(_) => {
                    return Err(CodegenError::unsupported("float arguments on the stack"))
                }
            }
        }
    }
    ctx.emit(Inst::Args { args });
    for i in stack {
        ctx.emit(i);
    }
    Ok(())
}

/// `return vals…`.
pub fn gen_return(ctx: &mut Lower<'_, Inst>, vals: &[Value]) -> Result<(), CodegenError> {
    let regs = ret_regs(ctx.signature())?;
    let mut seen = Vec::new();
    let mut rets = Vec::new();
    for (&v, rs) in vals.iter().zip(regs) {
        let vrs = ctx.value_regs(v);
        for (&vr, r) in vrs.regs().iter().zip(rs) {
            rets.push((distinct(ctx, &mut seen, vr), r));
        }
    }
    ctx.emit(Inst::Ret { rets });
    Ok(())
}

/// A call of `callee` with signature `sig`; returns the result vregs.
pub fn gen_call(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[Value],
) -> Result<Vec<VReg>, CodegenError> {
    let locs = param_locs(sig)?;
    let mut seen = Vec::new();
    let mut uses = Vec::new();
    for (&a, locs) in args.iter().zip(locs) {
        let regs = ctx.value_regs(a);
        for (&v, loc) in regs.regs().iter().zip(locs) {
            match loc {
                Loc::Reg(r) => uses.push((distinct(ctx, &mut seen, v), r)),
                Loc::Stack(_) => {
                    return Err(CodegenError::Unsupported {
                        opcode: Some(Opcode::Call),
                        ty: None,
                        what: "call with stack arguments".into(),
                    })
                }
            }
        }
    }
    let mut clobbers = caller_saved();
    let mut defs = Vec::new();
    for (p, rs) in sig.returns.iter().zip(ret_regs(sig)?) {
        let (class, _) = regs_of(p.value_type)?;
        for r in rs {
            let v = ctx.alloc_vreg(class);
            clobbers.remove(r);
            defs.push((v, r));
        }
    }
    let results = defs.iter().map(|&(v, _)| v).collect();
    ctx.emit(Inst::Call {
        dest: callee,
        uses,
        defs,
        clobbers,
    });
    Ok(results)
}

/// The frame for `f` given its allocation (see `emit.rs` for the layout).
pub fn compute_frame(f: &Function, _vcode: &VCode<Inst>, ra: &Output) -> Frame {
    let mut used = PRegSet::empty();
    for a in &ra.allocs {
        if let Some(r) = a.as_reg() {
            used.add(r);
        }
    }
    for (_, e) in &ra.edits {
        for a in [e.from, e.to] {
            if let Some(r) = a.as_reg() {
                used.add(r);
            }
        }
    }
    let saved: Vec<Gpr> = CALLEE_SAVED
        .iter()
        .copied()
        .filter(|&g| used.contains(gpr_preg(g)))
        .collect();
    let save_area = 8 * saved.len() as u32;
    let mut slot_offsets = Vec::new();
    let mut off = 0u32;
    for (_, slot) in f.stack_slots.iter() {
        let align = 1u32 << slot.align_shift.min(4);
        off = off.next_multiple_of(align.max(1));
        slot_offsets.push(off as i32);
        off += slot.size;
    }
    let spill_base = off.next_multiple_of(8);
    let body = spill_base + 8 * ra.num_spillslots as u32;
    // rbp is pushed on an 8-mod-16 stack, so rbp is 16-aligned; keep rsp so.
    let size = (body + save_area).next_multiple_of(16);
    Frame {
        size,
        saved,
        spill_base: spill_base as i32,
        slot_offsets,
    }
}
