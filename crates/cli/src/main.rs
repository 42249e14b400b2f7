//! `kestrel`: the command-line tool.
//!
//! Exit status: 0 on success; 1 for any error (bad input, failed tests), with the message on
//! stderr; 2 when `kestrel run`'s or `kestrel wasm run`'s program trapped (a WASI program's
//! own exit code otherwise). Never Rust's panic status 101 on bad input.

/// `println!` to standard output, except that a closed pipe (`kestrel compile … | head`)
/// ends the program quietly and any other write error is reported, never a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::output_failed(e)
        }
    }};
}

/// `print!` with the same handling of write errors as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            $crate::output_failed(e)
        }
    }};
}

mod commands;
mod compile;
#[cfg(feature = "cranelift")]
mod cranelift_oracle;
mod fuzz;
mod scaling;
mod target;
mod wasm;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kestrel_codegen::settings::OptLevel;
use kestrel_filetests::Options;

/// `--opt-level`'s values.
fn parse_opt_level(s: &str) -> Result<OptLevel, String> {
    OptLevel::from_name(s).ok_or_else(|| format!("unknown opt level `{s}` (none or speed)"))
}

#[derive(Parser)]
#[command(
    name = "kestrel",
    version,
    about = "Kestrel: a fast, checkable compiler backend for CLIF (Cranelift's IR)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run test files (`test interpret` / `test run` with `; run:` directives).
    ///
    /// Prints one line per file (`PASS path`, `FAIL path: …`, `SKIP path: …`) and ends with
    /// `N passed, M failed, K skipped`. Exit status 0 exactly when nothing failed. Files run
    /// in worker processes: one that crashes its process (a fault in JIT code that is no
    /// trap) fails with the signal named, and the run goes on.
    Test {
        /// Files or directories (searched for `*.clif`).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Run `test run` files in the interpreter too, ignoring targets and ISA flags.
        #[arg(long)]
        interpret_only: bool,
        /// Worker processes (default: one per core).
        #[arg(short = 'j', long = "jobs", default_value_t = 0)]
        jobs: usize,
        /// Print the outcome of every run directive.
        #[arg(short, long)]
        verbose: bool,
        /// Run `test run` files through an ELF object: compiled by the object writer, linked
        /// by `cc` with a generated driver, run as a separate process.
        #[arg(long, conflicts_with = "interpret_only")]
        via_object: bool,
        /// Run native tests at this opt level only (default: at `none` and at `speed`).
        #[arg(long, value_parser = parse_opt_level)]
        opt_level: Option<OptLevel>,
        #[command(flatten)]
        target: target::TargetArgs,
        /// Run the files in threads of this process instead of in worker processes (a file
        /// that crashes the process then ends the run).
        #[arg(long)]
        in_process: bool,
        /// Fail a file that has not finished after this many seconds (its worker process is
        /// killed and the run goes on); 0 for no limit. Not applied with `--in-process`.
        #[arg(long, value_name = "SECS", default_value_t = 300)]
        timeout: u64,
    },
    /// Serve `kestrel test`'s worker protocol on stdin and stdout (one file path a line in,
    /// one report a line out): the process `test` runs files in.
    #[command(hide = true)]
    TestWorker {
        #[arg(long)]
        interpret_only: bool,
        #[arg(short, long)]
        verbose: bool,
        #[arg(long)]
        via_object: bool,
        #[arg(long, value_parser = parse_opt_level)]
        opt_level: Option<OptLevel>,
        #[command(flatten)]
        target: target::TargetArgs,
    },
    /// Run a function and print its results in `; run:` literal syntax.
    ///
    /// Arguments are CLIF literals typed by the function's signature (`-1`, `0xff`,
    /// `0x1.8p3`, `NaN`, …). Exit status 2 if the program traps, after printing the trap and the
    /// line of the trapping instruction.
    Run {
        file: PathBuf,
        /// The function to run, with or without `%` (default: the file's only function, or
        /// its first).
        #[arg(long = "fn", value_name = "NAME")]
        function: Option<String>,
        /// Use the interpreter instead of compiling to native code.
        #[arg(long)]
        interpret: bool,
        /// `speed` (run the mid-end before compiling, or before interpreting with
        /// `--interpret`) or `none`.
        #[arg(long, default_value = "speed", value_parser = parse_opt_level)]
        opt_level: OptLevel,
        /// Stop after this many executed instructions (interpreter only).
        #[arg(long, default_value_t = 1_000_000_000)]
        fuel: u64,
        #[command(flatten)]
        target: target::TargetArgs,
        /// Arguments, one per parameter.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Generate random functions, allocate registers for each, and check every allocation
    /// with the symbolic checker and a concrete executor.
    ///
    /// Prints a stats line and ends with `N functions, M checker failures, E executor
    /// mismatches`. With `--inject-faults`, corrupts each allocation once and reports how many
    /// faults changed results and how many of those the checker caught. Exit status 1 if any
    /// allocation was wrong or any result-changing fault went uncaught.
    RegallocStress {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 1000)]
        count: usize,
        #[arg(long)]
        inject_faults: bool,
        /// Perturb the allocator's heuristics from this seed (per-function seeds derive from it).
        #[arg(long)]
        perturb: Option<u64>,
    },
    /// Compile every function of a file (for the ISA of its first `target` line: x86-64 or
    /// aarch64) and print the VCode, the allocated code and/or the disassembly (`OFFSET:
    /// BYTES  ASM`: Intel syntax by iced-x86, or Arm syntax by yaxpeax-arm with each word as
    /// its 32-bit value); `--disasm` is the default.
    Compile {
        file: PathBuf,
        #[arg(long)]
        vcode: bool,
        #[arg(long)]
        regalloc: bool,
        #[arg(long)]
        disasm: bool,
        /// Run the register-allocation checker (always on in debug builds).
        #[arg(long)]
        check_regalloc: bool,
        /// `none` (lower the IR as given) or `speed` (run the mid-end first).
        #[arg(long, default_value = "none", value_parser = parse_opt_level)]
        opt_level: OptLevel,
        /// Print no code; print each function's compile time per phase (parse, verify,
        /// mid-end with `--opt-level speed`, lower, liveness, intervals, allocation,
        /// resolution, checker, emission, in ms) and its peak number of live vregs, then
        /// the totals.
        #[arg(long)]
        timing: bool,
        /// Write an ELF relocatable object instead of printing code: every function of the
        /// file, exported under its name (`%name` → `name`), with `.eh_frame` unwind info.
        /// Link it with `cc main.c OUT.o`.
        #[arg(short = 'o', long = "output", value_name = "OUT.o")]
        output: Option<PathBuf>,
        /// With `-o`: also write DWARF debug info (function names, and line tables mapping
        /// the code to the lines of FILE), so gdb shows Kestrel frames with their lines.
        #[arg(short = 'g', long = "debug-info", requires = "output")]
        debug_info: bool,
        #[command(flatten)]
        target: target::TargetArgs,
    },
    /// Differential fuzzing: generate random valid functions and compare Kestrel's
    /// interpreter with its native code (and, optionally, chaos-controlled native code and
    /// Cranelift).
    ///
    /// Progress lines go to stderr; a failure is minimized and written to the `--out`
    /// directory as a ready-to-commit test file. The last line printed is `N cases, M
    /// failures`; exit status 1 if anything failed.
    Fuzz(fuzz::FuzzArgs),
    /// Run or compile a WebAssembly module (binary `.wasm` or text `.wat`).
    #[command(subcommand)]
    Wasm(WasmCommand),
    /// Parse and verify a file, then print it in canonical CLIF (after the mid-end with
    /// `--opt-level speed`).
    Print {
        file: PathBuf,
        #[arg(long, default_value = "none", value_parser = parse_opt_level)]
        opt_level: OptLevel,
    },
    /// Parse and verify a file; prints nothing on success.
    Verify { file: PathBuf },
}

