//! The integer family: constants, moves, three-register and immediate arithmetic, bitfield
//! moves (constant shifts, extensions), bit operations, multiply-add, division with CLIF's
//! traps, and condition materialization (`cset`, `csel`).

use kestrel_ir::TrapCode;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::add_sub::{
    add_sub_carry, add_sub_imm, add_sub_reg, adds_subs_imm, adds_subs_reg, AddSub, AddSubImm,
};
use super::super::asm::bitfield::{bitfield, Bitfield, BitfieldOp};
use super::super::asm::bits::{bit_op, BitOp};
use super::super::asm::branch::{b_cond, cbnz};
use super::super::asm::cond::{csel, Cond as Cc, CselOp};
use super::super::asm::logical::{and_orr_eor_imm, logical_reg, LogicalImmOp, LogicalOp};
use super::super::asm::logical_imm::LogicalImm;
use super::super::asm::mul_div::{div, madd, mul_high, MaddOp, Signedness};
use super::super::asm::operands::ShiftAmount;
use super::super::asm::shift::{extr, shift_reg, ShiftOp};
use super::super::asm::{Gpr, GprZr, PcOffset, Size};
use super::super::emit::{copy_reg, mov_imm, sp, trap, zr, Buf};
use super::{map_operands, Cond, OperandSpec, Operands, Pred};

/// Three-register integer operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluOp {
    Add,
    Sub,
    And,
    Orr,
    Eor,
    /// `a & !b`.
    Bic,
    /// `a | !b`.
    Orn,
    /// `a ^ !b`.
    Eon,
    /// Shifts by a register, the amount taken modulo the width.
    Lsl,
    Lsr,
    Asr,
    Ror,
    /// The low half of the product.
    Mul,
    /// The high 64 bits of the 128-bit product (64-bit only).
    Smulh,
    Umulh,
}

/// One-register integer operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `0 - a`.
    Neg,
    /// `!a`.
    Not,
}

/// Division and remainder, with CLIF's semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DivKind {
    Udiv,
    Sdiv,
    Urem,
    Srem,
}

