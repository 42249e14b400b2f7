//! The integer ALU family: moves, two-address arithmetic, flag results, condition
//! materialization, 128-bit pairs, multiplication and division.

use kestrel_ir::TrapCode;
use kestrel_regalloc::{PReg, RegClass, VReg};

use super::super::asm::alu::{self as enc, AluOp, UnaryOp};
use super::super::asm::moves::{self, ExtMode};
use super::super::asm::mul_div::{self, MulDivOp};
use super::super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::super::asm::sse::{self as sse_enc, SseOp};
use super::super::asm::{Gpr, GprMem, Size, XmmMem};
use super::super::emit::{bytes, gpr, trap, trap_unless, xmm, Buf, Ctx};
use super::{gpr_preg, map_operands, Cond, Mem, OperandSpec, Operands, Pred, RegImm};

/// One ALU instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum AluInst<R = VReg> {
    /// `dst = imm` (the shortest `mov`). Operands: `[dst def]`.
    MovImm { dst: R, imm: u64 },
    /// `dst = src`, 64 bits, of either register class. Operands: `[src use, dst def]`.
    Mov { dst: R, src: R },
    /// `dst = a op b` (two-address). Operands: `[a use, b use?, dst def reusing a]`.
    Alu { op: AluOp, size: Size, dst: R, a: R, b: RegImm<R> },
    /// `dst = a * b`, truncated. Operands as `Alu`.
    Imul { size: Size, dst: R, a: R, b: RegImm<R> },
    /// `dst = a op [mem]` (`op` is not `cmp`) or, with `op` `None`, `dst = a * [mem]`
    /// (truncated): a load merged into its user, a trap site with `trap` when the access may
    /// fault. Operands: `[a use, address uses, dst def reusing a]`.
    AluMem {
        op: Option<AluOp>,
        size: Size,
        dst: R,
        a: R,
        mem: Mem<R>,
        trap: Option<TrapCode>,
    },
    /// `dst = op a` (`neg`, `not`). Operands: `[a use, dst def reusing a]`.
    Unary { op: UnaryOp, size: Size, dst: R, a: R },
    /// Zero or sign extension. Operands: `[src use, dst def]`.
    Ext { mode: ExtMode, signed: bool, dst: R, src: R },
    /// `dst = cond ? 1 : 0`. Operands: `[cond…, dst def]`.
    Setcc { cond: Cond<R>, dst: R },
    /// `dst = cond ? t : f` (64-bit `cmov`; `cmov c1; cmov c2` for `Pred::Or`, never
    /// `Pred::And`: build it with [`super::Inst::cmov`]). Operands: `[cond…, t use, f use,
    /// dst def reusing f]`.
    Cmov { cond: Cond<R>, t: R, f: R, dst: R },
    /// `dst = a op b` at `size` and `flag = cc` of the flags it set (overflow/carry out).
    /// Operands: `[a use, b use?, dst def reusing a, flag def]`.
    AluFlags {
        op: AluOp,
        size: Size,
        dst: R,
        a: R,
        b: RegImm<R>,
        cc: Cc,
        flag: R,
    },
    /// `dst = a op b + carry` (`adc`/`sbb` at `size`) where the carry in is `cin != 0` (an
    /// `i8`), and `flag = cc` afterwards. Operands: `[a use, b use, cin use, dst def reusing a,
    /// flag def]`.
    AluCarry {
        op: AluOp,
        size: Size,
        dst: R,
        a: R,
        b: R,
        cin: R,
        cc: Cc,
        flag: R,
    },
    /// `dst = a op b`, trapping with `code` when `cc` holds afterwards. Operands as `Alu`.
    AluTrap {
        op: AluOp,
        size: Size,
        dst: R,
        a: R,
        b: RegImm<R>,
        cc: Cc,
        code: TrapCode,
    },
    /// 128-bit `dst = a op b` on halves: `op_lo` on the low halves, then `op_hi` (which may
    /// consume the carry, `adc`/`sbb`) on the high ones. Operands: `[a_lo, a_hi, b_lo, b_hi,
    /// cin? uses, dst_lo def reusing a_lo, dst_hi def reusing a_hi, flag def?]`.
    Alu128 {
        op_lo: AluOp,
        op_hi: AluOp,
        dst: [R; 2],
        a: [R; 2],
        b: [R; 2],
        /// A carry/borrow in (`cin != 0`), used by `op_lo` (then `adc`/`sbb`).
        cin: Option<R>,
        /// `flag = cc` of the final flags (carry or overflow of the whole operation).
        flag: Option<(Cc, R)>,
    },
    /// Division of `dividend` by `divisor` at `size` (32 or 64; narrower types arrive
    /// extended), with the divide-by-zero trap and, for signed division, the overflow trap
    /// (`narrow` is the IR type's width, whose `MIN / -1` overflows). The remainder is left in
    /// `dst` when `rem`. Operands: `[dividend use in rax, divisor use, tmp early def in rdx,
    /// dst def in rax]`.
    Div {
        size: Size,
        narrow: Size,
        signed: bool,
        rem: bool,
        dividend: R,
        divisor: R,
        tmp: R,
        dst: R,
    },
    /// High half of the product (`mul`/`imul` into `rdx:rax`). Operands: `[a use in rax, b use,
    /// dst def in rdx, tmp def in rax]`.
    MulHi {
        size: Size,
        signed: bool,
        a: R,
        b: R,
        dst: R,
        tmp: R,
    },
    /// `lo = a * b` (one-operand `mul`/`imul` at `size`) and `flag` = the product overflowed.
    /// Operands: `[a use in rax, b use, tmp early def in rdx, lo def in rax, flag def]`.
    MulOverflow {
        size: Size,
        signed: bool,
        a: R,
        b: R,
        tmp: R,
        lo: R,
        flag: R,
    },
}

