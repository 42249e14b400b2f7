//! Condition codes and the conditional forms: `csel`, `csinc`, `csinv`, `csneg` (and through
//! them `cset`, `csetm`, `cinc`, `cinv`, `cneg`), `ccmp`/`ccmn` with a register or a 5-bit
//! immediate.
//!
//! # Contract
//!
//! [`Cond`] has the fourteen conditions that test the flags; `al`/`nv` ("always") are left
//! out, so every `Cond` has an inverse. The aliases are the underlying encodings with the
//! *inverted* condition: `cset rd, c` is `csinc rd, zr, zr, !c`, `csetm rd, c` is
//! `csinv rd, zr, zr, !c`, `cinc rd, rn, c` is `csinc rd, rn, rn, !c`, and so on.

use super::operands::UImm5;
use super::regs::{GprZr, Size};
use super::{rd_field, rm_field, rn_field, WordSink};

/// A condition on the NZCV flags, numbered as encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// Equal (Z).
    Eq = 0,
    /// Not equal.
    Ne = 1,
    /// Unsigned higher or same (C; also called `cs`).
    Hs = 2,
    /// Unsigned lower (!C; also called `cc`).
    Lo = 3,
    /// Negative (N).
    Mi = 4,
    /// Positive or zero.
    Pl = 5,
    /// Overflow (V).
    Vs = 6,
    /// No overflow.
    Vc = 7,
    /// Unsigned higher.
    Hi = 8,
    /// Unsigned lower or same.
    Ls = 9,
    /// Signed greater or equal.
    Ge = 10,
    /// Signed less than.
    Lt = 11,
    /// Signed greater than.
    Gt = 12,
    /// Signed less or equal.
    Le = 13,
}

impl Cond {
    /// All conditions in encoding order.
    pub const ALL: [Cond; 14] = [
        Cond::Eq,
        Cond::Ne,
        Cond::Hs,
        Cond::Lo,
        Cond::Mi,
        Cond::Pl,
        Cond::Vs,
        Cond::Vc,
        Cond::Hi,
        Cond::Ls,
        Cond::Ge,
        Cond::Lt,
        Cond::Gt,
        Cond::Le,
    ];

    /// The condition that holds exactly when this one does not (flip of the low bit).
    pub const fn invert(self) -> Cond {
        Cond::ALL[(self as usize) ^ 1]
    }

    /// The 4-bit encoding.
    pub const fn enc(self) -> u32 {
        self as u32
    }

    /// Lower-case name (`hs`, `lo` rather than `cs`, `cc`).
    pub const fn name(self) -> &'static str {
        [
            "eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le",
        ][self as usize]
    }
}

/// The four conditional selects: `rd = cond ? rn : f(rm)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CselOp {
    /// `f(rm) = rm`.
    Csel,
    /// `f(rm) = rm + 1`.
    Csinc,
    /// `f(rm) = !rm`.
    Csinv,
    /// `f(rm) = -rm`.
    Csneg,
}

impl CselOp {
    /// All operations.
    pub const ALL: [CselOp; 4] = [CselOp::Csel, CselOp::Csinc, CselOp::Csinv, CselOp::Csneg];
}

/// `csel`/`csinc`/`csinv`/`csneg rd, rn, rm, cond`.
pub fn csel(
    sink: &mut impl WordSink,
    op: CselOp,
    size: Size,
    rd: GprZr,
    rn: GprZr,
    rm: GprZr,
    cond: Cond,
) {
    let (op_bit, op2) = match op {
        CselOp::Csel => (0, 0),
        CselOp::Csinc => (0, 1),
        CselOp::Csinv => (1 << 30, 0),
        CselOp::Csneg => (1 << 30, 1),
    };
    let word = 0x1A80_0000 | size.sf() | op_bit | rm_field(rm.enc()) | (cond.enc() << 12);
    sink.put_word(word | (op2 << 10) | rn_field(rn.enc()) | rd_field(rd.enc()));
}

/// The flags a conditional compare sets when its condition fails (`#nzcv`, 0–15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Nzcv(u8);

impl Nzcv {
    /// The four flags.
    pub const fn new(n: bool, z: bool, c: bool, v: bool) -> Nzcv {
        Nzcv(((n as u8) << 3) | ((z as u8) << 2) | ((c as u8) << 1) | v as u8)
    }

    /// From the 4-bit field, or `None` if `bits > 15`.
    pub const fn from_bits(bits: u8) -> Option<Nzcv> {
        if bits < 16 {
            Some(Nzcv(bits))
        } else {
            None
        }
    }

    /// The 4-bit field.
    pub const fn bits(self) -> u8 {
        self.0
    }
}

/// Conditional compare (subtract, `Ccmp`) or compare negative (add, `Ccmn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcmpOp {
    Ccmn,
    Ccmp,
}

impl CcmpOp {
    /// Both operations.
    pub const ALL: [CcmpOp; 2] = [CcmpOp::Ccmn, CcmpOp::Ccmp];

    fn bits(self) -> u32 {
        match self {
            CcmpOp::Ccmn => 0x3A40_0000,
            CcmpOp::Ccmp => 0x7A40_0000,
        }
    }
}

/// `ccmp`/`ccmn rn, rm, #nzcv, cond`: if `cond` holds, set the flags from comparing `rn`
/// with `rm`; otherwise set them to `nzcv`.
pub fn ccmp_reg(
    sink: &mut impl WordSink,
    op: CcmpOp,
    size: Size,
    rn: GprZr,
    rm: GprZr,
    nzcv: Nzcv,
    cond: Cond,
) {
    let word = op.bits() | size.sf() | rm_field(rm.enc()) | (cond.enc() << 12);
    sink.put_word(word | rn_field(rn.enc()) | u32::from(nzcv.0));
}

/// `ccmp`/`ccmn rn, #imm, #nzcv, cond`.
pub fn ccmp_imm(
    sink: &mut impl WordSink,
    op: CcmpOp,
    size: Size,
    rn: GprZr,
    imm: UImm5,
    nzcv: Nzcv,
    cond: Cond,
) {
    let word = op.bits() | size.sf() | (imm.get() << 16) | (cond.enc() << 12) | (1 << 11);
    sink.put_word(word | rn_field(rn.enc()) | u32::from(nzcv.0));
}
