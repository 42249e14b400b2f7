//! x86-64 machine instructions over virtual registers, grouped by family.
//!
//! # Contract
//!
//! [`Inst`] is one of seven families ([`AluInst`], [`BitsInst`], [`SseInst`], [`VecInst`], [`MemInst`],
//! [`AtomicInst`], [`ControlInst`]); each family's file keeps its variants, their operands,
//! printing and encoding together. [`ControlInst`] and [`MemInst`] are the families every
//! ISA shares (`machinst::control`, `machinst::memory`: variants, operands and printing
//! there); their files here plug in this ISA's parts and encode them.
//!
//! Every family is generic over its register type `R`: lowering builds `Inst<VReg>`, and one
//! function per family, `map`, visits the registers in operand order through an
//! [`Operands`] mapper, which gives each operand its constraint and replaces it by an `S`.
//! That one function defines the operand order for all three uses: collection for the
//! allocator (`S = ()`), encoding (`S = PReg`, the allocated register: the encoder reads
//! `dst`, `a`, … by name, never by position) and printing (`S = String`). Each `map` is
//! written with [`map_operands`]: one line per variant, its register fields in operand order. Every operand has
//! a register constraint (any, fixed or reuse), never a stack one, so every allocation the
//! encoder sees is a register; values live in spill slots only between instructions, moved
//! by the allocator's edits.
//!
//! Integer values narrower than 64 bits live in the low bits of a 64-bit register; the upper
//! bits are unspecified. An instruction whose result depends on them (compares, right shifts,
//! division, extension) works at the value's exact width or extends first.
//!
//! The encoder may use the scratch registers (`r11`, `xmm15`; see `abi.rs`) inside any
//! instruction; no operand is ever allocated to them.
//!
//! Cost: `map` is O(operands) per instruction and allocates nothing except the register
//! lists of printed instructions; collection and encoding each map every instruction once,
//! so both are linear in the function.

use kestrel_regalloc::{Operand, PReg, PRegSet, RegClass, VReg};

use super::asm::moves::ExtMode;
use super::asm::sse::FloatSize;
use super::asm::{Gpr, Size};

mod alu;
mod atomic;
mod bits;
mod cond;
mod control;
mod mach;
mod mem;
mod sse;
mod vec;

pub(crate) use crate::machinst::operands::map_operands;
pub use crate::machinst::operands::{OperandSpec, Operands};
pub use alu::AluInst;
pub use atomic::AtomicInst;
pub use bits::BitsInst;
pub use cond::{Cond, Mem, Pred};
pub use control::{BrTable, ControlInst};
pub use mem::{MemInst, MemOwn};
pub use sse::SseInst;
pub use vec::{VecInst, V128};

/// The hardware register `gpr` as an allocator register.
pub fn gpr_preg(gpr: Gpr) -> PReg {
    PReg::new(usize::from(gpr.enc()), RegClass::Int)
}

/// A register operand or a 32-bit immediate (sign-extended to the operation size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegImm<R = VReg> {
    Reg(R),
    Imm(i32),
}

impl RegImm {
    #[inline]
    fn map<S, F: FnMut(OperandSpec) -> S>(self, m: &mut Operands<S, F>) -> RegImm<S> {
        match self {
            RegImm::Reg(r) => RegImm::Reg(m.reg_use(r)),
            RegImm::Imm(k) => RegImm::Imm(k),
        }
    }
}

impl RegImm<String> {
    fn pretty(&self) -> String {
        match self {
            RegImm::Reg(r) => r.clone(),
            RegImm::Imm(k) => k.to_string(),
        }
    }
}

/// How a load reads memory into a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// `mov` at 32 or 64 bits.
    Int { size: Size },
    /// `movzx` (or `mov r32` for 32 → 64).
    Zext { mode: ExtMode },
    /// `movsx`/`movsxd`.
    Sext { mode: ExtMode },
    /// `movss`/`movsd` into an XMM register.
    Float { size: FloatSize },
    /// `movdqu`: 16 bytes (a 128-bit vector) into an XMM register, any alignment.
    Vec,
}

/// How a store writes a register to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    Int {
        size: Size,
    },
    Float {
        size: FloatSize,
    },
    /// `movdqu`: the 16 bytes of an XMM register, any alignment.
    Vec,
}

/// Printed as `Int(S64)`, `Zext(BL)`, … (the VCode listings' form).
impl std::fmt::Display for LoadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadKind::Int { size } => write!(f, "Int({size:?})"),
            LoadKind::Zext { mode } => write!(f, "Zext({mode:?})"),
            LoadKind::Sext { mode } => write!(f, "Sext({mode:?})"),
            LoadKind::Float { size } => write!(f, "Float({size:?})"),
            LoadKind::Vec => write!(f, "Vec"),
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreKind::Int { size } => write!(f, "Int({size:?})"),
            StoreKind::Float { size } => write!(f, "Float({size:?})"),
            StoreKind::Vec => write!(f, "Vec"),
        }
    }
}

pub use crate::machinst::shared_inst::{CallDest, FrameValue};

/// Instructions are copied as the VCode is built and encoded: a size check keeps a large
/// variant from growing them all (move rarely used data out of line instead).
const _: () = assert!(std::mem::size_of::<Inst>() <= 56);

/// One x86-64 instruction (or a short fixed sequence), by family.
#[derive(Clone, Debug)]
pub enum Inst<R = VReg> {
    Alu(AluInst<R>),
    Bits(BitsInst<R>),
    Sse(SseInst<R>),
    Vec(VecInst<R>),
    Mem(MemInst<R>),
    Atomic(AtomicInst<R>),
    Control(ControlInst<R>),
}

crate::machinst::shared_inst::inst_families!(
    AluInst => Alu,
    BitsInst => Bits,
    SseInst => Sse,
    VecInst => Vec,
    MemInst => Mem,
    AtomicInst => Atomic,
    ControlInst => Control
);

impl Inst {
    /// `dst = cond ? t : f` as an [`AluInst::Cmov`]: a `Pred::And` condition (no two-`cmov`
    /// form) becomes its `Pred::Or` inverse with `t` and `f` swapped.
    pub fn cmov(cond: Cond, t: VReg, f: VReg, dst: VReg) -> Inst {
        let inst = match cond.pred() {
            Pred::And(..) => AluInst::Cmov {
                cond: cond.invert(),
                t: f,
                f: t,
                dst,
            },
            _ => AluInst::Cmov { cond, t, f, dst },
        };
        inst.into()
    }
}
