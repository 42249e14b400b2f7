//! `kestrel-bench wasm-fuzz`: differential fuzzing of Kestrel's Wasm engine against
//! Wasmtime 48 on modules from `wasm-smith`.
//!
//! Each case is a seed: the module (`gen::module`) and the arguments of every exported
//! function (`gen::Args`) follow from it. The module runs in Kestrel with guard-page
//! memories, in Kestrel with explicit bounds checks, and in Wasmtime; each run gives a list
//! of observations (instantiation, each call's results or trap kind, each exported memory
//! and global at the end; see `engines`), and Kestrel's lists must equal Wasmtime's up to
//! the first stack overflow (engines' stacks differ, so what follows is not comparable).
//! A case whose module Wasmtime refuses is skipped. A differing case is minimized with
//! `wasm-shrink` (keeping "some observation differs") and saved as `seed-S.wasm` with a
//! `seed-S.txt` saying what differed and how to replay it; the case running now is kept
//! in `current.wasm` so a crash leaves it behind.
//!
//! Usage: `wasm-fuzz [--seed S] [--time SECS | --count N] [--out DIR] [--no-shrink]`, or
//! `wasm-fuzz --replay FILE.wasm --seed S` to rerun one saved module with case S's
//! arguments. Progress goes to stderr every 10 seconds; the last line is
//! `N cases, M failures, K skipped`; a failure makes the command fail.
//!
//! Cost per case: three compiles and instantiations plus the module's run, bounded by the
//! fuel `gen` gives it.

mod wasmtime_oracle;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kestrel_difftest::wasm_gen as gen;
use kestrel_difftest::wasm_oracle::{self as oracle, first_difference};
use kestrel_wasm::BoundsChecks;

struct Options {
    seed: u64,
    time: Option<Duration>,
    count: Option<u64>,
    out: PathBuf,
    shrink: bool,
    replay: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        seed: 0,
        time: None,
        count: None,
        out: PathBuf::from("wasm-fuzz-failures"),
        shrink: true,
        replay: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let number =
            |name: &str, v: String| v.parse::<u64>().map_err(|e| format!("{name} `{v}`: {e}"));
        match flag.as_str() {
            "--seed" => o.seed = number("--seed", value("--seed")?)?,
            "--time" => o.time = Some(Duration::from_secs(number("--time", value("--time")?)?)),
            "--count" => o.count = Some(number("--count", value("--count")?)?),
            "--out" => o.out = PathBuf::from(value("--out")?),
            "--replay" => o.replay = Some(PathBuf::from(value("--replay")?)),
            "--no-shrink" => o.shrink = false,
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if o.time.is_none() && o.count.is_none() {
        o.count = Some(100);
    }
    Ok(o)
}

/// What one case came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Same,
    /// Wasmtime could not compile it, or wasm-smith could not make it.
    Skipped(String),
    Differs(String),
}

/// Run `wasm` with arguments from `seed` on every engine and compare.
pub fn compare(engine: &wasmtime::Engine, wasm: &[u8], seed: u64) -> Verdict {
    let exports = match oracle::exports(wasm) {
        Ok(e) => e,
        Err(e) => return Verdict::Skipped(format!("unreadable module: {e}")),
    };
    let reference = wasmtime_oracle::run(engine, wasm, &exports, seed);
    if let Some(first) = reference.first() {
        if first.outcome.starts_with("compile error") {
            return Verdict::Skipped(format!("wasmtime: {}", first.outcome));
        }
    }
    for checks in [BoundsChecks::Guard, BoundsChecks::Explicit] {
        let ours = oracle::run_kestrel(wasm, &exports, seed, checks);
        if let Some(difference) = first_difference(&ours, &reference) {
            return Verdict::Differs(format!(
                "kestrel ({checks} bounds checks) vs wasmtime: {difference}"
            ));
        }
    }
    Verdict::Same
}

/// The Wasmtime engine every case runs on: the defaults (Cranelift, `opt_level` speed),
/// which accept every proposal `gen::config` enables.
pub fn wasmtime_engine() -> Result<wasmtime::Engine, String> {
    wasmtime::Engine::new(&wasmtime::Config::new()).map_err(|e| e.to_string())
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    // Kestrel runs Wasm on the calling thread's stack: give it a large one.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || campaign(&o))
        .map_err(|e| e.to_string())?
        .join()
        .map_err(|_| "the campaign thread panicked".to_string())?
}

