//! The atomic family: fences, acquire loads, release stores, and read-modify-write and
//! compare-and-swap loops on exclusive accesses (Armv8.0), or with LSE (Armv8.1, chosen by
//! the rules when the target has it) single acquire-release instructions (`ld<op>al`,
//! `swpal`, `casal`).
//!
//! Every access is sequentially consistent, as CLIF's atomics are: loads are `ldar`, stores
//! `stlr`, and the loops pair `ldaxr` with `stlxr`. A loop keeps the loaded value in `dst`
//! (an early def: it is written while the address and operands are still read), the new
//! value in x16 and the store's status in w17, both scratch.
//!
//! `i128` accesses are loops on the pair exclusives `ldaxp`/`stlxp`: a 16-byte `ldaxp` is
//! single-copy atomic only once the `stlxp` that follows it succeeds, so even a load stores
//! back what it read, and a compare-and-swap that fails stores back the loaded value. A
//! read-modify-write computes the new value in x16:x17 and needs a third register for the
//! store's status (`tmp`, an early def).

use kestrel_ir::{AtomicRmwOp, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::add_sub::{add_sub_carry, add_sub_reg, adds_subs_reg, AddSub};
use super::super::asm::atomic::{
    atomic_rmw, cas, ldar, ldaxp, ldaxr, stlr, stlxp, stlxr, AtomicOp, Ordering,
};
use super::super::asm::bitfield::{bitfield, Bitfield, BitfieldOp};
use super::super::asm::branch::{b, b_cond, cbnz};
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
    /// `dst = [addr]; [addr] = dst op val` in one LSE instruction, acquire-release
    /// (`ld<op>al`, `swpal`). Operands: `[addr use, val use, dst early def]`.
    Lse {
        op: AtomicOp,
        size: MemSize,
        dst: R,
        addr: R,
        val: R,
        trap: Option<TrapCode>,
    },
    /// `dst = [addr]; if dst == expected { [addr] = repl }` in one `casal` (the comparison
    /// at `size`), which reads `expected` from the register it writes `dst` to. Operands:
    /// `[expected use, addr use, repl use, dst reuse of operand 0]`.
    CasLse {
        size: MemSize,
        dst: R,
        addr: R,
        expected: R,
        repl: R,
        trap: Option<TrapCode>,
    },
    /// `dst = [addr]` for 16 bytes (`i128`, low half first). Operands: `[addr use, dst.lo
    /// early def, dst.hi early def]`.
    Load128 { dst: [R; 2], addr: R, trap: Option<TrapCode> },
    /// `[addr] = src` for 16 bytes. Operands: `[src.lo use, src.hi use, addr use]`.
    Store128 { src: [R; 2], addr: R, trap: Option<TrapCode> },
    /// `dst = [addr]; [addr] = dst op val` for 16 bytes, atomically. Operands: `[addr use,
    /// val.lo use, val.hi use, dst.lo early def, dst.hi early def, tmp early def]`.
    Rmw128 {
        op: AtomicRmwOp,
        dst: [R; 2],
        addr: R,
        val: [R; 2],
        tmp: R,
        trap: Option<TrapCode>,
    },
    /// `dst = [addr]; if dst == expected { [addr] = repl }` for 16 bytes, atomically.
    /// Operands: `[addr use, expected.lo use, expected.hi use, repl.lo use, repl.hi use,
    /// dst.lo early def, dst.hi early def]`.
    Cas128 {
        dst: [R; 2],
        addr: R,
        expected: [R; 2],
        repl: [R; 2],
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
    map_operands! {
        pub(in crate::isa::aarch64) AtomicInst, |m| {
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
            Lse { op, size, trap } [
                addr = m.reg_use(*addr),
                val = m.reg_use(*val),
                dst = m.early_def(*dst)
            ],
            CasLse { size, trap } [
                expected = m.reg_use(*expected),
                addr = m.reg_use(*addr),
                repl = m.reg_use(*repl),
                dst = m.reuse_def(*dst, 0)
            ],
            Load128 { trap } [
                addr = m.reg_use(*addr),
                dst = m.pair(*dst, Operands::early_def)
            ],
            Store128 { trap } [
                src = m.pair(*src, Operands::reg_use),
                addr = m.reg_use(*addr)
            ],
            Rmw128 { op, trap } [
                addr = m.reg_use(*addr),
                val = m.pair(*val, Operands::reg_use),
                dst = m.pair(*dst, Operands::early_def),
                tmp = m.early_def(*tmp)
            ],
            Cas128 { trap } [
                addr = m.reg_use(*addr),
                expected = m.pair(*expected, Operands::reg_use),
                repl = m.pair(*repl, Operands::reg_use),
                dst = m.pair(*dst, Operands::early_def)
            ],
        }
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
            AtomicInst::Lse {
                op,
                size,
                dst,
                addr,
                val,
                ..
            } => format!("{dst} = lse.{op:?}.al.{size:?} [{addr}], {val}"),
            AtomicInst::CasLse {
                size,
                dst,
                addr,
                expected,
                repl,
                ..
            } => format!("{dst} = casal.{size:?} [{addr}], {expected}, {repl}"),
            AtomicInst::Load128 { dst, addr, .. } => {
                format!("{}:{} = atomic_load.128 [{addr}]", dst[0], dst[1])
            }
            AtomicInst::Store128 { src, addr, .. } => {
                format!("atomic_store.128 {}:{}, [{addr}]", src[0], src[1])
            }
            AtomicInst::Rmw128 {
                op,
                dst,
                addr,
                val,
                tmp,
                ..
            } => format!(
                "{}:{} = atomic_rmw.{op}.128 [{addr}], {}:{} (tmp {tmp})",
                dst[0], dst[1], val[0], val[1]
            ),
            AtomicInst::Cas128 {
                dst,
                addr,
                expected,
                repl,
                ..
            } => format!(
                "{}:{} = atomic_cas.128 [{addr}], {}:{}, {}:{}",
                dst[0], dst[1], expected[0], expected[1], repl[0], repl[1]
            ),
        }
    }
}

