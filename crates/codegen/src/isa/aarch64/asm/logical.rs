//! Bitwise logical operations: `and`, `bic`, `orr`, `orn`, `eor`, `eon`, `ands`, `bics` with
//! a shifted register, and `and`, `orr`, `eor`, `ands` with a bitmask immediate.
//!
//! # Contract
//!
//! - Shifted-register forms read and write ZR for register number 31 and accept all four
//!   shifts including `ror`; their size comes from the [`Shifted`] operand.
//! - Immediate forms take a [`LogicalImm`] (built for a size; the form takes its size from
//!   it). `and`/`orr`/`eor` can write SP ([`and_orr_eor_imm`]); `ands` writes ZR
//!   ([`ands_imm`]); the source is ZR-numbered in both.
//! - Aliases are the underlying encodings: `mov rd, rm` is `orr rd, zr, rm`; `mvn` is
//!   `orn rd, zr, rm`; `tst` is `ands zr, …`; `mov rd, #bitmask` is `orr rd, zr, #imm`.

use super::logical_imm::LogicalImm;
use super::operands::{LogicShift, Shifted};
use super::regs::{GprSp, GprZr, Size};
use super::{rd_field, rn_field, WordSink};

/// Logical operations with a register operand: `opc` and the `N` (invert operand) bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicalOp {
    And,
    Bic,
    Orr,
    Orn,
    Eor,
    Eon,
    Ands,
    Bics,
}

impl LogicalOp {
    /// All operations.
    pub const ALL: [LogicalOp; 8] = [
        LogicalOp::And,
        LogicalOp::Bic,
        LogicalOp::Orr,
        LogicalOp::Orn,
        LogicalOp::Eor,
        LogicalOp::Eon,
        LogicalOp::Ands,
        LogicalOp::Bics,
    ];

    /// `opc` at bits 29–30 and `N` at bit 21.
    fn bits(self) -> u32 {
        let (opc, n) = match self {
            LogicalOp::And => (0, 0),
            LogicalOp::Bic => (0, 1),
            LogicalOp::Orr => (1, 0),
            LogicalOp::Orn => (1, 1),
            LogicalOp::Eor => (2, 0),
            LogicalOp::Eon => (2, 1),
            LogicalOp::Ands => (3, 0),
            LogicalOp::Bics => (3, 1),
        };
        (opc << 29) | (n << 21)
    }
}

/// Logical operations with an immediate that may write SP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicalImmOp {
    And = 0,
    Orr = 1,
    Eor = 2,
}

impl LogicalImmOp {
    /// All operations.
    pub const ALL: [LogicalImmOp; 3] = [LogicalImmOp::And, LogicalImmOp::Orr, LogicalImmOp::Eor];
}

const SHIFTED: u32 = 0x0A00_0000;
const IMM: u32 = 0x1200_0000;

/// `op rd, rn, rm{, shift #amount}` at the size of `rm`.
pub fn logical_shifted(
    sink: &mut impl WordSink,
    op: LogicalOp,
    rd: GprZr,
    rn: GprZr,
    rm: Shifted<LogicShift>,
) {
    let word = SHIFTED | rm.size().sf() | op.bits() | rm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `op rd, rn, rm`: the shifted-register form with no shift.
pub fn logical_reg(
    sink: &mut impl WordSink,
    op: LogicalOp,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
) {
    logical_shifted(sink, op, rd, rn, Shifted::reg(size, rm));
}

/// `and`/`orr`/`eor rd, rn, #imm` at the size of `imm`; `rd` may be SP.
pub fn and_orr_eor_imm(
    sink: &mut impl WordSink,
    op: LogicalImmOp,
    rd: GprSp,
    rn: GprZr,
    imm: LogicalImm,
) {
    let word = IMM | imm.size().sf() | ((op as u32) << 29) | imm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `ands rd, rn, #imm` at the size of `imm` (`tst` when `rd` is ZR).
pub fn ands_imm(sink: &mut impl WordSink, rd: GprZr, rn: GprZr, imm: LogicalImm) {
    let word = IMM | imm.size().sf() | (3 << 29) | imm.fields();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}
