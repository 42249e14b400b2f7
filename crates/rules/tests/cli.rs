//! The `kestrel-rules` binary and the build-script API.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kestrel-rules"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"));
    c
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn check_valid_program_exits_zero() {
    let out = bin()
        .args(["check", "pass/priorities.rules"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn check_reports_overlap_with_locations_and_no_colour() {
    let out = bin()
        .args(["check", "fail/overlap.rules"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("note: also matches: fail/overlap.rules:3:1"),
        "{stderr}"
    );
    assert!(stderr.contains("fail/overlap.rules:4:1"), "{stderr}");
    assert!(
        !stderr.contains('\x1b'),
        "no ANSI colour when stderr is not a terminal"
    );
}

#[test]
fn check_several_files_as_one_program() {
    let out = bin()
        .args(["check", "pass/two_files/a.rules", "pass/two_files/b.rules"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = bin()
        .args(["check", "pass/two_files/a.rules"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a.rules alone lacks b.rules' definitions"
    );
}

#[test]
fn warnings_do_not_change_exit_status() {
    let out = bin()
        .args(["check", "pass/warning.rules"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("warning[useless-clause]: this `if` always succeeds"));
}

#[test]
fn compile_writes_output_for_both_backends() {
    let tree = tmp("tree.rs");
    let naive = tmp("naive.rs");
    let out = bin()
        .args(["compile", "pass/features.rules", "-o"])
        .arg(&tree)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = bin()
        .args(["compile", "pass/features.rules", "--naive", "--log", "-o"])
        .arg(&naive)
        .output()
        .unwrap();
    assert!(out.status.success());
    let tree = std::fs::read_to_string(tree).unwrap();
    let naive = std::fs::read_to_string(naive).unwrap();
    assert!(tree.contains("pub trait Context"));
    assert!(tree.contains("// rule at pass/features.rules:"));
    assert!(tree.contains("match &v"));
    assert!(naive.contains("ctx.log_rule(\"pass/features.rules:"));
    assert!(!tree.contains("log_rule"));
    assert!(!tree.contains("RULE_SITES") && !tree.contains("rule_fired"));
}

#[test]
fn compile_with_coverage_lists_every_rule() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-coverage");
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("cov.rs");
    let out = bin()
        .args(["compile", "pass/features.rules", "--coverage", "-o"])
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let code = std::fs::read_to_string(out_path).unwrap();
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pass/features.rules"),
    )
    .unwrap();
    let rules = source
        .lines()
        .filter(|l| l.trim_start().starts_with("(rule"))
        .count();
    let start = code.find("pub const RULE_SITES: &[&str] = &[").unwrap();
    let list = &code[start..start + code[start..].find("];").unwrap()];
    assert_eq!(list.matches("\"pass/features.rules:").count(), rules);
    for k in 0..rules {
        assert!(code.contains(&format!("ctx.rule_fired({k});")), "rule {k}");
    }
    assert!(code.contains("fn rule_fired(&mut self, rule: usize);"));
}

#[test]
fn compile_to_stdout_is_deterministic() {
    let run = || {
        bin()
            .args([
                "compile",
                "pass/two_files/a.rules",
                "pass/two_files/b.rules",
            ])
            .output()
            .unwrap()
    };
    let (a, b) = (run(), run());
    assert!(a.status.success());
    assert!(!a.stdout.is_empty());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn missing_file_is_an_io_error() {
    let out = bin()
        .args(["check", "no/such/file.rules"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn build_api_writes_file_or_reports_diagnostics() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let dir = tmp("build");
    std::fs::create_dir_all(&dir).unwrap();
    let options = kestrel_rules::Options::default();
    let path = kestrel_rules::build::compile_to(
        &[tests.join("pass/disjoint.rules")],
        &dir,
        "disjoint.rs",
        &options,
    )
    .expect("valid rules");
    assert!(std::fs::read_to_string(path)
        .unwrap()
        .contains("constructor_lower"));
    let err = kestrel_rules::build::compile_to(
        &[tests.join("fail/shadow.rules")],
        &dir,
        "shadow.rs",
        &options,
    )
    .expect_err("invalid rules");
    let text = err.to_string();
    assert!(text.contains("can never fire"), "{text}");
    assert!(text.contains("shadow.rules:6:1"), "{text}");
}
