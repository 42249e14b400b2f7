//! The subcommands. Each returns the exit code, or an error message for stderr (exit 1).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kestrel_codegen::settings::OptLevel;
use kestrel_filetests::directives::{func_name, parse_value, Header};
use kestrel_filetests::native::{NativeError, NativeModule};
use kestrel_filetests::target_override::TargetOverride;
use kestrel_filetests::Options;
use kestrel_interp::{InterpError, Interpreter};
use kestrel_ir::Function;

/// Read, parse and verify a file; every verifier error of every function is reported.
pub fn load(path: &Path) -> Result<Vec<Function>, String> {
    load_with_header(path).map(|(_, funcs)| funcs)
}

/// [`load`], with the file's header (its `set` and `target` lines).
fn load_with_header(path: &Path) -> Result<(Header, Vec<Function>), String> {
    let bytes = kestrel_filetests::input::read_input(path)?;
    let funcs = kestrel_ir::text::parse_bytes(&bytes, &path.display().to_string())
        .map_err(|e| e.to_string())?;
    // The text parsed, so it is UTF-8.
    let header = kestrel_filetests::directives::scan(&String::from_utf8_lossy(&bytes));
    let mut errors = Vec::new();
    for f in &funcs {
        if let Err(e) = kestrel_ir::verify_function(f) {
            errors.push(e.to_string());
        }
    }
    if errors.is_empty() {
        Ok((header, funcs))
    } else {
        Err(format!(
            "{}: verifier errors:\n{}",
            path.display(),
            errors.join("\n")
        ))
    }
}