/// One integer instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum AluInst<R = VReg> {
    /// `dst = imm` at `size` (the shortest `movz`/`movn`/`orr`/`movk` sequence). Operands:
    /// `[dst def]`.
    MovImm { size: Size, dst: R, imm: u64 },
    /// `dst = src`, 64 bits, of either register class (all 128 bits of an FP/SIMD register
    /// in a function with vectors, `mach.rs`). Operands: `[src use, dst def]`.
    Mov { dst: R, src: R },
    /// `dst = a op b` at `size`. Operands: `[a use, b use, dst def]`.
    Rrr { op: AluOp, size: Size, dst: R, a: R, b: R },
    /// `dst = a + imm` or `a - imm`. Operands: `[a use, dst def]`.
    AddImm {
        op: AddSub,
        size: Size,
        dst: R,
        a: R,
        imm: AddSubImm,
    },
    /// `dst = a op imm` with a bitmask immediate, at the immediate's size. Operands:
    /// `[a use, dst def]`.
    LogicImm { op: LogicalImmOp, dst: R, a: R, imm: LogicalImm },
    /// `dst = op a` at `size`. Operands: `[a use, dst def]`.
    Unary { op: UnaryOp, size: Size, dst: R, a: R },
    /// A bitfield move (a shift by a constant, an extract, an extension), at the field's
    /// size. Operands: `[src use, dst def]`.
    Bitfield { op: BitfieldOp, field: Bitfield, dst: R, src: R },
    /// `dst = a` rotated right by `amount` (`extr`, at the amount's size). Operands:
    /// `[a use, dst def]`.
    RotrImm { amount: ShiftAmount, dst: R, a: R },
    /// `rbit`, `rev`, `rev16`, `clz`, `cls` at `size`. Operands: `[src use, dst def]`.
    BitOp { op: BitOp, size: Size, dst: R, src: R },
    /// `dst = c + a * b` (`Madd`) or `c - a * b` (`Msub`). Operands: `[a use, b use, c use,
    /// dst def]`.
    Madd { op: MaddOp, size: Size, dst: R, a: R, b: R, c: R },
    /// Division or remainder of `a` by `b` at `size` (32 or 64; narrower IR types arrive
    /// extended by the rules), trapping with `int_divz` when `b` is 0 and, for `sdiv`, with
    /// `int_ovf` when `a` is the `narrow`-bit type's MIN and `b` is -1. Operands: `[a use,
    /// b use, dst def]`.
    Div {
        kind: DivKind,
        size: Size,
        narrow: u8,
        dst: R,
        a: R,
        b: R,
    },
    /// `dst = a + b` or `a - b` at `size` (`adds`/`subs`) and `flag = cc` of the flags it
    /// set (carry, borrow or overflow). Operands: `[a use, b use, dst def, flag def]`.
    AddsSet {
        op: AddSub,
        size: Size,
        cc: Cc,
        dst: R,
        flag: R,
        a: R,
        b: R,
    },
    /// `dst = a + b + cin` (`adcs`) or `a - b - cin` (`sbcs`) at `size`, where the carry
    /// or borrow in is `cin != 0` (an `i8`), and `flag = cc` of the flags it set. Operands:
    /// `[a use, b use, cin use, dst def, flag def]`.
    AddsCarry {
        op: AddSub,
        size: Size,
        cc: Cc,
        dst: R,
        flag: R,
        a: R,
        b: R,
        cin: R,
    },
    /// `dst = a + b` at `size`, trapping with `code` on unsigned overflow (the carry).
    /// Operands: `[a use, b use, dst def]`.
    AddsTrap { size: Size, code: TrapCode, dst: R, a: R, b: R },
    /// `dst = a + b` or `a - b` on `i128` register pairs (low half first): `adds`/`adcs` or
    /// `subs`/`sbcs`. With `cin`, the carry or borrow in is `cin != 0` (an `i8`, as in
    /// [`AluInst::AddsCarry`]) and the low half uses the carry form too; with `flag`,
    /// `flag = cc` of the flags of the 128-bit result (`cc` means nothing without it). The low half is written before the
    /// high halves are read, so it is an early def. Operands: `[a.lo use, a.hi use, b.lo
    /// use, b.hi use, cin use?, dst.lo early def, dst.hi def, flag def?]`.
    Pair { op: AddSub, cc: Cc, regs: Box<PairRegs<R>> },
    /// `dst = cond ? 1 : 0`. Operands: `[cond…, dst def]`.
    CSet { cond: Cond<R>, dst: R },
    /// `dst = cond ? t : f` (64 bits). Operands: `[cond…, t use, f use, dst def]`.
    CSel { cond: Cond<R>, t: R, f: R, dst: R },
}

/// The registers of [`AluInst::Pair`], boxed to keep `Inst` small.
#[derive(Clone, Debug)]
pub struct PairRegs<R = VReg> {
    pub dst: [R; 2],
    pub a: [R; 2],
    pub b: [R; 2],
    pub cin: Option<R>,
    pub flag: Option<R>,
}

impl PairRegs {
    /// Operands: `[a.lo use, a.hi use, b.lo use, b.hi use, cin use?, dst.lo early def,
    /// dst.hi def, flag def?]`.
    fn map<S, F: FnMut(OperandSpec) -> S>(&self, m: &mut Operands<S, F>) -> PairRegs<S> {
        let a = m.pair(self.a, Operands::reg_use);
        let b = m.pair(self.b, Operands::reg_use);
        let cin = self.cin.map(|c| m.reg_use(c));
        let dst = [m.early_def(self.dst[0]), m.reg_def(self.dst[1])];
        let flag = self.flag.map(|f| m.reg_def(f));
        PairRegs {
            dst,
            a,
            b,
            cin,
            flag,
        }
    }
}

