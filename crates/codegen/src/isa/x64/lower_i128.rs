//! 128-bit integers as register pairs (low half first): the constructors behind the
//! `i128` rules of `lower.rules`.
//!
//! # Contract
//!
//! Every pair these helpers return is two *distinct* fresh vregs (or, for `ext128`, the
//! extended low half and a fresh high half), so a two-address pair instruction never finds
//! both halves of one input in a single register. Shift amounts are taken modulo 128: the
//! hardware masks `cl` to 6 bits, and bit 6 selects between the two halves.
//!
//! Nothing lists which instructions may touch an `i128`: the helpers here take pairs through
//! `Lower::value_pair`, and the Lower driver reports an `i128` that any other rule asks for
//! as one register (or results in the wrong registers) as unsupported, naming the
//! instruction, so a rule written for scalars never sees half of a pair.

use kestrel_ir::{FunctionName, IntCC, TrapCode, Type, Value};
use kestrel_regalloc::{RegClass, VReg};

use super::asm::alu::AluOp;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::sse::FloatSize;
use super::asm::Size;
use super::inst::{AluInst, CallDest, Cond, ControlInst, Inst, Pred, RegImm, SseInst};
use super::lower::{DivKind, IselCtx, Out};
use crate::machinst::lower::Lower;
use crate::machinst::CodegenError;

/// 128-bit division and remainder: the traps are checked inline (division by zero, and
/// `MIN / -1` for `sdiv`), then the libcall (`__udivti3`, `__divti3`, `__umodti3`,
/// `__modti3`, which the embedder provides) computes the result; `srem` of `MIN` by `-1` is 0
/// and needs no check.
pub fn lower_divrem(
    lower: &mut Lower<'_, Inst>,
    kind: DivKind,
    a: Value,
    b: Value,
) -> Result<Vec<VReg>, CodegenError> {
    let [al, ah] = lower.value_pair(a);
    let [bl, bh] = lower.value_pair(b);
    let int = |lower: &mut Lower<'_, Inst>| lower.alloc_vreg(RegClass::Int);
    let alu = |lower: &mut Lower<'_, Inst>, op, x, y: RegImm| {
        let dst = lower.alloc_vreg(RegClass::Int);
        lower.emit(AluInst::Alu {
            op,
            size: Size::S64,
            dst,
            a: x,
            b: y,
        });
        dst
    };
    let any = alu(lower, AluOp::Or, bl, RegImm::Reg(bh));
    lower.emit(ControlInst::TrapIf {
        cond: Cond::Test {
            size: Size::S64,
            cc: Cc::E,
            a: any,
        },
        code: TrapCode::INTEGER_DIVISION_BY_ZERO,
    });
    if kind == DivKind::Sdiv {
        // b == -1: both halves all ones.
        let both = alu(lower, AluOp::And, bl, RegImm::Reg(bh));
        let minus_one = int(lower);
        lower.emit(AluInst::Setcc {
            cond: Cond::Cmp {
                size: Size::S64,
                cc: Cc::E,
                a: both,
                b: RegImm::Imm(-1),
            },
            dst: minus_one,
        });
        // a == MIN: high half 0x8000…, low half 0.
        let min_hi = int(lower);
        lower.emit(AluInst::MovImm {
            dst: min_hi,
            imm: 1 << 63,
        });
        let x = alu(lower, AluOp::Xor, ah, RegImm::Reg(min_hi));
        let y = alu(lower, AluOp::Or, x, RegImm::Reg(al));
        let is_min = int(lower);
        lower.emit(AluInst::Setcc {
            cond: Cond::Test {
                size: Size::S64,
                cc: Cc::E,
                a: y,
            },
            dst: is_min,
        });
        let overflow = alu(lower, AluOp::And, minus_one, RegImm::Reg(is_min));
        lower.emit(ControlInst::TrapIf {
            cond: Cond::Test {
                size: Size::S64,
                cc: Cc::NE,
                a: overflow,
            },
            code: TrapCode::INTEGER_OVERFLOW,
        });
    }
    let name = match kind {
        DivKind::Udiv => "__udivti3",
        DivKind::Sdiv => "__divti3",
        DivKind::Urem => "__umodti3",
        DivKind::Srem => "__modti3",
    };
    let sig = super::abi::libcall_signature(&[Type::I128; 2], &[Type::I128]);
    let dest = CallDest::Direct(FunctionName::Named(name.into()));
    super::abi::gen_call(lower, dest, &sig, &[a, b])
}

