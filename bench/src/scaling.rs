//! `kestrel-bench scaling [--shape NAME] [--scale F] [--runs N] [--emit DIR] [--profile N]`: how compile
//! time and memory grow with function size, Kestrel against Cranelift 0.135.8 (opt none,
//! verifier off on both sides, as in `compile-speed`), in the same process.
//!
//! Every shape of `shapes` is generated at three sizes, each double the last (`--scale`
//! multiplies the base size). Per size and engine: the fastest compile time over `--runs`
//! compiles (parsing outside the clock), and the peak heap of one compile (a counting
//! global allocator, `peak_alloc`). Kestrel is also timed with its allocation checker on.
//! Growth is time(2n) / time(n); a phase linear in the function grows about 2×.
//! `--emit DIR` writes the generated `.clif` files instead of measuring; `--profile N`
//! compiles the largest size N times with Kestrel alone (to run under a profiler).
//!
//! Every compile starts from fresh memory (the one-shot API), so glibc's adaptive malloc
//! thresholds would make a size's time depend on the shapes measured before it; they are
//! pinned for the whole run (`malloc_settings`), alike for both engines.

mod shapes;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::{CompileInput, TargetIsa};
use kestrel_codegen::machinst::compile::CompileContext;
use kestrel_codegen::settings::Flags;

use crate::compile_speed::engines::Cranelift;
use crate::peak_alloc::peak_during;
use shapes::{Shape, SHAPES};

struct Args {
    shape: Option<String>,
    scale: f64,
    runs: usize,
    emit: Option<PathBuf>,
    /// Compile only with Kestrel, this many times, at the largest size (for a profiler).
    profile: Option<usize>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        shape: None,
        scale: 1.0,
        runs: 5,
        emit: None,
        profile: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |_: std::num::ParseIntError| format!("bad value for {flag}: {value}");
        let bad_f = |_: std::num::ParseFloatError| format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--shape" => parsed.shape = Some(value.clone()),
            "--scale" => parsed.scale = value.parse().map_err(bad_f)?,
            "--runs" => parsed.runs = value.parse::<usize>().map_err(bad)?.max(1),
            "--emit" => parsed.emit = Some(PathBuf::from(value)),
            "--profile" => parsed.profile = Some(value.parse().map_err(bad)?),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if let Some(name) = &parsed.shape {
        if !SHAPES.iter().any(|s| s.name == name) {
            let names: Vec<_> = SHAPES.iter().map(|s| s.name).collect();
            return Err(format!("no shape `{name}` (shapes: {})", names.join(", ")));
        }
    }
    Ok(parsed)
}

