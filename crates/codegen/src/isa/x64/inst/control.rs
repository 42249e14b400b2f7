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
use crate::machinst::frame::Frame;
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
    X64 {
        cond: Cond,
        table: BrTable,
        jump: "jmp",
        trap: "ud2",
        debug_trap: "int3",
        tail_target: super::super::abi::TAIL_TARGET,
    }
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

/// After a call whose callee popped `bytes` of stack arguments: `sub rsp, bytes`, which
/// puts the outgoing area back where the frame has it.
fn emit_callee_pops(buf: &mut Buf, bytes: u16) {
    enc::alu_rm_imm(
        buf,
        AluOp::Sub,
        Size::S64,
        &GprMem::Reg(Gpr::RSP),
        i32::from(bytes),
    );
}

/// `ret`, popping the incoming stack arguments of a `tail` function.
fn ret_popping(buf: &mut Buf, frame: &Frame) {
    match frame.incoming_pop {
        0 => misc::ret(buf),
        n => misc::ret_imm(
            buf,
            u16::try_from(n).expect("at most 64 KiB of stack arguments"),
        ),
    }
}

/// Reload the callee-saved registers from their slots below `rbp`.
fn restore_saved(buf: &mut Buf, frame: &Frame) {
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
}

/// A tail call: this function's epilogue, then `jmp` to `dest`.
///
/// With `N` = this function's incoming stack-argument bytes and `M` = `stack_bytes`, the
/// callee must find its return address at `rsp` and its arguments above it, ending where
/// this function's end (`rbp + 16 + N`). When `M = N = 0` that is the plain epilogue.
/// Otherwise the outgoing area holds, from `rsp`: 16 header bytes, then the `M` argument
/// bytes; the sequence writes the caller's `rbp` and the return address into the header
/// (through `r11`), restores the callee-saved registers, copies the `M + 16` bytes to
/// `[rbp + N - M, rbp + N + 16)` from the highest word down, sets `rsp = rbp + N - M`,
/// pops `rbp` and jumps. The copy is safe to run downward: the destination starts above
/// the source (the frame, `rbp - rsp`, holds at least the `M + 16` bytes of the area), and
/// a word is read before any lower destination word is written. Only `r11` and the target
/// (in [`super::super::abi::TAIL_TARGET`], which no restore or copy touches) are used.
fn emit_return_call(
    dest: &crate::machinst::shared_inst::CallDest<PReg>,
    stack_bytes: u32,
    ctx: &mut Ctx<'_, '_>,
    buf: &mut Buf,
) {
    use crate::machinst::abi::TAIL_CALL_HEADER;
    use crate::machinst::shared_inst::CallDest;
    let frame = ctx.frame;
    debug_assert!(frame.setup, "a function with a tail call sets up its frame");
    unwind::before_epilogue(buf);
    let incoming = frame.incoming_pop as i32;
    let rsp_at = |off: i32| GprMem::Mem(Amode::base_disp(Gpr::RSP, off));
    let rbp_at = |off: i32| GprMem::Mem(Amode::base_disp(Gpr::RBP, off));
    if stack_bytes == 0 && incoming == 0 {
        restore_saved(buf, frame);
        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::RSP), Gpr::RBP);
    } else {
        moves::mov_r_rm(buf, Size::S64, Gpr::R11, &rbp_at(0));
        moves::mov_rm_r(buf, Size::S64, &rsp_at(0), Gpr::R11);
        moves::mov_r_rm(buf, Size::S64, Gpr::R11, &rbp_at(8));
        moves::mov_rm_r(buf, Size::S64, &rsp_at(8), Gpr::R11);
        restore_saved(buf, frame);
        let moved = (stack_bytes + TAIL_CALL_HEADER) as i32;
        let base = incoming - stack_bytes as i32;
        for off in (0..moved).step_by(8).rev() {
            moves::mov_r_rm(buf, Size::S64, Gpr::R11, &rsp_at(off));
            moves::mov_rm_r(buf, Size::S64, &rbp_at(base + off), Gpr::R11);
        }
        misc::lea(buf, Size::S64, Gpr::RSP, &Amode::base_disp(Gpr::RBP, base));
    }
    misc::pop_r(buf, Gpr::RBP);
    unwind::after_pop_rbp(buf);
    match dest {
        CallDest::Direct(callee) => {
            let fix = cc_ops::jmp_rel32(buf, 0);
            buf.add_reloc(fix.at, RelocKind::CallPcRel4, (**callee).clone(), -4);
        }
        CallDest::Indirect(target) => {
            cc_ops::jmp_rm(buf, &GprMem::Reg(gpr(*target)));
        }
    }
    unwind::after_ret(buf);
}

/// The epilogue (when the function set up a frame) and `ret`.
fn emit_ret(ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
    let frame = ctx.frame;
    if !frame.setup {
        ret_popping(buf, frame);
        return;
    }
    unwind::before_epilogue(buf);
    restore_saved(buf, frame);
    moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::RSP), Gpr::RBP);
    misc::pop_r(buf, Gpr::RBP);
    unwind::after_pop_rbp(buf);
    ret_popping(buf, frame);
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
