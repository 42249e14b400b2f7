//! Runs test files: `test interpret` and `test run` files with `; run:` directives.
//!
//! One result per file: PASS when every part that could run passed, SKIP only when nothing
//! in it could run, FAIL otherwise. `test interpret` runs in the interpreter; `test run`
//! runs natively once per `target` line of the host's ISA (x86-64 or AArch64), on an
//! x86-64 host once under `qemu-aarch64` when the file has `target aarch64` lines (through
//! an AArch64 object: see `object_run.rs`), and in the interpreter under `--interpret-only`. The last line of a
//! report is exactly `N passed, M failed, K skipped`, counting files.

pub mod directives;
pub mod input;
pub mod isolate;
pub mod native;
pub mod object_run;
pub mod target_override;
pub mod vec_wrap;

use std::sync::Arc;

use kestrel_codegen::isa::TargetIsa;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use directives::{Expectation, Run};
use kestrel_interp::{DataValue, Interpreter};

/// Instructions one run line may execute before it is stopped.
pub const FUEL_PER_RUN: u64 = 200_000_000;

/// `set` flags known to Cranelift that do not change what a program computes, so the
/// interpreter can ignore them silently. Others get a warning.
pub(crate) const KNOWN_SETTINGS: &[&str] = &[
    "opt_level",
    "enable_verifier",
    "enable_multi_ret_implicit_sret",
    "enable_llvm_abi_extensions",
    "enable_probestack",
    "probestack_strategy",
    "probestack_size_log2",
    "preserve_frame_pointers",
    "unwind_info",
    "machine_code_cfg_info",
    "enable_table_access_spectre_mitigation",
    "enable_heap_access_spectre_mitigation",
    "bb_padding_log2_minus_one",
    "enable_nan_canonicalization",
    "enable_alias_analysis",
    "enable_pinned_reg",
    "regalloc_checker",
    "regalloc_algorithm",
    "use_colocated_libcalls",
    "enable_atomics",
    "enable_float",
    "is_pic",
    "libcall_call_conv",
    "tls_model",
    "stack_switch_model",
    "enable_safepoints",
    "log2_min_function_alignment",
];

/// Options of a test run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Run `test run` files in the interpreter too, ignoring targets.
    pub interpret_only: bool,
    /// Worker threads (0 = one per core).
    pub jobs: usize,
    /// Print each run line's outcome.
    pub verbose: bool,
    /// Run `test run` files through an ELF object linked by `cc` and run as a separate
    /// process (see `object_run.rs`) instead of in-process; `test interpret` files are
    /// skipped.
    pub via_object: bool,
    /// Native runs at this opt level only (`None`: at each of `none` and `speed`, the
    /// mid-end's failures prefixed `opt_level=speed:`). The file's own `set opt_level` is
    /// ignored: every file runs at every level asked for.
    pub opt_level: Option<native::OptLevel>,
    /// Run every file for this target instead of its own `target` lines (`kestrel test
    /// --target`); a file that named another ISA gets a note saying so.
    pub target: Option<target_override::TargetOverride>,
}

/// The outcome of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail(Vec<String>),
    Skip(String),
}

/// One file's report.
#[derive(Clone, Debug)]
pub struct FileReport {
    pub path: PathBuf,
    pub outcome: Outcome,
    /// Warnings and (with `verbose`) per-run details, printed under the result line.
    pub notes: Vec<String>,
}

impl FileReport {
    /// The report's lines: `PASS path`, `FAIL path: why`, or `SKIP path: why`, then notes.
    pub fn render(&self) -> String {
        let p = self.path.display();
        let mut out = match &self.outcome {
            Outcome::Pass => format!("PASS {p}"),
            Outcome::Fail(why) => {
                let mut s = format!("FAIL {p}: {}", why[0]);
                for more in &why[1..] {
                    s.push_str(&format!("\n    also: {more}"));
                }
                s
            }
            Outcome::Skip(why) => format!("SKIP {p}: {why}"),
        };
        for n in &self.notes {
            out.push_str("\n    ");
            out.push_str(n);
        }
        out
    }
}

