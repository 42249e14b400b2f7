//! The control family: arguments, branches, jump tables, returns, traps and calls.

use std::sync::Arc;

use kestrel_ir::{CallConv, TrapCode};
use kestrel_regalloc::{PReg, RegClass, VReg};

use super::super::asm::alu::{self as enc, AluOp};
use super::super::asm::misc;
use super::super::asm::moves::{self, ExtMode};
use super::super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::super::asm::sse::{self as sse_enc, SseOp};
use super::super::asm::{Amode, ArraySink, Gpr, GprMem, Scale, Size, XmmMem};
use super::super::emit::{
    gpr, jcc_to, trap, trap_unless, uncond_branch, xmm, Buf, Ctx, X64LabelUse,
};
use super::super::unwind;
use crate::machinst::shared_inst::{block_list, map_call_regs, reg_names};

use super::{map_operands, CallDest, Cond, OperandSpec, Operands, Pred};
use crate::machinst::buffer::RelocKind;
use crate::machinst::operands::FixedRegs;
use crate::machinst::BlockIndex;

/// One control instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum ControlInst<R = VReg> {
    /// Entry pseudo-instruction: defines the register arguments. Operands: one late def per
    /// argument, fixed to its register.
    Args { args: FixedRegs<R> },
    /// `jmp target`. No operands.
    Jmp { target: BlockIndex },
    /// `jcc taken; jmp not_taken` after the test. Operands: `[cond…]`.
    CondBr {
        cond: Cond<R>,
        taken: BlockIndex,
        not_taken: BlockIndex,
    },
    /// A small `br_table`: `targets[0]` is the default, `targets[1 + k]` the target for
    /// index `k`. Emitted as a compare chain (`cmp idx, k; je target_k` …, `jmp default`).
    /// Operands: `[idx use]`.
    JmpTable {
        size: Size,
        idx: R,
        targets: Arc<[BlockIndex]>,
    },
    /// `dst = &table` for the [`ControlInst::JmpTableSeq`] with the same `targets`: the
    /// table (one 32-bit offset from the table's start per `targets[1..]`) goes to the
    /// constant pool. Operands: `[dst def]`.
    JmpTableBase { dst: R, targets: Arc<[BlockIndex]> },
    /// A `br_table` through a jump table: `cmp idx, n; jae default; movsxd r11, [base +
    /// idx*4]; add r11, base; jmp r11` (r11 is the scratch register). `idx` is zero-extended
    /// to 64 bits and compared at `size`; `targets` as in [`ControlInst::JmpTable`]. Opaque
    /// to the buffer's peephole: only the `jae` is a label use. Operands: `[idx use, base
    /// use]`.
    JmpTableSeq {
        size: Size,
        idx: R,
        base: R,
        targets: Arc<[BlockIndex]>,
    },
    /// Epilogue and `ret`. Operands: one use per returned value, fixed to its register.
    Ret { rets: FixedRegs<R> },
    /// `ud2`, recorded as a trap site with `code`. No operands.
    Ud2 { code: TrapCode },
    /// Trap with `code` when `cond` holds. Operands: `[cond…]`.
    TrapIf { cond: Cond<R>, code: TrapCode },
    /// `int3` (`debugtrap`): stops in an attached debugger; without one the process gets
    /// SIGTRAP. No operands.
    Debugtrap,
    /// `call dest` of a callee of convention `conv`. Operands: the target (indirect calls
    /// only), then `regs`: the first `num_uses` are argument uses, the rest result defs, each
    /// fixed to its register. Clobbers what `conv` lets a callee overwrite, except the results
    /// ([`super::Inst::clobbers`]). One list and a convention, not two lists and a register
    /// set, keep this family within the ALU family's 48 bytes.
    Call {
        dest: CallDest<R>,
        regs: FixedRegs<R>,
        num_uses: u32,
        conv: CallConv,
    },
}

impl ControlInst {
    map_operands! {
        pub(in crate::isa::x64) ControlInst, |m| {
            Args {} [args = m.fixed_list(args, Operands::fixed_def)],
            Jmp { target } [],
            CondBr { taken, not_taken } [cond = cond.map(m)],
            JmpTable { size, targets } [idx = m.reg_use(*idx)],
            JmpTableBase { targets } [dst = m.reg_def(*dst)],
            JmpTableSeq { size, targets } [idx = m.reg_use(*idx), base = m.reg_use(*base)],
            Ret {} [rets = m.fixed_list(rets, Operands::fixed_use)],
            Ud2 { code } [],
            TrapIf { code } [cond = cond.map(m)],
            Debugtrap {} [],
            Call { num_uses, conv } [
                dest = dest.map(m),
                regs = map_call_regs(m, regs, *num_uses)
            ],
        }
    }

