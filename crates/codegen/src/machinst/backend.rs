//! One ISA's [`TargetIsa`] and pipeline backend, written once for every ISA.
//!
//! # Contract
//!
//! An ISA describes itself by implementing [`Isa`] on a marker type: its facts
//! ([`IsaInfo`]), its typed feature set, its calling conventions ([`Abi`]), its register
//! environment and the entry points of its selection rules ([`isa_description`], the
//! ISA's one declaration, writes the marker, its `IsaInfo` and that impl from the ISA's
//! data and the items every ISA module has). From that description alone it gets:
//! - [`builder`], its `isa::lookup` entry (the features' default set, set by name);
//! - [`IsaTarget`], its [`TargetIsa`] for one set of features (what the builder finishes
//!   into): `compile` builds the [`PipelineBackend`] from the shared [`Flags`] and runs the
//!   shared driver ([`compile_function`]); `call_locations` places a signature by the ISA's
//!   `Abi`; `isa_flags` lists the feature table;
//! - [`PipelineBackend`], the [`LowerBackend`] and [`Backend`] the driver runs on: selection
//!   by the rules with the target's features ([`select_inst`], [`select_branch`]), the
//!   shared argument sequence ([`abi::gen_args`]) and value layout, the ISA's register environment, and the shared frame layout
//!   ([`frame::compute_frame`]) with the target's frame-pointer and probe settings.
//!
//! Requires: the ISA's `Abi` is over its machine instruction, whose frame is the shared
//! [`Frame`]. Guarantees: a bad probe interval is a [`CodegenError`] naming the ISA
//! ([`Flags::probe_interval`]), before any work.
//!
//! Cost: nothing of its own. Everything here is generic over the ISA and monomorphised:
//! the one dynamic dispatch is `TargetIsa::compile`'s, once per function.

use std::fmt::Debug;
use std::sync::Arc;

use kestrel_ir::{Function, Inst as IrInst, Signature, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, PReg, RegClass};

use super::abi::{self, Abi};
use super::compile::{compile_function, Backend, CompileContext, PhaseTimes, ValueTypes};
use super::frame::{self, Frame, FrameOptions};
use super::isel::{select_branch, select_inst, IselCtx, Out};
use super::lower::{Lower, LowerBackend};
use super::vcode::VCode;
use super::{BlockIndex, CodegenError, CompiledCode, MachInst};
use crate::chaos::Chaos;
use crate::isa::{Builder, CallLocations, CompileInput, IsaFeatures, IsaInfo, TargetIsa};
use crate::settings::Flags;

/// What an ISA provides to become a target (see the module contract). Every ISA module
/// implements it with [`isa_description`].
pub trait Isa: Copy + Debug + Default + Send + Sync + 'static {
    /// The typed feature set (`isa/<name>/features.rs`).
    type Features: IsaFeatures + Default;
    /// The machine instruction.
    type Inst: MachInst<Frame = Frame>;
    /// The calling conventions, building `Self::Inst`.
    type Abi: Abi<Inst = Self::Inst>;
    /// The facts the features do not change.
    const INFO: &'static IsaInfo;
    /// The ISA's name in a settings error (`x86-64`, `AArch64`).
    const SETTINGS_NAME: &'static str;

    /// The registers the allocator may use.
    fn machine_env() -> &'static MachineEnv;

    /// The register `get_pinned_reg`/`set_pinned_reg` read and write (`enable_pinned_reg`).
    const PINNED_REG: PReg;

    /// [`Isa::machine_env`] less [`Isa::PINNED_REG`].
    fn machine_env_pinned() -> &'static MachineEnv;

    /// The rules' selector of a non-branch instruction (the generated `constructor_lower`).
    fn select(ctx: &mut SelectCtx<'_, '_, Self>, inst: IrInst) -> Option<Out>;

    /// The rules' selector of a block terminator (the generated `constructor_lower_branch`).
    fn select_branch(ctx: &mut SelectCtx<'_, '_, Self>, inst: IrInst) -> Option<Out>;
}

/// The selection context of ISA `I`'s rules.
pub type SelectCtx<'a, 'f, I> = IselCtx<'a, 'f, <I as Isa>::Inst, <I as Isa>::Features>;

