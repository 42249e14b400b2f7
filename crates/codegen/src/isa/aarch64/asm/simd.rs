//! Advanced SIMD (NEON) on full 128-bit registers: three-register arithmetic, logic and
//! compares, one-register operations, reductions across lanes, shifts by an immediate,
//! lane copies between the register files, table lookups, and the widening and narrowing
//! forms that read or write one half.
//!
//! Every form takes the lane size as an [`Elem`]; a float form reads `S` as single and `D`
//! as double precision. Forms with a `Q` bit are emitted with it set (all 128 bits) unless
//! the doc says a form reads or writes a half.

use super::regs::{Gpr, GprZr, Vreg};
use super::{rd_field, rm_field, rn_field, WordSink};

/// A lane (element) size: 8, 16, 32 or 64 bits (the `size` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    B = 0,
    H = 1,
    S = 2,
    D = 3,
}

impl Elem {
    /// Bits per lane.
    pub const fn bits(self) -> u32 {
        8 << self as u32
    }

    /// The `.16b`, `.8h`, `.4s`, `.2d` suffix.
    pub const fn suffix(self) -> &'static str {
        match self {
            Elem::B => "16b",
            Elem::H => "8h",
            Elem::S => "4s",
            Elem::D => "2d",
        }
    }

    /// The `imm5` field of the copy forms naming lane `lane` of this size.
    const fn imm5(self, lane: u8) -> u32 {
        let s = self as u32;
        ((lane as u32) << (s + 1) | 1 << s) & 0x1f
    }

    /// The float `sz` bit: 1 for double precision.
    const fn sz(self) -> u32 {
        (self as u32) & 1
    }
}

const Q: u32 = 1 << 30;

/// Three-register operations (`op vd.T, vn.T, vm.T`): the integer "three same" group
/// (`U`, `opcode`, and a fixed `size` for the logical ones) and the float one (`U`, `a`,
/// `opcode`; `sz` from the lane size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VecBinOp {
    Add,
    Sub,
    Mul,
    Sqadd,
    Uqadd,
    Sqsub,
    Uqsub,
    Urhadd,
    Smax,
    Umax,
    Smin,
    Umin,
    /// Signed (unsigned) shift left by each lane of `vm` (negative: right).
    Sshl,
    Ushl,
    Cmeq,
    /// Signed greater than; `Cmhi` unsigned; `Cmge`, `Cmhs` or equal.
    Cmgt,
    Cmhi,
    Cmge,
    Cmhs,
    /// Pairwise add: adjacent lanes of `vn` then of `vm`.
    Addp,
    And,
    Bic,
    Orr,
    Orn,
    Eor,
    /// `vd = vd ? vn : vm` bitwise (`vd` is read).
    Bsl,
    Fadd,
    Fsub,
    Fmul,
    Fdiv,
    Fmax,
    Fmin,
    Fcmeq,
    Fcmge,
    Fcmgt,
    /// `vd += vn * vm`, rounded once (`vd` is read).
    Fmla,
    /// Signed saturating rounding doubling multiply returning the high half.
    Sqrdmulh,
    /// The even (odd) lanes of `vn` then `vm`; the low (high) halves' lanes interleaved.
    Uzp1,
    Uzp2,
    Zip1,
    Zip2,
}

impl VecBinOp {
    /// The instruction word without registers: the "three same" group's (the permutes
    /// have their own).
    fn word(self, e: Elem) -> u32 {
        let perm = |opc: u32| 0x0E00_0800 | Q | (e as u32) << 22 | opc << 12;
        match self {
            VecBinOp::Uzp1 => perm(0b001),
            VecBinOp::Uzp2 => perm(0b101),
            VecBinOp::Zip1 => perm(0b011),
            VecBinOp::Zip2 => perm(0b111),
            _ => {
                let (u, opcode, size) = self.fields(e);
                0x0E20_0400 | Q | u << 29 | size << 22 | opcode << 11
            }
        }
    }

