//! The shifts-and-bits family: shifts and rotations, double shifts, bit counts, byte swaps.

use kestrel_regalloc::{PReg, VReg};

use super::super::asm::bits::{self as enc, BitCount, ShiftX};
use super::super::asm::shift::{self, DoubleShift, ShiftOp};
use super::super::asm::{Gpr, GprMem, Size};
use super::super::emit::{gpr, Buf};
use super::{gpr_preg, map_operands, OperandSpec, Operands};

/// One shift or bit instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum BitsInst<R = VReg> {
    /// `dst = a op cl`. Operands: `[a use, amt use in rcx, dst def reusing a]`.
    ShiftCl { op: ShiftOp, size: Size, dst: R, a: R, amt: R },
    /// `dst = a op amt` by BMI2 `shlx`/`shrx`/`sarx` (32 or 64 bits; the count in any
    /// register, masked to the width like `cl`). Operands: `[a use, amt use, dst def]`.
    ShiftX { op: ShiftX, size: Size, dst: R, a: R, amt: R },
    /// `dst = a op imm`. Operands: `[a use, dst def reusing a]`.
    ShiftImm { op: ShiftOp, size: Size, dst: R, a: R, imm: u8 },
    /// `shld/shrd dst, b, cl` at 64 bits. Operands: `[a use, b use, amt use in rcx, dst def
    /// reusing a]`.
    ShiftDouble { op: DoubleShift, dst: R, a: R, b: R, amt: R },
    /// `dst = op src`: lzcnt, tzcnt, popcnt, bsf, bsr. Operands: `[src use, dst def]`.
    BitCount { op: BitCount, size: Size, dst: R, src: R },
    /// Byte swap (`bswap`, or `rol r16, 8`). Operands: `[a use, dst def reusing a]`.
    Bswap { size: Size, dst: R, a: R },
}

impl BitsInst {
    map_operands! {
        pub(in crate::isa::x64) BitsInst, |m|
        let rcx = gpr_preg(Gpr::RCX);
        {
            ShiftCl { op, size } [
                a = m.reg_use(*a),
                amt = m.fixed_use(*amt, rcx),
                dst = m.reuse_def(*dst, 0)
            ],
            ShiftX { op, size } [a = m.reg_use(*a), amt = m.reg_use(*amt), dst = m.reg_def(*dst)],
            ShiftImm { op, size, imm } [a = m.reg_use(*a), dst = m.reuse_def(*dst, 0)],
            ShiftDouble { op } [
                a = m.reg_use(*a),
                b = m.reg_use(*b),
                amt = m.fixed_use(*amt, rcx),
                dst = m.reuse_def(*dst, 0)
            ],
            BitCount { op, size } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Bswap { size } [a = m.reg_use(*a), dst = m.reuse_def(*dst, 0)],
        }
    }
}

impl BitsInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            BitsInst::ShiftCl {
                op,
                size,
                dst,
                a,
                amt,
            } => format!("{dst} = {op:?}{} {a}, {amt}", size.bits()).to_lowercase(),
            BitsInst::ShiftX {
                op,
                size,
                dst,
                a,
                amt,
            } => format!("{dst} = {op:?}{} {a}, {amt}", size.bits()).to_lowercase(),
            BitsInst::ShiftImm {
                op,
                size,
                dst,
                a,
                imm,
            } => format!("{dst} = {op:?}{} {a}, {imm}", size.bits()).to_lowercase(),
            BitsInst::ShiftDouble { op, dst, a, b, amt } => {
                format!("{dst} = {op:?} {a}, {b}, {amt}").to_lowercase()
            }
            BitsInst::BitCount { op, size, dst, src } => {
                format!("{dst} = {op:?}{} {src}", size.bits()).to_lowercase()
            }
            BitsInst::Bswap { size, dst, a } => format!("{dst} = bswap{} {a}", size.bits()),
        }
    }
}

impl BitsInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, buf: &mut Buf) {
        match *self {
            BitsInst::ShiftCl {
                op, size, dst, amt, ..
            } => {
                debug_assert_eq!(gpr(amt), Gpr::RCX);
                shift::shift_rm_cl(buf, op, size, &GprMem::Reg(gpr(dst)));
            }
            BitsInst::ShiftX {
                op,
                size,
                dst,
                a,
                amt,
            } => {
                enc::shiftx(buf, op, size, gpr(dst), &GprMem::Reg(gpr(a)), gpr(amt));
            }
            BitsInst::ShiftImm {
                op, size, dst, imm, ..
            } => {
                shift::shift_rm_imm(buf, op, size, &GprMem::Reg(gpr(dst)), imm);
            }
            BitsInst::ShiftDouble {
                op, dst, b, amt, ..
            } => {
                debug_assert_eq!(gpr(amt), Gpr::RCX);
                shift::double_shift_cl(buf, op, Size::S64, &GprMem::Reg(gpr(dst)), gpr(b));
            }
            BitsInst::BitCount { op, size, dst, src } => {
                enc::bit_count(buf, op, size, gpr(dst), &GprMem::Reg(gpr(src)));
            }
            BitsInst::Bswap { size, dst, .. } => {
                let r = gpr(dst);
                if size == Size::S16 {
                    shift::shift_rm_imm(buf, ShiftOp::Rol, Size::S16, &GprMem::Reg(r), 8);
                } else {
                    enc::bswap(buf, size, r);
                }
            }
        }
    }
}
