//! Wide-immediate moves: `movz`, `movn`, `movk` with a 16-bit immediate shifted by 0, 16, 32
//! or 48 (0 or 16 for 32-bit operations).
//!
//! The Arm assembler prints `movz` and `movn` as `mov rd, #value` when that is unambiguous;
//! these functions emit the underlying encodings.

use super::regs::{GprZr, Size};
use super::{rd_field, WordSink};

/// The three wide moves (the `opc` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveWideOp {
    /// `rd = !(imm16 << shift)`.
    Movn = 0,
    /// `rd = imm16 << shift`.
    Movz = 2,
    /// Replaces bits `shift..shift + 16` of `rd` with `imm16`.
    Movk = 3,
}

impl MoveWideOp {
    /// All operations.
    pub const ALL: [MoveWideOp; 3] = [MoveWideOp::Movn, MoveWideOp::Movz, MoveWideOp::Movk];
}

/// A 16-bit immediate and its left shift, for an operation of the size it was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WideImm {
    size: Size,
    imm16: u16,
    /// `hw`: the shift divided by 16.
    hw: u8,
}

impl WideImm {
    /// `#imm16, lsl #shift` for a `size` operation, or `None` unless `shift` is a multiple
    /// of 16 below the width.
    pub const fn new(size: Size, imm16: u16, shift: u32) -> Option<WideImm> {
        if shift % 16 != 0 || shift >= size.bits() {
            return None;
        }
        Some(WideImm {
            size,
            imm16,
            hw: (shift / 16) as u8,
        })
    }

    /// The immediate that makes `movz` produce `value`: its only nonzero halfword (the lowest
    /// for zero), or `None` if `value` has two nonzero halfwords or does not fit `size`.
    pub fn for_movz(size: Size, value: u64) -> Option<WideImm> {
        if size == Size::S32 && value > u64::from(u32::MAX) {
            return None;
        }
        let shift = if value == 0 {
            0
        } else {
            value.trailing_zeros() / 16 * 16
        };
        if value & !(0xFFFF << shift) != 0 {
            return None;
        }
        WideImm::new(size, (value >> shift) as u16, shift)
    }

    /// The immediate that makes `movn` produce `value` (which must fit `size`).
    pub fn for_movn(size: Size, value: u64) -> Option<WideImm> {
        let inverted = match size {
            Size::S32 => u64::from(!u32::try_from(value).ok()?),
            Size::S64 => !value,
        };
        WideImm::for_movz(size, inverted)
    }

    /// The operation size.
    pub const fn size(self) -> Size {
        self.size
    }

    /// The 16-bit immediate and the shift in bits.
    pub const fn parts(self) -> (u16, u32) {
        (self.imm16, self.hw as u32 * 16)
    }
}

/// `movn`/`movz`/`movk rd, #imm16, lsl #shift` at the size of `imm`.
pub fn move_wide(sink: &mut impl WordSink, op: MoveWideOp, rd: GprZr, imm: WideImm) {
    let word = 0x1280_0000 | imm.size.sf() | ((op as u32) << 29) | (u32::from(imm.hw) << 21);
    sink.put_word(word | (u32::from(imm.imm16) << 5) | rd_field(rd.enc()));
}
