//! Condition codes and the instructions that consume them: `setcc`, `cmovcc`, `jcc`, plus the
//! unconditional `jmp` forms (`call` is in [`super::misc`]).
//!
//! # Contract
//!
//! - [`Cc`] is the 4-bit hardware condition number; [`Cc::invert`] flips its low bit.
//! - [`setcc`] writes one byte (`r/m8`); it does not clear the rest of a register.
//! - [`cmov`] exists for 16/32/64 bits (`debug_assert!`). A 32-bit `cmov` zeroes the upper half
//!   of `dst` even when the condition is false.
//! - Branches take a raw displacement relative to the end of the branch. The rel32 forms return
//!   the [`Rel32Fixup`] of their displacement so a label can be patched in; the rel8 forms are
//!   for callers that already know the distance.
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_plain, emit_rm, Enc, Map};
use super::operands::GprMem;
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// Condition codes, numbered as in the `jcc`/`setcc`/`cmovcc` opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cc {
    /// Overflow.
    O = 0,
    /// No overflow.
    NO = 1,
    /// Below (unsigned <), carry.
    B = 2,
    /// Above or equal (unsigned >=), no carry.
    AE = 3,
    /// Equal, zero.
    E = 4,
    /// Not equal, not zero.
    NE = 5,
    /// Below or equal (unsigned <=).
    BE = 6,
    /// Above (unsigned >).
    A = 7,
    /// Sign.
    S = 8,
    /// No sign.
    NS = 9,
    /// Parity (unordered after `ucomis*`).
    P = 10,
    /// No parity.
    NP = 11,
    /// Less (signed <).
    L = 12,
    /// Greater or equal (signed >=).
    GE = 13,
    /// Less or equal (signed <=).
    LE = 14,
    /// Greater (signed >).
    G = 15,
}

impl Cc {
    /// All conditions in hardware order.
    pub const ALL: [Cc; 16] = [
        Cc::O,
        Cc::NO,
        Cc::B,
        Cc::AE,
        Cc::E,
        Cc::NE,
        Cc::BE,
        Cc::A,
        Cc::S,
        Cc::NS,
        Cc::P,
        Cc::NP,
        Cc::L,
        Cc::GE,
        Cc::LE,
        Cc::G,
    ];

    /// Hardware number.
    pub fn enc(self) -> u8 {
        self as u8
    }

    /// The opposite condition.
    pub fn invert(self) -> Cc {
        Cc::ALL[usize::from(self.enc() ^ 1)]
    }
}

/// `setcc dst` (`0F 90+cc /0`).
pub fn setcc(sink: &mut impl CodeSink, cc: Cc, dst: &GprMem) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::new(Map::M0F, 0x90 + cc.enc()).byte_rm(),
        0,
        dst.into(),
        0,
    )
}

/// `cmovcc dst, src` (`0F 40+cc`).
pub fn cmov(
    sink: &mut impl CodeSink,
    cc: Cc,
    size: Size,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    debug_assert_ne!(size, Size::S8, "cmov has no 8-bit form");
    emit_rm(
        sink,
        &Enc::new(Map::M0F, 0x40 + cc.enc()).size(size),
        dst.enc(),
        src.into(),
        0,
    )
}

pub(crate) fn rel32(sink: &mut impl CodeSink, disp: i32) -> Rel32Fixup {
    let at = sink.current_offset();
    sink.put4(disp as u32);
    Rel32Fixup { at, end: at + 4 }
}

/// `jcc rel32` (`0F 80+cc cd`).
pub fn jcc_rel32(sink: &mut impl CodeSink, cc: Cc, disp: i32) -> Rel32Fixup {
    emit_plain(sink, &Enc::new(Map::M0F, 0x80 + cc.enc()));
    rel32(sink, disp)
}

/// `jcc rel8` (`70+cc cb`).
pub fn jcc_rel8(sink: &mut impl CodeSink, cc: Cc, disp: i8) {
    sink.put1(0x70 + cc.enc());
    sink.put1(disp as u8);
}

/// `jmp rel32` (`E9 cd`).
pub fn jmp_rel32(sink: &mut impl CodeSink, disp: i32) -> Rel32Fixup {
    sink.put1(0xE9);
    rel32(sink, disp)
}

/// `jmp rel8` (`EB cb`).
pub fn jmp_rel8(sink: &mut impl CodeSink, disp: i8) {
    sink.put1(0xEB);
    sink.put1(disp as u8);
}

/// `jmp target` through a register or memory (`FF /4`, always 64-bit).
pub fn jmp_rm(sink: &mut impl CodeSink, target: &GprMem) -> Option<Rel32Fixup> {
    emit_rm(sink, &Enc::new(Map::Legacy, 0xFF), 4, target.into(), 0)
}