impl AluInst {
    map_operands! {
        pub(in crate::isa::aarch64) AluInst, |m| {
            MovImm { size, imm } [dst = m.reg_def(*dst)],
            Mov {} [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Rrr { op, size } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
            AddImm { op, size, imm } [a = m.reg_use(*a), dst = m.reg_def(*dst)],
            LogicImm { op, imm } [a = m.reg_use(*a), dst = m.reg_def(*dst)],
            Unary { op, size } [a = m.reg_use(*a), dst = m.reg_def(*dst)],
            Bitfield { op, field } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            RotrImm { amount } [a = m.reg_use(*a), dst = m.reg_def(*dst)],
            BitOp { op, size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Madd { op, size } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                c = m.reg_use(*c),
                dst = m.reg_def(*dst)
            ],
            Div { kind, size, narrow } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
            AddsSet { op, size, cc } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                dst = m.reg_def(*dst),
                flag = m.reg_def(*flag)
            ],
            AddsCarry { op, size, cc } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                cin = m.reg_use(*cin),
                dst = m.reg_def(*dst),
                flag = m.reg_def(*flag)
            ],
            AddsTrap { size, code } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
            Pair { op, cc } [regs = Box::new(regs.map(m))],
            CSet {} [cond = cond.map(m), dst = m.reg_def(*dst)],
            CSel {} [
                cond = cond.map(m),
                t = m.reg_use(*t),
                f = m.reg_use(*f),
                dst = m.reg_def(*dst)
            ],
        }
    }
}

impl AluInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            AluInst::MovImm { size, dst, imm } => format!("{dst} = mov{} {imm:#x}", size.bits()),
            AluInst::Mov { dst, src } => format!("{dst} = mov {src}"),
            AluInst::Rrr {
                op,
                size,
                dst,
                a,
                b,
            } => format!("{dst} = {op:?}{} {a}, {b}", size.bits()).to_lowercase(),
            AluInst::AddImm {
                op,
                size,
                dst,
                a,
                imm,
            } => format!("{dst} = {op:?}{} {a}, #{}", size.bits(), imm.value()).to_lowercase(),
            AluInst::LogicImm { op, dst, a, imm } => format!(
                "{dst} = {}{} {a}, #{:#x}",
                format!("{op:?}").to_lowercase(),
                imm.size().bits(),
                imm.value()
            ),
            AluInst::Unary { op, size, dst, a } => {
                format!("{dst} = {op:?}{} {a}", size.bits()).to_lowercase()
            }
            AluInst::Bitfield {
                op,
                field,
                dst,
                src,
            } => {
                let (immr, imms) = field.fields();
                format!(
                    "{dst} = {}{} {src}, #{immr}, #{imms}",
                    format!("{op:?}").to_lowercase(),
                    field.size().bits()
                )
            }
            AluInst::RotrImm { amount, dst, a } => {
                format!("{dst} = ror{} {a}, #{}", amount.size().bits(), amount.get())
            }
            AluInst::BitOp { op, size, dst, src } => {
                format!("{dst} = {op:?}{} {src}", size.bits()).to_lowercase()
            }
            AluInst::Madd {
                op,
                size,
                dst,
                a,
                b,
                c,
            } => format!("{dst} = {op:?}{} {a}, {b}, {c}", size.bits()).to_lowercase(),
            AluInst::Div {
                kind,
                size,
                dst,
                a,
                b,
                ..
            } => format!("{dst} = {kind:?}{} {a}, {b}", size.bits()).to_lowercase(),
            AluInst::AddsSet {
                op,
                size,
                cc,
                dst,
                flag,
                a,
                b,
            } => format!(
                "{dst}, {flag} = {}s{} {a}, {b} ?{}",
                format!("{op:?}").to_lowercase(),
                size.bits(),
                cc.name()
            ),
            AluInst::AddsCarry {
                op,
                size,
                cc,
                dst,
                flag,
                a,
                b,
                cin,
            } => format!(
                "{dst}, {flag} = {}s{} {a}, {b}, carry {cin} ?{}",
                if *op == AddSub::Add { "adc" } else { "sbc" },
                size.bits(),
                cc.name()
            ),
            AluInst::AddsTrap {
                size,
                code,
                dst,
                a,
                b,
            } => format!("{dst} = adds{} {a}, {b} trap ?hs {code}", size.bits()),
            AluInst::Pair { op, cc, regs } => {
                let PairRegs {
                    dst,
                    a,
                    b,
                    cin,
                    flag,
                } = &**regs;
                let carry = cin
                    .as_ref()
                    .map_or(String::new(), |c| format!(", carry {c}"));
                let (flag_def, cc) = flag.as_ref().map_or((String::new(), String::new()), |f| {
                    (format!(", {f}"), format!(" ?{}", cc.name()))
                });
                format!(
                    "{}:{}{flag_def} = {}128 {}:{}, {}:{}{carry}{cc}",
                    dst[0],
                    dst[1],
                    format!("{op:?}").to_lowercase(),
                    a[0],
                    a[1],
                    b[0],
                    b[1]
                )
            }
            AluInst::CSet { cond, dst } => format!("{dst} = cset {}", cond.pretty()),
            AluInst::CSel { cond, t, f, dst } => {
                format!("{dst} = csel {} ? {t} : {f}", cond.pretty())
            }
        }
    }
}

