//! Run tests: each directory under `tests/run/` holds rule files and a `driver.rs`.
//! The rules are compiled with both backends (with rule logging; `features` also with
//! coverage) to `tree.rs` and `naive.rs`; the driver includes both, is compiled with
//! `rustc` and run. Its standard output must equal `expected.stdout` (`BLESS=1` rewrites
//! that file).

mod common;

use std::path::Path;
use std::process::Command;

fn run_case(dir: &Path) {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("run")
        .join(&name);
    std::fs::create_dir_all(&work).unwrap();
    let sources = common::load_dir_sources(dir);
    for (backend, file) in [
        (kestrel_rules::Backend::Tree, "tree.rs"),
        (kestrel_rules::Backend::Naive, "naive.rs"),
    ] {
        let mut options = kestrel_rules::Options::default();
        options.codegen.backend = backend;
        options.codegen.log = true;
        // `features` also checks coverage against the log (its driver implements both).
        options.codegen.coverage = name == "features";
        let compiled = kestrel_rules::compile(&sources, &options)
            .unwrap_or_else(|d| panic!("{name}: rules do not compile:\n{}", d.render()));
        std::fs::write(work.join(file), compiled.code).unwrap();
    }
    std::fs::copy(dir.join("driver.rs"), work.join("driver.rs")).unwrap();
    let exe = work.join("driver");
    // Under clippy-driver when available, so generated code is held to clippy too.
    let status = Command::new(compiler())
        .args([
            "--edition",
            "2021",
            "-D",
            "warnings",
            "-C",
            "debuginfo=0",
            "-o",
        ])
        .arg(&exe)
        .arg(work.join("driver.rs"))
        .status()
        .expect("run rustc");
    assert!(
        status.success(),
        "{name}: generated code does not compile (see {})",
        work.display()
    );
    let out = Command::new(&exe).output().expect("run driver");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: driver failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::golden(&dir.join("expected.stdout"), &stdout);
}

/// `clippy-driver` if it runs here (it accepts rustc's arguments), else `rustc`.
fn compiler() -> String {
    let clippy = Command::new("clippy-driver").arg("--version").output();
    if clippy.is_ok_and(|o| o.status.success()) {
        return "clippy-driver".into();
    }
    std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())
}

#[test]
fn run_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 2);
    for dir in dirs {
        run_case(&dir);
    }
}
