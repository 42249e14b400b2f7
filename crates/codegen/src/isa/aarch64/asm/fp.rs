//! Scalar floating point, single and double precision: arithmetic, square root, rounding,
//! fused multiply-add, compares, conditional select, precision conversion, integer
//! conversions, and `fmov` between registers, from general registers and of an immediate.

use super::cond::Cond;
use super::fp_imm::FpImm8;
use super::regs::{FpSize, GprZr, Size, Vreg};
use super::{ra_field, rd_field, rm_field, rn_field, WordSink};

/// Two-source arithmetic (the `opcode` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpBinOp {
    Fmul = 0,
    Fdiv = 1,
    Fadd = 2,
    Fsub = 3,
    /// Maximum; NaN if either operand is NaN.
    Fmax = 4,
    Fmin = 5,
    /// IEEE 754 maxNum: a quiet NaN operand loses to a number.
    Fmaxnm = 6,
    Fminnm = 7,
    /// `-(rn * rm)`.
    Fnmul = 8,
}

impl FpBinOp {
    /// All operations.
    pub const ALL: [FpBinOp; 9] = [
        FpBinOp::Fmul,
        FpBinOp::Fdiv,
        FpBinOp::Fadd,
        FpBinOp::Fsub,
        FpBinOp::Fmax,
        FpBinOp::Fmin,
        FpBinOp::Fmaxnm,
        FpBinOp::Fminnm,
        FpBinOp::Fnmul,
    ];
}

/// `op rd, rn, rm`.
pub fn fp_binary(
    sink: &mut impl WordSink,
    op: FpBinOp,
    size: FpSize,
    rd: Vreg,
    rn: Vreg,
    rm: Vreg,
) {
    let word = 0x1E20_0800 | size.ftype() | rm_field(rm.enc()) | ((op as u32) << 12);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// One-source operations of one precision (the `opcode` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpUnaryOp {
    /// Register move.
    Fmov = 0b000000,
    Fabs = 0b000001,
    Fneg = 0b000010,
    Fsqrt = 0b000011,
    /// Round to nearest, ties to even.
    Frintn = 0b001000,
    /// Round towards plus infinity.
    Frintp = 0b001001,
    /// Round towards minus infinity.
    Frintm = 0b001010,
    /// Round towards zero.
    Frintz = 0b001011,
    /// Round to nearest, ties away from zero.
    Frinta = 0b001100,
    /// Round in the current mode, raising inexact.
    Frintx = 0b001110,
    /// Round in the current mode.
    Frinti = 0b001111,
}

impl FpUnaryOp {
    /// All operations.
    pub const ALL: [FpUnaryOp; 11] = [
        FpUnaryOp::Fmov,
        FpUnaryOp::Fabs,
        FpUnaryOp::Fneg,
        FpUnaryOp::Fsqrt,
        FpUnaryOp::Frintn,
        FpUnaryOp::Frintp,
        FpUnaryOp::Frintm,
        FpUnaryOp::Frintz,
        FpUnaryOp::Frinta,
        FpUnaryOp::Frintx,
        FpUnaryOp::Frinti,
    ];
}

const ONE_SOURCE: u32 = 0x1E20_4000;

