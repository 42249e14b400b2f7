//! The Sightglass benchmark programs through `kestrel wasm run`, compared with their
//! expected output. The benchmarks are fetched, never committed, so the test runs them only
//! when `KESTREL_SIGHTGLASS` names their directory; otherwise it prints that they were not
//! run (never that they passed). With a release binary's speed in mind, run it as
//!
//! ```text
//! KESTREL_SIGHTGLASS=/tmp/sightglass/benchmarks \
//!     cargo test --release -p kestrel --test sightglass -- --nocapture
//! ```
//!
//! Every `*.wasm` one directory below `KESTREL_SIGHTGLASS` runs in its own process (a crash
//! is that benchmark's failure), in its directory, with that directory preopened as `.`, as
//! Sightglass runs it; stdout and stderr are compared byte for byte with
//! `NAME.stdout.expected` / `NAME.stderr.expected` (else `default.*.expected`, as
//! libsodium's directory has). A pass/fail table goes to stderr. Outcomes:
//! - `pass`: exit status 0 and both streams as expected (`pass*`: ran with status 0, no
//!   expected files to compare with);
//! - `refused`: Kestrel refused the module with an error naming why, by design — a proposal
//!   it does not support (SIMD, GC, ...), a component instead of a core module, or imports
//!   beyond WASI preview 1 (wasi-nn);
//! - `no-input`: the run failed and the benchmark's workload, `default.input`, is not in
//!   its directory because Sightglass generates it (`generate_input.*`) rather than ships
//!   it (rust-protobuf): the benchmark cannot pass as unpacked, whatever runs it;
//! - `FAIL`: anything else — a trap, another exit status, different output, a crash, or
//!   no end within the time limit. The test fails if any benchmark fails.
//!
//! Each benchmark runs once per bounds-check mode, `--bounds-checks guard` and `explicit`
//! (`KESTREL_SIGHTGLASS_BOUNDS_CHECKS=guard` or `=explicit` runs one mode only).
//!
//! `KESTREL_SIGHTGLASS_ONLY=text` runs the benchmarks whose path contains `text`;
//! `KESTREL_SIGHTGLASS_JOBS` (default 2) runs that many at once; `KESTREL_SIGHTGLASS_TIMEOUT`
//! is the limit per benchmark in seconds (default 900).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Print bypassing the test harness's capture.
fn report(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

fn benchmarks(root: &Path, only: Option<&str>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let dirs = std::fs::read_dir(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    for dir in dirs.map(|d| d.unwrap().path()).filter(|d| d.is_dir()) {
        for file in std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()) {
            if file.extension().is_some_and(|e| e == "wasm")
                && only.is_none_or(|o| file.to_string_lossy().contains(o))
            {
                found.push(file);
            }
        }
    }
    found.sort();
    found
}

/// `NAME.KIND.expected` next to the benchmark, else `default.KIND.expected`.
fn expected(wasm: &Path, kind: &str) -> Option<Vec<u8>> {
    let dir = wasm.parent()?;
    let stem = wasm.file_stem()?.to_string_lossy();
    [
        dir.join(format!("{stem}.{kind}.expected")),
        dir.join(format!("default.{kind}.expected")),
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok())
}

enum Outcome {
    Pass { compared: bool },
    Refused(String),
    NoInput(String),
    Fail(String),
}

/// The benchmark's generated workload is missing (see the module docs).
fn input_not_generated(dir: &Path) -> bool {
    let generator = std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("generate_input")
        })
    });
    generator && !dir.join("default.input").exists()
}

/// The first line of `bytes` that differs from `expected`, for the table.
fn first_difference(name: &str, got: &[u8], expected: &[u8]) -> String {
    let got = String::from_utf8_lossy(got);
    let expected = String::from_utf8_lossy(expected);
    let (mut g, mut e) = (got.lines(), expected.lines());
    for line in 1.. {
        match (g.next(), e.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (a, b) => {
                return format!(
                    "{name} line {line}: got {:?}, expected {:?}",
                    a.unwrap_or("<end>"),
                    b.unwrap_or("<end>")
                )
            }
        }
    }
    unreachable!()
}

