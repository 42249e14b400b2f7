//! Native execution of `test run` files: compile every function of a file with the x86-64
//! backend (register-allocation checker on), load them into one JIT module, and call them.
//!
//! A function the backend cannot compile makes the whole file fail with the backend's error
//! (native execution never falls back to the interpreter). A native trap is reported like
//! the interpreter's: `trap CODE …`.

use std::collections::HashMap;

use kestrel_codegen::isa::x64::{Flags, X64Backend};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, FunctionName};
use kestrel_jit::{
    CompiledFunction, FuncId, JitBuilder, JitModule, Linkage, Reloc, RelocKind, RelocTarget,
    TrapSite, Value,
};

/// Why a native call produced no results.
#[derive(Debug)]
pub enum NativeError {
    /// The code trapped at a registered trap site.
    Trap(kestrel_jit::Trap),
    /// Anything else (unknown function, signature the trampoline cannot call, …).
    Other(String),
}

/// The functions of one file, compiled and loaded.
pub struct NativeModule {
    module: JitModule,
    ids: HashMap<String, FuncId>,
}

fn jit_name(name: &FunctionName) -> String {
    match name {
        FunctionName::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

fn reloc_kind(kind: kestrel_codegen::machinst::buffer::RelocKind) -> RelocKind {
    use kestrel_codegen::machinst::buffer::RelocKind as K;
    match kind {
        K::Abs4 => RelocKind::Abs4,
        K::Abs8 => RelocKind::Abs8,
        K::PcRel4 => RelocKind::PcRel4,
        K::CallPcRel4 => RelocKind::CallPcRel4,
    }
}

impl NativeModule {
    /// Compile and load `funcs`; the errors name each function that failed.
    pub fn compile(funcs: &[Function]) -> Result<NativeModule, Vec<String>> {
        let flags = Flags {
            check_regalloc: true,
            keep_text: false,
        };
        let mut builder = JitBuilder::new();
        for &(name, ptr) in LIBCALLS {
            builder.symbol(name, ptr);
        }
        let mut module = builder.build();
        let mut ids = HashMap::new();
        let mut errors = Vec::new();
        for f in funcs {
            let name = jit_name(&f.name);
            match module.declare_function(&name, Linkage::Local, &f.signature) {
                Ok(id) => {
                    ids.insert(name, id);
                }
                Err(e) => errors.push(format!("%{name}: {e}")),
            }
        }
        for f in funcs {
            for ext in f.ext_funcs.values() {
                let name = jit_name(&ext.name);
                if ids.contains_key(&name) {
                    continue;
                }
                let sig = &f.signatures[ext.signature];
                if let Err(e) = module.declare_function(&name, Linkage::Import, sig) {
                    errors.push(format!("%{name}: {e}"));
                }
            }
        }
        for f in funcs {
            let name = jit_name(&f.name);
            let code = match X64Backend.compile_function(f, &flags) {
                Ok(c) => c,
                Err(e) => {
                    errors.push(format!("%{name}: {e}"));
                    continue;
                }
            };
            let compiled = CompiledFunction {
                code: code.code,
                relocs: code
                    .relocs
                    .iter()
                    .map(|r| Reloc {
                        offset: r.offset,
                        kind: reloc_kind(r.kind),
                        target: if module.get_name(&jit_name(&r.target)).is_some() {
                            RelocTarget::Function(jit_name(&r.target))
                        } else {
                            // A libcall the backend introduced (not declared by the IR).
                            RelocTarget::Symbol(jit_name(&r.target))
                        },
                        addend: r.addend,
                    })
                    .collect(),
                traps: code
                    .traps
                    .iter()
                    .map(|t| TrapSite {
                        offset: t.offset,
                        code: t.code,
                    })
                    .collect(),
                signature: f.signature.clone(),
            };
            if let Some(&id) = ids.get(&name) {
                if let Err(e) = module.define_function(id, compiled) {
                    errors.push(format!("%{name}: {e}"));
                }
            }
        }
        if errors.is_empty() {
            if let Err(e) = module.finalize_definitions() {
                errors.push(e.to_string());
            }
        }
        if errors.is_empty() {
            Ok(NativeModule { module, ids })
        } else {
            Err(errors)
        }
    }

    /// Call `%name` with `args`; a trap becomes an error message like the interpreter's.
    pub fn call(&self, name: &str, args: &[DataValue]) -> Result<Vec<DataValue>, String> {
        self.call_raw(name, args).map_err(|e| match e {
            NativeError::Trap(t) => format!("trap {} at offset {:#x} in %{name}", t.code, t.offset),
            NativeError::Other(e) => e,
        })
    }

    /// Call `%name` with `args`, keeping a trap apart from other failures.
    pub fn call_raw(&self, name: &str, args: &[DataValue]) -> Result<Vec<DataValue>, NativeError> {
        let id = *self.ids.get(name).ok_or_else(|| {
            NativeError::Other(format!("no function named %{name} in this module"))
        })?;
        let args: Vec<Value> = args.iter().map(|&a| to_jit(a)).collect();
        // SAFETY: the code was produced by the backend from this very function, whose
        // signature the module checked; scalar arguments cannot make it touch memory other
        // than its own frame.
        let results = unsafe { self.module.call(id, &args) };
        match results {
            Ok(vals) => Ok(vals.into_iter().map(from_jit).collect()),
            Err(e) => match e.trap() {
                Some(t) => Err(NativeError::Trap(t)),
                None => Err(NativeError::Other(e.to_string())),
            },
        }
    }
}

// Cranelift's libcalls that test files call by name, implemented with Rust's float methods
// (which follow the same IEEE rules as the C library functions).
extern "C" fn ceil_f32(x: f32) -> f32 {
    x.ceil()
}
extern "C" fn ceil_f64(x: f64) -> f64 {
    x.ceil()
}
extern "C" fn floor_f32(x: f32) -> f32 {
    x.floor()
}
extern "C" fn floor_f64(x: f64) -> f64 {
    x.floor()
}
extern "C" fn trunc_f32(x: f32) -> f32 {
    x.trunc()
}
extern "C" fn trunc_f64(x: f64) -> f64 {
    x.trunc()
}
extern "C" fn nearest_f32(x: f32) -> f32 {
    x.round_ties_even()
}
extern "C" fn nearest_f64(x: f64) -> f64 {
    x.round_ties_even()
}
extern "C" fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}
extern "C" fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

/// Cranelift libcall names and their implementations.
const LIBCALLS: &[(&str, *const u8)] = &[
    ("CeilF32", ceil_f32 as *const u8),
    ("CeilF64", ceil_f64 as *const u8),
    ("FloorF32", floor_f32 as *const u8),
    ("FloorF64", floor_f64 as *const u8),
    ("TruncF32", trunc_f32 as *const u8),
    ("TruncF64", trunc_f64 as *const u8),
    ("NearestF32", nearest_f32 as *const u8),
    ("NearestF64", nearest_f64 as *const u8),
    ("FmaF32", fma_f32 as *const u8),
    ("FmaF64", fma_f64 as *const u8),
];

fn to_jit(v: DataValue) -> Value {
    match v {
        DataValue::I8(x) => Value::I8(x),
        DataValue::I16(x) => Value::I16(x),
        DataValue::I32(x) => Value::I32(x),
        DataValue::I64(x) => Value::I64(x),
        DataValue::I128(x) => Value::I128(x),
        DataValue::F32(b) => Value::F32(f32::from_bits(b)),
        DataValue::F64(b) => Value::F64(f64::from_bits(b)),
    }
}

fn from_jit(v: Value) -> DataValue {
    match v {
        Value::I8(x) => DataValue::I8(x),
        Value::I16(x) => DataValue::I16(x),
        Value::I32(x) => DataValue::I32(x),
        Value::I64(x) => DataValue::I64(x),
        Value::I128(x) => DataValue::I128(x),
        Value::F32(x) => DataValue::F32(x.to_bits()),
        Value::F64(x) => DataValue::F64(x.to_bits()),
    }
}
