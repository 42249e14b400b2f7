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

use std::sync::{Arc, OnceLock};

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::{CompileInput, TargetIsa};
use kestrel_codegen::machinst::compile::{CompileContext, PhaseTimes};
use kestrel_codegen::machinst::{CodegenError, CompiledCode};
use kestrel_codegen::settings::Flags;
pub use kestrel_codegen::settings::OptLevel;

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

    /// Kestrel's target of this name (default features: the host's on x86-64, the base ISA
    /// on AArch64), made once per process.
    pub fn kestrel_isa(self) -> &'static dyn TargetIsa {
        static ISAS: [OnceLock<Arc<dyn TargetIsa>>; 2] = [OnceLock::new(), OnceLock::new()];
        let slot = &ISAS[self as usize];
        &**slot.get_or_init(|| {
            let builder = kestrel_codegen::isa::lookup(self.name());
            builder.expect("a Kestrel ISA").finish()
        })
    }
}

/// Compile with Kestrel at `level` for `target` in `ctx`; `times` (when given) accumulates
/// the per-phase times.
pub fn kestrel(
    ctx: &mut CompileContext,
    f: &kestrel_ir::Function,
    target: Target,
    level: OptLevel,
    times: Option<&mut PhaseTimes>,
) -> Result<CompiledCode, CodegenError> {
    let chaos = &mut Chaos::disabled();
    let input = CompileInput::Borrowed(f);
    let flags = kestrel_flags(level);
    target
        .kestrel_isa()
        .compile(ctx, input, &flags, chaos, times)
}

/// [`kestrel`] with the result left in `ctx` (`compile_in_place`): the size of the code.
pub fn kestrel_in_place(
    ctx: &mut CompileContext,
    f: &kestrel_ir::Function,
    target: Target,
    level: OptLevel,
) -> Result<usize, CodegenError> {
    let flags = kestrel_flags(level);
    let code = target
        .kestrel_isa()
        .compile_function_in_place(ctx, f, &flags);
    code.map(|code| code.code.len())
}

/// Kestrel's flags at `level`: checker off, no printed text, the verifier not run (the
/// corpus is verified when it is loaded).
fn kestrel_flags(level: OptLevel) -> Flags {
    Flags {
        opt_level: level,
        verified: true,
        ..Flags::default()
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
