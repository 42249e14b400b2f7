//! Branches and PC-relative addresses: `b`, `bl`, `b.cond`, `cbz`/`cbnz`, `tbz`/`tbnz`, `br`,
//! `blr`, `ret`, `adr`, `adrp`.
//!
//! Every PC-relative form takes a checked offset from the instruction's own address and
//! returns a [`Fixup`] naming its field kind; see [`super::label_use`].

use super::cond::Cond;
use super::label_use::{
    AdrOffset, AdrpOffset, Branch14Offset, Branch19Offset, Branch26Offset, Fixup, LabelUse,
};
use super::operands::UImm6;
use super::regs::{Gpr, GprZr, Size};
use super::{rd_field, rn_field, WordSink};

/// `b <pc + offset>`.
pub fn b(sink: &mut impl WordSink, offset: Branch26Offset) -> Fixup {
    LabelUse::Branch26.put(sink, 0x1400_0000, offset.bytes())
}

/// `bl <pc + offset>`: branch and write the return address to `x30`.
pub fn bl(sink: &mut impl WordSink, offset: Branch26Offset) -> Fixup {
    LabelUse::Branch26.put(sink, 0x9400_0000, offset.bytes())
}

/// `b.cond <pc + offset>`.
pub fn b_cond(sink: &mut impl WordSink, cond: Cond, offset: Branch19Offset) -> Fixup {
    LabelUse::Branch19.put(sink, 0x5400_0000 | cond.enc(), offset.bytes())
}

/// `cbz rt, <pc + offset>`: branch if `rt` (of `size`) is zero.
pub fn cbz(sink: &mut impl WordSink, size: Size, rt: GprZr, offset: Branch19Offset) -> Fixup {
    let word = 0x3400_0000 | size.sf() | rd_field(rt.enc());
    LabelUse::Branch19.put(sink, word, offset.bytes())
}

/// `cbnz rt, <pc + offset>`: branch if `rt` (of `size`) is not zero.
pub fn cbnz(sink: &mut impl WordSink, size: Size, rt: GprZr, offset: Branch19Offset) -> Fixup {
    let word = 0x3500_0000 | size.sf() | rd_field(rt.enc());
    LabelUse::Branch19.put(sink, word, offset.bytes())
}

/// `b5`, `b40` and `Rt` of a test-bit branch (the register prints as `w` below bit 32).
fn test_bit_fields(rt: GprZr, bit: UImm6) -> u32 {
    let bit = bit.get();
    ((bit >> 5) << 31) | ((bit & 0x1F) << 19) | rd_field(rt.enc())
}

/// `tbz rt, #bit, <pc + offset>`: branch if bit `bit` of `rt` is zero.
pub fn tbz(sink: &mut impl WordSink, rt: GprZr, bit: UImm6, offset: Branch14Offset) -> Fixup {
    let word = 0x3600_0000 | test_bit_fields(rt, bit);
    LabelUse::Branch14.put(sink, word, offset.bytes())
}

/// `tbnz rt, #bit, <pc + offset>`: branch if bit `bit` of `rt` is one.
pub fn tbnz(sink: &mut impl WordSink, rt: GprZr, bit: UImm6, offset: Branch14Offset) -> Fixup {
    let word = 0x3700_0000 | test_bit_fields(rt, bit);
    LabelUse::Branch14.put(sink, word, offset.bytes())
}

/// `br xn`: branch to the address in `rn`.
pub fn br(sink: &mut impl WordSink, rn: Gpr) {
    sink.put_word(0xD61F_0000 | rn_field(rn.enc()));
}

/// `blr xn`: call the address in `rn`.
pub fn blr(sink: &mut impl WordSink, rn: Gpr) {
    sink.put_word(0xD63F_0000 | rn_field(rn.enc()));
}

/// `ret xn` (plain `ret` for `x30`).
pub fn ret(sink: &mut impl WordSink, rn: Gpr) {
    sink.put_word(0xD65F_0000 | rn_field(rn.enc()));
}

/// `adr xd, <pc + offset>`.
pub fn adr(sink: &mut impl WordSink, rd: GprZr, offset: AdrOffset) -> Fixup {
    LabelUse::Adr21.put(sink, 0x1000_0000 | rd_field(rd.enc()), offset.bytes())
}

/// `adrp xd, <page of pc + offset>`: the address of a 4 KiB page, `offset` pages (times
/// 4096) from the instruction's own page.
pub fn adrp(sink: &mut impl WordSink, rd: GprZr, offset: AdrpOffset) -> Fixup {
    LabelUse::Adrp21.put(sink, 0x9000_0000 | rd_field(rd.enc()), offset.bytes())
}