/// Counts over files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// Expand directories into their `.clif` files (sorted); keep files as given.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out).map_err(|e| format!("{}: {e}", p.display()))?;
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for e in entries {
        if e.is_dir() {
            walk(&e, out)?;
        } else if e.extension().is_some_and(|x| x == "clif") {
            out.push(e);
        }
    }
    Ok(())
}

/// The stack of each thread that runs files: deep recursion in interpreted code needs more
/// than the default thread stack.
pub(crate) const WORKER_STACK: usize = 256 << 20;

/// Worker count for `files` files: `opts.jobs`, or one per core, at most one per file.
pub(crate) fn job_count(opts: &Options, files: usize) -> usize {
    match opts.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(files.max(1))
}

/// Run every file in this process, printing each report through `emit` as it finishes (in
/// path order) and returning the summary. A file that crashes the process ends the run:
/// [`isolate::run_files_isolated`] is the form that survives it.
pub fn run_files(files: &[PathBuf], opts: &Options, emit: impl FnMut(&FileReport)) -> Summary {
    let jobs = job_count(opts, files.len());
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, FileReport)>();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let next = &next;
            std::thread::Builder::new()
                .stack_size(WORKER_STACK)
                .spawn_scoped(s, move || loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= files.len() || tx.send((i, run_file(&files[i], opts))).is_err() {
                        break;
                    }
                })
                .expect("spawn a test worker");
        }
        drop(tx);
        emit_in_order(rx, emit)
    })
}

/// Emit the reports arriving on `rx` (tagged with their file's index, in any order) in index
/// order, counting them; ends when every sender is gone.
pub(crate) fn emit_in_order(
    rx: mpsc::Receiver<(usize, FileReport)>,
    mut emit: impl FnMut(&FileReport),
) -> Summary {
    let mut summary = Summary::default();
    let mut waiting = BTreeMap::new();
    let mut next_to_emit = 0;
    for (i, report) in rx {
        waiting.insert(i, report);
        while let Some(report) = waiting.remove(&next_to_emit) {
            match report.outcome {
                Outcome::Pass => summary.passed += 1,
                Outcome::Fail(_) => summary.failed += 1,
                Outcome::Skip(_) => summary.skipped += 1,
            }
            emit(&report);
            next_to_emit += 1;
        }
    }
    summary
}

