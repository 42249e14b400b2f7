//! Running a Wasm case through Kestrel and comparing what engines observe.
//!
//! A run instantiates the module (no imports), calls each exported function in export
//! order with arguments from [`crate::wasm_gen::Args`], then reads every exported memory,
//! global and table. Each step is an [`Observation`] in a form any engine can produce:
//! values by bits, references by null-ness, traps by kind, memories by size and digest.
//! [`first_difference`] compares two runs up to the first stack overflow in either (engines'
//! stacks differ in size, so how far each got is not comparable); [`compare_modes`] is the
//! oracle available inside this workspace: Kestrel with guard pages against Kestrel with
//! explicit bounds checks. The bench workspace's `wasm-fuzz` adds Wasmtime.
//!
//! Contract: a run is a pure function of the module and the argument seed; a panic inside
//! Kestrel becomes an observation (`panic: …`), so it is reported as a difference rather
//! than ending a campaign. Cost: one compile and instantiation plus the module's run
//! (bounded by `wasm_gen`'s fuel) and a pass over each exported memory.

use std::panic::{catch_unwind, AssertUnwindSafe};

use kestrel_wasm::{
    BoundsChecks, Config, Extern, Imports, Instance, InvokeError, Module, Trap, Val, WasmError,
};
use wasmparser::{ExternalKind, Parser, Payload, ValType};

use crate::wasm_gen::Args;

/// One step's outcome: what was done and what came of it, as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    pub step: String,
    pub outcome: String,
}

impl Observation {
    pub fn new(step: impl Into<String>, outcome: impl Into<String>) -> Observation {
        Observation {
            step: step.into(),
            outcome: outcome.into(),
        }
    }
}

/// The outcome of a stack-overflow trap, where comparisons stop.
pub const STACK_OVERFLOW: &str = "trap: stack overflow";

/// An export of the module: its name and kind, in export-section order.
pub struct Export {
    pub name: String,
    pub kind: ExternalKind,
}

/// The module's exports, in order.
pub fn exports(wasm: &[u8]) -> Result<Vec<Export>, String> {
    let mut out = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        if let Payload::ExportSection(section) = payload.map_err(|e| e.to_string())? {
            for export in section {
                let export = export.map_err(|e| e.to_string())?;
                out.push(Export {
                    name: export.name.to_string(),
                    kind: export.kind,
                });
            }
        }
    }
    Ok(out)
}

/// A trap's outcome text, with the kinds named as every engine can name them (a
/// `call_indirect` past the table is a table access out of bounds, a null entry an
/// indirect call to null).
pub fn trap_outcome(trap: &Trap) -> String {
    let kind = match trap {
        Trap::Unreachable => "unreachable",
        Trap::MemoryOutOfBounds => "memory out of bounds",
        Trap::TableOutOfBounds | Trap::UndefinedElement => "table out of bounds",
        Trap::UninitializedElement => "indirect call to null",
        Trap::BadSignature => "bad signature",
        Trap::IntegerDivideByZero => "integer divide by zero",
        Trap::IntegerOverflow => "integer overflow",
        Trap::BadConversionToInteger => "bad conversion to integer",
        Trap::StackOverflow => return STACK_OVERFLOW.to_string(),
        other => return format!("trap: other ({other})"),
    };
    format!("trap: {kind}")
}

/// A memory's size and FNV-1a digest: compact and sensitive to every byte.
pub fn memory_digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    format!("{} pages, fnv {h:016x}", bytes.len() / 65536)
}

/// A value's text: numbers by bits, references by null-ness.
pub fn value_text(v: Val) -> String {
    match v {
        Val::I32(x) => format!("i32 {x}"),
        Val::I64(x) => format!("i64 {x}"),
        Val::F32(x) => format!("f32 {x:#010x}"),
        Val::F64(x) => format!("f64 {x:#018x}"),
        Val::FuncRef(0) | Val::ExternRef(None) => "null".into(),
        Val::FuncRef(_) | Val::ExternRef(Some(_)) => "ref".into(),
    }
}

/// The argument of type `ty` (references are null: the host has none to give).
pub fn argument(ty: ValType, args: &mut Args) -> Val {
    match ty {
        ValType::I32 => Val::I32(args.i32()),
        ValType::I64 => Val::I64(args.i64()),
        ValType::F32 => Val::F32(args.f32_bits()),
        ValType::F64 => Val::F64(args.f64_bits()),
        ValType::Ref(r) if r.is_extern_ref() => Val::ExternRef(None),
        _ => Val::FuncRef(0),
    }
}

/// Kestrel's observations of `wasm` compiled for `checks`.
pub fn run_kestrel(
    wasm: &[u8],
    exports: &[Export],
    arg_seed: u64,
    checks: BoundsChecks,
) -> Vec<Observation> {
    let run = AssertUnwindSafe(|| steps(wasm, exports, arg_seed, checks));
    catch_unwind(run).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        vec![Observation::new("kestrel", format!("panic: {message}"))]
    })
}

