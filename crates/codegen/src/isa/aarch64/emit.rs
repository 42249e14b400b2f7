//! Encoding glue: label uses and veneers, the frame, the allocator's edits, the prologue,
//! islands, and the helpers the instruction families (`inst/`) encode with.
//!
//! # Contract
//!
//! Requires an allocation in which every operand is a register (see `inst/mod.rs`), and a
//! [`Frame`] computed from the same allocation. [`MachInst::emit`] maps the instruction's
//! operands to their allocated registers (the family's `map`) and lets its family encode it
//! through the assembler layer (`asm`), reading registers by field name. `x16`, `x17` and
//! `v31` are free inside any instruction (the scratch-register contract in `abi.rs`):
//! constants, large offsets and multi-instruction sequences use them.
//!
//! Branches are emitted naively (`b.cond taken; b not_taken`, or `cbz`/`cbnz`) and described
//! to the buffer, which turns them into their final form. Label uses have a short reach
//! (`b.cond`/`cbz` ±1 MiB, `tbz` ±32 KiB, `b` ±128 MiB, `adr` ±1 MiB), so before every
//! instruction and every edit the emitter asks the buffer whether an island is due
//! ([`MachInst::emit_island_if_needed`]); if so it jumps over an island of veneers and
//! constants. Every instruction and edit emits at most [`MAX_EMIT_BYTES`], the distance the
//! island check plans with. Other PC-relative references inside one instruction's sequence
//! (a `b.cond` over a `udf`) have fixed offsets. Trap sites are recorded at the `udf` (or the
//! faulting access) itself.
//!
//! Frame layout (the stack grows down; `sp` is 16-byte aligned after the prologue). A leaf
//! that keeps nothing in its frame has no prologue at all (see [`Frame::setup`]).
//!
//! ```text
//! [x29 + 16 + 8*i]      incoming stack argument i
//! [x29 + 8]             return address (the caller's x30)
//! [x29]                 caller's x29
//! [x29 - 8*(i+1)]       callee-saved register i (x19–x28, then d8–d15; saved only when used)
//! ...                   padding to 16 bytes
//! [sp + spill_base + 8*i]  spill slot i (16*i in a function with vectors)
//! [sp + slot_off]       explicit stack slots
//! [sp + ret_area_base]  outgoing return area (calls of functions with many results)
//! [sp + 8*i]            outgoing stack argument i of the next call
//! ```
//!
//! Cost: O(1) words per instruction and per allocator edit (a constant or a large offset
//! adds at most four `movz`/`movk`); islands are placed by the MachBuffer (its contract).

use kestrel_ir::TrapCode;
use kestrel_regalloc::{Allocation, PReg, RegClass};

use super::asm::add_sub::{add_sub_ext, add_sub_imm, add_sub_reg, AddSub, AddSubImm};
use super::asm::branch;
use super::asm::fp::{self as fp_enc, FpUnaryOp};
use super::asm::label_use::LabelUse as AsmLabelUse;
use super::asm::logical::{and_orr_eor_imm, logical_reg, LogicalImmOp, LogicalOp};
use super::asm::logical_imm::LogicalImm;
use super::asm::mem::{ld_st, ld_st_fp, Amode, FpLdSt, IndexExtend, IntLdSt};
use super::asm::misc;
use super::asm::moves::{move_wide, MoveWideOp, WideImm};
use super::asm::operands::{Extend, Extended};
use super::asm::pair::{ld_st_pair, pair_index, IntPair, PairAmode};
use super::asm::{FpMemSize, FpSize, Gpr, GprSp, GprZr, PcOffset, Size, Vreg as FpReg, WordSink};
use super::unwind;
use crate::machinst::buffer::{Label, LabelUse, MachBuffer};
use crate::machinst::frame::Frame;
use crate::machinst::{BlockIndex, EmitCtx};

/// The most bytes one instruction or one edit emits (islands are planned with it).
pub const MAX_EMIT_BYTES: u32 = 256;

/// AArch64 label references, as the buffer resolves them.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum A64LabelUse {
    /// `b`: ±128 MiB; veneer: an indirect branch through a 32-bit offset (20 bytes).
    Branch26,
    /// `b.cond`, `cbz`, `cbnz`: ±1 MiB; veneer: a `b`.
    Branch19,
    /// `tbz`, `tbnz`: ±32 KiB; veneer: a `b`.
    Branch14,
    /// `adr` of a constant: ±1 MiB, no veneer (data is not reached by jumping).
    Adr21,
    /// `ldr` (literal) of a constant (a vector's): ±1 MiB, no veneer.
    Literal19,
    /// A 32-bit word holding `label - use + addend`, the addend being what the word held
    /// before patching (jump-table entries, the long veneer's offset): ±2 GiB.
    PcRel32,
}