impl AluInst {
    map_operands! {
        pub(in crate::isa::x64) AluInst, |m|
        let (rax, rdx) = (gpr_preg(Gpr::RAX), gpr_preg(Gpr::RDX));
        {
            MovImm { imm } [dst = m.reg_def(*dst)],
            Mov {} [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Alu { op, size } [a = m.reg_use(*a), b = b.map(m), dst = m.reuse_def(*dst, 0)],
            Imul { size } [a = m.reg_use(*a), b = b.map(m), dst = m.reuse_def(*dst, 0)],
            AluMem { op, size, trap } [
                a = m.reg_use(*a),
                mem = mem.map(m),
                dst = m.reuse_def(*dst, 0)
            ],
            Unary { op, size } [a = m.reg_use(*a), dst = m.reuse_def(*dst, 0)],
            Ext { mode, signed } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Setcc {} [cond = cond.map(m), dst = m.reg_def(*dst)],
            // `dst` reuses `f`, the operand just before it.
            Cmov {} [
                cond = cond.map(m),
                t = m.reg_use(*t),
                f = m.reg_use(*f),
                dst = m.reuse_def(*dst, m.next_index() - 1)
            ],
            AluFlags { op, size, cc } [
                a = m.reg_use(*a),
                b = b.map(m),
                dst = m.reuse_def(*dst, 0),
                flag = m.reg_def(*flag)
            ],
            AluCarry { op, size, cc } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                cin = m.reg_use(*cin),
                dst = m.reuse_def(*dst, 0),
                flag = m.reg_def(*flag)
            ],
            AluTrap { op, size, cc, code } [
                a = m.reg_use(*a),
                b = b.map(m),
                dst = m.reuse_def(*dst, 0)
            ],
            Alu128 { op_lo, op_hi } [
                a = m.pair(*a, Operands::reg_use),
                b = m.pair(*b, Operands::reg_use),
                cin = cin.map(|c| m.reg_use(c)),
                dst = [m.reuse_def(dst[0], 0), m.reuse_def(dst[1], 1)],
                flag = flag.map(|(cc, f)| (cc, m.reg_def(f)))
            ],
            Div { size, narrow, signed, rem } [
                dividend = m.fixed_use(*dividend, rax),
                divisor = m.reg_use(*divisor),
                tmp = m.fixed_early_def(*tmp, rdx),
                dst = m.fixed_def(*dst, rax)
            ],
            MulHi { size, signed } [
                a = m.fixed_use(*a, rax),
                b = m.reg_use(*b),
                dst = m.fixed_def(*dst, rdx),
                tmp = m.fixed_def(*tmp, rax)
            ],
            MulOverflow { size, signed } [
                a = m.fixed_use(*a, rax),
                b = m.reg_use(*b),
                tmp = m.fixed_early_def(*tmp, rdx),
                lo = m.fixed_def(*lo, rax),
                flag = m.reg_def(*flag)
            ],
        }
    }
}

