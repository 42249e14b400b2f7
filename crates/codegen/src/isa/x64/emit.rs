//! Encoding glue: the frame, the allocator's edits, the prologue, and the helpers the
//! instruction families (`inst/`) encode with.
//!
//! # Contract
//!
//! Requires an allocation in which every operand is a register (see `inst/mod.rs`), and a
//! [`Frame`] computed from the same allocation. [`MachInst::emit`] maps the instruction's
//! operands to their allocated registers (the family's `map`) and lets its family encode it,
//! reading registers by field name. `r11` and `xmm15` are free inside any instruction (the
//! scratch-register contract in `abi.rs`, checked by the regalloc checker), which
//! multi-instruction sequences use. Branches are emitted naively (`jcc taken; jmp not_taken`)
//! and described to the buffer, which turns them into their final form; every other label
//! reference is an in-instruction `rel8` over a fixed sequence whose length is measured by
//! encoding it first. Trap sites are recorded at the faulting instruction's offset.
//!
//! Frame layout (the stack grows down; `rsp` is 16-byte aligned after the prologue). A leaf
//! that keeps nothing in its frame has no prologue at all (see [`Frame::setup`]).
//!
//! ```text
//! [rbp + 16 + 8*i]    incoming stack argument i
//! [rbp + 8]           return address
//! [rbp]               caller's rbp
//! [rbp - 8*(i+1)]     callee-saved register i (saved only when allocated)
//! ...                 padding to 16 bytes
//! [rsp + slot_off]    explicit stack slots
//! [rsp + ret_area_base] outgoing return area (calls of functions with many results)
//! [rsp + 8*i]         outgoing stack argument i of the next call
//! [rsp + spill_base + 8*i]  spill slot i (16*i in a function with vectors)
//! ```

use kestrel_ir::TrapCode;
use kestrel_regalloc::{Allocation, PReg, RegClass};

use super::asm::alu::{self, AluOp};
use super::asm::misc;
use super::asm::moves;
use super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::asm::sse::FloatSize;
use super::asm::sse::{self, SseOp};
use super::asm::{Amode, CodeSink, Gpr, GprMem, Size, Xmm, XmmMem};
use crate::machinst::buffer::{Label, LabelUse, MachBuffer};
use crate::machinst::frame::Frame;
use crate::machinst::{BlockIndex, EmitCtx};

/// x86-64 label references: a 32-bit displacement relative to the end of its field.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum X64LabelUse {
    /// `jmp`/`jcc rel32`, RIP-relative operands without a trailing immediate.
    Rel32,
}

impl LabelUse for X64LabelUse {
    const ALIGN: u32 = 1;
    const MAX_VENEER_SIZE: u32 = 0;

    fn max_pos_range(self) -> u32 {
        i32::MAX as u32
    }
    fn max_neg_range(self) -> u32 {
        1 << 31
    }
    fn patch_size(self) -> u32 {
        4
    }
    fn patch(self, bytes: &mut [u8], use_offset: u32, label_offset: u32) {
        let addend = i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let disp = i64::from(label_offset) - (i64::from(use_offset) + 4) + i64::from(addend);
        bytes[..4].copy_from_slice(&(disp as i32).to_le_bytes());
    }
    fn supports_veneer(self) -> bool {
        false
    }
    fn veneer_size(self) -> u32 {
        0
    }
    fn generate_veneer(self, _bytes: &mut [u8], _veneer_offset: u32) -> (u32, Self) {
        // `supports_veneer` is false and rel32 reaches the whole code, so the buffer never
        // asks for a veneer.
        panic!("x86-64 rel32 label uses never need a veneer")
    }
}

impl<U: LabelUse> CodeSink for MachBuffer<U> {
    fn put1(&mut self, byte: u8) {
        MachBuffer::put1(self, byte);
    }
    fn put4(&mut self, value: u32) {
        MachBuffer::put4(self, value);
    }
    fn current_offset(&self) -> u32 {
        self.cur_offset()
    }
}

pub(super) type Buf = MachBuffer<X64LabelUse>;
pub(super) type Ctx<'a, 'b> = EmitCtx<'a, Frame>;

