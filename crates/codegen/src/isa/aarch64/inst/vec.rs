//! The vector family: NEON operations on 128-bit values (the forms of `asm/simd.rs`),
//! vector constants, and lane moves between the register files.
//!
//! A vector lives in one FP/SIMD register, all 128 bits meaningful, lane 0 in the low bits.
//! Constants other than all zeros or all ones go to the `MachBuffer`'s deduplicated pool
//! (16 bytes, 16-aligned) and are loaded with a PC-relative `ldr q` (islands keep them in
//! its ±1 MiB range). A two-source narrowing writes the scratch `v31` first (either
//! source may share the destination's register).

use kestrel_regalloc::{PReg, VReg};

use super::super::asm::mem::ldr_literal_fp;
use super::super::asm::simd::{
    self as enc, AcrossOp, Elem, NarrowOp, ShiftImmOp, VecBinOp, VecUnaryOp,
};
use super::super::asm::{PcOffset, SdqSize, Vreg as FpReg};
use super::super::emit::{fpr, gpr, use_label, zr, Buf};
use super::{map_operands, OperandSpec, Operands};
pub use crate::machinst::isel::vec::V128;

/// One vector instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum VecInst<R = VReg> {
    /// `dst = a op b`. Operands: `[a use, b use, dst def]`.
    Rrr { op: VecBinOp, elem: Elem, dst: R, a: R, b: R },
    /// `dst = op(acc, a, b)` for the ops that read their destination (`bsl`: `acc` the
    /// mask; `fmla`: `acc + a * b`). Operands: `[acc use, a use, b use, dst def reusing
    /// acc]`.
    Acc {
        op: VecBinOp,
        elem: Elem,
        dst: R,
        acc: R,
        a: R,
        b: R,
    },
    /// `dst = op src`. Operands: `[src use, dst def]`.
    Unary { op: VecUnaryOp, elem: Elem, dst: R, src: R },
    /// `dst = src` with each lane shifted by `amount`. Operands: `[src use, dst def]`.
    ShiftImm {
        op: ShiftImmOp,
        elem: Elem,
        dst: R,
        src: R,
        amount: u8,
    },
    /// `dst = the low (high) half's lanes of size elem` extended, signed or not.
    /// Operands: `[src use, dst def]`.
    Widen {
        signed: bool,
        high: bool,
        elem: Elem,
        dst: R,
        src: R,
    },
    /// `dst = a * b` on the low (high) halves' lanes, products twice as wide. Operands:
    /// `[a use, b use, dst def]`.
    Mull {
        signed: bool,
        high: bool,
        elem: Elem,
        dst: R,
        a: R,
        b: R,
    },
    /// `dst = narrow(a)` in the low half, `narrow(b)` in the high half (lanes of `a` and
    /// `b` of size `elem`), through `v31`. Operands: `[a use, b use, dst def]`.
    Narrow2 { op: NarrowOp, elem: Elem, dst: R, a: R, b: R },
    /// `dst = narrow(src)` in the low half, zeros above. Operands: `[src use, dst def]`.
    Narrow1 { op: NarrowOp, elem: Elem, dst: R, src: R },
    /// `dst = the low two singles as doubles` (`fcvtl`). Operands: `[src use, dst def]`.
    FcvtLow { dst: R, src: R },
    /// `dst = op over the lanes of src` in lane 0 (all 128 bits, or the low 64 with
    /// `half`), zeros above. Operands: `[src use, dst def]`.
    Across {
        op: AcrossOp,
        elem: Elem,
        half: bool,
        dst: R,
        src: R,
    },
    /// `dst = both 64-bit lanes of src summed`, in lane 0. Operands: `[src use, dst def]`.
    AddPairD { dst: R, src: R },
    /// `dst = bits`. Operands: `[dst def]`.
    Const { dst: R, bits: V128 },
    /// `dst = the integer register src's low bits in every lane`. Operands: `[src use, dst
    /// def]`.
    DupGpr { elem: Elem, dst: R, src: R },
    /// `dst = lane lane of src in every lane`. Operands: `[src use, dst def]`.
    DupLane { elem: Elem, dst: R, src: R, lane: u8 },
    /// `dst = lane lane of src` in lane 0, zeros above (a scalar float's register).
    /// Operands: `[src use, dst def]`.
    DupScalar { elem: Elem, dst: R, src: R, lane: u8 },
    /// `dst (an integer register) = lane lane of src`, zero-extended. Operands: `[src
    /// use, dst def]`.
    Umov { elem: Elem, dst: R, src: R, lane: u8 },
    /// `dst = a` with lane `lane` the integer register `src`'s low bits. Operands: `[a
    /// use, src use, dst def reusing a]`.
    InsGpr { elem: Elem, dst: R, a: R, src: R, lane: u8 },
    /// `dst = a` with lane `lane` lane `from` of `src`. Operands: `[a use, src use, dst def
    /// reusing a]`.
    InsLane {
        elem: Elem,
        dst: R,
        a: R,
        src: R,
        lane: u8,
        from: u8,
    },
    /// `dst = bytes of table picked by idx` (0 where an index is 16 or more). Operands:
    /// `[table use, idx use, dst def]`.
    Tbl { dst: R, table: R, idx: R },
    /// `dst = bytes k..16 of a, then bytes 0..k of b`. Operands: `[a use, b use, dst def]`.
    Ext { dst: R, a: R, b: R, k: u8 },
}

