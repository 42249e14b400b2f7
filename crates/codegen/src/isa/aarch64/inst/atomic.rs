//! The atomic family: fences, acquire loads, release stores, and read-modify-write and
//! compare-and-swap loops on exclusive accesses (Armv8.0: no LSE needed).
//!
//! Every access is sequentially consistent, as CLIF's atomics are: loads are `ldar`, stores
//! `stlr`, and the loops pair `ldaxr` with `stlxr`. A loop keeps the loaded value in `dst`
//! (an early def: it is written while the address and operands are still read), the new
//! value in x16 and the store's status in w17, both scratch.

use kestrel_ir::{AtomicRmwOp, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::add_sub::{add_sub_reg, adds_subs_reg, AddSub};
use super::super::asm::atomic::{ldar, ldaxr, stlr, stlxr};
use super::super::asm::bitfield::{bitfield, Bitfield, BitfieldOp};
use super::super::asm::branch::{b_cond, cbnz};
use super::super::asm::cond::{csel, Cond as Cc, CselOp};
use super::super::asm::logical::{logical_reg, LogicalOp};
use super::super::asm::misc::{dmb, Barrier};
use super::super::asm::{Gpr, GprSp, GprZr, MemSize, PcOffset, Size};
use super::super::emit::{gpr, Buf};
use super::{map_operands, OperandSpec, Operands};

/// One atomic instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum AtomicInst<R = VReg> {
    /// `dmb ish`. No operands.
    Fence,
    /// `dst = [addr]` (`ldar`, zero-extended). Operands: `[addr use, dst def]`.
    Load {
        size: MemSize,
        dst: R,
        addr: R,
        trap: Option<TrapCode>,
    },
    /// `[addr] = src` (`stlr`). Operands: `[src use, addr use]`.
    Store {
        size: MemSize,
        src: R,
        addr: R,
        trap: Option<TrapCode>,
    },
    /// `dst = [addr]; [addr] = dst op val`, atomically. Operands: `[addr use, val use, dst
    /// early def]`.
    Rmw {
        op: AtomicRmwOp,
        size: MemSize,
        dst: R,
        addr: R,
        val: R,
        trap: Option<TrapCode>,
    },
    /// `dst = [addr]; if dst == expected { [addr] = repl }`, atomically (the comparison at
    /// `size`). Operands: `[addr use, expected use, repl use, dst early def]`.
    Cas {
        size: MemSize,
        dst: R,
        addr: R,
        expected: R,
        repl: R,
        trap: Option<TrapCode>,
    },
}

impl AtomicInst {
    #[inline]
    pub(in crate::isa::aarch64) fn map<S, F: FnMut(OperandSpec) -> S>(
        &self,
        m: &mut Operands<S, F>,
    ) -> AtomicInst<S> {
        map_operands!(self, AtomicInst {
            Fence {} [],
            Load { size, trap } [addr = m.reg_use(*addr), dst = m.reg_def(*dst)],
            Store { size, trap } [src = m.reg_use(*src), addr = m.reg_use(*addr)],
            Rmw { op, size, trap } [
                addr = m.reg_use(*addr),
                val = m.reg_use(*val),
                dst = m.early_def(*dst)
            ],
            Cas { size, trap } [
                addr = m.reg_use(*addr),
                expected = m.reg_use(*expected),
                repl = m.reg_use(*repl),
                dst = m.early_def(*dst)
            ],
        })
    }
}

impl AtomicInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            AtomicInst::Fence => "dmb ish".into(),
            AtomicInst::Load {
                size, dst, addr, ..
            } => format!("{dst} = ldar.{size:?} [{addr}]"),
            AtomicInst::Store {
                size, src, addr, ..
            } => format!("stlr.{size:?} {src}, [{addr}]"),
            AtomicInst::Rmw {
                op,
                size,
                dst,
                addr,
                val,
                ..
            } => format!("{dst} = atomic_rmw.{op}.{size:?} [{addr}], {val}"),
            AtomicInst::Cas {
                size,
                dst,
                addr,
                expected,
                repl,
                ..
            } => format!("{dst} = atomic_cas.{size:?} [{addr}], {expected}, {repl}"),
        }
    }
}

/// `x16 = r` extended from `size` (signed or not) to 64 bits; `r` itself at 64 bits.
fn extended(buf: &mut Buf, signed: bool, size: MemSize, r: Gpr) -> Gpr {
    if size == MemSize::S64 {
        return r;
    }
    let op = if signed {
        BitfieldOp::Sbfm
    } else {
        BitfieldOp::Ubfm
    };
    let bits = 8 * size.bytes();
    let field = Bitfield::extract(Size::S64, 0, bits).expect("a field below 64 bits");
    bitfield(buf, op, Gpr::X16.into(), r.into(), field);
    Gpr::X16
}