impl AluInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            AluInst::MovImm { dst, imm } => format!("{dst} = mov {imm:#x}"),
            AluInst::Mov { dst, src } => format!("{dst} = mov {src}"),
            AluInst::Alu {
                op,
                size,
                dst,
                a,
                b,
            } => format!("{dst} = {op:?}{} {a}, {}", size.bits(), b.pretty()).to_lowercase(),
            AluInst::Imul { size, dst, a, b } => {
                format!("{dst} = imul{} {a}, {}", size.bits(), b.pretty())
            }
            AluInst::AluMem {
                op,
                size,
                dst,
                a,
                mem,
                ..
            } => {
                let name = op.map_or("imul".to_string(), |op| format!("{op:?}").to_lowercase());
                format!("{dst} = {name}{} {a}, {}", size.bits(), mem.pretty())
            }
            AluInst::Unary { op, size, dst, a } => {
                format!("{dst} = {op:?}{} {a}", size.bits()).to_lowercase()
            }
            AluInst::Ext {
                mode,
                signed,
                dst,
                src,
            } => {
                let k = if *signed { "movsx" } else { "movzx" };
                format!("{dst} = {k}.{mode:?} {src}")
            }
            AluInst::Setcc { cond, dst } => format!("{dst} = set {}", cond.pretty()),
            AluInst::Cmov { cond, t, f, dst } => {
                format!("{dst} = cmov {} ? {t} : {f}", cond.pretty())
            }
            AluInst::AluFlags {
                op,
                size,
                dst,
                a,
                b,
                cc,
                flag,
            } => format!(
                "{dst}, {flag} = {op:?}{} {a}, {} ?{cc:?}",
                size.bits(),
                b.pretty()
            )
            .to_lowercase(),
            AluInst::AluCarry {
                op,
                size,
                dst,
                a,
                b,
                cin,
                cc,
                flag,
            } => format!(
                "{dst}, {flag} = {op:?}{} {a}, {b}, carry {cin} ?{cc:?}",
                size.bits()
            )
            .to_lowercase(),
            AluInst::AluTrap {
                op,
                size,
                dst,
                a,
                b,
                cc,
                code,
            } => format!(
                "{dst} = {op:?}{} {a}, {} trap ?{cc:?} {code}",
                size.bits(),
                b.pretty()
            )
            .to_lowercase(),
            AluInst::Alu128 {
                op_lo,
                op_hi,
                dst,
                a,
                b,
                cin,
                flag,
            } => {
                let carry = cin
                    .as_ref()
                    .map(|c| format!(", carry {c}"))
                    .unwrap_or_default();
                let flag = flag
                    .as_ref()
                    .map(|(_, f)| format!(", {f}"))
                    .unwrap_or_default();
                format!(
                    "{}:{}{flag} = {op_lo:?}/{op_hi:?} {}:{}, {}:{}{carry}",
                    dst[1], dst[0], a[1], a[0], b[1], b[0]
                )
                .to_lowercase()
            }
            AluInst::Div {
                size,
                signed,
                rem,
                dividend,
                divisor,
                tmp,
                dst,
                ..
            } => {
                let k = match (signed, rem) {
                    (false, false) => "udiv",
                    (true, false) => "sdiv",
                    (false, true) => "urem",
                    (true, true) => "srem",
                };
                format!(
                    "{dst} = {k}{} {dividend}, {divisor} (clobbers {tmp})",
                    size.bits()
                )
            }
            AluInst::MulHi {
                size,
                signed,
                a,
                b,
                dst,
                tmp,
            } => {
                let k = if *signed { "smulhi" } else { "umulhi" };
                format!("{dst} = {k}{} {a}, {b} (clobbers {tmp})", size.bits())
            }
            AluInst::MulOverflow {
                size,
                signed,
                a,
                b,
                tmp,
                lo,
                flag,
            } => {
                let k = if *signed { "smul" } else { "umul" };
                format!(
                    "{lo}, {flag} = {k}_overflow{} {a}, {b} (clobbers {tmp})",
                    size.bits()
                )
            }
        }
    }
}

