//! The WebAssembly spec test suite, run through Kestrel.
//!
//! Always: the committed smoke scripts in `tests/wast/` (every directive must pass; these
//! exercise the runner itself and the engine end to end).
//!
//! When the official suite is present (`KESTREL_WASM_TESTSUITE`, default
//! `/tmp/wasm-testsuite`): every `*.wast` file of the top level and of
//! `proposals/threads/` runs in a child process (so a crash in one file is a failure of that
//! file, not the end of the run), a per-file table of passed / failed / out-of-scope
//! directives with totals is printed to stderr for each of the two, and the test fails if
//! any directive failed. When the suite is absent (CI has none: it is fetched, not
//! committed), the test says so loudly and reports nothing as passed.
//!
//! Every script runs twice, with the modules compiled for guard-page memories and for
//! explicit bounds checks (`KESTREL_WASM_SPEC_MODE=guard|explicit` runs one mode only).
//!
//! The table's last column names what put directives out of scope: the refused proposals
//! the validator named, and a count of other reasons (components, modules tainted
//! by an out-of-scope one). `KESTREL_WASM_SPEC_MARKDOWN=FILE` also writes the tables as
//! Markdown.
//!
//! `KESTREL_WASM_SPEC_RUNNER="cmd args"` starts each child through `cmd args` (for a test
//! binary that itself runs under an emulator: `qemu-aarch64 -L /usr/aarch64-linux-gnu`,
//! since user-mode qemu hands `execve` of a foreign binary to the host kernel).
//! `KESTREL_WASM_SPEC_ONLY=name` runs only the files whose name contains `name`;
//! `KESTREL_WASM_SPEC_VERBOSE=1` prints each failure (and with `KESTREL_WASM_SPEC_PASSES=1`
//! the lines of the passing directives, to audit what counts as a pass).

#[path = "support/wast_runner.rs"]
mod wast_runner;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use kestrel_wasm::BoundsChecks;

/// Set in a child process: the one script it runs.
const CHILD_ENV: &str = "KESTREL_WASM_SPEC_FILE";
/// Set in a child process: the bounds-check mode it compiles for.
const CHILD_MODE_ENV: &str = "KESTREL_WASM_SPEC_CHILD_MODE";
const MODES: [BoundsChecks; 2] = [BoundsChecks::Guard, BoundsChecks::Explicit];

/// The modes to run: both, or the one `KESTREL_WASM_SPEC_MODE` names.
fn modes() -> Vec<BoundsChecks> {
    match std::env::var("KESTREL_WASM_SPEC_MODE") {
        Ok(m) => vec![m.parse().expect("KESTREL_WASM_SPEC_MODE")],
        Err(_) => MODES.to_vec(),
    }
}
const RESULT_TAG: &str = "KESTREL-SPEC-RESULT";

/// Print bypassing the test harness's capture, so the table shows without `--nocapture`.
fn report(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

fn run_in_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .expect("spawn runner thread")
        .join()
        .expect("runner thread panicked")
}

#[test]
fn smoke_scripts_pass_completely() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wast");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/wast exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wast"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no smoke scripts in {}", dir.display());
    for (file, mode) in files.iter().flat_map(|f| MODES.map(|m| (f, m))) {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.display().to_string();
        let r = run_in_big_stack(move || wast_runner::run_script(&name, &text, mode));
        assert!(
            r.failed == 0 && r.out_of_scope == 0 && r.passed > 0,
            "{} ({mode}): {} passed, {} failed, {} out of scope\n{}",
            file.display(),
            r.passed,
            r.failed,
            r.out_of_scope,
            r.failures.join("\n")
        );
    }
}

