//! Wasmtime 48 (Cranelift at its default settings) as a Wasm oracle: the same steps and
//! observation texts as `kestrel_difftest::wasm_oracle`'s Kestrel runs, so the lists
//! compare directly. Contract: a pure function of the module and the argument seed.
//! Cost: one compile and instantiation plus the module's run.

use kestrel_difftest::wasm_gen::Args;
use kestrel_difftest::wasm_oracle::{memory_digest, Export, Observation, STACK_OVERFLOW};
use wasmparser::ExternalKind;
use wasmtime::{Store, Val};

/// A Wasmtime error's outcome text, with trap kinds named as `wasm_oracle` names them.
fn trap_outcome(error: &wasmtime::Error) -> String {
    use wasmtime::Trap as T;
    let Some(trap) = error.downcast_ref::<T>() else {
        return format!("error: {error}");
    };
    let kind = match trap {
        T::UnreachableCodeReached => "unreachable",
        T::MemoryOutOfBounds => "memory out of bounds",
        T::TableOutOfBounds => "table out of bounds",
        T::IndirectCallToNull => "indirect call to null",
        T::BadSignature => "bad signature",
        T::IntegerDivisionByZero => "integer divide by zero",
        T::IntegerOverflow => "integer overflow",
        T::BadConversionToInteger => "bad conversion to integer",
        T::StackOverflow => return STACK_OVERFLOW.to_string(),
        other => return format!("trap: other ({other:?})"),
    };
    format!("trap: {kind}")
}

fn value_text(v: &Val) -> String {
    match v {
        Val::I32(x) => format!("i32 {x}"),
        Val::I64(x) => format!("i64 {x}"),
        Val::F32(x) => format!("f32 {x:#010x}"),
        Val::F64(x) => format!("f64 {x:#018x}"),
        Val::FuncRef(None) | Val::ExternRef(None) => "null".into(),
        Val::FuncRef(Some(_)) | Val::ExternRef(Some(_)) => "ref".into(),
        other => format!("unexpected {other:?}"),
    }
}

fn argument(ty: &wasmtime::ValType, args: &mut Args) -> Val {
    match ty {
        wasmtime::ValType::I32 => Val::I32(args.i32()),
        wasmtime::ValType::I64 => Val::I64(args.i64()),
        wasmtime::ValType::F32 => Val::F32(args.f32_bits()),
        wasmtime::ValType::F64 => Val::F64(args.f64_bits()),
        wasmtime::ValType::Ref(r) if r.heap_type().is_extern() => Val::null_extern_ref(),
        _ => Val::null_func_ref(),
    }
}

/// Wasmtime's observations of `wasm`, on `engine` (one per campaign: engines are costly).
pub fn run(
    engine: &wasmtime::Engine,
    wasm: &[u8],
    exports: &[Export],
    arg_seed: u64,
) -> Vec<Observation> {
    let module = match wasmtime::Module::new(engine, wasm) {
        Ok(m) => m,
        Err(e) => {
            return vec![Observation::new(
                "instantiate",
                format!("compile error: {e:?}"),
            )]
        }
    };
    let mut store = Store::new(engine, ());
    let instance = match wasmtime::Instance::new(&mut store, &module, &[]) {
        Ok(i) => i,
        Err(e) => return vec![Observation::new("instantiate", trap_outcome(&e))],
    };
    let mut obs = vec![Observation::new("instantiate", "ok")];
    let mut args = Args::new(arg_seed);
    for export in exports.iter().filter(|e| e.kind == ExternalKind::Func) {
        let step = format!("call {}", export.name);
        let Some(f) = instance.get_func(&mut store, &export.name) else {
            obs.push(Observation::new(step, "missing"));
            continue;
        };
        let ty = f.ty(&store);
        let params: Vec<Val> = ty.params().map(|t| argument(&t, &mut args)).collect();
        let mut results = vec![Val::I32(0); ty.results().len()];
        let outcome = match f.call(&mut store, &params, &mut results) {
            Ok(()) => results
                .iter()
                .map(value_text)
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => trap_outcome(&e),
        };
        obs.push(Observation::new(step, outcome));
    }
    for export in exports {
        let outcome = match export.kind {
            ExternalKind::Memory => match instance.get_memory(&mut store, &export.name) {
                Some(m) => memory_digest(m.data(&store)),
                None => continue,
            },
            ExternalKind::Global => match instance.get_global(&mut store, &export.name) {
                Some(g) => value_text(&g.get(&mut store)),
                None => continue,
            },
            ExternalKind::Table => match instance.get_table(&mut store, &export.name) {
                Some(t) => format!("{} entries", t.size(&store)),
                None => continue,
            },
            _ => continue,
        };
        obs.push(Observation::new(format!("final {}", export.name), outcome));
    }
    obs
}
