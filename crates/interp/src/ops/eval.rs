//! One instruction whose results depend only on its operands, evaluated on slots: the single
//! implementation of that arithmetic, used by the interpreter's loop and by the mid-end's
//! constant folder (`kestrel-opt`), so the two cannot drift apart.
//!
//! Contract. Covers the formats `Unary`, `UnaryImm`, `UnaryIeee16`, `UnaryIeee32`,
//! `UnaryIeee64`, `Binary`, `BinaryImm8`, `Ternary`, `TernaryImm8`, `IntCompare`,
//! `FloatCompare` and `bitcast` (the one `LoadNoOffset` opcode that reads no memory), on
//! scalars and vectors (see [`eval_vector`]); anything else (memory, control flow, calls,
//! frame values, global values, traps, the pools of `vconst` and `shuffle`) is `None`, as is
//! `fma` of `f128` (its other arithmetic runs in software, [`super::f128`]). Requires
//! canonical slots (see the module docs of [`super`]) and types that pass the verifier.
//! Cost: O(lanes), no allocation.

use kestrel_ir::{InstructionData as D, Opcode, Type};

use super::*;

/// The results of an evaluated instruction: one, or two for `isplit` and the overflow
/// operations (the value and its flag).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Evaluated {
    One(u128),
    Two(u128, u128),
}

/// The float format of a float type or of a vector's float lanes (`f32` for anything else).
#[inline]
pub fn float_kind(ty: Type) -> FloatKind {
    match ty.lane_type() {
        Type::F64 => FloatKind::F64,
        Type::F16 => FloatKind::F16,
        Type::F128 => FloatKind::F128,
        _ => FloatKind::F32,
    }
}

/// `f128` arithmetic in software; `None` for what is not implemented (`fma`) or not
/// arithmetic. `ty` is the result type (the integer type of a conversion).
fn f128_arith(op: Opcode, ty: Type, x: &[u128]) -> Option<Result<Evaluated, Trap>> {
    use super::f128::{self as q, Rounding};
    let one = |r: u128| Some(Ok(Evaluated::One(r)));
    let min_max = |a: u128, b: u128, want_min: bool| {
        let nan = FloatKind::F128.format().canonical_nan();
        match super::compare::f128_partial_cmp(a, b) {
            None => nan,
            // Equal values differ at most in the sign of zero: -0 is the smaller.
            Some(std::cmp::Ordering::Equal) => {
                if (a >> 127 == 1) == want_min {
                    a
                } else {
                    b
                }
            }
            Some(std::cmp::Ordering::Less) => {
                if want_min {
                    a
                } else {
                    b
                }
            }
            Some(std::cmp::Ordering::Greater) => {
                if want_min {
                    b
                } else {
                    a
                }
            }
        }
    };
    let to_int = |signed: bool, saturate: bool| -> Result<u128, Trap> {
        let w = ty.bits();
        let Some((negative, magnitude)) = q::to_integer(x[0]) else {
            if FloatKind::F128.format().is_nan(x[0]) {
                return if saturate {
                    Ok(0)
                } else {
                    Err(Trap::BadConversionToInteger)
                };
            }
            // An infinity (or a magnitude of 2^128 or more).
            let negative = x[0] >> 127 == 1;
            return match (saturate, signed, negative) {
                (false, _, _) => Err(Trap::IntegerOverflow),
                (true, false, true) => Ok(0),
                (true, false, false) => Ok(mask(w)),
                (true, true, true) => Ok(1 << (w - 1)),
                (true, true, false) => Ok(mask(w) >> 1),
            };
        };
        // The result type's range: [-limit_neg, hi].
        let limit_neg = if signed { 1u128 << (w - 1) } else { 0 };
        let hi = if signed { mask(w) >> 1 } else { mask(w) };
        if negative && magnitude > limit_neg {
            return if saturate {
                Ok(truncate(limit_neg.wrapping_neg(), w))
            } else {
                Err(Trap::IntegerOverflow)
            };
        }
        if !negative && magnitude > hi {
            return if saturate {
                Ok(hi)
            } else {
                Err(Trap::IntegerOverflow)
            };
        }
        Ok(if negative {
            truncate(magnitude.wrapping_neg(), w)
        } else {
            magnitude
        })
    };
    match op {
        Opcode::Fadd => one(q::add(x[0], x[1])),
        Opcode::Fsub => one(q::sub(x[0], x[1])),
        Opcode::Fmul => one(q::mul(x[0], x[1])),
        Opcode::Fdiv => one(q::div(x[0], x[1])),
        Opcode::Sqrt => one(q::sqrt(x[0])),
        Opcode::Ceil => one(q::round_integral(x[0], Rounding::Ceil)),
        Opcode::Floor => one(q::round_integral(x[0], Rounding::Floor)),
        Opcode::Trunc => one(q::round_integral(x[0], Rounding::Trunc)),
        Opcode::Nearest => one(q::round_integral(x[0], Rounding::Nearest)),
        Opcode::Fmin => one(min_max(x[0], x[1], true)),
        Opcode::Fmax => one(min_max(x[0], x[1], false)),
        Opcode::FcvtToUint => Some(to_int(false, false).map(Evaluated::One)),
        Opcode::FcvtToSint => Some(to_int(true, false).map(Evaluated::One)),
        Opcode::FcvtToUintSat => Some(to_int(false, true).map(Evaluated::One)),
        Opcode::FcvtToSintSat => Some(to_int(true, true).map(Evaluated::One)),
        _ => None,
    }
}