/// `fcvt_from_{s,u}int` of an `i128` through the libcalls `__float{,un}ti{s,d}f` (which the
/// embedder provides), rounding to nearest like the hardware conversions.
pub fn lower_fcvt_from(
    lower: &mut Lower<'_, Inst>,
    signed: bool,
    to: Type,
    a: Value,
) -> Result<Vec<VReg>, CodegenError> {
    let name = match (signed, to == Type::F32) {
        (true, true) => "__floattisf",
        (true, false) => "__floattidf",
        (false, true) => "__floatuntisf",
        (false, false) => "__floatuntidf",
    };
    let sig = super::abi::libcall_signature(&[Type::I128], &[to]);
    let dest = CallDest::Direct(FunctionName::Named(name.into()));
    super::abi::gen_call(lower, dest, &sig, &[a])
}

/// `fcvt_to_{s,u}int[_sat]` to `i128`: range checks inline, then the libcall
/// `__fix{,uns}{s,d}fti` (which the embedder provides) on an in-range input. Trapping forms
/// trap with `bad_toint` on NaN and `int_ovf` out of range; saturating forms convert 0 in
/// that case and then replace the result with 0, MIN or MAX.
pub fn lower_fcvt_to(
    lower: &mut Lower<'_, Inst>,
    signed: bool,
    sat: bool,
    a: Value,
) -> Result<Vec<VReg>, CodegenError> {
    let from = lower.value_type(a);
    let f32 = from == Type::F32;
    let fsize = if f32 { FloatSize::F32 } else { FloatSize::F64 };
    let fbits = |v: f64| {
        if f32 {
            u64::from((v as f32).to_bits())
        } else {
            v.to_bits()
        }
    };
    let x = lower.value_vreg(a);
    let fconst = |lower: &mut Lower<'_, Inst>, v: f64| {
        let dst = lower.alloc_vreg(RegClass::Float);
        lower.emit(SseInst::XmmConst {
            size: fsize,
            dst,
            bits: fbits(v),
        });
        dst
    };
    // `ucomis p, q` then `cc` (ordered comparisons: false for NaN).
    let fset = |lower: &mut Lower<'_, Inst>, p, q, cc| {
        let dst = lower.alloc_vreg(RegClass::Int);
        let cond = Cond::Fcmp {
            size: fsize,
            pred: Pred::One(cc),
            a: p,
            b: q,
        };
        lower.emit(AluInst::Setcc { cond, dst });
        dst
    };
    let test = |v, cc| Cond::Test {
        size: Size::S64,
        cc,
        a: v,
    };
    let (lo, hi) = if signed {
        (
            fconst(lower, -(2f64.powi(127))),
            fconst(lower, 2f64.powi(127)),
        )
    } else {
        (fconst(lower, -1.0), fconst(lower, 2f64.powi(128)))
    };
    // in_lo: x >= MIN (signed) or x > -1 (unsigned); in_hi: x < 2^127 or 2^128.
    let in_lo = fset(lower, x, lo, if signed { Cc::AE } else { Cc::A });
    let in_hi = fset(lower, hi, x, Cc::A);
    let nan = fset(lower, x, x, Cc::P);
    let name = match (signed, f32) {
        (true, true) => "__fixsfti",
        (true, false) => "__fixdfti",
        (false, true) => "__fixunssfti",
        (false, false) => "__fixunsdfti",
    };
    let sig = super::abi::libcall_signature(&[from], &[Type::I128]);
    let dest = CallDest::Direct(FunctionName::Named(name.into()));
    if !sat {
        lower.emit(ControlInst::TrapIf {
            cond: test(nan, Cc::NE),
            code: TrapCode::BAD_CONVERSION_TO_INTEGER,
        });
        for ok in [in_lo, in_hi] {
            lower.emit(ControlInst::TrapIf {
                cond: test(ok, Cc::E),
                code: TrapCode::INTEGER_OVERFLOW,
            });
        }
        return super::abi::gen_call(lower, dest, &sig, &[a]);
    }
    let ok = lower.alloc_vreg(RegClass::Int);
    lower.emit(AluInst::Alu {
        op: AluOp::And,
        size: Size::S64,
        dst: ok,
        a: in_lo,
        b: RegImm::Reg(in_hi),
    });
    let zero_f = fconst(lower, 0.0);
    let safe = lower.alloc_vreg(RegClass::Float);
    lower.emit(SseInst::XmmSelect {
        cond: test(ok, Cc::NE),
        t: x,
        f: zero_f,
        dst: safe,
    });
    let r = super::abi::gen_call_regs(lower, dest, &sig, &[safe])?;
    let imm = |lower: &mut Lower<'_, Inst>, v: u64| {
        let dst = lower.alloc_vreg(RegClass::Int);
        lower.emit(AluInst::MovImm { dst, imm: v });
        dst
    };
    let select = |lower: &mut Lower<'_, Inst>, c: VReg, t: [VReg; 2], f: [VReg; 2]| {
        let mut out = [f[0]; 2];
        for i in 0..2 {
            let dst = lower.alloc_vreg(RegClass::Int);
            lower.emit(AluInst::Cmov {
                cond: test(c, Cc::NE),
                t: t[i],
                f: f[i],
                dst,
            });
            out[i] = dst;
        }
        out
    };
    // Too large: MAX; too small: MIN (signed) or 0; NaN: 0.
    let over = fset(lower, x, hi, Cc::AE);
    let under = fset(lower, lo, x, if signed { Cc::A } else { Cc::AE });
    let max = if signed {
        [imm(lower, u64::MAX), imm(lower, i64::MAX as u64)]
    } else {
        [imm(lower, u64::MAX), imm(lower, u64::MAX)]
    };
    let min = if signed {
        [imm(lower, 0), imm(lower, 1 << 63)]
    } else {
        [imm(lower, 0), imm(lower, 0)]
    };
    let r = select(lower, over, max, [r[0], r[1]]);
    let r = select(lower, under, min, r);
    let zeros = [imm(lower, 0), imm(lower, 0)];
    let r = select(lower, nan, zeros, r);
    Ok(r.to_vec())
}

