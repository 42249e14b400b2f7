//! AArch64 machine instructions over virtual registers, grouped by family.
//!
//! # Contract
//!
//! [`Inst`] is one of six families ([`AluInst`], [`FloatInst`], [`MemInst`],
//! [`AtomicInst`], [`ControlInst`], [`VecInst`]); each family's file keeps its variants, their operands,
//! printing and encoding together. [`ControlInst`] and [`MemInst`] are the families every
//! ISA shares (`machinst::control`, `machinst::memory`: variants, operands and printing
//! there); their files here plug in this ISA's parts and encode them.
//!
//! Every family is generic over its register type `R` and has one `map`, written with
//! [`map_operands`], that fixes its operand order for collection (the allocator), encoding
//! and printing alike (see `machinst::operands`). Every operand has a
//! register constraint (any or fixed), so every allocation the encoder sees is a register;
//! values live in spill slots only between instructions, moved by the allocator's edits.
//!
//! Integer values narrower than 64 bits live in the low bits of an `x` register; the upper
//! bits are unspecified. An instruction whose result depends on them (compares, right
//! shifts, division, extension, conversion) works on a value the rules extended first, or at
//! the value's exact width.
//!
//! The encoder may use the scratch registers `x16`, `x17` and `v31` (see `abi.rs`) inside any
//! instruction; no operand is ever allocated to them.
//!
//! Cost: `map` is O(operands) per instruction and allocates nothing except the register
//! lists of printed instructions; collection and encoding each map every instruction once.

use kestrel_regalloc::{Operand, PReg, PRegSet, RegClass, VReg};

use super::asm::{FpMemSize, Gpr, MemSize, Vreg as FpReg};

mod alu;
mod atomic;
mod cond;
mod control;
mod float;
mod mach;
mod mem;
mod vec;

pub(crate) use crate::machinst::operands::map_operands;
pub use crate::machinst::operands::{OperandSpec, Operands};
pub use alu::{AluInst, AluOp, DivKind, PairRegs, UnaryOp};
pub use atomic::AtomicInst;
pub use cond::{CmpRhs, Cond, Pred};
pub use control::{BrTable, ControlInst};
pub use float::FloatInst;
pub use mem::{Mem, MemInst};
pub use vec::{VecInst, V128};

/// The hardware register `gpr` as an allocator register.
pub fn gpr_preg(gpr: Gpr) -> PReg {
    PReg::new(usize::from(gpr.enc()), RegClass::Int)
}

/// The FP/SIMD register `v` as an allocator register.
pub fn fp_preg(v: FpReg) -> PReg {
    PReg::new(usize::from(v.enc()), RegClass::Float)
}

/// How a load reads memory into a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// An integer load of `size` bytes, zero-extended (`ldrb`, `ldrh`, `ldr w`, `ldr x`) or
    /// sign-extended to 64 bits (`ldrsb`, `ldrsh`, `ldrsw`).
    Int { size: MemSize, signed: bool },
    /// `ldr s`/`ldr d` into an FP register.
    Float { size: FpMemSize },
}

/// How a store writes a register to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// The low `size` bytes of an integer register.
    Int { size: MemSize },
    /// `str s`/`str d`.
    Float { size: FpMemSize },
}

/// Printed as `Int(S8, signed)`, `Float(S64)`, … (the VCode listings' form).
impl std::fmt::Display for LoadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadKind::Int { size, signed } => {
                write!(f, "{}{size:?}", if *signed { "s" } else { "u" })
            }
            LoadKind::Float { size } => write!(f, "f{size:?}"),
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreKind::Int { size } => write!(f, "i{size:?}"),
            StoreKind::Float { size } => write!(f, "f{size:?}"),
        }
    }
}

pub use crate::machinst::shared_inst::{CallDest, FrameValue};

/// Instructions are copied as the VCode is built and encoded: a size check keeps a large
/// variant from growing them all (move rarely used data out of line instead).
const _: () = assert!(std::mem::size_of::<Inst>() <= 48);

/// One AArch64 instruction (or a short fixed sequence), by family.
#[derive(Clone, Debug)]
pub enum Inst<R = VReg> {
    Alu(AluInst<R>),
    Float(FloatInst<R>),
    Mem(MemInst<R>),
    Atomic(AtomicInst<R>),
    Control(ControlInst<R>),
    Vec(VecInst<R>),
}

crate::machinst::shared_inst::inst_families!(
    AluInst => Alu,
    FloatInst => Float,
    MemInst => Mem,
    AtomicInst => Atomic,
    ControlInst => Control,
    VecInst => Vec
);
