//! A real Rust program (`tests/rust/probe`, std and all) built for `wasm32-wasip1`, run
//! through Kestrel with WASI, and checked against an independent oracle: the same source
//! built natively and run with the same arguments, environment, stdin and an empty working
//! directory (preopened as `.` for the Wasm run). Stdout, stderr and the exit status must be
//! identical, at both opt levels and with both bounds-check modes; a panic must come back as
//! the `unreachable` trap of Rust's abort, in the module's own code, with its offset.
//!
//! Needs the `wasm32-wasip1` standard library: a missing one fails the test with what to
//! install (CI installs it, see `.ci/run`).

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/native_run.rs"]
mod native_run;
use native_run::Run;

use kestrel_wasm::wasi::{Capture, Input, Output, Wasi, WasiCtx};
use kestrel_wasm::{BoundsChecks, Config, Imports, InvokeError, Module, OptLevel, Trap};

const INSTALL_HINT: &str = "the Rust program test needs the wasm32-wasip1 standard library: \
     `rustup target add wasm32-wasip1`";

const ARGS: &[&str] = &["first", "with space", "--flag=ünï"];
const ENV: &[(&str, &str)] = &[("PROBE_GREETING", "hello world"), ("PROBE_EMPTY", "")];
const STDIN: &str = "The quick brown fox\njumps over the lazy dog\nthe end the END\n";

fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rust/probe/Cargo.toml")
}

/// A fresh scratch directory.
fn scratch(what: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("kestrel-rust-programs-{}", std::process::id()))
        .join(what);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// `cargo build --release` of the probe, for `target` (None: the host), into `target_dir`;
/// the path of the built program.
fn build(target: Option<&str>, target_dir: &Path) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(manifest())
        .arg("--target-dir")
        .arg(target_dir)
        // The outer build's settings are not the probe's.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR");
    if let Some(t) = target {
        cmd.args(["--target", t]);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{cargo}` ({e})"));
    assert!(
        out.status.success(),
        "building the probe for {target:?} failed:\n{}\n{INSTALL_HINT}",
        String::from_utf8_lossy(&out.stderr)
    );
    match target {
        Some(t) => target_dir.join(t).join("release/probe.wasm"),
        None => target_dir.join("release/probe"),
    }
}

fn run_native(exe: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env_clear()
        .envs(ENV.iter().copied())
        .current_dir(scratch("native-cwd"));
    native_run::run_native(cmd, STDIN.as_bytes().to_vec())
}

/// What a run under Kestrel ended with: its exit status or the error `_start` ended with,
/// its output, and the description of the function a trap happened in.
struct KestrelRun {
    result: Result<i32, InvokeError>,
    run: Run,
    trapped_in: Option<String>,
}

/// Run the probe under Kestrel, on a thread of its own: Wasm runs on the calling thread's
/// stack (see `runtime/func.rs`), so give it room.
fn run_kestrel(wasm: &[u8], config: &Config, args: &[&str]) -> KestrelRun {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn_scoped(s, || run_kestrel_here(wasm, config, args))
            .unwrap()
            .join()
            .expect("the Kestrel run panicked")
    })
}

fn run_kestrel_here(wasm: &[u8], config: &Config, args: &[&str]) -> KestrelRun {
    let module = Module::with_config(wasm, config).unwrap();
    assert_eq!(module.bounds_checks(), config.bounds_checks);
    let work = scratch("wasm-cwd");
    let (stdout, stderr) = (Capture::new(), Capture::new());
    let mut ctx = WasiCtx::new()
        .arg("probe")
        .args(args.iter().copied())
        .preopen_dir(&work, ".")
        .stdin(Input::Bytes(STDIN.as_bytes().to_vec()))
        .stdout(Output::Capture(stdout.clone()))
        .stderr(Output::Capture(stderr.clone()));
    for (k, v) in ENV {
        ctx = ctx.env(*k, *v);
    }
    let wasi = Wasi::new(ctx).unwrap();
    let instance = wasi.instantiate(&module, &Imports::new()).unwrap();
    let result = wasi.run_start(&instance);
    let trapped_in = match &result {
        Err(InvokeError::Trap { func: Some(f), .. }) => Some(module.info().describe_func(*f)),
        _ => None,
    };
    KestrelRun {
        run: Run {
            status: *result.as_ref().unwrap_or(&-1),
            stdout: stdout.text(),
            stderr: stderr.text(),
        },
        result,
        trapped_in,
    }
}

#[test]
fn rust_std_program_matches_its_native_build() {
    let target_dir = scratch("target");
    let native = build(None, &target_dir);
    let wasm = std::fs::read(build(Some("wasm32-wasip1"), &target_dir)).unwrap();
    let expected = run_native(&native, ARGS);
    assert!(
        expected.stdout.contains("cleaned: false") && expected.status != 0,
        "the native run did not finish: {expected:?}"
    );
    for level in [OptLevel::None, OptLevel::Speed] {
        for checks in [BoundsChecks::Guard, BoundsChecks::Explicit] {
            let config = Config {
                opt_level: level,
                ..Config::with_bounds_checks(checks)
            };
            let KestrelRun {
                result, run: got, ..
            } = run_kestrel(&wasm, &config, ARGS);
            assert!(result.is_ok(), "{level:?}, {checks}: {result:?}\n{got:?}");
            assert_eq!(
                got, expected,
                "Kestrel (left, {level:?}, {checks} bounds checks) and the native build (right) \
                 differ"
            );
        }
    }

    // A panic aborts: natively by SIGABRT after the message, under Wasm by `unreachable`
    // in the module's abort, reported with its function and offset.
    let panicked = run_kestrel(&wasm, &Config::default(), &["panic"]);
    match panicked.result {
        Err(InvokeError::Trap {
            trap: Trap::Unreachable,
            func: Some(func),
            offset: Some(offset),
        }) => {
            let name = panicked.trapped_in.expect("described");
            assert!(name.contains("abort"), "function {func}: {name}");
            assert!(offset as usize > 8 && (offset as usize) < wasm.len());
            assert_eq!(
                wasm[offset as usize], 0x00,
                "the offset is an `unreachable` opcode"
            );
        }
        other => panic!("expected Rust's abort, got {other:?}"),
    }
    let stderr = &panicked.run.stderr;
    assert!(stderr.contains("panicked at"), "{stderr}");
    let _ = std::fs::remove_dir_all(target_dir.parent().expect("scratch root"));
}