impl A64LabelUse {
    /// The assembler's field kind of a branch or `adr` use.
    fn asm_kind(self) -> Option<AsmLabelUse> {
        match self {
            A64LabelUse::Branch26 => Some(AsmLabelUse::Branch26),
            A64LabelUse::Branch19 => Some(AsmLabelUse::Branch19),
            A64LabelUse::Branch14 => Some(AsmLabelUse::Branch14),
            A64LabelUse::Adr21 => Some(AsmLabelUse::Adr21),
            A64LabelUse::Literal19 => Some(AsmLabelUse::Literal19),
            A64LabelUse::PcRel32 => None,
        }
    }

    /// The use kind of a fixup the assembler returned (`adrp` is never resolved by the
    /// buffer).
    pub fn of(kind: AsmLabelUse) -> A64LabelUse {
        match kind {
            AsmLabelUse::Branch26 => A64LabelUse::Branch26,
            AsmLabelUse::Branch19 => A64LabelUse::Branch19,
            AsmLabelUse::Branch14 => A64LabelUse::Branch14,
            AsmLabelUse::Adr21 => A64LabelUse::Adr21,
            AsmLabelUse::Literal19 => A64LabelUse::Literal19,
            AsmLabelUse::Adrp21 => {
                panic!("{kind:?} fields are never resolved by the MachBuffer")
            }
        }
    }
}

/// Bytes of the `Branch26` veneer: `adr x16, .; ldrsw x17, [x16, #16]; add x16, x16, x17;
/// br x16; .word target - veneer`.
const LONG_VENEER: u32 = 20;

impl LabelUse for A64LabelUse {
    const ALIGN: u32 = 4;
    const MAX_VENEER_SIZE: u32 = LONG_VENEER;

    fn max_pos_range(self) -> u32 {
        match self.asm_kind() {
            Some(k) => u32::try_from(k.max_pos_range()).unwrap_or(u32::MAX),
            None => i32::MAX as u32,
        }
    }

    fn max_neg_range(self) -> u32 {
        match self.asm_kind() {
            Some(k) => u32::try_from(k.max_neg_range()).unwrap_or(u32::MAX),
            None => 1 << 31,
        }
    }

    fn patch_size(self) -> u32 {
        4
    }

    fn patch(self, bytes: &mut [u8], use_offset: u32, label_offset: u32) {
        let word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let offset = i64::from(label_offset) - i64::from(use_offset);
        let patched = match self.asm_kind() {
            Some(k) => k
                .patch(word, offset)
                .expect("the buffer patches only in range"),
            None => (offset + i64::from(word as i32)) as u32,
        };
        bytes[..4].copy_from_slice(&patched.to_le_bytes());
    }

    fn supports_veneer(self) -> bool {
        matches!(
            self,
            A64LabelUse::Branch26 | A64LabelUse::Branch19 | A64LabelUse::Branch14
        )
    }

    fn veneer_size(self) -> u32 {
        match self {
            A64LabelUse::Branch26 => LONG_VENEER,
            _ => 4,
        }
    }

    fn generate_veneer(self, bytes: &mut [u8], veneer_offset: u32) -> (u32, Self) {
        let mut code: Vec<u8> = Vec::with_capacity(LONG_VENEER as usize);
        let next = match self {
            // x16 and x17 hold nothing at a branch: they are scratch (`abi.rs`), and the
            // linker's own veneers clobber them too.
            A64LabelUse::Branch26 => {
                branch::adr(&mut code, Gpr::X16.into(), PcOffset::ZERO);
                let word = Amode::scaled(Gpr::X16.into(), 16, 4).expect("16 fits");
                ld_st(&mut code, IntLdSt::Ldrsw, Gpr::X17.into(), word);
                let (x16, x17) = (Gpr::X16.into(), Gpr::X17.into());
                add_sub_reg(&mut code, AddSub::Add, Size::S64, x16, x16, x17);
                branch::br(&mut code, Gpr::X16);
                // The offset is taken from the veneer's start, 16 bytes before the word.
                code.extend_from_slice(&16i32.to_le_bytes());
                (veneer_offset + 16, A64LabelUse::PcRel32)
            }
            A64LabelUse::Branch19 | A64LabelUse::Branch14 => {
                branch::b(&mut code, PcOffset::ZERO);
                (veneer_offset, A64LabelUse::Branch26)
            }
            A64LabelUse::Adr21 | A64LabelUse::Literal19 | A64LabelUse::PcRel32 => {
                panic!("{self:?} has no veneer (supports_veneer is false)")
            }
        };
        bytes[..code.len()].copy_from_slice(&code);
        next
    }
}

