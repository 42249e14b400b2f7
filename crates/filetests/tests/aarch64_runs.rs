//! Every `test run` file of the project's suite with a `target aarch64` line passes on
//! AArch64: compiled into an AArch64 ELF object, linked statically by
//! `aarch64-linux-gnu-gcc` with the generated driver, and run under `qemu-aarch64`, its
//! results and traps judged as the interpreter's and the native runs' are. The tools are
//! required (a missing one fails with the package to install), never skipped.

use std::path::Path;

use std::cell::Cell;

use kestrel_codegen::chaos::Chaos;
use kestrel_filetests::object_run::{run_via_object_with, ObjectTarget};
use kestrel_filetests::{collect_files, directives, Outcome};

#[test]
fn aarch64_run_files_pass_under_qemu() {
    run_all("plain", &Chaos::disabled);
}

/// The same files with every optional optimization skipped at random (one seed per
/// function): branch peepholes, direct label patches (so in-range uses go through veneers),
/// immediate and compare merges, the allocator's heuristics. Skipping any is always correct.
#[test]
fn aarch64_run_files_pass_under_qemu_with_chaos() {
    let seed = Cell::new(0xC4A0_5EED_u64);
    run_all("chaos", &|| {
        seed.set(seed.get() + 1);
        Chaos::from_seed(seed.get())
    });
}

/// The naive baseline: every optional optimization skipped (every label use through a
/// veneer where one can reach, no branch peephole, no merge).
#[test]
fn aarch64_run_files_pass_under_qemu_with_nothing_optimized() {
    run_all("naive", &Chaos::skip_all);
}

fn run_all(what: &str, chaos: &dyn Fn() -> Chaos) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let files = collect_files(&[root]).unwrap();
    let work = std::env::temp_dir().join(format!(
        "kestrel-aarch64-runs-{what}-{}",
        std::process::id()
    ));
    let (mut passed, mut failed) = (0, Vec::new());
    for (i, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).unwrap();
        if !directives::scan(&text)
            .targets
            .iter()
            .any(|t| t.isa == "aarch64")
        {
            continue;
        }
        let dir = work.join(i.to_string());
        let name = file.display().to_string();
        match run_via_object_with(ObjectTarget::Aarch64, chaos, &text, &name, &dir) {
            Outcome::Pass => passed += 1,
            Outcome::Skip(why) => failed.push(format!("{name}: skipped: {why}")),
            Outcome::Fail(why) => failed.push(format!("{name}: {}", why.join("\n  "))),
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        failed.is_empty(),
        "{} failed under qemu-aarch64 ({what}):\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(
        passed >= 50,
        "only {passed} files have a `target aarch64` line"
    );
    eprintln!("{passed} run files passed on AArch64 under qemu ({what})");
}
