//! `compile_in_place` leaves each result in the context and writes the next one into the
//! same vectors: every result must equal what `compile_in` returns for the function, whatever
//! was compiled before it (larger or smaller code, more or fewer relocations, traps and
//! source ranges), on both ISAs.

use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::aarch64::Aarch64Backend;
use kestrel_codegen::isa::x64::X64Backend;
use kestrel_codegen::machinst::compile::{compile_in, compile_in_place, CompileContext};
use kestrel_codegen::machinst::compile::{Backend, CompileOptions};
use kestrel_codegen::settings::Flags;

/// Every function of the golden files whose target is one of `targets`.
fn golden_functions(targets: &[&str]) -> Vec<kestrel_ir::Function> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("golden directory")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    let mut funcs = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable");
        if targets
            .iter()
            .any(|t| text.contains(&format!("target {t}")))
        {
            funcs.extend(kestrel_ir::parse_functions(&text, "golden").expect("parses"));
        }
    }
    funcs
}

/// Compiles `funcs` in order, then in reverse, in place in one context, each result
/// compared with a fresh owned compile; the number compared.
fn check_in_place(backend: &impl Backend, funcs: &[kestrel_ir::Function]) -> usize {
    let options = CompileOptions::default();
    let mut ctx = CompileContext::new();
    let mut compared = 0;
    for f in funcs.iter().chain(funcs.iter().rev()) {
        let owned = compile_in(
            &mut CompileContext::new(),
            backend,
            f,
            options,
            &mut Chaos::disabled(),
            None,
        );
        let in_place =
            compile_in_place(&mut ctx, backend, f, options, &mut Chaos::disabled(), None);
        match (owned, in_place) {
            (Ok(owned), Ok(in_place)) => {
                assert_eq!(&owned, in_place, "{}", f.name);
                compared += 1;
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", f.name),
            (a, b) => panic!("{}: owned {:?}, in place {:?}", f.name, a.err(), b.err()),
        }
    }
    compared
}

#[test]
fn results_in_place_equal_owned_results_x64() {
    let funcs = golden_functions(&["x86_64"]);
    let compared = check_in_place(&X64Backend::default(), &funcs);
    assert!(compared > 100, "only {compared} compiled");
}

#[test]
fn results_in_place_equal_owned_results_aarch64() {
    // The x86-64 files' functions too: most are target-neutral IR.
    let funcs = golden_functions(&["aarch64", "x86_64"]);
    let compared = check_in_place(&Aarch64Backend::default(), &funcs);
    assert!(compared > 100, "only {compared} compiled");
}

/// The targets' in-place entry points (verification included) agree with their owned
/// ones, function after function in one context shared by both ISAs.
#[test]
fn target_entry_points_in_place_equal_owned_ones() {
    let funcs = golden_functions(&["x86_64"]);
    let flags = Flags::default();
    let x64 = kestrel_codegen::isa::lookup("x86_64").unwrap().finish();
    let mut ctx = CompileContext::new();
    let mut compared = 0;
    for f in funcs.iter().chain(funcs.iter().rev()) {
        let owned = x64.compile_function(f, &flags);
        let in_place = x64.compile_function_in_place(&mut ctx, f, &flags);
        if let (Ok(owned), Ok(in_place)) = (&owned, &in_place) {
            assert_eq!(owned, *in_place, "{}", f.name);
            compared += 1;
        } else {
            assert_eq!(owned.is_ok(), in_place.is_ok(), "{}", f.name);
        }
    }
    let a64 = kestrel_codegen::isa::lookup("aarch64").unwrap().finish();
    for f in funcs.iter().rev() {
        let owned = a64.compile_function(f, &flags);
        let in_place = a64.compile_function_in_place(&mut ctx, f, &flags);
        if let (Ok(owned), Ok(in_place)) = (&owned, &in_place) {
            assert_eq!(owned, *in_place, "{}", f.name);
            compared += 1;
        } else {
            assert_eq!(owned.is_ok(), in_place.is_ok(), "{}", f.name);
        }
    }
    assert!(compared > 200, "only {compared} compared");
}
