//! `kestrel-bench code-speed [--kernels DIR] [--runs R] [--only NAME]`: the run time of
//! Kestrel's code against Cranelift 0.135.8's, both at opt speed, on small kernels written
//! as front ends write CLIF (`bench/kernels/*.clif` by default), in the same process.
//!
//! A kernel file holds a `%main(i64 buffer, i64 n) -> i64 system_v` (and whatever functions
//! it calls) and a header line `; code-speed: n=N buffer=BYTES`. Each engine compiles the
//! file once (compile time is not measured here); then the engines take turns, `R` times
//! each (5 by default), calling `%main` on a fresh zeroed buffer of `BYTES` bytes. Every
//! result must equal the first one (a mismatch between the engines, or between runs, is an
//! error). A kernel's time is the minimum over its runs.
//!
//! Output: a line per kernel (both times in ms, the ratio Kestrel/Cranelift), and as the
//! last line the geometric mean of the per-kernel ratios.

mod engines;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use engines::Loaded;

struct Args {
    dir: PathBuf,
    runs: usize,
    only: Option<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels"),
        runs: 5,
        only: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--kernels" => parsed.dir = PathBuf::from(value),
            "--runs" => {
                parsed.runs = value
                    .parse()
                    .ok()
                    .filter(|&r| r > 0)
                    .ok_or_else(|| format!("bad value for --runs: {value}"))?
            }
            "--only" => parsed.only = Some(value.clone()),
            _ => {
                return Err(format!(
                    "unknown option {flag} (options: --kernels DIR --runs R --only NAME)"
                ))
            }
        }
    }
    Ok(parsed)
}

/// A kernel's `; code-speed: n=N buffer=BYTES` header.
struct Header {
    n: i64,
    buffer: usize,
}

fn header(text: &str, file: &str) -> Result<Header, String> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("; code-speed:"))
        .ok_or_else(|| format!("{file}: no `; code-speed: n=N buffer=BYTES` line"))?;
    let (mut n, mut buffer) = (None, None);
    for word in line.split_whitespace() {
        let bad = || format!("{file}: bad `{word}` in the code-speed line");
        match word.split_once('=') {
            Some(("n", v)) => n = Some(v.parse().map_err(|_| bad())?),
            Some(("buffer", v)) => buffer = Some(v.parse().map_err(|_| bad())?),
            _ => return Err(bad()),
        }
    }
    match (n, buffer) {
        (Some(n), Some(buffer)) => Ok(Header { n, buffer }),
        _ => Err(format!("{file}: the code-speed line needs n= and buffer=")),
    }
}

/// `%main` must be `(i64, i64) -> i64 system_v`, the only signature the harness calls.
fn check_main(funcs: &[kestrel_ir::Function], file: &str) -> Result<(), String> {
    use kestrel_ir::{CallConv, Type};
    let main = funcs
        .iter()
        .find(|f| kestrel_jit::ir_name(&f.name) == "main")
        .ok_or_else(|| format!("{file}: no function %main"))?;
    let sig = &main.signature;
    let types = |ps: &[kestrel_ir::AbiParam]| ps.iter().map(|p| p.value_type).collect::<Vec<_>>();
    if types(&sig.params) != [Type::I64, Type::I64]
        || types(&sig.returns) != [Type::I64]
        || sig.call_conv != CallConv::SystemV
    {
        return Err(format!(
            "{file}: %main must be `(i64, i64) -> i64 system_v`"
        ));
    }
    Ok(())
}

struct Kernel {
    name: String,
    header: Header,
    kestrel: Loaded,
    cranelift: Loaded,
}

fn load(path: &std::path::Path) -> Result<Kernel, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let header = header(&text, &file)?;
    let kfuncs = kestrel_ir::parse_functions(&text, &file).map_err(|e| e.to_string())?;
    check_main(&kfuncs, &file)?;
    let cfuncs = cranelift_reader::parse_functions(&text)
        .map_err(|e| format!("{file}: cranelift reader: {e}"))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or(file.clone());
    Ok(Kernel {
        name,
        kestrel: engines::kestrel(&kfuncs).map_err(|e| format!("{file}: {e}"))?,
        cranelift: engines::cranelift(cfuncs).map_err(|e| format!("{file}: {e}"))?,
        header,
    })
}

/// One call of `code` on a fresh zeroed buffer: the result and the time of the call alone.
fn run_once(code: &Loaded, h: &Header) -> (i64, Duration) {
    let mut buffer = vec![0u8; h.buffer.max(1)];
    let start = Instant::now();
    // SAFETY: `%main` was checked to be `(i64, i64) -> i64 system_v`; the kernels touch
    // at most `buffer` bytes of their first argument (their header says how many).
    let result = unsafe { (code.entry)(buffer.as_mut_ptr(), h.n) };
    let time = start.elapsed();
    (std::hint::black_box(result), time)
}

/// Minimum times of Kestrel and Cranelift over `runs` alternating runs each.
fn measure(k: &Kernel, runs: usize) -> Result<(Duration, Duration, i64), String> {
    let (mut best_k, mut best_c) = (Duration::MAX, Duration::MAX);
    let mut expected = None;
    for _ in 0..runs {
        for (engine, code, best) in [
            ("kestrel", &k.kestrel, &mut best_k),
            ("cranelift", &k.cranelift, &mut best_c),
        ] {
            let (result, time) = run_once(code, &k.header);
            let want = *expected.get_or_insert(result);
            if result != want {
                return Err(format!(
                    "{}: {engine} returned {result}, expected {want} (results differ)",
                    k.name
                ));
            }
            *best = (*best).min(time);
        }
    }
    Ok((best_k, best_c, expected.unwrap_or(0)))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    let files = crate::compile_speed::clif_files(&args.dir)?;
    let files: Vec<_> = files
        .into_iter()
        .filter(|p| {
            args.only
                .as_ref()
                .is_none_or(|o| p.file_stem().is_some_and(|s| s == o.as_str()))
        })
        .collect();
    if files.is_empty() {
        return Err(format!("no kernels under {}", args.dir.display()));
    }
    println!(
        "kernels: {} under {}; opt speed on both sides; minimum of {} alternating runs",
        files.len(),
        args.dir.display(),
        args.runs
    );
    println!(
        "{:<14}{:>14}{:>14}{:>10}{:>22}",
        "kernel", "kestrel ms", "cranelift ms", "ratio", "result"
    );
    let mut ratios = Vec::new();
    for path in &files {
        let kernel = load(path)?;
        let (k, c, result) = measure(&kernel, args.runs)?;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let ratio = ms(k) / ms(c);
        println!(
            "{:<14}{:>14.3}{:>14.3}{ratio:>10.3}{result:>22}",
            kernel.name,
            ms(k),
            ms(c)
        );
        ratios.push(ratio);
    }
    let geomean = crate::compile_speed::geomean(ratios.iter().copied());
    println!(
        "code-speed ratio kestrel/cranelift (geomean over {} kernels): {geomean:.3}",
        ratios.len()
    );
    Ok(())
}
