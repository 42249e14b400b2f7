//! `stack_limit = gvN`: a prologue check that traps with `stk_ovf` before the frame would
//! reach below the limit (the semantics of Cranelift's stack limit).
//!
//! Contract. The plan is the shared planner's (`machinst::abi::plan_stack_limit`) with
//! x86-64's facts:
//! the steps compute the limit in `r11`, which no argument uses and the allocator never
//! hands out; `vmctx` arrives in a register or the incoming stack-argument area (`[rbp +
//! 16 + disp]`); an added constant must fit in 32 bits. The check runs after `push rbp;
//! mov rbp, rsp` and before `sub rsp, size`: with `total` the bytes the function still
//! takes below that point (its frame, plus the 16 bytes of a callee's return address and
//! saved `rbp` when it calls), it traps unless `rsp - total >= limit`, computed exactly
//! (unsigned, and a borrow in the subtraction traps too; Cranelift adds `total` to the
//! limit instead, which wraps for a limit near the top of the address space). A leaf that
//! takes no stack has no check.
//! The comparisons and traps are emitted by the prologue (`emit.rs`); this module plans
//! the limit's computation and emits it ([`emit_limit`]).
//!
//! Cost: O(length of the global value chain) per function.

use kestrel_regalloc::PReg;

use super::asm::alu::{self, AluOp};
use super::asm::moves;
use super::asm::{Amode, CodeSink, Gpr, GprMem, Size};
use crate::machinst::stack_limit as shared;

/// One step of computing the limit into `r11`.
pub type Step = shared::Step<PReg>;
/// The steps of a limit computation.
pub type Steps = shared::StackLimitSteps;

/// Computes the limit into `r11`.
pub fn emit_limit(sink: &mut impl CodeSink, steps: &[Step]) {
    let r11 = Gpr::R11;
    for &step in steps {
        match step {
            Step::FromReg(r) => {
                let r = Gpr::new(r.hw_enc() as u8);
                moves::mov_rm_r(sink, Size::S64, &GprMem::Reg(r11), r);
            }
            Step::FromArgArea(disp) => {
                let m = GprMem::Mem(Amode::base_disp(Gpr::RBP, 16 + disp));
                moves::mov_r_rm(sink, Size::S64, r11, &m);
            }
            Step::Load(disp) => {
                let m = GprMem::Mem(Amode::base_disp(r11, disp));
                moves::mov_r_rm(sink, Size::S64, r11, &m);
            }
            Step::AddImm(imm) => {
                let imm = i32::try_from(imm).expect("the plan keeps addends within 32 bits");
                alu::alu_rm_imm(sink, AluOp::Add, Size::S64, &GprMem::Reg(r11), imm);
            }
        }
    }
}
