//! Golden tests. `tests/pass/` programs must compile (any warnings match
//! `NAME.stderr`); `tests/fail/` programs must fail with exactly the diagnostics in
//! `NAME.stderr`. A case is a `.rules` file or a directory of them (one program).
//! Run with `BLESS=1` to rewrite the expected files.

mod common;

use kestrel_rules::{compile, Backend, Options, SourceMap};
use std::path::{Path, PathBuf};

fn golden_path(case: &Path) -> PathBuf {
    case.with_extension("stderr")
}

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

#[test]
fn pass_cases_compile() {
    let cases = cases(&dir("pass"));
    assert!(cases.len() >= 5);
    for case in cases {
        let sources = case_sources(&case);
        for backend in [Backend::Tree, Backend::Naive] {
            let mut options = Options::default();
            options.codegen.backend = backend;
            let first = compile(&sources, &options)
                .unwrap_or_else(|d| panic!("{} should compile:\n{}", case.display(), d.render()));
            let second = compile(&sources, &options).ok().unwrap();
            assert_eq!(
                first.code,
                second.code,
                "{}: output is not deterministic",
                case.display()
            );
            let golden = golden_path(&case);
            let rendered = first.diagnostics.render();
            if rendered.is_empty() && !golden.exists() {
                continue;
            }
            common::golden(&golden, &rendered);
        }
    }
}

#[test]
fn fail_cases_report_expected_diagnostics() {
    let cases = cases(&dir("fail"));
    assert!(cases.len() >= 10);
    for case in cases {
        let sources = case_sources(&case);
        match compile(&sources, &Options::default()) {
            Ok(_) => panic!("{} should fail to compile", case.display()),
            Err(diags) => {
                assert!(diags.has_errors());
                common::golden(&golden_path(&case), &diags.render());
            }
        }
    }
}

/// One `.rules` file (named by its file name) as a program.
fn load_file_source(path: &Path) -> SourceMap {
    let mut sources = SourceMap::new();
    sources.add(
        path.file_name().unwrap().to_string_lossy(),
        std::fs::read_to_string(path).unwrap(),
    );
    sources
}

/// `.rules` files and program directories directly under `dir`, sorted.
fn cases(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rules"))
        .collect();
    out.sort();
    out
}

/// The program of a case: a single file, or all files of a directory.
fn case_sources(path: &Path) -> SourceMap {
    if path.is_dir() {
        common::load_dir_sources(path)
    } else {
        load_file_source(path)
    }
}