/// `dst = a op b` at `size` for the three-register operations.
fn rrr(buf: &mut Buf, op: AluOp, size: Size, dst: GprZr, a: GprZr, b: GprZr) {
    let logical = |buf: &mut Buf, op| logical_reg(buf, op, size, dst, a, b);
    let shift = |buf: &mut Buf, op| shift_reg(buf, op, size, dst, a, b);
    match op {
        AluOp::Add => add_sub_reg(buf, AddSub::Add, size, dst, a, b),
        AluOp::Sub => add_sub_reg(buf, AddSub::Sub, size, dst, a, b),
        AluOp::And => logical(buf, LogicalOp::And),
        AluOp::Orr => logical(buf, LogicalOp::Orr),
        AluOp::Eor => logical(buf, LogicalOp::Eor),
        AluOp::Bic => logical(buf, LogicalOp::Bic),
        AluOp::Orn => logical(buf, LogicalOp::Orn),
        AluOp::Eon => logical(buf, LogicalOp::Eon),
        AluOp::Lsl => shift(buf, ShiftOp::Lslv),
        AluOp::Lsr => shift(buf, ShiftOp::Lsrv),
        AluOp::Asr => shift(buf, ShiftOp::Asrv),
        AluOp::Ror => shift(buf, ShiftOp::Rorv),
        AluOp::Mul => madd(buf, MaddOp::Madd, size, dst, a, b, GprZr::ZR),
        AluOp::Smulh => mul_high(buf, Signedness::Signed, dst, a, b),
        AluOp::Umulh => mul_high(buf, Signedness::Unsigned, dst, a, b),
    }
}

/// C = the carry in (`cin & 0xff != 0`) of an addition, or for a subtraction no borrow in
/// (`cin & 0xff == 0`), through w17.
fn set_carry_in(buf: &mut Buf, op: AddSub, cin: PReg) {
    let w17 = GprZr::from(Gpr::X17);
    let byte = LogicalImm::new(0xFF, Size::S32).expect("0xff is a bitmask");
    and_orr_eor_imm(buf, LogicalImmOp::And, Gpr::X17.into(), zr(cin), byte);
    match op {
        AddSub::Add => {
            let one = AddSubImm::new(1).expect("1 fits");
            adds_subs_imm(buf, AddSub::Sub, Size::S32, GprZr::ZR, Gpr::X17.into(), one);
        }
        AddSub::Sub => adds_subs_reg(buf, AddSub::Sub, Size::S32, GprZr::ZR, GprZr::ZR, w17),
    }
}

