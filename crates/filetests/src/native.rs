//! Native execution of `test run` files: compile every function of a file with the x86-64
//! backend (register-allocation checker on), load them into one JIT module, and call them.
//!
//! A function the backend cannot compile makes the whole file fail with the backend's error
//! (native execution never falls back to the interpreter). A native trap is reported like
//! the interpreter's: `trap CODE …`.

use std::collections::HashMap;

use kestrel_codegen::chaos::Chaos;
pub use kestrel_codegen::isa::x64::features::CpuFeatures;
use kestrel_codegen::isa::x64::{Flags, X64Backend};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, FunctionName};
use kestrel_jit::{FuncId, JitBuilder, JitModule, Linkage, Value};

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
    kestrel_jit::ir_name(name)
}

impl NativeModule {
    /// Compile and load `funcs`; the errors name each function that failed.
    pub fn compile(funcs: &[Function]) -> Result<NativeModule, Vec<String>> {
        Self::compile_with_chaos(funcs, &Chaos::disabled)
    }

    /// Like [`NativeModule::compile`], for a CPU with `features` (a `target` line's flags).
    pub fn compile_for(
        funcs: &[Function],
        features: CpuFeatures,
    ) -> Result<NativeModule, Vec<String>> {
        Self::compile_with(funcs, &Chaos::disabled, features)
    }

    /// Like [`NativeModule::compile`], asking a fresh chaos control from `chaos` for each
    /// function (to check that skipping optional optimizations keeps results the same).
    pub fn compile_with_chaos(
        funcs: &[Function],
        chaos: &dyn Fn() -> Chaos,
    ) -> Result<NativeModule, Vec<String>> {
        Self::compile_with(funcs, chaos, CpuFeatures::host())
    }

    /// Like [`NativeModule::compile_with_chaos`], for a CPU with `features`.
    pub fn compile_with(
        funcs: &[Function],
        chaos: &dyn Fn() -> Chaos,
        features: CpuFeatures,
    ) -> Result<NativeModule, Vec<String>> {
        let flags = Flags {
            check_regalloc: true,
            keep_text: false,
            features,
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
        // The JIT calls every signature the backend compiles directly (results beyond the
        // return registers come back through the return area it provides), so no wrappers.
        for f in funcs {
            let name = jit_name(&f.name);
            let code = match X64Backend.compile_function_with_chaos(f, &flags, &mut chaos()) {
                Ok(c) => c,
                Err(e) => {
                    errors.push(format!("%{name}: {e}"));
                    continue;
                }
            };
            let compiled = module.compiled_from_codegen(code, f.signature.clone());
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
        // than its own frame and the return area the JIT allocates for the call.
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

// 128-bit division helpers the backend calls after checking for the trapping cases (so plain
// wrapping arithmetic is exact here).
extern "C" fn udivti3(a: u128, b: u128) -> u128 {
    a.wrapping_div(b)
}
extern "C" fn divti3(a: i128, b: i128) -> i128 {
    a.wrapping_div(b)
}
extern "C" fn umodti3(a: u128, b: u128) -> u128 {
    a.wrapping_rem(b)
}
extern "C" fn modti3(a: i128, b: i128) -> i128 {
    a.wrapping_rem(b)
}

// 128-bit integer to float conversions (Rust's `as` rounds to nearest, ties to even).
extern "C" fn floattisf(a: i128) -> f32 {
    a as f32
}
extern "C" fn floattidf(a: i128) -> f64 {
    a as f64
}
extern "C" fn floatuntisf(a: u128) -> f32 {
    a as f32
}
extern "C" fn floatuntidf(a: u128) -> f64 {
    a as f64
}

// Float to 128-bit integer conversions; the backend only passes in-range inputs.
extern "C" fn fixsfti(a: f32) -> i128 {
    a as i128
}
extern "C" fn fixdfti(a: f64) -> i128 {
    a as i128
}
extern "C" fn fixunssfti(a: f32) -> u128 {
    a as u128
}
extern "C" fn fixunsdfti(a: f64) -> u128 {
    a as u128
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
    ("__udivti3", udivti3 as *const u8),
    ("__divti3", divti3 as *const u8),
    ("__umodti3", umodti3 as *const u8),
    ("__modti3", modti3 as *const u8),
    ("__floattisf", floattisf as *const u8),
    ("__floattidf", floattidf as *const u8),
    ("__floatuntisf", floatuntisf as *const u8),
    ("__floatuntidf", floatuntidf as *const u8),
    ("__fixsfti", fixsfti as *const u8),
    ("__fixdfti", fixdfti as *const u8),
    ("__fixunssfti", fixunssfti as *const u8),
    ("__fixunsdfti", fixunsdfti as *const u8),
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