/// An address register as the base of an access.
fn gpr_sp(addr: PReg) -> GprSp {
    GprSp::from(gpr(addr))
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
    retry_on(buf, Gpr::X17, start);
}

/// A backward branch to `start` while `status` is not 0.
fn retry_on(buf: &mut Buf, status: Gpr, start: u32) {
    let back = i64::from(start) - i64::from(buf.cur_offset());
    let offset = PcOffset::new(back).expect("a loop of a few instructions");
    cbnz(buf, Size::S32, status.into(), offset);
}

/// `ldaxp lo, hi, [addr]`, a trap site when the access may fault.
fn load_pair(buf: &mut Buf, trap: Option<TrapCode>, [lo, hi]: [Gpr; 2], addr: GprSp) {
    if let Some(code) = trap {
        buf.add_trap(code);
    }
    ldaxp(buf, lo.into(), hi.into(), addr);
}

/// `stlxp status, lo, hi, [addr]`, a trap site when the access may fault.
fn store_pair(buf: &mut Buf, trap: Option<TrapCode>, status: Gpr, [lo, hi]: [Gpr; 2], addr: GprSp) {
    if let Some(code) = trap {
        buf.add_trap(code);
    }
    stlxp(buf, status.into(), lo.into(), hi.into(), addr);
}