    /// `(U, opcode, size)` of a "three same" op: `size` is the lane size's, or fixed for
    /// logic (the float ones put `a` in its high bit).
    fn fields(self, e: Elem) -> (u32, u32, u32) {
        use VecBinOp::*;
        let s = e as u32;
        let f = |a: u32| a << 1 | e.sz();
        match self {
            Add => (0, 0b10000, s),
            Sub => (1, 0b10000, s),
            Mul => (0, 0b10011, s),
            Sqadd => (0, 0b00001, s),
            Uqadd => (1, 0b00001, s),
            Sqsub => (0, 0b00101, s),
            Uqsub => (1, 0b00101, s),
            Urhadd => (1, 0b00010, s),
            Smax => (0, 0b01100, s),
            Umax => (1, 0b01100, s),
            Smin => (0, 0b01101, s),
            Umin => (1, 0b01101, s),
            Sshl => (0, 0b01000, s),
            Ushl => (1, 0b01000, s),
            Cmeq => (1, 0b10001, s),
            Cmgt => (0, 0b00110, s),
            Cmhi => (1, 0b00110, s),
            Cmge => (0, 0b00111, s),
            Cmhs => (1, 0b00111, s),
            Addp => (0, 0b10111, s),
            And => (0, 0b00011, 0),
            Bic => (0, 0b00011, 1),
            Orr => (0, 0b00011, 2),
            Orn => (0, 0b00011, 3),
            Eor => (1, 0b00011, 0),
            Bsl => (1, 0b00011, 1),
            Fadd => (0, 0b11010, f(0)),
            Fsub => (0, 0b11010, f(1)),
            Fmul => (1, 0b11011, f(0)),
            Fdiv => (1, 0b11111, f(0)),
            Fmax => (0, 0b11110, f(0)),
            Fmin => (0, 0b11110, f(1)),
            Fcmeq => (0, 0b11100, f(0)),
            Fcmge => (1, 0b11100, f(0)),
            Fcmgt => (1, 0b11100, f(1)),
            Fmla => (0, 0b11001, f(0)),
            Sqrdmulh => (1, 0b10110, s),
            Uzp1 | Uzp2 | Zip1 | Zip2 => unreachable!("permutes are not in the group"),
        }
    }
}

