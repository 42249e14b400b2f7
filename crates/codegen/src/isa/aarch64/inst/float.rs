//! The scalar floating-point family: arithmetic, rounding, fused multiply-add, constants,
//! conversions between precisions and to and from integers (with CLIF's traps), bit moves
//! between the register files, and the conditional select.

use kestrel_ir::TrapCode;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::add_sub::{adds_subs_reg, AddSub};
use super::super::asm::branch::b_cond;
use super::super::asm::cond::{csel, Cond as Cc, CselOp};
use super::super::asm::fp::{
    self as enc, fcsel, fmov_from_gpr, fmov_imm, fmov_to_gpr, FcmpOp, FpBinOp, FpFmaOp, FpToInt,
    FpUnaryOp, IntToFp,
};
use super::super::asm::fp_imm::FpImm8;
use super::super::asm::{FpSize, Gpr, GprZr, PcOffset, Size, Vreg as FpReg};
use super::super::emit::{fpr, mov_imm, trap, zr, Buf};
use super::{map_operands, Cond, OperandSpec, Operands, Pred};

/// One floating-point instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum FloatInst<R = VReg> {
    /// `dst = a op b`. Operands: `[a use, b use, dst def]`.
    Rrr { op: FpBinOp, size: FpSize, dst: R, a: R, b: R },
    /// `dst = op src` (`fabs`, `fneg`, `fsqrt`, the roundings). Operands: `[src use, dst
    /// def]`.
    Unary { op: FpUnaryOp, size: FpSize, dst: R, src: R },
    /// `dst = a * b + c`, rounded once. Operands: `[a use, b use, c use, dst def]`.
    Fma { size: FpSize, dst: R, a: R, b: R, c: R },
    /// `dst = bits` (`fmov` of an immediate, or the bits through x17). Operands: `[dst def]`.
    Const { size: FpSize, dst: R, bits: u64 },
    /// `dst = src` converted from precision `from` to the other one. Operands: `[src use,
    /// dst def]`.
    Cvt { from: FpSize, dst: R, src: R },
    /// `dst = src` (an integer register of `int` bits, signed or not) rounded to `size`.
    /// Operands: `[src use, dst def]`.
    FromInt {
        signed: bool,
        int: Size,
        size: FpSize,
        dst: R,
        src: R,
    },
    /// `dst = src` (of `size`) truncated to a `bits`-bit integer (8 to 64), signed or not.
    /// Trapping (`sat` false): `bad_toint` for NaN, `int_ovf` out of range. Saturating: NaN
    /// gives 0, the rest clamps to the range. Operands: `[src use, dst def]`.
    ToInt {
        signed: bool,
        sat: bool,
        bits: u8,
        size: FpSize,
        dst: R,
        src: R,
    },
    /// `dst = the bits of src` (an FP register of `size`) in an integer register. Operands:
    /// `[src use, dst def]`.
    MovToInt { size: FpSize, dst: R, src: R },
    /// `dst = src`'s low bits (an integer register) as an FP value of `size`. Operands:
    /// `[src use, dst def]`.
    MovFromInt { size: FpSize, dst: R, src: R },
    /// `dst = cond ? t : f`. Operands: `[cond…, t use, f use, dst def]`.
    CSel { cond: Cond<R>, size: FpSize, t: R, f: R, dst: R },
}