/// Evaluate `data` on operand slots `x` (its fixed operands in order). `ty` is the type of
/// its first result, `in_ty` the type of its first operand (`Type::INVALID` if it has none).
/// `None` when `data` is not covered (see the contract); `Some(Err)` when it traps.
#[inline]
pub fn eval_pure(data: &D, ty: Type, in_ty: Type, x: &[u128]) -> Option<Result<Evaluated, Trap>> {
    use Evaluated::{One, Two};
    if ty.is_vector() || in_ty.is_vector() {
        return eval_vector(data, ty, in_ty, x);
    }
    let w = ty.bits();
    let k = float_kind(ty);
    let op = data.opcode();
    if ty == Type::F128 || in_ty == Type::F128 {
        let converts = matches!(
            op,
            Opcode::FcvtToUint | Opcode::FcvtToSint | Opcode::FcvtToUintSat | Opcode::FcvtToSintSat
        );
        if let Some(r) = f128_arith(op, ty, x).filter(|_| converts || ty == Type::F128) {
            return Some(r);
        }
        if op == Opcode::Fma {
            return None; // `f128` `fma` is not implemented
        }
    }
    let one = |r: u128| Some(Ok(One(r)));
    let pair = |(r, f): (u128, u128)| Some(Ok(Two(r, f)));
    let checked = |r: Result<u128, Trap>| Some(r.map(One));
    match *data {
        D::Unary { .. } => {
            let a = x[0];
            match op {
                Opcode::Isplit => pair(isplit(a, w)),
                Opcode::Ineg => one(ineg(a, w)),
                Opcode::Iabs => one(iabs(a, w)),
                Opcode::Bnot => one(bnot(a, w)),
                Opcode::Bitrev => one(bitrev(a, w)),
                Opcode::Clz => one(clz(a, w)),
                Opcode::Cls => one(cls(a, w)),
                Opcode::Ctz => one(ctz(a, w)),
                Opcode::Bswap => one(bswap(a, w)),
                Opcode::Popcnt => one(popcnt(a)),
                Opcode::Bmask => one(bmask(a, w)),
                Opcode::Uextend => one(uextend(a)),
                Opcode::Sextend => one(sextend(a, in_ty.bits(), w)),
                Opcode::Ireduce => one(ireduce(a, w)),
                Opcode::Sqrt => one(sqrt(k, a)),
                Opcode::Fneg => one(fneg(k, a)),
                Opcode::Fabs => one(fabs(k, a)),
                Opcode::Ceil => one(ceil(k, a)),
                Opcode::Floor => one(floor(k, a)),
                Opcode::Trunc => one(trunc(k, a)),
                Opcode::Nearest => one(nearest(k, a)),
                Opcode::Fpromote | Opcode::Fdemote => one(fconvert(float_kind(in_ty), k, a)),
                Opcode::FcvtToUint => checked(fcvt_to_uint(float_kind(in_ty), a, w)),
                Opcode::FcvtToSint => checked(fcvt_to_sint(float_kind(in_ty), a, w)),
                Opcode::FcvtToUintSat => one(fcvt_to_uint_sat(float_kind(in_ty), a, w)),
                Opcode::FcvtToSintSat => one(fcvt_to_sint_sat(float_kind(in_ty), a, w)),
                Opcode::FcvtFromUint => one(fcvt_from_uint(k, a)),
                Opcode::FcvtFromSint => one(fcvt_from_sint(k, a, in_ty.bits())),
                _ => None,
            }
        }
        D::UnaryImm { imm, .. } => one(truncate(imm as i128 as u128, w)),
        D::UnaryIeee16 { imm, .. } => one(imm as u128),
        D::UnaryIeee32 { imm, .. } => one(imm as u128),
        D::UnaryIeee64 { imm, .. } => one(imm as u128),
        D::LoadNoOffset { .. } if op == Opcode::Bitcast => one(bitcast(x[0])),
        D::Binary { .. } => {
            let (a, b) = (x[0], x[1]);
            match op {
                Opcode::Iadd => one(iadd(a, b, w)),
                Opcode::Isub => one(isub(a, b, w)),
                Opcode::Imul => one(imul(a, b, w)),
                Opcode::Umulhi => one(umulhi(a, b, w)),
                Opcode::Smulhi => one(smulhi(a, b, w)),
                Opcode::Udiv => checked(udiv(a, b)),
                Opcode::Urem => checked(urem(a, b)),
                Opcode::Sdiv => checked(sdiv(a, b, w)),
                Opcode::Srem => checked(srem(a, b, w)),
                Opcode::Smin => one(smin(a, b, w)),
                Opcode::Umin => one(umin(a, b)),
                Opcode::Smax => one(smax(a, b, w)),
                Opcode::Umax => one(umax(a, b)),
                Opcode::UaddOverflow => pair(uadd_overflow(a, b, w)),
                Opcode::SaddOverflow => pair(sadd_overflow(a, b, w)),
                Opcode::UsubOverflow => pair(usub_overflow(a, b, w)),
                Opcode::SsubOverflow => pair(ssub_overflow(a, b, w)),
                Opcode::UmulOverflow => pair(umul_overflow(a, b, w)),
                Opcode::SmulOverflow => pair(smul_overflow(a, b, w)),
                Opcode::Band => one(band(a, b)),
                Opcode::Bor => one(bor(a, b)),
                Opcode::Bxor => one(bxor(a, b)),
                Opcode::BandNot => one(band_not(a, b)),
                Opcode::BorNot => one(bor_not(a, b, w)),
                Opcode::BxorNot => one(bxor_not(a, b, w)),
                Opcode::Rotl => one(rotl(a, b, w)),
                Opcode::Rotr => one(rotr(a, b, w)),
                Opcode::Ishl => one(ishl(a, b, w)),
                Opcode::Ushr => one(ushr(a, b, w)),
                Opcode::Sshr => one(sshr(a, b, w)),
                Opcode::Iconcat => one(iconcat(a, b, in_ty.bits())),
                Opcode::Fadd => one(fadd(k, a, b)),
                Opcode::Fsub => one(fsub(k, a, b)),
                Opcode::Fmul => one(fmul(k, a, b)),
                Opcode::Fdiv => one(fdiv(k, a, b)),
                Opcode::Fcopysign => one(fcopysign(k, a, b)),
                Opcode::Fmin => one(fmin(k, a, b)),
                Opcode::Fmax => one(fmax(k, a, b)),
                _ => None,
            }
        }
        D::Ternary { .. } => {
            let (a, b, c) = (x[0], x[1], x[2]);
            match op {
                Opcode::Select | Opcode::SelectSpectreGuard => one(select(a, b, c)),
                Opcode::Bitselect => one(bitselect(a, b, c)),
                Opcode::Fma => one(fma(k, a, b, c)),
                Opcode::UaddOverflowCin => pair(uadd_overflow_cin(a, b, c, w)),
                Opcode::SaddOverflowCin => pair(sadd_overflow_cin(a, b, c, w)),
                Opcode::UsubOverflowBin => pair(usub_overflow_bin(a, b, c, w)),
                Opcode::SsubOverflowBin => pair(ssub_overflow_bin(a, b, c, w)),
                _ => None,
            }
        }
        D::IntCompare { cond, .. } => one(icmp(cond, x[0], x[1], in_ty.bits())),
        D::FloatCompare { cond, .. } => one(fcmp(cond, float_kind(in_ty), x[0], x[1])),
        _ => None,
    }
}