/// `setcc` of `cc` into `flag`, zero-extended.
fn set_flag(buf: &mut Buf, cc: Cc, flag: Gpr) {
    cc_ops::setcc(buf, cc, &GprMem::Reg(flag));
    moves::movzx(buf, ExtMode::BL, flag, &GprMem::Reg(flag));
}

/// `dst op= b` (two-address; `dst` holds `a`).
fn alu_rm(buf: &mut Buf, op: AluOp, size: Size, dst: Gpr, b: RegImm<PReg>) {
    let dst = GprMem::Reg(dst);
    match b {
        RegImm::Reg(b) => enc::alu_rm_r(buf, op, size, &dst, gpr(b)),
        RegImm::Imm(k) => enc::alu_rm_imm(buf, op, size, &dst, k),
    };
}

/// CF = (`cin` != 0): `neg` sets the carry exactly for a nonzero operand (on a copy in r11,
/// the scratch register).
fn carry_in(buf: &mut Buf, cin: PReg) {
    let r11 = GprMem::Reg(Gpr::R11);
    moves::mov_rm_r(buf, Size::S32, &r11, gpr(cin));
    enc::unary_rm(buf, UnaryOp::Neg, Size::S8, &r11);
}

impl AluInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        match *self {
            AluInst::MovImm { dst, imm } => moves::mov_r_imm64(buf, gpr(dst), imm),
            AluInst::Mov { dst, src } => copy_reg(buf, dst, src),
            AluInst::Alu {
                op,
                size,
                dst,
                a,
                b,
            } => {
                debug_assert_eq!(a, dst);
                alu_rm(buf, op, size, gpr(dst), b);
            }
            AluInst::Imul { size, dst, b, .. } => {
                let dst = gpr(dst);
                match b {
                    RegImm::Reg(b) => mul_div::imul_r_rm(buf, size, dst, &GprMem::Reg(gpr(b))),
                    RegImm::Imm(k) => mul_div::imul_r_rm_imm(buf, size, dst, &GprMem::Reg(dst), k),
                };
            }
            AluInst::AluMem {
                op,
                size,
                dst,
                a,
                mem,
                trap,
            } => {
                debug_assert_eq!(a, dst);
                let m = GprMem::Mem(mem.amode(ctx.frame));
                // The access is this instruction's: a fault here is the merged load's trap.
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                match op {
                    Some(op) => enc::alu_r_rm(buf, op, size, gpr(dst), &m),
                    None => mul_div::imul_r_rm(buf, size, gpr(dst), &m),
                };
            }
            AluInst::Unary { op, size, dst, .. } => {
                enc::unary_rm(buf, op, size, &GprMem::Reg(gpr(dst)));
            }
            AluInst::Ext {
                mode,
                signed,
                dst,
                src,
            } => {
                let (src, dst) = (GprMem::Reg(gpr(src)), gpr(dst));
                if signed {
                    moves::movsx(buf, mode, dst, &src);
                } else {
                    moves::movzx(buf, mode, dst, &src);
                }
            }
            AluInst::Setcc { ref cond, dst } => {
                cond.emit_test(ctx.frame, buf);
                let dst = gpr(dst);
                let (c, second) = match cond.pred() {
                    Pred::One(c) => (c, None),
                    Pred::And(c, d) => (c, Some((d, AluOp::And))),
                    Pred::Or(c, d) => (c, Some((d, AluOp::Or))),
                };
                cc_ops::setcc(buf, c, &GprMem::Reg(dst));
                if let Some((d, op)) = second {
                    // r11 is free inside an instruction (the scratch-register contract).
                    cc_ops::setcc(buf, d, &GprMem::Reg(Gpr::R11));
                    enc::alu_rm_r(buf, op, Size::S8, &GprMem::Reg(dst), Gpr::R11);
                }
                moves::movzx(buf, ExtMode::BL, dst, &GprMem::Reg(dst));
            }
            AluInst::Cmov {
                ref cond,
                t,
                f,
                dst,
            } => {
                debug_assert_eq!(f, dst);
                cond.emit_test(ctx.frame, buf);
                let (t, dst) = (GprMem::Reg(gpr(t)), gpr(dst));
                match cond.pred() {
                    Pred::One(c) => {
                        cc_ops::cmov(buf, c, Size::S64, dst, &t);
                    }
                    // `cmov` leaves the flags alone: either condition moves `t`.
                    Pred::Or(c, d) => {
                        cc_ops::cmov(buf, c, Size::S64, dst, &t);
                        cc_ops::cmov(buf, d, Size::S64, dst, &t);
                    }
                    Pred::And(..) => unreachable!("Inst::cmov turns And into Or"),
                }
            }
            AluInst::AluFlags {
                op,
                size,
                dst,
                b,
                cc,
                flag,
                ..
            } => {
                alu_rm(buf, op, size, gpr(dst), b);
                set_flag(buf, cc, gpr(flag));
            }
            AluInst::AluCarry {
                op,
                size,
                dst,
                b,
                cin,
                cc,
                flag,
                ..
            } => {
                carry_in(buf, cin);
                enc::alu_rm_r(buf, op, size, &GprMem::Reg(gpr(dst)), gpr(b));
                set_flag(buf, cc, gpr(flag));
            }
            AluInst::AluTrap {
                op,
                size,
                dst,
                b,
                cc,
                code,
                ..
            } => {
                alu_rm(buf, op, size, gpr(dst), b);
                trap_unless(buf, cc.invert(), code);
            }
            AluInst::Alu128 {
                op_lo,
                op_hi,
                dst,
                a,
                b,
                cin,
                flag,
            } => {
                debug_assert_eq!(a, dst);
                let (lo, hi) = (gpr(dst[0]), gpr(dst[1]));
                if let Some(cin) = cin {
                    carry_in(buf, cin);
                }
                // dst_lo is written (in a_lo's register) before b_hi is read. They share a
                // register exactly when b_hi is the same value as a_lo (`x ^ (x.hi:x.lo)`
                // after an `isplit`); then b_hi is read from a copy in r11, which is free
                // once the carry is in CF (`mov` leaves the flags alone).
                let mut b_hi = gpr(b[1]);
                if b_hi == lo {
                    moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(Gpr::R11), b_hi);
                    b_hi = Gpr::R11;
                }
                enc::alu_rm_r(buf, op_lo, Size::S64, &GprMem::Reg(lo), gpr(b[0]));
                enc::alu_rm_r(buf, op_hi, Size::S64, &GprMem::Reg(hi), b_hi);
                if let Some((cc, f)) = flag {
                    set_flag(buf, cc, gpr(f));
                }
            }
            AluInst::Div {
                size,
                narrow,
                signed,
                rem,
                dividend,
                divisor,
                ..
            } => {
                debug_assert_eq!(gpr(dividend), Gpr::RAX);
                emit_div(buf, (size, narrow), (signed, rem), gpr(divisor));
            }
            AluInst::MulHi {
                size, signed, b, ..
            } => mul_one(buf, size, signed, gpr(b)),
            AluInst::MulOverflow {
                size,
                signed,
                b,
                flag,
                ..
            } => {
                mul_one(buf, size, signed, gpr(b));
                set_flag(buf, Cc::O, gpr(flag));
            }
        }
    }
}

