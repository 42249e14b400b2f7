//! Multiply and divide: `madd`/`msub` (`mul`/`mneg` with ZR as the addend), the widening
//! `smaddl`/`smsubl`/`umaddl`/`umsubl` (`smull`/`smnegl`/`umull`/`umnegl`), the high halves
//! `smulh`/`umulh`, and `sdiv`/`udiv`.

use super::regs::{GprZr, Size};
use super::{ra_field, rd_field, rm_field, rn_field, WordSink};

/// Multiply-add or multiply-subtract (the `o0` bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaddOp {
    /// `rd = ra + rn * rm`.
    Madd,
    /// `rd = ra - rn * rm`.
    Msub,
}

impl MaddOp {
    /// Both operations.
    pub const ALL: [MaddOp; 2] = [MaddOp::Madd, MaddOp::Msub];

    fn o0(self) -> u32 {
        match self {
            MaddOp::Madd => 0,
            MaddOp::Msub => 1 << 15,
        }
    }
}

/// Signedness of a widening multiply or a division.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signedness {
    Signed,
    Unsigned,
}

impl Signedness {
    /// Both.
    pub const ALL: [Signedness; 2] = [Signedness::Signed, Signedness::Unsigned];
}

const THREE_SOURCE: u32 = 0x1B00_0000;

/// `madd`/`msub rd, rn, rm, ra` (`mul`/`mneg` when `ra` is ZR).
pub fn madd(
    sink: &mut impl WordSink,
    op: MaddOp,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
    ra: GprZr,
) {
    let word = THREE_SOURCE | size.sf() | op.o0() | rm_field(rm.enc()) | ra_field(ra.enc());
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `smaddl`/`umaddl` (`Madd`) or `smsubl`/`umsubl` (`Msub`) `xd, wn, wm, xa`: a 32×32→64-bit
/// multiply added to or subtracted from a 64-bit register (`smull`, `umull`, `smnegl`,
/// `umnegl` when `ra` is ZR).
pub fn madd_long(
    sink: &mut impl WordSink,
    op: MaddOp,
    sign: Signedness,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
    ra: GprZr,
) {
    let u = match sign {
        Signedness::Signed => 0,
        Signedness::Unsigned => 1 << 23,
    };
    let word = THREE_SOURCE | (1 << 31) | (1 << 21) | u | op.o0() | rm_field(rm.enc());
    sink.put_word(word | ra_field(ra.enc()) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `smulh`/`umulh xd, xn, xm`: the high 64 bits of the 128-bit product.
pub fn mul_high(sink: &mut impl WordSink, sign: Signedness, rd: GprZr, rn: GprZr, rm: GprZr) {
    let u = match sign {
        Signedness::Signed => 0,
        Signedness::Unsigned => 1 << 23,
    };
    // Ra is 31 (printed nowhere).
    let word = THREE_SOURCE | (1 << 31) | (2 << 21) | u | rm_field(rm.enc()) | ra_field(31);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `sdiv`/`udiv rd, rn, rm` (division by zero gives zero; no trap).
pub fn div(
    sink: &mut impl WordSink,
    sign: Signedness,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
) {
    let o1 = match sign {
        Signedness::Signed => 1 << 10,
        Signedness::Unsigned => 0,
    };
    let word = 0x1AC0_0800 | size.sf() | o1 | rm_field(rm.enc());
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}
