//! The atomics family: fences, `lock xadd`/`xchg`, compare-exchange and the
//! compare-exchange loops that implement the other read-modify-writes.

use kestrel_ir::AtomicRmwOp;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::alu::{self as enc, AluOp, UnaryOp};
use super::super::asm::misc;
use super::super::asm::moves::{self, ExtMode};
use super::super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::super::asm::{Amode, Gpr, GprMem, Size};
use super::super::emit::{gpr, jcc_to, Buf, Ctx};
use super::{gpr_preg, map_operands, OperandSpec, Operands};

/// One atomic instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum AtomicInst<R = VReg> {
    /// `mfence`. No operands.
    Fence,
    /// `dst = op([addr])` atomically with `[addr] op= val`: `lock xadd` for add/sub (`val`
    /// negated first for sub), `xchg` for xchg. Operands: `[addr use, val use, dst def
    /// reusing val]`.
    Xadd {
        size: Size,
        op: AtomicRmwOp,
        addr: R,
        val: R,
        dst: R,
    },
    /// Any other read-modify-write as a `lock cmpxchg` loop; `dst` (the old value) is rax.
    /// Operands: `[addr use, val use, dst early def in rax]`.
    Loop {
        size: Size,
        op: AtomicRmwOp,
        addr: R,
        val: R,
        dst: R,
    },
    /// `lock cmpxchg [addr], repl` with `expected` in rax; the old value in rax. Operands:
    /// `[addr use, expected use in rax, repl use, dst def in rax]`.
    Cas { size: Size, addr: R, expected: R, repl: R, dst: R },
    /// `lock cmpxchg16b [addr]` with `expected` in rdx:rax and `repl` in rcx:rbx; the old
    /// value in rdx:rax. Operands: `[addr use, expected_lo in rax, expected_hi in rdx, repl_lo
    /// in rbx, repl_hi in rcx, dst_lo def in rax, dst_hi def in rdx]`.
    Cas128 {
        addr: R,
        expected: [R; 2],
        repl: [R; 2],
        dst: [R; 2],
    },
    /// A 128-bit read-modify-write as a `cmpxchg16b` loop: old value in rdx:rax (`dst`), new
    /// value computed in rcx:rbx (`tmp`). Operands: `[addr use, val_lo use, val_hi use, dst_lo
    /// early def in rax, dst_hi early def in rdx, tmp_lo early def in rbx, tmp_hi early def in
    /// rcx]`.
    Loop128 {
        op: AtomicRmwOp,
        addr: R,
        val: [R; 2],
        dst: [R; 2],
        tmp: [R; 2],
    },
}

impl AtomicInst {
    map_operands! {
        pub(in crate::isa::x64) AtomicInst, |m|
        let [rax, rdx, rbx, rcx] = [Gpr::RAX, Gpr::RDX, Gpr::RBX, Gpr::RCX].map(gpr_preg);
        {
            Fence {} [],
            Xadd { size, op } [
                addr = m.reg_use(*addr),
                val = m.reg_use(*val),
                dst = m.reuse_def(*dst, 1)
            ],
            Loop { size, op } [
                addr = m.reg_use(*addr),
                val = m.reg_use(*val),
                dst = m.fixed_early_def(*dst, rax)
            ],
            Cas { size } [
                addr = m.reg_use(*addr),
                expected = m.fixed_use(*expected, rax),
                repl = m.reg_use(*repl),
                dst = m.fixed_def(*dst, rax)
            ],
            Cas128 {} [
                addr = m.reg_use(*addr),
                expected = [m.fixed_use(expected[0], rax), m.fixed_use(expected[1], rdx)],
                repl = [m.fixed_use(repl[0], rbx), m.fixed_use(repl[1], rcx)],
                dst = [m.fixed_def(dst[0], rax), m.fixed_def(dst[1], rdx)]
            ],
            Loop128 { op } [
                addr = m.reg_use(*addr),
                val = m.pair(*val, Operands::reg_use),
                dst = [m.fixed_early_def(dst[0], rax), m.fixed_early_def(dst[1], rdx)],
                tmp = [m.fixed_early_def(tmp[0], rbx), m.fixed_early_def(tmp[1], rcx)]
            ],
        }
    }
}