/// Run one file.
pub fn run_file(path: &Path, opts: &Options) -> FileReport {
    let mut notes = Vec::new();
    let outcome = match input::read_input(path) {
        Err(e) => Outcome::Fail(vec![format!("cannot read: {e}")]),
        Ok(bytes) if opts.via_object => match String::from_utf8(bytes) {
            Ok(text) => {
                static NEXT: AtomicUsize = AtomicUsize::new(0);
                let dir = std::env::temp_dir().join(format!(
                    "kestrel-test-object-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                ));
                let mut header = directives::scan(&text);
                if let Some(note) = opts.target.as_ref().and_then(|o| o.apply(&mut header)) {
                    notes.push(note);
                }
                let outcome = object_run::run_via_object_for(
                    object_run::ObjectTarget::X86_64,
                    &kestrel_codegen::chaos::Chaos::disabled,
                    &header,
                    &text,
                    &path.display().to_string(),
                    &dir,
                );
                let _ = std::fs::remove_dir_all(&dir);
                outcome
            }
            Err(_) => Outcome::Fail(vec!["not UTF-8".into()]),
        },
        Ok(bytes) => run_bytes(&bytes, &path.display().to_string(), opts, &mut notes),
    };
    FileReport {
        path: path.to_path_buf(),
        outcome,
        notes,
    }
}

/// Run the text of a test file (`name` is used in messages).
pub fn run_bytes(bytes: &[u8], name: &str, opts: &Options, notes: &mut Vec<String>) -> Outcome {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => {
            return match kestrel_ir::text::parse_bytes(bytes, name) {
                Err(e) => Outcome::Fail(vec![e.to_string()]),
                Ok(_) => Outcome::Fail(vec!["file is not UTF-8".into()]),
            }
        }
    };
    let mut header = directives::scan(text);
    if let Some(note) = opts.target.as_ref().and_then(|o| o.apply(&mut header)) {
        notes.push(note);
    }
    for s in &header.settings {
        if !KNOWN_SETTINGS.contains(&s.name.as_str()) {
            notes.push(format!(
                "warning: line {}: unknown setting `{}` ignored",
                s.line, s.name
            ));
        }
    }
    let interpret = header.commands.iter().any(|c| c == "interpret");
    let run = header.commands.iter().any(|c| c == "run");
    if !interpret && !run {
        return Outcome::Skip("no `test interpret` or `test run` command".into());
    }
    // `test run` runs natively once per `target` line of the host's ISA and, on any other
    // host, under qemu once for the `target aarch64` lines (under --interpret-only, in the
    // interpreter instead); `test interpret` runs in the interpreter.
    let has_target = |isa: &str| header.targets.iter().any(|t| t.isa == isa);
    let host = kestrel_codegen::isa::host().map_or("none", |h| h.name());
    let native = run && !opts.interpret_only && has_target(host);
    let emulated = run && !opts.interpret_only && host != "aarch64" && has_target("aarch64");
    let interpreted = interpret || (run && opts.interpret_only);
    if !interpreted && !native && !emulated {
        let lines = if host == "aarch64" {
            "a `target aarch64` line (this is an AArch64 machine)"
        } else {
            "a `target x86_64` or `target aarch64` line"
        };
        return Outcome::Skip(format!("`test run` without {lines} (use --interpret-only)"));
    }
    let funcs = match kestrel_ir::parse_functions(text, name) {
        Ok(f) => f,
        Err(e) => return Outcome::Fail(vec![e.to_string()]),
    };
    let mut failures = Vec::new();
    for f in &funcs {
        if let Err(errs) = kestrel_ir::verify_function(f) {
            failures.push(format!("verifier: {errs}"));
        }
    }
    if !failures.is_empty() {
        return Outcome::Fail(failures);
    }
    if header.runs.is_empty() {
        return Outcome::Skip("no run directives".into());
    }
    let mut warn = true;
    if interpreted {
        let mut interp = Interpreter::new(&funcs).with_fuel(Some(FUEL_PER_RUN));
        let mut call = |f: &str, args: &[DataValue]| {
            interp.call(f, args).map_err(|e| CallError {
                trap: e.trap_code(),
                message: e.to_string(),
            })
        };
        run_directives(&header, &funcs, opts, notes, warn, &mut call, &mut failures);
        warn = false;
    }
    if native {
        // One native run per `target` line of the host's ISA, for a CPU with that line's
        // features, and per opt level.
        let levels = match opts.opt_level {
            Some(level) => vec![level],
            None => vec![native::OptLevel::None, native::OptLevel::Speed],
        };
        let targets = header.targets.iter().filter(|t| t.isa == host);
        for (target, level) in targets.flat_map(|t| levels.iter().map(move |&l| (t, l))) {
            // `funcs` were verified above.
            let before = failures.len();
            let target_and_flags = native_isa(Some(target))
                .and_then(|isa| Ok((isa, native_flags(&header, Some(target))?)));
            let (isa, flags) = match target_and_flags {
                Ok((isa, flags)) => (
                    isa,
                    native::Flags {
                        verified: true,
                        opt_level: level,
                        ..flags
                    },
                ),
                Err(e) => {
                    failures.push(e);
                    continue;
                }
            };
            let no_chaos = kestrel_codegen::chaos::Chaos::disabled;
            match native::NativeModule::build(&isa, &funcs, &flags, &no_chaos, &mut |_| {}) {
                Ok(module) => {
                    let mut call = |f: &str, args: &[DataValue]| {
                        module.call_raw(f, args).map_err(|e| match e {
                            native::NativeError::Trap(t) => CallError {
                                trap: Some(t.code),
                                message: format!(
                                    "trap {} at offset {:#x} in %{f}",
                                    t.code, t.offset
                                ),
                            },
                            native::NativeError::Other(message) => CallError {
                                trap: None,
                                message,
                            },
                        })
                    };
                    run_directives(&header, &funcs, opts, notes, warn, &mut call, &mut failures);
                    warn = false;
                }
                Err(errors) => failures.extend(errors),
            }
            if level != native::OptLevel::None {
                for f in &mut failures[before..] {
                    *f = format!("opt_level={}: {f}", level.name());
                }
            }
        }
    }
    if emulated {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kestrel-test-aarch64-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let target = object_run::ObjectTarget::Aarch64;
        let no_chaos = kestrel_codegen::chaos::Chaos::disabled;
        let outcome = object_run::run_via_object_for(target, &no_chaos, &header, text, name, &dir);
        if let Outcome::Fail(why) = outcome {
            failures.extend(why.into_iter().map(|w| format!("aarch64: {w}")));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    if failures.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(failures)
    }
}

/// Compilation flags for a file's `set` lines and one of its `target` lines (`None`: the
/// settings of the whole file): the register-allocation checker is on; stack probes as
/// [`probe_setting`] reads them; `preserve_frame_pointers` and `enable_pinned_reg` as set. (The line's `has_*` flags belong to its ISA: see
/// [`target_isa`].)
pub fn native_flags(
    header: &directives::Header,
    target: Option<&directives::Target>,
) -> Result<native::Flags, String> {
    Ok(native::Flags {
        check_regalloc: true,
        preserve_frame_pointers: setting_is_true(header, "preserve_frame_pointers"),
        enable_pinned_reg: setting_is_true(header, "enable_pinned_reg"),
        probestack_size_log2: probe_setting(header, target.map_or(usize::MAX, |t| t.line))?,
        ..native::Flags::default()
    })
}

/// Compilation flags for a file's `set` lines and one of its `target aarch64` lines: its
/// `has_*` flags select AArch64 extensions (the code runs under qemu, which emulates them
/// all); the register-allocation checker is on; stack probes as [`probe_setting`] reads them.
pub fn aarch64_flags(
    header: &directives::Header,
    target: &directives::Target,
) -> Result<native::Flags, String> {
    Ok(native::Flags {
        probestack_size_log2: probe_setting(header, target.line)?,
        ..native_flags(header, None)?
    })
}

/// The target a file compiles for, with its flags: the ISA of its first `target` line
/// naming one Kestrel compiles for (the host's when none does; x86-64 on another host), that line's `has_*` flags
/// (never beyond the host CPU's when the ISA is the host's), the file's `set` lines before
/// it as [`native_flags`] reads them.
pub fn file_target(
    header: &directives::Header,
) -> Result<(Arc<dyn TargetIsa>, native::Flags), String> {
    let line = header
        .targets
        .iter()
        .find(|t| kestrel_codegen::isa::names().any(|n| n == t.isa));
    let host = kestrel_codegen::isa::host().map_or("x86_64", |h| h.name());
    let name = line.map_or(host, |t| t.isa.as_str());
    let mut builder = target_builder(name, line)?;
    if kestrel_codegen::isa::host().is_ok_and(|h| h.name() == name) {
        builder.only_host_features();
    }
    Ok((builder.finish(), native_flags(header, line)?))
}

/// The target of a `target` line for ISA `isa` (`None`: no line, the ISA's default
/// features): the ISA's default features with the line's `has_*` flags applied (on x86-64
/// the defaults are the host's, on AArch64 the base ISA). For code that runs in this
/// process, [`native_isa`] also drops what the host lacks.
pub fn target_isa(
    isa: &str,
    target: Option<&directives::Target>,
) -> Result<Arc<dyn TargetIsa>, String> {
    Ok(target_builder(isa, target)?.finish())
}

/// [`target_isa`] for code run natively: the host's ISA, with no feature beyond the host
/// CPU's.
pub fn native_isa(target: Option<&directives::Target>) -> Result<Arc<dyn TargetIsa>, String> {
    let host = kestrel_codegen::isa::host().map_err(|e| e.to_string())?;
    let mut builder = target_builder(host.name(), target)?;
    Ok(builder.only_host_features().finish())
}

fn target_builder(
    isa: &str,
    target: Option<&directives::Target>,
) -> Result<kestrel_codegen::isa::Builder, String> {
    let mut builder = kestrel_codegen::isa::lookup(isa).map_err(|e| e.to_string())?;
    for flag in target.iter().flat_map(|t| &t.flags) {
        builder.set(flag);
    }
    Ok(builder)
}

/// The stack probe setting for a `target` line at `line`: on when `set enable_probestack`
/// precedes the line, every `2^probestack_size_log2` bytes (12 unless set; a value that is
/// not a number is an error naming the setting; one out of range is reported by compiling).
pub fn probe_setting(header: &directives::Header, line: usize) -> Result<Option<u8>, String> {
    let setting = |name: &str| setting_before(header, name, line);
    if setting("enable_probestack") != Some("true") {
        return Ok(None);
    }
    match setting("probestack_size_log2") {
        None => Ok(Some(12)),
        Some(v) => v.parse::<u8>().map(Some).map_err(|_| {
            format!(
                "set probestack_size_log2={v}: not a number (the probe interval's log2, 4..=23)"
            )
        }),
    }
}

/// The value of the last `set name` line before `line` (`"true"` for a bare `set name`):
/// a `target` line takes the settings above it.
fn setting_before<'h>(header: &'h directives::Header, name: &str, line: usize) -> Option<&'h str> {
    header
        .settings
        .iter()
        .rev()
        .find(|s| s.name == name && s.line < line)
        .map(|s| s.value.as_deref().unwrap_or("true"))
}

