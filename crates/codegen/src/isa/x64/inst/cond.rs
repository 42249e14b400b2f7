//! Operands shared by the families: fused flag tests ([`Cond`]) and memory addresses
//! ([`Mem`]), with their operands, printing and encoding.

use kestrel_ir::TrapCode;
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::alu::{self as enc, AluOp};
use super::super::asm::moves;
use super::super::asm::setcc_cmov_jcc::Cc;
use super::super::asm::sse::{self as sse_enc, FloatSize, SseOp};
use super::super::asm::{Amode, Gpr, GprMem, Scale, Size, XmmMem};
use super::super::emit::{gpr, xmm, Buf};
use super::{map_operands, OperandSpec, Operands, RegImm};
use crate::machinst::frame::Frame;

/// What a condition reads from the flags: one condition code, or two combined (a float
/// compare's `eq` is `E and NP`, its `ne` is `NE or P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    One(Cc),
    And(Cc, Cc),
    Or(Cc, Cc),
}

impl Pred {
    /// The negation (De Morgan for the pairs).
    pub fn invert(self) -> Pred {
        match self {
            Pred::One(c) => Pred::One(c.invert()),
            Pred::And(c, d) => Pred::Or(c.invert(), d.invert()),
            Pred::Or(c, d) => Pred::And(c.invert(), d.invert()),
        }
    }
}

/// A fused condition (a flag-setting test and the flags it reads; see `isa/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond<R = VReg> {
    /// `cmp a, b` at `size`; true when `cc` holds.
    Cmp { size: Size, cc: Cc, a: R, b: RegImm<R> },
    /// `test a, a` at `size`; `cc` is `NE` (nonzero) or `E` (zero).
    Test { size: Size, cc: Cc, a: R },
    /// `test a, b` at `size`: the flags of `a & b` (a merged `band`), nothing written; `cc`
    /// is `NE` (nonzero) or `E` (zero).
    TestAnd { size: Size, cc: Cc, a: R, b: RegImm<R> },
    /// `cmp a, [mem]` at `size` (a load merged into the compare; a trap site with `trap`
    /// when the access may fault); true when `cc` holds.
    CmpMem {
        size: Size,
        cc: Cc,
        a: R,
        mem: Mem<R>,
        trap: Option<TrapCode>,
    },
    /// `ucomis a, b` (float registers); true when `pred` holds. Unordered sets ZF, PF and CF,
    /// `a < b` sets CF, equal sets ZF.
    Fcmp { size: FloatSize, pred: Pred, a: R, b: R },
    /// `cmp a_lo, b_lo; sbb a_hi, b_hi` (on a scratch copy of `a_hi` in r11): the borrow,
    /// sign and overflow of the 128-bit `a - b`, so `cc` is one of `L`, `GE`, `B`, `AE`
    /// (ZF is meaningless).
    Cmp128 { cc: Cc, a: [R; 2], b: [R; 2] },
}

impl<R> Cond<R> {
    /// The same test with the opposite condition (only the condition read changes).
    pub fn invert(mut self) -> Cond<R> {
        match &mut self {
            Cond::Cmp { cc, .. }
            | Cond::Test { cc, .. }
            | Cond::TestAnd { cc, .. }
            | Cond::CmpMem { cc, .. }
            | Cond::Cmp128 { cc, .. } => *cc = cc.invert(),
            Cond::Fcmp { pred, .. } => *pred = pred.invert(),
        }
        self
    }

    pub(crate) fn pred(&self) -> Pred {
        match *self {
            Cond::Cmp { cc, .. }
            | Cond::Test { cc, .. }
            | Cond::TestAnd { cc, .. }
            | Cond::CmpMem { cc, .. }
            | Cond::Cmp128 { cc, .. } => Pred::One(cc),
            Cond::Fcmp { pred, .. } => pred,
        }
    }
}