impl VecInst {
    map_operands! {
        pub(in crate::isa::aarch64) VecInst, |m| {
            Rrr { op, elem } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
            Acc { op, elem } [
                acc = m.reg_use(*acc),
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                dst = m.reuse_def(*dst, 0)
            ],
            Unary { op, elem } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            ShiftImm { op, elem, amount } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Widen { signed, high, elem } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Mull { signed, high, elem } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                dst = m.reg_def(*dst)
            ],
            Narrow2 { op, elem } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
            Narrow1 { op, elem } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            FcvtLow {} [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Across { op, elem, half } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            AddPairD {} [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Const { bits } [dst = m.reg_def(*dst)],
            DupGpr { elem } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            DupLane { elem, lane } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            DupScalar { elem, lane } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Umov { elem, lane } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            InsGpr { elem, lane } [a = m.reg_use(*a), src = m.reg_use(*src), dst = m.reuse_def(*dst, 0)],
            InsLane { elem, lane, from } [
                a = m.reg_use(*a),
                src = m.reg_use(*src),
                dst = m.reuse_def(*dst, 0)
            ],
            Tbl {} [table = m.reg_use(*table), idx = m.reg_use(*idx), dst = m.reg_def(*dst)],
            Ext { k } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reg_def(*dst)],
        }
    }
}

impl VecInst<String> {
    pub(super) fn pretty(&self) -> String {
        let name = |op: &dyn std::fmt::Debug| format!("{op:?}").to_lowercase();
        match self {
            VecInst::Rrr {
                op,
                elem,
                dst,
                a,
                b,
            } => {
                format!("{dst} = {}.{} {a}, {b}", name(op), elem.suffix())
            }
            VecInst::Acc {
                op,
                elem,
                dst,
                acc,
                a,
                b,
            } => format!("{dst} = {}.{} {acc}, {a}, {b}", name(op), elem.suffix()),
            VecInst::Unary { op, elem, dst, src } => {
                format!("{dst} = {}.{} {src}", name(op), elem.suffix())
            }
            VecInst::ShiftImm {
                op,
                elem,
                dst,
                src,
                amount,
            } => format!("{dst} = {}.{} {src}, #{amount}", name(op), elem.suffix()),
            VecInst::Widen {
                signed,
                high,
                elem,
                dst,
                src,
            } => format!(
                "{dst} = {}xtl{}.{} {src}",
                su(*signed),
                two(*high),
                elem.suffix()
            ),
            VecInst::Mull {
                signed,
                high,
                elem,
                dst,
                a,
                b,
            } => format!(
                "{dst} = {}mull{}.{} {a}, {b}",
                su(*signed),
                two(*high),
                elem.suffix()
            ),
            VecInst::Narrow2 {
                op,
                elem,
                dst,
                a,
                b,
            } => {
                format!("{dst} = {}.{} {a}, {b}", name(op), elem.suffix())
            }
            VecInst::Narrow1 { op, elem, dst, src } => {
                format!("{dst} = {}.{} {src}", name(op), elem.suffix())
            }
            VecInst::FcvtLow { dst, src } => format!("{dst} = fcvtl {src}"),
            VecInst::Across {
                op,
                elem,
                half,
                dst,
                src,
            } => format!(
                "{dst} = {}.{}{} {src}",
                name(op),
                elem.suffix(),
                if *half { ".low" } else { "" }
            ),
            VecInst::AddPairD { dst, src } => format!("{dst} = addp.d {src}"),
            VecInst::Const { dst, bits } => format!("{dst} = vconst {:#034x}", bits.bits()),
            VecInst::DupGpr { elem, dst, src } => format!("{dst} = dup.{} {src}", elem.suffix()),
            VecInst::DupLane {
                elem,
                dst,
                src,
                lane,
            } => format!("{dst} = dup.{} {src}[{lane}]", elem.suffix()),
            VecInst::DupScalar {
                elem,
                dst,
                src,
                lane,
            } => format!("{dst} = dup_scalar.{} {src}[{lane}]", elem.suffix()),
            VecInst::Umov {
                elem,
                dst,
                src,
                lane,
            } => format!("{dst} = umov.{} {src}[{lane}]", elem.suffix()),
            VecInst::InsGpr {
                elem,
                dst,
                a,
                src,
                lane,
            } => format!("{dst} = ins.{} {a}[{lane}], {src}", elem.suffix()),
            VecInst::InsLane {
                elem,
                dst,
                a,
                src,
                lane,
                from,
            } => format!("{dst} = ins.{} {a}[{lane}], {src}[{from}]", elem.suffix()),
            VecInst::Tbl { dst, table, idx } => format!("{dst} = tbl {table}, {idx}"),
            VecInst::Ext { dst, a, b, k } => format!("{dst} = ext {a}, {b}, #{k}"),
        }
    }
}

