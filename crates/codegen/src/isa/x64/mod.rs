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
mod lower_vec;
pub mod probestack;
pub mod stack_limit;
pub mod unwind;
pub mod winch;

pub use lower::lowering_rules;

crate::machinst::backend::isa_description! {
    /// x86-64 as the shared target and pipeline backend see it (`machinst::backend`).
    X64 {
        name: "x86_64",
        settings_name: "x86-64",
        abi: abi::X64Abi,
        disassemble: crate::disasm::disassemble,
        elf: X86_64 { abs64: R_X86_64_64, abs32: R_X86_64_32, pc_rel32: R_X86_64_PC32 },
        relocs: {
            Abs4 => R_X86_64_32,
            Abs8 => R_X86_64_64,
            PcRel4 => R_X86_64_PC32,
            CallPcRel4 => R_X86_64_PLT32,
            GotPcRel4 => R_X86_64_REX_GOTPCRELX,
        },
        /// The x86-64 (System V) target for a CPU with `features`.
        target: X64Isa,
        /// The x86-64 pipeline backend: `X64Backend::default()` is the host's features with
        /// default settings (for callers that drive `machinst::compile` themselves;
        /// [`X64Isa`] is the target consumers hold).
        backend: X64Backend,
    }
}