/// An allocated integer register as the encoder's register.
pub(super) fn gpr(r: PReg) -> Gpr {
    debug_assert_eq!(r.class(), RegClass::Int);
    Gpr::new(r.hw_enc() as u8)
}

/// An allocated float register as the encoder's register.
pub(super) fn xmm(r: PReg) -> Xmm {
    debug_assert_eq!(r.class(), RegClass::Float);
    Xmm::new(r.hw_enc() as u8)
}

/// An edit's register location (edits between registers and spill slots).
pub(super) fn edit_reg(a: Allocation) -> PReg {
    a.as_reg().expect("a register location")
}

pub(super) fn bytes(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

/// `ud2` as a trap site with `code`.
pub(super) fn trap(buf: &mut Buf, code: TrapCode) {
    buf.add_trap(code);
    misc::ud2(buf);
}

/// The prologue's stack-limit check: traps with `stk_ovf` unless `rsp - below >= limit`,
/// computed without wrapping (a borrow in the subtraction traps too). Uses only `r11` and
/// `r10`, which hold no argument at entry.
pub(super) fn stack_check(buf: &mut Buf, steps: &[super::stack_limit::Step], below: u32) {
    super::stack_limit::emit_limit(buf, steps);
    let r10 = GprMem::Reg(Gpr::R10);
    moves::mov_rm_r(buf, Size::S64, &r10, Gpr::RSP);
    match i32::try_from(below) {
        Ok(imm) => {
            alu::alu_rm_imm(buf, AluOp::Sub, Size::S64, &r10, imm);
        }
        Err(_) => {
            // rsp - below = -(below - rsp): r10 = below, then r10 = rsp - r10 via neg/add
            // would lose the borrow; subtract in two halves that each fit an immediate.
            let half = (below / 2) as i32;
            alu::alu_rm_imm(buf, AluOp::Sub, Size::S64, &r10, half);
            trap_unless(buf, Cc::AE, TrapCode::STACK_OVERFLOW);
            alu::alu_rm_imm(buf, AluOp::Sub, Size::S64, &r10, (below - below / 2) as i32);
        }
    }
    trap_unless(buf, Cc::AE, TrapCode::STACK_OVERFLOW);
    alu::alu_r_rm(buf, AluOp::Cmp, Size::S64, Gpr::R10, &GprMem::Reg(Gpr::R11));
    trap_unless(buf, Cc::AE, TrapCode::STACK_OVERFLOW);
}

/// `jcc` over a `ud2` trap: traps with `code` unless `cc_skip` holds.
pub(super) fn trap_unless(buf: &mut Buf, cc_skip: Cc, code: TrapCode) {
    cc_ops::jcc_rel8(buf, cc_skip, 2);
    trap(buf, code);
}

pub(super) fn uncond_branch(buf: &mut Buf, ctx: &Ctx<'_, '_>, target: BlockIndex) {
    let label = ctx.block_labels[target.index()];
    let start = buf.cur_offset();
    let fix = cc_ops::jmp_rel32(buf, 0);
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
    buf.add_uncond_branch(start, buf.cur_offset(), label);
}

/// `jcc` to a label (local to one instruction's sequence).
pub(super) fn jcc_to(buf: &mut Buf, cc: Cc, label: Label) {
    let fix = cc_ops::jcc_rel32(buf, cc, 0);
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
}

/// `jmp` to a label (local to one instruction's sequence).
pub(super) fn jmp_to(buf: &mut Buf, label: Label) {
    let fix = cc_ops::jmp_rel32(buf, 0);
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
}

/// `op xmm, [constant]` with the constant (`bits` of `fsize`) in the pool.
pub(super) fn sse_const(buf: &mut Buf, op: SseOp, dst: Xmm, fsize: FloatSize, bits: u64) {
    let data = match fsize {
        FloatSize::F32 => (bits as u32).to_le_bytes().to_vec(),
        FloatSize::F64 => bits.to_le_bytes().to_vec(),
    };
    let label = buf.add_constant(&data, fsize.bytes());
    let fix = sse::sse_r_rm(buf, op, dst, &XmmMem::Mem(Amode::rip(0)))
        .expect("a RIP-relative operand has a fixup");
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
}