/// `v31`, the FP/SIMD scratch register.
fn v31() -> FpReg {
    FpReg::new(31).expect("v31")
}

/// `dst = bits`: `movi` for all zeros or all ones, else a pooled constant.
fn load_const(buf: &mut Buf, dst: FpReg, bits: u128) {
    match bits {
        0 => enc::movi_fill(buf, false, dst),
        u128::MAX => enc::movi_fill(buf, true, dst),
        _ => {
            let label = buf.add_pooled_constant(&bits.to_le_bytes(), 16);
            use_label(buf, label, |b| {
                ldr_literal_fp(b, SdqSize::S128, dst, PcOffset::ZERO)
            });
        }
    }
}

impl VecInst<PReg> {
    pub(in crate::isa::aarch64) fn emit(&self, buf: &mut Buf) {
        match *self {
            VecInst::Rrr {
                op,
                elem,
                dst,
                a,
                b,
            } => enc::vec_binary(buf, op, elem, fpr(dst), fpr(a), fpr(b)),
            VecInst::Acc {
                op,
                elem,
                dst,
                a,
                b,
                ..
            } => enc::vec_binary(buf, op, elem, fpr(dst), fpr(a), fpr(b)),
            VecInst::Unary { op, elem, dst, src } => {
                enc::vec_unary(buf, op, elem, fpr(dst), fpr(src))
            }
            VecInst::ShiftImm {
                op,
                elem,
                dst,
                src,
                amount,
            } => {
                // A right shift by 0 (not encodable) is the value itself: `shl #0`.
                let op = if amount == 0 { ShiftImmOp::Shl } else { op };
                enc::vec_shift_imm(buf, op, elem, fpr(dst), fpr(src), u32::from(amount))
            }
            VecInst::Widen {
                signed,
                high,
                elem,
                dst,
                src,
            } => enc::vec_widen(buf, signed, high, elem, fpr(dst), fpr(src)),
            VecInst::Mull {
                signed,
                high,
                elem,
                dst,
                a,
                b,
            } => enc::mull(buf, signed, high, elem, fpr(dst), fpr(a), fpr(b)),
            VecInst::Narrow2 {
                op,
                elem,
                dst,
                a,
                b,
            } => {
                enc::vec_narrow(buf, op, false, elem, v31(), fpr(a));
                enc::vec_narrow(buf, op, true, elem, v31(), fpr(b));
                enc::vec_mov(buf, fpr(dst), v31());
            }
            VecInst::Narrow1 { op, elem, dst, src } => {
                enc::vec_narrow(buf, op, false, elem, fpr(dst), fpr(src))
            }
            VecInst::FcvtLow { dst, src } => enc::fcvtl(buf, false, fpr(dst), fpr(src)),
            VecInst::Across {
                op,
                elem,
                half,
                dst,
                src,
            } => enc::vec_across(buf, op, elem, half, fpr(dst), fpr(src)),
            VecInst::AddPairD { dst, src } => enc::addp_scalar(buf, fpr(dst), fpr(src)),
            VecInst::Const { dst, bits } => load_const(buf, fpr(dst), bits.bits()),
            VecInst::DupGpr { elem, dst, src } => enc::dup_gpr(buf, elem, fpr(dst), zr(src)),
            VecInst::DupLane {
                elem,
                dst,
                src,
                lane,
            } => enc::dup_elem(buf, elem, fpr(dst), fpr(src), lane),
            VecInst::DupScalar {
                elem,
                dst,
                src,
                lane,
            } => enc::dup_scalar(buf, elem, fpr(dst), fpr(src), lane),
            VecInst::Umov {
                elem,
                dst,
                src,
                lane,
            } => enc::umov(buf, elem, gpr(dst), fpr(src), lane),
            VecInst::InsGpr {
                elem,
                dst,
                src,
                lane,
                ..
            } => enc::ins_gpr(buf, elem, fpr(dst), lane, zr(src)),
            VecInst::InsLane {
                elem,
                dst,
                src,
                lane,
                from,
                ..
            } => enc::ins_elem(buf, elem, fpr(dst), lane, fpr(src), from),
            VecInst::Tbl { dst, table, idx } => enc::tbl(buf, fpr(dst), fpr(table), fpr(idx)),
            VecInst::Ext { dst, a, b, k } => enc::ext(buf, fpr(dst), fpr(a), fpr(b), k),
        }
    }
}

/// A mnemonic's signedness prefix.
fn su(signed: bool) -> &'static str {
    if signed {
        "s"
    } else {
        "u"
    }
}

/// The suffix of a form that reads the upper half of its source.
fn two(high: bool) -> &'static str {
    if high {
        "2"
    } else {
        ""
    }
}