impl FloatInst {
    map_operands! {
        pub(in crate::isa::aarch64) FloatInst, |m| {
            Rrr { op, size } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
            Unary { op, size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Fma { size } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                c = m.reg_use(*c),
                dst = m.reg_def(*dst)
            ],
            Const { size, bits } [dst = m.reg_def(*dst)],
            Cvt { from } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            FromInt { signed, int, size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            ToInt { signed, sat, bits, size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            MovToInt { size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            MovFromInt { size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            CSel { size } [
                cond = cond.map(m),
                t = m.reg_use(*t),
                f = m.reg_use(*f),
                dst = m.reg_def(*dst)
            ],
        }
    }
}

impl FloatInst<String> {
    pub(super) fn pretty(&self) -> String {
        let lower = |s: String| s.to_lowercase();
        match self {
            FloatInst::Rrr {
                op,
                size,
                dst,
                a,
                b,
            } => lower(format!("{dst} = {op:?}.{size:?} {a}, {b}")),
            FloatInst::Unary { op, size, dst, src } => {
                lower(format!("{dst} = {op:?}.{size:?} {src}"))
            }
            FloatInst::Fma { size, dst, a, b, c } => {
                lower(format!("{dst} = fmadd.{size:?} {a}, {b}, {c}"))
            }
            FloatInst::Const { size, dst, bits } => {
                lower(format!("{dst} = fconst.{size:?} {bits:#x}"))
            }
            FloatInst::Cvt { from, dst, src } => lower(format!("{dst} = fcvt.from_{from:?} {src}")),
            FloatInst::FromInt {
                signed,
                int,
                size,
                dst,
                src,
            } => lower(format!(
                "{dst} = {}cvtf.{size:?}.i{} {src}",
                if *signed { "s" } else { "u" },
                int.bits()
            )),
            FloatInst::ToInt {
                signed,
                sat,
                bits,
                size,
                dst,
                src,
            } => lower(format!(
                "{dst} = fcvtz{}{}.i{bits}.{size:?} {src}",
                if *signed { "s" } else { "u" },
                if *sat { "_sat" } else { "" }
            )),
            FloatInst::MovToInt { size, dst, src } => {
                lower(format!("{dst} = fmov_to_int.{size:?} {src}"))
            }
            FloatInst::MovFromInt { size, dst, src } => {
                lower(format!("{dst} = fmov_from_int.{size:?} {src}"))
            }
            FloatInst::CSel {
                cond,
                size,
                t,
                f,
                dst,
            } => format!(
                "{dst} = fcsel.{} {} ? {t} : {f}",
                lower(format!("{size:?}")),
                cond.pretty()
            ),
        }
    }
}

/// The width of an integer register holding a `bits`-bit value.
fn reg_size(bits: u8) -> Size {
    if bits == 64 {
        Size::S64
    } else {
        Size::S32
    }
}

/// The bits of `v` as a float of `size`.
fn float_bits(size: FpSize, v: f64) -> u64 {
    match size {
        FpSize::F32 => u64::from((v as f32).to_bits()),
        FpSize::F64 => v.to_bits(),
    }
}

/// `v31 = v` (a float of `size`, exact) through x17.
fn scratch_const(buf: &mut Buf, size: FpSize, v: f64) -> FpReg {
    let v31 = FpReg::new(31).expect("v31");
    load_const(buf, size, v31, float_bits(size, v));
    v31
}

/// `dst = bits` as a float of `size`: `fmov` of an immediate when it is one, `fmov` from
/// xzr for +0.0, else the bits moved to x17 and from there.
fn load_const(buf: &mut Buf, size: FpSize, dst: FpReg, bits: u64) {
    let value = match size {
        FpSize::F32 => f64::from(f32::from_bits(bits as u32)),
        FpSize::F64 => f64::from_bits(bits),
    };
    if let Some(imm) = FpImm8::new(value) {
        return fmov_imm(buf, size, dst, imm);
    }
    if bits == 0 {
        return fmov_from_gpr(buf, size, dst, GprZr::ZR);
    }
    let int = match size {
        FpSize::F32 => Size::S32,
        FpSize::F64 => Size::S64,
    };
    mov_imm(buf, int, Gpr::X17, bits);
    fmov_from_gpr(buf, size, dst, Gpr::X17.into());
}

/// Trap with `code` unless `cc` holds after the last compare.
fn trap_unless(buf: &mut Buf, cc: Cc, code: TrapCode) {
    b_cond(buf, cc, PcOffset::new(8).expect("8 fits"));
    trap(buf, code);
}

/// The trapping conversion's checks: NaN traps `bad_toint`; a value outside the open
/// interval `(lo, hi)` of the `bits`-bit integers, truncated, traps `int_ovf`. The bound
/// below is `-2^(bits-1) - 1` (signed) or -1 (unsigned), compared with `>` when the float
/// type holds it exactly; otherwise (`f32` below `i32`, either below `i64`) the value must
/// be `>= -2^(bits-1)`, the next float up. The bound above is `2^(bits-1)` or `2^bits`.
fn range_checks(buf: &mut Buf, signed: bool, bits: u8, size: FpSize, src: FpReg) {
    enc::fcmp(buf, FcmpOp::Fcmp, size, src, src);
    trap_unless(buf, Cc::Vc, TrapCode::BAD_CONVERSION_TO_INTEGER);
    let mantissa = match size {
        FpSize::F32 => 24,
        FpSize::F64 => 53,
    };
    let (lo, lo_cc) = if !signed {
        (-1.0, Cc::Gt)
    } else if u32::from(bits) < mantissa {
        (-(2f64.powi(i32::from(bits) - 1)) - 1.0, Cc::Gt)
    } else {
        (-(2f64.powi(i32::from(bits) - 1)), Cc::Ge)
    };
    let hi = 2f64.powi(i32::from(bits) - i32::from(signed));
    let v31 = scratch_const(buf, size, lo);
    enc::fcmp(buf, FcmpOp::Fcmp, size, src, v31);
    trap_unless(buf, lo_cc, TrapCode::INTEGER_OVERFLOW);
    let v31 = scratch_const(buf, size, hi);
    enc::fcmp(buf, FcmpOp::Fcmp, size, src, v31);
    trap_unless(buf, Cc::Mi, TrapCode::INTEGER_OVERFLOW);
}

/// Clamp the 32-bit `dst` (a conversion saturated to 32 bits) to the `bits`-bit range, through
/// x17.
fn clamp_narrow(buf: &mut Buf, signed: bool, bits: u8, dst: GprZr) {
    let x17 = Gpr::X17;
    let (max, min) = if signed {
        ((1u64 << (bits - 1)) - 1, (-(1i64 << (bits - 1))) as u64)
    } else {
        ((1u64 << bits) - 1, 0)
    };
    let (below, above) = if signed {
        (Cc::Lt, Cc::Gt)
    } else {
        (Cc::Lo, Cc::Hi)
    };
    mov_imm(buf, Size::S32, x17, max);
    adds_subs_reg(buf, AddSub::Sub, Size::S32, GprZr::ZR, dst, x17.into());
    csel(buf, CselOp::Csel, Size::S32, dst, dst, x17.into(), below);
    if signed {
        mov_imm(buf, Size::S32, x17, min);
        adds_subs_reg(buf, AddSub::Sub, Size::S32, GprZr::ZR, dst, x17.into());
        csel(buf, CselOp::Csel, Size::S32, dst, dst, x17.into(), above);
    }
}

impl FloatInst<PReg> {
    pub(in crate::isa::aarch64) fn emit(&self, buf: &mut Buf) {
        match *self {
            FloatInst::Rrr {
                op,
                size,
                dst,
                a,
                b,
            } => enc::fp_binary(buf, op, size, fpr(dst), fpr(a), fpr(b)),
            FloatInst::Unary { op, size, dst, src } => {
                enc::fp_unary(buf, op, size, fpr(dst), fpr(src))
            }
            FloatInst::Fma { size, dst, a, b, c } => {
                enc::fp_fma(buf, FpFmaOp::Fmadd, size, fpr(dst), fpr(a), fpr(b), fpr(c))
            }
            FloatInst::Const { size, dst, bits } => load_const(buf, size, fpr(dst), bits),
            FloatInst::Cvt { from, dst, src } => enc::fcvt(buf, from, fpr(dst), fpr(src)),
            FloatInst::FromInt {
                signed,
                int,
                size,
                dst,
                src,
            } => {
                let op = if signed {
                    IntToFp::Scvtf
                } else {
                    IntToFp::Ucvtf
                };
                enc::int_to_fp(buf, op, int, size, fpr(dst), zr(src));
            }
            FloatInst::ToInt {
                signed,
                sat,
                bits,
                size,
                dst,
                src,
            } => {
                let (dst, src) = (zr(dst), fpr(src));
                if !sat {
                    range_checks(buf, signed, bits, size, src);
                }
                let op = if signed {
                    FpToInt::Fcvtzs
                } else {
                    FpToInt::Fcvtzu
                };
                enc::fp_to_int(buf, op, reg_size(bits), size, dst, src);
                if sat && bits < 32 {
                    clamp_narrow(buf, signed, bits, dst);
                }
            }
            FloatInst::MovToInt { size, dst, src } => fmov_to_gpr(buf, size, zr(dst), fpr(src)),
            FloatInst::MovFromInt { size, dst, src } => fmov_from_gpr(buf, size, fpr(dst), zr(src)),
            FloatInst::CSel {
                cond,
                size,
                t,
                f,
                dst,
            } => {
                cond.emit_flags(buf);
                let (t, f, dst) = (fpr(t), fpr(f), fpr(dst));
                match cond.pred() {
                    Pred::One(c) => fcsel(buf, size, dst, t, f, c),
                    // v31 = c ? t : f, then dst = d ? t : v31 (dst is written last).
                    Pred::Or(c, d) => {
                        let v31 = FpReg::new(31).expect("v31");
                        fcsel(buf, size, v31, t, f, c);
                        fcsel(buf, size, dst, t, v31, d);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_take_the_shortest_form() {
        let words = |size, bits| {
            let mut buf = Buf::new();
            load_const(&mut buf, size, FpReg::new(0).unwrap(), bits);
            buf.cur_offset() / 4
        };
        assert_eq!(words(FpSize::F64, 1.0f64.to_bits()), 1);
        assert_eq!(words(FpSize::F32, u64::from(0.5f32.to_bits())), 1);
        assert_eq!(words(FpSize::F64, 0), 1);
        // -0.0 is neither an immediate nor zero bits: movz + fmov.
        assert_eq!(words(FpSize::F64, (-0.0f64).to_bits()), 2);
        assert_eq!(words(FpSize::F64, 0.1f64.to_bits()), 5);
    }

    #[test]
    fn range_bounds_are_exact_floats() {
        // -2^31 - 1 is exact in f64, not in f32.
        assert_eq!((-(2f64.powi(31)) - 1.0) as f32 as f64, -(2f64.powi(31)));
        assert_eq!(
            float_bits(FpSize::F32, 2f64.powi(32)),
            u64::from(4294967296f32.to_bits())
        );
    }
}