/// Declares an ISA from its data, once: the marker type `$isa` (with `$doc`), its
/// [`IsaInfo`] (`name`, 8-byte pointers, the unwind CIE `unwind::CIE`, the lowering rules
/// `lower::lowering_rules`, the disassembler `$disassemble`, and its ELF description: the
/// architecture, the `abs64`/`abs32`/`pc_rel32` relocation types and one `kind => type` line
/// per relocation kind its code uses, which is also the list `IsaInfo::reloc_kinds`), its
/// [`Isa`] impl, and the aliases `$target` ([`IsaTarget`]) and `$backend`
/// ([`PipelineBackend`]). The impl names the ISA module's items by their place there:
/// `features::CpuFeatures`, `inst::Inst`, `abi::machine_env` and the generated rules' entry
/// points `lower::generated::{constructor_lower, constructor_lower_branch}`; `abi` is its
/// [`Abi`] and `settings_name` its name in a settings error. Expanded in `isa/<name>/mod.rs`.
macro_rules! isa_description {
    (
        $(#[$doc:meta])*
        $isa:ident {
            name: $name:literal,
            settings_name: $settings_name:literal,
            abi: $abi:ty,
            disassemble: $disassemble:path,
            elf: $arch:ident { abs64: $abs64:ident, abs32: $abs32:ident, pc_rel32: $pc_rel32:ident },
            relocs: { $($kind:ident => $elf_type:ident),* $(,)? },
            $(#[$target_doc:meta])*
            target: $target:ident,
            $(#[$backend_doc:meta])*
            backend: $backend:ident $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $isa;

        $(#[$target_doc])*
        pub type $target = $crate::machinst::backend::IsaTarget<$isa>;

        $(#[$backend_doc])*
        pub type $backend = $crate::machinst::backend::PipelineBackend<$isa>;

        static INFO: $crate::isa::IsaInfo = $crate::isa::IsaInfo {
            name: $name,
            pointer_bytes: 8,
            reloc_kinds: &[$($crate::machinst::buffer::RelocKind::$kind),*],
            unwind_cie: &unwind::CIE,
            elf: &$crate::isa::ElfTarget {
                architecture: ::object::Architecture::$arch,
                abs64: ::object::elf::$abs64,
                abs32: ::object::elf::$abs32,
                pc_rel32: ::object::elf::$pc_rel32,
                code_relocs: &[$(($crate::machinst::buffer::RelocKind::$kind, ::object::elf::$elf_type)),*],
            },
            lowering_rules: lower::lowering_rules,
            #[cfg(feature = "disasm")]
            disassemble: $disassemble,
        };

        impl $crate::machinst::backend::Isa for $isa {
            type Features = features::CpuFeatures;
            type Inst = inst::Inst;
            type Abi = $abi;
            const INFO: &'static $crate::isa::IsaInfo = &INFO;
            const SETTINGS_NAME: &'static str = $settings_name;

            fn machine_env() -> &'static ::kestrel_regalloc::MachineEnv {
                abi::machine_env()
            }

            const PINNED_REG: ::kestrel_regalloc::PReg = abi::PINNED_REG;

            fn machine_env_pinned() -> &'static ::kestrel_regalloc::MachineEnv {
                static ENV: ::std::sync::OnceLock<::kestrel_regalloc::MachineEnv> =
                    ::std::sync::OnceLock::new();
                ENV.get_or_init(|| abi::machine_env().without(abi::PINNED_REG))
            }

            fn select(
                ctx: &mut $crate::machinst::backend::SelectCtx<'_, '_, Self>,
                inst: ::kestrel_ir::Inst,
            ) -> Option<$crate::machinst::isel::Out> {
                lower::generated::constructor_lower(ctx, inst)
            }

            fn select_branch(
                ctx: &mut $crate::machinst::backend::SelectCtx<'_, '_, Self>,
                inst: ::kestrel_ir::Inst,
            ) -> Option<$crate::machinst::isel::Out> {
                lower::generated::constructor_lower_branch(ctx, inst)
            }
        }
    };
}
pub(crate) use isa_description;

/// The builder of ISA `I` with its features' default set (each ISA's line in `isa::ISAS`).
pub(crate) fn builder<I: Isa>() -> Builder {
    Builder::new(I::INFO.name, I::Features::default(), |features| {
        Arc::new(IsaTarget::<I> { features })
    })
}

/// ISA `I`'s target for a CPU with `features`.
#[derive(Clone, Copy, Debug, Default)]
pub struct IsaTarget<I: Isa> {
    /// The extensions the code may use.
    pub features: I::Features,
}

impl<I: Isa> TargetIsa for IsaTarget<I> {
    fn info(&self) -> &'static IsaInfo {
        I::INFO
    }

    fn isa_flags(&self) -> Vec<(&'static str, bool)> {
        self.features.flag_values()
    }

    fn compile(
        &self,
        ctx: &mut CompileContext,
        f: CompileInput<'_>,
        flags: &Flags,
        chaos: &mut Chaos,
        times: Option<&mut PhaseTimes>,
    ) -> Result<CompiledCode, CodegenError> {
        let backend = PipelineBackend::<I>::new(self.features, flags)?;
        compile_function(ctx, &backend, f, flags, chaos, times)
    }

    fn call_locations(&self, sig: &Signature) -> Result<CallLocations, CodegenError> {
        CallLocations::from_abi(
            abi::param_locs::<I::Abi>(sig)?,
            abi::ret_locs::<I::Abi>(sig)?,
        )
    }
}

/// ISA `I`'s backend for the pipeline: what selection may emit and how the frame is built.
/// The default is the base settings with the features' default set.
#[derive(Clone, Copy, Debug, Default)]
pub struct PipelineBackend<I: Isa> {
    /// The extensions selection may use.
    pub features: I::Features,
    /// Set up a frame-pointer frame in every function (see `Flags::preserve_frame_pointers`).
    pub preserve_frame_pointers: bool,
    /// The stack probe interval in bytes (see `Flags::probestack_size_log2`).
    pub probe_interval: Option<u32>,
    /// Keep `I::PINNED_REG` out of allocation and saves (see `Flags::enable_pinned_reg`).
    pub pinned_reg: bool,
}

impl<I: Isa> PipelineBackend<I> {
    /// The backend for `features` under `flags`; an error for a probe interval the ISA
    /// cannot use.
    pub fn new(features: I::Features, flags: &Flags) -> Result<Self, CodegenError> {
        Ok(PipelineBackend {
            features,
            preserve_frame_pointers: flags.preserve_frame_pointers,
            probe_interval: flags.probe_interval(I::SETTINGS_NAME)?,
            pinned_reg: flags.enable_pinned_reg,
        })
    }
}

impl<I: Isa> LowerBackend for PipelineBackend<I> {
    type MInst = I::Inst;

    fn lower_inst(&self, ctx: &mut Lower<'_, I::Inst>, inst: IrInst) -> Result<bool, CodegenError> {
        select_inst(ctx, inst, self.features, I::select)
    }

    fn lower_branch(
        &self,
        ctx: &mut Lower<'_, I::Inst>,
        inst: IrInst,
        targets: &[BlockIndex],
    ) -> Result<Option<()>, CodegenError> {
        select_branch(ctx, inst, targets, self.features, I::select_branch)
    }

    fn gen_args(&self, ctx: &mut Lower<'_, I::Inst>, params: &[Value]) -> Result<(), CodegenError> {
        abi::gen_args::<I::Abi>(ctx, params)
    }

    fn value_regs(&self, ty: Type) -> Option<(RegClass, usize)> {
        <I::Abi as Abi>::value_regs(ty)
    }
}

impl<I: Isa> Backend for PipelineBackend<I> {
    const ISA_NAME: &'static str = I::INFO.name;

    fn machine_env(&self) -> &MachineEnv {
        if self.pinned_reg {
            I::machine_env_pinned()
        } else {
            I::machine_env()
        }
    }

    fn compute_frame(
        &self,
        f: &Function,
        vcode: &VCode<I::Inst>,
        ra: &Output,
        types: ValueTypes,
    ) -> Frame {
        let options = FrameOptions {
            preserve_frame_pointers: self.preserve_frame_pointers,
            probe_interval: self.probe_interval,
            vector_spill_slots: types.has_vectors,
            pinned_reg: self.pinned_reg.then_some(I::PINNED_REG),
        };
        frame::compute_frame::<I::Abi>(f, vcode, ra, options)
    }
}
