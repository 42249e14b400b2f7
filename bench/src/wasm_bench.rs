//! `kestrel-bench wasm`: Kestrel's WebAssembly engine against Wasmtime 48 on the same
//! `.wasm` programs, in one run: whole-module compile time and run time (`_start`), each as
//! a ratio per program (Kestrel / Wasmtime: below 1 is Kestrel faster) and their geometric
//! means. Kestrel's run time is measured in both bounds-check modes, so the guard-page
//! saving shows as a third ratio (guard / explicit).
//!
//! Programs: the Sightglass benchmarks one directory below `--sightglass DIR` (default
//! `/tmp/sightglass/benchmarks`; each runs in its directory, preopened as `.`, as
//! Sightglass runs them), and the C programs of `crates/wasm/tests/c`, built here with
//! `clang --target=wasm32-wasi -O2` (skipped with a note when clang is missing; a
//! `NAME.stdin` beside a program is its stdin). A program Kestrel refuses (a proposal it
//! does not support), or whose engines disagree on output or exit status, is listed and
//! left out of the means.
//!
//! Options: `--reps N` (default 3: each time is the minimum of N), `--only TEXT` (programs
//! whose path contains TEXT), `--skip TEXT` (repeatable: leave out programs whose path
//! contains TEXT), `--sightglass DIR`, `--no-c`, `--opt-level none|speed` (Kestrel's
//! mid-end; default `speed`, the level Wasmtime runs Cranelift at).
//!
//! Cost: each program is compiled `2N + 1` times and run `3N` times.

mod engines;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kestrel_wasm::{BoundsChecks, Config, OptLevel};

struct Options {
    reps: usize,
    only: Option<String>,
    skip: Vec<String>,
    sightglass: PathBuf,
    c: bool,
    opt_level: OptLevel,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        reps: 3,
        only: None,
        skip: Vec::new(),
        sightglass: PathBuf::from("/tmp/sightglass/benchmarks"),
        c: true,
        opt_level: OptLevel::Speed,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--reps" => {
                let v = value()?;
                o.reps = v.parse().map_err(|e| format!("--reps `{v}`: {e}"))?;
                o.reps = o.reps.max(1);
            }
            "--only" => o.only = Some(value()?),
            "--skip" => o.skip.push(value()?),
            "--sightglass" => o.sightglass = PathBuf::from(value()?),
            "--no-c" => o.c = false,
            "--opt-level" => {
                let v = value()?;
                o.opt_level = OptLevel::from_name(&v)
                    .ok_or(format!("--opt-level `{v}`: expected none or speed"))?;
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(o)
}

/// A program to measure: its module, the directory it runs in, its stdin.
struct Program {
    name: String,
    wasm: PathBuf,
    dir: PathBuf,
    stdin: Vec<u8>,
}

