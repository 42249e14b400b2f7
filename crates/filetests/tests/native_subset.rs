//! Runs the project's own `tests/` files natively, function by function, for the subset the
//! x86-64 backend supports, and compares every result with the interpreter's (values, or the
//! trap code). Functions the backend rejects as unsupported are counted and skipped here
//! (`kestrel test` reports them as failures); any other compile error, and any difference
//! from the interpreter, fails the test. The files also run with every optional CPU feature
//! off, and with each off in turn, so the baseline fallbacks (BSR/BSF, SWAR popcount,
//! rounding libcalls) are checked against the interpreter too.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::{self, TargetIsa};
use kestrel_codegen::machinst::CodegenError;
use kestrel_codegen::settings::Flags;
use kestrel_filetests::directives::{self, func_name};
use kestrel_filetests::native::{NativeError, NativeModule};
use kestrel_interp::{InterpError, Interpreter};
use kestrel_ir::{Function, FunctionName};

fn callee_name(name: &FunctionName) -> String {
    match name {
        FunctionName::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

/// Names of the functions that compile, and whose callees in the file compile too.
fn supported(
    funcs: &[Function],
    problems: &mut Vec<String>,
    unsupported: &mut usize,
    isa: &dyn TargetIsa,
) -> HashSet<String> {
    let flags = Flags {
        check_regalloc: true,
        keep_text: false,
        ..Flags::default()
    };
    let mut ok: HashSet<String> = HashSet::new();
    for f in funcs {
        match isa.compile_function(f, &flags) {
            Ok(_) => {
                ok.insert(func_name(f));
            }
            Err(CodegenError::Unsupported { .. }) => *unsupported += 1,
            Err(e) => problems.push(format!("%{}: {e}", func_name(f))),
        }
    }
    // Drop callers of functions that did not compile, until nothing changes.
    loop {
        let before = ok.len();
        ok = funcs
            .iter()
            .filter(|f| ok.contains(&func_name(f)))
            .filter(|f| {
                f.ext_funcs
                    .values()
                    .all(|e| ok.contains(&callee_name(&e.name)))
            })
            .map(func_name)
            .collect();
        if ok.len() == before {
            return ok;
        }
    }
}

#[test]
fn repo_tests_run_natively() {
    run_repo_tests(&Chaos::disabled);
}

/// Baseline x86-64 only: every lowering that has a fallback must use it and agree with the
/// interpreter.
#[test]
fn repo_tests_run_natively_without_cpu_features() {
    let mut none = isa::host().unwrap();
    run_repo_tests_for(&Chaos::disabled, none.set_all(false).finish());
}

/// Each optional feature off in turn (the others as the host has them).
#[test]
fn repo_tests_run_natively_with_each_cpu_feature_off() {
    let host = isa::host().unwrap();
    for flag in [
        "has_lzcnt",
        "has_bmi1",
        "has_bmi2",
        "has_popcnt",
        "has_sse41",
    ] {
        let mut without = host.clone();
        assert!(without.set(&format!("{flag}=false")));
        run_repo_tests_for(&Chaos::disabled, without.finish());
    }
}

/// Skipping every optional optimization (branch peepholes, cold-block sinking, merges and
/// address folds in selection; the allocator perturbed) must not change any result.
#[test]
fn repo_tests_run_natively_with_all_optimizations_skipped() {
    run_repo_tests(&Chaos::skip_all);
}

/// Random subsets of the optional optimizations (peepholes, block order, every merge and
/// fold in selection, perturbed register allocation), for several seed streams.
#[test]
fn repo_tests_run_natively_with_random_chaos() {
    for base in [
        1u64,
        31,
        5_000,
        4_242,
        77_000,
        900_001,
        123_456_789,
        1 << 40,
    ] {
        let seed = std::cell::Cell::new(base);
        run_repo_tests(&|| {
            seed.set(seed.get() + 1);
            Chaos::from_seed(seed.get())
        });
    }
}

fn run_repo_tests(chaos: &dyn Fn() -> Chaos) {
    run_repo_tests_for(chaos, isa::host().unwrap().finish());
}

/// Run `tests/` natively for `isa`: the host's, with a subset of its CPU's features.
fn run_repo_tests_for(chaos: &dyn Fn() -> Chaos, isa: Arc<dyn TargetIsa>) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let files = kestrel_filetests::collect_files(&[root]).expect("tests/ exists");
    let (mut ran, mut unsupported) = (0usize, 0usize);
    let mut problems = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("read test file");
        let header = directives::scan(&text);
        let Ok(funcs) = kestrel_ir::parse_functions(&text, &name) else {
            continue;
        };
        let ok = supported(&funcs, &mut problems, &mut unsupported, &*isa);
        let subset: Vec<Function> = funcs
            .iter()
            .filter(|f| ok.contains(&func_name(f)))
            .cloned()
            .collect();
        if subset.is_empty() {
            continue;
        }
        // The file's settings (e.g. `preserve_frame_pointers`), compiled for this run's
        // features.
        let flags = kestrel_filetests::native_flags(&header, None).expect("the file's settings");
        let module = match NativeModule::build(&isa, &subset, &flags, chaos, &mut |_| {}) {
            Ok(m) => m,
            Err(e) => {
                problems.push(format!("{name}: {}", e.join("; ")));
                continue;
            }
        };
        let mut interp = Interpreter::new(&funcs).with_fuel(Some(kestrel_filetests::FUEL_PER_RUN));
        for raw in &header.runs {
            let preceding = funcs
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    f.source_map
                        .as_ref()
                        .is_some_and(|sm| (sm.function.line as usize) < raw.line)
                })
                .map(|(i, _)| i)
                .next_back();
            let Ok(run) = directives::parse_run(raw, &funcs, preceding) else {
                continue;
            };
            if !ok.contains(&run.function) {
                continue;
            }
            let want = interp.call(&run.function, &run.args);
            let got = module.call_raw(&run.function, &run.args);
            let same = match (&want, &got) {
                (Ok(a), Ok(b)) => a == b,
                (Err(InterpError::Trap { code, .. }), Err(NativeError::Trap(t))) => *code == t.code,
                _ => false,
            };
            if !same {
                problems.push(format!(
                    "{name}: line {}: %{}: interpreter {want:?}, native {got:?}",
                    raw.line, run.function
                ));
            }
            ran += 1;
        }
    }
    let features = isa.isa_flags();
    println!("{features:?}: {ran} run lines natively; {unsupported} functions unsupported");
    assert!(
        problems.is_empty(),
        "native differences:\n{}",
        problems.join("\n")
    );
    assert!(ran > 0, "no run line of tests/ ran natively");
}
