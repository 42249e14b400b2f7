//! Encoding of [`Inst`] into the `MachBuffer`, with the frame and the allocator's edits.
//!
//! # Contract
//!
//! Requires an allocation in which every operand is a register (see `inst.rs`), and a
//! [`Frame`] computed from the same allocation. Each instruction reads its registers from
//! `allocs` by operand position; `r11` is free inside any instruction (the scratch-register
//! contract in `abi.rs`), which multi-instruction sequences use. Branches are emitted naively (`jcc taken; jmp not_taken`)
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
//! [rsp + spill_base + 8*i]  spill slot i
//! ```

use kestrel_ir::{AtomicRmwOp, TrapCode};
use kestrel_regalloc::{Allocation, Edit, RegClass};

use super::asm::alu::{self, AluOp, UnaryOp};
use super::asm::bits;
use super::asm::misc;
use super::asm::moves::{self, ExtMode};
use super::asm::mul_div::{self, MulDivOp};
use super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::asm::shift;
use super::asm::sse::FloatSize;
use super::asm::sse::{self, SseOp, SseStore};
use super::asm::{Amode, CodeSink, Gpr, GprMem, Scale, Size, Xmm, XmmMem};
use super::inst::{CallDest, Cond, FrameValue, Inst, LoadKind, Mem, Pred, RegImm, StoreKind};
use super::unwind;
use crate::chaos::Chaos;
use crate::machinst::buffer::{Label, LabelUse, MachBuffer, RelocKind};
use crate::machinst::{BlockIndex, EmitCtx, MachInst, PRegSet, VReg};

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

/// The frame of one function (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Whether the prologue pushes `rbp` and sets it up as the frame pointer. False only when
    /// nothing addresses the frame: no frame bytes, no saved registers, no calls, no incoming
    /// stack arguments; then the body runs on the caller's `rsp` and `ret` is the epilogue.
    pub setup: bool,
    /// Bytes the prologue subtracts from `rsp` after pushing `rbp`.
    pub size: u32,
    /// Callee-saved registers to save, at `[rbp - 8*(i+1)]`.
    pub saved: Vec<Gpr>,
    /// Callee-saved XMM registers (Windows x64), at `[rbp - xmm_save_base - 16*(i+1)]`.
    pub saved_xmm: Vec<Xmm>,
    pub xmm_save_base: i32,
    /// Offset of spill slot 0 from `rsp`.
    pub spill_base: i32,
    /// Offset of each explicit stack slot from `rsp`.
    pub slot_offsets: Vec<i32>,
    /// Offset of the outgoing return area from `rsp` (above the outgoing arguments).
    pub ret_area_base: i32,
    /// `stack_limit`: how to compute the limit, and the bytes the function takes below
    /// `rbp` (see `stack_limit.rs`); checked in the prologue.
    pub stack_check: Option<(Vec<super::stack_limit::Step>, u32)>,
}

impl Frame {
    /// Where callee-saved XMM register `i` is kept.
    fn xmm_save_slot(&self, i: usize) -> Amode {
        Amode::base_disp(Gpr::RBP, -self.xmm_save_base - 16 * (i as i32 + 1))
    }

    /// The address of `mem`; a register base is `allocs[0]`.
    fn amode(&self, mem: &Mem, allocs: &[Allocation]) -> Amode {
        match *mem {
            Mem::Reg { disp, .. } => Amode::base_disp(gpr(allocs[0]), disp),
            Mem::RegIndex { shift, disp, .. } => Amode::base_index(
                gpr(allocs[0]),
                gpr(allocs[1]),
                Scale::ALL[usize::from(shift)],
                disp,
            ),
            Mem::Slot { slot, disp } => {
                Amode::base_disp(Gpr::RSP, self.slot_offsets[slot as usize] + disp)
            }
            Mem::RetArea { disp } => Amode::base_disp(Gpr::RSP, self.ret_area_base + disp),
            Mem::IncomingArg { disp } => Amode::base_disp(Gpr::RBP, 16 + disp),
            Mem::OutgoingArg { disp } => Amode::base_disp(Gpr::RSP, disp),
        }
    }

    fn slot_amode(&self, alloc: Allocation) -> Option<Amode> {
        match alloc {
            Allocation::Stack(s) => {
                Some(Amode::base_disp(Gpr::RSP, self.spill_base + 8 * s.0 as i32))
            }
            Allocation::Reg(_) => None,
        }
    }
}

type Buf = MachBuffer<X64LabelUse>;
type Ctx<'a, 'b> = EmitCtx<'a, Frame>;

fn gpr(a: Allocation) -> Gpr {
    let r = a.as_reg().expect("operands are allocated to registers");
    debug_assert_eq!(r.class(), RegClass::Int);
    Gpr::new(r.hw_enc() as u8)
}

fn xmm(a: Allocation) -> Xmm {
    let r = a.as_reg().expect("operands are allocated to registers");
    debug_assert_eq!(r.class(), RegClass::Float);
    Xmm::new(r.hw_enc() as u8)
}

/// Emit the flag-setting part of `cond` (its operands start at `allocs[0]`).
fn emit_test(cond: &Cond, allocs: &[Allocation], frame: &Frame, buf: &mut Buf) {
    match *cond {
        Cond::Cmp { size, b, .. } => {
            let a = GprMem::Reg(gpr(allocs[0]));
            match b {
                RegImm::Reg(_) => alu::alu_rm_r(buf, AluOp::Cmp, size, &a, gpr(allocs[1])),
                RegImm::Imm(k) => alu::alu_rm_imm(buf, AluOp::Cmp, size, &a, k),
            };
        }
        Cond::Test { size, .. } => {
            let a = gpr(allocs[0]);
            alu::test_rm_r(buf, size, &GprMem::Reg(a), a);
        }
        Cond::CmpMem {
            size,
            ref mem,
            trap,
            ..
        } => {
            let m = GprMem::Mem(frame.amode(mem, &allocs[1..]));
            // The access is the compare's: a fault here is the merged load's trap.
            if let Some(code) = trap {
                buf.add_trap(code);
            }
            alu::alu_r_rm(buf, AluOp::Cmp, size, gpr(allocs[0]), &m);
        }
        Cond::Fcmp { size, .. } => {
            let op = match size {
                FloatSize::F32 => SseOp::Ucomiss,
                FloatSize::F64 => SseOp::Ucomisd,
            };
            sse::sse_r_rm(buf, op, xmm(allocs[0]), &XmmMem::Reg(xmm(allocs[1])));
        }
        Cond::Cmp128 { .. } => {
            // r11 is free inside an instruction (only edits use it, between them).
            let r11 = GprMem::Reg(Gpr::R11);
            moves::mov_rm_r(buf, Size::S64, &r11, gpr(allocs[1]));
            let a_lo = GprMem::Reg(gpr(allocs[0]));
            alu::alu_rm_r(buf, AluOp::Cmp, Size::S64, &a_lo, gpr(allocs[2]));
            alu::alu_rm_r(buf, AluOp::Sbb, Size::S64, &r11, gpr(allocs[3]));
        }
    }
}

