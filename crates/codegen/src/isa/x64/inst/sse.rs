//! The SSE family: scalar float arithmetic, constants, selects, min/max, moves between
//! register classes and conversions.

use kestrel_ir::TrapCode;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::alu::{self as alu_enc, AluOp};
use super::super::asm::moves;
use super::super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::super::asm::shift::{self, ShiftOp};
use super::super::asm::sse::{self as enc, FloatSize, RoundMode, SseOp};
use super::super::asm::{Gpr, GprMem, Size, Xmm, XmmMem};
use super::super::emit::{bytes, gpr, jcc_to, jmp_to, sse_const, trap_unless, xmm, Buf, Ctx};
use super::{map_operands, Cond, OperandSpec, Operands, Pred};
use crate::machinst::buffer::Label;

/// One SSE instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum SseInst<R = VReg> {
    /// A float constant (`xorps` for +0, else a constant-pool load). Operands: `[dst def]`.
    XmmConst { size: FloatSize, dst: R, bits: u64 },
    /// `dst = a op b`, two-address SSE. Operands: `[a use, b use, dst def reusing a]`.
    XmmRmR { op: SseOp, dst: R, a: R, b: R },
    /// `dst = op src` (sqrt, conversions between widths). Operands: `[src use, dst def]`.
    XmmUnary { op: SseOp, dst: R, src: R },
    /// `dst = round(src)` (SSE4.1). Operands: `[src use, dst def]`.
    XmmRound { size: FloatSize, mode: RoundMode, dst: R, src: R },
    /// Float `dst = cond ? t : f`. Operands: `[cond…, t use, f use, dst def reusing f]`.
    XmmSelect { cond: Cond<R>, t: R, f: R, dst: R },
    /// `fmin`/`fmax`: NaN if either is NaN, `-0 < +0`. Operands: `[a use, b use, dst def
    /// reusing a]`.
    FMinMax { size: FloatSize, max: bool, dst: R, a: R, b: R },
    /// Bits of a GPR into an XMM register (`movd`/`movq`). Operands: `[src use, dst def]`.
    MovToXmm { size: Size, dst: R, src: R },
    /// Bits of an XMM register into a GPR. Operands: `[src use, dst def]`.
    MovFromXmm { size: Size, dst: R, src: R },
    /// Signed integer to float (`cvtsi2ss/sd`). Operands: `[src use, dst def]`.
    CvtIntToFloat { fsize: FloatSize, isize: Size, dst: R, src: R },
    /// Unsigned 64-bit integer to float. Operands: `[src use, dst early def]` (written
    /// while `src` is still read).
    CvtU64ToFloat { fsize: FloatSize, dst: R, src: R },
    /// `dst = src` as an integer (`fcvt_to_{s,u}int[_sat]` to 32 or 64 bits): traps with
    /// `bad_toint` on NaN and `int_ovf` out of range, or saturates (`sat`; NaN gives 0).
    /// Operands: `[src use, dst def]`.
    FcvtToInt {
        fsize: FloatSize,
        isize: Size,
        signed: bool,
        sat: bool,
        dst: R,
        src: R,
    },
}

impl SseInst {
    map_operands! {
        pub(in crate::isa::x64) SseInst, |m| {
            XmmConst { size, bits } [dst = m.reg_def(*dst)],
            XmmRmR { op } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reuse_def(*dst, 0)],
            XmmUnary { op } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            XmmRound { size, mode } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            // `dst` reuses `f`, the operand just before it.
            XmmSelect {} [
                cond = cond.map(m),
                t = m.reg_use(*t),
                f = m.reg_use(*f),
                dst = m.reuse_def(*dst, m.next_index() - 1)
            ],
            FMinMax { size, max } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                dst = m.reuse_def(*dst, 0)
            ],
            MovToXmm { size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            MovFromXmm { size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            CvtIntToFloat { fsize, isize } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            CvtU64ToFloat { fsize } [src = m.reg_use(*src), dst = m.early_def(*dst)],
            FcvtToInt { fsize, isize, signed, sat } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
        }
    }
}

