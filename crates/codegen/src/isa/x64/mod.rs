//! The x86-64 backend: System V ABI, rule-based lowering, encoding through `asm`.
//!
//! [`X64Backend::compile_function`] is the entry point; it verifies the function and runs
//! the shared pipeline (`machinst::compile`) with this ISA's pieces: `inst` (the
//! instruction enum and its operands), `lower.rules` + `lower` (selection), `emit`
//! (encoding, frame, edits) and `abi` (calling convention and frame layout).
//!
//! The pipeline runs on an [`X64Target`], the backend for one set of [`features`]
//! (`Flags.features`): selection consults them to pick an instruction or its baseline
//! fallback. `X64Backend` used directly as a pipeline backend stands for the host's target.

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

use kestrel_ir::{Function, Inst as IrInst, Type, Value};
use kestrel_regalloc::{MachineEnv, Output, RegClass};

use crate::chaos::Chaos;
use crate::machinst::compile::{compile_in, Backend, CompileContext, CompileOptions, PhaseTimes};
use crate::machinst::compile::{in_place, verify_and_optimize, verify_and_optimize_in_place};
use crate::machinst::frame::Frame;
use crate::machinst::lower::{Lower, LowerBackend};
use crate::machinst::vcode::VCode;
use crate::machinst::{BlockIndex, CodegenError, CompiledCode};
use inst::Inst;
pub use kestrel_opt::OptLevel;
pub use lower::lowering_rules;

/// Compilation settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags {
    /// Run the register-allocation checker on every compile.
    pub check_regalloc: bool,
    /// Keep the printed VCode (before and after allocation) in the result.
    pub keep_text: bool,
    /// Instruction-set extensions the code may use (default: the host's).
    pub features: features::CpuFeatures,
    /// Run the `MachBuffer` invariant validator on every compile, even in release builds;
    /// a violation is a `CodegenError::Buffer` (costs compile time: off by default).
    pub validate: bool,
    /// Report the lowering rules that fired in `CompiledCode::rules_fired` (indices into
    /// [`lowering_rules`]).
    pub coverage: bool,
    /// Give every function an `rbp` frame, even a leaf that needs none, so stack walkers
    /// (profilers, debuggers) can follow the frame chain (CLIF `preserve_frame_pointers`).
    pub preserve_frame_pointers: bool,
    /// The caller has run the IR verifier on the function already (a test harness that
    /// verifies before interpreting, for instance): skip it, so each compile verifies once.
    /// A function that does not verify must never be compiled with this set.
    pub verified: bool,
    /// How much the mid-end optimizes before lowering (`none` by default: the function is
    /// lowered as given).
    pub opt_level: OptLevel,
    /// The AArch64 extensions the code may use when these flags drive the AArch64 backend
    /// (x86-64 ignores them; default: none, Armv8.0).
    pub aarch64_features: crate::isa::aarch64::features::CpuFeatures,
    /// Inline stack probes every `2^n` bytes, `n` from 4 to 23 (CLIF `enable_probestack`,
    /// `probestack_size_log2`; see `probestack.rs` of each ISA); `None`: no probes.
    pub probestack_size_log2: Option<u8>,
}

/// The x86-64 (System V) backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct X64Backend;

impl X64Backend {
    /// Compile `f` to machine code.
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

    /// [`Self::compile_function_in`] with the result left in `ctx` until the next compile in
    /// place, which writes its code and metadata into the same vectors: for a client that
    /// reads (copies out) each result before compiling the next, so that compiling many
    /// functions allocates nothing for results once they have grown.
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

    /// [`Self::compile_function_in`] for a caller that no longer needs `f` as it was (a
    /// front end that built it for this compile): the mid-end optimizes `f` itself instead
    /// of a copy. The code is the same; `f` is left optimized (with the dead instructions it
    /// removed possibly still tombstones in its layout: compact it before reading it as
    /// compact). `times`, when given, gets each
    /// phase's time as in [`Self::compile_function_timed`].
    pub fn compile_function_consuming_in(
        &self,
        ctx: &mut CompileContext,
        f: &mut Function,
        flags: &Flags,
        mut times: Option<&mut PhaseTimes>,
    ) -> Result<CompiledCode, CodegenError> {
        let timed = times.as_deref_mut();
        verify_and_optimize_in_place(
            ctx,
            f,
            flags.verified,
            flags.opt_level,
            flags.check_regalloc,
            timed,
        )?;
        let target = self.target(flags)?;
        let chaos = &mut Chaos::disabled();
        compile_in(ctx, &target, f, self.options(flags), chaos, times)
    }

    fn options(&self, flags: &Flags) -> CompileOptions {
        CompileOptions {
            check_regalloc: flags.check_regalloc,
            keep_text: flags.keep_text,
            validate_buffer: flags.validate,
            coverage: flags.coverage,
            lower_for_speed: flags.opt_level == OptLevel::Speed,
        }
    }

    fn target(&self, flags: &Flags) -> Result<X64Target, CodegenError> {
        Ok(X64Target {
            features: flags.features,
            preserve_frame_pointers: flags.preserve_frame_pointers,
            probe_interval: probe_interval(flags.probestack_size_log2)?,
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
        let (target, options) = (self.target(flags)?, self.options(flags));
        let check = flags.check_regalloc;
        let timed = times.as_deref_mut();
        let f = verify_and_optimize(ctx, f, flags.verified, flags.opt_level, check, timed)?;
        let compiled = compile_in(ctx, &target, &f, options, chaos, times);
        ctx.give_back(f);
        compiled
    }
}

/// The x86-64 backend for a CPU with `features`: what selection may emit.
#[derive(Clone, Copy, Debug, Default)]
pub struct X64Target {
    pub features: features::CpuFeatures,
    /// Set up an `rbp` frame in every function (see [`Flags::preserve_frame_pointers`]).
    pub preserve_frame_pointers: bool,
    /// The stack probe interval in bytes (see [`Flags::probestack_size_log2`]).
    pub probe_interval: Option<u32>,
}

/// The probe interval `2^n` for `probestack_size_log2 = n`, or an error naming the setting
/// when `n` is out of `probestack.rs`'s range.
fn probe_interval(log2: Option<u8>) -> Result<Option<u32>, CodegenError> {
    match log2 {
        None => Ok(None),
        Some(n) if (4..=23).contains(&n) => Ok(Some(1u32 << n)),
        Some(n) => Err(CodegenError::unsupported(format!(
            "probestack_size_log2={n}: x86-64 probes every 2^4 to 2^23 bytes"
        ))),
    }
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
    fn machine_env(&self) -> &MachineEnv {
        abi::machine_env()
    }

    fn compute_frame(&self, f: &Function, vcode: &VCode<Inst>, ra: &Output) -> Frame {
        abi::compute_frame(f, vcode, ra, false, None)
    }
}