impl<U: LabelUse> WordSink for MachBuffer<U> {
    fn put_word(&mut self, word: u32) {
        self.put4(word);
    }

    fn current_offset(&self) -> u32 {
        self.cur_offset()
    }
}

pub(super) type Buf = MachBuffer<A64LabelUse>;
pub(super) type Ctx<'a, 'b> = EmitCtx<'a, Frame>;

/// An allocated integer register.
pub(super) fn gpr(r: PReg) -> Gpr {
    debug_assert_eq!(r.class(), RegClass::Int);
    Gpr::new(r.hw_enc() as u8).expect("allocatable registers are x0-x30")
}

/// An allocated integer register in a slot where number 31 means the zero register.
pub(super) fn zr(r: PReg) -> GprZr {
    gpr(r).into()
}

/// An allocated integer register in a slot where number 31 means the stack pointer.
pub(super) fn sp(r: PReg) -> GprSp {
    gpr(r).into()
}

/// An allocated FP register.
pub(super) fn fpr(r: PReg) -> FpReg {
    debug_assert_eq!(r.class(), RegClass::Float);
    FpReg::new(r.hw_enc() as u8).expect("FP registers are v0-v31")
}

/// The bytes `f` writes (an instruction encoded to compare or copy, not emitted).
pub(super) fn words(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::with_capacity(4);
    f(&mut v);
    v
}

/// `udf #code` as a trap site with `code`.
pub(super) fn trap(buf: &mut Buf, code: TrapCode) {
    buf.add_trap(code);
    misc::udf(buf, u16::from(code.as_raw()));
}

/// `dst = value` at `size` (the value's bits above `size` are ignored): `movz`, `movn` or
/// `orr` with a bitmask immediate when one instruction does, else `movz` (or `movn`, when
/// more halfwords are all ones) and a `movk` per remaining halfword.
pub(super) fn mov_imm(buf: &mut impl WordSink, size: Size, dst: Gpr, value: u64) {
    let value = match size {
        Size::S32 => value & 0xFFFF_FFFF,
        Size::S64 => value,
    };
    if let Some(imm) = WideImm::for_movz(size, value) {
        return move_wide(buf, MoveWideOp::Movz, dst.into(), imm);
    }
    if let Some(imm) = WideImm::for_movn(size, value) {
        return move_wide(buf, MoveWideOp::Movn, dst.into(), imm);
    }
    if let Some(imm) = LogicalImm::new(value, size) {
        return and_orr_eor_imm(buf, LogicalImmOp::Orr, dst.into(), GprZr::ZR, imm);
    }
    let halves = size.bits() / 16;
    let half = |i: u32| (value >> (16 * i)) as u16;
    let ones = (0..halves).filter(|&i| half(i) == 0xFFFF).count();
    let zeros = (0..halves).filter(|&i| half(i) == 0).count();
    // Start from all ones (`movn`) when that leaves fewer halfwords to insert.
    let (fill, first_op) = if ones > zeros {
        (0xFFFF, MoveWideOp::Movn)
    } else {
        (0, MoveWideOp::Movz)
    };
    let mut first = true;
    for i in (0..halves).filter(|&i| half(i) != fill) {
        let bits = if first && fill == 0xFFFF {
            !half(i)
        } else {
            half(i)
        };
        let imm = WideImm::new(size, bits, 16 * i).expect("a halfword below the width");
        let op = if first { first_op } else { MoveWideOp::Movk };
        move_wide(buf, op, dst.into(), imm);
        first = false;
    }
}