impl SseInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            SseInst::XmmConst { dst, bits, .. } => format!("{dst} = fconst {bits:#x}"),
            SseInst::XmmRmR { op, dst, a, b } => format!("{dst} = {op:?} {a}, {b}").to_lowercase(),
            SseInst::XmmUnary { op, dst, src } => format!("{dst} = {op:?} {src}").to_lowercase(),
            SseInst::XmmRound { mode, dst, src, .. } => format!("{dst} = round.{mode:?} {src}"),
            SseInst::XmmSelect { cond, t, f, dst } => {
                format!("{dst} = fselect {} ? {t} : {f}", cond.pretty())
            }
            SseInst::FMinMax { max, dst, a, b, .. } => {
                let k = if *max { "fmax" } else { "fmin" };
                format!("{dst} = {k} {a}, {b}")
            }
            SseInst::MovToXmm { dst, src, .. } | SseInst::MovFromXmm { dst, src, .. } => {
                format!("{dst} = movq {src}")
            }
            SseInst::CvtIntToFloat {
                isize, dst, src, ..
            } => format!("{dst} = cvtsi2f.{} {src}", isize.bits()),
            SseInst::CvtU64ToFloat { dst, src, .. } => format!("{dst} = cvtu64 {src}"),
            SseInst::FcvtToInt {
                isize,
                signed,
                sat,
                dst,
                src,
                ..
            } => {
                let k = if *signed { "s" } else { "u" };
                let s = if *sat { "_sat" } else { "" };
                format!("{dst} = fcvt_to_{k}int{s}.{} {src}", isize.bits())
            }
        }
    }
}

impl SseInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        match *self {
            SseInst::XmmConst { size, dst, bits } => {
                let dst = xmm(dst);
                if bits == 0 {
                    enc::sse_r_rm(buf, SseOp::Xorps, dst, &XmmMem::Reg(dst));
                } else {
                    let op = match size {
                        FloatSize::F32 => SseOp::Movss,
                        FloatSize::F64 => SseOp::Movsd,
                    };
                    sse_const(buf, op, dst, size, bits);
                }
            }
            SseInst::XmmRmR { op, dst, b, .. } => {
                enc::sse_r_rm(buf, op, xmm(dst), &XmmMem::Reg(xmm(b)));
            }
            SseInst::XmmUnary { op, dst, src } => {
                enc::sse_r_rm(buf, op, xmm(dst), &XmmMem::Reg(xmm(src)));
            }
            SseInst::XmmRound {
                size,
                mode,
                dst,
                src,
            } => {
                enc::round(buf, size, xmm(dst), &XmmMem::Reg(xmm(src)), mode);
            }
            SseInst::XmmSelect {
                ref cond,
                t,
                f,
                dst,
            } => {
                debug_assert_eq!(f, dst);
                cond.emit_test(ctx.frame, buf);
                let mov = bytes(|b| {
                    enc::sse_r_rm(b, SseOp::Movaps, xmm(dst), &XmmMem::Reg(xmm(t)));
                });
                let len = mov.len() as i8;
                match cond.pred() {
                    Pred::One(c) => cc_ops::jcc_rel8(buf, c.invert(), len),
                    // `c` jumps over the 2-byte `jcc !d` straight to the move.
                    Pred::Or(c, d) => {
                        cc_ops::jcc_rel8(buf, c, 2);
                        cc_ops::jcc_rel8(buf, d.invert(), len);
                    }
                    // `!c` skips the 2-byte `jcc !d` and the move.
                    Pred::And(c, d) => {
                        cc_ops::jcc_rel8(buf, c.invert(), 2 + len);
                        cc_ops::jcc_rel8(buf, d.invert(), len);
                    }
                }
                buf.put_data(&mov);
            }
            SseInst::FMinMax {
                size, max, dst, b, ..
            } => emit_fminmax(buf, size, max, xmm(dst), xmm(b)),
            SseInst::MovToXmm { size, dst, src } => {
                enc::movd_to_xmm(buf, size, xmm(dst), &GprMem::Reg(gpr(src)));
            }
            SseInst::MovFromXmm { size, dst, src } => {
                enc::movd_from_xmm(buf, size, &GprMem::Reg(gpr(dst)), xmm(src));
            }
            SseInst::CvtIntToFloat {
                fsize,
                isize,
                dst,
                src,
            } => {
                enc::cvt_int_to_float(buf, fsize, isize, xmm(dst), &GprMem::Reg(gpr(src)));
            }
            SseInst::CvtU64ToFloat { fsize, dst, src } => {
                emit_cvt_u64(buf, fsize, xmm(dst), gpr(src))
            }
            SseInst::FcvtToInt {
                fsize,
                isize,
                signed,
                sat,
                dst,
                src,
            } => {
                let conv = FcvtToInt {
                    fsize,
                    isize,
                    signed,
                    sat,
                };
                conv.emit(xmm(src), gpr(dst), ctx, buf);
            }
        }
    }
}

