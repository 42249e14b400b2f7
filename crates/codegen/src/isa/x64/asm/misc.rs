//! Everything else: `lea`, stack operations, calls and returns, traps, padding `nop`s, `xchg`
//! and the atomic `lock cmpxchg`/`lock xadd`/`lock cmpxchg16b`, and memory fences.
//!
//! # Contract
//!
//! - [`lea`] takes 16/32/64 bits (`debug_assert!`); the address is computed at 64 bits and
//!   truncated.
//! - Stack operations and indirect calls are 64-bit only (the only width x86-64 has without an
//!   operand-size prefix); [`push_imm`] pushes an `i32` sign-extended to 64 bits.
//! - [`call_rel32`] takes a displacement relative to the end of the call and returns its
//!   [`Rel32Fixup`].
//! - [`nop`] writes one instruction of exactly `len` bytes (1–9, the SDM's recommended forms);
//!   [`nops`] fills any number of bytes with as few of them as possible.
//! - [`xchg_rm_r`] with a memory operand is implicitly locked. The `lock_*` functions take a
//!   memory operand only; [`lock_cmpxchg`] compares with and loads into the accumulator at the
//!   operand width, [`lock_cmpxchg16b`] uses `rdx:rax` and `rcx:rbx` (the allocator must pin
//!   them) and needs a 16-byte aligned address.
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_opcode_reg, emit_plain, emit_rm, Enc, Map, Rm};
use super::operands::{Amode, GprMem};
use super::regs::{Gpr, Size};
use super::setcc_cmov_jcc::rel32;
use super::{CodeSink, Rel32Fixup};

/// `lea dst, [addr]` (`8D`).
pub fn lea(sink: &mut impl CodeSink, size: Size, dst: Gpr, addr: &Amode) -> Option<Rel32Fixup> {
    debug_assert_ne!(size, Size::S8, "lea has no 8-bit form");
    emit_rm(
        sink,
        &Enc::new(Map::Legacy, 0x8D).size(size),
        dst.enc(),
        Rm::Mem(addr),
        0,
    )
}

/// `push reg` (`50+r`).
pub fn push_r(sink: &mut impl CodeSink, reg: Gpr) {
    emit_opcode_reg(sink, &Enc::new(Map::Legacy, 0x50), reg, false);
}

/// `push qword src` (`FF /6`).
pub fn push_rm(sink: &mut impl CodeSink, src: &GprMem) -> Option<Rel32Fixup> {
    emit_rm(sink, &Enc::new(Map::Legacy, 0xFF), 6, src.into(), 0)
}

/// `push imm` (`6A ib` or `68 id`), sign-extended to 64 bits.
pub fn push_imm(sink: &mut impl CodeSink, imm: i32) {
    if let Ok(b) = i8::try_from(imm) {
        sink.put1(0x6A);
        sink.put1(b as u8);
    } else {
        sink.put1(0x68);
        sink.put4(imm as u32);
    }
}

/// `pop reg` (`58+r`).
pub fn pop_r(sink: &mut impl CodeSink, reg: Gpr) {
    emit_opcode_reg(sink, &Enc::new(Map::Legacy, 0x58), reg, false);
}

/// `pop qword dst` (`8F /0`).
pub fn pop_rm(sink: &mut impl CodeSink, dst: &GprMem) -> Option<Rel32Fixup> {
    emit_rm(sink, &Enc::new(Map::Legacy, 0x8F), 0, dst.into(), 0)
}

/// `call rel32` (`E8 cd`).
pub fn call_rel32(sink: &mut impl CodeSink, disp: i32) -> Rel32Fixup {
    sink.put1(0xE8);
    rel32(sink, disp)
}

/// `call target` through a register or memory (`FF /2`).
pub fn call_rm(sink: &mut impl CodeSink, target: &GprMem) -> Option<Rel32Fixup> {
    emit_rm(sink, &Enc::new(Map::Legacy, 0xFF), 2, target.into(), 0)
}

/// `ret` (`C3`).
pub fn ret(sink: &mut impl CodeSink) {
    sink.put1(0xC3);
}

