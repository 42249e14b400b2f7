//! `--target` and `--set` on `compile`, `run` and `test`: the command line's target replaces
//! the file's `target` lines (AArch64 code runs under qemu-aarch64).

use std::process::{Command, Output};

fn kestrel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .output()
        .expect("run kestrel")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const ADD: &str = "function %add(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
";

/// `body` in a scratch file, with `header` lines before it.
fn file(header: &str, body: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.clif");
    std::fs::write(&path, format!("{header}{body}")).unwrap();
    let path = path.to_str().unwrap().to_string();
    (dir, path)
}

#[test]
fn compile_for_aarch64_with_no_target_line_or_an_x86_one() {
    for header in ["", "target x86_64\n"] {
        let (_dir, path) = file(header, ADD);
        let o = kestrel(&["compile", "--target", "aarch64", "--disasm", &path]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        // `add x0, x0, x1` and `ret`, as AArch64 words.
        assert!(
            out.contains("8b010000") && out.contains("d65f03c0"),
            "{out}"
        );
        let note = text(&o.stderr);
        assert_eq!(
            note.contains("note: --target aarch64 replaces the file's `target x86_64` line(s)"),
            !header.is_empty(),
            "{note}"
        );
    }
    // And the other way: an AArch64 file compiled for x86-64.
    let (_dir, path) = file("target aarch64\n", ADD);
    let o = kestrel(&["compile", "--target", "x86_64", &path]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("c3  ret"), "{}", text(&o.stdout));
}

#[test]
fn run_and_test_for_aarch64_under_qemu() {
    let (_dir, path) = file(
        "test run\ntarget x86_64\n",
        &format!("{ADD}; run: %add(40, 2) == 42\n"),
    );
    let o = kestrel(&["run", "--target", "aarch64 has_lse", &path, "40", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "42");
    let o = kestrel(&["test", "--target", "aarch64", "--set", "has_lse", &path]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

#[test]
fn bad_targets_and_flags_are_named() {
    let (_dir, path) = file("", ADD);
    for (args, message) in [
        (
            &["compile", "--target", "riscv64"][..],
            "unknown target `riscv64`",
        ),
        (
            &["compile", "--target", "aarch64 has_avx"],
            "unknown aarch64 flag `has_avx`",
        ),
        (
            &["run", "--target", "x86_64", "--set", "has_lse"],
            "--set has_lse: neither a setting nor an x86_64 flag",
        ),
        (&["test", "--target", ""], "--target needs an ISA"),
    ] {
        let mut all = args.to_vec();
        all.push(&path);
        let o = kestrel(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            text(&o.stderr).contains(message),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // `--set` alone is refused by the argument parser (exit 2), naming `--target`.
    let o = kestrel(&["compile", "--set", "has_lse", &path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--target"), "{}", text(&o.stderr));
}
