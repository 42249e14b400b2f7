//! The two JITs of `code-speed`: each loads the functions of one kernel file, compiled at
//! opt speed, and hands back the address of its `%main`.
//!
//! - Kestrel: a `kestrel_jit::JitModule` with `OptLevel::Speed` (the mid-end on), the host's
//!   instruction-set extensions (the default `Flags`).
//! - Cranelift 0.135.8: a `cranelift_jit::JITModule` for the host (`cranelift-native`'s
//!   feature detection, as `JITBuilder::with_flags` does), `opt_level=speed`. Calls between
//!   the kernel's functions are rewritten from the reader's test-case names to the module's
//!   function ids, as a front end declaring them in the module would make them.
//!
//! Both keep their module alive as long as the returned [`Loaded`] lives.

use std::collections::HashMap;

use cranelift_codegen::ir::{ExternalName, UserExternalName, UserFuncName};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage as ClLinkage, Module};
use kestrel_codegen::settings::OptLevel;
use kestrel_jit::{JitBuilder, Linkage};

/// A kernel's entry: `extern "C" fn(buffer, n) -> checksum`.
pub type Entry = unsafe extern "C" fn(*mut u8, i64) -> i64;

/// Loaded code and its entry; the module is only held so the code stays mapped.
pub struct Loaded {
    pub entry: Entry,
    _module: Box<dyn std::any::Any>,
}

fn entry_from(ptr: *const u8) -> Entry {
    // SAFETY: the caller checked that `%main` has the signature `(i64, i64) -> i64
    // system_v`, which is `Entry` on x86-64 Linux.
    unsafe { std::mem::transmute::<*const u8, Entry>(ptr) }
}

/// Kestrel's code for `funcs` at opt speed.
pub fn kestrel(funcs: &[kestrel_ir::Function]) -> Result<Loaded, String> {
    let mut builder = JitBuilder::new();
    builder.opt_level(OptLevel::Speed);
    let mut module = builder.build();
    let mut ids = HashMap::new();
    for f in funcs {
        let name = kestrel_jit::ir_name(&f.name);
        let id = module
            .declare_function(&name, Linkage::Local, &f.signature)
            .map_err(|e| format!("kestrel: declare %{name}: {e}"))?;
        ids.insert(name, id);
    }
    let flags = kestrel_codegen::settings::Flags {
        opt_level: OptLevel::Speed,
        ..Default::default()
    };
    for f in funcs {
        module
            .define_ir(f, &flags)
            .map_err(|e| format!("kestrel: {e}"))?;
    }
    module
        .finalize_definitions()
        .map_err(|e| format!("kestrel: finalize: {e}"))?;
    let main = ids.get("main").ok_or("kestrel: no %main")?;
    let ptr = module
        .get_finalized_function(*main)
        .map_err(|e| format!("kestrel: {e}"))?;
    Ok(Loaded {
        entry: entry_from(ptr),
        _module: Box::new(module),
    })
}

/// A function's name as the reader gives it (`%name`), without the `%`.
fn cranelift_name(name: &UserFuncName) -> Result<String, String> {
    match name {
        UserFuncName::Testcase(t) => Ok(t.to_string().trim_start_matches('%').to_string()),
        other => Err(format!("cranelift: unexpected function name {other}")),
    }
}

/// A callee's name as the reader gives it, without the `%`.
fn callee_name(name: &ExternalName) -> Result<String, String> {
    match name {
        ExternalName::TestCase(t) => Ok(t.to_string().trim_start_matches('%').to_string()),
        other => Err(format!("cranelift: unexpected callee {other:?}")),
    }
}

/// Cranelift's code for `funcs` at opt speed.
pub fn cranelift(funcs: Vec<cranelift_codegen::ir::Function>) -> Result<Loaded, String> {
    let builder = JITBuilder::with_flags(&[("opt_level", "speed")], default_libcall_names())
        .map_err(|e| format!("cranelift: {e}"))?;
    let mut module = JITModule::new(builder);
    let mut ids = HashMap::new();
    for f in &funcs {
        let name = cranelift_name(&f.name)?;
        let id = module
            .declare_function(&name, ClLinkage::Local, &f.signature)
            .map_err(|e| format!("cranelift: declare %{name}: {e}"))?;
        ids.insert(name, id);
    }
    let mut ctx = module.make_context();
    // `KESTREL_BENCH_DISASM=1` prints Cranelift's final code of each function to stderr.
    let show_disasm = std::env::var_os("KESTREL_BENCH_DISASM").is_some();
    for mut f in funcs {
        let name = cranelift_name(&f.name)?;
        let refs: Vec<_> = f.dfg.ext_funcs.keys().collect();
        for r in refs {
            let callee = callee_name(&f.dfg.ext_funcs[r].name)?;
            let id = ids
                .get(&callee)
                .ok_or_else(|| format!("cranelift: %{name} calls unknown %{callee}"))?;
            let user = f.declare_imported_user_function(UserExternalName {
                namespace: 0,
                index: id.as_u32(),
            });
            f.dfg.ext_funcs[r].name = ExternalName::user(user);
        }
        ctx.func = f;
        ctx.set_disasm(show_disasm);
        module
            .define_function(ids[&name], &mut ctx)
            .map_err(|e| format!("cranelift: %{name}: {e:?}"))?;
        if let Some(text) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
            eprintln!("cranelift %{name}:\n{text}");
        }
        module.clear_context(&mut ctx);
    }
    module
        .finalize_definitions()
        .map_err(|e| format!("cranelift: finalize: {e}"))?;
    let main = ids.get("main").ok_or("cranelift: no %main")?;
    let ptr = module.get_finalized_function(*main);
    Ok(Loaded {
        entry: entry_from(ptr),
        _module: Box::new(module),
    })
}
