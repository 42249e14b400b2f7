//! Fused conditions ([`Cond`]): a flag-setting test (or a register tested against zero) and
//! the condition read from it, with their operands, printing and encoding.

use kestrel_ir::FloatCC;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::add_sub::{adds_subs_ext, adds_subs_imm, adds_subs_reg, AddSub, AddSubImm};
use super::super::asm::cond::Cond as Cc;
use super::super::asm::fp::{self, FcmpOp};
use super::super::asm::logical::ands_imm;
use super::super::asm::logical_imm::LogicalImm;
use super::super::asm::operands::{Extend, Extended};
use super::super::asm::{FpSize, GprZr, Size};
use super::super::emit::{fpr, sp, zr, Buf};
use super::{map_operands, OperandSpec, Operands};

/// The second operand of a compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpRhs<R = VReg> {
    /// `cmp a, b`.
    Reg(R),
    /// `cmp a, #imm`.
    Imm(AddSubImm),
    /// `cmn a, #imm`: a compare with `-imm` (never 0: `cmn #0` sets the carry differently).
    NegImm(AddSubImm),
    /// `cmp a, b, extend`: `b`'s low bits extended to the compare's width.
    Ext(R, Extend),
}

/// What a condition reads from the flags: one condition code, or either of two (the float
/// `one` and `ueq`, which no single code expresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    One(Cc),
    Or(Cc, Cc),
}

/// A fused condition (a test, or a register against zero, and what is read from it; see
/// `isa/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond<R = VReg> {
    /// `cmp a, b` at `size`; true when `cc` holds.
    Cmp { size: Size, cc: Cc, a: R, b: CmpRhs<R> },
    /// `tst a, #imm` (at the immediate's size); `cc` is `Eq` (no bit of `imm` set) or `Ne`.
    Test { cc: Cc, a: R, imm: LogicalImm },
    /// `a == 0` (`is_zero`) or `a != 0` at `size`: `cbz`/`cbnz` in a branch, `cmp a, #0`
    /// elsewhere.
    Zero { size: Size, is_zero: bool, a: R },
    /// `fcmp a, b`; true when the float condition `cc` holds.
    Fcmp { size: FpSize, cc: FloatCC, a: R, b: R },
}

/// The float condition that holds exactly when `cc` does not.
pub fn float_inverse(cc: FloatCC) -> FloatCC {
    use FloatCC::*;
    match cc {
        Ordered => Unordered,
        Unordered => Ordered,
        Equal => NotEqual,
        NotEqual => Equal,
        OrderedNotEqual => UnorderedOrEqual,
        UnorderedOrEqual => OrderedNotEqual,
        LessThan => UnorderedOrGreaterThanOrEqual,
        UnorderedOrGreaterThanOrEqual => LessThan,
        LessThanOrEqual => UnorderedOrGreaterThan,
        UnorderedOrGreaterThan => LessThanOrEqual,
        GreaterThan => UnorderedOrLessThanOrEqual,
        UnorderedOrLessThanOrEqual => GreaterThan,
        GreaterThanOrEqual => UnorderedOrLessThan,
        UnorderedOrLessThan => GreaterThanOrEqual,
    }
}

/// The flags `fcmp a, b` leaves: less `1000`, equal `0110`, greater `0010`, unordered `0011`
/// (NZCV). So `lt` is `mi` (N), `le` is `ls` (not C, or Z), `gt` and `ge` are the signed
/// codes (V is set only when unordered), and the unordered forms are the inverses of the
/// ordered ones.
fn float_pred(cc: FloatCC) -> Pred {
    use FloatCC::*;
    match cc {
        Ordered => Pred::One(Cc::Vc),
        Unordered => Pred::One(Cc::Vs),
        Equal => Pred::One(Cc::Eq),
        NotEqual => Pred::One(Cc::Ne),
        OrderedNotEqual => Pred::Or(Cc::Mi, Cc::Gt),
        UnorderedOrEqual => Pred::Or(Cc::Eq, Cc::Vs),
        LessThan => Pred::One(Cc::Mi),
        LessThanOrEqual => Pred::One(Cc::Ls),
        GreaterThan => Pred::One(Cc::Gt),
        GreaterThanOrEqual => Pred::One(Cc::Ge),
        UnorderedOrLessThan => Pred::One(Cc::Lt),
        UnorderedOrLessThanOrEqual => Pred::One(Cc::Le),
        UnorderedOrGreaterThan => Pred::One(Cc::Hi),
        UnorderedOrGreaterThanOrEqual => Pred::One(Cc::Pl),
    }
}