    /// Whether the instruction ends its block.
    pub fn is_term(&self) -> bool {
        matches!(
            self,
            ControlInst::Jmp { .. }
                | ControlInst::CondBr { .. }
                | ControlInst::JmpTable { .. }
                | ControlInst::JmpTableSeq { .. }
                | ControlInst::Ret { .. }
                | ControlInst::Ud2 { .. }
        )
    }
}

impl ControlInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            ControlInst::Args { args } => format!("args {}", reg_names(args)),
            ControlInst::Jmp { target } => format!("jmp block{}", target.0),
            ControlInst::CondBr {
                cond,
                taken,
                not_taken,
            } => format!(
                "br {}, block{}, block{}",
                cond.pretty(),
                taken.0,
                not_taken.0
            ),
            ControlInst::JmpTable { idx, targets, .. } => {
                format!("br_table {idx}, [{}]", block_list(targets))
            }
            ControlInst::JmpTableBase { dst, targets } => {
                format!("{dst} = jump_table [{}]", block_list(&targets[1..]))
            }
            ControlInst::JmpTableSeq {
                size,
                idx,
                base,
                targets,
            } => format!(
                "br_table.{} {idx}, {base}, [{}]",
                size.bits(),
                block_list(targets)
            ),
            ControlInst::Ret { rets } => format!("ret {}", reg_names(rets)),
            ControlInst::Ud2 { code } => format!("ud2 {code}"),
            ControlInst::TrapIf { cond, code } => format!("trap_if {}, {code}", cond.pretty()),
            ControlInst::Debugtrap => "int3".into(),
            ControlInst::Call {
                dest,
                regs,
                num_uses,
                ..
            } => {
                let (uses, defs) = regs.split_at(*num_uses as usize);
                let callee = match dest {
                    CallDest::Direct(name) => name.to_string(),
                    CallDest::Indirect(target) => format!("*{target}"),
                };
                format!("{} = call {callee}({})", reg_names(defs), reg_names(uses))
            }
        }
    }
}

impl ControlInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        match self {
            ControlInst::Args { .. } => {}
            ControlInst::Jmp { target } => uncond_branch(buf, ctx, *target),
            ControlInst::CondBr {
                cond,
                taken,
                not_taken,
            } => {
                cond.emit_test(ctx.frame, buf);
                let label = ctx.block_labels[taken.index()];
                // A pair's first jump is a plain label use (the buffer never edits it); the
                // last `jcc` is the described branch, so inverting it (to `!d` towards
                // `not_taken`, falling into `taken`) keeps `c and d` / `c or d` exact.
                let cc = match cond.pred() {
                    Pred::One(c) => c,
                    Pred::And(c, d) => {
                        jcc_to(buf, c.invert(), ctx.block_labels[not_taken.index()]);
                        d
                    }
                    Pred::Or(c, d) => {
                        jcc_to(buf, c, label);
                        d
                    }
                };
                let start = buf.cur_offset();
                let fix = cc_ops::jcc_rel32(buf, cc, 0);
                buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
                let mut inverted = ArraySink::<6>::new();
                cc_ops::jcc_rel32(&mut inverted, cc.invert(), 0);
                buf.add_cond_branch(start, buf.cur_offset(), label, inverted.as_slice());
                uncond_branch(buf, ctx, *not_taken);
            }
            ControlInst::JmpTable { size, idx, targets } => {
                let idx = GprMem::Reg(gpr(*idx));
                for (k, t) in targets[1..].iter().enumerate() {
                    // The comparison is at the index's width; wrap the constant to it.
                    let imm = match size {
                        Size::S8 => i32::from(k as u8 as i8),
                        Size::S16 => i32::from(k as u16 as i16),
                        _ => k as i32,
                    };
                    enc::alu_rm_imm(buf, AluOp::Cmp, *size, &idx, imm);
                    let fix = cc_ops::jcc_rel32(buf, Cc::E, 0);
                    let label = ctx.block_labels[t.index()];
                    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
                }
                uncond_branch(buf, ctx, targets[0]);
            }
            ControlInst::JmpTableBase { dst, targets } => {
                emit_jump_table_base(gpr(*dst), targets, ctx, buf)
            }
            ControlInst::JmpTableSeq {
                size,
                idx,
                base,
                targets,
            } => {
                let (idx, base) = (gpr(*idx), gpr(*base));
                let n = i32::try_from(targets.len() - 1).expect("jump table length fits i32");
                // Unsigned: a huge or (as signed) negative index takes the default too.
                enc::alu_rm_imm(buf, AluOp::Cmp, *size, &GprMem::Reg(idx), n);
                jcc_to(buf, Cc::AE, ctx.block_labels[targets[0].index()]);
                let entry = GprMem::Mem(Amode::base_index(base, idx, Scale::Four, 0));
                moves::movsx(buf, ExtMode::LQ, Gpr::R11, &entry);
                enc::alu_rm_r(buf, AluOp::Add, Size::S64, &GprMem::Reg(Gpr::R11), base);
                cc_ops::jmp_rm(buf, &GprMem::Reg(Gpr::R11));
                // Not described as a branch: the buffer never edits or threads through this
                // sequence; its targets are reached through the table's own label uses.
            }
            ControlInst::Ret { .. } => emit_ret(ctx, buf),
            ControlInst::Ud2 { code } => trap(buf, *code),
            ControlInst::TrapIf { cond, code } => {
                cond.emit_test(ctx.frame, buf);
                match cond.pred() {
                    Pred::One(c) => trap_unless(buf, c.invert(), *code),
                    // `jcc` and `ud2` leave the flags alone: trap on either.
                    Pred::Or(c, d) => {
                        trap_unless(buf, c.invert(), *code);
                        trap_unless(buf, d.invert(), *code);
                    }
                    // `!c` jumps over the second check and its `ud2` (2 + 2 bytes).
                    Pred::And(c, d) => {
                        cc_ops::jcc_rel8(buf, c.invert(), 4);
                        trap_unless(buf, d.invert(), *code);
                    }
                }
            }
            ControlInst::Debugtrap => misc::int3(buf),
            ControlInst::Call { dest, .. } => match dest {
                CallDest::Direct(callee) => emit_direct_call(buf, callee),
                CallDest::Indirect(target) => emit_indirect_call(buf, *target),
            },
        }
    }
}

