//! The two compilers, each from an in-memory function to final machine-code bytes, for one
//! [`Target`] (x86-64 or AArch64; the same for both compilers in a run).
//!
//! Memory: each engine compiles in a context kept across its compiles (Kestrel's
//! `CompileContext`, Cranelift's `Context`), as a client compiling many functions does;
//! with `--contexts fresh`, every compile starts from new memory on both sides.
//!
//! - Kestrel: at opt `speed`, first the mid-end (`machinst::compile::run_mid_end`, which
//!   works on a copy of the function, its verifier check off); then
//!   `machinst::compile::compile_in` with the target's backend, the
//!   register-allocation checker off and chaos disabled. This is the backend's
//!   `compile_function` minus its IR verifier call, matching Cranelift's
//!   `enable_verifier=false`; the corpus is verified once, untimed, before measuring.
//!   MachBuffer validators only run in debug builds. The timing loop compiles with
//!   `compile_in_place`, whose result stays in the context (the next compile writes into
//!   its vectors), as Cranelift's `Context::compile` leaves its result in its context; the
//!   loop keeps the code size.
//! - Cranelift 0.135.8: the target's ISA from `isa::lookup` (`x86_64-unknown-linux-gnu` or
//!   `aarch64-unknown-linux-gnu`, default ISA flags), `opt_level` `none` or `speed` as
//!   Kestrel's,
//!   `enable_verifier=false`, default register allocator; `Context::compile`, then the bytes
//!   of its compiled code. The two ABI flags Kestrel's test files set
//!   (`enable_multi_ret_implicit_sret`, `enable_llvm_abi_extensions`) are set too, so that
//!   multi-result and `i128` signatures are accepted; they do not change the pipeline.

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::aarch64::Aarch64Backend;
pub use kestrel_codegen::isa::x64::OptLevel;
use kestrel_codegen::isa::x64::X64Backend;
use kestrel_codegen::machinst::compile::{
    compile_in, compile_in_place, run_mid_end, CompileContext, CompileOptions, PhaseTimes,
};
use kestrel_codegen::machinst::{CodegenError, CompiledCode};

/// The machine both compilers generate code for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    X64,
    Aarch64,
}

impl Target {
    /// `x86_64` or `aarch64`, as `--target` names it.
    pub fn parse(name: &str) -> Result<Target, String> {
        match name {
            "x86_64" => Ok(Target::X64),
            "aarch64" => Ok(Target::Aarch64),
            other => Err(format!("unknown target {other} (x86_64 or aarch64)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Target::X64 => "x86_64",
            Target::Aarch64 => "aarch64",
        }
    }
}

/// Compile with Kestrel at `level` for `target` in `ctx`; `times` (when given) accumulates
/// the per-phase times.
pub fn kestrel(
    ctx: &mut CompileContext,
    f: &kestrel_ir::Function,
    target: Target,
    level: OptLevel,
    mut times: Option<&mut PhaseTimes>,
) -> Result<CompiledCode, CodegenError> {
    let start = times.is_some().then(std::time::Instant::now);
    let f = run_mid_end(ctx, f, level, false)?;
    if let (Some(t), Some(start)) = (times.as_deref_mut(), start) {
        t.mid_end += start.elapsed();
    }
    let options = kestrel_options(level);
    let chaos = &mut Chaos::disabled();
    let compiled = match target {
        Target::X64 => compile_in(ctx, &X64Backend, &f, options, chaos, times),
        Target::Aarch64 => compile_in(ctx, &Aarch64Backend::default(), &f, options, chaos, times),
    };
    ctx.give_back(f);
    compiled
}

/// [`kestrel`] with the result left in `ctx` (`compile_in_place`): the size of the code.
pub fn kestrel_in_place(
    ctx: &mut CompileContext,
    f: &kestrel_ir::Function,
    target: Target,
    level: OptLevel,
) -> Result<usize, CodegenError> {
    let f = run_mid_end(ctx, f, level, false)?;
    let options = kestrel_options(level);
    let chaos = &mut Chaos::disabled();
    let size = match target {
        Target::X64 => compile_in_place(ctx, &X64Backend, &f, options, chaos, None),
        Target::Aarch64 => {
            compile_in_place(ctx, &Aarch64Backend::default(), &f, options, chaos, None)
        }
    }
    .map(|code| code.code.len());
    ctx.give_back(f);
    size
}

/// Kestrel's options at `level`: checker off, no printed text.
fn kestrel_options(level: OptLevel) -> CompileOptions {
    CompileOptions {
        check_regalloc: false,
        keep_text: false,
        lower_for_speed: level == OptLevel::Speed,
        ..CompileOptions::default()
    }
}

/// The Cranelift target, configured once.
pub struct Cranelift {
    isa: OwnedTargetIsa,
    target: Target,
    level: OptLevel,
}

impl Cranelift {
    /// Cranelift for the host (x86-64), opt level none.
    pub fn new() -> Result<Cranelift, String> {
        Cranelift::for_target(Target::X64, OptLevel::None)
    }

    pub fn for_target(target: Target, level: OptLevel) -> Result<Cranelift, String> {
        let mut flags = settings::builder();
        for (name, value) in [
            ("opt_level", level.name()),
            ("enable_verifier", "false"),
            ("enable_multi_ret_implicit_sret", "true"),
            ("enable_llvm_abi_extensions", "true"),
        ] {
            flags
                .set(name, value)
                .map_err(|e| format!("cranelift setting {name}={value}: {e}"))?;
        }
        let triple: target_lexicon::Triple = match target {
            Target::X64 => "x86_64-unknown-linux-gnu",
            Target::Aarch64 => "aarch64-unknown-linux-gnu",
        }
        .parse()
        .map_err(|e| format!("target triple: {e}"))?;
        let isa = cranelift_codegen::isa::lookup(triple)
            .map_err(|e| format!("cranelift ISA lookup: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("cranelift ISA: {e}"))?;
        Ok(Cranelift { isa, target, level })
    }

    /// The target both compilers generate code for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The opt level both compilers compile at.
    pub fn level(&self) -> OptLevel {
        self.level
    }

    /// A fresh context holding a copy of `f` (preparation, not timed).
    pub fn context(f: &cranelift_codegen::ir::Function) -> Context {
        Context::for_function(f.clone())
    }

    /// Compile `f` in `ctx`, a context kept across compiles: `f` is swapped in (the
    /// function compiled before comes back in `f`) and the analyses are cleared, as a
    /// client reusing one context does; the compiled code is taken out. Dropping both is
    /// left to the caller, outside the clock.
    pub fn compile_reusing(
        &self,
        ctx: &mut Context,
        f: &mut cranelift_codegen::ir::Function,
    ) -> Result<Option<cranelift_codegen::CompiledCode>, String> {
        std::mem::swap(&mut ctx.func, f);
        ctx.cfg.clear();
        ctx.domtree.clear();
        ctx.loop_analysis.clear();
        ctx.compile(&*self.isa, &mut ControlPlane::default())
            .map_err(|e| format!("{:?}", e.inner))?;
        Ok(ctx.take_compiled_code())
    }

    /// Compile the function in `ctx`; the size of its machine code.
    pub fn compile(&self, ctx: &mut Context) -> Result<usize, String> {
        let code = ctx
            .compile(&*self.isa, &mut ControlPlane::default())
            .map_err(|e| format!("{:?}", e.inner))?;
        Ok(code.code_buffer().len())
    }
}
