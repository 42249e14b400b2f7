//! The AArch64 backend: AAPCS64, rule-based lowering, encoding through `asm`.
//!
//! [`Aarch64Backend::compile_function`] is the entry point; it verifies the function and
//! runs the shared pipeline (`machinst::compile`) with this ISA's pieces: `inst` (the
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

/// The machine words of the only function of CLIF `text`, compiled with `flags` (for the
/// tests that look for particular instructions).
#[cfg(test)]
pub(crate) fn compiled_words(text: &str, flags: &Flags) -> Vec<u32> {
    let f = &kestrel_ir::parse_functions(text, "f.clif").unwrap()[0];
    let code = Aarch64Backend::default()
        .compile_function(f, flags)
        .unwrap();
    code.code
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

use kestrel_ir::{Function, Inst as IrInst, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, RegClass};

use crate::chaos::Chaos;
use crate::machinst::compile::{
    compile_in, in_place, verify_and_optimize, Backend, CompileContext, CompileOptions, PhaseTimes,
};
use crate::machinst::frame::Frame;
use crate::machinst::lower::{Lower, LowerBackend};
use crate::machinst::vcode::VCode;
use crate::machinst::{BlockIndex, CodegenError, CompiledCode};
use inst::Inst;
pub use lower::lowering_rules;

/// Compilation settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags {
    /// Run the register-allocation checker on every compile.
    pub check_regalloc: bool,
    /// Keep the printed VCode (before and after allocation) in the result.
    pub keep_text: bool,
    /// Run the `MachBuffer` invariant validator on every compile (costs compile time).
    pub validate: bool,
    /// Report the lowering rules that fired in `CompiledCode::rules_fired` (indices into
    /// [`lowering_rules`]).
    pub coverage: bool,
    /// Give every function an x29 frame, even a leaf that needs none (CLIF
    /// `preserve_frame_pointers`).
    pub preserve_frame_pointers: bool,
    /// The caller has run the IR verifier on the function already: skip it.
    pub verified: bool,
    /// How much the mid-end optimizes before lowering.
    pub opt_level: kestrel_opt::OptLevel,
    /// Architecture extensions the code may use (default: none, Armv8.0).
    pub features: features::CpuFeatures,
    /// Inline stack probes every `2^n` bytes for frames at least that large (CLIF
    /// `enable_probestack` with `probestack_size_log2 = n`; see `probestack.rs`); `None`:
    /// no probes.
    pub probestack_size_log2: Option<u8>,
}

/// The settings x86-64's flags share with AArch64 (its x86-64 CPU features mean nothing
/// here; its `aarch64_features` are this backend's), so that one set of flags can drive
/// either backend.
impl From<&crate::isa::x64::Flags> for Flags {
    fn from(f: &crate::isa::x64::Flags) -> Flags {
        Flags {
            check_regalloc: f.check_regalloc,
            keep_text: f.keep_text,
            validate: f.validate,
            coverage: f.coverage,
            preserve_frame_pointers: f.preserve_frame_pointers,
            verified: f.verified,
            opt_level: f.opt_level,
            features: f.aarch64_features,
            probestack_size_log2: f.probestack_size_log2,
        }
    }
}

/// The AArch64 (AAPCS64, Linux) backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Aarch64Backend {
    /// Set up an x29 frame in every function (see [`Flags::preserve_frame_pointers`]).
    pub preserve_frame_pointers: bool,
    /// Architecture extensions selection may use (see [`Flags::features`]).
    pub features: features::CpuFeatures,
    /// The stack probe interval in bytes (see [`Flags::probestack_size_log2`]).
    pub probe_interval: Option<u32>,
}

impl Aarch64Backend {
    /// Compile `f` to AArch64 machine code.
    pub fn compile_function(
        &self,
        f: &Function,
        flags: &Flags,
    ) -> Result<CompiledCode, CodegenError> {
        self.compile_function_with_chaos(f, flags, &mut Chaos::disabled())
    }

    /// [`Self::compile_function`] in `ctx`'s memory: for a client compiling many
    /// functions, which keeps one context per thread (the code is the same either way).
    pub fn compile_function_in(
        &self,
        ctx: &mut CompileContext,
        f: &Function,
        flags: &Flags,
    ) -> Result<CompiledCode, CodegenError> {
        self.compile_function_inner(ctx, f, flags, &mut Chaos::disabled(), None)
    }

    /// [`Self::compile_function_in`], the result kept in `ctx` as
    /// [`compile_in_place`](crate::machinst::compile::compile_in_place) keeps it.
    pub fn compile_function_in_place<'c>(
        &self,
        ctx: &'c mut CompileContext,
        f: &Function,
        flags: &Flags,
    ) -> Result<&'c CompiledCode, CodegenError> {
        in_place(ctx, |ctx| {
            self.compile_function_inner(ctx, f, flags, &mut Chaos::disabled(), None)
        })
    }

    /// Compile `f`, asking `chaos` before each optional optimization.
    pub fn compile_function_with_chaos(
        &self,
        f: &Function,
        flags: &Flags,
        chaos: &mut Chaos,
    ) -> Result<CompiledCode, CodegenError> {
        self.compile_function_inner(&mut CompileContext::new(), f, flags, chaos, None)
    }

    /// [`Self::compile_function_in_place`], adding each phase's wall-clock time
    /// (verification included) and the peak live vreg count to `times`.
    pub fn compile_function_timed<'c>(
        &self,
        ctx: &'c mut CompileContext,
        f: &Function,
        flags: &Flags,
        times: &mut PhaseTimes,
    ) -> Result<&'c CompiledCode, CodegenError> {
        in_place(ctx, |ctx| {
            self.compile_function_inner(ctx, f, flags, &mut Chaos::disabled(), Some(times))
        })
    }

    fn compile_function_inner(
        &self,
        ctx: &mut CompileContext,
        f: &Function,
        flags: &Flags,
        chaos: &mut Chaos,
        mut times: Option<&mut PhaseTimes>,
    ) -> Result<CompiledCode, CodegenError> {
        let probe_interval = match flags.probestack_size_log2 {
            None => None,
            Some(n) if (4..=23).contains(&n) => Some(1u32 << n),
            Some(n) => {
                return Err(CodegenError::unsupported(format!(
                    "probestack_size_log2={n}: AArch64 probes every 2^4 to 2^23 bytes"
                )))
            }
        };
        let check = flags.check_regalloc;
        let timed = times.as_deref_mut();
        let f = verify_and_optimize(ctx, f, flags.verified, flags.opt_level, check, timed)?;
        let options = CompileOptions {
            check_regalloc: flags.check_regalloc,
            keep_text: flags.keep_text,
            validate_buffer: flags.validate,
            coverage: flags.coverage,
            lower_for_speed: flags.opt_level == kestrel_opt::OptLevel::Speed,
        };
        let target = Aarch64Backend {
            preserve_frame_pointers: flags.preserve_frame_pointers || self.preserve_frame_pointers,
            features: flags.features,
            probe_interval,
        };
        let compiled = compile_in(ctx, &target, &f, options, chaos, times);
        ctx.give_back(f);
        compiled
    }
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