fn sightglass_programs(root: &Path) -> Vec<Program> {
    let mut found = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root) else {
        eprintln!("note: no Sightglass benchmarks at {}", root.display());
        return found;
    };
    for dir in dirs.flatten().map(|d| d.path()).filter(|d| d.is_dir()) {
        for file in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|f| f.path())
        {
            if file.extension().is_some_and(|e| e == "wasm") {
                let name = file
                    .strip_prefix(root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                found.push(Program {
                    name,
                    wasm: file.clone(),
                    dir: dir.clone(),
                    stdin: Vec::new(),
                });
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Where the C programs are compiled and run; removed when the benchmark ends.
fn c_out_dir() -> PathBuf {
    std::env::temp_dir().join(format!("kestrel-bench-wasm-{}", std::process::id()))
}

/// The C test programs, compiled to `wasm32-wasi` into a scratch directory.
fn c_programs() -> Vec<Program> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/wasm/tests/c");
    let out = c_out_dir();
    let _ = std::fs::create_dir_all(&out);
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    let mut found = Vec::new();
    for c in sources {
        let stem = c.file_stem().unwrap().to_string_lossy().to_string();
        let wasm = out.join(format!("{stem}.wasm"));
        let built = Command::new("clang")
            .args(["--target=wasm32-wasi", "-O2"])
            .arg(&c)
            .arg("-o")
            .arg(&wasm)
            .status();
        if !built.is_ok_and(|s| s.success()) {
            eprintln!(
                "note: could not build {} with clang for wasm32-wasi; skipped",
                c.display()
            );
            continue;
        }
        let stdin = std::fs::read(src.join(format!("{stem}.stdin"))).unwrap_or_default();
        found.push(Program {
            name: format!("c/{stem}"),
            wasm,
            dir: out.clone(),
            stdin,
        });
    }
    found
}

/// One program's times (minimum over the repetitions).
struct Times {
    compile_kestrel: Duration,
    compile_wasmtime: Duration,
    run_guard: Duration,
    run_explicit: Duration,
    run_wasmtime: Duration,
}

fn min_of<T>(
    reps: usize,
    mut f: impl FnMut() -> Result<(T, Duration), String>,
) -> Result<(T, Duration), String> {
    let (mut kept, mut best) = f()?;
    for _ in 1..reps {
        let (value, time) = f()?;
        if time < best {
            (kept, best) = (value, time);
        }
    }
    Ok((kept, best))
}

fn measure(
    engine: &wasmtime::Engine,
    p: &Program,
    reps: usize,
    opt_level: OptLevel,
) -> Result<Times, String> {
    let wasm = std::fs::read(&p.wasm).map_err(|e| format!("{}: {e}", p.wasm.display()))?;
    // The IR verifier off, as Wasmtime runs Cranelift's (`Config::verify`).
    let config = |bounds_checks| Config {
        bounds_checks,
        opt_level,
        verify: false,
    };
    let (guard, compile_kestrel) = min_of(reps, || {
        engines::compile_kestrel(&wasm, &config(BoundsChecks::Guard))
    })
    .map_err(|e| format!("Kestrel refuses it: {e}"))?;
    let (explicit, _) = engines::compile_kestrel(&wasm, &config(BoundsChecks::Explicit))?;
    let (theirs, compile_wasmtime) = min_of(reps, || engines::compile_wasmtime(engine, &wasm))
        .map_err(|e| format!("Wasmtime refuses it: {e}"))?;
    let name = p.wasm.file_name().unwrap().to_string_lossy().to_string();
    let timed = |r: engines::Run| ((r.stdout, r.status), r.time);
    let (reference, run_wasmtime) = min_of(reps, || {
        engines::run_wasmtime(engine, &theirs, &p.dir, &name, &p.stdin).map(timed)
    })
    .map_err(|e| format!("Wasmtime run failed: {e}"))?;
    let mut runs = Vec::new();
    for (mode, module) in [("guard", &guard), ("explicit", &explicit)] {
        let (got, time) = min_of(reps, || {
            engines::run_kestrel(module, &p.dir, &name, &p.stdin).map(timed)
        })
        .map_err(|e| format!("Kestrel ({mode}) run failed: {e}"))?;
        if got != reference {
            return Err(format!(
                "Kestrel ({mode}) and Wasmtime disagree: exit {} vs {}, {} vs {} bytes of stdout",
                got.1,
                reference.1,
                got.0.len(),
                reference.0.len()
            ));
        }
        runs.push(time);
    }
    Ok(Times {
        compile_kestrel,
        compile_wasmtime,
        run_guard: runs[0],
        run_explicit: runs[1],
        run_wasmtime,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len().max(1) as f64).exp()
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    // Kestrel runs Wasm on the calling thread's stack: give it a large one.
    let result = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || bench(&o))
        .map_err(|e| e.to_string())?
        .join()
        .map_err(|_| "the benchmark thread panicked".to_string());
    let _ = std::fs::remove_dir_all(c_out_dir());
    result?
}

fn bench(o: &Options) -> Result<(), String> {
    let engine = wasmtime::Engine::new(&wasmtime::Config::new()).map_err(|e| e.to_string())?;
    let mut programs = sightglass_programs(&o.sightglass);
    if o.c {
        programs.extend(c_programs());
    }
    programs.retain(|p| {
        let path = p.wasm.to_string_lossy();
        o.only.as_ref().is_none_or(|t| path.contains(t.as_str()))
            && !o.skip.iter().any(|t| path.contains(t.as_str()))
    });
    println!(
        "Kestrel (opt level {}) vs Wasmtime 48.0.8 (Cranelift, default opt level speed), min of {} reps; ratios are Kestrel / Wasmtime\n",
        o.opt_level.name(),
        o.reps
    );
    println!(
        "{:<44} {:>10} {:>10} {:>6}   {:>10} {:>10} {:>10} {:>6} {:>6}",
        "program",
        "compile K",
        "compile W",
        "ratio",
        "run K grd",
        "run K exp",
        "run W",
        "ratio",
        "grd/ex"
    );
    let (mut compile, mut run, mut guard) = (Vec::new(), Vec::new(), Vec::new());
    let mut left_out = Vec::new();
    for p in &programs {
        match measure(&engine, p, o.reps, o.opt_level) {
            Ok(t) => {
                let c = ms(t.compile_kestrel) / ms(t.compile_wasmtime);
                let r = ms(t.run_guard) / ms(t.run_wasmtime);
                let g = ms(t.run_guard) / ms(t.run_explicit);
                println!(
                    "{:<44} {:>8.1}ms {:>8.1}ms {:>6.2}   {:>8.1}ms {:>8.1}ms {:>8.1}ms {:>6.2} {:>6.2}",
                    p.name,
                    ms(t.compile_kestrel),
                    ms(t.compile_wasmtime),
                    c,
                    ms(t.run_guard),
                    ms(t.run_explicit),
                    ms(t.run_wasmtime),
                    r,
                    g
                );
                compile.push(c);
                run.push(r);
                guard.push(g);
            }
            Err(why) => left_out.push(format!("{}: {why}", p.name)),
        }
    }
    println!(
        "\ngeomean over {} programs: compile {:.3}x, run {:.3}x (Kestrel guard / Wasmtime), guard / explicit {:.3}x",
        compile.len(),
        geomean(&compile),
        geomean(&run),
        geomean(&guard)
    );
    if !left_out.is_empty() {
        println!("left out ({}):", left_out.len());
        for l in &left_out {
            println!("  {l}");
        }
    }
    Ok(())
}
