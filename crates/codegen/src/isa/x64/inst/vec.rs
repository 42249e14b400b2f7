//! The vector family: 128-bit lane operations in XMM registers (SSE2, SSSE3, SSE4.1 forms of
//! `asm/vec.rs`), vector constants from the constant pool, lane transfers to and from GPRs.
//!
//! A vector lives in one float-class register, all 128 bits meaningful. Constants go to the
//! `MachBuffer`'s pool deduplicated ([`MachBuffer::add_pooled_constant`], 16 bytes,
//! 16-aligned) and are read with `movdqu` (no alignment assumed of where the code lands);
//! an operation with a pooled operand loads it into the scratch `xmm15` first.
//!
//! [`MachBuffer::add_pooled_constant`]: crate::machinst::buffer::MachBuffer::add_pooled_constant

use kestrel_regalloc::{PReg, VReg};

use super::super::asm::sse::{self as sse_enc, SseOp};
use super::super::asm::vec::{self as enc, LaneSize, Movmsk, VecImmOp, VecOp, VecShiftImm};
use super::super::asm::{Amode, GprMem, Xmm, XmmMem};
use super::super::emit::{gpr, xmm, Buf, X64LabelUse};
use super::{map_operands, OperandSpec, Operands};
pub use crate::machinst::isel::vec::V128;

/// One vector instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum VecInst<R = VReg> {
    /// `dst = a op b`. Operands: `[a use, b use, dst def reusing a]`.
    RmR { op: VecOp, dst: R, a: R, b: R },
    /// `dst = op src` (a unary [`VecOp`]). Operands: `[src use, dst def]`.
    Unary { op: VecOp, dst: R, src: R },
    /// `dst = op(src, imm)` (a unary [`VecImmOp`]: `pshufd`…). Operands: `[src use, dst def]`.
    UnaryImm { op: VecImmOp, dst: R, src: R, imm: u8 },
    /// `dst = op(a, b, imm)` (`shufps`, `cmpps`). Operands: `[a use, b use, dst def reusing a]`.
    RmRImm { op: VecImmOp, dst: R, a: R, b: R, imm: u8 },
    /// `dst = a` with each lane shifted by `imm`. Operands: `[a use, dst def reusing a]`.
    ShiftImm { op: VecShiftImm, dst: R, a: R, imm: u8 },
    /// `dst = bits` (`pxor` for zero, `pcmpeqd` for all ones, else a pooled constant).
    /// Operands: `[dst def]`.
    Const { dst: R, bits: V128 },
    /// `dst = a op bits`, `bits` a pooled constant. Operands: `[a use, dst def reusing a]`.
    RmConst { op: VecOp, dst: R, a: R, bits: V128 },
    /// `dst = a` with lane `lane` from the GPR `src`. Operands: `[a use, src use, dst def
    /// reusing a]`.
    Pinsr { size: LaneSize, dst: R, a: R, src: R, lane: u8 },
    /// GPR `dst = lane `lane` of src`, zero-extended. Operands: `[src use, dst def]`.
    Pextr { size: LaneSize, dst: R, src: R, lane: u8 },
    /// GPR `dst = the sign bits of src's lanes`. Operands: `[src use, dst def]`.
    Movmsk { op: Movmsk, dst: R, src: R },
    /// `dst = a * b + c` per f32 or (`f64`) f64 lane, fused (FMA). Operands: `[a use, b use,
    /// c use, dst def reusing a]`.
    Fma { f64: bool, dst: R, a: R, b: R, c: R },
}

impl VecInst {
    map_operands! {
        pub(in crate::isa::x64) VecInst, |m| {
            RmR { op } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reuse_def(*dst, 0)],
            Unary { op } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            UnaryImm { op, imm } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            RmRImm { op, imm } [a = m.reg_use(*a), b = m.reg_use(*b), dst = m.reuse_def(*dst, 0)],
            ShiftImm { op, imm } [a = m.reg_use(*a), dst = m.reuse_def(*dst, 0)],
            Const { bits } [dst = m.reg_def(*dst)],
            RmConst { op, bits } [a = m.reg_use(*a), dst = m.reuse_def(*dst, 0)],
            Pinsr { size, lane } [a = m.reg_use(*a), src = m.reg_use(*src), dst = m.reuse_def(*dst, 0)],
            Pextr { size, lane } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Movmsk { op } [src = m.reg_use(*src), dst = m.reg_def(*dst)],
            Fma { f64 } [a = m.reg_use(*a), b = m.reg_use(*b), c = m.reg_use(*c), dst = m.reuse_def(*dst, 0)],
        }
    }
}

