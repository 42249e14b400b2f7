//! What a hostile program does to the `kestrel` binary: runaway recursion reports `stk_ovf`
//! (in `run` and in `test`), a fault that is no trap names the function and offset before
//! the process dies, and `kestrel test` survives a file that crashes its process.

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Command, Output};

/// `kestrel ARGS` under a shell that first sets the stack limit to 8 MiB, so the main
/// thread's stack (which `kestrel run` uses) has a known size.
fn kestrel_8mib_stack(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -s 8192 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .output()
        .expect("run kestrel")
}

fn kestrel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .output()
        .expect("run kestrel")
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `%rec(n)` calls itself forever; a real call (the add after it keeps it from being a
/// tail call).
const RECURSE: &str = "test run
target x86_64

function %rec(i64) -> i64 {
    fn0 = colocated %rec(i64) -> i64
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    v3 = call fn0(v2)
    v4 = iadd v3, v0
    return v4
}
; trap: %rec(0) == stk_ovf
";

/// `%bad()` loads from address 0 with a `notrap` load: a fault that is no trap.
const NULL_LOAD: &str = "test run
target x86_64

function %bad() -> i64 {
block0:
    v0 = iconst.i64 0
    v1 = load.i64 notrap aligned v0
    return v1
}
; run: %bad() == 0
";

const PASSES: &str = "test run
target x86_64

function %add(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
; run: %add(2, 3) == 5
";

fn write(dir: &Path, name: &str, contents: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().unwrap().to_string()
}

fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("kestrel-crash-test-")
        .tempdir()
        .expect("a scratch directory")
}

#[test]
fn run_reports_runaway_recursion_as_stk_ovf_on_the_main_thread() {
    let dir = scratch_dir();
    let file = write(dir.path(), "rec.clif", RECURSE);
    let out = kestrel_8mib_stack(&["run", &file, "0"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        text_of(&out.stderr)
    );
    let stdout = text_of(&out.stdout);
    assert!(stdout.starts_with("trap: stk_ovf"), "{stdout}");
    assert!(stdout.contains("%rec"), "{stdout}");
}

#[test]
fn run_reports_a_frame_larger_than_the_stack_as_stk_ovf() {
    // 64 MiB of frame on an 8 MiB main-thread stack: `kestrel run` compiles with probes, so
    // the first probe past the stack limit traps instead of the frame skipping the guard.
    let dir = scratch_dir();
    let text = "function %big(i64) -> i64 {
    ss0 = explicit_slot 67108864
block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store.i64 v0, v1
    v2 = load.i64 v1
    return v2
}
";
    let file = write(dir.path(), "big.clif", text);
    let out = kestrel_8mib_stack(&["run", &file, "7"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        text_of(&out.stderr)
    );
    let stdout = text_of(&out.stdout);
    assert!(stdout.starts_with("trap: stk_ovf"), "{stdout}");
}

#[test]
fn run_names_the_function_and_offset_of_a_fault_that_is_no_trap() {
    let dir = scratch_dir();
    let file = write(dir.path(), "bad.clif", NULL_LOAD);
    let out = kestrel_8mib_stack(&["run", &file]);
    assert!(!out.status.success());
    assert_eq!(
        out.status.signal(),
        Some(libc_sigsegv()),
        "{:?}",
        out.status
    );
    let stderr = text_of(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kestrel-jit: fatal SIGSEGV"))
        .unwrap_or_else(|| panic!("no fatal-fault line in stderr: {stderr}"));
    assert!(line.contains("fault address 0x0)"), "{line}");
    assert!(line.contains("of JIT function `bad`"), "{line}");
    // The offset is that of the load, inside the function's few bytes.
    let offset = line
        .split("at offset 0x")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .unwrap_or_else(|| panic!("no offset in {line}"));
    assert!(offset < 64, "{line}");
}

/// SIGSEGV's number on Linux (every architecture Kestrel's JIT runs on).
fn libc_sigsegv() -> i32 {
    11
}

#[test]
fn test_reports_runaway_recursion_as_the_expected_trap() {
    let dir = scratch_dir();
    let file = write(dir.path(), "rec.clif", RECURSE);
    let out = kestrel(&["test", &file]);
    let stdout = text_of(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text_of(&out.stderr));
    assert!(stdout.contains("PASS "), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("1 passed, 0 failed, 0 skipped"));
}

#[test]
fn test_survives_a_file_that_crashes_and_summarizes() {
    let dir = scratch_dir();
    let files = [
        write(dir.path(), "a.clif", PASSES),
        write(dir.path(), "b.clif", NULL_LOAD),
        write(dir.path(), "c.clif", PASSES),
    ];
    // One worker (the files after the crash need a fresh one) and the default count.
    for jobs in ["1", "0"] {
        let mut args = vec!["test", "-j", jobs];
        args.extend(files.iter().map(String::as_str));
        let out = kestrel(&args);
        let stdout = text_of(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "-j {jobs}: {stdout}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 4, "-j {jobs}: {stdout}");
        assert_eq!(lines[0], format!("PASS {}", files[0]));
        assert!(
            lines[1].starts_with(&format!("FAIL {}: ", files[1]))
                && lines[1].contains("crashed")
                && lines[1].contains("SIGSEGV"),
            "-j {jobs}: {}",
            lines[1]
        );
        assert_eq!(lines[2], format!("PASS {}", files[2]));
        assert_eq!(lines[3], "2 passed, 1 failed, 0 skipped");
        // The worker's own message names the faulting function.
        let stderr = text_of(&out.stderr);
        assert!(stderr.contains("JIT function `bad`"), "{stderr}");
    }
}

#[test]
fn test_fails_a_file_that_hangs_and_runs_on() {
    let dir = scratch_dir();
    // Native code that never returns (the interpreter would stop it by fuel; a native run
    // has no such bound).
    let hangs = "test run
target x86_64

function %spin() -> i64 {
block0:
    jump block1
block1:
    jump block1
}
; run: %spin() == 0
";
    let files = [
        write(dir.path(), "a.clif", hangs),
        write(dir.path(), "b.clif", PASSES),
    ];
    let out = kestrel(&["test", "-j", "1", "--timeout", "2", &files[0], &files[1]]);
    let stdout = text_of(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with(&format!("FAIL {}: ", files[0])) && lines[0].contains("timed out"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], format!("PASS {}", files[1]));
    assert_eq!(lines[2], "1 passed, 1 failed, 0 skipped");
}

#[test]
fn test_in_process_keeps_the_old_behaviour_for_files_that_do_not_crash() {
    let dir = scratch_dir();
    let file = write(dir.path(), "a.clif", PASSES);
    let out = kestrel(&["test", "--in-process", &file]);
    assert!(out.status.success());
    assert_eq!(
        text_of(&out.stdout),
        format!("PASS {file}\n1 passed, 0 failed, 0 skipped\n")
    );
}