fn steps(wasm: &[u8], exports: &[Export], arg_seed: u64, checks: BoundsChecks) -> Vec<Observation> {
    let instance = Module::with_config(wasm, &Config::with_bounds_checks(checks))
        .map_err(|e| format!("compile error: {e}"))
        .and_then(|m| {
            Instance::new(&m, &Imports::new()).map_err(|e| match e {
                WasmError::Trap(t) => trap_outcome(&t),
                e => format!("instantiate error: {e}"),
            })
        });
    let instance = match instance {
        Ok(i) => i,
        Err(e) => return vec![Observation::new("instantiate", e)],
    };
    let mut obs = vec![Observation::new("instantiate", "ok")];
    let mut args = Args::new(arg_seed);
    let all = instance.exports();
    for export in exports.iter().filter(|e| e.kind == ExternalKind::Func) {
        let step = format!("call {}", export.name);
        let Some(Extern::Func(f)) = all.get(&export.name) else {
            obs.push(Observation::new(step, "missing"));
            continue;
        };
        let params: Vec<Val> = f
            .ty()
            .params()
            .iter()
            .map(|&t| argument(t, &mut args))
            .collect();
        let outcome = match instance.invoke(&export.name, &params) {
            Ok(results) => results
                .into_iter()
                .map(value_text)
                .collect::<Vec<_>>()
                .join(", "),
            Err(InvokeError::Trap { trap, .. }) => trap_outcome(&trap),
            Err(e) => format!("error: {e}"),
        };
        obs.push(Observation::new(step, outcome));
    }
    for export in exports {
        let outcome = match (export.kind, all.get(&export.name)) {
            (ExternalKind::Memory, Some(Extern::Memory(m))) => {
                memory_digest(&m.read(0, (m.pages() * 65536) as usize).unwrap_or_default())
            }
            (ExternalKind::Global, Some(Extern::Global(g))) => value_text(g.get()),
            (ExternalKind::Table, Some(Extern::Table(t))) => format!("{} entries", t.len()),
            _ => continue,
        };
        obs.push(Observation::new(format!("final {}", export.name), outcome));
    }
    obs
}

/// The first step where two runs differ, up to the first stack overflow in either.
pub fn first_difference(ours: &[Observation], theirs: &[Observation]) -> Option<String> {
    for k in 0..ours.len().max(theirs.len()) {
        let (a, b) = (ours.get(k), theirs.get(k));
        if let (Some(a), Some(b)) = (a, b) {
            let overflow = a.outcome == STACK_OVERFLOW || b.outcome == STACK_OVERFLOW;
            if a.step == b.step && (overflow || a.outcome == b.outcome) {
                if overflow {
                    return None;
                }
                continue;
            }
        }
        let show = |o: Option<&Observation>| {
            o.map_or("(nothing)".to_string(), |o| {
                format!("{}: {}", o.step, o.outcome)
            })
        };
        return Some(format!("step {k}: `{}` vs `{}`", show(a), show(b)));
    }
    None
}

/// Kestrel with guard pages against Kestrel with explicit checks on `wasm`; the first
/// difference, if any.
pub fn compare_modes(wasm: &[u8], arg_seed: u64) -> Result<Option<String>, String> {
    let exports = exports(wasm)?;
    let guard = run_kestrel(wasm, &exports, arg_seed, BoundsChecks::Guard);
    let explicit = run_kestrel(wasm, &exports, arg_seed, BoundsChecks::Explicit);
    Ok(first_difference(&guard, &explicit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wasm_gen;

    #[test]
    fn comparison_finds_differences_and_stops_at_a_stack_overflow() {
        let ok = |s: &str, o: &str| Observation::new(s, o);
        let a = [ok("instantiate", "ok"), ok("call f", "i32 1")];
        let b = [ok("instantiate", "ok"), ok("call f", "i32 2")];
        assert!(first_difference(&a, &b).unwrap().starts_with("step 1"));
        assert!(first_difference(&a, &a[..1]).is_some());
        assert_eq!(first_difference(&a, &a), None);
        let overflow = [
            ok("instantiate", "ok"),
            ok("call f", STACK_OVERFLOW),
            ok("final g", "i32 0"),
        ];
        let later = [
            ok("instantiate", "ok"),
            ok("call f", "i32 7"),
            ok("final g", "i32 9"),
        ];
        assert_eq!(first_difference(&overflow, &later), None);
        assert_eq!(first_difference(&later, &overflow), None);
    }

    /// A seeded smoke run of the oracle this workspace has: both bounds-check modes give
    /// the same observations, and the modules do real work (calls that return, traps).
    #[test]
    fn guard_and_explicit_modes_agree_on_generated_modules() {
        let run = || {
            let (mut returned, mut trapped) = (0, 0);
            for seed in 0..100 {
                let wasm = wasm_gen::module(seed).expect("wasm-smith makes a module");
                if let Some(difference) = compare_modes(&wasm, seed).unwrap() {
                    panic!("seed {seed}: guard vs explicit: {difference}");
                }
                let exports = exports(&wasm).unwrap();
                for o in run_kestrel(&wasm, &exports, seed, BoundsChecks::Guard) {
                    if o.step.starts_with("call") {
                        if o.outcome.starts_with("trap") {
                            trapped += 1;
                        } else {
                            returned += 1;
                        }
                    }
                }
            }
            eprintln!("{returned} calls returned, {trapped} trapped");
            assert!(
                returned >= 40 && trapped >= 40,
                "{returned} returned, {trapped} trapped"
            );
        };
        // Wasm runs on the calling thread's stack.
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }
}
