//! Target-independent machine-code machinery.
//!
//! The pipeline (driven by [`compile::compile`]): [`blockorder`] picks the final block layout,
//! [`lower`] turns IR into [`vcode::VCode`] over virtual registers, `kestrel-regalloc` assigns
//! locations, and emission encodes each instruction into a [`buffer::MachBuffer`].
//!
//! This module defines what an ISA provides to that pipeline: the [`MachInst`] trait for its
//! instruction type, [`backend::Isa`] (from which [`backend`] makes its target and pipeline
//! backend), the plug-ins of the shared [`control`] and [`memory`] families, and
//! [`CodegenError`] for what cannot be compiled.

pub mod abi;
pub mod backend;
pub mod blockorder;
pub mod buffer;
pub mod compile;
pub mod control;
pub mod frame;
pub mod ir_ops;
pub mod isel;
pub mod lower;
pub mod memory;
pub mod operands;
pub mod shared_inst;
pub mod stack_limit;
mod tail_order;
pub mod unwind;
pub mod vcode;

use std::fmt;

use kestrel_ir::{Opcode, Type};
pub use kestrel_regalloc::{Allocation, Edit, Operand, PReg, PRegSet, RegClass, VReg};

use crate::chaos::Chaos;
use buffer::{Label, LabelUse, MachBuffer};

/// A lowered block's index in the final order (also its index in the VCode).
pub type BlockIndex = kestrel_regalloc::Block;

/// A machine instruction over virtual registers, as one ISA defines it.
///
/// The operand order that [`MachInst::collect_operands`] reports is part of each
/// instruction's definition: the allocator returns one [`Allocation`] per operand in that
/// order, and [`MachInst::emit`] receives them in that order (an ISA should derive both from
/// one operand visitor, as x86-64's instruction families do, so they cannot disagree).
/// Instructions are plain data (`Send + Sync + 'static`), so a compile context may keep a
/// function's instruction buffer for the next one, on any thread.
pub trait MachInst: Clone + fmt::Debug + Send + Sync + 'static {
    /// The kinds of label references its branches and PC-relative loads use.
    type LabelUse: LabelUse;
    /// Frame facts emission needs (spill-slot offsets, callee-saved registers, …).
    type Frame;

    /// Append this instruction's operands (uses, defs, constraints) to `out`.
    fn collect_operands(&self, out: &mut Vec<Operand>);
    /// Registers the instruction overwrites beyond its defs (a call's caller-saved set).
    fn clobbers(&self) -> PRegSet {
        PRegSet::empty()
    }
    /// Registers whose full width no call preserves although the conventions preserve
    /// part of them (AAPCS64: the upper 64 bits of `v8`–`v15`): in a function with vector
    /// values the allocator treats every call as clobbering them, so no vector lives in
    /// one across a call.
    fn vector_call_clobbers() -> PRegSet {
        PRegSet::empty()
    }
    /// `Some((dst, src))` for a plain register copy.
    fn is_move(&self) -> Option<(VReg, VReg)>;
    /// Whether the instruction ends its block (branch, return, trap).
    fn is_term(&self) -> bool;
    /// An unconditional jump to `target` (used for critical-edge blocks).
    fn gen_jump(target: BlockIndex) -> Self;
    /// Encode the instruction with its operands' `allocs`.
    fn emit(
        &self,
        allocs: &[Allocation],
        ctx: &mut EmitCtx<'_, Self::Frame>,
        buf: &mut MachBuffer<Self::LabelUse>,
    );
    /// Encode one allocator edit (a move between registers and spill slots).
    fn emit_edit(
        edit: &Edit,
        ctx: &mut EmitCtx<'_, Self::Frame>,
        buf: &mut MachBuffer<Self::LabelUse>,
    );
    /// Encode the prologue (runs before the entry block).
    fn emit_prologue(ctx: &mut EmitCtx<'_, Self::Frame>, buf: &mut MachBuffer<Self::LabelUse>);
    /// Called before each instruction and each edit is encoded: an ISA whose label uses
    /// reach less than the buffer can hold emits an island here, with a jump over it, when
    /// [`MachBuffer::island_needed`] says one is due. The default emits nothing (every use
    /// reaches any offset, so the constants wait for the end).
    fn emit_island_if_needed(
        _ctx: &mut EmitCtx<'_, Self::Frame>,
        _buf: &mut MachBuffer<Self::LabelUse>,
    ) {
    }
    /// Human-readable form; `ops` names the operands, in operand order (vregs before
    /// allocation, locations after).
    fn pretty(&self, ops: &[String]) -> String;
    /// The name of a location (for printing allocated code).
    fn alloc_name(alloc: Allocation) -> String;
}

/// What emission of one instruction may consult.
pub struct EmitCtx<'a, F> {
    /// The frame layout.
    pub frame: &'a F,
    /// The label of every lowered block, by [`BlockIndex`].
    pub block_labels: &'a [Label],
    /// Optimization decisions (the MachBuffer asks it; so may the emitter).
    pub chaos: &'a mut Chaos,
}

/// Why a function could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    /// The function uses an instruction, a type or a feature this backend does not lower yet.
    #[error("unsupported: {what}{}{}", opcode.map(|o| format!(" `{}`", o.name())).unwrap_or_default(), ty.map(|t| format!(" of type {t}")).unwrap_or_default())]
    Unsupported {
        /// The opcode involved, when the problem is one instruction.
        opcode: Option<Opcode>,
        /// The type involved, if any.
        ty: Option<Type>,
        /// A description of what is unsupported (with the instruction, when there is one).
        what: String,
    },
    /// The IR is not valid (the verifier rejects it).
    #[error("invalid function: {0}")]
    Verifier(String),
    /// The mid-end produced IR the verifier rejects (a mid-end bug).
    #[error("{0}")]
    MidEnd(#[from] kestrel_opt::OptError),
    /// Register allocation failed (or its checker found an allocator bug).
    #[error("register allocation: {0}")]
    RegAlloc(#[from] kestrel_regalloc::RegAllocError),
    /// The machine-code buffer could not be finished (a backend bug).
    #[error("machine-code buffer: {0}")]
    Buffer(#[from] buffer::BufferError),
}

impl CodegenError {
    /// An unsupported-feature error with no instruction attached.
    pub fn unsupported(what: impl Into<String>) -> Self {
        CodegenError::Unsupported {
            opcode: None,
            ty: None,
            what: what.into(),
        }
    }
}

/// The result of compiling one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledCode {
    /// The machine code; execution starts at offset 0.
    pub code: Vec<u8>,
    /// Relocations to apply when the code is placed.
    pub relocs: Vec<buffer::Reloc>,
    /// Instructions that trap on purpose, with their trap codes.
    pub traps: Vec<buffer::TrapSite>,
    /// Call-frame rule changes by code offset, increasing (see [`unwind`]).
    pub unwind: Vec<(u32, unwind::UnwindOp)>,
    /// Source locations of the instructions: `(start, end, srcloc)` code ranges, increasing
    /// and disjoint, for instructions whose IR carried a source location.
    pub srclocs: Vec<(u32, u32, u32)>,
    /// The VCode before allocation, printed (for `--vcode` and golden tests).
    pub vcode_text: String,
    /// The VCode with allocations and edits, printed.
    pub regalloc_text: String,
    /// Bytes at the end of `code` that are constant-pool data, not instructions.
    pub code_size_without_constants: u32,
    /// The selection rules that fired (indices into the ISA's rule list, e.g.
    /// `isa::x64::lowering_rules`), increasing; empty unless coverage was asked for.
    pub rules_fired: Vec<u16>,
}
