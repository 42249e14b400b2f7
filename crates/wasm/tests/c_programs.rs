//! Real C programs (`tests/c/*.c`) compiled to `wasm32-wasi` with clang and wasi-libc, run
//! through Kestrel with WASI, and checked against an independent oracle: the same source
//! compiled natively with `cc` and run with the same arguments, environment, stdin and an
//! empty working directory. Stdout, stderr and the exit status must be identical.
//!
//! The programs avoid what legitimately differs between the two targets (pointer and `long`
//! sizes, directory order, addresses). Each Wasm build runs twice, compiled for guard-page
//! memories and for explicit bounds checks. Both toolchains are required: a missing one fails
//! the test with what to install (CI installs them, see `.ci/run`).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/native_run.rs"]
mod native_run;
use native_run::Run;

use kestrel_wasm::wasi::{Capture, Input, Output, Wasi, WasiCtx};
use kestrel_wasm::{BoundsChecks, Config, Imports, Module};

const INSTALL_HINT: &str = "the C program tests need clang with the wasm32-wasi target and \
     wasi-libc, and a native C compiler: on Debian/Ubuntu `apt-get install clang lld \
     wasi-libc libclang-rt-14-dev-wasm32 gcc libc6-dev`";

/// `-O2` with the post-MVP features Kestrel supports: `memcpy`/`memset` become
/// `memory.copy`/`memory.fill`, narrow sign extensions and saturating float-to-int
/// conversions get their own instructions. (With bulk memory, clang 14 lowers wasi-libc's
/// thread-local `errno` as real TLS and accepts only the local-exec model for it.)
const POST_MVP: &str =
    "-O2 -mbulk-memory -msign-ext -mnontrapping-fptoint -mmutable-globals -ftls-model=local-exec";

/// One program and what it is given.
struct Program {
    name: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    /// A file under `tests/c/` fed to stdin.
    stdin: Option<&'static str>,
    /// clang flags of each Wasm build (each run against the one native build): other
    /// optimization levels and post-MVP features give the backend differently shaped code.
    builds: &'static [&'static str],
}

impl Program {
    const fn new(name: &'static str) -> Program {
        Program {
            name,
            args: &[],
            env: &[],
            stdin: None,
            builds: &["-O2", POST_MVP],
        }
    }
}

fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c")
}

/// A fresh scratch directory for `what` of program `name`.
fn scratch(name: &str, what: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("kestrel-c-programs-{}", std::process::id()))
        .join(name)
        .join(what);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Run a compiler; a missing compiler or a failed compile fails the test with the hint.