/// `op vd.T, vn.T, vm.T`.
pub fn vec_binary(sink: &mut impl WordSink, op: VecBinOp, e: Elem, rd: Vreg, rn: Vreg, rm: Vreg) {
    let word = op.word(e);
    sink.put_word(word | rm_field(rm.enc()) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `mov vd.16b, vn.16b` (`orr vd.16b, vn.16b, vn.16b`): all 128 bits.
pub fn vec_mov(sink: &mut impl WordSink, rd: Vreg, rn: Vreg) {
    vec_binary(sink, VecBinOp::Orr, Elem::B, rd, rn, rn);
}

/// One-register operations (`op vd.T, vn.T`; the "two-register miscellaneous" group:
/// `U`, `opcode`, and a fixed or float `size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VecUnaryOp {
    Abs,
    Neg,
    /// Bitwise not (`mvn`; byte lanes).
    Not,
    /// Population count per byte.
    Cnt,
    /// The bytes of each 16-, 32- or 64-bit lane reversed (byte lanes: `size` 0).
    Rev16,
    Rev32,
    Rev64,
    /// Compare against zero: `= 0`, `> 0`, `>= 0`, `< 0`, `<= 0` (signed).
    Cmeq0,
    Cmgt0,
    Cmge0,
    Cmlt0,
    Cmle0,
    /// Pairwise add long: adjacent lanes of this size summed into lanes twice as wide.
    Saddlp,
    Uaddlp,
    Fabs,
    Fneg,
    Fsqrt,
    /// Round to nearest, ties to even; towards +inf; towards -inf; towards zero.
    Frintn,
    Frintp,
    Frintm,
    Frintz,
    Scvtf,
    Ucvtf,
    /// To integer, rounding towards zero, saturating (NaN gives 0).
    Fcvtzs,
    Fcvtzu,
}

impl VecUnaryOp {
    /// `(U, opcode, size)`.
    fn fields(self, e: Elem) -> (u32, u32, u32) {
        use VecUnaryOp::*;
        let s = e as u32;
        let f = |hi: u32| hi << 1 | e.sz();
        match self {
            Abs => (0, 0b01011, s),
            Neg => (1, 0b01011, s),
            Not => (1, 0b00101, 0),
            Cnt => (0, 0b00101, 0),
            Rev16 => (0, 0b00001, 0),
            Rev32 => (1, 0b00000, 0),
            Rev64 => (0, 0b00000, 0),
            Cmeq0 => (0, 0b01001, s),
            Cmgt0 => (0, 0b01000, s),
            Cmge0 => (1, 0b01000, s),
            Cmlt0 => (0, 0b01010, s),
            Cmle0 => (1, 0b01001, s),
            Saddlp => (0, 0b00010, s),
            Uaddlp => (1, 0b00010, s),
            Fabs => (0, 0b01111, f(1)),
            Fneg => (1, 0b01111, f(1)),
            Fsqrt => (1, 0b11111, f(1)),
            Frintn => (0, 0b11000, f(0)),
            Frintp => (0, 0b11000, f(1)),
            Frintm => (0, 0b11001, f(0)),
            Frintz => (0, 0b11001, f(1)),
            Scvtf => (0, 0b11101, f(0)),
            Ucvtf => (1, 0b11101, f(0)),
            Fcvtzs => (0, 0b11011, f(1)),
            Fcvtzu => (1, 0b11011, f(1)),
        }
    }
}

/// `op vd.T, vn.T`.
pub fn vec_unary(sink: &mut impl WordSink, op: VecUnaryOp, e: Elem, rd: Vreg, rn: Vreg) {
    let (u, opcode, size) = op.fields(e);
    let word = 0x0E20_0800 | Q | u << 29 | size << 22 | opcode << 12;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// Narrowing moves: each lane of `vn` (of size `e`) to half its width, into the low half
/// of `vd` (upper half zeroed), or with `high` into the upper half (the low half kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NarrowOp {
    /// Signed saturating; unsigned saturating of unsigned lanes; unsigned saturating of
    /// signed lanes.
    Sqxtn,
    Uqxtn,
    Sqxtun,
    /// The precision halved (`fcvtn`, lanes of `e` = `D`).
    Fcvtn,
}

/// `op vd.Tb, vn.Ta` (`op2` with `high`), `e` the source lane size.
pub fn vec_narrow(sink: &mut impl WordSink, op: NarrowOp, high: bool, e: Elem, rd: Vreg, rn: Vreg) {
    let narrow = e as u32 - 1;
    let (u, opcode, size) = match op {
        NarrowOp::Sqxtn => (0, 0b10100, narrow),
        NarrowOp::Uqxtn => (1, 0b10100, narrow),
        NarrowOp::Sqxtun => (1, 0b10010, narrow),
        NarrowOp::Fcvtn => (0, 0b10110, e.sz()),
    };
    let word = 0x0E20_0800 | u32::from(high) << 30 | u << 29 | size << 22 | opcode << 12;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `fcvtl vd.2d, vn.2s` (`fcvtl2` with `high`): the low (high) two singles to doubles.
pub fn fcvtl(sink: &mut impl WordSink, high: bool, rd: Vreg, rn: Vreg) {
    let word = 0x0E21_7800 | u32::from(high) << 30 | 1 << 22;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// Reductions across the lanes into lane 0 (the rest zeroed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AcrossOp {
    Addv,
    Umaxv,
    Uminv,
}

/// `op <v>d, vn.T` over all 128 bits, or over the low 64 with `half` (`e` is `B`, `H`,
/// or `S` without `half`).
pub fn vec_across(sink: &mut impl WordSink, op: AcrossOp, e: Elem, half: bool, rd: Vreg, rn: Vreg) {
    let (u, opcode) = match op {
        AcrossOp::Addv => (0, 0b11011),
        AcrossOp::Umaxv => (1, 0b01010),
        AcrossOp::Uminv => (1, 0b11010),
    };
    let q = if half { 0 } else { Q };
    let word = 0x0E30_0800 | q | u << 29 | (e as u32) << 22 | opcode << 12;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `addp dd, vn.2d`: the sum of both 64-bit lanes into lane 0.
pub fn addp_scalar(sink: &mut impl WordSink, rd: Vreg, rn: Vreg) {
    sink.put_word(0x5EF1_B800 | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// Shifts by an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftImmOp {
    /// Left, by 0 to bits - 1.
    Shl,
    /// Right, signed or unsigned, by 1 to bits.
    Sshr,
    Ushr,
}

/// `op vd.T, vn.T, #amount` (in range for the op, see [`ShiftImmOp`]).
pub fn vec_shift_imm(
    sink: &mut impl WordSink,
    op: ShiftImmOp,
    e: Elem,
    rd: Vreg,
    rn: Vreg,
    amount: u32,
) {
    let bits = e.bits();
    let (u, opcode, immhb) = match op {
        ShiftImmOp::Shl => (0, 0b01010, bits + amount),
        ShiftImmOp::Sshr => (0, 0b00000, 2 * bits - amount),
        ShiftImmOp::Ushr => (1, 0b00000, 2 * bits - amount),
    };
    debug_assert!(match op {
        ShiftImmOp::Shl => amount < bits,
        _ => (1..=bits).contains(&amount),
    });
    let word = 0x0F00_0400 | Q | u << 29 | immhb << 16 | opcode << 11;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `sxtl`/`uxtl` (`sshll`/`ushll #0`; `2` with `high`): the low (high) half's lanes of
/// size `e` (`B`, `H`, `S`) extended to twice their width.
pub fn vec_widen(sink: &mut impl WordSink, signed: bool, high: bool, e: Elem, rd: Vreg, rn: Vreg) {
    let word = 0x0F00_A400 | u32::from(high) << 30 | u32::from(!signed) << 29 | e.bits() << 16;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `dup vd.T, wn/xn`: every lane the low bits of a general register.
pub fn dup_gpr(sink: &mut impl WordSink, e: Elem, rd: Vreg, rn: GprZr) {
    let word = 0x0E00_0C00 | Q | e.imm5(0) << 16;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `dup vd.T, vn.T[lane]`: every lane lane `lane` of `vn`.
pub fn dup_elem(sink: &mut impl WordSink, e: Elem, rd: Vreg, rn: Vreg, lane: u8) {
    let word = 0x0E00_0400 | Q | e.imm5(lane) << 16;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `dup <v>d, vn.T[lane]` (the scalar form, `mov`): lane `lane` of `vn` into lane 0, the
/// rest zeroed.
pub fn dup_scalar(sink: &mut impl WordSink, e: Elem, rd: Vreg, rn: Vreg, lane: u8) {
    let word = 0x5E00_0400 | e.imm5(lane) << 16;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `umov wd/xd, vn.T[lane]` (an `x` destination for `D` lanes): lane `lane` zero-extended.
pub fn umov(sink: &mut impl WordSink, e: Elem, rd: Gpr, rn: Vreg, lane: u8) {
    let q = if e == Elem::D { Q } else { 0 };
    let word = 0x0E00_3C00 | q | e.imm5(lane) << 16;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `ins vd.T[lane], wn/xn` (`mov`): lane `lane` from a general register, the rest kept.
pub fn ins_gpr(sink: &mut impl WordSink, e: Elem, rd: Vreg, lane: u8, rn: GprZr) {
    let word = 0x4E00_1C00 | e.imm5(lane) << 16;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `ins vd.T[lane], vn.T[src]` (`mov`): lane `lane` from lane `src` of `vn`, the rest kept.
pub fn ins_elem(sink: &mut impl WordSink, e: Elem, rd: Vreg, lane: u8, rn: Vreg, src: u8) {
    let imm4 = u32::from(src) << (e as u32);
    let word = 0x6E00_0400 | e.imm5(lane) << 16 | imm4 << 11;
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `tbl vd.16b, {vn.16b}, vm.16b`: byte `i` is byte `vm[i]` of `vn`, or 0 if that is 16 or
/// more.
pub fn tbl(sink: &mut impl WordSink, rd: Vreg, rn: Vreg, rm: Vreg) {
    let word = 0x0E00_0000 | Q;
    sink.put_word(word | rm_field(rm.enc()) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `ext vd.16b, vn.16b, vm.16b, #k`: bytes `k..16` of `vn` then `0..k` of `vm`.
pub fn ext(sink: &mut impl WordSink, rd: Vreg, rn: Vreg, rm: Vreg, k: u8) {
    debug_assert!(k < 16);
    let word = 0x2E00_0000 | Q | u32::from(k) << 11;
    sink.put_word(word | rm_field(rm.enc()) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// `movi vd.2d, #0` (`ones` false) or `#-1` (every bit set).
pub fn movi_fill(sink: &mut impl WordSink, ones: bool, rd: Vreg) {
    let abcdefgh = if ones { 0x7_0000 | 0x3E0 } else { 0 };
    sink.put_word(0x6F00_E400 | abcdefgh | rd_field(rd.enc()));
}

/// Widening multiplies: the low (high) half's lanes of size `e` (`B`, `H`, `S`)
/// multiplied into lanes twice as wide (`smull`, `umull`; `2` with `high`).
pub fn mull(
    sink: &mut impl WordSink,
    signed: bool,
    high: bool,
    e: Elem,
    rd: Vreg,
    rn: Vreg,
    rm: Vreg,
) {
    let word = 0x0E20_C000 | u32::from(high) << 30 | u32::from(!signed) << 29 | (e as u32) << 22;
    sink.put_word(word | rm_field(rm.enc()) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(f: impl FnOnce(&mut Vec<u8>)) -> u32 {
        let mut v = Vec::new();
        f(&mut v);
        u32::from_le_bytes(v[..4].try_into().unwrap())
    }

    fn v(n: u8) -> Vreg {
        Vreg::new(n).unwrap()
    }

    /// Words checked with `aarch64-linux-gnu-as`/`objdump`.
    #[test]
    fn encodings_match_the_assembler() {
        let (a, b, c) = (v(0), v(1), v(2));
        assert_eq!(
            word(|s| vec_binary(s, VecBinOp::Fadd, Elem::S, a, b, c)),
            0x4E22_D420
        );
        assert_eq!(
            word(|s| vec_binary(s, VecBinOp::Add, Elem::D, a, b, c)),
            0x4EE2_8420
        );
        assert_eq!(word(|s| vec_mov(s, a, b)), 0x4EA1_1C20);
        assert_eq!(
            word(|s| vec_unary(s, VecUnaryOp::Abs, Elem::S, a, b)),
            0x4EA0_B820
        );
        assert_eq!(
            word(|s| vec_shift_imm(s, ShiftImmOp::Ushr, Elem::S, a, b, 1)),
            0x6F3F_0420
        );
        assert_eq!(
            word(|s| dup_gpr(s, Elem::S, a, Gpr::X1.into())),
            0x4E04_0C20
        );
        assert_eq!(word(|s| umov(s, Elem::S, Gpr::X0, b, 1)), 0x0E0C_3C20);
        assert_eq!(word(|s| umov(s, Elem::D, Gpr::X0, b, 1)), 0x4E18_3C20);
        assert_eq!(word(|s| movi_fill(s, false, a)), 0x6F00_E400);
    }
}
