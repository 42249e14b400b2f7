//! The x86-64 control family (`machinst::control`): its conditions, `br_table` forms and
//! mnemonics, and its encoding.

use kestrel_ir::TrapCode;
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
use super::super::X64;
use crate::machinst::control;
use crate::machinst::shared_inst::block_list;

use super::{map_operands, Cond, OperandSpec, Operands, Pred};
use crate::machinst::buffer::RelocKind;
use crate::machinst::BlockIndex;

/// The x86-64 control family (`machinst::control`): `jmp`, `jcc`, `ud2`, `int3`, `call`.
pub type ControlInst<R = VReg> = control::ControlInst<X64, R>;

/// x86-64's `br_table` forms; `targets` are the [`ControlInst::Table`]'s.
#[derive(Clone, Copy, Debug)]
pub enum BrTable<R = VReg> {
    /// A small table as a compare chain (`cmp idx, k; je target_k` …, `jmp default`).
    /// Operands: `[idx use]`.
    Chain { size: Size, idx: R },
    /// `dst = &table` for the [`BrTable::Seq`] with the same targets: the table (one 32-bit
    /// offset from the table's start per `targets[1..]`) goes to the constant pool.
    /// Operands: `[dst def]`.
    Base { dst: R },
    /// A dispatch through the table: `cmp idx, n; jae default; movsxd r11, [base + idx*4];
    /// add r11, base; jmp r11` (r11 is the scratch register). `idx` is zero-extended to 64
    /// bits and compared at `size`. Opaque to the buffer's peephole: only the `jae` is a
    /// label use. Operands: `[idx use, base use]`.
    Seq { size: Size, idx: R, base: R },
}

impl BrTable {
    map_operands! {
        pub(in crate::isa::x64) nested BrTable, |m| {
            Chain { size } [idx = m.reg_use(*idx)],
            Base {} [dst = m.reg_def(*dst)],
            Seq { size } [idx = m.reg_use(*idx), base = m.reg_use(*base)],
        }
    }
}

impl BrTable<String> {
    fn pretty(&self, targets: &[BlockIndex]) -> String {
        match self {
            BrTable::Chain { idx, .. } => format!("br_table {idx}, [{}]", block_list(targets)),
            BrTable::Base { dst } => {
                format!("{dst} = jump_table [{}]", block_list(&targets[1..]))
            }
            BrTable::Seq { size, idx, base } => format!(
                "br_table.{} {idx}, {base}, [{}]",
                size.bits(),
                block_list(targets)
            ),
        }
    }
}

impl BrTable {
    /// Whether the form ends its block (all but the table's address do).
    fn is_term(&self) -> bool {
        !matches!(self, BrTable::Base { .. })
    }
}

control::control_isa! {
    X64 { cond: Cond, table: BrTable, jump: "jmp", trap: "ud2", debug_trap: "int3" }
}

impl Cond<PReg> {
    /// `jcc taken; jmp not_taken` after the test (two `jcc`s for a pair of conditions).
    fn branch(&self, taken: BlockIndex, not_taken: BlockIndex, ctx: &Ctx<'_, '_>, buf: &mut Buf) {
        self.emit_test(ctx.frame, buf);
        let label = ctx.block_labels[taken.index()];
        // A pair's first jump is a plain label use (the buffer never edits it); the
        // last `jcc` is the described branch, so inverting it (to `!d` towards
        // `not_taken`, falling into `taken`) keeps `c and d` / `c or d` exact.
        let cc = match self.pred() {
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
        uncond_branch(buf, ctx, not_taken);
    }
}

/// The test, then a `ud2` (a trap site with `code`) reached when the condition holds.
fn emit_trap_if(cond: &Cond<PReg>, code: TrapCode, ctx: &Ctx<'_, '_>, buf: &mut Buf) {
    cond.emit_test(ctx.frame, buf);
    match cond.pred() {
        Pred::One(c) => trap_unless(buf, c.invert(), code),
        // `jcc` and `ud2` leave the flags alone: trap on either.
        Pred::Or(c, d) => {
            trap_unless(buf, c.invert(), code);
            trap_unless(buf, d.invert(), code);
        }
        // `!c` jumps over the second check and its `ud2` (2 + 2 bytes).
        Pred::And(c, d) => {
            cc_ops::jcc_rel8(buf, c.invert(), 4);
            trap_unless(buf, d.invert(), code);
        }
    }
}

/// `int3`.
fn emit_debug_trap(buf: &mut Buf) {
    misc::int3(buf);
}

/// The `br_table` form `table` of `targets`.
fn emit_table(table: &BrTable<PReg>, targets: &[BlockIndex], ctx: &Ctx<'_, '_>, buf: &mut Buf) {
    match *table {
        BrTable::Chain { size, idx } => {
            let idx = GprMem::Reg(gpr(idx));
            for (k, t) in targets[1..].iter().enumerate() {
                // The comparison is at the index's width; wrap the constant to it.
                let imm = match size {
                    Size::S8 => i32::from(k as u8 as i8),
                    Size::S16 => i32::from(k as u16 as i16),
                    _ => k as i32,
                };
                enc::alu_rm_imm(buf, AluOp::Cmp, size, &idx, imm);
                let fix = cc_ops::jcc_rel32(buf, Cc::E, 0);
                let label = ctx.block_labels[t.index()];
                buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
            }
            uncond_branch(buf, ctx, targets[0]);
        }
        BrTable::Base { dst } => emit_jump_table_base(gpr(dst), targets, ctx, buf),
        BrTable::Seq { size, idx, base } => {
            let (idx, base) = (gpr(idx), gpr(base));
            let n = i32::try_from(targets.len() - 1).expect("jump table length fits i32");
            // Unsigned: a huge or (as signed) negative index takes the default too.
            enc::alu_rm_imm(buf, AluOp::Cmp, size, &GprMem::Reg(idx), n);
            jcc_to(buf, Cc::AE, ctx.block_labels[targets[0].index()]);
            let entry = GprMem::Mem(Amode::base_index(base, idx, Scale::Four, 0));
            moves::movsx(buf, ExtMode::LQ, Gpr::R11, &entry);
            enc::alu_rm_r(buf, AluOp::Add, Size::S64, &GprMem::Reg(Gpr::R11), base);
            cc_ops::jmp_rm(buf, &GprMem::Reg(Gpr::R11));
            // Not described as a branch: the buffer never edits or threads through this
            // sequence; its targets are reached through the table's own label uses.
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
