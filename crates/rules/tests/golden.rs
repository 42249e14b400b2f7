//! Golden tests. `tests/pass/` programs must compile (any warnings match
//! `NAME.stderr`); `tests/fail/` programs must fail with exactly the diagnostics in
//! `NAME.stderr`. A case is a `.rules` file or a directory of them (one program).
//! Run with `BLESS=1` to rewrite the expected files.

mod common;

use kestrel_rules::{compile, Backend, Options};
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
    let cases = common::cases(&dir("pass"));
    assert!(cases.len() >= 5);
    for case in cases {
        let sources = common::case_sources(&case);
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
    let cases = common::cases(&dir("fail"));
    assert!(cases.len() >= 10);
    for case in cases {
        let sources = common::case_sources(&case);
        match compile(&sources, &Options::default()) {
            Ok(_) => panic!("{} should fail to compile", case.display()),
            Err(diags) => {
                assert!(diags.has_errors());
                common::golden(&golden_path(&case), &diags.render());
            }
        }
    }
}
