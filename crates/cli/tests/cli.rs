//! The `kestrel` binary end to end: outputs, exit statuses, and errors for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kestrel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .output()
        .expect("run kestrel")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file `name` holding `contents` in a scratch directory of its own; both go when the
/// value is dropped (at the end of the test, passed or failed).
struct Scratch {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

fn scratch(name: &str, contents: &[u8]) -> Scratch {
    let dir = scratch_dir("kestrel-cli-test-");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    Scratch { path, _dir: dir }
}

/// An empty scratch directory, removed when dropped.
fn scratch_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("a scratch directory")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn run_prints_results_in_run_line_syntax() {
    let fib = repo().join("examples/fib.clif");
    let o = kestrel(&["run", fib.to_str().unwrap(), "--fn", "%fib", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "55\n");
    let o = kestrel(&["run", fib.to_str().unwrap(), "--fn", "fib", "0x5a"]);
    assert_eq!(stdout(&o), "2880067194370816120\n");
}

#[test]
fn run_reports_traps_with_status_2() {
    let p = scratch(
        "div.clif",
        b"function %d(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = udiv v0, v1\n    return v2\n}\n",
    );
    let o = kestrel(&["run", p.to_str().unwrap(), "7", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).starts_with("trap: int_divz"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("(at line 3, calling %d)"),
        "the udiv's line: {}",
        stdout(&o)
    );
    let o = kestrel(&["run", p.to_str().unwrap(), "-7", "2"]);
    assert_eq!(stdout(&o), "2147483644\n", "udiv of 0xfffffff9 by 2");
}

#[test]
fn bad_input_is_an_error_with_status_1_never_a_panic() {
    let cases: Vec<(&str, &[u8], &str)> = vec![
        ("empty.clif", b"", "empty.clif:1:1"),
        ("nul.clif", b"function %f() {\0}", "nul.clif:1:"),
        ("utf8.clif", b"function %f() {\n  \xff\n}", "utf8.clif:2:3"),
        (
            "undefined.clif",
            b"function %f() -> i32 {\nblock0:\n    return v9\n}\n",
            "undefined.clif:3:",
        ),
    ];
    for (name, contents, location) in cases {
        let p = scratch(name, contents);
        for cmd in ["verify", "print", "run"] {
            let o = kestrel(&[cmd, p.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(1), "{cmd} {name}: {}", stderr(&o));
            assert!(
                stderr(&o).contains(location),
                "{cmd} {name}: {}",
                stderr(&o)
            );
        }
    }
    let fib = repo().join("examples/fib.clif");
    for args in [
        vec!["run", fib.to_str().unwrap(), "--fn", "nope"],
        vec!["run", fib.to_str().unwrap(), "1", "2"],
        vec!["run", fib.to_str().unwrap(), "zz"],
        vec!["run", "/no/such/file.clif"],
        vec!["test", "/no/such/dir"],
    ] {
        let o = kestrel(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn verifier_errors_name_the_place() {
    let p = scratch(
        "types.clif",
        b"function %f(i32, i64) -> i32 {\nblock0(v0: i32, v1: i64):\n    v2 = iadd v0, v1\n    return v2\n}\n",
    );
    let o = kestrel(&["verify", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("3:"), "the line of the bad iadd: {err}");
    assert!(err.contains("%f"), "the function: {err}");
}

#[test]
fn test_command_summarizes_and_sets_status() {
    let good = scratch(
        "good.clif",
        b"test interpret\nfunction %f(i8) -> i8 {\nblock0(v0: i8):\n    v1 = iadd v0, v0\n    return v1\n}\n; run: %f(100) == -56\n",
    );
    let bad = scratch(
        "bad.clif",
        b"test interpret\nfunction %f(i8) -> i8 {\nblock0(v0: i8):\n    return v0\n}\n; run: %f(1) == 2\n",
    );
    let skip = scratch(
        "skip.clif",
        b"test compile\nfunction %f() {\nblock0:\n    return\n}\n",
    );
    let o = kestrel(&["test", good.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).lines().last(),
        Some("1 passed, 0 failed, 0 skipped")
    );
    let o = kestrel(&[
        "test",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        skip.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("FAIL") && out.contains("line 6: expected 2, got 1"),
        "{out}"
    );
    assert!(out.contains("SKIP"), "{out}");
    assert_eq!(out.lines().last(), Some("1 passed, 1 failed, 1 skipped"));
}

#[test]
fn help_explains_each_command() {
    for cmd in ["test", "run", "print", "verify"] {
        let o = kestrel(&[cmd, "--help"]);
        assert!(o.status.success());
        assert!(stdout(&o).contains("Usage"), "{cmd}");
    }
}

#[test]
fn regalloc_stress_reports_and_catches_faults() {
    let o = kestrel(&["regalloc-stress", "--seed", "3", "--count", "40"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("stats: "), "{out}");
    assert_eq!(
        out.lines().last(),
        Some("40 functions, 0 checker failures, 0 executor mismatches")
    );
    let o = kestrel(&[
        "regalloc-stress",
        "--seed",
        "4",
        "--count",
        "40",
        "--inject-faults",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last = stdout(&o).lines().last().unwrap_or_default().to_string();
    let (changed, caught) = last
        .strip_prefix("faults: ")
        .and_then(|rest| {
            let words: Vec<&str> = rest.split_whitespace().collect();
            Some((words.get(2)?.to_string(), words.get(5)?.to_string()))
        })
        .unwrap_or_else(|| panic!("unexpected summary: {last}"));
    assert_eq!(
        changed, caught,
        "every fault that changes results is caught: {last}"
    );
}

#[test]
fn fuzz_reports_progress_and_ends_with_the_count_line() {
    let tmp = scratch_dir("kestrel-fuzz-out-");
    let out = tmp.path().join("failures");
    let o = kestrel(&[
        "fuzz",
        "--seed",
        "7",
        "--count",
        "40",
        "--chaos",
        "--coverage",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("oracles: interpreter, native, native-chaos"),
        "{err}"
    );
    assert!(err.lines().all(|l| l.starts_with("fuzz: ")), "{err}");
    assert!(err.contains("40 cases ("), "{err}");
    let out_text = stdout(&o);
    assert!(out_text.contains("opcodes exercised: "), "{out_text}");
    assert!(out_text.ends_with("40 cases, 0 failures\n"), "{out_text}");
    // Nothing was written: no failure.
    assert!(!out.exists());
}

#[test]
fn fuzz_scaling_reports_each_shape_and_ends_with_the_count_line() {
    let o = kestrel(&[
        "fuzz",
        "--scaling",
        "--seed",
        "3",
        "--count",
        "5",
        "--scaling-base",
        "48",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out_text = stdout(&o);
    let lines: Vec<&str> = out_text.lines().collect();
    assert_eq!(lines.len(), 6, "{out_text}");
    // The fixed exit chains come first, then a random shape; every line reports each
    // counted phase's growth at the three doublings and a verdict.
    assert!(lines[0].starts_with("exit chain (hot)"), "{out_text}");
    assert!(lines[4].starts_with("random#"), "{out_text}");
    for line in &lines[..5] {
        for phase in ["liveness", "intervals", "scan", "resolve"] {
            assert!(line.contains(&format!(" {phase} ")), "{line}");
        }
        assert!(line.ends_with(" ok") || line.ends_with(" SLOW"), "{line}");
    }
    assert!(lines[5].starts_with("5 shapes, 0 failures, "), "{out_text}");
    let o = kestrel(&["fuzz", "--scaling", "--chaos", "--count", "1"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "clap rejects --chaos with --scaling"
    );
}

#[test]
fn fuzz_flags_are_checked() {
    let o = kestrel(&["fuzz", "--time", "1", "--count", "3"]);
    assert_eq!(o.status.code(), Some(2), "clap rejects conflicting limits");
    if !cfg!(feature = "cranelift") {
        let o = kestrel(&["fuzz", "--count", "1", "--against-cranelift"]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("--features cranelift"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn compile_timing_prints_phases_per_function_and_a_total_but_no_code() {
    let text = b"function %a(i64) -> i64 {
block0(v0: i64):
    v1 = iadd v0, v0
    return v1
}

function %b(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2
block1:
    return v0
block2:
    v1 = iconst.i32 7
    return v1
}
";
    let file = scratch("timing.clif", text);
    let out = kestrel(&[
        "compile",
        "--timing",
        "--check-regalloc",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    for phase in [
        "parse",
        "verify",
        "mid-end",
        "lower",
        "liveness",
        "intervals",
        "alloc",
        "resolve",
        "checker",
        "emit",
        "total",
    ] {
        assert!(header.contains(&phase), "no {phase} column: {}", lines[0]);
    }
    // One row per function (name, insts, blocks, then numbers), then the total.
    let a: Vec<&str> = lines[1].split_whitespace().collect();
    let b: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!((a[0], a[1], a[2]), ("%a", "2", "1"), "{text}");
    assert_eq!((b[0], b[1], b[2]), ("%b", "4", "3"), "{text}");
    assert!(lines[3].starts_with("total (2 functions)"), "{text}");
    for row in &lines[1..4] {
        let numbers = row.split_whitespace().rev().take(12);
        assert!(numbers.clone().all(|x| x.parse::<f64>().is_ok()), "{row}");
    }
    // The peak live vreg count of %b is at least 1 (v0 lives into both branches).
    assert!(b.last().unwrap().parse::<u32>().unwrap() >= 1, "{text}");
    assert!(!text.contains("ret"), "no code is printed: {text}");
}

#[test]
fn a_closed_output_pipe_ends_quietly() {
    // Far more output than a pipe holds, so writes continue after the reader is gone.
    let one =
        "function %f(i64) -> i64 {\nblock0(v0: i64):\n    v1 = iadd v0, v0\n    return v1\n}\n";
    let file = scratch("many.clif", one.repeat(3000).as_bytes());
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["compile", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run kestrel");
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn compile_dash_o_writes_an_object_that_cc_links() {
    let tmp = scratch_dir("kestrel-cli-o-");
    let dir = tmp.path();
    let obj = dir.join("fib.o");
    let fib = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/fib.clif");
    let out = kestrel(&["compile", fib, "-o", obj.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "no code is printed with -o");
    let main = dir.join("main.c");
    std::fs::write(
        &main,
        "#include <stdio.h>\nlong fib(long);\nint main(void) { printf(\"%ld\\n\", fib(50)); return 0; }\n",
    )
    .unwrap();
    let exe = dir.join("fib");
    let cc = Command::new("cc")
        .arg(&main)
        .arg(&obj)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("cc is installed (.ci/run installs gcc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "12586269025\n");
    // A bad input is an error naming the place, and no file is written.
    let bad = dir.join("bad.clif");
    std::fs::write(&bad, "function %f() { block0: bogus }").unwrap();
    let bad_obj = dir.join("bad.o");
    let out = kestrel(&[
        "compile",
        bad.to_str().unwrap(),
        "-o",
        bad_obj.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.clif:1:"));
    assert!(!bad_obj.exists());
}

/// The 1-based line of the first line of `text` containing `needle` after line `after`.
fn line_of(text: &str, needle: &str, after: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(after)
        .find(|(_, l)| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` after line {after}"))
        .0
        + 1
}

fn gdb(args: &[&str], debug_info: bool, program: &[&str]) -> String {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx"]);
    for a in args {
        cmd.args(["-ex", a]);
    }
    cmd.arg("--args")
        .arg(env!("CARGO_BIN_EXE_kestrel"))
        .args(program);
    if debug_info {
        cmd.env("KESTREL_DEBUG_INFO", "1");
    } else {
        cmd.env_remove("KESTREL_DEBUG_INFO");
    }
    let out = cmd
        .output()
        .expect("gdb is installed (.ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn gdb_shows_jit_frames_with_their_clif_lines() {
    let text = std::fs::read_to_string(repo().join("tests/programs/trap_chain.clif")).unwrap();
    let file = scratch("trap_chain.clif", text.as_bytes());
    let path = file.to_str().unwrap();
    let program = ["run", "--fn", "top", path, "7"];
    let middle = line_of(&text, "function %middle", 0);
    let top = line_of(&text, "function %top", 0);

    // Stopped at the trap: every Kestrel frame has its name and the line of its instruction.
    let out = gdb(&["run", "bt"], true, &program);
    for (name, line) in [
        ("leaf", line_of(&text, "udiv", 0)),
        ("middle", line_of(&text, "call fn0", middle)),
        ("top", line_of(&text, "call fn0", top)),
    ] {
        let at = format!(" {name} () at {path}:{line}");
        assert!(out.contains(&at), "no `{at}` in:\n{out}");
    }
    // A breakpoint on a JIT function, set before the code exists, stops after its prologue
    // at its first line with code.
    let out = gdb(
        &["set breakpoint pending on", "break middle", "run", "bt 1"],
        true,
        &program,
    );
    let at = format!("middle () at {path}:{}", line_of(&text, "iadd", middle));
    assert!(out.contains(&at), "no `{at}` in:\n{out}");
    // Without debug info gdb knows nothing of the JIT code.
    let out = gdb(&["run", "bt"], false, &program);
    assert!(out.contains("SIGILL"), "{out}");
    assert!(!out.contains("leaf () at"), "{out}");
}

#[test]
fn compile_dash_g_adds_dwarf_line_tables() {
    let tmp = scratch_dir("kestrel-cli-g-");
    let dir = tmp.path();
    let src = repo().join("tests/programs/trap_chain.clif");
    let sections = |args: &[&str], obj: &Path| {
        let mut all = vec![
            "compile",
            src.to_str().unwrap(),
            "-o",
            obj.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        let out = kestrel(&all);
        assert!(out.status.success(), "{}", stderr(&out));
        let o = Command::new("readelf")
            .arg("-SW")
            .arg(obj)
            .output()
            .expect("readelf is installed (.ci/run installs binutils)");
        stdout(&o)
    };
    let with = sections(&["-g"], &dir.join("g.o"));
    for s in [
        ".debug_info",
        ".debug_line",
        ".debug_abbrev",
        ".rela.debug_info",
    ] {
        assert!(with.contains(s), "no {s} in\n{with}");
    }
    let without = sections(&[], &dir.join("plain.o"));
    assert!(!without.contains(".debug_"), "{without}");
    // `-g` means nothing without an object to write.
    let out = kestrel(&["compile", src.to_str().unwrap(), "-g"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--output"), "{}", stderr(&out));
}

#[test]
fn test_via_object_links_and_judges_run_files() {
    let fib = repo().join("examples/fib.clif");
    let o = kestrel(&["test", "--via-object", fib.to_str().unwrap()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).ends_with("1 passed, 0 failed, 0 skipped\n"),
        "{}",
        stdout(&o)
    );
    // A wrong expectation fails through the object as it does natively, and so does a trap
    // where a value was expected.
    let wrong = scratch(
        "wrong_via_object.clif",
        b"test run\ntarget x86_64\nfunction %d(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = udiv v0, v1\n    return v2\n}\n; run: %d(7, 2) == 3\n; run: %d(7, 2) == 4\n; run: %d(1, 0) == 0\n",
    );
    let o = kestrel(&["test", "--via-object", wrong.to_str().unwrap()]);
    assert!(!o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains("FAIL") && out.contains("line 9") && out.contains("line 10"),
        "{out}"
    );
    assert!(!out.contains("line 8"), "{out}");
}

#[test]
fn wasm_run_invokes_an_export_and_reports_traps() {
    let fac = repo().join("examples/fac.wat");
    let fac = fac.to_str().unwrap();
    let o = kestrel(&["wasm", "run", fac, "--invoke", "fac", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "2432902008176640000");
    let o = kestrel(&["wasm", "run", fac, "--invoke", "div", "-7", "2"]);
    assert_eq!(stdout(&o).trim(), "-3", "{}", stderr(&o));
    let o = kestrel(&["wasm", "run", fac, "--invoke", "div", "1", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("integer divide by zero"),
        "{}",
        stderr(&o)
    );
    // No `_start`: the error lists what can be invoked.
    let o = kestrel(&["wasm", "run", fac]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("div, fac"), "{}", stderr(&o));
    let o = kestrel(&["wasm", "run", fac, "--invoke", "fac", "twenty"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a valid i64"), "{}", stderr(&o));
}

#[test]
fn wasm_compile_timing_prints_each_step() {
    let module = scratch(
        "timed.wat",
        br#"(module (memory 1)
            (func $sum (export "sum") (param i32) (result i32) (local i32)
              (block (loop
                (br_if 1 (i32.eqz (local.get 0)))
                (local.set 1 (i32.add (local.get 1) (i32.load (local.get 0))))
                (local.set 0 (i32.sub (local.get 0) (i32.const 4)))
                (br 0)))
              (local.get 1))
            (func (export "twice") (param i32) (result i32)
              (i32.add (call $sum (local.get 0)) (call $sum (local.get 0)))))"#,
    );
    for level in ["speed", "none"] {
        let o = kestrel(&[
            "wasm",
            "compile",
            "--timing",
            "--opt-level",
            level,
            module.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains(": 2 functions"), "{text}");
        // Every step has a row ending in a number of milliseconds (and, for the steps
        // summed over threads, a share).
        for step in [
            "decode and declare",
            "validate bodies",
            "translate to IR",
            "mid-end",
            "block order and lowering",
            "regalloc: intervals",
            "regalloc: allocation",
            "emission",
            "link",
        ] {
            let row = text
                .lines()
                .find(|l| l.contains(step))
                .unwrap_or_else(|| panic!("no `{step}` row: {text}"));
            let ms = row[row.find(step).unwrap() + step.len()..]
                .split_whitespace()
                .find_map(|x| x.parse::<f64>().ok());
            assert!(ms.is_some_and(|ms| ms >= 0.0), "{row}");
        }
        let mid_end = text.lines().find(|l| l.contains("mid-end")).unwrap();
        let mid_end_ms: f64 = mid_end.split_whitespace().nth(1).unwrap().parse().unwrap();
        // The mid-end only runs at `speed` (and only then is it timed).
        if level == "none" {
            assert_eq!(mid_end_ms, 0.0, "{text}");
        }
        assert!(text.contains("functions/s"), "{text}");
        // Then the slowest functions, by name: both of this module's.
        let slowest = &text[text.find("slowest functions").expect(&text)..];
        assert!(slowest.contains("$sum (function 0)"), "{text}");
        assert!(slowest.contains("function 1"), "{text}");
    }
    let o = kestrel(&["wasm", "compile", module.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("translate"),
        "no table without --timing"
    );
}

#[test]
fn wasm_bounds_check_modes_trap_alike_and_emit_clif_shows_the_checks() {
    let peek = scratch(
        "peek.wat",
        br#"(module (memory 1)
            (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0))))"#,
    );
    let peek = peek.to_str().unwrap();
    for mode in ["guard", "explicit"] {
        let o = kestrel(&[
            "wasm",
            "run",
            "--bounds-checks",
            mode,
            peek,
            "--invoke",
            "peek",
            "65535",
        ]);
        assert_eq!(stdout(&o).trim(), "0", "{mode}: {}", stderr(&o));
        let o = kestrel(&[
            "wasm",
            "run",
            "--bounds-checks",
            mode,
            peek,
            "--invoke",
            "peek",
            "65536",
        ]);
        assert_eq!(o.status.code(), Some(2), "{mode}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("out of bounds memory access"),
            "{mode}: {}",
            stderr(&o)
        );
    }
    let o = kestrel(&["wasm", "run", "--bounds-checks", "fences", peek]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    assert!(
        stderr(&o).contains("`guard` or `explicit`"),
        "{}",
        stderr(&o)
    );
    let dir = Path::new(peek).parent().unwrap().join("peek-clif");
    for (mode, checks) in [("guard", 0), ("explicit", 1)] {
        let o = kestrel(
            &["wasm", "compile", "--bounds-checks", mode, "--emit-clif"]
                .into_iter()
                .chain([dir.to_str().unwrap(), peek])
                .collect::<Vec<_>>(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let clif = std::fs::read_to_string(dir.join("wasm-func-0.clif")).unwrap();
        // Guard mode: the access may trap (heap_oob, the default code, prints no flag)
        // and nothing checks it; explicit mode: a check, then a `notrap` access.
        assert_eq!(clif.matches("trapnz").count(), checks, "{mode}: {clif}");
        assert_eq!(
            clif.matches("notrap heap").count(),
            checks,
            "{mode}: {clif}"
        );
        let o = kestrel(&["verify", dir.join("wasm-func-0.clif").to_str().unwrap()]);
        assert!(
            o.status.success(),
            "the emitted CLIF parses and verifies: {}",
            stderr(&o)
        );
    }
}

#[test]
fn wasm_run_refuses_unknown_imports_and_bad_modules_with_a_message() {
    let imports = scratch(
        "imports.wat",
        br#"(module
            (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
            (import "env" "host_thing" (func))
            (import "bench" "start" (func))
            (import "env" "table" (table 1 funcref)))"#,
    );
    let o = kestrel(&["wasm", "run", imports.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("imports env.host_thing, env.table, which"),
        "only the imports that are neither WASI nor Sightglass's are named: {err}"
    );
    // WASI and the Sightglass markers are provided: a module without `_start` gets that far.
    let wasi = scratch(
        "wasi.wat",
        br#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
            (import "bench" "end" (func)) (memory (export "memory") 1))"#,
    );
    let o = kestrel(&["wasm", "run", wasi.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no exported function `_start`"),
        "{}",
        stderr(&o)
    );
    let bad = scratch("bad.wasm", b"\0asm\x01\0\0\0\x01\x05");
    let o = kestrel(&["wasm", "run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let simd = scratch(
        "simd.wat",
        b"(module (func (result v128) (v128.const i32x4 0 0 0 0)))",
    );
    let o = kestrel(&["wasm", "run", simd.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).to_lowercase().contains("simd"), "{}", stderr(&o));
}

#[test]
fn aarch64_files_compile_test_and_write_objects_for_aarch64() {
    let file = scratch(
        "a64.clif",
        b"test run\ntarget aarch64\nfunction %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = udiv v0, v1\n    return v2\n}\n; run: %f(50, 7) == 7\n; trap: %f(1, 0) == int_divz\n",
    );
    let path = file.to_str().unwrap();
    let o = kestrel(&["compile", path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("udiv"), "{text}");
    // The trap is `udf` with the trap code (int_divz, 254) as its immediate.
    assert!(text.contains("udf #0xfe") && text.contains("ret"), "{text}");
    let obj = file.with_extension("o");
    let o = kestrel(&["compile", path, "-o", obj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let elf = std::fs::read(&obj).unwrap();
    // e_machine (offset 18) is EM_AARCH64, 183.
    assert_eq!(u16::from_le_bytes([elf[18], elf[19]]), 183);
    // `kestrel test` runs the file under qemu-aarch64; a wrong expectation fails there.
    let o = kestrel(&["test", path]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).ends_with("1 passed, 0 failed, 0 skipped\n"),
        "{}",
        stdout(&o)
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let bad = scratch("a64_bad.clif", source.replace("== 7", "== 8").as_bytes());
    let o = kestrel(&["test", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stdout(&o).contains("aarch64: %f: line 8: expected 8, got 7"),
        "{}",
        stdout(&o)
    );
}

/// A WASI program in text form: prints its arguments and environment (NULs as newlines)
/// and the contents of `note.txt` opened through preopen fd 3, calls the Sightglass
/// markers, and exits with its argument count.
const WASI_ECHO: &[u8] = br#"(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $env_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $env_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "bench" "start" (func $bench_start))
  (import "bench" "end" (func $bench_end))
  (memory (export "memory") 1)
  (data (i32.const 200) "note.txt")
  ;; Print `len` bytes at `at` with each NUL turned into a newline.
  (func $print (param $at i32) (param $len i32)
    (local $i i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (if (i32.eqz (i32.load8_u (i32.add (local.get $at) (local.get $i))))
        (then (i32.store8 (i32.add (local.get $at) (local.get $i)) (i32.const 10))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.store (i32.const 8) (local.get $at))
    (i32.store (i32.const 12) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 16))))
  (func (export "_start")
    (call $bench_start)
    (drop (call $args_sizes (i32.const 0) (i32.const 4)))
    (drop (call $args_get (i32.const 1024) (i32.const 4096)))
    (call $print (i32.const 4096) (i32.load (i32.const 4)))
    (drop (call $env_sizes (i32.const 20) (i32.const 24)))
    (drop (call $env_get (i32.const 2048) (i32.const 8192)))
    (call $print (i32.const 8192) (i32.load (i32.const 24)))
    ;; note.txt, read-only, through fd 3; its fd at 32; 100 bytes read into 12288.
    (drop (call $path_open (i32.const 3) (i32.const 1) (i32.const 200) (i32.const 8)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 32)))
    (i32.store (i32.const 40) (i32.const 12288))
    (i32.store (i32.const 44) (i32.const 100))
    (drop (call $fd_read (i32.load (i32.const 32)) (i32.const 40) (i32.const 1) (i32.const 48)))
    (call $print (i32.const 12288) (i32.load (i32.const 48)))
    (call $bench_end)
    (call $proc_exit (i32.load (i32.const 0)))))"#;

#[test]
fn wasm_run_gives_a_wasi_program_its_arguments_environment_and_directories() {
    let program = scratch("echo.wat", WASI_ECHO);
    let dir = program.parent().unwrap().join("echo-dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("note.txt"), "from the preopen\n").unwrap();
    let mapping = format!("{}::/data", dir.display());
    let o = kestrel(&[
        "wasm",
        "run",
        "--dir",
        &mapping,
        "--env",
        "A=1",
        "--env",
        "B=x=y",
        program.to_str().unwrap(),
        "first",
        "--second",
        "",
    ]);
    let expected = format!(
        "{}\nfirst\n--second\n\nA=1\nB=x=y\nfrom the preopen\n",
        program.display()
    );
    assert_eq!(stdout(&o), expected, "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(4), "the exit code is argc");
    let o = kestrel(&[
        "wasm",
        "run",
        "--dir",
        "/nonexistent/kestrel",
        program.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("/nonexistent/kestrel"),
        "{}",
        stderr(&o)
    );
    let o = kestrel(&[
        "wasm",
        "run",
        "--env",
        "NOEQUALS",
        program.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("KEY=VALUE"), "{}", stderr(&o));
}

#[test]
fn wasm_run_reports_a_trap_with_its_function_offset_and_status_2() {
    let program = scratch(
        "trap.wat",
        br#"(module
            (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
            (memory (export "memory") 1)
            (func $check_input (param i32) (if (i32.eqz (local.get 0)) (then unreachable)))
            (func (export "_start") (call $check_input (i32.const 0)) (call $exit (i32.const 3)))
            (func (export "exit_with") (param i32) (call $exit (local.get 0))))"#,
    );
    let program = program.to_str().unwrap();
    let o = kestrel(&["wasm", "run", program]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("unreachable") && err.contains("$check_input (function 1), at offset 0x"),
        "{err}"
    );
    // proc_exit from an invoked export: the exit code; out of range: status 1 with a note.
    let o = kestrel(&["wasm", "run", program, "--invoke", "exit_with", "42"]);
    assert_eq!(o.status.code(), Some(42), "{}", stderr(&o));
    let o = kestrel(&["wasm", "run", program, "--invoke", "exit_with", "256"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("exited with code 256"),
        "{}",
        stderr(&o)
    );
}
