//! The [`MachInst`] implementation of the x86-64 instructions: operands, encoding of one
//! instruction, of one allocator edit and of the prologue, with the encoding helpers
//! of `emit.rs` and the frame of `machinst::frame`.
//!
//! Cost: as `emit.rs` states, O(1) per instruction and per edit.

use super::super::asm::alu::{self, AluOp};
use super::super::asm::misc;
use super::super::asm::moves;
use super::super::asm::sse::{self, SseOp, SseStore};
use super::super::asm::{Amode, Gpr, GprMem, Size, Xmm, XmmMem};
use super::super::emit::*;
use super::super::unwind;
use super::{AluInst, ControlInst, Inst, Operands};
use crate::machinst::frame::Frame;
use crate::machinst::{BlockIndex, MachInst, PRegSet, VReg};
use kestrel_regalloc::{Allocation, Edit, RegClass};

impl MachInst for Inst {
    type LabelUse = X64LabelUse;
    type Frame = Frame;

    crate::machinst::shared_inst::mach_inst_forwarding!();

    fn emit(&self, allocs: &[Allocation], ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let mut regs = allocs.iter();
        let mut m = Operands::new(|_| {
            let alloc = regs.next().expect("one allocation per operand");
            alloc.as_reg().expect("operands are allocated to registers")
        });
        match self {
            Inst::Alu(i) => i.map(&mut m).emit(ctx, buf),
            Inst::Bits(i) => i.map(&mut m).emit(buf),
            Inst::Sse(i) => i.map(&mut m).emit(ctx, buf),
            Inst::Vec(i) => i.map(&mut m).emit(buf),
            Inst::Mem(i) => i.map(&mut m).emit(ctx, buf),
            Inst::Atomic(i) => i.map(&mut m).emit(ctx, buf),
            Inst::Control(i) => i.emit_mapped(&mut m, ctx, buf),
        }
    }

    fn emit_edit(edit: &Edit, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let frame = ctx.frame;
        let slot_amode = |a| {
            frame
                .spill_offset(a)
                .map(|off| Amode::base_disp(Gpr::RSP, off))
        };
        match edit.class {
            RegClass::Int => match (slot_amode(edit.from), slot_amode(edit.to)) {
                (None, None) => {
                    let (from, to) = (gpr(edit_reg(edit.from)), gpr(edit_reg(edit.to)));
                    if from != to {
                        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(to), from);
                    }
                }
                (None, Some(to)) => {
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Mem(to), gpr(edit_reg(edit.from)));
                }
                (Some(from), None) => {
                    moves::mov_r_rm(buf, Size::S64, gpr(edit_reg(edit.to)), &GprMem::Mem(from));
                }
                (Some(from), Some(to)) => {
                    // r11 is the reserved integer scratch register (never allocated).
                    moves::mov_r_rm(buf, Size::S64, Gpr::R11, &GprMem::Mem(from));
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Mem(to), Gpr::R11);
                }
            },
            // A function with vectors has 16-byte spill slots and moves all 128 bits.
            RegClass::Float if frame.spill_slot_bytes == 16 => {
                match (slot_amode(edit.from), slot_amode(edit.to)) {
                    (None, None) => {
                        let (from, to) = (xmm(edit_reg(edit.from)), xmm(edit_reg(edit.to)));
                        if from != to {
                            sse::sse_r_rm(buf, SseOp::Movaps, to, &XmmMem::Reg(from));
                        }
                    }
                    (None, Some(to)) => {
                        sse::sse_store(buf, SseStore::Movdqu, &to, xmm(edit_reg(edit.from)));
                    }
                    (Some(from), None) => {
                        let to = xmm(edit_reg(edit.to));
                        sse::sse_r_rm(buf, SseOp::Movdqu, to, &XmmMem::Mem(from));
                    }
                    (Some(from), Some(to)) => {
                        let s = Xmm::new(15);
                        sse::sse_r_rm(buf, SseOp::Movdqu, s, &XmmMem::Mem(from));
                        sse::sse_store(buf, SseStore::Movdqu, &to, s);
                    }
                }
            }
            RegClass::Float => match (slot_amode(edit.from), slot_amode(edit.to)) {
                (None, None) => {
                    let (from, to) = (xmm(edit_reg(edit.from)), xmm(edit_reg(edit.to)));
                    if from != to {
                        sse::sse_r_rm(buf, SseOp::Movaps, to, &XmmMem::Reg(from));
                    }
                }
                (None, Some(to)) => {
                    sse::sse_store(buf, SseStore::Movsd, &to, xmm(edit_reg(edit.from)));
                }
                (Some(from), None) => {
                    sse::sse_r_rm(
                        buf,
                        SseOp::Movsd,
                        xmm(edit_reg(edit.to)),
                        &XmmMem::Mem(from),
                    );
                }
                (Some(from), Some(to)) => {
                    // xmm15 is the reserved float scratch register.
                    let s = Xmm::new(15);
                    sse::sse_r_rm(buf, SseOp::Movsd, s, &XmmMem::Mem(from));
                    sse::sse_store(buf, SseStore::Movsd, &to, s);
                }
            },
        }
    }

    fn emit_prologue(ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let frame = ctx.frame;
        if !frame.setup {
            debug_assert!(frame.size == 0 && frame.saved.is_empty());
            return;
        }
        misc::push_r(buf, Gpr::RBP);
        unwind::after_push_rbp(buf);
        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::RBP), Gpr::RSP);
        unwind::after_set_frame(buf);
        if let Some((steps, below)) = &frame.stack_check {
            stack_check(buf, steps, *below);
        }
        if let Some(interval) = frame.probe_interval {
            super::super::probestack::emit_probes(buf, frame.size, interval);
        }
        if frame.size > 0 {
            alu::alu_rm_imm(
                buf,
                AluOp::Sub,
                Size::S64,
                &GprMem::Reg(Gpr::RSP),
                frame.size as i32,
            );
        }
        for s in &frame.saved {
            let m = Amode::base_disp(Gpr::RBP, s.offset);
            let dwarf = match s.reg.class() {
                RegClass::Int => {
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Mem(m), gpr(s.reg));
                    unwind::dwarf_gpr(gpr(s.reg))
                }
                RegClass::Float => {
                    sse::sse_store(buf, SseStore::Movdqu, &m, xmm(s.reg));
                    unwind::dwarf_xmm(xmm(s.reg))
                }
            };
            unwind::after_save(buf, dwarf, s.offset);
        }
    }

    fn alloc_name(alloc: Allocation) -> String {
        match alloc {
            Allocation::Reg(r) if r.class() == RegClass::Int => {
                Gpr::new(r.hw_enc() as u8).name(Size::S64).to_string()
            }
            Allocation::Reg(r) => Xmm::new(r.hw_enc() as u8).name().to_string(),
            Allocation::Stack(s) => format!("stack{}", s.0),
        }
    }
}
