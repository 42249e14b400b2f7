//! The chaos control, buffer validation and rule coverage over the repository's tests:
//! every function of `tests/semantics/*.clif` and `tests/golden/*.clif` compiles with the
//! checker and the buffer validator on under `Chaos::skip_all` and several seeds (the
//! native results are compared with the interpreter's in `kestrel-filetests`'
//! `native_subset`); every new decision point is asked somewhere; coverage reports rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kestrel_codegen::chaos::{Chaos, Decision};
use kestrel_codegen::isa::x64::{lowering_rules, X64Isa};
use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::machinst::compile::CompileContext;
use kestrel_codegen::machinst::CodegenError;
use kestrel_codegen::settings::Flags;
use kestrel_ir::Function;

fn clif_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "clif"))
        .collect();
    files.sort();
    files
}

fn functions(dirs: &[&str]) -> Vec<Function> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in dirs {
        for path in clif_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&path).unwrap();
            // Files the parser rejects are other tests' business.
            if let Ok(funcs) = kestrel_ir::parse_functions(&text, &path.display().to_string()) {
                out.extend(funcs);
            }
        }
    }
    assert!(!out.is_empty());
    out
}

const SEMANTICS: &str = "../../tests/semantics";
const GOLDEN: &str = "tests/golden";

fn flags() -> Flags {
    Flags {
        check_regalloc: true,
        validate: true,
        ..Flags::default()
    }
}

/// Compile every function with a fresh control from `chaos`; only unsupported features
/// may fail.
fn compile_all(funcs: &[Function], chaos: &mut dyn FnMut() -> Chaos) -> usize {
    let mut compiled = 0;
    for f in funcs {
        match X64Isa::default().compile_function_with_chaos(f, &flags(), &mut chaos()) {
            Ok(_) => compiled += 1,
            Err(CodegenError::Unsupported { .. }) => {}
            Err(e) => panic!("{}: {e}", f.name),
        }
    }
    compiled
}

#[test]
fn every_function_compiles_with_all_optimizations_skipped() {
    let funcs = functions(&[SEMANTICS, GOLDEN]);
    assert!(compile_all(&funcs, &mut Chaos::skip_all) > 100);
}

#[test]
fn every_function_compiles_under_seeded_chaos() {
    let funcs = functions(&[SEMANTICS, GOLDEN]);
    for base in [1u64, 1000, 77_777] {
        let mut seed = base;
        compile_all(&funcs, &mut || {
            seed += 1;
            Chaos::from_seed(seed)
        });
    }
}

/// The decision points of selection and allocation.
const LOWERING_AND_REGALLOC: [Decision; 9] = [
    Decision::ImmOperand,
    Decision::LoadSink,
    Decision::IcmpFusion,
    Decision::FcmpFusion,
    Decision::BandTestFusion,
    Decision::AddrConstFold,
    Decision::AddrAddFold,
    Decision::AddrShiftFold,
    Decision::RegallocPerturb,
];

/// A control that never skips but counts (`from_bytes` with no bytes) sees every decision
/// point of selection and allocation over the semantics tests.
#[test]
fn every_decision_is_asked_over_the_semantics_tests() {
    let funcs = functions(&[SEMANTICS]);
    let mut chaos = Chaos::from_bytes(&[]);
    for f in &funcs {
        let _ = X64Isa::default().compile_function_with_chaos(f, &flags(), &mut chaos);
    }
    for (d, s) in chaos.stats() {
        println!("{d}: asked {}", s.asked);
    }
    let never: Vec<&str> = chaos
        .stats()
        .filter(|(d, s)| LOWERING_AND_REGALLOC.contains(d) && s.asked == 0)
        .map(|(d, _)| d.name())
        .collect();
    assert!(never.is_empty(), "never asked: {never:?}");
    assert!(chaos.stats().all(|(_, s)| s.skipped == 0));
    // The same compile with skipping answers reaches the allocator's perturbation.
    let mut chaos = Chaos::skip_all();
    let f = &funcs[0];
    let _ = X64Isa::default().compile_function_with_chaos(f, &flags(), &mut chaos);
    let (_, s) = chaos
        .stats()
        .find(|(d, _)| *d == Decision::RegallocPerturb)
        .unwrap();
    assert_eq!((s.asked, s.skipped), (1, 1));
}

/// A disabled control gives the optimizing output, byte for byte, and a control that
/// never skips gives the same code.
#[test]
fn a_control_that_never_skips_changes_nothing() {
    for f in &functions(&[SEMANTICS]) {
        let plain = X64Isa::default().compile_function(f, &flags());
        let counted =
            X64Isa::default().compile_function_with_chaos(f, &flags(), &mut Chaos::from_bytes(&[]));
        if let (Ok(a), Ok(b)) = (plain, counted) {
            assert_eq!(a.code, b.code, "{}", f.name);
        }
    }
}

/// A compile context kept across functions changes nothing: every function compiles to
/// the same result as in fresh memory, whichever functions the context saw before (the
/// whole list forwards, then backwards, so each follows larger and smaller ones).
#[test]
fn a_reused_compile_context_changes_nothing() {
    let funcs = functions(&[SEMANTICS, GOLDEN]);
    let mut ctx = CompileContext::new();
    let mut compared = 0;
    for f in funcs.iter().chain(funcs.iter().rev()) {
        let fresh = X64Isa::default().compile_function(f, &flags());
        let reused = X64Isa::default().compile_function_in(&mut ctx, f, &flags());
        assert_eq!(fresh, reused, "{}", f.name);
        compared += usize::from(fresh.is_ok());
    }
    assert!(compared > 1000, "only {compared} compiled");
}

#[test]
fn coverage_reports_the_rules_that_fired() {
    let rules = lowering_rules();
    assert!(rules.len() > 100);
    let files = [
        "src/isa/x64/lower.rules:",
        "src/isa/x64/lower_vec.rules:",
        "src/isa/x64/lower_vec_ops.rules:",
        "src/isa/x64/inst.rules:",
        "src/machinst/isel/prelude.rules:",
    ];
    assert!(rules.iter().all(|r| files.iter().any(|f| r.starts_with(f))));
    let mut fired = BTreeSet::new();
    let coverage = Flags {
        coverage: true,
        ..flags()
    };
    for f in &functions(&[SEMANTICS]) {
        let Ok(code) = X64Isa::default().compile_function(f, &coverage) else {
            continue;
        };
        assert!(code.rules_fired.windows(2).all(|w| w[0] < w[1]));
        fired.extend(code.rules_fired.iter().map(|&k| usize::from(k)));
        let off = X64Isa::default().compile_function(f, &flags()).unwrap();
        assert!(off.rules_fired.is_empty());
        assert_eq!(off.code, code.code, "coverage must not change the code");
    }
    assert!(fired.iter().all(|&k| k < rules.len()));
    assert!(fired.len() > rules.len() / 3, "{} rules fired", fired.len());
}