/// One engine's measurement at one size.
#[derive(Clone, Copy)]
struct Measure {
    time: Duration,
    peak: usize,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    crate::malloc_settings::pin_thresholds();
    let shapes: Vec<&Shape> = SHAPES
        .iter()
        .filter(|s| args.shape.as_deref().is_none_or(|n| n == s.name))
        .collect();
    if let Some(dir) = &args.emit {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for shape in &shapes {
            for n in sizes(shape, args.scale) {
                let path = dir.join(format!("{}-{n}.clif", shape.name.replace(' ', "_")));
                std::fs::write(&path, (shape.generate)(n))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        return Ok(());
    }
    let x64 = x64_isa()?;
    if let Some(times) = args.profile {
        for shape in &shapes {
            let n = sizes(shape, args.scale)[2];
            let funcs = kestrel_ir::text::parse_functions(&(shape.generate)(n), "shape")
                .map_err(|e| e.to_string())?;
            for _ in 0..times {
                let code = compile_verified(&*x64, &funcs[0], false);
                black_box(code.map_err(|e| e.to_string())?);
            }
        }
        return Ok(());
    }
    let cranelift = Cranelift::new()?;
    println!(
        "{:<12}{:>9}{:>8} | {:>10}{:>10}{:>8} | {:>10}{:>9} | {:>10}{:>10}{:>7} | {:>7}{:>7}",
        "shape",
        "size",
        "insts",
        "kestrel",
        "+checker",
        "growth",
        "kestrel",
        "",
        "cranelift",
        "",
        "growth",
        "time",
        "memory"
    );
    println!(
        "{:<12}{:>9}{:>8} | {:>10}{:>10}{:>8} | {:>10}{:>9} | {:>10}{:>10}{:>7} | {:>7}{:>7}",
        "", "", "", "ms", "ms", "", "peak MB", "", "ms", "peak MB", "", "ratio", "ratio"
    );
    for shape in shapes {
        let mut previous: Option<(Measure, Measure)> = None;
        for n in sizes(shape, args.scale) {
            let text = (shape.generate)(n);
            let row = measure(&*x64, &cranelift, &text, args.runs)
                .map_err(|e| format!("{} at {n} {}: {e}", shape.name, shape.unit))?;
            let (k, kc, c, insts) = row;
            let growth = |now: Duration, before: Option<Duration>| {
                before.map_or(String::from("-"), |b| format!("{:.2}", ratio(now, b)))
            };
            println!(
                "{:<12}{:>9}{:>8} | {:>10.2}{:>10.2}{:>8} | {:>10.1}{:>9} | {:>10.2}{:>10.1}{:>7} | {:>7.3}{:>7.2}",
                shape.name,
                format!("{n} {}", short(shape.unit)),
                insts,
                ms(k.time),
                ms(kc.time),
                growth(k.time, previous.map(|p| p.0.time)),
                mb(k.peak),
                "",
                ms(c.time),
                mb(c.peak),
                growth(c.time, previous.map(|p| p.1.time)),
                ratio(k.time, c.time),
                k.peak as f64 / c.peak.max(1) as f64,
            );
            previous = Some((k, c));
        }
    }
    Ok(())
}

fn sizes(shape: &Shape, scale: f64) -> [usize; 3] {
    let n = ((shape.base as f64 * scale) as usize).max(8);
    [n, 2 * n, 4 * n]
}

fn short(unit: &str) -> &str {
    &unit[..1]
}

/// Kestrel (checker off), Kestrel (checker on), Cranelift, and the instruction count.
/// Kestrel's x86-64 target (the host's features).
fn x64_isa() -> Result<std::sync::Arc<dyn TargetIsa>, String> {
    let builder = kestrel_codegen::isa::lookup("x86_64").map_err(|e| e.to_string())?;
    Ok(builder.finish())
}

/// One compile of the verified function `f` in a fresh context (the checker on when
/// `check`), through the target's one entry point.
fn compile_verified(
    isa: &dyn TargetIsa,
    f: &kestrel_ir::Function,
    check: bool,
) -> Result<kestrel_codegen::machinst::CompiledCode, kestrel_codegen::machinst::CodegenError> {
    let flags = Flags {
        check_regalloc: check,
        verified: true,
        ..Flags::default()
    };
    let ctx = &mut CompileContext::new();
    isa.compile(
        ctx,
        CompileInput::Borrowed(f),
        &flags,
        &mut Chaos::disabled(),
        None,
    )
}

fn measure(
    x64: &dyn TargetIsa,
    cranelift: &Cranelift,
    text: &str,
    runs: usize,
) -> Result<(Measure, Measure, Measure, usize), String> {
    let funcs = kestrel_ir::text::parse_functions(text, "shape").map_err(|e| e.to_string())?;
    let f = &funcs[0];
    kestrel_ir::verify_function(f).map_err(|e| format!("kestrel verifier: {e}"))?;
    let insts = f.num_placed_insts();
    let cl_funcs =
        cranelift_reader::parse_functions(text).map_err(|e| format!("cranelift parse: {e}"))?;
    let cl = &cl_funcs[0];
    // Each closure compiles once and returns (time, peak heap of that compile).
    let kestrel_once = |check: bool| {
        move || {
            let start = Instant::now();
            let (code, peak) = peak_during(|| compile_verified(x64, f, check));
            let time = start.elapsed();
            drop(black_box(code.map_err(|e| format!("kestrel: {e}"))?));
            Ok((time, peak))
        }
    };
    let cranelift_once = || {
        let mut ctx = Cranelift::context(cl);
        let start = Instant::now();
        let (size, peak) = peak_during(|| cranelift.compile(&mut ctx));
        let time = start.elapsed();
        black_box(size)?;
        Ok((time, peak))
    };
    let k = fastest_of(runs, kestrel_once(false))?;
    let kc = fastest_of(runs, kestrel_once(true))?;
    let c = fastest_of(runs, cranelift_once)?;
    Ok((k, kc, c, insts))
}

/// The fastest time and the largest peak over `runs` calls of `once`. (The minimum, not
/// the median: these compiles are deterministic, so the fastest run is the one least
/// disturbed by the rest of the machine, for both engines alike.)
fn fastest_of(
    runs: usize,
    mut once: impl FnMut() -> Result<(Duration, usize), String>,
) -> Result<Measure, String> {
    let mut times = Vec::with_capacity(runs);
    let mut peak = 0;
    for _ in 0..runs {
        let (t, p) = once()?;
        times.push(t);
        peak = peak.max(p);
    }
    Ok(Measure {
        time: times.iter().copied().min().unwrap_or_default(),
        peak,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}