/// `b.<cc> +8`: skips the one instruction that follows.
fn skip_next_if(buf: &mut Buf, cc: Cc) {
    b_cond(buf, cc, PcOffset::new(8).expect("8 fits"));
}

/// `dst = a / b` or `a % b` (see [`AluInst::Div`]). The quotient of a remainder goes
/// through x17 (scratch), so `dst` is written last, after every read of `a` and `b`.
fn emit_div(buf: &mut Buf, kind: DivKind, size: Size, narrow: u8, dst: Gpr, a: Gpr, b: Gpr) {
    cbnz(buf, size, b.into(), PcOffset::new(8).expect("8 fits"));
    trap(buf, TrapCode::INTEGER_DIVISION_BY_ZERO);
    if kind == DivKind::Sdiv {
        // b == -1 (`cmn b, #1` sets Z) and a == MIN traps; otherwise skip the three checks.
        let one = AddSubImm::new(1).expect("1 fits");
        adds_subs_imm(buf, AddSub::Add, size, GprZr::ZR, b.into(), one);
        b_cond(buf, Cc::Ne, PcOffset::new(16).expect("16 fits"));
        if u32::from(narrow) == size.bits() {
            // a - 1 overflows exactly when a is MIN.
            adds_subs_imm(buf, AddSub::Sub, size, GprZr::ZR, a.into(), one);
            skip_next_if(buf, Cc::Vc);
        } else {
            // A narrow `a` arrives sign-extended: compare it with the narrow MIN.
            let min = AddSubImm::new(1 << (narrow - 1)).expect("2^7 and 2^15 fit");
            adds_subs_imm(buf, AddSub::Add, size, GprZr::ZR, a.into(), min);
            skip_next_if(buf, Cc::Ne);
        }
        trap(buf, TrapCode::INTEGER_OVERFLOW);
    }
    let sign = match kind {
        DivKind::Sdiv | DivKind::Srem => Signedness::Signed,
        DivKind::Udiv | DivKind::Urem => Signedness::Unsigned,
    };
    match kind {
        DivKind::Udiv | DivKind::Sdiv => div(buf, sign, size, dst.into(), a.into(), b.into()),
        // a - (a / b) * b; `sdiv` of MIN by -1 gives MIN, so `srem` gives 0 as CLIF wants.
        DivKind::Urem | DivKind::Srem => {
            div(buf, sign, size, Gpr::X17.into(), a.into(), b.into());
            madd(
                buf,
                MaddOp::Msub,
                size,
                dst.into(),
                Gpr::X17.into(),
                b.into(),
                a.into(),
            );
        }
    }
}

