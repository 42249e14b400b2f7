//! The AArch64 backend: AAPCS64, rule-based lowering, encoding through `asm`.
//!
//! [`Aarch64Isa`] is the [`TargetIsa`] (`isa::lookup("aarch64")`); its `compile` builds an
//! [`Aarch64Backend`] from the flags and runs the shared pipeline (`machinst::compile`) with
//! this ISA's pieces: `inst` (the
//! instruction enum and its operands), `lower.rules` + `lower` (selection), `emit`
//! (encoding, frame, edits, islands and veneers) and `abi` (calling convention and frame
//! layout). [`asm`] encodes each instruction form into 32-bit words; every form it emits is
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
pub mod probestack;
pub mod stack_limit;
pub mod unwind;
pub mod winch;

/// The machine words of the only function of CLIF `text`, compiled with `flags` for a CPU
/// with `features` (for the tests that look for particular instructions).
#[cfg(test)]
pub(crate) fn compiled_words(
    text: &str,
    flags: &Flags,
    features: features::CpuFeatures,
) -> Vec<u32> {
    let f = &kestrel_ir::parse_functions(text, "f.clif").unwrap()[0];
    let code = Aarch64Isa { features }.compile_function(f, flags).unwrap();
    code.code
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

use std::sync::Arc;

use kestrel_ir::{Function, Inst as IrInst, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, RegClass};

use crate::chaos::Chaos;
use crate::isa::{Builder, CallLocations, CompileInput, ElfTarget, IsaInfo, TargetIsa};
use crate::machinst::buffer::RelocKind;
use crate::machinst::compile::{compile_function, Backend, CompileContext, PhaseTimes};
use crate::machinst::frame::Frame;
use crate::machinst::lower::{Lower, LowerBackend};
use crate::machinst::vcode::VCode;
use crate::machinst::{BlockIndex, CodegenError, CompiledCode};
use crate::settings::Flags;
use inst::Inst;
pub use lower::lowering_rules;

/// The builder `isa::lookup("aarch64")` returns: no extensions by default (Armv8.0).
pub(crate) fn builder() -> Builder {
    Builder::new("aarch64", features::CpuFeatures::default(), |features| {
        Arc::new(Aarch64Isa { features })
    })
}

/// The AArch64 (AAPCS64, Linux) target for a CPU with `features`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Aarch64Isa {
    /// Architecture extensions the code may use.
    pub features: features::CpuFeatures,
}

/// The relocation kinds AArch64 code uses, with their ELF types.
const ELF: ElfTarget = ElfTarget {
    architecture: object::Architecture::Aarch64,
    abs64: object::elf::R_AARCH64_ABS64,
    abs32: object::elf::R_AARCH64_ABS32,
    pc_rel32: object::elf::R_AARCH64_PREL32,
    code_relocs: &[
        (RelocKind::Abs4, object::elf::R_AARCH64_ABS32),
        (RelocKind::Abs8, object::elf::R_AARCH64_ABS64),
        (RelocKind::Arm64Call26, object::elf::R_AARCH64_CALL26),
        (
            RelocKind::Arm64AdrPage21,
            object::elf::R_AARCH64_ADR_PREL_PG_HI21,
        ),
        (
            RelocKind::Arm64AddLo12,
            object::elf::R_AARCH64_ADD_ABS_LO12_NC,
        ),
        (
            RelocKind::Arm64GotPage21,
            object::elf::R_AARCH64_ADR_GOT_PAGE,
        ),
        (
            RelocKind::Arm64GotLo12,
            object::elf::R_AARCH64_LD64_GOT_LO12_NC,
        ),
    ],
};

static INFO: IsaInfo = IsaInfo {
    name: "aarch64",
    pointer_bytes: 8,
    reloc_kinds: RELOC_KINDS,
    unwind_cie: &unwind::CIE,
    elf: &ELF,
    lowering_rules,
    #[cfg(feature = "disasm")]
    disassemble: crate::disasm::disassemble_aarch64,
};

const RELOC_KINDS: &[RelocKind] = &[
    RelocKind::Abs4,
    RelocKind::Abs8,
    RelocKind::Arm64Call26,
    RelocKind::Arm64AdrPage21,
    RelocKind::Arm64AddLo12,
    RelocKind::Arm64GotPage21,
    RelocKind::Arm64GotLo12,
];

impl TargetIsa for Aarch64Isa {
    fn info(&self) -> &'static IsaInfo {
        &INFO
    }

    fn isa_flags(&self) -> Vec<(&'static str, bool)> {
        crate::isa::IsaFeatures::flag_values(&self.features)
    }

    fn compile(
        &self,
        ctx: &mut CompileContext,
        f: CompileInput<'_>,
        flags: &Flags,
        chaos: &mut Chaos,
        times: Option<&mut PhaseTimes>,
    ) -> Result<CompiledCode, CodegenError> {
        let target = Aarch64Backend {
            preserve_frame_pointers: flags.preserve_frame_pointers,
            features: self.features,
            probe_interval: flags.probe_interval("AArch64")?,
        };
        compile_function(ctx, &target, f, flags, chaos, times)
    }

    fn call_locations(&self, sig: &kestrel_ir::Signature) -> Result<CallLocations, CodegenError> {
        CallLocations::from_abi(abi::param_locs(sig)?, abi::ret_locs(sig)?)
    }
}

/// The AArch64 pipeline backend: what selection may emit and how the frame is built.
#[derive(Clone, Copy, Debug, Default)]
pub struct Aarch64Backend {
    /// Set up an x29 frame in every function (see `Flags::preserve_frame_pointers`).
    pub preserve_frame_pointers: bool,
    /// Architecture extensions selection may use.
    pub features: features::CpuFeatures,
    /// The stack probe interval in bytes (see `Flags::probestack_size_log2`).
    pub probe_interval: Option<u32>,
}

impl LowerBackend for Aarch64Backend {
    type MInst = Inst;

    fn lower_inst(&self, ctx: &mut Lower<'_, Inst>, inst: IrInst) -> Result<bool, CodegenError> {
        lower::lower_inst(ctx, inst, self.features)
    }

    fn lower_branch(
        &self,
        ctx: &mut Lower<'_, Inst>,
        inst: IrInst,
        targets: &[BlockIndex],
    ) -> Option<()> {
        lower::lower_branch(ctx, inst, targets, self.features)
    }

    fn gen_args(&self, ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
        abi::gen_args(ctx, params)
    }

    fn value_regs(&self, ty: Type) -> Option<(RegClass, usize)> {
        abi::value_regs(ty)
    }
}

impl Backend for Aarch64Backend {
    const ISA_NAME: &'static str = "aarch64";

    fn machine_env(&self) -> &MachineEnv {
        abi::machine_env()
    }

    fn compute_frame(&self, f: &Function, vcode: &VCode<Inst>, ra: &Output) -> Frame {
        abi::compute_frame(
            f,
            vcode,
            ra,
            self.preserve_frame_pointers,
            self.probe_interval,
        )
    }
}