/// `dst = src` in either register class (the ABI copies a float argument passed twice).
fn copy_reg(buf: &mut Buf, dst: PReg, src: PReg) {
    if dst == src {
        return;
    }
    match src.class() {
        RegClass::Float => sse_enc::sse_r_rm(buf, SseOp::Movaps, xmm(dst), &XmmMem::Reg(xmm(src))),
        RegClass::Int => moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(gpr(dst)), gpr(src)),
    };
}

/// One-operand `mul`/`imul`: `rdx:rax = rax * b`.
fn mul_one(buf: &mut Buf, size: Size, signed: bool, b: Gpr) {
    let op = if signed {
        MulDivOp::Imul
    } else {
        MulDivOp::Mul
    };
    mul_div::mul_div_rm(buf, op, size, &GprMem::Reg(b));
}

/// `rax = rax / d` (or the remainder) with the division traps; see [`AluInst::Div`].
fn emit_div(buf: &mut Buf, (size, narrow): (Size, Size), (signed, rem): (bool, bool), d: Gpr) {
    let dm = GprMem::Reg(d);
    enc::test_rm_r(buf, size, &dm, d);
    trap_unless(buf, Cc::NE, TrapCode::INTEGER_DIVISION_BY_ZERO);
    let rdx_to_rax = bytes(|b| {
        moves::mov_rm_r(b, Size::S64, &GprMem::Reg(Gpr::RAX), Gpr::RDX);
    });
    if !signed {
        enc::alu_rm_r(buf, AluOp::Xor, Size::S32, &GprMem::Reg(Gpr::RDX), Gpr::RDX);
        mul_div::mul_div_rm(buf, MulDivOp::Div, size, &dm);
        if rem {
            buf.put_data(&rdx_to_rax);
        }
        return;
    }
    let mut div = bytes(|b| {
        mul_div::sign_extend_rdx(b, size);
        mul_div::mul_div_rm(b, MulDivOp::Idiv, size, &dm);
    });
    enc::alu_rm_imm(buf, AluOp::Cmp, size, &dm, -1);
    if rem {
        // x % -1 == 0 for every x (and idiv would fault on MIN % -1).
        div.extend_from_slice(&rdx_to_rax);
        let zero = bytes(|b| {
            enc::alu_rm_r(b, AluOp::Xor, Size::S32, &GprMem::Reg(Gpr::RAX), Gpr::RAX);
        });
        cc_ops::jcc_rel8(buf, Cc::NE, (zero.len() + 2) as i8);
        buf.put_data(&zero);
        cc_ops::jmp_rel8(buf, div.len() as i8);
        buf.put_data(&div);
    } else {
        // x / -1 == -x, which overflows exactly when x is the narrow type's MIN: `neg` at that
        // width sets OF then.
        let neg = bytes(|b| {
            enc::unary_rm(b, UnaryOp::Neg, narrow, &GprMem::Reg(Gpr::RAX));
        });
        cc_ops::jcc_rel8(buf, Cc::NE, (neg.len() + 2 + 2) as i8);
        buf.put_data(&neg);
        cc_ops::jcc_rel8(buf, Cc::NO, (2 + div.len()) as i8);
        trap(buf, TrapCode::INTEGER_OVERFLOW);
        buf.put_data(&div);
    }
}
