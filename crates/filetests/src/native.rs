//! Native execution of `test run` files: compile every function of a file for the host's
//! ISA (register-allocation checker on), load them into one JIT module, and call them.
//!
//! A function the backend cannot compile makes the whole file fail with the backend's error
//! (native execution never falls back to the interpreter). A native trap is reported like
//! the interpreter's: `trap CODE …`.

use std::collections::HashMap;

use std::sync::Arc;

use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::machinst::CompiledCode;
pub use kestrel_codegen::settings::{Flags, OptLevel};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, FunctionName};
use kestrel_jit::{FuncId, JitModule, Linkage, Value};

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
    /// The wrapper (`vec_wrap`) and result types of each function with a vector parameter or
    /// result, by name.
    wrappers: HashMap<String, (FuncId, usize, Vec<kestrel_ir::Type>)>,
}

fn jit_name(name: &FunctionName) -> String {
    kestrel_jit::ir_name(name)
}

impl NativeModule {
    /// Compile and load `funcs`; the errors name each function that failed.
    pub fn compile(funcs: &[Function]) -> Result<NativeModule, Vec<String>> {
        Self::compile_with_chaos(funcs, &Chaos::disabled)
    }

    /// Like [`NativeModule::compile`], asking a fresh chaos control from `chaos` for each
    /// function (to check that skipping optional optimizations keeps results the same).
    pub fn compile_with_chaos(
        funcs: &[Function],
        chaos: &dyn Fn() -> Chaos,
    ) -> Result<NativeModule, Vec<String>> {
        let flags = Flags {
            check_regalloc: true,
            keep_text: false,
            ..Flags::default()
        };
        let isa = crate::native_isa(None).map_err(|e| vec![e])?;
        Self::build(&isa, funcs, &flags, chaos, &mut |_| {})
    }

    /// The general form: compile every function for `isa` (the host's ISA, with features
    /// the host CPU has: see [`crate::native_isa`]) with `flags` and a fresh chaos control
    /// from `chaos`, showing each function's compiled code to `observe` before it is loaded.
    pub fn build(
        isa: &Arc<dyn TargetIsa>,
        funcs: &[Function],
        flags: &Flags,
        chaos: &dyn Fn() -> Chaos,
        observe: &mut dyn FnMut(&CompiledCode),
    ) -> Result<NativeModule, Vec<String>> {
        let flags = *flags;
        let mut builder = kestrel_jit::JitBuilder::new();
        builder.isa(isa.clone());
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
        // The JIT calls every scalar signature the backend compiles directly (results beyond
        // the return registers come back through the return area it provides); a function
        // with vectors is called through a wrapper (`vec_wrap`), compiled after it.
        let mut wrappers = HashMap::new();
        let mut wrapper_funcs = Vec::new();
        for f in funcs.iter().filter(|f| crate::vec_wrap::needs_wrapper(f)) {
            let name = jit_name(&f.name);
            let w = match crate::vec_wrap::wrapper(f, &name) {
                Ok(w) => w,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let wname = crate::vec_wrap::wrapper_name(&name);
            match module.declare_function(&wname, Linkage::Local, &w.signature) {
                Ok(id) => {
                    ids.insert(wname, id);
                    let types = f.signature.returns.iter().map(|p| p.value_type).collect();
                    wrappers.insert(name, (id, f.signature.params.len(), types));
                    wrapper_funcs.push(w);
                }
                Err(e) => errors.push(format!("%{wname}: {e}")),
            }
        }
        for f in funcs.iter().chain(&wrapper_funcs) {
            let name = jit_name(&f.name);
            let code = match isa.compile_function_with_chaos(f, &flags, &mut chaos()) {
                Ok(c) => {
                    observe(&c);
                    c
                }
                Err(e) => {
                    errors.push(format!("%{name}: {e}"));
                    continue;
                }
            };
            let compiled = module
                .compiled_from_codegen(code, f.signature.clone())
                .with_source_of(f);
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
            Ok(NativeModule {
                module,
                ids,
                wrappers,
            })
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
        if let Some((wrapper, params, types)) = self.wrappers.get(name) {
            if args.len() != *params {
                return Err(NativeError::Other(format!(
                    "%{name} takes {params} arguments, not {}",
                    args.len()
                )));
            }
            return self.call_wrapped(*wrapper, types, args);
        }
        let args: Vec<Value> = args
            .iter()
            .map(|&a| {
                to_jit(a).ok_or_else(|| {
                    NativeError::Other(format!(
                        "argument {a} of type {} cannot be passed to native code (vector, f16 and f128 lowering not implemented)",
                        a.ty()
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
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

impl NativeModule {
    /// Call a function with vectors through its `wrapper`, which reads `args` from one buffer
    /// and writes the results, of `types`, to another.
    fn call_wrapped(
        &self,
        wrapper: FuncId,
        types: &[kestrel_ir::Type],
        args: &[DataValue],
    ) -> Result<Vec<DataValue>, NativeError> {
        let inp = crate::vec_wrap::arg_slots(args);
        let mut out = vec![0u128; types.len().max(1)];
        let ptrs = [
            Value::I64(inp.as_ptr() as i64),
            Value::I64(out.as_mut_ptr() as i64),
        ];
        // SAFETY: the wrapper was compiled from IR that reads 16 bytes per parameter from
        // `inp` (one slot per argument: the caller passes the function's arguments) and
        // writes 16 bytes per result into `out` (one slot per result), both live here.
        let results = unsafe { self.module.call(wrapper, &ptrs) };
        match results {
            Ok(_) => crate::vec_wrap::results(types, &out).map_err(NativeError::Other),
            Err(e) => match e.trap() {
                Some(t) => Err(NativeError::Trap(t)),
                None => Err(NativeError::Other(e.to_string())),
            },
        }
    }
}

/// The JIT's value for `v`; `None` for the interpreter-only types.
fn to_jit(v: DataValue) -> Option<Value> {
    Some(match v {
        DataValue::I8(x) => Value::I8(x),
        DataValue::I16(x) => Value::I16(x),
        DataValue::I32(x) => Value::I32(x),
        DataValue::I64(x) => Value::I64(x),
        DataValue::I128(x) => Value::I128(x),
        DataValue::F32(b) => Value::F32(f32::from_bits(b)),
        DataValue::F64(b) => Value::F64(f64::from_bits(b)),
        DataValue::F16(_) | DataValue::F128(_) | DataValue::Vector(..) => return None,
    })
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