impl AtomicInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            AtomicInst::Fence => "mfence".into(),
            AtomicInst::Xadd {
                size,
                op,
                addr,
                val,
                dst,
            }
            | AtomicInst::Loop {
                size,
                op,
                addr,
                val,
                dst,
            } => format!("{dst} = atomic_{op}{} [{addr}], {val}", size.bits()),
            AtomicInst::Cas {
                size,
                addr,
                expected,
                repl,
                dst,
            } => format!(
                "{dst} = atomic_cas{} [{addr}], {expected}, {repl}",
                size.bits()
            ),
            AtomicInst::Cas128 {
                addr,
                expected,
                repl,
                dst,
            } => format!(
                "{}:{} = atomic_cas128 [{addr}], {}:{}, {}:{}",
                dst[1], dst[0], expected[1], expected[0], repl[1], repl[0]
            ),
            AtomicInst::Loop128 {
                op, addr, val, dst, ..
            } => format!(
                "{}:{} = atomic_{op}128 [{addr}], {}:{}",
                dst[1], dst[0], val[1], val[0]
            ),
        }
    }
}

impl AtomicInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        match *self {
            AtomicInst::Fence => misc::fence(buf, misc::Fence::Full),
            AtomicInst::Xadd {
                size,
                op,
                addr,
                val,
                ..
            } => {
                let (m, r) = (Amode::base_disp(gpr(addr), 0), gpr(val));
                if op == AtomicRmwOp::Xchg {
                    misc::xchg_rm_r(buf, size, &GprMem::Mem(m), r);
                } else {
                    if op == AtomicRmwOp::Sub {
                        enc::unary_rm(buf, UnaryOp::Neg, size, &GprMem::Reg(r));
                    }
                    misc::lock_xadd(buf, size, &m, r);
                }
            }
            AtomicInst::Loop {
                size,
                op,
                addr,
                val,
                ..
            } => emit_loop(size, op, gpr(addr), gpr(val), ctx, buf),
            AtomicInst::Cas {
                size, addr, repl, ..
            } => {
                misc::lock_cmpxchg(buf, size, &Amode::base_disp(gpr(addr), 0), gpr(repl));
            }
            AtomicInst::Cas128 { addr, .. } => {
                misc::lock_cmpxchg16b(buf, &Amode::base_disp(gpr(addr), 0));
            }
            AtomicInst::Loop128 { op, addr, val, .. } => {
                emit_loop128(op, gpr(addr), [gpr(val[0]), gpr(val[1])], ctx, buf)
            }
        }
    }
}

/// A read-modify-write as a compare-exchange loop: load the old value into rax, compute the
/// new one in r11, `lock cmpxchg`, retry if another thread changed the memory in between.
fn emit_loop(
    size: Size,
    op: AtomicRmwOp,
    addr: Gpr,
    val: Gpr,
    ctx: &mut Ctx<'_, '_>,
    buf: &mut Buf,
) {
    let m = Amode::base_disp(addr, 0);
    let r11 = GprMem::Reg(Gpr::R11);
    let wide = if size == Size::S64 {
        Size::S64
    } else {
        Size::S32
    };
    match size {
        Size::S8 => moves::movzx(buf, ExtMode::BL, Gpr::RAX, &GprMem::Mem(m)),
        Size::S16 => moves::movzx(buf, ExtMode::WL, Gpr::RAX, &GprMem::Mem(m)),
        _ => moves::mov_r_rm(buf, size, Gpr::RAX, &GprMem::Mem(m)),
    };
    let again = buf.get_label();
    buf.bind_label(again, ctx.chaos);
    moves::mov_rm_r(buf, Size::S64, &r11, Gpr::RAX);
    let alu = |buf: &mut Buf, op| {
        enc::alu_rm_r(buf, op, wide, &r11, val);
    };
    let minmax = |buf: &mut Buf, cc| {
        enc::alu_rm_r(buf, AluOp::Cmp, size, &r11, val);
        cc_ops::cmov(buf, cc, wide, Gpr::R11, &GprMem::Reg(val));
    };
    match op {
        AtomicRmwOp::And => alu(buf, AluOp::And),
        AtomicRmwOp::Or => alu(buf, AluOp::Or),
        AtomicRmwOp::Xor => alu(buf, AluOp::Xor),
        AtomicRmwOp::Add => alu(buf, AluOp::Add),
        AtomicRmwOp::Sub => alu(buf, AluOp::Sub),
        AtomicRmwOp::Nand => {
            alu(buf, AluOp::And);
            enc::unary_rm(buf, UnaryOp::Not, wide, &r11);
        }
        AtomicRmwOp::Xchg => {
            moves::mov_rm_r(buf, Size::S64, &r11, val);
        }
        // Replace the old value when the operand is smaller (min) / larger (max).
        AtomicRmwOp::Umin => minmax(buf, Cc::A),
        AtomicRmwOp::Umax => minmax(buf, Cc::B),
        AtomicRmwOp::Smin => minmax(buf, Cc::G),
        AtomicRmwOp::Smax => minmax(buf, Cc::L),
    }
    misc::lock_cmpxchg(buf, size, &m, Gpr::R11);
    jcc_to(buf, Cc::NE, again);
}