fn campaign(o: &Options) -> Result<(), String> {
    let engine = wasmtime_engine()?;
    if let Some(file) = &o.replay {
        let wasm = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let verdict = compare(&engine, &wasm, o.seed);
        println!("{}: {verdict:?}", file.display());
        return match verdict {
            Verdict::Differs(_) => Err("the engines differ".into()),
            _ => Ok(()),
        };
    }
    std::fs::create_dir_all(&o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    let start = Instant::now();
    let mut last_report = start;
    let (mut cases, mut failures, mut skipped) = (0u64, 0u64, 0u64);
    let mut seed = o.seed;
    while o.count.is_none_or(|n| cases < n) && o.time.is_none_or(|t| start.elapsed() < t) {
        let verdict = match gen::module(seed) {
            Ok(wasm) => {
                let current = o.out.join("current.wasm");
                std::fs::write(&current, &wasm)
                    .map_err(|e| format!("{}: {e}", current.display()))?;
                let verdict = compare(&engine, &wasm, seed);
                if let Verdict::Differs(why) = &verdict {
                    save(o, &engine, seed, wasm, why)?;
                }
                verdict
            }
            Err(e) => Verdict::Skipped(e),
        };
        match verdict {
            Verdict::Same => {}
            Verdict::Skipped(why) => {
                if skipped == 0 {
                    eprintln!("first skipped case, seed {seed}: {why}");
                }
                skipped += 1
            }
            Verdict::Differs(_) => failures += 1,
        }
        cases += 1;
        seed = seed.wrapping_add(1);
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            eprintln!(
                "[{:>5.0}s] {cases} cases, {failures} failures, {skipped} skipped",
                start.elapsed().as_secs_f64()
            );
        }
    }
    let _ = std::fs::remove_file(o.out.join("current.wasm"));
    println!("{cases} cases, {failures} failures, {skipped} skipped");
    if failures > 0 {
        return Err(format!(
            "{failures} failing cases saved in {}",
            o.out.display()
        ));
    }
    Ok(())
}

/// Minimize (if asked) and save a differing case.
fn save(
    o: &Options,
    engine: &wasmtime::Engine,
    seed: u64,
    wasm: Vec<u8>,
    why: &str,
) -> Result<(), String> {
    eprintln!("seed {seed}: {why}");
    let original = wasm.len();
    let wasm = if o.shrink {
        let differs = |candidate: &[u8]| -> anyhow::Result<bool> {
            Ok(matches!(
                compare(engine, candidate, seed),
                Verdict::Differs(_)
            ))
        };
        match wasm_shrink::WasmShrink::default()
            .attempts(300)
            .run(wasm.clone(), differs)
        {
            Ok(info) => info.output,
            Err(_) => wasm,
        }
    } else {
        wasm
    };
    let why_now = match compare(engine, &wasm, seed) {
        Verdict::Differs(w) => w,
        other => format!("{other:?}"),
    };
    let file = o.out.join(format!("seed-{seed}.wasm"));
    write(&file, &wasm)?;
    let text = format!(
        "seed {seed}: {why}\nminimized ({original} -> {} bytes): {why_now}\nreplay: cargo run --release --manifest-path bench/Cargo.toml -- wasm-fuzz --replay {} --seed {seed}\n",
        wasm.len(),
        file.display()
    );
    write(&o.out.join(format!("seed-{seed}.txt")), text.as_bytes())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded smoke run: every case agrees, and most are compared, not skipped.
    #[test]
    fn seeded_smoke_run_agrees_with_wasmtime() {
        let run = || {
            let engine = wasmtime_engine().unwrap();
            let (mut same, mut skipped) = (0, 0);
            for seed in 0..24 {
                match compare(&engine, &gen::module(seed).unwrap(), seed) {
                    Verdict::Same => same += 1,
                    Verdict::Skipped(why) => {
                        if skipped == 0 {
                            eprintln!("first skipped case, seed {seed}: {why}");
                        }
                        skipped += 1
                    }
                    Verdict::Differs(why) => panic!("seed {seed}: {why}"),
                }
            }
            assert!(same > skipped, "{same} compared, {skipped} skipped");
        };
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }
}
