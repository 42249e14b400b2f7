//! The AArch64 control family (`machinst::control`): its conditions, `br_table` form and
//! mnemonics, and its encoding.

use kestrel_ir::TrapCode;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::add_sub::{add_sub_reg, adds_subs_imm, adds_subs_reg, AddSub, AddSubImm};
use super::super::asm::branch::{adr, b_cond, bl, blr, br, cbnz, cbz};
use super::super::asm::cond::Cond as Cc;
use super::super::asm::mem::{ld_st, Amode, IndexExtend, IntLdSt};
use super::super::asm::{Gpr, GprZr, PcOffset, Size};
use super::super::emit::{
    emit_callee_pops, emit_ret, emit_return_call, gpr, mov_imm, trap, uncond_branch, use_label,
    words, zr, A64LabelUse, Buf, Ctx,
};
use super::super::Aarch64;
use crate::machinst::control;
use crate::machinst::shared_inst::block_list;

use super::{Cond, OperandSpec, Operands, Pred};
use crate::machinst::buffer::{Label, RelocKind};
use crate::machinst::BlockIndex;

/// The AArch64 control family (`machinst::control`): `b`, `b.cond`, `cbz`, `udf`, `brk`,
/// `bl`.
pub type ControlInst<R = VReg> = control::ControlInst<Aarch64, R>;

/// AArch64's `br_table` form, a dispatch through a jump table (`targets` are the
/// [`ControlInst::Table`]'s): `cmp idx, n; b.hs default; adr x16, table; ldrsw x17, [x16,
/// idx, lsl #2]; add x16, x16, x17; br x16`, the table (32-bit offsets from its start) in
/// the constant pool. `idx` is zero-extended to `size` (a `w` index is read `uxtw`). Opaque
/// to the buffer's peephole: only the `b.hs` and the `adr` are label uses. Operands: `[idx
/// use]`.
#[derive(Clone, Copy, Debug)]
pub struct BrTable<R = VReg> {
    pub size: Size,
    pub idx: R,
}

impl BrTable {
    fn map<S, F: FnMut(OperandSpec) -> S>(&self, m: &mut Operands<S, F>) -> BrTable<S> {
        BrTable {
            size: self.size,
            idx: m.reg_use(self.idx),
        }
    }

    /// The one form ends its block.
    fn is_term(&self) -> bool {
        true
    }
}

impl BrTable<String> {
    fn pretty(&self, targets: &[BlockIndex]) -> String {
        let BrTable { size, idx } = self;
        format!("br_table.{} {idx}, [{}]", size.bits(), block_list(targets))
    }
}

control::control_isa! {
    Aarch64 {
        cond: Cond,
        table: BrTable,
        jump: "b",
        trap: "udf",
        debug_trap: "brk #0",
        tail_target: super::super::abi::TAIL_TARGET,
    }
}

/// `b.cc` (or `cbz`/`cbnz` of a `Zero` test) to `label`, when `jump_if` holds, plus the
/// bytes of the same branch with the opposite condition. Returns the branch's start.
fn branch_if(
    buf: &mut Buf,
    cond: &Cond<PReg>,
    cc: Cc,
    jump_if: bool,
    label: Label,
) -> (u32, Vec<u8>) {
    let start = buf.cur_offset();
    let zero = PcOffset::ZERO;
    let (fix, inverted) = match *cond {
        Cond::Zero { size, is_zero, a } => {
            let branch_if_zero = is_zero == jump_if;
            let a = zr(a);
            if branch_if_zero {
                (
                    cbz(buf, size, a, zero),
                    words(|w| {
                        cbnz(w, size, a, zero);
                    }),
                )
            } else {
                (
                    cbnz(buf, size, a, zero),
                    words(|w| {
                        cbz(w, size, a, zero);
                    }),
                )
            }
        }
        _ => {
            let cc = if jump_if { cc } else { cc.invert() };
            (
                b_cond(buf, cc, zero),
                words(|w| {
                    b_cond(w, cc.invert(), zero);
                }),
            )
        }
    };
    buf.use_label_at_offset(fix.at, label, A64LabelUse::of(fix.kind));
    (start, inverted)
}

impl Cond<PReg> {
    /// `b.cond taken; b not_taken` after the test (`cbz`/`cbnz` for a `Zero` test).
    fn branch(&self, taken: BlockIndex, not_taken: BlockIndex, ctx: &Ctx<'_, '_>, buf: &mut Buf) {
        let label = ctx.block_labels[taken.index()];
        if !matches!(self, Cond::Zero { .. }) {
            self.emit_flags(buf);
        }
        // A pair's first branch is a plain label use (the buffer never edits it);
        // the last is the described one, so inverting it (to `!d` towards
        // `not_taken`, falling into `taken`) keeps `c or d` exact.
        let cc = match self.pred() {
            Pred::One(c) => c,
            Pred::Or(c, d) => {
                use_label(buf, label, |b| b_cond(b, c, PcOffset::ZERO));
                d
            }
        };
        let (start, inverted) = branch_if(buf, self, cc, true, label);
        buf.add_cond_branch(start, buf.cur_offset(), label, &inverted);
        uncond_branch(buf, ctx, not_taken);
    }
}