impl Cond {
    map_operands! {
        /// Operands: `Cmp` and `TestAnd` `[a, b?]`, `Test` `[a]`, `CmpMem` `[a, mem…]`,
        /// `Fcmp` `[a, b]`,
        /// `Cmp128` `[a_lo, a_hi, b_lo, b_hi]`; all uses.
        pub(super) nested Cond, |m| {
            Cmp { size, cc } [a = m.reg_use(*a), b = b.map(m)],
            Test { size, cc } [a = m.reg_use(*a)],
            TestAnd { size, cc } [a = m.reg_use(*a), b = b.map(m)],
            CmpMem { size, cc, trap } [a = m.reg_use(*a), mem = mem.map(m)],
            Fcmp { size, pred } [a = m.reg_use(*a), b = m.reg_use(*b)],
            Cmp128 { cc } [
                a = m.pair(*a, Operands::reg_use),
                b = m.pair(*b, Operands::reg_use)
            ],
        }
    }
}

impl Cond<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            Cond::Cmp { size, cc, a, b } => {
                format!("cmp{} {a}, {} ?{cc:?}", size.bits(), b.pretty())
            }
            Cond::Test { size, cc, a } => format!("test{} {a} ?{cc:?}", size.bits()),
            Cond::TestAnd { size, cc, a, b } => {
                format!("test{} {a}, {} ?{cc:?}", size.bits(), b.pretty())
            }
            Cond::CmpMem {
                size, cc, a, mem, ..
            } => format!("cmp{} {a}, {} ?{cc:?}", size.bits(), mem.pretty()),
            Cond::Fcmp { pred, a, b, .. } => {
                let p = match pred {
                    Pred::One(c) => format!("{c:?}"),
                    Pred::And(c, d) => format!("{c:?} & {d:?}"),
                    Pred::Or(c, d) => format!("{c:?} | {d:?}"),
                };
                format!("ucomi {a}, {b} ?{p}")
            }
            Cond::Cmp128 { cc, a, b } => {
                format!("cmp128 {}:{}, {}:{} ?{cc:?}", a[1], a[0], b[1], b[0])
            }
        }
    }
}

impl Cond<PReg> {
    /// Emit the flag-setting part.
    pub(super) fn emit_test(&self, frame: &Frame, buf: &mut Buf) {
        match *self {
            Cond::Cmp { size, a, b, .. } => {
                let a = GprMem::Reg(gpr(a));
                match b {
                    RegImm::Reg(b) => enc::alu_rm_r(buf, AluOp::Cmp, size, &a, gpr(b)),
                    RegImm::Imm(k) => enc::alu_rm_imm(buf, AluOp::Cmp, size, &a, k),
                };
            }
            Cond::Test { size, a, .. } => {
                let a = gpr(a);
                enc::test_rm_r(buf, size, &GprMem::Reg(a), a);
            }
            Cond::TestAnd { size, a, b, .. } => {
                let a = GprMem::Reg(gpr(a));
                match b {
                    RegImm::Reg(b) => enc::test_rm_r(buf, size, &a, gpr(b)),
                    RegImm::Imm(k) => enc::test_rm_imm(buf, size, &a, k),
                };
            }
            Cond::CmpMem {
                size, a, mem, trap, ..
            } => {
                let m = GprMem::Mem(mem.amode(frame));
                // The access is the compare's: a fault here is the merged load's trap.
                if let Some(code) = trap {
                    buf.add_trap(code);
                }
                enc::alu_r_rm(buf, AluOp::Cmp, size, gpr(a), &m);
            }
            Cond::Fcmp { size, a, b, .. } => {
                let op = match size {
                    FloatSize::F32 => SseOp::Ucomiss,
                    FloatSize::F64 => SseOp::Ucomisd,
                };
                sse_enc::sse_r_rm(buf, op, xmm(a), &XmmMem::Reg(xmm(b)));
            }
            Cond::Cmp128 { a, b, .. } => {
                // r11 is free inside an instruction (the scratch-register contract).
                let r11 = GprMem::Reg(Gpr::R11);
                moves::mov_rm_r(buf, Size::S64, &r11, gpr(a[1]));
                let a_lo = GprMem::Reg(gpr(a[0]));
                enc::alu_rm_r(buf, AluOp::Cmp, Size::S64, &a_lo, gpr(b[0]));
                enc::alu_rm_r(buf, AluOp::Sbb, Size::S64, &r11, gpr(b[1]));
            }
        }
    }
}