/// `fmin`/`fmax` of `dst` (holding `a`) and `b`: unordered gives a NaN (`a + b`), equal
/// values combine sign bits (`or` for min so `-0` wins, `and` for max so `+0` wins),
/// anything else is `minss`/`maxss`.
fn emit_fminmax(buf: &mut Buf, size: FloatSize, max: bool, dst: Xmm, b: Xmm) {
    let b = XmmMem::Reg(b);
    let f32 = size == FloatSize::F32;
    let pick = |s, d| if f32 { s } else { d };
    let eq_op = if max {
        pick(SseOp::Andps, SseOp::Andpd)
    } else {
        pick(SseOp::Orps, SseOp::Orpd)
    };
    let mm_op = if max {
        pick(SseOp::Maxss, SseOp::Maxsd)
    } else {
        pick(SseOp::Minss, SseOp::Minsd)
    };
    let eq = bytes(|s| {
        enc::sse_r_rm(s, eq_op, dst, &b);
    });
    let nan = bytes(|s| {
        enc::sse_r_rm(s, pick(SseOp::Addss, SseOp::Addsd), dst, &b);
    });
    let mm = bytes(|s| {
        enc::sse_r_rm(s, mm_op, dst, &b);
    });
    enc::sse_r_rm(buf, pick(SseOp::Ucomiss, SseOp::Ucomisd), dst, &b);
    cc_ops::jcc_rel8(buf, Cc::P, (2 + eq.len() + 2) as i8);
    cc_ops::jcc_rel8(buf, Cc::NE, (eq.len() + 2 + nan.len() + 2) as i8);
    buf.put_data(&eq);
    cc_ops::jmp_rel8(buf, (nan.len() + 2 + mm.len()) as i8);
    buf.put_data(&nan);
    cc_ops::jmp_rel8(buf, mm.len() as i8);
    buf.put_data(&mm);
}

/// Unsigned 64-bit to float: non-negative values convert directly; others are halved with
/// the lost bit kept sticky (`(x >> 1) | (x & 1)`, in r11), converted, and doubled, which
/// rounds like a direct conversion.
fn emit_cvt_u64(buf: &mut Buf, fsize: FloatSize, dst: Xmm, src: Gpr) {
    let r11 = GprMem::Reg(Gpr::R11);
    let small = bytes(|s| {
        enc::cvt_int_to_float(s, fsize, Size::S64, dst, &GprMem::Reg(src));
    });
    let or1 = bytes(|s| {
        alu_enc::alu_rm_imm(s, AluOp::Or, Size::S64, &r11, 1);
    });
    let add = match fsize {
        FloatSize::F32 => SseOp::Addss,
        FloatSize::F64 => SseOp::Addsd,
    };
    let big = bytes(|s| {
        moves::mov_rm_r(s, Size::S64, &r11, src);
        shift::shift_rm_imm(s, ShiftOp::Shr, Size::S64, &r11, 1);
        cc_ops::jcc_rel8(s, Cc::AE, or1.len() as i8);
        s.extend_from_slice(&or1);
        enc::cvt_int_to_float(s, fsize, Size::S64, dst, &r11);
        enc::sse_r_rm(s, add, dst, &XmmMem::Reg(dst));
    });
    alu_enc::test_rm_r(buf, Size::S64, &GprMem::Reg(src), src);
    cc_ops::jcc_rel8(buf, Cc::S, (small.len() + 2) as i8);
    buf.put_data(&small);
    cc_ops::jmp_rel8(buf, big.len() as i8);
    buf.put_data(&big);
}

/// Float to integer with Cranelift's semantics. The truncating conversion gives `MIN` for
/// NaN and out-of-range inputs, so the checks only run then (signed) or before converting
/// (unsigned, whose range the signed conversion does not cover). Uses xmm15 and r11.
struct FcvtToInt {
    fsize: FloatSize,
    isize: Size,
    signed: bool,
    sat: bool,
}

impl FcvtToInt {
    /// The float `v` as bits of `fsize`.
    fn bits(&self, v: f64) -> u64 {
        match self.fsize {
            FloatSize::F32 => u64::from((v as f32).to_bits()),
            FloatSize::F64 => v.to_bits(),
        }
    }

    fn ucomi(&self) -> SseOp {
        match self.fsize {
            FloatSize::F32 => SseOp::Ucomiss,
            FloatSize::F64 => SseOp::Ucomisd,
        }
    }

    fn emit(&self, src: Xmm, dst: Gpr, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let done = buf.get_label();
        if self.signed {
            self.signed_checks(src, dst, done, ctx, buf);
        } else {
            self.unsigned(src, dst, done, ctx, buf);
        }
        buf.bind_label(done, ctx.chaos);
    }