/// `kestrel test`: run the files in worker processes (this executable's `test-worker`), or
/// in this process's threads when `in_process` or when this executable cannot be found;
/// `timeout` bounds each file in a worker.
pub fn test(
    paths: &[PathBuf],
    opts: &Options,
    in_process: bool,
    timeout: Option<std::time::Duration>,
) -> Result<ExitCode, String> {
    let files = kestrel_filetests::collect_files(paths)?;
    let emit = |r: &kestrel_filetests::FileReport| outln!("{}", r.render());
    let exe = std::env::current_exe().ok().filter(|_| !in_process);
    let summary = match exe {
        Some(exe) => {
            let spawn = || worker_command(&exe, opts);
            kestrel_filetests::isolate::run_files_isolated(&files, opts, &spawn, timeout, emit)
        }
        None => kestrel_filetests::run_files(&files, opts, emit),
    };
    outln!("{summary}");
    Ok(if summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The command line of a worker process for `opts` (every option but the job count).
fn worker_command(exe: &Path, opts: &Options) -> std::process::Command {
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("test-worker");
    if opts.interpret_only {
        cmd.arg("--interpret-only");
    }
    if opts.verbose {
        cmd.arg("--verbose");
    }
    if opts.via_object {
        cmd.arg("--via-object");
    }
    if let Some(level) = opts.opt_level {
        cmd.args(["--opt-level", level.name()]);
    }
    if let Some(target) = &opts.target {
        cmd.args(target.command_line());
    }
    cmd
}

/// `kestrel test-worker`: answer `kestrel test`'s requests on stdin (see
/// `kestrel_filetests::isolate`).
pub fn test_worker(opts: &Options) -> Result<ExitCode, String> {
    kestrel_filetests::isolate::serve_stdio(opts).map_err(|e| format!("test worker: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

pub fn run(
    path: &Path,
    function: Option<&str>,
    interpret: bool,
    opt_level: OptLevel,
    fuel: u64,
    target: Option<&TargetOverride>,
    args: &[String],
) -> Result<ExitCode, String> {
    let (mut header, mut funcs) = load_with_header(path)?;
    crate::target::apply(target, &mut header);
    let index = match function {
        Some(name) => {
            let name = name.strip_prefix('%').unwrap_or(name);
            funcs
                .iter()
                .position(|f| func_name(f) == name)
                .ok_or_else(|| {
                    let names: Vec<String> =
                        funcs.iter().map(|f| format!("%{}", func_name(f))).collect();
                    format!(
                        "no function %{name} in {}; it has {}",
                        path.display(),
                        names.join(", ")
                    )
                })?
        }
        None if funcs.is_empty() => return Err(format!("{} defines no function", path.display())),
        None => 0,
    };
    let sig = &funcs[index].signature;
    if args.len() != sig.params.len() {
        return Err(format!(
            "%{} takes {} argument(s) ({}), {} given",
            func_name(&funcs[index]),
            sig.params.len(),
            sig.params
                .iter()
                .map(|p| p.value_type.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        ));
    }
    let values = args
        .iter()
        .zip(&sig.params)
        .enumerate()
        .map(|(i, (a, p))| {
            parse_value(a, p.value_type).map_err(|e| format!("argument {}: `{a}`: {e}", i + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let print_results = |results: &[kestrel_interp::DataValue]| {
        let text: Vec<String> = results.iter().map(|v| v.to_string()).collect();
        match text.len() {
            1 => outln!("{}", text[0]),
            _ => outln!("[{}]", text.join(", ")),
        }
    };
    // The ISA is the first `target` line's (after `--target`), the host's without one; its
    // flags and the file's `set` lines apply as under `kestrel test`.
    let (isa, file_flags) =
        kestrel_filetests::file_target(&header).map_err(|e| format!("{}: {e}", path.display()))?;
    let native = kestrel_codegen::isa::host().is_ok_and(|h| h.name() == isa.name());
    if !native && !interpret {
        let flags = kestrel_filetests::native::Flags {
            verified: true,
            opt_level,
            ..file_flags
        };
        let name = func_name(&funcs[index]);
        return match run_emulated(&isa, &funcs, &name, values, flags)? {
            Ok(results) => {
                print_results(&results);
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => match e.trap {
                Some(code) => {
                    outln!("trap: {code} (in %{name}, under qemu-{})", isa.name());
                    Ok(ExitCode::from(2))
                }
                None => Err(e.message),
            },
        };
    }
    if !interpret {
        // `load` verified every function: compile without verifying again.
        let mut flags = kestrel_filetests::native::Flags {
            verified: true,
            opt_level,
            ..file_flags
        };
        // As the JIT does by default: probes on unless the file's `set` lines say otherwise,
        // so a frame beyond the guard page traps as `stk_ovf`.
        if !header
            .settings
            .iter()
            .any(|s| s.name == "enable_probestack")
        {
            flags.probestack_size_log2 =
                Some(kestrel_codegen::settings::DEFAULT_PROBESTACK_SIZE_LOG2);
        }
        let no_chaos = kestrel_codegen::chaos::Chaos::disabled;
        let module = NativeModule::build(&isa, &funcs, &flags, &no_chaos, &mut |_| {})
            .map_err(|e| e.join("\n"))?;
        let name = func_name(&funcs[index]);
        return match module.call_raw(&name, &values) {
            Ok(results) => {
                print_results(&results);
                Ok(ExitCode::SUCCESS)
            }
            Err(NativeError::Trap(t)) => {
                // A parsed function's source locations are its lines in the file; the
                // trapping instruction may be in a function `%name` called.
                match t.srcloc {
                    Some(line) => outln!("trap: {} (at line {line}, calling %{name})", t.code),
                    None => outln!("trap: {} (at offset {:#x} in %{name})", t.code, t.offset),
                }
                Ok(ExitCode::from(2))
            }
            Err(NativeError::Other(e)) => Err(e),
        };
    }
    optimize_all(&mut funcs, opt_level)?;
    let mut interp = Interpreter::new(&funcs).with_fuel(Some(fuel));
    match interp.call_index(index, &values) {
        Ok(results) => {
            print_results(&results);
            Ok(ExitCode::SUCCESS)
        }
        Err(InterpError::Trap {
            code,
            function,
            inst,
        }) => {
            outln!("trap: {code} (at {inst} in %{function})");
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Call `name` with `args` in `funcs` compiled for `isa`, another ISA than the host's: an
/// ELF object linked with a driver by the cross compiler and run under emulation (for
/// AArch64: `aarch64-linux-gnu-gcc` and `qemu-aarch64`, as `kestrel test` runs `target
/// aarch64` files). The outer error: the program could not be built or run.
fn run_emulated(
    isa: &std::sync::Arc<dyn kestrel_codegen::isa::TargetIsa>,
    funcs: &[Function],
    name: &str,
    args: Vec<kestrel_interp::DataValue>,
    flags: kestrel_filetests::native::Flags,
) -> Result<kestrel_filetests::object_run::CallOutcome, String> {
    use kestrel_filetests::object_run::{run_calls_via_object_on, ObjectTarget};
    let dir = tempfile::Builder::new()
        .prefix(&format!("kestrel-run-{}-", isa.name()))
        .tempdir()
        .map_err(|e| format!("cannot make a scratch directory: {e}"))?;
    let calls = [(name.to_string(), args)];
    let no_chaos = kestrel_codegen::chaos::Chaos::disabled;
    let target = ObjectTarget::for_isa(isa.name())
        .ok_or_else(|| format!("no way to run {} code on this host", isa.name()))?;
    let mut outcomes =
        run_calls_via_object_on(target, isa, funcs, &calls, flags, &no_chaos, dir.path())?;
    outcomes
        .pop()
        .ok_or_else(|| format!("the {} program reported no outcome", isa.name()))
}

/// Run the mid-end on every function (verifying its output).
fn optimize_all(funcs: &mut [Function], opt_level: OptLevel) -> Result<(), String> {
    for f in funcs {
        kestrel_opt::optimize(f, opt_level, true).map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub fn print(path: &Path, opt_level: OptLevel) -> Result<ExitCode, String> {
    let mut funcs = load(path)?;
    optimize_all(&mut funcs, opt_level)?;
    for (i, f) in funcs.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        out!("{f}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn verify(path: &Path) -> Result<ExitCode, String> {
    load(path).map(|_| ExitCode::SUCCESS)
}

pub fn regalloc_stress(
    seed: u64,
    count: usize,
    inject_faults: bool,
    perturb: Option<u64>,
) -> Result<ExitCode, String> {
    let options = kestrel_regalloc::stress::StressOptions {
        seed,
        count,
        inject_faults,
        perturb,
    };
    let mut out = std::io::stdout().lock();
    let summary = kestrel_regalloc::stress::run(&options, &mut out).map_err(|e| e.to_string())?;
    let uncaught = summary
        .faults
        .iter()
        .any(|f| f.changed_and_caught < f.changed);
    let wrong =
        summary.checker_failures > 0 || summary.executor_mismatches > 0 || summary.rejected > 0;
    Ok(if wrong || uncaught {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