impl ControlInst {
    /// Encodes the instruction with the registers `m` hands out (one per operand, in
    /// operand order). `Args`, `Ret` and `Call` encode none of their list (see
    /// [`FixedRegs`]), only a call's target: no mapped copy is built for them, whose
    /// construction, name copy and drop cost more than their encoding.
    pub(in crate::isa::x64) fn emit_mapped<F: FnMut(OperandSpec) -> PReg>(
        &self,
        m: &mut Operands<PReg, F>,
        ctx: &mut Ctx<'_, '_>,
        buf: &mut Buf,
    ) {
        match self {
            ControlInst::Args { .. } => {}
            ControlInst::Ret { .. } => emit_ret(ctx, buf),
            // The target register, if any, is the call's first operand.
            ControlInst::Call { dest, .. } => match dest {
                CallDest::Direct(callee) => emit_direct_call(buf, callee),
                CallDest::Indirect(target) => emit_indirect_call(buf, m.reg_use(*target)),
            },
            other => other.map(m).emit(ctx, buf),
        }
    }
}

/// `call rel32` to `callee`, through a relocation.
fn emit_direct_call(buf: &mut Buf, callee: &kestrel_ir::FunctionName) {
    let fix = misc::call_rel32(buf, 0);
    buf.add_reloc(fix.at, RelocKind::CallPcRel4, callee.clone(), -4);
}

/// `call target`.
fn emit_indirect_call(buf: &mut Buf, target: PReg) {
    misc::call_rm(buf, &GprMem::Reg(gpr(target)));
}

/// The epilogue (when the function set up a frame) and `ret`.
fn emit_ret(ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
    let frame = ctx.frame;
    if !frame.setup {
        misc::ret(buf);
        return;
    }
    unwind::before_epilogue(buf);
    for s in &frame.saved {
        let m = Amode::base_disp(Gpr::RBP, s.offset);
        match s.reg.class() {
            RegClass::Int => {
                moves::mov_r_rm(buf, Size::S64, gpr(s.reg), &GprMem::Mem(m));
            }
            RegClass::Float => {
                sse_enc::sse_r_rm(buf, SseOp::Movdqu, xmm(s.reg), &XmmMem::Mem(m));
            }
        }
    }
    moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::RSP), Gpr::RBP);
    misc::pop_r(buf, Gpr::RBP);
    unwind::after_pop_rbp(buf);
    misc::ret(buf);
    unwind::after_ret(buf);
}

/// `lea dst, [table]`, with the jump table for `targets[1..]` put in the constant pool. Entry
/// `k` holds `target_k - table`: a `Rel32` use at `table + 4k` whose addend `4k + 4` cancels
/// the kind's "relative to the end of the field".
fn emit_jump_table_base(dst: Gpr, targets: &[BlockIndex], ctx: &Ctx<'_, '_>, buf: &mut Buf) {
    let entries = &targets[1..];
    let mut bytes = Vec::with_capacity(4 * entries.len());
    let mut uses = Vec::with_capacity(entries.len());
    for (k, t) in entries.iter().enumerate() {
        let at = 4 * k as u32;
        bytes.extend_from_slice(&(at + 4).to_le_bytes());
        uses.push((at, ctx.block_labels[t.index()], X64LabelUse::Rel32));
    }
    let table = buf.add_constant_with_uses(&bytes, 4, uses);
    let fix = misc::lea(buf, Size::S64, dst, &Amode::rip(0)).expect("a RIP-relative lea");
    buf.use_label_at_offset(fix.at, table, X64LabelUse::Rel32);
}