/// `dst = base + value` (64-bit; either may be `sp`), through `x17` when the value fits no
/// immediate.
pub(super) fn add_offset(buf: &mut Buf, dst: GprSp, base: GprSp, value: i64) {
    let (op, magnitude) = if value < 0 {
        (AddSub::Sub, value.unsigned_abs())
    } else {
        (AddSub::Add, value as u64)
    };
    if let Some(imm) = AddSubImm::new(magnitude) {
        return add_sub_imm(buf, op, Size::S64, dst, base, imm);
    }
    if magnitude < 1 << 24 {
        let hi = AddSubImm::new(magnitude & !0xFFF).expect("fits with lsl 12");
        let lo = AddSubImm::new(magnitude & 0xFFF).expect("fits 12 bits");
        add_sub_imm(buf, op, Size::S64, dst, base, hi);
        return add_sub_imm(buf, op, Size::S64, dst, dst, lo);
    }
    mov_imm(buf, Size::S64, Gpr::X17, magnitude);
    let x17 = Extended::new(Gpr::X17.into(), Extend::Uxtx, 0).expect("shift 0");
    add_sub_ext(buf, op, Size::S64, dst, base, x17);
}

/// The address mode of an access of `bytes` bytes at `base + offset`: the immediate forms
/// when the offset fits one, else `[base, x17]` with the offset moved to `x17` first (so
/// call this before recording the access's trap site).
pub(super) fn amode(buf: &mut Buf, base: GprSp, offset: i64, bytes: u32) -> Amode {
    if let Some(a) = Amode::offset(base, offset, bytes) {
        return a;
    }
    mov_imm(buf, Size::S64, Gpr::X17, offset as u64);
    Amode::RegOffset {
        rn: base,
        rm: Gpr::X17.into(),
        extend: IndexExtend::Lsl,
        scaled: false,
    }
}

/// `b target` (an unconditional branch to a block), described to the buffer.
pub(super) fn uncond_branch(buf: &mut Buf, ctx: &Ctx<'_, '_>, target: BlockIndex) {
    let label = ctx.block_labels[target.index()];
    let start = buf.cur_offset();
    let fix = branch::b(buf, PcOffset::ZERO);
    buf.use_label_at_offset(fix.at, label, A64LabelUse::of(fix.kind));
    buf.add_uncond_branch(start, buf.cur_offset(), label);
}

/// A PC-relative instruction `put` referring to `label` (a plain use, not a described
/// branch).
pub(super) fn use_label(
    buf: &mut Buf,
    label: Label,
    put: impl FnOnce(&mut Buf) -> super::asm::Fixup,
) {
    let fix = put(buf);
    buf.use_label_at_offset(fix.at, label, A64LabelUse::of(fix.kind));
}

/// A 64-bit register copy of either class.
pub(super) fn copy_reg(buf: &mut Buf, dst: PReg, src: PReg) {
    if dst == src {
        return;
    }
    match src.class() {
        RegClass::Int => logical_reg(buf, LogicalOp::Orr, Size::S64, zr(dst), GprZr::ZR, zr(src)),
        RegClass::Float => fp_enc::fp_unary(buf, FpUnaryOp::Fmov, FpSize::F64, fpr(dst), fpr(src)),
    }
}

/// A copy of all 128 bits of an FP/SIMD register, or a 64-bit copy of an integer one (a
/// function with vectors).
pub(super) fn copy_reg_wide(buf: &mut Buf, dst: PReg, src: PReg) {
    match src.class() {
        RegClass::Float if dst != src => super::asm::simd::vec_mov(buf, fpr(dst), fpr(src)),
        _ => copy_reg(buf, dst, src),
    }
}

/// Store (`load` false) or load all 128 bits of the FP/SIMD register `reg` at
/// `[sp + offset]` (a 16-byte spill slot).
pub(super) fn spill_access_q(buf: &mut Buf, load: bool, reg: PReg, offset: i64) {
    let a = amode(buf, GprSp::SP, offset, 16);
    let op = if load {
        FpLdSt::Ldr(FpMemSize::S128)
    } else {
        FpLdSt::Str(FpMemSize::S128)
    };
    ld_st_fp(buf, op, fpr(reg), a);
}

/// An edit's register location (edits between registers and spill slots).
pub(super) fn edit_reg(a: Allocation) -> PReg {
    a.as_reg().expect("a register location")
}

/// Store (`load` false) or load the 64 bits of `reg` at `[sp + offset]`.
pub(super) fn spill_access(buf: &mut Buf, load: bool, reg: PReg, offset: i64) {
    let a = amode(buf, GprSp::SP, offset, 8);
    match (reg.class(), load) {
        (RegClass::Int, false) => ld_st(buf, IntLdSt::StrX, zr(reg), a),
        (RegClass::Int, true) => ld_st(buf, IntLdSt::LdrX, zr(reg), a),
        (RegClass::Float, false) => ld_st_fp(buf, FpLdSt::Str(FpMemSize::S64), fpr(reg), a),
        (RegClass::Float, true) => ld_st_fp(buf, FpLdSt::Ldr(FpMemSize::S64), fpr(reg), a),
    }
}