#[derive(Subcommand)]
enum WasmCommand {
    /// Run a module with WASI preview 1: its `_start` (ARGS are the program's arguments
    /// after its file name; the exit status is its exit code: `proc_exit`'s, 0 when
    /// `_start` returns), or the export named by `--invoke` (ARGS typed by its parameters;
    /// results printed one per line). Exit status 2 if the code traps. Sightglass's
    /// `bench.start`/`bench.end` are provided as no-ops; any other import is an error.
    Run {
        /// Give the program a host directory: `DIR` (seen as `DIR`) or `HOST::GUEST`.
        #[arg(long = "dir", value_name = "DIR")]
        dirs: Vec<String>,
        /// Set an environment variable of the program.
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// The exported function to call instead of `_start`.
        #[arg(long)]
        invoke: Option<String>,
        /// How memory accesses are kept in bounds: `guard` (reserved address space with
        /// guard pages, falling back to `explicit` when it cannot be reserved) or
        /// `explicit` (a check in code at each access).
        #[arg(long = "bounds-checks", value_name = "MODE", default_value = "guard")]
        bounds_checks: kestrel_wasm::BoundsChecks,
        /// The mid-end's opt level: `speed` (default, as Wasmtime) or `none`.
        #[arg(long, default_value = "speed", value_parser = parse_opt_level)]
        opt_level: OptLevel,
        /// Run the IR verifier on each translated function before compiling it (off by
        /// default, as Wasmtime runs Cranelift; the builder type-checks every instruction
        /// either way).
        #[arg(long)]
        verify: bool,
        file: PathBuf,
        /// The program's arguments; with `--invoke`, the function's (integers in decimal
        /// or `0x` hex, floats in decimal).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Validate, translate and compile every function of the module, printing no code.
    Compile {
        file: PathBuf,
        /// Print the time of each step (decode, body validation, translation, mid-end, the
        /// backend's phases, link; per-function steps summed over threads), functions per
        /// second and the five slowest functions.
        #[arg(long)]
        timing: bool,
        /// Compile the module N times in this process, as an engine compiling many modules
        /// does (the compiling threads keep their memory between modules); `--timing`
        /// reports the fastest compile.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
        /// The bounds-check mode to compile for (see `wasm run`).
        #[arg(long = "bounds-checks", value_name = "MODE", default_value = "guard")]
        bounds_checks: kestrel_wasm::BoundsChecks,
        /// The mid-end's opt level: `speed` (default, as Wasmtime) or `none`.
        #[arg(long, default_value = "speed", value_parser = parse_opt_level)]
        opt_level: OptLevel,
        /// Run the IR verifier on each translated function before compiling it (off by
        /// default, as Wasmtime runs Cranelift; the builder type-checks every instruction
        /// either way).
        #[arg(long)]
        verify: bool,
        /// Also write each function's translated IR to DIR/wasm-func-INDEX.clif (for
        /// `kestrel compile --disasm`).
        #[arg(long = "emit-clif", value_name = "DIR")]
        emit_clif: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Test {
            paths,
            interpret_only,
            jobs,
            verbose,
            via_object,
            opt_level,
            target,
            in_process,
            timeout,
        } => target.parse().and_then(|target| {
            let opts = Options {
                interpret_only,
                jobs,
                verbose,
                via_object,
                opt_level,
                target,
            };
            let timeout = (timeout > 0).then(|| std::time::Duration::from_secs(timeout));
            commands::test(&paths, &opts, in_process, timeout)
        }),
        Command::TestWorker {
            interpret_only,
            verbose,
            via_object,
            opt_level,
            target,
        } => target.parse().and_then(|target| {
            commands::test_worker(&Options {
                interpret_only,
                jobs: 1,
                verbose,
                via_object,
                opt_level,
                target,
            })
        }),
        Command::Run {
            file,
            function,
            interpret,
            opt_level,
            fuel,
            args,
            target,
        } => target.parse().and_then(|target| {
            commands::run(
                &file,
                function.as_deref(),
                interpret,
                opt_level,
                fuel,
                target.as_ref(),
                &args,
            )
        }),
        Command::RegallocStress {
            seed,
            count,
            inject_faults,
            perturb,
        } => commands::regalloc_stress(seed, count, inject_faults, perturb),
        Command::Compile {
            file,
            vcode,
            regalloc,
            disasm,
            check_regalloc,
            opt_level,
            timing,
            output,
            debug_info,
            target,
        } => target.parse().and_then(|target| {
            let settings = compile::Settings {
                check_regalloc,
                opt_level,
                target,
            };
            match output {
                Some(out) => compile::write_object(&file, &out, &settings, debug_info),
                None => {
                    let show = compile::Show {
                        vcode,
                        regalloc,
                        disasm: disasm || !(vcode || regalloc),
                    };
                    compile::compile(&file, show, &settings, timing)
                }
            }
        }),
        Command::Fuzz(args) => fuzz::fuzz(args),
        Command::Wasm(WasmCommand::Run {
            dirs,
            env,
            invoke,
            bounds_checks,
            opt_level,
            verify,
            file,
            args,
        }) => wasm::run(&wasm::RunOptions {
            file: &file,
            invoke: invoke.as_deref(),
            config: kestrel_wasm::Config {
                bounds_checks,
                opt_level,
                verify,
            },
            args: &args,
            dirs: &dirs,
            env: &env,
        }),
        Command::Wasm(WasmCommand::Compile {
            file,
            timing,
            repeat,
            bounds_checks,
            opt_level,
            verify,
            emit_clif,
        }) => {
            let config = kestrel_wasm::Config {
                bounds_checks,
                opt_level,
                verify,
            };
            let how = wasm::CompileRun { timing, repeat };
            wasm::compile(&file, how, config, emit_clif.as_deref())
        }
        Command::Print { file, opt_level } => commands::print(&file, opt_level),
        Command::Verify { file } => commands::verify(&file),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// Ends the program after a failed write to standard output: quietly (success) when the
/// reader closed the pipe, with a message otherwise.
fn output_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to standard output: {e}");
    std::process::exit(1);
}
