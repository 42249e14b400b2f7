//! Integer add and subtract: with a 12-bit immediate, a shifted register or an extended
//! register, with or without setting the flags; and with the carry flag (`adc`, `sbc`).
//!
//! # Contract
//!
//! - Each form has a plain function (`add`/`sub`) and a flag-setting one (`adds`/`subs`).
//!   Register number 31 means SP in the destination of the plain immediate and extended
//!   forms and ZR in the destination of the flag-setting ones, so the destination's type
//!   differs between the two; the first source is SP-capable in both, the shifted-register
//!   form uses ZR everywhere.
//! - Aliases are the underlying encodings: `mov` to/from SP is `add rd, rn, #0` with SP on
//!   one side; `cmp`/`cmn` are `subs`/`adds` into ZR; `neg`/`negs` are `sub`/`subs` from ZR
//!   (shifted-register form). To add with SP as a source and a register operand, use the
//!   extended form with `uxtx` (64-bit) or `uxtw` (32-bit).

use super::operands::{ArithShift, Extended, Shifted};
use super::regs::{GprSp, GprZr, Size};
use super::{rd_field, rn_field, WordSink};

/// Addition or subtraction (the `op` bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddSub {
    Add,
    Sub,
}

impl AddSub {
    /// Both operations.
    pub const ALL: [AddSub; 2] = [AddSub::Add, AddSub::Sub];

    fn bits(self, set_flags: bool) -> u32 {
        let op = match self {
            AddSub::Add => 0,
            AddSub::Sub => 1 << 30,
        };
        op | if set_flags { 1 << 29 } else { 0 }
    }
}

/// An add/sub immediate: 12 bits, optionally shifted left by 12.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddSubImm {
    imm12: u16,
    lsl12: bool,
}

impl AddSubImm {
    /// `value` as `#imm12` if it fits 12 bits, else as `#imm12, lsl #12` if its low 12 bits
    /// are zero and the rest fits; `None` otherwise.
    pub const fn new(value: u64) -> Option<AddSubImm> {
        if value < 1 << 12 {
            Some(AddSubImm {
                imm12: value as u16,
                lsl12: false,
            })
        } else if value & 0xFFF == 0 && value < 1 << 24 {
            Some(AddSubImm {
                imm12: (value >> 12) as u16,
                lsl12: true,
            })
        } else {
            None
        }
    }

    /// Exactly `#imm12{, lsl #12}`, or `None` unless `imm12 < 4096`.
    pub const fn with_shift(imm12: u32, lsl12: bool) -> Option<AddSubImm> {
        if imm12 < 1 << 12 {
            Some(AddSubImm {
                imm12: imm12 as u16,
                lsl12,
            })
        } else {
            None
        }
    }

    /// The 12-bit field and whether it is shifted left by 12.
    pub const fn parts(self) -> (u32, bool) {
        (self.imm12 as u32, self.lsl12)
    }

    /// The value added or subtracted.
    pub const fn value(self) -> u64 {
        (self.imm12 as u64) << if self.lsl12 { 12 } else { 0 }
    }

    fn fields(self) -> u32 {
        (u32::from(self.lsl12) << 22) | (u32::from(self.imm12) << 10)
    }
}

const IMM: u32 = 0x1100_0000;
const SHIFTED: u32 = 0x0B00_0000;
const EXTENDED: u32 = 0x0B20_0000;

/// `add`/`sub rd, rn, #imm` (`mov` to/from SP when the immediate is 0 and either is SP).
pub fn add_sub_imm(
    sink: &mut impl WordSink,
    op: AddSub,
    size: Size,
    rd: GprSp,
    rn: GprSp,
    imm: AddSubImm,
) {
    sink.put_word(
        IMM | size.sf() | op.bits(false) | imm.fields() | rn_field(rn.enc()) | rd_field(rd.enc()),
    );
}

/// `adds`/`subs rd, rn, #imm` (`cmn`/`cmp` when `rd` is ZR).
pub fn adds_subs_imm(
    sink: &mut impl WordSink,
    op: AddSub,
    size: Size,
    rd: GprZr,
    rn: GprSp,
    imm: AddSubImm,
) {
    sink.put_word(
        IMM | size.sf() | op.bits(true) | imm.fields() | rn_field(rn.enc()) | rd_field(rd.enc()),
    );
}

/// `add`/`sub rd, rn, rm{, shift #amount}` at the size of `rm` (`neg` when `rn` is ZR).
pub fn add_sub_shifted(
    sink: &mut impl WordSink,
    op: AddSub,
    rd: GprZr,
    rn: GprZr,
    rm: Shifted<ArithShift>,
) {
    let word = SHIFTED | rm.size().sf() | op.bits(false) | rm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `adds`/`subs rd, rn, rm{, shift #amount}` at the size of `rm` (`cmn`/`cmp` when `rd` is
/// ZR, else `negs` when `rn` is ZR).
pub fn adds_subs_shifted(
    sink: &mut impl WordSink,
    op: AddSub,
    rd: GprZr,
    rn: GprZr,
    rm: Shifted<ArithShift>,
) {
    let word = SHIFTED | rm.size().sf() | op.bits(true) | rm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `add`/`sub rd, rn, rm`: the shifted-register form with no shift.
pub fn add_sub_reg(
    sink: &mut impl WordSink,
    op: AddSub,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
) {
    add_sub_shifted(sink, op, rd, rn, Shifted::reg(size, rm));
}

/// `adds`/`subs rd, rn, rm`: the shifted-register form with no shift.
pub fn adds_subs_reg(
    sink: &mut impl WordSink,
    op: AddSub,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
) {
    adds_subs_shifted(sink, op, rd, rn, Shifted::reg(size, rm));
}

/// `add`/`sub rd, rn, rm, extend #shift` (SP-capable destination and first source).
pub fn add_sub_ext(
    sink: &mut impl WordSink,
    op: AddSub,
    size: Size,
    rd: GprSp,
    rn: GprSp,
    rm: Extended,
) {
    let word = EXTENDED | size.sf() | op.bits(false) | rm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `adds`/`subs rd, rn, rm, extend #shift` (`cmn`/`cmp` when `rd` is ZR).
pub fn adds_subs_ext(
    sink: &mut impl WordSink,
    op: AddSub,
    size: Size,
    rd: GprZr,
    rn: GprSp,
    rm: Extended,
) {
    let word = EXTENDED | size.sf() | op.bits(true) | rm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `adc`/`adcs` (`rd = rn + rm + C`) or `sbc`/`sbcs` (`rd = rn - rm - !C`, printed
/// `ngc`/`ngcs` when `rn` is ZR), setting the flags when `set_flags`.
pub fn add_sub_carry(
    sink: &mut impl WordSink,
    op: AddSub,
    set_flags: bool,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
) {
    let word = 0x1A00_0000 | size.sf() | op.bits(set_flags) | super::rm_field(rm.enc());
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}