/// Reload the callee-saved registers from their slots below `x29`.
fn restore_saved(buf: &mut Buf, frame: &Frame) {
    let fp: GprSp = Gpr::FP.into();
    for s in &frame.saved {
        let a = Amode::offset(fp, i64::from(s.offset), 8).expect("small offset");
        match s.reg.class() {
            RegClass::Int => ld_st(buf, IntLdSt::LdrX, zr(s.reg), a),
            RegClass::Float => ld_st_fp(buf, FpLdSt::Ldr(FpMemSize::S64), fpr(s.reg), a),
        }
    }
}

/// `ldp x29, x30, [sp], #16`.
fn pop_fp_lr(buf: &mut Buf) {
    let post = PairAmode::PostIndex {
        rn: GprSp::SP,
        index: pair_index(16, 8).expect("16 fits"),
    };
    ld_st_pair(buf, IntPair::LdpX, Gpr::FP.into(), Gpr::LR.into(), post);
}

/// The epilogue (when the function set up a frame) and `ret`; a `tail` function then pops
/// its incoming stack arguments (`add sp, sp, #N` before the `ret`).
pub(super) fn emit_ret(ctx: &Ctx<'_, '_>, buf: &mut Buf) {
    let frame = ctx.frame;
    if !frame.setup {
        // (A function with stack arguments always sets up its frame.)
        return branch::ret(buf, Gpr::LR);
    }
    unwind::before_epilogue(buf);
    restore_saved(buf, frame);
    add_offset(buf, GprSp::SP, Gpr::FP.into(), 0);
    pop_fp_lr(buf);
    unwind::after_restore_fp_lr(buf);
    if frame.incoming_pop > 0 {
        add_offset(buf, GprSp::SP, GprSp::SP, i64::from(frame.incoming_pop));
    }
    branch::ret(buf, Gpr::LR);
    unwind::after_ret(buf);
}

/// After a call whose callee popped `bytes` of stack arguments: `sub sp, sp, #bytes`, which
/// puts the outgoing area back where the frame has it.
pub(super) fn emit_callee_pops(buf: &mut Buf, bytes: u16) {
    add_offset(buf, GprSp::SP, GprSp::SP, -i64::from(bytes));
}