/// `op rd, rn`.
pub fn fp_unary(sink: &mut impl WordSink, op: FpUnaryOp, size: FpSize, rd: Vreg, rn: Vreg) {
    let word = ONE_SOURCE | size.ftype() | ((op as u32) << 15);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `fcvt rd, rn`: converts from precision `from` to the other one.
pub fn fcvt(sink: &mut impl WordSink, from: FpSize, rd: Vreg, rn: Vreg) {
    // opcode 0001:opc, opc naming the destination type.
    let opcode = match from {
        FpSize::F32 => 0b000101,
        FpSize::F64 => 0b000100,
    };
    let word = ONE_SOURCE | from.ftype() | (opcode << 15);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// Fused multiply-add and its negations (`o1` and `o0` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpFmaOp {
    /// `ra + rn * rm`.
    Fmadd,
    /// `ra - rn * rm`.
    Fmsub,
    /// `-ra - rn * rm`.
    Fnmadd,
    /// `-ra + rn * rm`.
    Fnmsub,
}

impl FpFmaOp {
    /// All operations.
    pub const ALL: [FpFmaOp; 4] = [
        FpFmaOp::Fmadd,
        FpFmaOp::Fmsub,
        FpFmaOp::Fnmadd,
        FpFmaOp::Fnmsub,
    ];
}

/// `fmadd`/`fmsub`/`fnmadd`/`fnmsub rd, rn, rm, ra`, rounded once.
pub fn fp_fma(
    sink: &mut impl WordSink,
    op: FpFmaOp,
    size: FpSize,
    rd: Vreg,
    rn: Vreg,
    rm: Vreg,
    ra: Vreg,
) {
    let (o1, o0) = match op {
        FpFmaOp::Fmadd => (0, 0),
        FpFmaOp::Fmsub => (0, 1),
        FpFmaOp::Fnmadd => (1, 0),
        FpFmaOp::Fnmsub => (1, 1),
    };
    let word = 0x1F00_0000 | size.ftype() | (o1 << 21) | rm_field(rm.enc()) | (o0 << 15);
    sink.put_word(word | ra_field(ra.enc()) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// Quiet or signaling compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FcmpOp {
    /// Raises invalid only for signaling NaNs.
    Fcmp,
    /// Raises invalid for any NaN.
    Fcmpe,
}

impl FcmpOp {
    /// Both.
    pub const ALL: [FcmpOp; 2] = [FcmpOp::Fcmp, FcmpOp::Fcmpe];

    fn bits(self) -> u32 {
        match self {
            FcmpOp::Fcmp => 0,
            FcmpOp::Fcmpe => 0b10000,
        }
    }
}

/// `fcmp`/`fcmpe rn, rm`: sets NZCV (unordered is `C` and `V`).
pub fn fcmp(sink: &mut impl WordSink, op: FcmpOp, size: FpSize, rn: Vreg, rm: Vreg) {
    let word = 0x1E20_2000 | size.ftype() | rm_field(rm.enc()) | rn_field(rn.enc());
    sink.put_word(word | op.bits());
}

/// `fcmp`/`fcmpe rn, #0.0`.
pub fn fcmp_zero(sink: &mut impl WordSink, op: FcmpOp, size: FpSize, rn: Vreg) {
    let word = 0x1E20_2000 | size.ftype() | rn_field(rn.enc()) | 0b01000;
    sink.put_word(word | op.bits());
}

/// `fcsel rd, rn, rm, cond`.
pub fn fcsel(sink: &mut impl WordSink, size: FpSize, rd: Vreg, rn: Vreg, rm: Vreg, cond: Cond) {
    let word = 0x1E20_0C00 | size.ftype() | rm_field(rm.enc()) | (cond.enc() << 12);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// Conversions between integer and FP registers: `sf`, `ftype`, `rmode` and `opcode`.
const fn int_fp(int: Size, fp: FpSize, rmode: u32, opcode: u32) -> u32 {
    0x1E20_0000 | int.sf() | fp.ftype() | (rmode << 19) | (opcode << 16)
}

/// Integer to FP conversion, signed or unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntToFp {
    Scvtf,
    Ucvtf,
}

/// `scvtf`/`ucvtf rd, rn`: the `int`-sized integer in `rn` to the nearest `fp` value.
pub fn int_to_fp(
    sink: &mut impl WordSink,
    op: IntToFp,
    int: Size,
    fp: FpSize,
    rd: Vreg,
    rn: GprZr,
) {
    let opcode = match op {
        IntToFp::Scvtf => 0b010,
        IntToFp::Ucvtf => 0b011,
    };
    sink.put_word(int_fp(int, fp, 0, opcode) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// FP to integer conversion rounding towards zero, signed or unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpToInt {
    Fcvtzs,
    Fcvtzu,
}

/// `fcvtzs`/`fcvtzu rd, rn`: saturating; NaN gives 0.
pub fn fp_to_int(
    sink: &mut impl WordSink,
    op: FpToInt,
    int: Size,
    fp: FpSize,
    rd: GprZr,
    rn: Vreg,
) {
    let opcode = match op {
        FpToInt::Fcvtzs => 0b000,
        FpToInt::Fcvtzu => 0b001,
    };
    sink.put_word(int_fp(int, fp, 0b11, opcode) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// The integer width that `fmov` pairs with an FP width (`w`↔`s`, `x`↔`d`).
const fn gpr_size(fp: FpSize) -> Size {
    match fp {
        FpSize::F32 => Size::S32,
        FpSize::F64 => Size::S64,
    }
}

/// `fmov wd, sn` or `fmov xd, dn`: copies the bits.
pub fn fmov_to_gpr(sink: &mut impl WordSink, size: FpSize, rd: GprZr, rn: Vreg) {
    let word = int_fp(gpr_size(size), size, 0, 0b110);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `fmov sd, wn` or `fmov dd, xn`: copies the bits.
pub fn fmov_from_gpr(sink: &mut impl WordSink, size: FpSize, rd: Vreg, rn: GprZr) {
    let word = int_fp(gpr_size(size), size, 0, 0b111);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `fmov rd, #imm`.
pub fn fmov_imm(sink: &mut impl WordSink, size: FpSize, rd: Vreg, imm: FpImm8) {
    let word = 0x1E20_1000 | size.ftype() | (u32::from(imm.bits()) << 13);
    sink.put_word(word | rd_field(rd.enc()));
}