/// The test, then a `udf` (a trap site with `code`) reached when the condition holds.
fn emit_trap_if(cond: &Cond<PReg>, code: TrapCode, _: &Ctx<'_, '_>, buf: &mut Buf) {
    if !matches!(cond, Cond::Zero { .. }) {
        cond.emit_flags(buf);
    }
    // Branch over the `udf` unless the condition holds (each condition of a pair
    // in turn: a branch and a `udf` leave the flags alone).
    let skip = PcOffset::new(8).expect("8 fits");
    let mut trap_if = |cc: Cc| {
        match *cond {
            Cond::Zero { size, is_zero, a } if is_zero => {
                cbnz(buf, size, zr(a), skip);
            }
            Cond::Zero { size, a, .. } => {
                cbz(buf, size, zr(a), skip);
            }
            _ => {
                b_cond(buf, cc.invert(), skip);
            }
        }
        trap(buf, code);
    };
    match cond.pred() {
        Pred::One(c) => trap_if(c),
        Pred::Or(c, d) => {
            trap_if(c);
            trap_if(d);
        }
    }
}

/// The jump-table dispatch of [`BrTable`] to `targets`.
fn emit_table(table: &BrTable<PReg>, targets: &[BlockIndex], ctx: &Ctx<'_, '_>, buf: &mut Buf) {
    emit_jump_table(table.size, gpr(table.idx), targets, ctx, buf);
}

/// `brk #0`.
fn emit_debug_trap(buf: &mut Buf) {
    super::super::asm::misc::brk(buf, 0);
}

/// `blr target`.
fn emit_indirect_call(buf: &mut Buf, target: PReg) {
    blr(buf, gpr(target));
}

/// `bl` to `callee`, through a relocation.
fn emit_direct_call(buf: &mut Buf, callee: &kestrel_ir::FunctionName) {
    let fix = bl(buf, PcOffset::ZERO);
    buf.add_reloc(fix.at, RelocKind::Arm64Call26, callee.clone(), 0);
}

/// The jump-table dispatch of [`BrTable`], with the table for `targets[1..]`
/// put in the constant pool: entry `k` holds `target_k - table`, a `PcRel32` use at
/// `table + 4k` whose addend `4k` cancels the use's own offset.
fn emit_jump_table(size: Size, idx: Gpr, targets: &[BlockIndex], ctx: &Ctx<'_, '_>, buf: &mut Buf) {
    let entries = &targets[1..];
    let n = entries.len() as u64;
    match AddSubImm::new(n) {
        Some(k) => adds_subs_imm(buf, AddSub::Sub, size, GprZr::ZR, idx.into(), k),
        None => {
            mov_imm(buf, Size::S64, Gpr::X17, n);
            adds_subs_reg(
                buf,
                AddSub::Sub,
                size,
                GprZr::ZR,
                idx.into(),
                Gpr::X17.into(),
            );
        }
    }
    // Unsigned: an index of n or more takes the default.
    let default = ctx.block_labels[targets[0].index()];
    use_label(buf, default, |b| b_cond(b, Cc::Hs, PcOffset::ZERO));
    let mut bytes = Vec::with_capacity(4 * entries.len());
    let mut uses = Vec::with_capacity(entries.len());
    for (k, t) in entries.iter().enumerate() {
        let at = 4 * k as u32;
        bytes.extend_from_slice(&at.to_le_bytes());
        uses.push((at, ctx.block_labels[t.index()], A64LabelUse::PcRel32));
    }
    let table = buf.add_constant_with_uses(&bytes, 4, uses);
    let (x16, x17) = (Gpr::X16, Gpr::X17);
    use_label(buf, table, |b| adr(b, x16.into(), PcOffset::ZERO));
    let extend = match size {
        Size::S32 => IndexExtend::Uxtw,
        Size::S64 => IndexExtend::Lsl,
    };
    let entry = Amode::RegOffset {
        rn: x16.into(),
        rm: idx.into(),
        extend,
        scaled: true,
    };
    ld_st(buf, IntLdSt::Ldrsw, x17.into(), entry);
    add_sub_reg(
        buf,
        AddSub::Add,
        Size::S64,
        x16.into(),
        x16.into(),
        x17.into(),
    );
    br(buf, x16);
    // Not described as a branch: the buffer never edits or threads through this sequence;
    // its targets are reached through the table's own label uses.
}
