//! The two compilers, each from an in-memory function to final machine-code bytes.
//!
//! Memory: each engine compiles in a context kept across its compiles (Kestrel's
//! `CompileContext`, Cranelift's `Context`), as a client compiling many functions does;
//! with `--contexts fresh`, every compile starts from new memory on both sides.
//!
//! - Kestrel: `machinst::compile::compile_in` with the x86-64 backend, the register-allocation
//!   checker off and chaos disabled. This is `X64Backend::compile_function` minus its IR
//!   verifier call, matching Cranelift's `enable_verifier=false`; the corpus is verified
//!   once, untimed, before measuring. MachBuffer validators only run in debug builds.
//! - Cranelift 0.135.8: the host x86-64 ISA from `isa::lookup`, `opt_level=none`,
//!   `enable_verifier=false`, default register allocator; `Context::compile`, then the bytes
//!   of its compiled code. The two ABI flags Kestrel's test files set
//!   (`enable_multi_ret_implicit_sret`, `enable_llvm_abi_extensions`) are set too, so that
//!   multi-result and `i128` signatures are accepted; they do not change the pipeline.

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::x64::X64Backend;
use kestrel_codegen::machinst::compile::{compile_in, CompileContext, CompileOptions, PhaseTimes};
use kestrel_codegen::machinst::{CodegenError, CompiledCode};

/// Compile with Kestrel in `ctx`; `times` (when given) accumulates the per-phase times.
pub fn kestrel(
    ctx: &mut CompileContext,
    f: &kestrel_ir::Function,
    times: Option<&mut PhaseTimes>,
) -> Result<CompiledCode, CodegenError> {
    let options = CompileOptions {
        check_regalloc: false,
        keep_text: false,
        ..CompileOptions::default()
    };
    compile_in(ctx, &X64Backend, f, options, &mut Chaos::disabled(), times)
}

/// The Cranelift target, configured once.
pub struct Cranelift {
    isa: OwnedTargetIsa,
}

impl Cranelift {
    pub fn new() -> Result<Cranelift, String> {
        let mut flags = settings::builder();
        for (name, value) in [
            ("opt_level", "none"),
            ("enable_verifier", "false"),
            ("enable_multi_ret_implicit_sret", "true"),
            ("enable_llvm_abi_extensions", "true"),
        ] {
            flags
                .set(name, value)
                .map_err(|e| format!("cranelift setting {name}={value}: {e}"))?;
        }
        let triple = target_lexicon::Triple::host();
        let isa = cranelift_codegen::isa::lookup(triple)
            .map_err(|e| format!("cranelift ISA lookup: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("cranelift ISA: {e}"))?;
        Ok(Cranelift { isa })
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