    fn signed_checks(&self, src: Xmm, dst: Gpr, done: Label, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let (fsize, isize, ucomi) = (self.fsize, self.isize, self.ucomi());
        let bits = isize.bits();
        let scratch = Xmm::new(15);
        let dst_rm = GprMem::Reg(dst);
        enc::cvt_float_to_int(buf, fsize, isize, true, dst, &XmmMem::Reg(src));
        // `dst - 1` overflows exactly when dst is MIN.
        alu_enc::alu_rm_imm(buf, AluOp::Cmp, isize, &dst_rm, 1);
        jcc_to(buf, Cc::NO, done);
        enc::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(src));
        let min = -(2f64.powi(bits as i32 - 1));
        if self.sat {
            let not_nan = buf.get_label();
            jcc_to(buf, Cc::NP, not_nan);
            alu_enc::alu_rm_r(buf, AluOp::Xor, Size::S32, &dst_rm, dst);
            jmp_to(buf, done);
            buf.bind_label(not_nan, ctx.chaos);
            enc::sse_r_rm(buf, SseOp::Xorps, scratch, &XmmMem::Reg(scratch));
            enc::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(scratch));
            jcc_to(buf, Cc::B, done);
            let max = if bits == 64 {
                i64::MAX as u64
            } else {
                i32::MAX as u64
            };
            moves::mov_r_imm64(buf, dst, max);
        } else {
            trap_unless(buf, Cc::NP, TrapCode::BAD_CONVERSION_TO_INTEGER);
            // MIN is legitimate when MIN - 1 < src (f64 to i32 can tell) or MIN <= src.
            let (threshold, ok) = if bits == 32 && fsize == FloatSize::F64 {
                (min - 1.0, Cc::A)
            } else {
                (min, Cc::AE)
            };
            sse_const(buf, ucomi, src, fsize, self.bits(threshold));
            trap_unless(buf, ok, TrapCode::INTEGER_OVERFLOW);
            enc::sse_r_rm(buf, SseOp::Xorps, scratch, &XmmMem::Reg(scratch));
            enc::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(scratch));
            trap_unless(buf, Cc::B, TrapCode::INTEGER_OVERFLOW);
        }
    }

    fn unsigned(&self, src: Xmm, dst: Gpr, done: Label, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        let (fsize, ucomi, sat) = (self.fsize, self.ucomi(), self.sat);
        let bits = self.isize.bits();
        let scratch = Xmm::new(15);
        let dst_rm = GprMem::Reg(dst);
        let (zero, max) = (buf.get_label(), buf.get_label());
        enc::sse_r_rm(buf, ucomi, src, &XmmMem::Reg(src));
        if sat {
            jcc_to(buf, Cc::P, zero);
        } else {
            trap_unless(buf, Cc::NP, TrapCode::BAD_CONVERSION_TO_INTEGER);
        }
        sse_const(buf, ucomi, src, fsize, self.bits(-1.0));
        if sat {
            jcc_to(buf, Cc::BE, zero);
        } else {
            trap_unless(buf, Cc::A, TrapCode::INTEGER_OVERFLOW);
        }
        sse_const(buf, ucomi, src, fsize, self.bits(2f64.powi(bits as i32)));
        if sat {
            jcc_to(buf, Cc::AE, max);
        } else {
            trap_unless(buf, Cc::B, TrapCode::INTEGER_OVERFLOW);
        }
        if bits == 32 {
            // In range for the signed 64-bit conversion.
            enc::cvt_float_to_int(buf, fsize, Size::S64, true, dst, &XmmMem::Reg(src));
        } else {
            let big = buf.get_label();
            let two63 = self.bits(2f64.powi(63));
            sse_const(buf, ucomi, src, fsize, two63);
            jcc_to(buf, Cc::AE, big);
            enc::cvt_float_to_int(buf, fsize, Size::S64, true, dst, &XmmMem::Reg(src));
            jmp_to(buf, done);
            buf.bind_label(big, ctx.chaos);
            enc::sse_r_rm(buf, SseOp::Movaps, scratch, &XmmMem::Reg(src));
            let sub = match fsize {
                FloatSize::F32 => SseOp::Subss,
                FloatSize::F64 => SseOp::Subsd,
            };
            sse_const(buf, sub, scratch, fsize, two63);
            enc::cvt_float_to_int(buf, fsize, Size::S64, true, dst, &XmmMem::Reg(scratch));
            moves::mov_r_imm64(buf, Gpr::R11, 1 << 63);
            alu_enc::alu_rm_r(buf, AluOp::Xor, Size::S64, &dst_rm, Gpr::R11);
        }
        if sat {
            jmp_to(buf, done);
            buf.bind_label(zero, ctx.chaos);
            alu_enc::alu_rm_r(buf, AluOp::Xor, Size::S32, &dst_rm, dst);
            jmp_to(buf, done);
            buf.bind_label(max, ctx.chaos);
            let m = if bits == 64 {
                u64::MAX
            } else {
                u64::from(u32::MAX)
            };
            moves::mov_r_imm64(buf, dst, m);
        } else {
            // Unused: bind them so every label is bound.
            buf.bind_label(zero, ctx.chaos);
            buf.bind_label(max, ctx.chaos);
        }
    }
}