fn compile(compiler: &str, args: &[&str]) {
    let out = Command::new(compiler)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{compiler}` ({e}); {INSTALL_HINT}"));
    assert!(
        out.status.success(),
        "`{compiler} {}` failed:\n{}\n{INSTALL_HINT}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn stdin_bytes(p: &Program) -> Vec<u8> {
    p.stdin.map_or_else(Vec::new, |f| {
        std::fs::read(source_dir().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
    })
}

fn run_native(p: &Program, exe: &Path) -> Run {
    let mut cmd = Command::new(exe);
    cmd.arg0(p.name)
        .args(p.args)
        .env_clear()
        .envs(p.env.iter().copied())
        .current_dir(scratch(p.name, "native-cwd"));
    native_run::run_native(cmd, stdin_bytes(p))
}

fn run_kestrel(p: &Program, wasm: &Path, checks: BoundsChecks) -> Run {
    let work = scratch(p.name, "wasm-cwd");
    let bytes = std::fs::read(wasm).unwrap();
    let module = Module::with_config(&bytes, &Config::with_bounds_checks(checks))
        .unwrap_or_else(|e| panic!("{}: {e}", wasm.display()));
    assert_eq!(
        module.bounds_checks(),
        checks,
        "this host can reserve guard memories"
    );
    let (stdout, stderr) = (Capture::new(), Capture::new());
    let mut ctx = WasiCtx::new()
        .arg(p.name)
        .args(p.args.iter().copied())
        .preopen_dir(&work, ".")
        .stdin(Input::Bytes(stdin_bytes(p)))
        .stdout(Output::Capture(stdout.clone()))
        .stderr(Output::Capture(stderr.clone()));
    for (k, v) in p.env {
        ctx = ctx.env(*k, *v);
    }
    let wasi = Wasi::new(ctx).unwrap();
    let instance = wasi
        .instantiate(&module, &Imports::new())
        .unwrap_or_else(|e| panic!("{}: {e}", p.name));
    let status = wasi
        .run_start(&instance)
        .unwrap_or_else(|e| panic!("{}: {e}\nstdout so far:\n{}", p.name, stdout.text()));
    Run {
        status,
        stdout: stdout.text(),
        stderr: stderr.text(),
    }
}

/// Compile `p` both ways, run both, and require the same output and status.
fn check(p: Program) -> Run {
    let src = source_dir().join(format!("{}.c", p.name));
    let src = src.to_str().expect("UTF-8 path");
    let build = scratch(p.name, "build");
    let native = build.join(p.name);
    compile(
        "cc",
        &[
            "-O2",
            "-Wall",
            "-Werror",
            src,
            "-o",
            native.to_str().unwrap(),
            "-lm",
        ],
    );
    let expected = run_native(&p, &native);
    assert!(
        !expected.stdout.is_empty(),
        "the native run printed nothing: {expected:?}"
    );
    let mut last = None;
    for (k, flags) in p.builds.iter().enumerate() {
        let wasm = build.join(format!("{}-{k}.wasm", p.name));
        let mut args = vec!["--target=wasm32-wasi", "-Wall", "-Werror"];
        args.extend(flags.split(' '));
        args.extend([src, "-o", wasm.to_str().unwrap()]);
        compile("clang", &args);
        for checks in [BoundsChecks::Guard, BoundsChecks::Explicit] {
            // Wasm runs on this thread's stack (see `runtime/func.rs`): give it room.
            let got = std::thread::scope(|s| {
                std::thread::Builder::new()
                    .stack_size(16 << 20)
                    .spawn_scoped(s, || run_kestrel(&p, &wasm, checks))
                    .unwrap()
                    .join()
                    .expect("the Kestrel run panicked")
            });
            assert_eq!(
                got, expected,
                "Kestrel (left, clang {flags}, {checks} bounds checks) and the native build \
                 (right) differ"
            );
            last = Some(got);
        }
    }
    let program_dir = build.parent().expect("scratch/name/build");
    let _ = std::fs::remove_dir_all(program_dir);
    // The last program to finish removes the run's directory (it fails while not empty).
    let _ = std::fs::remove_dir(program_dir.parent().expect("scratch/name"));
    last.expect("at least one build")
}

#[test]
fn sort_checksum() {
    check(Program::new("sort_checksum"));
}

#[test]
fn sieve() {
    check(Program::new("sieve"));
}

#[test]
fn words_from_stdin() {
    check(Program {
        stdin: Some("words.stdin"),
        ..Program::new("words")
    });
}

#[test]
fn recursion() {
    check(Program::new("recursion"));
}

#[test]
fn files_in_a_preopened_directory() {
    check(Program::new("files"));
}

#[test]
fn args_env_and_exit_status() {
    let run = check(Program {
        args: &["1", "two", "3", "with space", "--flag"],
        env: &[("GREETING", "hello world"), ("EMPTY", ""), ("COUNT", "4")],
        ..Program::new("args_env")
    });
    assert_ne!(run.status, 0, "the program exits with a computed status");
}

#[test]
fn data_structures() {
    check(Program::new("data_structures"));
}

#[test]
fn float_math() {
    check(Program::new("float_math"));
}

#[test]
fn integer_hashes_at_several_optimization_levels() {
    check(Program {
        builds: &["-O0", "-O1", "-O2", "-O3", "-Os", POST_MVP],
        ..Program::new("hashes")
    });
}

#[test]
fn bytecode_interpreter_at_several_optimization_levels() {
    check(Program {
        builds: &["-O0", "-O1", "-O2", "-O3", "-Os", POST_MVP],
        ..Program::new("interpreter")
    });
}
