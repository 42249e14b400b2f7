//! The x86-64 backend: System V ABI, rule-based lowering, encoding through `asm`.
//!
//! [`X64Isa`] is the [`TargetIsa`] (`isa::lookup("x86_64")`); its `compile` builds an
//! [`X64Target`] from the flags and runs the shared pipeline (`machinst::compile`) with this
//! ISA's pieces: `inst` (the
//! instruction enum and its operands), `lower.rules` + `lower` (selection), `emit`
//! (encoding, frame, edits) and `abi` (calling convention and frame layout).
//!
//! The pipeline runs on an [`X64Target`], the backend for one set of [`features`] (the
//! `X64Isa`'s): selection consults them to pick an instruction or its baseline fallback.
//! `X64Backend` used directly as a pipeline backend stands for the host's target.

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

/// The builder `isa::lookup("x86_64")` returns: the host's features by default.
pub(crate) fn builder() -> Builder {
    Builder::new("x86_64", features::CpuFeatures::default(), |features| {
        Arc::new(X64Isa { features })
    })
}

/// The x86-64 (System V) target for a CPU with `features`.
#[derive(Clone, Copy, Debug, Default)]
pub struct X64Isa {
    /// Instruction-set extensions the code may use.
    pub features: features::CpuFeatures,
}

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

impl TargetIsa for X64Isa {
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
        let target = X64Target {
            features: self.features,
            preserve_frame_pointers: flags.preserve_frame_pointers,
            probe_interval: flags.probe_interval("x86-64")?,
        };
        compile_function(ctx, &target, f, flags, chaos, times)
    }

    fn call_locations(&self, sig: &kestrel_ir::Signature) -> Result<CallLocations, CodegenError> {
        CallLocations::from_abi(abi::param_locs(sig)?, abi::ret_locs(sig)?)
    }
}

/// The x86-64 pipeline backend for the host's features and default settings (for callers
/// that drive `machinst::compile` themselves; [`X64Isa`] is the target consumers hold).
#[derive(Clone, Copy, Debug, Default)]
pub struct X64Backend;

/// The x86-64 backend for a CPU with `features`: what selection may emit.
#[derive(Clone, Copy, Debug, Default)]
pub struct X64Target {
    pub features: features::CpuFeatures,
    /// Set up an `rbp` frame in every function (see `Flags::preserve_frame_pointers`).
    pub preserve_frame_pointers: bool,
    /// The stack probe interval in bytes (see `Flags::probestack_size_log2`).
    pub probe_interval: Option<u32>,
}

impl LowerBackend for X64Target {
    type MInst = Inst;

    fn lower_inst(&self, ctx: &mut Lower<'_, Inst>, inst: IrInst) -> Result<bool, CodegenError> {
        lower::lower_inst(ctx, inst, &self.features)
    }

    fn lower_branch(
        &self,
        ctx: &mut Lower<'_, Inst>,
        inst: IrInst,
        targets: &[BlockIndex],
    ) -> Option<()> {
        lower::lower_branch(ctx, inst, targets, &self.features)
    }

    fn gen_args(&self, ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
        abi::gen_args(ctx, params)
    }

    fn value_regs(&self, ty: Type) -> Option<(RegClass, usize)> {
        abi::value_regs(ty)
    }
}

impl Backend for X64Target {
    const ISA_NAME: &'static str = "x86_64";

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

/// The host's target (for callers that drive the pipeline themselves).
impl LowerBackend for X64Backend {
    type MInst = Inst;

    fn lower_inst(&self, ctx: &mut Lower<'_, Inst>, inst: IrInst) -> Result<bool, CodegenError> {
        X64Target::default().lower_inst(ctx, inst)
    }

    fn lower_branch(
        &self,
        ctx: &mut Lower<'_, Inst>,
        inst: IrInst,
        targets: &[BlockIndex],
    ) -> Option<()> {
        X64Target::default().lower_branch(ctx, inst, targets)
    }

    fn gen_args(&self, ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
        abi::gen_args(ctx, params)
    }

    fn value_regs(&self, ty: Type) -> Option<(RegClass, usize)> {
        abi::value_regs(ty)
    }
}

impl Backend for X64Backend {
    const ISA_NAME: &'static str = "x86_64";

    fn machine_env(&self) -> &MachineEnv {
        abi::machine_env()
    }

    fn compute_frame(&self, f: &Function, vcode: &VCode<Inst>, ra: &Output) -> Frame {
        abi::compute_frame(f, vcode, ra, false, None)
    }
}
