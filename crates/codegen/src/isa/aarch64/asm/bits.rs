//! One-source bit operations: `rbit`, `rev16`, `rev32`, `rev`, `clz`, `cls`.

use super::regs::{GprZr, Size};
use super::{rd_field, rn_field, WordSink};

/// Bit operations that exist at both sizes (`rev32` is 64-bit only: [`rev32`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// Reverse the bit order.
    Rbit,
    /// Reverse the bytes in each halfword.
    Rev16,
    /// Reverse the bytes of the whole register.
    Rev,
    /// Count leading zeros.
    Clz,
    /// Count leading sign bits (not counting the sign bit).
    Cls,
}

impl BitOp {
    /// All operations.
    pub const ALL: [BitOp; 5] = [
        BitOp::Rbit,
        BitOp::Rev16,
        BitOp::Rev,
        BitOp::Clz,
        BitOp::Cls,
    ];
}

const ONE_SOURCE: u32 = 0x5AC0_0000;

/// `rbit`/`rev16`/`rev`/`clz`/`cls rd, rn`.
pub fn bit_op(sink: &mut impl WordSink, op: BitOp, size: Size, rd: GprZr, rn: GprZr) {
    let opcode = match (op, size) {
        (BitOp::Rbit, _) => 0,
        (BitOp::Rev16, _) => 1,
        (BitOp::Rev, Size::S32) => 2,
        (BitOp::Rev, Size::S64) => 3,
        (BitOp::Clz, _) => 4,
        (BitOp::Cls, _) => 5,
    };
    let word = ONE_SOURCE | size.sf() | (opcode << 10);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `rev32 xd, xn`: reverse the bytes in each 32-bit word.
pub fn rev32(sink: &mut impl WordSink, rd: GprZr, rn: GprZr) {
    let word = ONE_SOURCE | Size::S64.sf() | (2 << 10);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}
