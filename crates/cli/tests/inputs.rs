//! The `kestrel` binary on inputs a hostile or careless user gives: endless files, files
//! whose `set` lines change the code, entry blocks used as loop headers.

use std::process::{Command, Output};

fn kestrel_on(args: &[&str], file: &str, text: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|&a| if a == "FILE" { path } else { a })
        .collect();
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(&args)
        .output()
        .expect("run kestrel")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// How far below `%caller`'s stack pointer `%leaf` runs: 8 (the return address) for a
/// leaf without a frame, 16 when the leaf saves `rbp` too.
const LEAF_DEPTH: &str = "function %leaf() -> i64 {
block0:
    v0 = get_stack_pointer.i64
    return v0
}

function %caller() -> i64 {
    fn0 = %leaf() -> i64
block0:
    v0 = get_stack_pointer.i64
    v1 = call fn0()
    v2 = isub v0, v1
    return v2
}
";

#[test]
fn run_honours_the_files_set_lines() {
    let with = format!("set preserve_frame_pointers\n{LEAF_DEPTH}");
    for opt in ["none", "speed"] {
        let args = ["run", "--opt-level", opt, "--fn", "caller", "FILE"];
        let o = kestrel_on(&args, "fp.clif", &with);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(
            text(&o.stdout).trim(),
            "16",
            "opt {opt}: {}",
            text(&o.stderr)
        );
        let o = kestrel_on(&args, "fp.clif", LEAF_DEPTH);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(
            text(&o.stdout).trim(),
            "8",
            "opt {opt}: {}",
            text(&o.stderr)
        );
    }
}

#[test]
fn an_endless_input_is_refused_by_name() {
    for args in [
        &["run", "/dev/zero"][..],
        &["compile", "/dev/zero"],
        &["verify", "/dev/zero"],
        &["wasm", "run", "/dev/zero"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_kestrel"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = text(&o.stderr);
        assert!(
            e.contains("/dev/zero: larger than the input limit of 256 MiB"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn a_branch_to_the_entry_block_is_a_verifier_error_everywhere() {
    let f = "test interpret
test run
target x86_64
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 -1
    v2 = iadd v0, v1
    brif v2, block0(v2), block1
block1:
    return v0
}
; run: %f(3) == 3
";
    for args in [
        &["run", "FILE", "3"][..],
        &["compile", "FILE"],
        &["test", "FILE"],
    ] {
        let o = kestrel_on(args, "entry.clif", f);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stdout));
        let all = text(&o.stderr) + &text(&o.stdout);
        assert!(
            all.contains("the entry block cannot be a branch target"),
            "{args:?}: {all}"
        );
        assert!(!all.contains("panicked"), "{args:?}: {all}");
    }
}

#[test]
fn stack_slots_too_large_to_address_are_refused_on_both_isas() {
    // 3 GB of slots would wrap a 32-bit frame size or displacement: an error, never code.
    let f = "function %big() -> i64 {
    ss0 = explicit_slot 2000000000
    ss1 = explicit_slot 1000000000
block0:
    v0 = stack_addr.i64 ss1
    return v0
}
";
    for target in ["x86_64", "aarch64"] {
        let o = kestrel_on(&["compile", "--target", target, "FILE"], "big.clif", f);
        assert_eq!(o.status.code(), Some(1), "{target}: {}", text(&o.stdout));
        let e = text(&o.stderr);
        assert!(
            e.contains(
                "stack slots of 3000000000 bytes in all (at most 1073741824 bytes per function)"
            ),
            "{target}: {e}"
        );
    }
}

#[test]
fn the_fallback_from_guard_pages_is_said_once_and_many_grows_stay_cheap() {
    // 4,096 one-page grows: with address space short (`ulimit -v`) the run falls back to
    // explicit checks, says so once, and still grows (geometrically, not by a copy each).
    let wat = "(module (memory 1)
      (func (export \"_start\") (local i32)
        (loop $l
          (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
          (local.set 0 (i32.add (local.get 0) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get 0) (i32.const 4096))))
        (if (i32.ne (memory.size) (i32.const 4097)) (then unreachable))))";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grow.wat");
    std::fs::write(&path, wat).unwrap();
    let o = Command::new("sh")
        .args(["-c", "ulimit -v 4000000 && exec \"$0\" wasm run \"$1\""])
        .arg(env!("CARGO_BIN_EXE_kestrel"))
        .arg(&path)
        .output()
        .unwrap();
    let e = text(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert_eq!(e.matches("using explicit bounds checks").count(), 1, "{e}");
    assert!(e.contains("is `ulimit -v` set?"), "{e}");
}

#[test]
fn a_malformed_text_module_is_refused_with_its_file_line_and_column() {
    let o = kestrel_on(
        &["wasm", "run", "FILE"],
        "bad.wat",
        "(module\n  (func (export \"_start\") br $nowhere))",
    );
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("bad.wat:2:"), "no file and line in {e:?}");
    assert!(
        e.contains("$nowhere"),
        "the unknown label is not named in {e:?}"
    );
}

#[test]
fn a_file_neither_binary_nor_text_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.wasm");
    std::fs::write(&path, b"\xff\xfe junk").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["wasm", "run"])
        .arg(&path)
        .output()
        .unwrap();
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("junk.wasm: neither a binary module"), "{e}");
}