/// x16:x17 = `dst op val` on 16-byte values (`dst` holds the loaded value). Returns the
/// pair to store.
fn new_pair(buf: &mut Buf, op: AtomicRmwOp, dst: [Gpr; 2], val: [Gpr; 2]) -> [Gpr; 2] {
    let (new, s) = ([Gpr::X16, Gpr::X17], Size::S64);
    let halves = |buf: &mut Buf, op| {
        for i in 0..2 {
            logical_reg(buf, op, s, new[i].into(), dst[i].into(), val[i].into());
        }
    };
    match op {
        AtomicRmwOp::Xchg => return val,
        AtomicRmwOp::Add | AtomicRmwOp::Sub => {
            let op = if op == AtomicRmwOp::Add {
                AddSub::Add
            } else {
                AddSub::Sub
            };
            adds_subs_reg(buf, op, s, new[0].into(), dst[0].into(), val[0].into());
            add_sub_carry(
                buf,
                op,
                false,
                s,
                new[1].into(),
                dst[1].into(),
                val[1].into(),
            );
        }
        AtomicRmwOp::And => halves(buf, LogicalOp::And),
        AtomicRmwOp::Or => halves(buf, LogicalOp::Orr),
        AtomicRmwOp::Xor => halves(buf, LogicalOp::Eor),
        AtomicRmwOp::Nand => {
            halves(buf, LogicalOp::And);
            for r in new {
                logical_reg(buf, LogicalOp::Orn, s, r.into(), GprZr::ZR, r.into());
            }
        }
        AtomicRmwOp::Umin | AtomicRmwOp::Umax | AtomicRmwOp::Smin | AtomicRmwOp::Smax => {
            // The flags of `x - y` on 128 bits (`cmp`, `sbcs`: N, V and C are right):
            // minimums test `dst < val`, maximums `val < dst`; keep `dst` when it holds.
            let (x, y) = match op {
                AtomicRmwOp::Umin | AtomicRmwOp::Smin => (dst, val),
                _ => (val, dst),
            };
            adds_subs_reg(buf, AddSub::Sub, s, GprZr::ZR, x[0].into(), y[0].into());
            add_sub_carry(
                buf,
                AddSub::Sub,
                true,
                s,
                GprZr::ZR,
                x[1].into(),
                y[1].into(),
            );
            let keep = match op {
                AtomicRmwOp::Umin | AtomicRmwOp::Umax => Cc::Lo,
                _ => Cc::Lt,
            };
            for i in 0..2 {
                let (d, v) = (dst[i].into(), val[i].into());
                csel(buf, CselOp::Csel, s, new[i].into(), d, v, keep);
            }
        }
    }
    new
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
            AtomicInst::Lse {
                op,
                size,
                dst,
                addr,
                val,
                trap,
            } => {
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                let (rs, rt) = (gpr(val).into(), gpr(dst).into());
                atomic_rmw(buf, op, size, Ordering::AcqRel, rs, rt, gpr_sp(addr));
            }
            AtomicInst::CasLse {
                size,
                dst,
                addr,
                expected,
                repl,
                trap,
            } => {
                debug_assert_eq!(dst, expected, "casal reads and writes one register");
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                let (rs, rt) = (gpr(dst).into(), gpr(repl).into());
                cas(buf, size, Ordering::AcqRel, rs, rt, gpr_sp(addr));
            }
            AtomicInst::Load128 { dst, addr, trap } => {
                let (dst, addr) = (dst.map(gpr), GprSp::from(gpr(addr)));
                let start = buf.cur_offset();
                load_pair(buf, trap, dst, addr);
                store_pair(buf, trap, Gpr::X17, dst, addr);
                retry(buf, start);
            }
            AtomicInst::Store128 { src, addr, trap } => {
                let (src, addr) = (src.map(gpr), GprSp::from(gpr(addr)));
                let start = buf.cur_offset();
                load_pair(buf, trap, [Gpr::X16, Gpr::X17], addr);
                store_pair(buf, trap, Gpr::X17, src, addr);
                retry(buf, start);
            }
            AtomicInst::Rmw128 {
                op,
                dst,
                addr,
                val,
                tmp,
                trap,
            } => {
                let (dst, val, tmp) = (dst.map(gpr), val.map(gpr), gpr(tmp));
                let addr = GprSp::from(gpr(addr));
                let start = buf.cur_offset();
                load_pair(buf, trap, dst, addr);
                let new = new_pair(buf, op, dst, val);
                store_pair(buf, trap, tmp, new, addr);
                retry_on(buf, tmp, start);
            }
            AtomicInst::Cas128 {
                dst,
                addr,
                expected,
                repl,
                trap,
            } => {
                let (dst, expected, repl) = (dst.map(gpr), expected.map(gpr), repl.map(gpr));
                let addr = GprSp::from(gpr(addr));
                let start = buf.cur_offset();
                load_pair(buf, trap, dst, addr);
                // x16 = the bits where the loaded value and the expected one differ.
                let (x16, x17, s) = (Gpr::X16, Gpr::X17, Size::S64);
                for (r, i) in [(x16, 0), (x17, 1)] {
                    let (d, e) = (dst[i].into(), expected[i].into());
                    logical_reg(buf, LogicalOp::Eor, s, r.into(), d, e);
                }
                logical_reg(buf, LogicalOp::Orr, s, x16.into(), x16.into(), x17.into());
                // Equal: store the replacement, retry on failure, skip the other store.
                let to_mismatch = PcOffset::new(16).expect("16 fits");
                cbnz(buf, s, x16.into(), to_mismatch);
                store_pair(buf, trap, Gpr::X17, repl, addr);
                retry(buf, start);
                b(buf, PcOffset::new(12).expect("12 fits"));
                // Different: store the loaded value back, which makes the load atomic.
                store_pair(buf, trap, Gpr::X17, dst, addr);
                retry(buf, start);
            }
        }
    }
}