/// `ret imm16` (`C2 iw`): returns and pops `bytes` more bytes of arguments.
pub fn ret_imm(sink: &mut impl CodeSink, bytes: u16) {
    sink.put1(0xC2);
    sink.put2(bytes);
}

/// `ud2` (`0F 0B`): the guaranteed invalid-opcode trap.
pub fn ud2(sink: &mut impl CodeSink) {
    emit_plain(sink, &Enc::new(Map::M0F, 0x0B));
}

/// `int3` (`CC`): breakpoint.
pub fn int3(sink: &mut impl CodeSink) {
    sink.put1(0xCC);
}

/// The recommended multi-byte `nop` of each length 1–9.
const NOPS: [&[u8]; 9] = [
    &[0x90],
    &[0x66, 0x90],
    &[0x0F, 0x1F, 0x00],
    &[0x0F, 0x1F, 0x40, 0x00],
    &[0x0F, 0x1F, 0x44, 0x00, 0x00],
    &[0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00],
    &[0x0F, 0x1F, 0x80, 0x00, 0x00, 0x00, 0x00],
    &[0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    &[0x66, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
];

/// The longest single `nop` [`nop`] writes.
pub const MAX_NOP_LEN: usize = NOPS.len();

/// One `nop` instruction of exactly `len` bytes; `len` must be 1–9.
pub fn nop(sink: &mut impl CodeSink, len: usize) {
    debug_assert!(
        (1..=MAX_NOP_LEN).contains(&len),
        "no single nop of {len} bytes"
    );
    for &b in NOPS[len - 1] {
        sink.put1(b);
    }
}

/// Fills exactly `len` bytes with `nop`s, as few as possible.
pub fn nops(sink: &mut impl CodeSink, mut len: usize) {
    while len > 0 {
        let n = len.min(MAX_NOP_LEN);
        nop(sink, n);
        len -= n;
    }
}

/// `xchg a, b` (`86`/`87`); with memory it is atomic.
pub fn xchg_rm_r(sink: &mut impl CodeSink, size: Size, a: &GprMem, b: Gpr) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::sized(size, Map::Legacy, 0x86, 0x87),
        b.enc(),
        a.into(),
        0,
    )
}

/// `lock cmpxchg [mem], src` (`F0 0F B0`/`B1`): if the accumulator equals `[mem]`, store `src`;
/// otherwise load `[mem]` into the accumulator. ZF tells which.
pub fn lock_cmpxchg(
    sink: &mut impl CodeSink,
    size: Size,
    mem: &Amode,
    src: Gpr,
) -> Option<Rel32Fixup> {
    let enc = Enc::sized(size, Map::M0F, 0xB0, 0xB1).lock();
    emit_rm(sink, &enc, src.enc(), Rm::Mem(mem), 0)
}

/// `lock xadd [mem], src` (`F0 0F C0`/`C1`): `[mem] += src`, `src` = old `[mem]`.
pub fn lock_xadd(
    sink: &mut impl CodeSink,
    size: Size,
    mem: &Amode,
    src: Gpr,
) -> Option<Rel32Fixup> {
    let enc = Enc::sized(size, Map::M0F, 0xC0, 0xC1).lock();
    emit_rm(sink, &enc, src.enc(), Rm::Mem(mem), 0)
}

/// `lock cmpxchg16b [mem]` (`F0 REX.W 0F C7 /1`).
pub fn lock_cmpxchg16b(sink: &mut impl CodeSink, mem: &Amode) -> Option<Rel32Fixup> {
    let enc = Enc::new(Map::M0F, 0xC7).w(true).lock();
    emit_rm(sink, &enc, 1, Rm::Mem(mem), 0)
}

/// Memory fences.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fence {
    /// `lfence` (`0F AE E8`).
    Load,
    /// `sfence` (`0F AE F8`).
    Store,
    /// `mfence` (`0F AE F0`).
    Full,
}

/// Writes a memory fence.
pub fn fence(sink: &mut impl CodeSink, kind: Fence) {
    let digit = match kind {
        Fence::Load => 5,
        Fence::Store => 7,
        Fence::Full => 6,
    };
    emit_rm(sink, &Enc::new(Map::M0F, 0xAE), digit, Rm::Reg(0), 0);
}