/// A 128-bit read-modify-write loop: load the old value into rdx:rax, compute the new one in
/// rcx:rbx, `lock cmpxchg16b`, retry if the memory changed in between.
fn emit_loop128(op: AtomicRmwOp, addr: Gpr, val: [Gpr; 2], ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
    let [vl, vh] = val;
    let m = |disp| GprMem::Mem(Amode::base_disp(addr, disp));
    let r = GprMem::Reg;
    moves::mov_r_rm(buf, Size::S64, Gpr::RAX, &m(0));
    moves::mov_r_rm(buf, Size::S64, Gpr::RDX, &m(8));
    let again = buf.get_label();
    buf.bind_label(again, ctx.chaos);
    moves::mov_rm_r(buf, Size::S64, &r(Gpr::RBX), Gpr::RAX);
    moves::mov_rm_r(buf, Size::S64, &r(Gpr::RCX), Gpr::RDX);
    let pair = |buf: &mut Buf, lo, hi| {
        enc::alu_rm_r(buf, lo, Size::S64, &r(Gpr::RBX), vl);
        enc::alu_rm_r(buf, hi, Size::S64, &r(Gpr::RCX), vh);
    };
    // Flags of `x - y` for 128-bit x, y (x_hi copied to r11), then take `val` when `cc`.
    let pick_val = |buf: &mut Buf, x: (Gpr, Gpr), y: (Gpr, Gpr), cc| {
        moves::mov_rm_r(buf, Size::S64, &r(Gpr::R11), x.1);
        enc::alu_rm_r(buf, AluOp::Cmp, Size::S64, &r(x.0), y.0);
        enc::alu_rm_r(buf, AluOp::Sbb, Size::S64, &r(Gpr::R11), y.1);
        cc_ops::cmov(buf, cc, Size::S64, Gpr::RBX, &r(vl));
        cc_ops::cmov(buf, cc, Size::S64, Gpr::RCX, &r(vh));
    };
    let (old, val) = ((Gpr::RAX, Gpr::RDX), (vl, vh));
    match op {
        AtomicRmwOp::Add => pair(buf, AluOp::Add, AluOp::Adc),
        AtomicRmwOp::Sub => pair(buf, AluOp::Sub, AluOp::Sbb),
        AtomicRmwOp::And => pair(buf, AluOp::And, AluOp::And),
        AtomicRmwOp::Or => pair(buf, AluOp::Or, AluOp::Or),
        AtomicRmwOp::Xor => pair(buf, AluOp::Xor, AluOp::Xor),
        AtomicRmwOp::Nand => {
            pair(buf, AluOp::And, AluOp::And);
            enc::unary_rm(buf, UnaryOp::Not, Size::S64, &r(Gpr::RBX));
            enc::unary_rm(buf, UnaryOp::Not, Size::S64, &r(Gpr::RCX));
        }
        AtomicRmwOp::Xchg => {
            moves::mov_rm_r(buf, Size::S64, &r(Gpr::RBX), vl);
            moves::mov_rm_r(buf, Size::S64, &r(Gpr::RCX), vh);
        }
        // min: take val when val < old; max: when old < val.
        AtomicRmwOp::Umin => pick_val(buf, val, old, Cc::B),
        AtomicRmwOp::Smin => pick_val(buf, val, old, Cc::L),
        AtomicRmwOp::Umax => pick_val(buf, old, val, Cc::B),
        AtomicRmwOp::Smax => pick_val(buf, old, val, Cc::L),
    }
    misc::lock_cmpxchg16b(buf, &Amode::base_disp(addr, 0));
    jcc_to(buf, Cc::NE, again);
}
