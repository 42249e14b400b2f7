//! Shifts by a register (`lslv`, `lsrv`, `asrv`, `rorv`, printed `lsl`/`lsr`/`asr`/`ror`)
//! and `extr` (a rotate by an immediate when both sources are the same register: `ror`).
//!
//! Shifts by an immediate are bitfield moves; see [`super::bitfield::Bitfield`].

use super::operands::ShiftAmount;
use super::regs::{GprZr, Size};
use super::{rd_field, rm_field, rn_field, WordSink};

/// Shifts by a register amount, taken modulo the width (the `op2` field of the
/// 2-source data-processing group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftOp {
    Lslv = 0,
    Lsrv = 1,
    Asrv = 2,
    Rorv = 3,
}

impl ShiftOp {
    /// All operations.
    pub const ALL: [ShiftOp; 4] = [ShiftOp::Lslv, ShiftOp::Lsrv, ShiftOp::Asrv, ShiftOp::Rorv];
}

/// `lslv`/`lsrv`/`asrv`/`rorv rd, rn, rm`.
pub fn shift_reg(
    sink: &mut impl WordSink,
    op: ShiftOp,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
) {
    let word = 0x1AC0_2000 | size.sf() | ((op as u32) << 10) | rm_field(rm.enc());
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `extr rd, rn, rm, #lsb` at the size of `lsb`: bits `lsb..lsb + width` of `rn:rm`
/// (`ror rd, rn, #lsb` when `rn == rm`).
pub fn extr(sink: &mut impl WordSink, rd: GprZr, rn: GprZr, rm: GprZr, lsb: ShiftAmount) {
    // N equals sf.
    let sf_n = match lsb.size() {
        Size::S32 => 0,
        Size::S64 => (1 << 31) | (1 << 22),
    };
    let word = 0x1380_0000 | sf_n | rm_field(rm.enc()) | (lsb.get() << 10);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}