impl VecInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            VecInst::RmR { op, dst, a, b } => format!("{dst} = {op:?} {a}, {b}").to_lowercase(),
            VecInst::Unary { op, dst, src } => format!("{dst} = {op:?} {src}").to_lowercase(),
            VecInst::UnaryImm { op, dst, src, imm } => {
                format!("{dst} = {op:?} {src}, {imm:#x}").to_lowercase()
            }
            VecInst::RmRImm { op, dst, a, b, imm } => {
                format!("{dst} = {op:?} {a}, {b}, {imm:#x}").to_lowercase()
            }
            VecInst::ShiftImm { op, dst, a, imm } => {
                format!("{dst} = {op:?} {a}, {imm}").to_lowercase()
            }
            VecInst::Const { dst, bits } => format!("{dst} = vconst {:#034x}", bits.bits()),
            VecInst::RmConst { op, dst, a, bits } => {
                format!(
                    "{} {:#034x}",
                    format!("{dst} = {op:?} {a},").to_lowercase(),
                    bits.bits()
                )
            }
            VecInst::Pinsr {
                size,
                dst,
                a,
                src,
                lane,
            } => format!("{dst} = pinsr{size:?} {a}, {src}, {lane}").to_lowercase(),
            VecInst::Pextr {
                size,
                dst,
                src,
                lane,
            } => format!("{dst} = pextr{size:?} {src}, {lane}").to_lowercase(),
            VecInst::Movmsk { op, dst, src } => format!("{dst} = {op:?} {src}").to_lowercase(),
            VecInst::Fma { f64, dst, a, b, c } => {
                let k = if *f64 { "pd" } else { "ps" };
                format!("{dst} = vfmadd213{k} {a}, {b}, {c}")
            }
        }
    }
}

impl VecInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, buf: &mut Buf) {
        match *self {
            VecInst::RmR { op, dst, b, .. } => {
                enc::vec_r_rm(buf, op, xmm(dst), &XmmMem::Reg(xmm(b)));
            }
            VecInst::Unary { op, dst, src } => {
                enc::vec_r_rm(buf, op, xmm(dst), &XmmMem::Reg(xmm(src)));
            }
            VecInst::UnaryImm { op, dst, src, imm } => {
                enc::vec_r_rm_imm(buf, op, xmm(dst), &XmmMem::Reg(xmm(src)), imm);
            }
            VecInst::RmRImm {
                op, dst, b, imm, ..
            } => {
                enc::vec_r_rm_imm(buf, op, xmm(dst), &XmmMem::Reg(xmm(b)), imm);
            }
            VecInst::ShiftImm { op, dst, imm, .. } => {
                enc::vec_shift_imm(buf, op, xmm(dst), imm);
            }
            VecInst::Const { dst, bits } => {
                let dst = xmm(dst);
                match bits.bits() {
                    0 => {
                        enc::vec_r_rm(buf, VecOp::Pxor, dst, &XmmMem::Reg(dst));
                    }
                    u128::MAX => {
                        enc::vec_r_rm(buf, VecOp::Pcmpeqd, dst, &XmmMem::Reg(dst));
                    }
                    b => load_pooled(buf, dst, b),
                }
            }
            VecInst::RmConst { op, dst, bits, .. } => {
                let scratch = Xmm::new(15);
                load_pooled(buf, scratch, bits.bits());
                enc::vec_r_rm(buf, op, xmm(dst), &XmmMem::Reg(scratch));
            }
            VecInst::Pinsr {
                size,
                dst,
                src,
                lane,
                ..
            } => {
                enc::pinsr(buf, size, xmm(dst), &GprMem::Reg(gpr(src)), lane);
            }
            VecInst::Pextr {
                size,
                dst,
                src,
                lane,
            } => enc::pextr(buf, size, gpr(dst), xmm(src), lane),
            VecInst::Movmsk { op, dst, src } => enc::movmsk(buf, op, gpr(dst), xmm(src)),
            VecInst::Fma { f64, dst, b, c, .. } => {
                enc::vfmadd213(buf, f64, xmm(dst), xmm(b), &XmmMem::Reg(xmm(c)));
            }
        }
    }
}

/// `movdqu dst, [pool constant bits]`.
fn load_pooled(buf: &mut Buf, dst: Xmm, bits: u128) {
    let label = buf.add_pooled_constant(&bits.to_le_bytes(), 16);
    let fix = sse_enc::sse_r_rm(buf, SseOp::Movdqu, dst, &XmmMem::Mem(Amode::rip(0)))
        .expect("a RIP-relative operand has a fixup");
    buf.use_label_at_offset(fix.at, label, X64LabelUse::Rel32);
}
