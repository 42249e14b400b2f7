//! The [`MachInst`] implementation of the AArch64 instructions: operands, encoding of one
//! instruction, of one allocator edit and of the prologue, and islands, with the encoding helpers
//! of `emit.rs` and the frame of `machinst::frame`.
//!
//! Cost: as `emit.rs` states, O(1) per instruction and per edit.

use super::super::abi::scratch_fp;
use super::super::asm::branch;
use super::super::asm::mem::{ld_st, ld_st_fp, Amode, FpLdSt, IntLdSt};
use super::super::asm::pair::{ld_st_pair, pair_index, IntPair, PairAmode};
use super::super::asm::{FpMemSize, Gpr, GprSp, PcOffset, Size};
use super::super::emit::*;
use super::super::unwind;
use super::{AluInst, ControlInst, Inst, Operands};
use crate::machinst::frame::Frame;
use crate::machinst::{BlockIndex, MachInst, PRegSet, VReg};
use kestrel_regalloc::{Allocation, Edit, PReg, RegClass};

impl MachInst for Inst {
    type LabelUse = A64LabelUse;
    type Frame = Frame;

    crate::machinst::shared_inst::mach_inst_forwarding!();

    fn vector_call_clobbers() -> PRegSet {
        super::super::abi::vector_call_clobbers()
    }

    fn emit(&self, allocs: &[Allocation], ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let start = buf.cur_offset();
        let mut regs = allocs.iter();
        let mut m = Operands::new(|_| {
            let alloc = regs.next().expect("one allocation per operand");
            alloc.as_reg().expect("operands are allocated to registers")
        });
        let wide = ctx.frame.spill_slot_bytes == 16;
        match self {
            // A function with vectors moves all 128 bits of a float-class register.
            Inst::Alu(AluInst::Mov { dst, src }) if wide => {
                let (src, dst) = (m.reg_use(*src), m.reg_def(*dst));
                copy_reg_wide(buf, dst, src);
            }
            Inst::Alu(i) => i.map(&mut m).emit(buf),
            Inst::Float(i) => i.map(&mut m).emit(buf),
            Inst::Mem(i) => i.map(&mut m).emit(ctx, buf),
            Inst::Atomic(i) => i.map(&mut m).emit(buf),
            Inst::Control(i) => i.emit_mapped(&mut m, ctx, buf),
            Inst::Vec(i) => i.map(&mut m).emit(buf),
        }
        // The buffer may have removed branch bytes at the tail: never more than were added.
        debug_assert!(
            buf.cur_offset().saturating_sub(start) <= MAX_EMIT_BYTES,
            "{self:?} emitted more than MAX_EMIT_BYTES"
        );
    }

    fn emit_edit(edit: &Edit, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let frame = ctx.frame;
        let slot = |a| frame.spill_offset(a).map(i64::from);
        if edit.class == RegClass::Float && frame.spill_slot_bytes == 16 {
            // A function with vectors: 16-byte slots, all 128 bits moved (through v31
            // from slot to slot).
            let v31 = super::fp_preg(scratch_fp());
            match (slot(edit.from), slot(edit.to)) {
                (None, None) => copy_reg_wide(buf, edit_reg(edit.to), edit_reg(edit.from)),
                (None, Some(to)) => spill_access_q(buf, false, edit_reg(edit.from), to),
                (Some(from), None) => spill_access_q(buf, true, edit_reg(edit.to), from),
                (Some(from), Some(to)) => {
                    spill_access_q(buf, true, v31, from);
                    spill_access_q(buf, false, v31, to);
                }
            }
            return;
        }
        match (slot(edit.from), slot(edit.to)) {
            (None, None) => copy_reg(buf, edit_reg(edit.to), edit_reg(edit.from)),
            (None, Some(to)) => spill_access(buf, false, edit_reg(edit.from), to),
            (Some(from), None) => spill_access(buf, true, edit_reg(edit.to), from),
            (Some(from), Some(to)) => {
                // x16 is the reserved scratch register of the allocator's moves; the bits of
                // either class travel through it (x17 may carry a large offset).
                let x16 = gpr_preg_scratch();
                spill_access(buf, true, x16, from);
                spill_access(buf, false, x16, to);
            }
        }
    }

    fn emit_prologue(ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let frame = ctx.frame;
        if !frame.setup {
            debug_assert!(frame.size == 0 && frame.saved.is_empty());
            return;
        }
        let pre = PairAmode::PreIndex {
            rn: GprSp::SP,
            index: pair_index(-16, 8).expect("-16 fits"),
        };
        ld_st_pair(buf, IntPair::StpX, Gpr::FP.into(), Gpr::LR.into(), pre);
        unwind::after_save_fp_lr(buf);
        add_offset(buf, Gpr::FP.into(), GprSp::SP, 0);
        unwind::after_set_frame(buf);
        if let Some((steps, below)) = &frame.stack_check {
            super::super::stack_limit::emit_check(buf, steps, *below);
        }
        if let Some(interval) = frame.probe_interval {
            super::super::probestack::emit_probes(buf, frame.size, interval);
        }
        if frame.size > 0 {
            add_offset(buf, GprSp::SP, GprSp::SP, -i64::from(frame.size));
        }
        let fp: GprSp = Gpr::FP.into();
        for s in &frame.saved {
            let a = Amode::offset(fp, i64::from(s.offset), 8).expect("small offset");
            let dwarf = match s.reg.class() {
                RegClass::Int => {
                    ld_st(buf, IntLdSt::StrX, zr(s.reg), a);
                    unwind::dwarf_gpr(gpr(s.reg))
                }
                RegClass::Float => {
                    ld_st_fp(buf, FpLdSt::Str(FpMemSize::S64), fpr(s.reg), a);
                    unwind::dwarf_fp(fpr(s.reg))
                }
            };
            unwind::after_save(buf, dwarf, s.offset);
        }
    }

    fn emit_island_if_needed(ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        // The jump over the island and the next instruction must both fit before the
        // earliest deadline.
        let distance = MAX_EMIT_BYTES + 4;
        if !buf.island_needed(distance) {
            return;
        }
        let after = buf.get_label();
        use_label(buf, after, |b| branch::b(b, PcOffset::ZERO));
        buf.emit_island(distance, ctx.chaos);
        buf.bind_label(after, ctx.chaos);
    }

    fn alloc_name(alloc: Allocation) -> String {
        match alloc {
            Allocation::Reg(r) if r.class() == RegClass::Int => gpr(r).name(Size::S64).to_string(),
            Allocation::Reg(r) => format!("d{}", r.hw_enc()),
            Allocation::Stack(s) => format!("stack{}", s.0),
        }
    }
}

/// x16 as an allocator register (the integer scratch register of `abi.rs`).
fn gpr_preg_scratch() -> PReg {
    super::gpr_preg(Gpr::X16)
}