/// A tail call: this function's epilogue, then `b`/`br` to `dest`.
///
/// With `N` = this function's incoming stack-argument bytes and `M` = `stack_bytes`, the
/// callee must find its arguments at `sp`, ending where this function's end
/// (`x29 + 16 + N`). When `M = N = 0` that is the plain epilogue. Otherwise the outgoing
/// area holds, from `sp`: 16 header bytes, then the `M` argument bytes; the sequence copies
/// the caller's `x29` and `x30` from `[x29]` into the header (through `x16`), restores the
/// callee-saved registers, copies the `M + 16` bytes to `[x29 + N - M, x29 + N + 16)` from
/// the highest word down, sets `sp = x29 + N - M` and pops `x29`, `x30` from there. The
/// downward copy is safe: the destination starts above the source (the frame holds the
/// whole area), and each word is read before any lower destination word is written. Only
/// `x16`, `x17` (large offsets) and the target (in `abi::TAIL_TARGET`) are used.
pub(super) fn emit_return_call(
    dest: &crate::machinst::shared_inst::CallDest<PReg>,
    stack_bytes: u32,
    ctx: &Ctx<'_, '_>,
    buf: &mut Buf,
) {
    use crate::machinst::abi::TAIL_CALL_HEADER;
    use crate::machinst::buffer::RelocKind;
    use crate::machinst::shared_inst::CallDest;
    let frame = ctx.frame;
    debug_assert!(frame.setup, "a function with a tail call sets up its frame");
    unwind::before_epilogue(buf);
    let incoming = i64::from(frame.incoming_pop);
    let fp: GprSp = Gpr::FP.into();
    let x16: GprZr = Gpr::X16.into();
    if stack_bytes == 0 && incoming == 0 {
        restore_saved(buf, frame);
        add_offset(buf, GprSp::SP, fp, 0);
    } else {
        for off in [0, 8] {
            let src = amode(buf, fp, off, 8);
            ld_st(buf, IntLdSt::LdrX, x16, src);
            let dst = amode(buf, GprSp::SP, off, 8);
            ld_st(buf, IntLdSt::StrX, x16, dst);
        }
        restore_saved(buf, frame);
        let words = i64::from((stack_bytes + TAIL_CALL_HEADER) / 8);
        let base = incoming - i64::from(stack_bytes);
        for off in (0..words).rev().map(|w| 8 * w) {
            let src = amode(buf, GprSp::SP, off, 8);
            ld_st(buf, IntLdSt::LdrX, x16, src);
            let dst = amode(buf, fp, base + off, 8);
            ld_st(buf, IntLdSt::StrX, x16, dst);
        }
        add_offset(buf, GprSp::SP, fp, base);
    }
    pop_fp_lr(buf);
    unwind::after_restore_fp_lr(buf);
    match dest {
        CallDest::Direct(callee) => {
            let fix = branch::b(buf, PcOffset::ZERO);
            buf.add_reloc(fix.at, RelocKind::Arm64Call26, (**callee).clone(), 0);
        }
        CallDest::Indirect(target) => branch::br(buf, gpr(*target)),
    }
    unwind::after_ret(buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::Chaos;
    use crate::isa::aarch64::asm::tests::Checker;
    use crate::isa::aarch64::inst::Inst;
    use crate::machinst::MachInst;

    fn word(bytes: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
    }

    #[test]
    fn veneers_disassemble_as_branches() {
        let mut long = [0u8; LONG_VENEER as usize];
        let (at, kind) = A64LabelUse::Branch26.generate_veneer(&mut long, 0x1000);
        assert_eq!((at, kind), (0x1010, A64LabelUse::PcRel32));
        // The veneer's target, 200 MiB on (out of `b`'s reach), as an offset from the veneer.
        A64LabelUse::PcRel32.patch(&mut long[16..], at, 0x1000 + (200 << 20));
        assert_eq!(word(&long, 4), 200 << 20);
        let mut short = [0u8; 4];
        let (at, kind) = A64LabelUse::Branch19.generate_veneer(&mut short, 0x2000);
        assert_eq!((at, kind), (0x2000, A64LabelUse::Branch26));

        let mut c = Checker::new("veneers");
        let pc = c.pc();
        c.check_word(word(&long, 0), format!("adr x16, {pc:#x}"));
        c.check_word(word(&long, 1), "ldrsw x17, [x16, #16]");
        c.check_word(word(&long, 2), "add x16, x16, x17");
        c.check_word(word(&long, 3), "br x16");
        let pc = c.pc();
        c.check_word(word(&short, 0), format!("b {pc:#x}"));
        c.finish();
    }

    #[test]
    fn a_far_conditional_branch_goes_through_a_veneer_in_an_island() {
        let frame = Frame::default();
        let mut chaos = Chaos::disabled();
        let mut ctx = EmitCtx {
            frame: &frame,
            block_labels: &[],
            chaos: &mut chaos,
        };
        let mut buf = Buf::new();
        let far = buf.get_label();
        use_label(&mut buf, far, |b| {
            branch::cbz(b, Size::S64, Gpr::X0.into(), PcOffset::ZERO)
        });
        // 1.5 MiB of code, asking for islands as the emitter does before each instruction.
        for _ in 0..(3 << 17) {
            Inst::emit_island_if_needed(&mut ctx, &mut buf);
            misc::nop(&mut buf);
        }
        buf.bind_label(far, ctx.chaos);
        misc::nop(&mut buf);
        let code = buf.finish(ctx.chaos).expect("every use reaches");
        let at = |off: u32| u32::from_le_bytes(code.data[off as usize..][..4].try_into().unwrap());
        let target = code.label_offset(far).expect("bound");
        // cbz → a `b` in the island, within cbz's reach → the label.
        let cbz = at(0);
        assert!(AsmLabelUse::Branch19.matches(cbz), "{cbz:#010x}");
        let veneer = AsmLabelUse::Branch19.offset(cbz) as u32;
        assert!(veneer < 1 << 20, "the veneer is within cbz's reach");
        let b = at(veneer);
        assert!(AsmLabelUse::Branch26.matches(b), "{b:#010x} is a `b`");
        assert_eq!(
            veneer as i64 + AsmLabelUse::Branch26.offset(b),
            i64::from(target)
        );
        // The island is jumped over: the word before the veneer is a `b` past it.
        let around = veneer - 4;
        assert!(AsmLabelUse::Branch26.matches(at(around)));
        assert!(around as i64 + AsmLabelUse::Branch26.offset(at(around)) > i64::from(veneer));
    }
}