/// Whether a boolean `set` line turns `name` on (`set name` or `set name=true`).
fn setting_is_true(header: &directives::Header, name: &str) -> bool {
    header
        .settings
        .iter()
        .rev()
        .find(|s| s.name == name)
        .is_some_and(|s| s.value.as_deref().is_none_or(|v| v == "true"))
}

/// Why a call returned no results: a trap (with its code) or another failure.
#[derive(Clone, Debug)]
pub struct CallError {
    /// The trap that ended the call (`None`: it failed another way).
    pub trap: Option<kestrel_ir::TrapCode>,
    pub message: String,
}

/// How a run directive calls a function: the interpreter or native code.
type Caller<'a> = dyn FnMut(&str, &[DataValue]) -> Result<Vec<DataValue>, CallError> + 'a;

/// Run every directive of the file through `call`, adding failures (and, when `warn`, the
/// directive warnings) to the report.
fn run_directives(
    header: &directives::Header,
    funcs: &[kestrel_ir::Function],
    opts: &Options,
    notes: &mut Vec<String>,
    warn: bool,
    call: &mut Caller<'_>,
    failures: &mut Vec<String>,
) {
    for raw in &header.runs {
        let preceding = funcs
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.source_map
                    .as_ref()
                    .is_some_and(|sm| (sm.function.line as usize) < raw.line)
            })
            .map(|(i, _)| i)
            .next_back();
        let run = match directives::parse_run(raw, funcs, preceding) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("line {}: {e}", raw.line));
                continue;
            }
        };
        if warn && run.written_name != run.function {
            notes.push(format!(
                "warning: line {}: the directive names %{} but follows %{}; running %{} as Cranelift does",
                run.line, run.written_name, run.function, run.function
            ));
        }
        let result = call(&run.function, &run.args);
        match judge(&run, &result) {
            Ok(()) => {
                if opts.verbose {
                    notes.push(format!("ok: line {}: %{}", run.line, run.function));
                }
            }
            Err(why) => failures.push(format!("%{}: line {}: {why}", run.function, run.line)),
        }
    }
}

