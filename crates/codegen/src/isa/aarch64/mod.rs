//! The AArch64 backend: AAPCS64, rule-based lowering, encoding through `asm`.
//!
//! [`Aarch64`] describes the ISA to the shared target and pipeline backend
//! (`machinst::backend`): [`Aarch64Isa`] is the `TargetIsa` (`isa::lookup("aarch64")`),
//! whose `compile` builds an [`Aarch64Backend`] from the flags and runs the shared pipeline
//! (`machinst::compile`) with this ISA's pieces: `inst` (the instruction enum and its
//! operands), `lower.rules` + `lower_vec.rules` + `lower` (selection), `emit` (encoding, frame, edits, islands
//! and veneers) and `abi` (calling convention and frame layout). [`asm`] encodes each instruction form into 32-bit words; every form it emits is
//! cross-checked against `aarch64-linux-gnu-objdump` in its tests.
//!
//! The code is position-independent: calls are `bl` with `CALL26` relocations, symbol
//! addresses `adrp`/`add` pairs with page relocations; the object writer
//! (`kestrel-object`) turns them into ELF relocations.

pub mod abi;
pub mod asm;
pub mod emit;
pub mod features;
pub mod inst;
mod isel;
pub mod lower;
mod lower_mem;
mod lower_pair;
mod lower_vec;
pub mod probestack;
pub mod stack_limit;
pub mod unwind;
pub mod winch;

/// The machine words of the only function of CLIF `text`, compiled with `flags` for a CPU
/// with `features` (for the tests that look for particular instructions).
#[cfg(test)]
pub(crate) fn compiled_words(
    text: &str,
    flags: &crate::settings::Flags,
    features: features::CpuFeatures,
) -> Vec<u32> {
    use crate::isa::TargetIsa;
    let f = &kestrel_ir::parse_functions(text, "f.clif").unwrap()[0];
    let code = Aarch64Isa { features }.compile_function(f, flags).unwrap();
    code.code
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

pub use lower::lowering_rules;

crate::machinst::backend::isa_description! {
    /// AArch64 as the shared target and pipeline backend see it (`machinst::backend`).
    Aarch64 {
        name: "aarch64",
        settings_name: "AArch64",
        abi: abi::A64Abi,
        disassemble: crate::disasm::disassemble_aarch64,
        elf: Aarch64 { abs64: R_AARCH64_ABS64, abs32: R_AARCH64_ABS32, pc_rel32: R_AARCH64_PREL32 },
        relocs: {
            Abs4 => R_AARCH64_ABS32,
            Abs8 => R_AARCH64_ABS64,
            Arm64Call26 => R_AARCH64_CALL26,
            Arm64AdrPage21 => R_AARCH64_ADR_PREL_PG_HI21,
            Arm64AddLo12 => R_AARCH64_ADD_ABS_LO12_NC,
            Arm64GotPage21 => R_AARCH64_ADR_GOT_PAGE,
            Arm64GotLo12 => R_AARCH64_LD64_GOT_LO12_NC,
        },
        /// The AArch64 (AAPCS64, Linux) target for a CPU with `features`.
        target: Aarch64Isa,
        /// The AArch64 pipeline backend: what selection may emit and how the frame is built.
        backend: Aarch64Backend,
    }
}