fn bytes(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

/// `ud2` as a trap site with `code`.
fn trap(buf: &mut Buf, code: TrapCode) {
    buf.add_trap(code);
    misc::ud2(buf);
}

/// The prologue's stack-limit check: traps with `stk_ovf` unless `rsp - below >= limit`,
/// computed without wrapping (a borrow in the subtraction traps too). Uses only `r11` and
/// `r10`, which hold no argument at entry.
fn stack_check(buf: &mut Buf, steps: &[super::stack_limit::Step], below: u32) {
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
fn trap_unless(buf: &mut Buf, cc_skip: Cc, code: TrapCode) {
    cc_ops::jcc_rel8(buf, cc_skip, 2);
    trap(buf, code);
}

fn uncond_branch(buf: &mut Buf, ctx: &Ctx<'_, '_>, target: BlockIndex) {
    let label = ctx.block_labels[target.index()];
    let start = buf.cur_offset();
    let fix = cc_ops::jmp_rel32(buf, 0);
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
    buf.add_uncond_branch(start, buf.cur_offset(), label);
}

fn emit_div(inst: &Inst, allocs: &[Allocation], buf: &mut Buf) {
    let Inst::Div {
        size,
        narrow,
        signed,
        rem,
        ..
    } = *inst
    else {
        unreachable!("emit_div on another instruction")
    };
    let d = gpr(allocs[1]);
    let dm = GprMem::Reg(d);
    debug_assert_eq!(gpr(allocs[0]), Gpr::RAX);
    alu::test_rm_r(buf, size, &dm, d);
    trap_unless(buf, Cc::NE, TrapCode::INTEGER_DIVISION_BY_ZERO);
    let rdx_to_rax = bytes(|b| {
        moves::mov_rm_r(b, Size::S64, &GprMem::Reg(Gpr::RAX), Gpr::RDX);
    });
    if !signed {
        alu::alu_rm_r(buf, AluOp::Xor, Size::S32, &GprMem::Reg(Gpr::RDX), Gpr::RDX);
        mul_div::mul_div_rm(buf, MulDivOp::Div, size, &dm);
        if rem {
            buf.put_data(&rdx_to_rax);
        }
        return;
    }
    let mut div = bytes(|b| {
        mul_div::sign_extend_rdx(b, size);
        mul_div::mul_div_rm(b, MulDivOp::Idiv, size, &dm);
    });
    alu::alu_rm_imm(buf, AluOp::Cmp, size, &dm, -1);
    if rem {
        // x % -1 == 0 for every x (and idiv would fault on MIN % -1).
        div.extend_from_slice(&rdx_to_rax);
        let zero = bytes(|b| {
            alu::alu_rm_r(b, AluOp::Xor, Size::S32, &GprMem::Reg(Gpr::RAX), Gpr::RAX);
        });
        cc_ops::jcc_rel8(buf, Cc::NE, (zero.len() + 2) as i8);
        buf.put_data(&zero);
        cc_ops::jmp_rel8(buf, div.len() as i8);
        buf.put_data(&div);
    } else {
        // x / -1 == -x, which overflows exactly when x is the narrow type's MIN: `neg` at that
        // width sets OF then.
        let neg = bytes(|b| {
            alu::unary_rm(b, UnaryOp::Neg, narrow, &GprMem::Reg(Gpr::RAX));
        });
        cc_ops::jcc_rel8(buf, Cc::NE, (neg.len() + 2 + 2) as i8);
        buf.put_data(&neg);
        cc_ops::jcc_rel8(buf, Cc::NO, (2 + div.len()) as i8);
        trap(buf, TrapCode::INTEGER_OVERFLOW);
        buf.put_data(&div);
    }
}

/// `fmin`/`fmax` (operands `[a, b, dst]`, `dst` = `a`): unordered gives a NaN (`a + b`),
/// equal values combine sign bits (`or` for min so `-0` wins, `and` for max so `+0` wins),
/// anything else is `minss`/`maxss`.
fn emit_fminmax(size: FloatSize, max: bool, allocs: &[Allocation], buf: &mut Buf) {
    let (dst, b) = (xmm(allocs[0]), XmmMem::Reg(xmm(allocs[1])));
    let f32 = size == FloatSize::F32;
    let pick = |s, d| if f32 { s } else { d };
    let eq_op = if max {
        pick(SseOp::Andps, SseOp::Andpd)
    } else {
        pick(SseOp::Orps, SseOp::Orpd)
    };
    let mm_op = if max {
        pick(SseOp::Maxss, SseOp::Maxsd)
    } else {
        pick(SseOp::Minss, SseOp::Minsd)
    };
    let eq = bytes(|s| {
        sse::sse_r_rm(s, eq_op, dst, &b);
    });
    let nan = bytes(|s| {
        sse::sse_r_rm(s, pick(SseOp::Addss, SseOp::Addsd), dst, &b);
    });
    let mm = bytes(|s| {
        sse::sse_r_rm(s, mm_op, dst, &b);
    });
    sse::sse_r_rm(buf, pick(SseOp::Ucomiss, SseOp::Ucomisd), dst, &b);
    cc_ops::jcc_rel8(buf, Cc::P, (2 + eq.len() + 2) as i8);
    cc_ops::jcc_rel8(buf, Cc::NE, (eq.len() + 2 + nan.len() + 2) as i8);
    buf.put_data(&eq);
    cc_ops::jmp_rel8(buf, (nan.len() + 2 + mm.len()) as i8);
    buf.put_data(&nan);
    cc_ops::jmp_rel8(buf, mm.len() as i8);
    buf.put_data(&mm);
}

/// Unsigned 64-bit to float (operands `[src, dst]`): non-negative values convert directly;
/// others are halved with the lost bit kept sticky (`(x >> 1) | (x & 1)`), converted, and
/// doubled, which rounds like a direct conversion.
fn emit_cvt_u64(fsize: FloatSize, allocs: &[Allocation], buf: &mut Buf) {
    let (src, dst) = (gpr(allocs[0]), xmm(allocs[1]));
    let small = bytes(|s| {
        sse::cvt_int_to_float(s, fsize, Size::S64, dst, &GprMem::Reg(src));
    });
    let or1 = bytes(|s| {
        alu::alu_rm_imm(s, AluOp::Or, Size::S64, &GprMem::Reg(Gpr::R11), 1);
    });
    let add = match fsize {
        FloatSize::F32 => SseOp::Addss,
        FloatSize::F64 => SseOp::Addsd,
    };
    let big = bytes(|s| {
        moves::mov_rm_r(s, Size::S64, &GprMem::Reg(Gpr::R11), src);
        shift::shift_rm_imm(s, shift::ShiftOp::Shr, Size::S64, &GprMem::Reg(Gpr::R11), 1);
        cc_ops::jcc_rel8(s, Cc::AE, or1.len() as i8);
        s.extend_from_slice(&or1);
        sse::cvt_int_to_float(s, fsize, Size::S64, dst, &GprMem::Reg(Gpr::R11));
        sse::sse_r_rm(s, add, dst, &XmmMem::Reg(dst));
    });
    alu::test_rm_r(buf, Size::S64, &GprMem::Reg(src), src);
    cc_ops::jcc_rel8(buf, Cc::S, (small.len() + 2) as i8);
    buf.put_data(&small);
    cc_ops::jmp_rel8(buf, big.len() as i8);
    buf.put_data(&big);
}

/// A read-modify-write as a compare-exchange loop (operands `[addr, val, dst = rax]`):
/// load the old value into rax, compute the new one in r11, `lock cmpxchg`, retry if another
/// thread changed the memory in between.
fn emit_atomic_loop(
    size: Size,
    op: AtomicRmwOp,
    allocs: &[Allocation],
    chaos: &mut Chaos,
    buf: &mut Buf,
) {
    let (m, val) = (Amode::base_disp(gpr(allocs[0]), 0), gpr(allocs[1]));
    let r11 = GprMem::Reg(Gpr::R11);
    let wide = if size == Size::S64 {
        Size::S64
    } else {
        Size::S32
    };
    match size {
        Size::S8 => moves::movzx(buf, ExtMode::BL, Gpr::RAX, &GprMem::Mem(m)),
        Size::S16 => moves::movzx(buf, ExtMode::WL, Gpr::RAX, &GprMem::Mem(m)),
        _ => moves::mov_r_rm(buf, size, Gpr::RAX, &GprMem::Mem(m)),
    };
    let again = buf.get_label();
    buf.bind_label(again, chaos);
    moves::mov_rm_r(buf, Size::S64, &r11, Gpr::RAX);
    let alu = |buf: &mut Buf, op| {
        alu::alu_rm_r(buf, op, wide, &r11, val);
    };
    let minmax = |buf: &mut Buf, cc| {
        alu::alu_rm_r(buf, AluOp::Cmp, size, &r11, val);
        cc_ops::cmov(buf, cc, wide, Gpr::R11, &GprMem::Reg(val));
    };
    match op {
        AtomicRmwOp::And => alu(buf, AluOp::And),
        AtomicRmwOp::Or => alu(buf, AluOp::Or),
        AtomicRmwOp::Xor => alu(buf, AluOp::Xor),
        AtomicRmwOp::Add => alu(buf, AluOp::Add),
        AtomicRmwOp::Sub => alu(buf, AluOp::Sub),
        AtomicRmwOp::Nand => {
            alu(buf, AluOp::And);
            alu::unary_rm(buf, UnaryOp::Not, wide, &r11);
        }
        AtomicRmwOp::Xchg => {
            moves::mov_rm_r(buf, Size::S64, &r11, val);
        }
        // Replace the old value when the operand is smaller (min) / larger (max).
        AtomicRmwOp::Umin => minmax(buf, Cc::A),
        AtomicRmwOp::Umax => minmax(buf, Cc::B),
        AtomicRmwOp::Smin => minmax(buf, Cc::G),
        AtomicRmwOp::Smax => minmax(buf, Cc::L),
    }
    misc::lock_cmpxchg(buf, size, &m, Gpr::R11);
    jcc_to(buf, Cc::NE, again);
}

/// A 128-bit read-modify-write loop (operands `[addr, val_lo, val_hi]`, then rax, rdx, rbx,
/// rcx): load the old value into rdx:rax, compute the new one in rcx:rbx, `lock
/// cmpxchg16b`, retry if the memory changed in between.
fn emit_atomic_loop128(op: AtomicRmwOp, allocs: &[Allocation], chaos: &mut Chaos, buf: &mut Buf) {
    let addr = gpr(allocs[0]);
    let (vl, vh) = (gpr(allocs[1]), gpr(allocs[2]));
    let m = |disp| GprMem::Mem(Amode::base_disp(addr, disp));
    let r = GprMem::Reg;
    moves::mov_r_rm(buf, Size::S64, Gpr::RAX, &m(0));
    moves::mov_r_rm(buf, Size::S64, Gpr::RDX, &m(8));
    let again = buf.get_label();
    buf.bind_label(again, chaos);
    moves::mov_rm_r(buf, Size::S64, &r(Gpr::RBX), Gpr::RAX);
    moves::mov_rm_r(buf, Size::S64, &r(Gpr::RCX), Gpr::RDX);
    let pair = |buf: &mut Buf, lo, hi| {
        alu::alu_rm_r(buf, lo, Size::S64, &r(Gpr::RBX), vl);
        alu::alu_rm_r(buf, hi, Size::S64, &r(Gpr::RCX), vh);
    };
    // Flags of `x - y` for 128-bit x, y (x_hi copied to r11), then take `val` when `cc`.
    let pick_val = |buf: &mut Buf, x: (Gpr, Gpr), y: (Gpr, Gpr), cc| {
        moves::mov_rm_r(buf, Size::S64, &r(Gpr::R11), x.1);
        alu::alu_rm_r(buf, AluOp::Cmp, Size::S64, &r(x.0), y.0);
        alu::alu_rm_r(buf, AluOp::Sbb, Size::S64, &r(Gpr::R11), y.1);
        cc_ops::cmov(buf, cc, Size::S64, Gpr::RBX, &r(vl));
        cc_ops::cmov(buf, cc, Size::S64, Gpr::RCX, &r(vh));
    };
    let (old, val) = ((Gpr::RAX, Gpr::RDX), (vl, vh));
    match op {
        AtomicRmwOp::Add => pair(buf, AluOp::Add, AluOp::Adc),
        AtomicRmwOp::Sub => pair(buf, AluOp::Sub, AluOp::Sbb),
        AtomicRmwOp::And => pair(buf, AluOp::And, AluOp::And),
        AtomicRmwOp::Or => pair(buf, AluOp::Or, AluOp::Or),
        AtomicRmwOp::Xor => pair(buf, AluOp::Xor, AluOp::Xor),
        AtomicRmwOp::Nand => {
            pair(buf, AluOp::And, AluOp::And);
            alu::unary_rm(buf, UnaryOp::Not, Size::S64, &r(Gpr::RBX));
            alu::unary_rm(buf, UnaryOp::Not, Size::S64, &r(Gpr::RCX));
        }
        AtomicRmwOp::Xchg => {
            moves::mov_rm_r(buf, Size::S64, &r(Gpr::RBX), vl);
            moves::mov_rm_r(buf, Size::S64, &r(Gpr::RCX), vh);
        }
        // min: take val when val < old; max: when old < val.
        AtomicRmwOp::Umin => pick_val(buf, val, old, Cc::B),
        AtomicRmwOp::Smin => pick_val(buf, val, old, Cc::L),
        AtomicRmwOp::Umax => pick_val(buf, old, val, Cc::B),
        AtomicRmwOp::Smax => pick_val(buf, old, val, Cc::L),
    }
    misc::lock_cmpxchg16b(buf, &Amode::base_disp(addr, 0));
    jcc_to(buf, Cc::NE, again);
}

/// `jcc` to a label (local to one instruction's sequence).
fn jcc_to(buf: &mut Buf, cc: Cc, label: Label) {
    let fix = cc_ops::jcc_rel32(buf, cc, 0);
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
}

/// `jmp` to a label (local to one instruction's sequence).
fn jmp_to(buf: &mut Buf, label: Label) {
    let fix = cc_ops::jmp_rel32(buf, 0);
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
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

/// `op xmm, [constant]` with the constant (`bits` of `fsize`) in the pool.
fn sse_const(buf: &mut Buf, op: SseOp, dst: Xmm, fsize: FloatSize, bits: u64) {
    let data = match fsize {
        FloatSize::F32 => (bits as u32).to_le_bytes().to_vec(),
        FloatSize::F64 => bits.to_le_bytes().to_vec(),
    };
    let label = buf.add_constant(&data, fsize.bytes());
    let fix = sse::sse_r_rm(buf, op, dst, &XmmMem::Mem(Amode::rip(0)))
        .expect("a RIP-relative operand has a fixup");
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
}

/// Float to integer with Cranelift's semantics (operands `[src, dst]`). The truncating
/// conversion gives `MIN` for NaN and out-of-range inputs, so the checks only run then (signed)
/// or before converting (unsigned, whose range the signed conversion does not cover).
fn emit_fcvt_to_int(
    fsize: FloatSize,
    isize: Size,
    (signed, sat): (bool, bool),
    allocs: &[Allocation],
    chaos: &mut Chaos,
    buf: &mut Buf,
) {
    let (src, dst) = (xmm(allocs[0]), gpr(allocs[1]));
    let f32 = fsize == FloatSize::F32;
    let ucomi = if f32 { SseOp::Ucomiss } else { SseOp::Ucomisd };
    let fbits = |v: f64| {
        if f32 {
            u64::from((v as f32).to_bits())
        } else {
            v.to_bits()
        }
    };
    let bits = isize.bits();
    let scratch = Xmm::new(15);
    let done = buf.get_label();
    let dst_rm = GprMem::Reg(dst);
    if signed {
        sse::cvt_float_to_int(buf, fsize, isize, true, dst, &XmmMem::Reg(src));
        // `dst - 1` overflows exactly when dst is MIN.
        alu::alu_rm_imm(buf, AluOp::Cmp, isize, &dst_rm, 1);
        jcc_to(buf, Cc::NO, done);
        sse::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(src));
        let min = -(2f64.powi(bits as i32 - 1));
        if sat {
            let not_nan = buf.get_label();
            jcc_to(buf, Cc::NP, not_nan);
            alu::alu_rm_r(buf, AluOp::Xor, Size::S32, &dst_rm, dst);
            jmp_to(buf, done);
            buf.bind_label(not_nan, chaos);
            sse::sse_r_rm(buf, SseOp::Xorps, scratch, &XmmMem::Reg(scratch));
            sse::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(scratch));
            jcc_to(buf, Cc::B, done);
            let max = if bits == 64 {
                i64::MAX as u64
            } else {
                i32::MAX as u64
            };
            moves::mov_r_imm64(buf, dst, max);
        } else {
            trap_unless(buf, Cc::NP, TrapCode::BAD_CONVERSION_TO_INTEGER);
            // MIN is legitimate when MIN - 1 < src (f64 to i32 can tell) or MIN <= src.
            let (threshold, ok) = if bits == 32 && !f32 {
                (min - 1.0, Cc::A)
            } else {
                (min, Cc::AE)
            };
            sse_const(buf, ucomi, src, fsize, fbits(threshold));
            trap_unless(buf, ok, TrapCode::INTEGER_OVERFLOW);
            sse::sse_r_rm(buf, SseOp::Xorps, scratch, &XmmMem::Reg(scratch));
            sse::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(scratch));
            trap_unless(buf, Cc::B, TrapCode::INTEGER_OVERFLOW);
        }
    } else {
        let (zero, max) = (buf.get_label(), buf.get_label());
        sse::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(src));
        if sat {
            jcc_to(buf, Cc::P, zero);
        } else {
            trap_unless(buf, Cc::NP, TrapCode::BAD_CONVERSION_TO_INTEGER);
        }
        sse_const(buf, ucomi, src, fsize, fbits(-1.0));
        if sat {
            jcc_to(buf, Cc::BE, zero);
        } else {
            trap_unless(buf, Cc::A, TrapCode::INTEGER_OVERFLOW);
        }
        sse_const(buf, ucomi, src, fsize, fbits(2f64.powi(bits as i32)));
        if sat {
            jcc_to(buf, Cc::AE, max);
        } else {
            trap_unless(buf, Cc::B, TrapCode::INTEGER_OVERFLOW);
        }
        if bits == 32 {
            // In range for the signed 64-bit conversion.
            sse::cvt_float_to_int(buf, fsize, Size::S64, true, dst, &XmmMem::Reg(src));
        } else {
            let big = buf.get_label();
            let two63 = fbits(2f64.powi(63));
            sse_const(buf, ucomi, src, fsize, two63);
            jcc_to(buf, Cc::AE, big);
            sse::cvt_float_to_int(buf, fsize, Size::S64, true, dst, &XmmMem::Reg(src));
            jmp_to(buf, done);
            buf.bind_label(big, chaos);
            sse::sse_r_rm(buf, SseOp::Movaps, scratch, &XmmMem::Reg(src));
            let sub = if f32 { SseOp::Subss } else { SseOp::Subsd };
            sse_const(buf, sub, scratch, fsize, two63);
            sse::cvt_float_to_int(buf, fsize, Size::S64, true, dst, &XmmMem::Reg(scratch));
            moves::mov_r_imm64(buf, Gpr::R11, 1 << 63);
            alu::alu_rm_r(buf, AluOp::Xor, Size::S64, &dst_rm, Gpr::R11);
        }
        if sat {
            jmp_to(buf, done);
            buf.bind_label(zero, chaos);
            alu::alu_rm_r(buf, AluOp::Xor, Size::S32, &dst_rm, dst);
            jmp_to(buf, done);
            buf.bind_label(max, chaos);
            let m = if bits == 64 {
                u64::MAX
            } else {
                u64::from(u32::MAX)
            };
            moves::mov_r_imm64(buf, dst, m);
        } else {
            // Unused: bind them so every label is bound.
            buf.bind_label(zero, chaos);
            buf.bind_label(max, chaos);
        }
    }
    buf.bind_label(done, chaos);
}