/// `x16 = dst op val` for a read-modify-write (`dst` holds the loaded value, zero-extended;
/// a signed minimum or maximum sign-extends it in place first). Returns the register to
/// store.
fn new_value(buf: &mut Buf, op: AtomicRmwOp, size: MemSize, dst: Gpr, val: Gpr) -> Gpr {
    let (x16, s) = (Gpr::X16, Size::S64);
    let logical = |buf: &mut Buf, op| logical_reg(buf, op, s, x16.into(), dst.into(), val.into());
    match op {
        AtomicRmwOp::Xchg => return val,
        AtomicRmwOp::Add => add_sub_reg(buf, AddSub::Add, s, x16.into(), dst.into(), val.into()),
        AtomicRmwOp::Sub => add_sub_reg(buf, AddSub::Sub, s, x16.into(), dst.into(), val.into()),
        AtomicRmwOp::And => logical(buf, LogicalOp::And),
        AtomicRmwOp::Or => logical(buf, LogicalOp::Orr),
        AtomicRmwOp::Xor => logical(buf, LogicalOp::Eor),
        AtomicRmwOp::Nand => {
            logical(buf, LogicalOp::And);
            logical_reg(buf, LogicalOp::Orn, s, x16.into(), GprZr::ZR, x16.into());
        }
        AtomicRmwOp::Umin | AtomicRmwOp::Umax | AtomicRmwOp::Smin | AtomicRmwOp::Smax => {
            let signed = matches!(op, AtomicRmwOp::Smin | AtomicRmwOp::Smax);
            if signed && size != MemSize::S64 {
                let bits = 8 * size.bytes();
                let field = Bitfield::extract(s, 0, bits).expect("a field below 64 bits");
                bitfield(buf, BitfieldOp::Sbfm, dst.into(), dst.into(), field);
            }
            // The operand extended like the loaded value; keep the loaded value when it
            // is already the minimum (maximum).
            let v = extended(buf, signed, size, val);
            adds_subs_reg(buf, AddSub::Sub, s, GprZr::ZR, dst.into(), v.into());
            let keep = match op {
                AtomicRmwOp::Umin => Cc::Lo,
                AtomicRmwOp::Umax => Cc::Hi,
                AtomicRmwOp::Smin => Cc::Lt,
                _ => Cc::Gt,
            };
            csel(buf, CselOp::Csel, s, x16.into(), dst.into(), v.into(), keep);
        }
    }
    x16
}

/// A backward branch to `start` while w17 (the store's status) is not 0.
fn retry(buf: &mut Buf, start: u32) {
    let back = i64::from(start) - i64::from(buf.cur_offset());
    let offset = PcOffset::new(back).expect("a loop of a few instructions");
    cbnz(buf, Size::S32, Gpr::X17.into(), offset);
}

impl AtomicInst<PReg> {
    pub(in crate::isa::aarch64) fn emit(&self, buf: &mut Buf) {
        let w17 = GprZr::from(Gpr::X17);
        match *self {
            AtomicInst::Fence => dmb(buf, Barrier::Ish),
            AtomicInst::Load {
                size,
                dst,
                addr,
                trap,
            } => {
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                ldar(buf, size, gpr(dst).into(), GprSp::from(gpr(addr)));
            }
            AtomicInst::Store {
                size,
                src,
                addr,
                trap,
            } => {
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                stlr(buf, size, gpr(src).into(), GprSp::from(gpr(addr)));
            }
            AtomicInst::Rmw {
                op,
                size,
                dst,
                addr,
                val,
                trap,
            } => {
                let (dst, addr, val) = (gpr(dst), GprSp::from(gpr(addr)), gpr(val));
                let start = buf.cur_offset();
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                ldaxr(buf, size, dst.into(), addr);
                let new = new_value(buf, op, size, dst, val);
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                stlxr(buf, size, w17, new.into(), addr);
                retry(buf, start);
            }
            AtomicInst::Cas {
                size,
                dst,
                addr,
                expected,
                repl,
                trap,
            } => {
                let (dst, addr) = (gpr(dst), GprSp::from(gpr(addr)));
                let start = buf.cur_offset();
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                ldaxr(buf, size, dst.into(), addr);
                // The loaded value is zero-extended; so is the expected one for the compare.
                let e = extended(buf, false, size, gpr(expected));
                adds_subs_reg(buf, AddSub::Sub, Size::S64, GprZr::ZR, dst.into(), e.into());
                // On a mismatch, skip the store and the retry.
                b_cond(buf, Cc::Ne, PcOffset::new(12).expect("12 fits"));
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                stlxr(buf, size, w17, gpr(repl).into(), addr);
                retry(buf, start);
            }
        }
    }
}
