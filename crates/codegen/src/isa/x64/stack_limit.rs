//! `stack_limit = gvN`: a prologue check that traps with `stk_ovf` before the frame would
//! reach below the limit (the semantics of Cranelift's stack limit).
//!
//! Contract. [`plan`] turns the limit's global value into steps the prologue can run
//! before anything is allocated: start from the `vmctx` parameter where it arrives (a
//! register, or the incoming stack-argument area), then loads at offsets and additions of
//! constants, all in `r11`, which no argument uses and the allocator never hands out. A
//! global value the prologue cannot compute this way is a [`CodegenError`] naming it, at
//! lowering time, never a wrong check. The check runs after `push rbp; mov rbp, rsp`
//! and before `sub rsp, size`: with `total` the bytes the function still takes below that
//! point (its frame, plus the 16 bytes of a callee's return address and saved `rbp` when it
//! calls), it traps unless `rsp - total >= limit`, computed exactly (unsigned, and a
//! borrow in the subtraction traps too; Cranelift adds `total` to the limit instead, which
//! wraps for a limit near the top of the address space). A leaf that takes no stack has
//! no check.
//! The comparisons and traps are emitted by the prologue (`emit.rs`); this module plans
//! the limit's computation and emits it ([`emit_limit`]).
//!
//! Cost: O(length of the global value chain) per function.

use kestrel_ir::{ArgumentPurpose, Function, GlobalValue, GlobalValueData, Type};
use smallvec::SmallVec;

use super::abi::{param_locs, Loc};
use super::asm::alu::{self, AluOp};
use super::asm::moves;
use super::asm::{Amode, CodeSink, Gpr, GprMem, Size};
use crate::machinst::CodegenError;

/// Longest global value chain accepted (the verifier already rejects cycles).
const MAX_DEPTH: usize = 16;

/// One step of computing the limit into `r11`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `r11 = reg` (the `vmctx` argument's register).
    FromReg(Gpr),
    /// `r11 = [rbp + 16 + disp]` (the `vmctx` argument on the stack).
    FromArgArea(i32),
    /// `r11 = [r11 + disp]`.
    Load(i32),
    /// `r11 += imm`.
    AddImm(i32),
}

/// The steps of a limit computation: a short chain (vmctx, a load or two, an offset) is
/// kept inline.
pub type Steps = SmallVec<[Step; 4]>;

/// The steps computing `f`'s stack limit, or `None` when it declares none.
pub fn plan(f: &Function) -> Result<Option<Steps>, CodegenError> {
    let Some(gv) = f.stack_limit else {
        return Ok(None);
    };
    let mut steps = Steps::new();
    push_steps(f, gv, 0, &mut steps)?;
    Ok(Some(steps))
}

fn push_steps(
    f: &Function,
    gv: GlobalValue,
    depth: usize,
    steps: &mut Steps,
) -> Result<(), CodegenError> {
    let unsupported = |what: String| CodegenError::unsupported(format!("stack_limit: {what}"));
    if depth > MAX_DEPTH {
        return Err(unsupported(format!(
            "the chain of {gv} is longer than {MAX_DEPTH} global values"
        )));
    }
    let data = f
        .global_values
        .get(gv)
        .ok_or_else(|| unsupported(format!("{gv} is not declared")))?;
    match *data {
        GlobalValueData::Symbol { ref name, .. } => {
            return Err(unsupported(format!(
                "{gv} is the address of symbol {name}; the limit must come from vmctx"
            )));
        }
        GlobalValueData::VMContext => {
            let index = f
                .signature
                .special_param_index(ArgumentPurpose::VMContext)
                .ok_or_else(|| unsupported("`vmctx` needs a vmctx parameter".into()))?;
            let locs = param_locs(&f.signature)?;
            steps.push(match locs[index][0] {
                Loc::Reg(r) => Step::FromReg(Gpr::new(r.hw_enc() as u8)),
                Loc::Stack(disp) => Step::FromArgArea(disp),
            });
        }
        GlobalValueData::Load {
            base,
            offset,
            global_type,
            ..
        } => {
            if global_type != Type::I64 {
                return Err(unsupported(format!(
                    "{gv} loads {global_type}; the limit is a 64-bit address"
                )));
            }
            push_steps(f, base, depth + 1, steps)?;
            steps.push(Step::Load(offset));
        }
        GlobalValueData::IAddImm { base, offset, .. } => {
            let imm = i32::try_from(offset).map_err(|_| {
                unsupported(format!("{gv} adds {offset}, which does not fit in 32 bits"))
            })?;
            push_steps(f, base, depth + 1, steps)?;
            steps.push(Step::AddImm(imm));
        }
    }
    Ok(())
}

/// Computes the limit into `r11`.
pub fn emit_limit(sink: &mut impl CodeSink, steps: &[Step]) {
    let r11 = Gpr::R11;
    for &step in steps {
        match step {
            Step::FromReg(r) => {
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
                alu::alu_rm_imm(sink, AluOp::Add, Size::S64, &GprMem::Reg(r11), imm);
            }
        }
    }
}