impl MachInst for Inst {
    type LabelUse = X64LabelUse;
    type Frame = Frame;

    fn collect_operands(&self, out: &mut Vec<kestrel_regalloc::Operand>) {
        Inst::collect_operands(self, out)
    }

    fn clobbers(&self) -> PRegSet {
        Inst::clobbers(self)
    }

    fn is_move(&self) -> Option<(VReg, VReg)> {
        match *self {
            Inst::Mov { dst, src } => Some((dst, src)),
            _ => None,
        }
    }

    fn is_term(&self) -> bool {
        matches!(
            self,
            Inst::Jmp { .. }
                | Inst::CondBr { .. }
                | Inst::JmpTable { .. }
                | Inst::JmpTableSeq { .. }
                | Inst::Ret { .. }
                | Inst::Ud2 { .. }
        )
    }

    fn gen_jump(target: BlockIndex) -> Self {
        Inst::Jmp { target }
    }

    fn emit(&self, allocs: &[Allocation], ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        match self {
            Inst::Args { .. } => {}
            Inst::MovImm { imm, .. } => moves::mov_r_imm64(buf, gpr(allocs[0]), *imm),
            // A copy of either class (the ABI copies a float argument passed twice).
            Inst::Mov { .. } if allocs[0].as_reg().map(|r| r.class()) == Some(RegClass::Float) => {
                let (src, dst) = (xmm(allocs[0]), xmm(allocs[1]));
                if src != dst {
                    sse::sse_r_rm(buf, SseOp::Movaps, dst, &XmmMem::Reg(src));
                }
            }
            Inst::Mov { .. } => {
                let (src, dst) = (gpr(allocs[0]), gpr(allocs[1]));
                if src != dst {
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(dst), src);
                }
            }
            Inst::Alu { op, size, b, .. } => {
                let dst = GprMem::Reg(gpr(allocs[0]));
                debug_assert_eq!(allocs[0], *allocs.last().expect("dst"));
                match b {
                    RegImm::Reg(_) => alu::alu_rm_r(buf, *op, *size, &dst, gpr(allocs[1])),
                    RegImm::Imm(k) => alu::alu_rm_imm(buf, *op, *size, &dst, *k),
                };
            }
            Inst::Imul { size, b, .. } => {
                let dst = gpr(allocs[0]);
                match b {
                    RegImm::Reg(_) => {
                        mul_div::imul_r_rm(buf, *size, dst, &GprMem::Reg(gpr(allocs[1])))
                    }
                    RegImm::Imm(k) => {
                        mul_div::imul_r_rm_imm(buf, *size, dst, &GprMem::Reg(dst), *k)
                    }
                };
            }
            Inst::AluMem {
                op,
                size,
                mem,
                trap,
                ..
            } => {
                let dst = gpr(allocs[0]);
                debug_assert_eq!(allocs[0], *allocs.last().expect("dst"));
                let m = GprMem::Mem(ctx.frame.amode(mem, &allocs[1..]));
                // The access is this instruction's: a fault here is the merged load's trap.
                if let Some(code) = trap {
                    buf.add_trap(*code);
                }
                match op {
                    Some(op) => alu::alu_r_rm(buf, *op, *size, dst, &m),
                    None => mul_div::imul_r_rm(buf, *size, dst, &m),
                };
            }
            Inst::Unary { op, size, .. } => {
                alu::unary_rm(buf, *op, *size, &GprMem::Reg(gpr(allocs[0])));
            }
            Inst::ShiftCl { op, size, .. } => {
                debug_assert_eq!(gpr(allocs[1]), Gpr::RCX);
                shift::shift_rm_cl(buf, *op, *size, &GprMem::Reg(gpr(allocs[0])));
            }
            Inst::ShiftX { op, size, .. } => {
                let (a, amt, dst) = (gpr(allocs[0]), gpr(allocs[1]), gpr(allocs[2]));
                bits::shiftx(buf, *op, *size, dst, &GprMem::Reg(a), amt);
            }
            Inst::ShiftImm { op, size, imm, .. } => {
                shift::shift_rm_imm(buf, *op, *size, &GprMem::Reg(gpr(allocs[0])), *imm);
            }
            Inst::Ext { mode, signed, .. } => {
                let (src, dst) = (GprMem::Reg(gpr(allocs[0])), gpr(allocs[1]));
                if *signed {
                    moves::movsx(buf, *mode, dst, &src);
                } else {
                    moves::movzx(buf, *mode, dst, &src);
                }
            }
            Inst::Setcc { cond, .. } => {
                emit_test(cond, allocs, ctx.frame, buf);
                let dst = gpr(allocs[cond.num_operands()]);
                let (c, second) = match cond.pred() {
                    Pred::One(c) => (c, None),
                    Pred::And(c, d) => (c, Some((d, AluOp::And))),
                    Pred::Or(c, d) => (c, Some((d, AluOp::Or))),
                };
                cc_ops::setcc(buf, c, &GprMem::Reg(dst));
                if let Some((d, op)) = second {
                    // r11 is free inside an instruction (only edits use it, between them).
                    cc_ops::setcc(buf, d, &GprMem::Reg(Gpr::R11));
                    alu::alu_rm_r(buf, op, Size::S8, &GprMem::Reg(dst), Gpr::R11);
                }
                moves::movzx(buf, ExtMode::BL, dst, &GprMem::Reg(dst));
            }
            Inst::Cmov { cond, .. } => {
                let n = cond.num_operands();
                let (t, dst) = (gpr(allocs[n]), gpr(allocs[n + 2]));
                debug_assert_eq!(allocs[n + 1], allocs[n + 2]);
                emit_test(cond, allocs, ctx.frame, buf);
                let t = GprMem::Reg(t);
                match cond.pred() {
                    Pred::One(c) => {
                        cc_ops::cmov(buf, c, Size::S64, dst, &t);
                    }
                    // `cmov` leaves the flags alone: either condition moves `t`.
                    Pred::Or(c, d) => {
                        cc_ops::cmov(buf, c, Size::S64, dst, &t);
                        cc_ops::cmov(buf, d, Size::S64, dst, &t);
                    }
                    Pred::And(..) => unreachable!("Inst::cmov turns And into Or"),
                }
            }
            Inst::Div { .. } => emit_div(self, allocs, buf),
            Inst::Jmp { target } => uncond_branch(buf, ctx, *target),
            Inst::CondBr {
                cond,
                taken,
                not_taken,
            } => {
                emit_test(cond, allocs, ctx.frame, buf);
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
                let inverted = bytes(|b| {
                    cc_ops::jcc_rel32(b, cc.invert(), 0);
                });
                buf.add_cond_branch(start, buf.cur_offset(), label, &inverted);
                uncond_branch(buf, ctx, *not_taken);
            }
            Inst::JmpTable { size, targets, .. } => {
                let idx = GprMem::Reg(gpr(allocs[0]));
                for (k, t) in targets[1..].iter().enumerate() {
                    // The comparison is at the index's width; wrap the constant to it.
                    let imm = match size {
                        Size::S8 => i32::from(k as u8 as i8),
                        Size::S16 => i32::from(k as u16 as i16),
                        _ => k as i32,
                    };
                    alu::alu_rm_imm(buf, AluOp::Cmp, *size, &idx, imm);
                    let fix = cc_ops::jcc_rel32(buf, Cc::E, 0);
                    let label = ctx.block_labels[t.index()];
                    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
                }
                uncond_branch(buf, ctx, targets[0]);
            }
            Inst::JmpTableBase { targets, .. } => {
                emit_jump_table_base(gpr(allocs[0]), targets, ctx, buf)
            }
            Inst::JmpTableSeq { size, targets, .. } => {
                let (idx, base) = (gpr(allocs[0]), gpr(allocs[1]));
                let n = i32::try_from(targets.len() - 1).expect("jump table length fits i32");
                // Unsigned: a huge or (as signed) negative index takes the default too.
                alu::alu_rm_imm(buf, AluOp::Cmp, *size, &GprMem::Reg(idx), n);
                jcc_to(buf, Cc::AE, ctx.block_labels[targets[0].index()]);
                let entry = GprMem::Mem(Amode::base_index(base, idx, Scale::Four, 0));
                moves::movsx(buf, ExtMode::LQ, Gpr::R11, &entry);
                alu::alu_rm_r(buf, AluOp::Add, Size::S64, &GprMem::Reg(Gpr::R11), base);
                cc_ops::jmp_rm(buf, &GprMem::Reg(Gpr::R11));
                // Not described as a branch: the buffer never edits or threads through this
                // sequence; its targets are reached through the table's own label uses.
            }
            Inst::Ret { .. } if !ctx.frame.setup => misc::ret(buf),
            Inst::Ret { .. } => {
                unwind::before_epilogue(buf);
                for (i, &r) in ctx.frame.saved.iter().enumerate() {
                    let m = GprMem::Mem(Amode::base_disp(Gpr::RBP, -8 * (i as i32 + 1)));
                    moves::mov_r_rm(buf, Size::S64, r, &m);
                }
                for (i, &x) in ctx.frame.saved_xmm.iter().enumerate() {
                    let m = ctx.frame.xmm_save_slot(i);
                    sse::sse_r_rm(buf, SseOp::Movdqu, x, &XmmMem::Mem(m));
                }
                moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::RSP), Gpr::RBP);
                misc::pop_r(buf, Gpr::RBP);
                unwind::after_pop_rbp(buf);
                misc::ret(buf);
                unwind::after_ret(buf);
            }
            Inst::Ud2 { code } => trap(buf, *code),
            Inst::TrapIf { cond, code } => {
                emit_test(cond, allocs, ctx.frame, buf);
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
            Inst::BitCount { op, size, .. } => {
                bits::bit_count(
                    buf,
                    *op,
                    *size,
                    gpr(allocs[1]),
                    &GprMem::Reg(gpr(allocs[0])),
                );
            }
            Inst::Bswap { size, .. } => {
                let r = gpr(allocs[0]);
                if *size == Size::S16 {
                    shift::shift_rm_imm(buf, shift::ShiftOp::Rol, Size::S16, &GprMem::Reg(r), 8);
                } else {
                    bits::bswap(buf, *size, r);
                }
            }
            Inst::MulHi { size, signed, .. } => {
                let op = if *signed {
                    MulDivOp::Imul
                } else {
                    MulDivOp::Mul
                };
                mul_div::mul_div_rm(buf, op, *size, &GprMem::Reg(gpr(allocs[1])));
            }
            Inst::AluFlags {
                op, size, b, cc, ..
            } => {
                let dst = GprMem::Reg(gpr(allocs[0]));
                match b {
                    RegImm::Reg(_) => alu::alu_rm_r(buf, *op, *size, &dst, gpr(allocs[1])),
                    RegImm::Imm(k) => alu::alu_rm_imm(buf, *op, *size, &dst, *k),
                };
                let flag = gpr(*allocs.last().expect("flag"));
                cc_ops::setcc(buf, *cc, &GprMem::Reg(flag));
                moves::movzx(buf, ExtMode::BL, flag, &GprMem::Reg(flag));
            }
            Inst::AluCarry { op, size, cc, .. } => {
                // CF = (cin != 0): `neg` sets the carry exactly for a nonzero operand.
                let r11 = GprMem::Reg(Gpr::R11);
                moves::mov_rm_r(buf, Size::S32, &r11, gpr(allocs[2]));
                alu::unary_rm(buf, UnaryOp::Neg, Size::S8, &r11);
                let dst = GprMem::Reg(gpr(allocs[0]));
                alu::alu_rm_r(buf, *op, *size, &dst, gpr(allocs[1]));
                let flag = gpr(allocs[4]);
                cc_ops::setcc(buf, *cc, &GprMem::Reg(flag));
                moves::movzx(buf, ExtMode::BL, flag, &GprMem::Reg(flag));
            }
            Inst::AluTrap {
                op,
                size,
                b,
                cc,
                code,
                ..
            } => {
                let dst = GprMem::Reg(gpr(allocs[0]));
                match b {
                    RegImm::Reg(_) => alu::alu_rm_r(buf, *op, *size, &dst, gpr(allocs[1])),
                    RegImm::Imm(k) => alu::alu_rm_imm(buf, *op, *size, &dst, *k),
                };
                trap_unless(buf, cc.invert(), *code);
            }
            Inst::XmmConst { size, bits, .. } => {
                let dst = xmm(allocs[0]);
                if *bits == 0 {
                    sse::sse_r_rm(buf, SseOp::Xorps, dst, &XmmMem::Reg(dst));
                } else {
                    let (data, op) = match size {
                        FloatSize::F32 => ((*bits as u32).to_le_bytes().to_vec(), SseOp::Movss),
                        FloatSize::F64 => (bits.to_le_bytes().to_vec(), SseOp::Movsd),
                    };
                    let label = buf.add_constant(&data, size.bytes());
                    let fix = sse::sse_r_rm(buf, op, dst, &XmmMem::Mem(Amode::rip(0)))
                        .expect("a RIP-relative operand has a fixup");
                    debug_assert_eq!(fix.bias(), 4);
                    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
                }
            }
            Inst::XmmRmR { op, .. } => {
                sse::sse_r_rm(buf, *op, xmm(allocs[0]), &XmmMem::Reg(xmm(allocs[1])));
            }
            Inst::XmmUnary { op, .. } => {
                sse::sse_r_rm(buf, *op, xmm(allocs[1]), &XmmMem::Reg(xmm(allocs[0])));
            }
            Inst::XmmRound { size, mode, .. } => {
                sse::round(
                    buf,
                    *size,
                    xmm(allocs[1]),
                    &XmmMem::Reg(xmm(allocs[0])),
                    *mode,
                );
            }
            Inst::XmmSelect { cond, .. } => {
                let n = cond.num_operands();
                let (t, dst) = (xmm(allocs[n]), xmm(allocs[n + 2]));
                emit_test(cond, allocs, ctx.frame, buf);
                let mov = bytes(|b| {
                    sse::sse_r_rm(b, SseOp::Movaps, dst, &XmmMem::Reg(t));
                });
                let len = mov.len() as i8;
                match cond.pred() {
                    Pred::One(c) => cc_ops::jcc_rel8(buf, c.invert(), len),
                    // `c` jumps over the 2-byte `jcc !d` straight to the move.
                    Pred::Or(c, d) => {
                        cc_ops::jcc_rel8(buf, c, 2);
                        cc_ops::jcc_rel8(buf, d.invert(), len);
                    }
                    // `!c` skips the 2-byte `jcc !d` and the move.
                    Pred::And(c, d) => {
                        cc_ops::jcc_rel8(buf, c.invert(), 2 + len);
                        cc_ops::jcc_rel8(buf, d.invert(), len);
                    }
                }
                buf.put_data(&mov);
            }
            Inst::FMinMax { size, max, .. } => emit_fminmax(*size, *max, allocs, buf),
            Inst::MovToXmm { size, .. } => {
                sse::movd_to_xmm(buf, *size, xmm(allocs[1]), &GprMem::Reg(gpr(allocs[0])));
            }
            Inst::MovFromXmm { size, .. } => {
                sse::movd_from_xmm(buf, *size, &GprMem::Reg(gpr(allocs[1])), xmm(allocs[0]));
            }
            Inst::CvtIntToFloat { fsize, isize, .. } => {
                let (src, dst) = (gpr(allocs[0]), xmm(allocs[1]));
                sse::cvt_int_to_float(buf, *fsize, *isize, dst, &GprMem::Reg(src));
            }
            Inst::CvtU64ToFloat { fsize, .. } => emit_cvt_u64(*fsize, allocs, buf),
            Inst::Alu128 {
                op_lo,
                op_hi,
                cin,
                flag,
                ..
            } => {
                let d = 4 + usize::from(cin.is_some());
                let (lo, hi) = (gpr(allocs[d]), gpr(allocs[d + 1]));
                debug_assert_eq!((allocs[0], allocs[1]), (allocs[d], allocs[d + 1]));
                if cin.is_some() {
                    // CF = (cin != 0).
                    let r11 = GprMem::Reg(Gpr::R11);
                    moves::mov_rm_r(buf, Size::S32, &r11, gpr(allocs[4]));
                    alu::unary_rm(buf, UnaryOp::Neg, Size::S8, &r11);
                }
                // dst_lo is written (in a_lo's register) before b_hi is read. They share a
                // register exactly when b_hi is the same value as a_lo (`x ^ (x.hi:x.lo)`
                // after an `isplit`); then b_hi is read from a copy in r11, which is free
                // once the carry is in CF (`mov` leaves the flags alone).
                let mut b_hi = gpr(allocs[3]);
                if b_hi == lo {
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::R11), b_hi);
                    b_hi = Gpr::R11;
                }
                alu::alu_rm_r(buf, *op_lo, Size::S64, &GprMem::Reg(lo), gpr(allocs[2]));
                alu::alu_rm_r(buf, *op_hi, Size::S64, &GprMem::Reg(hi), b_hi);
                if let Some((cc, _)) = flag {
                    let f = gpr(allocs[d + 2]);
                    cc_ops::setcc(buf, *cc, &GprMem::Reg(f));
                    moves::movzx(buf, ExtMode::BL, f, &GprMem::Reg(f));
                }
            }
            Inst::ShiftDouble { op, .. } => {
                debug_assert_eq!(gpr(allocs[2]), Gpr::RCX);
                shift::double_shift_cl(
                    buf,
                    *op,
                    Size::S64,
                    &GprMem::Reg(gpr(allocs[0])),
                    gpr(allocs[1]),
                );
            }
            Inst::Load {
                kind, mem, trap, ..
            } => {
                let m = ctx.frame.amode(mem, allocs);
                let dst = allocs[mem.num_operands()];
                if let Some(code) = trap {
                    buf.add_trap(*code);
                }
                let gm = GprMem::Mem(m);
                match kind {
                    LoadKind::Int(size) => {
                        moves::mov_r_rm(buf, *size, gpr(dst), &gm);
                    }
                    LoadKind::Zext(mode) => {
                        moves::movzx(buf, *mode, gpr(dst), &gm);
                    }
                    LoadKind::Sext(mode) => {
                        moves::movsx(buf, *mode, gpr(dst), &gm);
                    }
                    LoadKind::Float(FloatSize::F32) => {
                        sse::sse_r_rm(buf, SseOp::Movss, xmm(dst), &XmmMem::Mem(m));
                    }
                    LoadKind::Float(FloatSize::F64) => {
                        sse::sse_r_rm(buf, SseOp::Movsd, xmm(dst), &XmmMem::Mem(m));
                    }
                }
            }
            Inst::Store {
                kind, mem, trap, ..
            } => {
                let m = ctx.frame.amode(mem, &allocs[1..]);
                if let Some(code) = trap {
                    buf.add_trap(*code);
                }
                match kind {
                    StoreKind::Int(size) => {
                        moves::mov_rm_r(buf, *size, &GprMem::Mem(m), gpr(allocs[0]));
                    }
                    StoreKind::Float(FloatSize::F32) => {
                        sse::sse_store(buf, SseStore::Movss, &m, xmm(allocs[0]));
                    }
                    StoreKind::Float(FloatSize::F64) => {
                        sse::sse_store(buf, SseStore::Movsd, &m, xmm(allocs[0]));
                    }
                }
            }
            Inst::RetAreaAddr { .. } => {
                let m = ctx.frame.amode(&Mem::RetArea { disp: 0 }, &[]);
                misc::lea(buf, Size::S64, gpr(allocs[0]), &m);
            }
            Inst::FrameValue { what, .. } => {
                let dst = gpr(allocs[0]);
                match what {
                    FrameValue::StackPointer => {
                        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(dst), Gpr::RSP);
                    }
                    FrameValue::FramePointer => {
                        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(dst), Gpr::RBP);
                    }
                    FrameValue::ReturnAddress => {
                        let m = Amode::BaseDisp {
                            base: Gpr::RBP,
                            disp: 8,
                        };
                        moves::mov_r_rm(buf, Size::S64, dst, &GprMem::Mem(m));
                    }
                };
            }
            Inst::StackAddr { slot, disp, .. } => {
                let m = ctx.frame.amode(
                    &Mem::Slot {
                        slot: *slot,
                        disp: *disp,
                    },
                    &[],
                );
                misc::lea(buf, Size::S64, gpr(allocs[0]), &m);
            }
            Inst::FcvtToInt {
                fsize,
                isize,
                signed,
                sat,
                ..
            } => emit_fcvt_to_int(*fsize, *isize, (*signed, *sat), allocs, ctx.chaos, buf),
            Inst::MulOverflow { size, signed, .. } => {
                let op = if *signed {
                    MulDivOp::Imul
                } else {
                    MulDivOp::Mul
                };
                mul_div::mul_div_rm(buf, op, *size, &GprMem::Reg(gpr(allocs[1])));
                let flag = gpr(allocs[4]);
                cc_ops::setcc(buf, Cc::O, &GprMem::Reg(flag));
                moves::movzx(buf, ExtMode::BL, flag, &GprMem::Reg(flag));
            }
            Inst::Fence => misc::fence(buf, misc::Fence::Full),
            Inst::Debugtrap => misc::int3(buf),
            Inst::AtomicXadd { size, op, .. } => {
                let (m, r) = (Amode::base_disp(gpr(allocs[0]), 0), gpr(allocs[1]));
                match op {
                    AtomicRmwOp::Xchg => {
                        misc::xchg_rm_r(buf, *size, &GprMem::Mem(m), r);
                    }
                    _ => {
                        if *op == AtomicRmwOp::Sub {
                            alu::unary_rm(buf, UnaryOp::Neg, *size, &GprMem::Reg(r));
                        }
                        misc::lock_xadd(buf, *size, &m, r);
                    }
                }
            }
            Inst::AtomicLoop { size, op, .. } => {
                emit_atomic_loop(*size, *op, allocs, ctx.chaos, buf);
            }
            Inst::AtomicCas128 { .. } => {
                misc::lock_cmpxchg16b(buf, &Amode::base_disp(gpr(allocs[0]), 0));
            }
            Inst::AtomicLoop128 { op, .. } => emit_atomic_loop128(*op, allocs, ctx.chaos, buf),
            Inst::AtomicCas { size, .. } => {
                let m = Amode::base_disp(gpr(allocs[0]), 0);
                misc::lock_cmpxchg(buf, *size, &m, gpr(allocs[2]));
            }
            Inst::SymbolAddr {
                name, offset, got, ..
            } => {
                let dst = gpr(allocs[0]);
                if *got {
                    let m = GprMem::Mem(Amode::rip(0));
                    let fix = moves::mov_r_rm(buf, Size::S64, dst, &m).expect("rip-relative");
                    buf.add_reloc(fix.at, RelocKind::GotPcRel4, name.clone(), -4);
                    if *offset != 0 {
                        misc::lea(buf, Size::S64, dst, &Amode::base_disp(dst, *offset));
                    }
                } else {
                    let fix = misc::lea(buf, Size::S64, dst, &Amode::rip(0)).expect("rip-relative");
                    let addend = i64::from(*offset) - i64::from(fix.end - fix.at);
                    buf.add_reloc(fix.at, RelocKind::PcRel4, name.clone(), addend);
                }
            }
            Inst::Call { dest, .. } => match dest {
                CallDest::Direct(callee) => {
                    let fix = misc::call_rel32(buf, 0);
                    buf.add_reloc(fix.at, RelocKind::CallPcRel4, callee.clone(), -4);
                }
                CallDest::Indirect(_) => {
                    misc::call_rm(buf, &GprMem::Reg(gpr(allocs[0])));
                }
            },
        }
    }

    fn emit_edit(edit: &Edit, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let frame = ctx.frame;
        match edit.class {
            RegClass::Int => match (frame.slot_amode(edit.from), frame.slot_amode(edit.to)) {
                (None, None) => {
                    let (from, to) = (gpr(edit.from), gpr(edit.to));
                    if from != to {
                        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(to), from);
                    }
                }
                (None, Some(to)) => {
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Mem(to), gpr(edit.from));
                }
                (Some(from), None) => {
                    moves::mov_r_rm(buf, Size::S64, gpr(edit.to), &GprMem::Mem(from));
                }
                (Some(from), Some(to)) => {
                    // r11 is the reserved integer scratch register (never allocated).
                    moves::mov_r_rm(buf, Size::S64, Gpr::R11, &GprMem::Mem(from));
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Mem(to), Gpr::R11);
                }
            },
            RegClass::Float => match (frame.slot_amode(edit.from), frame.slot_amode(edit.to)) {
                (None, None) => {
                    let (from, to) = (xmm(edit.from), xmm(edit.to));
                    if from != to {
                        sse::sse_r_rm(buf, SseOp::Movaps, to, &XmmMem::Reg(from));
                    }
                }
                (None, Some(to)) => {
                    sse::sse_store(buf, SseStore::Movsd, &to, xmm(edit.from));
                }
                (Some(from), None) => {
                    sse::sse_r_rm(buf, SseOp::Movsd, xmm(edit.to), &XmmMem::Mem(from));
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
            debug_assert!(frame.size == 0 && frame.saved.is_empty() && frame.saved_xmm.is_empty());
            return;
        }
        misc::push_r(buf, Gpr::RBP);
        unwind::after_push_rbp(buf);
        moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::RBP), Gpr::RSP);
        unwind::after_set_frame(buf);
        if let Some((steps, below)) = &frame.stack_check {
            stack_check(buf, steps, *below);
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
        for (i, &r) in frame.saved.iter().enumerate() {
            let disp = -8 * (i as i32 + 1);
            moves::mov_rm_r(
                buf,
                Size::S64,
                &GprMem::Mem(Amode::base_disp(Gpr::RBP, disp)),
                r,
            );
            unwind::after_save(buf, unwind::dwarf_gpr(r), disp);
        }
        for (i, &x) in frame.saved_xmm.iter().enumerate() {
            sse::sse_store(buf, SseStore::Movdqu, &frame.xmm_save_slot(i), x);
            let disp = -frame.xmm_save_base - 16 * (i as i32 + 1);
            unwind::after_save(buf, unwind::dwarf_xmm(x), disp);
        }
    }

    fn pretty(&self, ops: &[String]) -> String {
        Inst::pretty(self, ops)
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