/// A memory operand: `[base + disp]` with a register base, or a place in the frame (`rsp`
/// plus the explicit stack slot's offset plus `disp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem<R = VReg> {
    Reg {
        base: R,
        disp: i32,
    },
    /// `[base + index << shift + disp]` (`shift` is 0 to 3).
    RegIndex {
        base: R,
        index: R,
        shift: u8,
        disp: i32,
    },
    Slot {
        slot: u32,
        disp: i32,
    },
    /// The outgoing return area (above the outgoing arguments at the bottom of the frame).
    RetArea {
        disp: i32,
    },
    /// An incoming stack argument: `[rbp + 16 + disp]`.
    IncomingArg {
        disp: i32,
    },
    /// An outgoing stack argument of the next call: `[rsp + disp]`.
    OutgoingArg {
        disp: i32,
    },
}

impl Mem<PReg> {
    /// The address of this place in `frame`.
    pub(in crate::isa::x64) fn amode(&self, frame: &Frame) -> Amode {
        match *self {
            Mem::Reg { base, disp } => Amode::base_disp(gpr(base), disp),
            Mem::RegIndex {
                base,
                index,
                shift,
                disp,
            } => Amode::base_index(gpr(base), gpr(index), Scale::ALL[usize::from(shift)], disp),
            Mem::Slot { slot, disp } => Amode::base_disp(Gpr::RSP, frame.slot_offset(slot) + disp),
            Mem::RetArea { disp } => Amode::base_disp(Gpr::RSP, frame.ret_area_base + disp),
            Mem::IncomingArg { disp } => Amode::base_disp(Gpr::RBP, 16 + disp),
            Mem::OutgoingArg { disp } => Amode::base_disp(Gpr::RSP, disp),
        }
    }
}

impl<R> Mem<R> {
    /// The same place `delta` bytes further (`None` when the displacement overflows).
    pub(crate) fn offset(self, delta: i32) -> Option<Mem<R>> {
        let add = |d: i32| d.checked_add(delta);
        Some(match self {
            Mem::Reg { base, disp } => Mem::Reg {
                base,
                disp: add(disp)?,
            },
            Mem::RegIndex {
                base,
                index,
                shift,
                disp,
            } => Mem::RegIndex {
                base,
                index,
                shift,
                disp: add(disp)?,
            },
            Mem::Slot { slot, disp } => Mem::Slot {
                slot,
                disp: add(disp)?,
            },
            Mem::RetArea { disp } => Mem::RetArea { disp: add(disp)? },
            Mem::IncomingArg { disp } => Mem::IncomingArg { disp: add(disp)? },
            Mem::OutgoingArg { disp } => Mem::OutgoingArg { disp: add(disp)? },
        })
    }
}

impl Mem {
    map_operands! {
        /// Operands: `Reg` `[base]`, `RegIndex` `[base, index]`, others none; all uses.
        pub(super) nested Mem, |m| {
            Reg { disp } [base = m.reg_use(*base)],
            RegIndex { shift, disp } [base = m.reg_use(*base), index = m.reg_use(*index)],
            Slot { slot, disp } [],
            RetArea { disp } [],
            IncomingArg { disp } [],
            OutgoingArg { disp } [],
        }
    }
}

impl Mem<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            Mem::RegIndex {
                base,
                index,
                shift,
                disp,
            } => format!("[{base}+{index}*{}{disp:+}]", 1 << shift),
            Mem::Reg { base, disp } => format!("[{base}{disp:+}]"),
            Mem::Slot { slot, disp } => format!("[ss{slot}{disp:+}]"),
            Mem::RetArea { disp } => format!("[ret_area{disp:+}]"),
            Mem::IncomingArg { disp } => format!("[in_arg{disp:+}]"),
            Mem::OutgoingArg { disp } => format!("[out_arg{disp:+}]"),
        }
    }
}