impl IselCtx<'_, '_> {
    fn fresh(&mut self) -> VReg {
        self.lower.alloc_vreg(RegClass::Int)
    }

    fn alu64(&mut self, op: AluOp, a: VReg, b: RegImm) -> VReg {
        let dst = self.fresh();
        self.lower.emit(AluInst::Alu {
            op,
            size: Size::S64,
            dst,
            a,
            b,
        });
        dst
    }

    pub(super) fn alu128_regs(
        &mut self,
        op_lo: AluOp,
        op_hi: AluOp,
        a: [VReg; 2],
        b: [VReg; 2],
    ) -> [VReg; 2] {
        let dst = [self.fresh(), self.fresh()];
        self.lower.emit(AluInst::Alu128 {
            op_lo,
            op_hi,
            dst,
            a,
            b,
            cin: None,
            flag: None,
        });
        dst
    }

    /// `a op b` on pairs with the carry (`B`) or overflow (`O`) flag of the 128-bit result.
    pub(super) fn i128_overflow(
        &mut self,
        op_lo: AluOp,
        op_hi: AluOp,
        cc: Cc,
        a: [VReg; 2],
        b: [VReg; 2],
        cin: Option<VReg>,
    ) -> Out {
        let dst = [self.fresh(), self.fresh()];
        let f = self.fresh();
        self.lower.emit(AluInst::Alu128 {
            op_lo,
            op_hi,
            dst,
            a,
            b,
            cin,
            flag: Some((cc, f)),
        });
        Out::three(dst[0], dst[1], f)
    }

    /// A test of `c != 0` / `c == 0` for a pair: `lo | hi`.
    pub(super) fn i128_test(&mut self, c: Value, cc: Cc) -> Cond {
        let [lo, hi] = self.lower.value_pair(c);
        let t = self.alu64(AluOp::Or, lo, RegImm::Reg(hi));
        Cond::Test {
            size: Size::S64,
            cc,
            a: t,
        }
    }

    /// A 128-bit comparison as a condition.
    pub(super) fn i128_cmp(&mut self, cc: IntCC, a: Value, b: Value) -> Cond {
        let (a, b) = (self.lower.value_pair(a), self.lower.value_pair(b));
        use IntCC::*;
        let (swap, cc) = match cc {
            Equal | NotEqual => {
                let x = self.alu64(AluOp::Xor, a[0], RegImm::Reg(b[0]));
                let y = self.alu64(AluOp::Xor, a[1], RegImm::Reg(b[1]));
                let t = self.alu64(AluOp::Or, x, RegImm::Reg(y));
                let cc = if cc == Equal { Cc::E } else { Cc::NE };
                return Cond::Test {
                    size: Size::S64,
                    cc,
                    a: t,
                };
            }
            SignedLessThan => (false, Cc::L),
            SignedGreaterThanOrEqual => (false, Cc::GE),
            SignedGreaterThan => (true, Cc::L),
            SignedLessThanOrEqual => (true, Cc::GE),
            UnsignedLessThan => (false, Cc::B),
            UnsignedGreaterThanOrEqual => (false, Cc::AE),
            UnsignedGreaterThan => (true, Cc::B),
            UnsignedLessThanOrEqual => (true, Cc::AE),
        };
        let (a, b) = if swap { (b, a) } else { (a, b) };
        Cond::Cmp128 { cc, a, b }
    }
}