fn show(values: &[DataValue]) -> String {
    match values {
        [one] => one.to_string(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn show_result(r: &Result<Vec<DataValue>, CallError>) -> String {
    match r {
        Ok(v) => show(v),
        Err(e) => e.message.clone(),
    }
}

/// Compare a run's result with its expectation.
fn judge(run: &Run, result: &Result<Vec<DataValue>, CallError>) -> Result<(), String> {
    match (&run.expect, result) {
        (Expectation::Trap(want), Err(e)) if e.trap == Some(*want) => Ok(()),
        (Expectation::Trap(want), _) => {
            Err(format!("expected trap {want}, got {}", show_result(result)))
        }
        (Expectation::Equal(want), Ok(got)) if want == got => Ok(()),
        (Expectation::NotEqual(want), Ok(got)) if want != got => Ok(()),
        (Expectation::Truthy, Ok(got)) if got.len() == 1 && got[0].is_truthy() => Ok(()),
        (Expectation::Equal(want), _) => Err(format!(
            "expected {}, got {}",
            show(want),
            show_result(result)
        )),
        (Expectation::NotEqual(want), _) => Err(format!(
            "expected anything but {}, got {}",
            show(want),
            show_result(result)
        )),
        (Expectation::Truthy, _) => Err(format!(
            "expected a true (nonzero) result, got {}",
            show_result(result)
        )),
    }
}