impl AluInst<PReg> {
    pub(in crate::isa::aarch64) fn emit(&self, buf: &mut Buf) {
        match *self {
            AluInst::MovImm { size, dst, imm } => {
                mov_imm(buf, size, super::super::emit::gpr(dst), imm)
            }
            AluInst::Mov { dst, src } => copy_reg(buf, dst, src),
            AluInst::Rrr {
                op,
                size,
                dst,
                a,
                b,
            } => rrr(buf, op, size, zr(dst), zr(a), zr(b)),
            AluInst::AddImm {
                op,
                size,
                dst,
                a,
                imm,
            } => add_sub_imm(buf, op, size, sp(dst), sp(a), imm),
            AluInst::LogicImm { op, dst, a, imm } => and_orr_eor_imm(buf, op, sp(dst), zr(a), imm),
            AluInst::Unary { op, size, dst, a } => match op {
                UnaryOp::Neg => add_sub_reg(buf, AddSub::Sub, size, zr(dst), GprZr::ZR, zr(a)),
                UnaryOp::Not => logical_reg(buf, LogicalOp::Orn, size, zr(dst), GprZr::ZR, zr(a)),
            },
            AluInst::Bitfield {
                op,
                field,
                dst,
                src,
            } => bitfield(buf, op, zr(dst), zr(src), field),
            AluInst::RotrImm { amount, dst, a } => extr(buf, zr(dst), zr(a), zr(a), amount),
            AluInst::BitOp { op, size, dst, src } => bit_op(buf, op, size, zr(dst), zr(src)),
            AluInst::Madd {
                op,
                size,
                dst,
                a,
                b,
                c,
            } => madd(buf, op, size, zr(dst), zr(a), zr(b), zr(c)),
            AluInst::Div {
                kind,
                size,
                narrow,
                dst,
                a,
                b,
            } => {
                use super::super::emit::gpr;
                emit_div(buf, kind, size, narrow, gpr(dst), gpr(a), gpr(b));
            }
            AluInst::AddsSet {
                op,
                size,
                cc,
                dst,
                flag,
                a,
                b,
            } => {
                adds_subs_reg(buf, op, size, zr(dst), zr(a), zr(b));
                let z = GprZr::ZR;
                csel(buf, CselOp::Csinc, Size::S32, zr(flag), z, z, cc.invert());
            }
            AluInst::AddsCarry {
                op,
                size,
                cc,
                dst,
                flag,
                a,
                b,
                cin,
            } => {
                set_carry_in(buf, op, cin);
                add_sub_carry(buf, op, true, size, zr(dst), zr(a), zr(b));
                let z = GprZr::ZR;
                csel(buf, CselOp::Csinc, Size::S32, zr(flag), z, z, cc.invert());
            }
            AluInst::AddsTrap {
                size,
                code,
                dst,
                a,
                b,
            } => {
                adds_subs_reg(buf, AddSub::Add, size, zr(dst), zr(a), zr(b));
                skip_next_if(buf, Cc::Lo);
                trap(buf, code);
            }
            AluInst::Pair { op, cc, ref regs } => {
                let PairRegs {
                    dst,
                    a,
                    b,
                    cin,
                    flag,
                } = **regs;
                match cin {
                    Some(cin) => {
                        set_carry_in(buf, op, cin);
                        add_sub_carry(buf, op, true, Size::S64, zr(dst[0]), zr(a[0]), zr(b[0]));
                    }
                    None => adds_subs_reg(buf, op, Size::S64, zr(dst[0]), zr(a[0]), zr(b[0])),
                }
                let set = flag.is_some();
                add_sub_carry(buf, op, set, Size::S64, zr(dst[1]), zr(a[1]), zr(b[1]));
                if let Some(f) = flag {
                    let z = GprZr::ZR;
                    csel(buf, CselOp::Csinc, Size::S32, zr(f), z, z, cc.invert());
                }
            }
            AluInst::CSet { cond, dst } => {
                cond.emit_flags(buf);
                let (dst, z) = (zr(dst), GprZr::ZR);
                match cond.pred() {
                    // `cset dst, c` is `csinc dst, zr, zr, !c`.
                    Pred::One(c) => csel(buf, CselOp::Csinc, Size::S32, dst, z, z, c.invert()),
                    // dst = c ? 1 : 0, then dst = d ? 1 : dst.
                    Pred::Or(c, d) => {
                        csel(buf, CselOp::Csinc, Size::S32, dst, z, z, c.invert());
                        csel(buf, CselOp::Csinc, Size::S32, dst, dst, z, d.invert());
                    }
                }
            }
            AluInst::CSel { cond, t, f, dst } => {
                cond.emit_flags(buf);
                let (t, f, dst) = (zr(t), zr(f), zr(dst));
                match cond.pred() {
                    Pred::One(c) => csel(buf, CselOp::Csel, Size::S64, dst, t, f, c),
                    // x17 = c ? t : f, then dst = d ? t : x17 (dst is written last).
                    Pred::Or(c, d) => {
                        let x17 = Gpr::X17.into();
                        csel(buf, CselOp::Csel, Size::S64, x17, t, f, c);
                        csel(buf, CselOp::Csel, Size::S64, dst, t, x17, d);
                    }
                }
            }
        }
    }
}