/// The child side: run the script named by the environment and print its counts.
#[test]
fn spec_file_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("read script");
    let mode: BoundsChecks = std::env::var(CHILD_MODE_ENV)
        .expect("the parent names the mode")
        .parse()
        .expect("a mode");
    let r = run_in_big_stack(move || wast_runner::run_script(&path, &text, mode));
    let mut out = String::new();
    for f in &r.failures {
        out.push_str(&format!("FAIL {f}\n"));
    }
    if std::env::var("KESTREL_WASM_SPEC_PASSES").is_ok_and(|v| v == "1") {
        let lines: Vec<String> = r.passed_lines.iter().map(|l| l.to_string()).collect();
        out.push_str(&format!("PASS lines {}\n", lines.join(" ")));
    }
    let mut reasons: Vec<_> = r.scope_reasons.iter().collect();
    reasons.sort();
    for (reason, n) in reasons {
        out.push_str(&format!("SCOPE {n} {}\n", reason.replace('\n', " ")));
    }
    out.push_str(&format!(
        "{RESULT_TAG} {} {} {}\n",
        r.passed, r.failed, r.out_of_scope
    ));
    report(&out);
}

struct FileResult {
    name: String,
    passed: usize,
    failed: usize,
    out_of_scope: usize,
    detail: String,
}

