//! `stack_limit = gvN` on AArch64: a prologue check that traps with `stk_ovf` before the
//! frame would reach below the limit (the semantics of Cranelift's stack limit).
//!
//! Contract. The plan is the shared planner's (`machinst::abi::plan_stack_limit`) with
//! AArch64's facts:
//! the steps compute the limit in `x16`, which no argument uses and the allocator never
//! hands out; `vmctx` arrives in a register or the incoming stack-argument area (`[x29 +
//! 16 + off]`); any 64-bit constant can be added. [`emit_check`] runs after `stp x29, x30,
//! [sp, #-16]!; mov x29, sp` and before `sub sp, sp, #size`: with `below` the bytes the
//! function still takes under that point (its frame, plus the 16 bytes a callee's own `stp`
//! stores before its check, when it calls), it traps unless `sp >= limit + below`, computed
//! exactly (a carry out of the addition traps too), which is `sp - below >= limit` without
//! wrapping. It uses only `x16` and `x17`, which hold nothing at entry. A leaf that takes
//! no stack has no check (`machinst::frame`).
//!
//! Cost: O(length of the global value chain) per function.

use kestrel_ir::TrapCode;
use kestrel_regalloc::PReg;

use super::asm::add_sub::{adds_subs_reg, AddSub};
use super::asm::branch::b_cond;
use super::asm::cond::Cond as Cc;
use super::asm::logical::{logical_reg, LogicalOp};
use super::asm::mem::{ld_st, IntLdSt};
use super::asm::{Gpr, GprSp, GprZr, PcOffset, Size};
use super::emit::{add_offset, amode, gpr, mov_imm, trap, Buf};
use crate::machinst::stack_limit as shared;

/// One step of computing the limit into `x16`.
pub type Step = shared::Step<PReg>;
/// The steps of a limit computation.
pub type Steps = shared::StackLimitSteps;

/// `b.<cc> +8` over a `udf` trap site: traps with `stk_ovf` unless `skip` holds.
fn trap_unless(buf: &mut Buf, skip: Cc) {
    b_cond(buf, skip, PcOffset::new(8).expect("8 fits"));
    trap(buf, TrapCode::STACK_OVERFLOW);
}

/// The prologue's check (see the module doc): the limit into x16, `x16 += below` (a carry
/// traps), then a trap unless `sp >= x16`.
pub fn emit_check(buf: &mut Buf, steps: &[Step], below: u32) {
    let (x16, x17) = (Gpr::X16, Gpr::X17);
    for &step in steps {
        match step {
            Step::FromReg(r) => logical_reg(
                buf,
                LogicalOp::Orr,
                Size::S64,
                x16.into(),
                GprZr::ZR,
                gpr(r).into(),
            ),
            Step::FromArgArea(off) => {
                let a = amode(buf, Gpr::FP.into(), 16 + i64::from(off), 8);
                ld_st(buf, IntLdSt::LdrX, x16.into(), a);
            }
            Step::Load(off) => {
                let a = amode(buf, x16.into(), i64::from(off), 8);
                ld_st(buf, IntLdSt::LdrX, x16.into(), a);
            }
            Step::AddImm(imm) => add_offset(buf, x16.into(), x16.into(), imm),
        }
    }
    mov_imm(buf, Size::S64, x17, u64::from(below));
    adds_subs_reg(
        buf,
        AddSub::Add,
        Size::S64,
        x16.into(),
        x16.into(),
        x17.into(),
    );
    trap_unless(buf, Cc::Lo);
    add_offset(buf, x17.into(), GprSp::SP, 0);
    adds_subs_reg(
        buf,
        AddSub::Sub,
        Size::S64,
        GprZr::ZR,
        x17.into(),
        x16.into(),
    );
    trap_unless(buf, Cc::Hs);
}