impl<R> Cond<R> {
    /// The same test with the opposite condition (only the condition read changes).
    pub fn invert(mut self) -> Cond<R> {
        match &mut self {
            Cond::Cmp { cc, .. } | Cond::Test { cc, .. } => *cc = cc.invert(),
            Cond::Zero { is_zero, .. } => *is_zero = !*is_zero,
            Cond::Fcmp { cc, .. } => *cc = float_inverse(*cc),
        }
        self
    }

    /// What the condition reads from the flags [`Cond::emit_flags`] sets.
    pub fn pred(&self) -> Pred {
        match *self {
            Cond::Cmp { cc, .. } | Cond::Test { cc, .. } => Pred::One(cc),
            Cond::Zero { is_zero, .. } => Pred::One(if is_zero { Cc::Eq } else { Cc::Ne }),
            Cond::Fcmp { cc, .. } => float_pred(cc),
        }
    }
}

impl Cond {
    map_operands! {
        /// Operands: `Cmp` `[a, b?]`, `Test` `[a]`, `Zero` `[a]`, `Fcmp` `[a, b]`; all uses.
        pub(super) nested Cond, |m| {
            Cmp { size, cc } [
                a = m.reg_use(*a),
                b = match *b {
                    CmpRhs::Reg(r) => CmpRhs::Reg(m.reg_use(r)),
                    CmpRhs::Imm(k) => CmpRhs::Imm(k),
                    CmpRhs::NegImm(k) => CmpRhs::NegImm(k),
                    CmpRhs::Ext(r, e) => CmpRhs::Ext(m.reg_use(r), e),
                }
            ],
            Test { cc, imm } [a = m.reg_use(*a)],
            Zero { size, is_zero } [a = m.reg_use(*a)],
            Fcmp { size, cc } [a = m.reg_use(*a), b = m.reg_use(*b)],
        }
    }
}

impl Cond<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            Cond::Cmp { size, cc, a, b } => {
                let b = match b {
                    CmpRhs::Reg(r) => r.clone(),
                    CmpRhs::Imm(k) => format!("#{}", k.value()),
                    CmpRhs::NegImm(k) => format!("#-{}", k.value()),
                    CmpRhs::Ext(r, e) => format!("{r}, {e:?}").to_lowercase(),
                };
                format!("cmp{} {a}, {b} ?{}", size.bits(), cc.name())
            }
            Cond::Test { cc, a, imm } => {
                format!("tst {a}, #{:#x} ?{}", imm.value(), cc.name())
            }
            Cond::Zero { size, is_zero, a } => {
                let what = if *is_zero { "zero" } else { "nonzero" };
                format!("{what}{} {a}", size.bits())
            }
            Cond::Fcmp { size, cc, a, b } => format!("fcmp.{size:?} {a}, {b} ?{cc}").to_lowercase(),
        }
    }
}

impl Cond<PReg> {
    /// Set the flags that [`Cond::pred`] reads (a `Zero` test compares with 0).
    pub(super) fn emit_flags(&self, buf: &mut Buf) {
        match *self {
            Cond::Cmp { size, a, b, .. } => {
                let (rd, rn) = (GprZr::ZR, sp(a));
                match b {
                    CmpRhs::Reg(b) => {
                        adds_subs_reg(buf, AddSub::Sub, size, GprZr::ZR, zr(a), zr(b))
                    }
                    CmpRhs::Imm(k) => adds_subs_imm(buf, AddSub::Sub, size, rd, rn, k),
                    CmpRhs::NegImm(k) => adds_subs_imm(buf, AddSub::Add, size, rd, rn, k),
                    CmpRhs::Ext(b, e) => {
                        let ext = Extended::new(zr(b), e, 0).expect("shift 0 fits");
                        adds_subs_ext(buf, AddSub::Sub, size, rd, rn, ext);
                    }
                }
            }
            Cond::Test { a, imm, .. } => ands_imm(buf, GprZr::ZR, zr(a), imm),
            Cond::Zero { size, a, .. } => {
                let zero = AddSubImm::new(0).expect("0 fits");
                adds_subs_imm(buf, AddSub::Sub, size, GprZr::ZR, sp(a), zero);
            }
            Cond::Fcmp { size, a, b, .. } => fp::fcmp(buf, FcmpOp::Fcmp, size, fpr(a), fpr(b)),
        }
    }
}