fn run_child(path: &Path, mode: BoundsChecks) -> FileResult {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("KESTREL_WASM_SPEC_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    let mut command = match words.next() {
        Some(program) => {
            let mut c = Command::new(program);
            c.args(words).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let output = command
        .args([
            "--exact",
            "spec_file_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, path)
        .env(CHILD_MODE_ENV, mode.to_string())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => {
            return FileResult {
                name,
                passed: 0,
                failed: 1,
                out_of_scope: 0,
                detail: format!("could not start: {e}"),
            }
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let counts = stderr.lines().find_map(|l| {
        let rest = l.strip_prefix(RESULT_TAG)?;
        let n: Vec<usize> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        (n.len() == 3).then(|| (n[0], n[1], n[2]))
    });
    match counts {
        Some((passed, failed, out_of_scope)) => FileResult {
            name,
            passed,
            failed,
            out_of_scope,
            detail: stderr,
        },
        None => FileResult {
            name,
            passed: 0,
            failed: 1,
            out_of_scope: 0,
            detail: format!("child crashed ({}):\n{stderr}", output.status),
        },
    }
}

#[test]
fn official_spec_suite_if_present() {
    let dir = std::env::var("KESTREL_WASM_TESTSUITE").unwrap_or("/tmp/wasm-testsuite".into());
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        report(&format!(
            "\n!!! WebAssembly spec suite NOT FOUND at {} — the spec tests were NOT run \
             (only the committed smoke scripts were). Set KESTREL_WASM_TESTSUITE to a \
             checkout of WebAssembly/testsuite to run them.\n\n",
            dir.display()
        ));
        return;
    }
    let only = std::env::var("KESTREL_WASM_SPEC_ONLY").ok();
    let verbose = std::env::var("KESTREL_WASM_SPEC_VERBOSE").is_ok_and(|v| v == "1");
    let mut failing = Vec::new();
    let markdown_out = std::env::var("KESTREL_WASM_SPEC_MARKDOWN").ok();
    let mut md = String::new();
    for section in SECTIONS {
        let section_dir = dir.join(section);
        let files = scripts_in(&section_dir, only.as_deref());
        if files.is_empty() {
            continue;
        }
        for mode in modes() {
            let results: Vec<FileResult> = files.iter().map(|f| run_child(f, mode)).collect();
            report(&table(&section_dir, mode, &results, verbose));
            md.push_str(&markdown(&section_dir, mode, &results));
            failing.extend(
                results
                    .iter()
                    .filter(|r| r.failed > 0)
                    .map(|r| format!("{section}{} ({mode})", r.name)),
            );
        }
    }
    if let Some(path) = markdown_out {
        std::fs::write(&path, md).expect("write KESTREL_WASM_SPEC_MARKDOWN");
    }
    assert!(
        failing.is_empty(),
        "spec directives failed in {failing:?}; rerun with KESTREL_WASM_SPEC_VERBOSE=1"
    );
}

/// The parts of the suite that run, each with its own tables: the top level (Wasm 3.0) and
/// the threads proposal. (`legacy/`, the old exception handling, is not run: the `wast`
/// crate does not parse its folded `(try (do …) (catch …))` form, so none of its scripts
/// reads.)
const SECTIONS: [&str; 2] = ["", "proposals/threads/"];

/// The `*.wast` scripts directly in `dir` (none if it is missing) whose name contains
/// `only`, sorted.
fn scripts_in(dir: &Path, only: Option<&str>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wast"))
        .filter(|p| only.is_none_or(|o| p.file_name().unwrap().to_string_lossy().contains(o)))
        .collect();
    files.sort();
    files
}

/// What put a file's directives out of scope, from its child's `SCOPE` lines: the refused
/// proposals named there (`the SIMD proposal` → `SIMD`), then the other reasons with their
/// counts (`custom sections ×3`).
fn refused(detail: &str) -> String {
    let mut proposals: Vec<String> = Vec::new();
    let mut other: Vec<(String, usize)> = Vec::new();
    for line in detail.lines() {
        let Some(rest) = line.strip_prefix("SCOPE ") else {
            continue;
        };
        let (count, reason) = rest.split_once(' ').unwrap_or((rest, ""));
        let count = count.parse::<usize>().unwrap_or(1);
        let named = reason.find("the ").and_then(|at| {
            let after = &reason[at + 4..];
            after.find(" proposal").map(|end| after[..end].to_string())
        });
        match named {
            Some(p) if !proposals.contains(&p) => proposals.push(p),
            Some(_) => {}
            None => {
                // The reason's gist: up to a parenthesis or a colon (the detail after it
                // differs per directive).
                let gist = reason.split(['(', ':']).next().unwrap_or(reason).trim();
                match other.iter_mut().find(|(g, _)| g == gist) {
                    Some((_, n)) => *n += count,
                    None => other.push((gist.to_string(), count)),
                }
            }
        }
    }
    proposals.sort();
    other.sort();
    let other = other.into_iter().map(|(g, n)| format!("{g} ×{n}"));
    proposals
        .into_iter()
        .chain(other)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The per-file table as Markdown (for `KESTREL_WASM_SPEC_MARKDOWN=FILE`).
fn markdown(dir: &Path, mode: BoundsChecks, results: &[FileResult]) -> String {
    let mut md = format!(
        "### {} — bounds checks: {mode}\n\n| file | passed | failed | out of scope | refused |\n|---|---:|---:|---:|---|\n",
        dir.display()
    );
    let (mut p, mut f, mut o) = (0, 0, 0);
    for r in results {
        md.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.name,
            r.passed,
            r.failed,
            r.out_of_scope,
            refused(&r.detail)
        ));
        p += r.passed;
        f += r.failed;
        o += r.out_of_scope;
    }
    md.push_str(&format!(
        "| **total** ({} files) | {p} | {f} | {o} | |\n\n",
        results.len()
    ));
    md
}

/// The per-file table of one mode's run, with its totals.
fn table(dir: &Path, mode: BoundsChecks, results: &[FileResult], verbose: bool) -> String {
    let mut table = format!(
        "\nWebAssembly spec suite at {}, bounds checks: {mode}\n{:<40} {:>7} {:>7} {:>7}\n",
        dir.display(),
        "file",
        "passed",
        "failed",
        "o.o.s."
    );
    let (mut p, mut f, mut o) = (0, 0, 0);
    for r in results {
        table.push_str(&format!(
            "{:<40} {:>7} {:>7} {:>7}  {}\n",
            r.name,
            r.passed,
            r.failed,
            r.out_of_scope,
            refused(&r.detail)
        ));
        if verbose && r.failed > 0 {
            for line in r.detail.lines().filter(|l| !l.starts_with(RESULT_TAG)) {
                table.push_str(&format!("    {line}\n"));
            }
        }
        p += r.passed;
        f += r.failed;
        o += r.out_of_scope;
    }
    table.push_str(&format!(
        "{:<40} {:>7} {:>7} {:>7}\nspec directives ({mode}): {p} passed, {f} failed, {o} out \
         of scope ({} files)\n",
        "TOTAL",
        p,
        f,
        o,
        results.len()
    ));
    table
}
