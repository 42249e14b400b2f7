//! The x86-64 backend: System V ABI, rule-based lowering, encoding through `asm`.
//!
//! [`X64`] describes the ISA to the shared target and pipeline backend
//! (`machinst::backend`): [`X64Isa`] is the `TargetIsa` (`isa::lookup("x86_64")`), whose
//! `compile` builds an [`X64Backend`] for its [`features`] from the flags and runs the shared
//! pipeline (`machinst::compile`) with this ISA's pieces: `inst` (the instruction enum and
//! its operands), `lower.rules` + `lower` (selection; the features pick an instruction or
//! its baseline fallback), `emit` (encoding, frame, edits) and `abi` (calling convention and
//! frame layout).

pub mod abi;
pub mod asm;
pub mod emit;
pub mod features;
pub mod inst;
mod isel;
mod isel_types;
pub mod lower;
pub mod lower_br_table;
pub mod lower_mem;
pub mod lower_op;
pub mod probestack;
pub mod stack_limit;
pub mod unwind;
pub mod winch;

use crate::isa::{ElfTarget, IsaInfo};
use crate::machinst::backend::{IsaTarget, PipelineBackend};
use crate::machinst::buffer::RelocKind;
pub use lower::lowering_rules;

/// The relocation kinds x86-64 code uses, with their ELF types.
const ELF: ElfTarget = ElfTarget {
    architecture: object::Architecture::X86_64,
    abs64: object::elf::R_X86_64_64,
    abs32: object::elf::R_X86_64_32,
    pc_rel32: object::elf::R_X86_64_PC32,
    code_relocs: &[
        (RelocKind::Abs4, object::elf::R_X86_64_32),
        (RelocKind::Abs8, object::elf::R_X86_64_64),
        (RelocKind::PcRel4, object::elf::R_X86_64_PC32),
        (RelocKind::CallPcRel4, object::elf::R_X86_64_PLT32),
        (RelocKind::GotPcRel4, object::elf::R_X86_64_REX_GOTPCRELX),
    ],
};

static INFO: IsaInfo = IsaInfo {
    name: "x86_64",
    pointer_bytes: 8,
    reloc_kinds: RELOC_KINDS,
    unwind_cie: &unwind::CIE,
    elf: &ELF,
    lowering_rules,
    #[cfg(feature = "disasm")]
    disassemble: crate::disasm::disassemble,
};

const RELOC_KINDS: &[RelocKind] = &[
    RelocKind::Abs4,
    RelocKind::Abs8,
    RelocKind::PcRel4,
    RelocKind::CallPcRel4,
    RelocKind::GotPcRel4,
];

/// x86-64 as the shared target and pipeline backend see it (`machinst::backend`).
#[derive(Clone, Copy, Debug, Default)]
pub struct X64;

crate::machinst::backend::isa_description!(X64, "x86-64", abi::X64Abi);

/// The x86-64 (System V) target for a CPU with `features`.
pub type X64Isa = IsaTarget<X64>;

/// The x86-64 pipeline backend: `X64Backend::default()` is the host's features with default
/// settings (for callers that drive `machinst::compile` themselves; [`X64Isa`] is the
/// target consumers hold).
pub type X64Backend = PipelineBackend<X64>;