fn run_one(wasm: &Path, mode: &str, timeout: Duration) -> (Outcome, Duration) {
    let start = Instant::now();
    let dir = wasm.parent().expect("a benchmark is in a directory");
    let child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["wasm", "run", "--bounds-checks", mode, "--dir", "."])
        .arg(wasm.file_name().expect("a file"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return (
                Outcome::Fail(format!("cannot start kestrel: {e}")),
                start.elapsed(),
            )
        }
    };
    // Drain the pipes on threads so a chatty benchmark cannot block on a full pipe.
    let mut out_pipe = child.stdout.take().expect("piped");
    let mut err_pipe = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out_pipe, &mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err_pipe, &mut v);
        v
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let elapsed = start.elapsed();
    let Some(status) = status else {
        return (Outcome::Fail(format!("no end within {timeout:?}")), elapsed);
    };
    let err_text = String::from_utf8_lossy(&stderr);
    let outcome = match status.code() {
        Some(1) if is_refusal(&err_text) => {
            Outcome::Refused(err_text.lines().next().unwrap_or("").to_string())
        }
        Some(0) => {
            let expected_out = expected(wasm, "stdout");
            let expected_err = expected(wasm, "stderr");
            let compared = expected_out.is_some() || expected_err.is_some();
            if let Some(e) = expected_out.filter(|e| *e != stdout) {
                Outcome::Fail(first_difference("stdout", &stdout, &e))
            } else if let Some(e) = expected_err.filter(|e| *e != stderr) {
                Outcome::Fail(first_difference("stderr", &stderr, &e))
            } else {
                Outcome::Pass { compared }
            }
        }
        code => Outcome::Fail(format!(
            "exit status {code:?}: {}",
            err_text.lines().last().unwrap_or("")
        )),
    };
    let outcome = match outcome {
        Outcome::Fail(why) if input_not_generated(dir) => {
            Outcome::NoInput(format!("default.input is generated, not shipped; {why}"))
        }
        other => other,
    };
    (outcome, elapsed)
}

/// Kestrel refused the module by design (not a failure of what it supports).
fn is_refusal(stderr: &str) -> bool {
    let first = stderr.lines().next().unwrap_or("");
    first.contains(": unsupported at byte")
        || first.contains("which `kestrel wasm run` does not provide")
        || (first.contains("invalid module") && first.contains("component"))
}

#[test]
fn sightglass_benchmarks_if_present_print_their_expected_output() {
    let Some(root) = std::env::var_os("KESTREL_SIGHTGLASS") else {
        report(
            "Sightglass benchmarks NOT run: set KESTREL_SIGHTGLASS to the fetched Sightglass \
             `benchmarks` directory to run them (see this file's doc)\n",
        );
        return;
    };
    let only = std::env::var("KESTREL_SIGHTGLASS_ONLY").ok();
    let jobs: usize = std::env::var("KESTREL_SIGHTGLASS_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or(2)
        .max(1);
    let timeout = Duration::from_secs(
        std::env::var("KESTREL_SIGHTGLASS_TIMEOUT")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(900),
    );
    let modes = std::env::var("KESTREL_SIGHTGLASS_BOUNDS_CHECKS")
        .unwrap_or_else(|_| "guard,explicit".into());
    let modes: Vec<&'static str> = modes
        .split(',')
        .map(|m| match m {
            "guard" => "guard",
            "explicit" => "explicit",
            other => panic!("KESTREL_SIGHTGLASS_BOUNDS_CHECKS: unknown mode `{other}`"),
        })
        .collect();
    let root = PathBuf::from(root);
    let all = benchmarks(&root, only.as_deref());
    assert!(!all.is_empty(), "no *.wasm below {}", root.display());
    let runs: Vec<(PathBuf, &'static str)> = all
        .iter()
        .flat_map(|w| modes.iter().map(move |&m| (w.clone(), m)))
        .collect();
    let queue = Arc::new(Mutex::new(runs));
    let results = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..jobs)
        .map(|_| {
            let (queue, results) = (queue.clone(), results.clone());
            std::thread::spawn(move || loop {
                let Some((wasm, mode)) = queue.lock().unwrap().pop() else {
                    break;
                };
                let (outcome, time) = run_one(&wasm, mode, timeout);
                results.lock().unwrap().push((wasm, mode, outcome, time));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut results = Arc::try_unwrap(results).ok().unwrap().into_inner().unwrap();
    results.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let (mut passed, mut refused, mut no_input, mut failed) = (0, 0, 0, 0);
    let mut table = String::from("\nSightglass benchmarks through `kestrel wasm run`\n");
    for (wasm, mode, outcome, time) in &results {
        let name = wasm.strip_prefix(&root).unwrap_or(wasm).display();
        let (tag, detail) = match outcome {
            Outcome::Pass { compared: true } => ("pass", String::new()),
            Outcome::Pass { compared: false } => ("pass*", "no expected output to compare".into()),
            Outcome::Refused(why) => ("refused", why.clone()),
            Outcome::NoInput(why) => ("no-input", why.clone()),
            Outcome::Fail(why) => ("FAIL", why.clone()),
        };
        match outcome {
            Outcome::Pass { .. } => passed += 1,
            Outcome::Refused(_) => refused += 1,
            Outcome::NoInput(_) => no_input += 1,
            Outcome::Fail(_) => failed += 1,
        }
        table += &format!(
            "{tag:<8} {mode:<8} {:>8.2}s  {name}  {detail}\n",
            time.as_secs_f64()
        );
    }
    table += &format!(
        "{} runs ({} benchmarks, bounds checks {}): {passed} pass, {refused} refused by \
         design, {no_input} without their generated input, {failed} FAIL\n",
        results.len(),
        all.len(),
        modes.join(" and ")
    );
    report(&table);
    assert_eq!(
        failed, 0,
        "{failed} Sightglass benchmarks failed (table above)"
    );
}
