//! `kestrel-bench compile-speed [--target x86_64|aarch64] [--opt none|speed] [--corpus DIR]
//! [--count N] [--large N] [--seed S] [--batch-us U] [--batches B] [--contexts reused|fresh]
//! [--worst N]`:
//! Kestrel's compile time against Cranelift 0.135.8 at the same opt level (`none` by default;
//! at `speed`, Kestrel's mid-end and Cranelift's `opt_level=speed`), on the same functions,
//! in the same process, both compiling for the same target (x86-64 by default); each engine
//! compiles in a context kept across compiles (`--contexts fresh`: new memory for every
//! compile, on both sides).
//!
//! Corpus: with `--corpus DIR`, every `.clif` file under DIR. Without it, the repository's
//! `tests/**/*.clif` plus `--count` generated functions (`gen`), `--large` of them above
//! 1,000 instructions. Functions either compiler cannot take are excluded from both sides
//! and counted by reason (`corpus`). Timing (`timing`) alternates the engines per batch and
//! takes medians; parsing is outside the clock. Then Kestrel's phases are timed separately
//! (the clock is read between phases only in that pass), and a sample of generated
//! functions is run natively and in the interpreter (`runcheck`; x86-64 only, the host).
//!
//! Output: a table per size bucket (functions, mean µs per compile of each engine, geometric
//! mean of the per-function ratios), with `--worst N` the N functions of highest ratio,
//! Kestrel's phase split, the exclusions, and as the last
//! line the geometric mean of the per-function ratios Kestrel/Cranelift over the corpus.

mod corpus;
pub use corpus::clif_files;
pub mod engines;
mod gen;
mod runcheck;
mod timing;

use std::path::PathBuf;
use std::time::Duration;

use kestrel_codegen::machinst::compile::PhaseTimes;

use corpus::{Case, Exclusions};
use engines::{Cranelift, OptLevel, Target};
use timing::{Config, Sample};

struct Args {
    target: Target,
    level: OptLevel,
    corpus: Option<PathBuf>,
    count: usize,
    large: usize,
    seed: u64,
    timing: Config,
    /// Write the generated functions here, one `.clif` file each, for profiling.
    emit_generated: Option<PathBuf>,
    /// List this many functions of highest ratio (where to look first when profiling).
    worst: usize,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        target: Target::X64,
        level: OptLevel::None,
        corpus: None,
        count: 240,
        large: 24,
        seed: 1,
        timing: Config {
            batch: Duration::from_micros(400),
            min_batches: 7,
            min_total: Duration::from_millis(2),
            fresh_contexts: false,
        },
        emit_generated: None,
        worst: 0,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |_| format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--target" => parsed.target = Target::parse(value)?,
            "--opt" => {
                parsed.level = OptLevel::from_name(value)
                    .ok_or_else(|| format!("unknown opt level {value} (none or speed)"))?
            }
            "--corpus" => parsed.corpus = Some(PathBuf::from(value)),
            "--count" => parsed.count = value.parse().map_err(bad)?,
            "--large" => parsed.large = value.parse().map_err(bad)?,
            "--seed" => parsed.seed = value.parse().map_err(bad)?,
            "--batch-us" => {
                parsed.timing.batch = Duration::from_micros(value.parse().map_err(bad)?)
            }
            "--batches" => parsed.timing.min_batches = value.parse().map_err(bad)?,
            "--contexts" if value == "fresh" => parsed.timing.fresh_contexts = true,
            "--contexts" if value == "reused" => parsed.timing.fresh_contexts = false,
            "--emit-generated" => parsed.emit_generated = Some(PathBuf::from(value)),
            "--worst" => parsed.worst = value.parse().map_err(bad)?,
            _ => {
                return Err(format!(
                    "unknown option {flag} (options: --target T --opt L --corpus DIR --count N --large N \
                     --seed S --batch-us U --batches B --contexts reused|fresh --emit-generated DIR \
                     --worst N)"
                ))
            }
        }
    }
    Ok(parsed)
}

/// Size buckets by IR instruction count: (label, lower bound inclusive).
const BUCKETS: &[(&str, usize)] = &[
    ("1-19", 0),
    ("20-99", 20),
    ("100-999", 100),
    ("1000+", 1000),
];

fn bucket(insts: usize) -> usize {
    BUCKETS
        .iter()
        .rposition(|&(_, lo)| insts >= lo)
        .unwrap_or(0)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub fn geomean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    (sum / n.max(1) as f64).exp()
}

fn load(args: &Args, cl: &Cranelift) -> Result<(Vec<Case>, Exclusions, String), String> {
    let (mut cases, mut excluded) = (Vec::new(), Exclusions::default());
    let dir = match &args.corpus {
        Some(dir) => dir.clone(),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests"),
    };
    let files = corpus::clif_files(&dir)?;
    for path in &files {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .display()
            .to_string();
        corpus::add_text(&name, &text, false, cl, &mut cases, &mut excluded);
    }
    let mut source = format!("{} .clif files under {}", files.len(), dir.display());
    if args.corpus.is_none() {
        for (name, text) in gen::corpus(args.count, args.large, args.seed) {
            if let Some(out) = &args.emit_generated {
                std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
                let path = out.join(format!("{name}.clif"));
                std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            corpus::add_text(&name, &text, true, cl, &mut cases, &mut excluded);
        }
        source.push_str(&format!(
            " + {} generated functions (seed {}, {} over 1,000 instructions requested)",
            args.count, args.seed, args.large
        ));
    }
    Ok((cases, excluded, source))
}

fn print_table(cases: &[Case], samples: &[Sample]) {
    println!(
        "{:<16}{:>10}{:>14}{:>16}{:>10}",
        "insts", "functions", "kestrel µs", "cranelift µs", "ratio"
    );
    let rows = BUCKETS
        .iter()
        .enumerate()
        .map(|(i, (label, _))| (*label, Some(i)));
    for (label, which) in rows.chain([("all", None)]) {
        let picked: Vec<&Sample> = cases
            .iter()
            .zip(samples)
            .filter(|(c, _)| which.is_none_or(|b| bucket(c.insts) == b))
            .map(|(_, s)| s)
            .collect();
        if picked.is_empty() {
            continue;
        }
        let n = picked.len() as f64;
        let k = picked.iter().map(|s| micros(s.kestrel)).sum::<f64>() / n;
        let c = picked.iter().map(|s| micros(s.cranelift)).sum::<f64>() / n;
        let r = geomean(
            picked
                .iter()
                .map(|s| micros(s.kestrel) / micros(s.cranelift)),
        );
        println!("{label:<16}{:>10}{k:>14.1}{c:>16.1}{r:>10.3}", picked.len());
    }
}

/// The `n` functions with the highest ratio Kestrel/Cranelift, highest first.
fn print_worst(cases: &[Case], samples: &[Sample], n: usize) {
    if n == 0 {
        return;
    }
    let mut order: Vec<(f64, usize)> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| (micros(s.kestrel) / micros(s.cranelift), i))
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("\nhighest ratios:");
    println!(
        "{:>8}{:>8}{:>14}{:>16}  function",
        "ratio", "insts", "kestrel µs", "cranelift µs"
    );
    for &(ratio, i) in order.iter().take(n) {
        let (c, s) = (&cases[i], &samples[i]);
        println!(
            "{ratio:>8.3}{:>8}{:>14.1}{:>16.1}  {}",
            c.insts,
            micros(s.kestrel),
            micros(s.cranelift),
            c.label
        );
    }
}

/// Kestrel's time per compile in each phase: the median, phase by phase, of 5 batches of
/// `n` compiles.
fn phase_median(
    f: &kestrel_ir::Function,
    target: Target,
    level: OptLevel,
    n: u32,
) -> [Duration; 4] {
    let mut ctx = kestrel_codegen::machinst::compile::CompileContext::new();
    let batches: Vec<PhaseTimes> = (0..5)
        .map(|_| {
            let mut t = PhaseTimes::default();
            for _ in 0..n {
                let kestrel = engines::kestrel(&mut ctx, f, target, level, Some(&mut t));
                let _ = std::hint::black_box(kestrel);
            }
            t
        })
        .collect();
    let median = |phase: fn(&PhaseTimes) -> Duration| {
        let mut xs: Vec<Duration> = batches.iter().map(phase).collect();
        xs.sort();
        xs[xs.len() / 2] / n
    };
    [
        median(|t| t.front()),
        median(|t| t.regalloc.total()),
        median(|t| t.emit),
        median(|t| t.mid_end),
    ]
}

/// Kestrel's per-phase time per compile, for each bucket and overall (the mid-end's column
/// only at opt speed).
fn print_phases(cases: &[Case], samples: &[Sample], target: Target, level: OptLevel) {
    let per_case: Vec<[Duration; 4]> = cases
        .iter()
        .zip(samples)
        .map(|(c, s)| phase_median(&c.kestrel, target, level, s.kestrel_batch as u32))
        .collect();
    let mid_end = level != OptLevel::None;
    println!("\nkestrel phases (mean µs per compile; share of the bucket's total):");
    let mut heading = format!("{:<16}", "insts");
    if mid_end {
        heading.push_str(&format!("{:>22}", "mid-end"));
    }
    heading.push_str(&format!(
        "{:>22}{:>22}{:>22}",
        "block order+lowering", "register allocation", "emission"
    ));
    println!("{heading}");
    let rows = BUCKETS
        .iter()
        .enumerate()
        .map(|(i, (label, _))| (*label, Some(i)));
    for (label, which) in rows.chain([("all", None)]) {
        let picked: Vec<&[Duration; 4]> = cases
            .iter()
            .zip(&per_case)
            .filter(|(c, _)| which.is_none_or(|b| bucket(c.insts) == b))
            .map(|(_, t)| t)
            .collect();
        if picked.is_empty() {
            continue;
        }
        let n = picked.len() as f64;
        let mean = |k: usize| picked.iter().map(|t| micros(t[k])).sum::<f64>() / n;
        let (l, r, e, m) = (mean(0), mean(1), mean(2), mean(3));
        let total = (l + r + e + m).max(f64::MIN_POSITIVE);
        let cell = |x: f64| format!("{x:.1} ({:.0}%)", 100.0 * x / total);
        let mut line = format!("{label:<16}");
        if mid_end {
            line.push_str(&format!("{:>22}", cell(m)));
        }
        line.push_str(&format!("{:>22}{:>22}{:>22}", cell(l), cell(r), cell(e)));
        println!("{line}");
    }
}

fn print_exclusions(excluded: &Exclusions) {
    if !excluded.details.is_empty() {
        println!("\nexclusion details:");
        for d in &excluded.details {
            println!("  {d}");
        }
    }
    let list = |m: &std::collections::BTreeMap<String, usize>| {
        let mut items: Vec<_> = m.iter().collect();
        items.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        items
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unsupported: usize = excluded.unsupported.values().sum();
    let mut line = format!(
        "excluded: {} (unsupported by kestrel: {unsupported}",
        excluded.total()
    );
    if unsupported > 0 {
        line.push_str(&format!(" — {}", list(&excluded.unsupported)));
    }
    if !excluded.other.is_empty() {
        line.push_str(&format!("; other: {}", list(&excluded.other)));
    }
    println!("{line})");
}

pub fn run(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    let cl = Cranelift::for_target(args.target, args.level)?;
    let (cases, excluded, source) = load(&args, &cl)?;
    if cases.is_empty() {
        print_exclusions(&excluded);
        return Err("no function both compilers can compile".into());
    }
    let generated: Vec<&Case> = cases.iter().filter(|c| c.generated).collect();
    let large = generated.iter().filter(|c| c.insts > 1000).count();
    println!("target: {} (both compilers)", args.target.name());
    println!("corpus: {source}");
    println!(
        "kept: {} functions ({} generated, {large} of them over 1,000 instructions; largest {} instructions)",
        cases.len(),
        generated.len(),
        cases.iter().map(|c| c.insts).max().unwrap_or(0)
    );
    let samples: Vec<Sample> = cases
        .iter()
        .map(|c| timing::measure(&args.timing, &cl, &c.kestrel, &c.cranelift))
        .collect();
    println!(
        "\ncompile time per function, opt {} (median per compile, alternating batches):",
        args.level.name()
    );
    print_table(&cases, &samples);
    print_worst(&cases, &samples, args.worst);
    print_phases(&cases, &samples, args.target, args.level);
    let sample: Vec<&Case> = generated.iter().step_by(8).copied().collect();
    if args.target != Target::X64 {
        println!("\nrun check: not run (the code is not the host's; `kestrel test` runs AArch64 code under qemu)");
    } else if !sample.is_empty() {
        let (agreed, ran, failures) = runcheck::check(&sample, args.seed);
        println!("\nrun check: {agreed}/{ran} generated functions give the interpreter's results natively");
        for f in failures.iter().take(10) {
            println!("  mismatch: {f}");
        }
    }
    print_exclusions(&excluded);
    let ratio = geomean(
        samples
            .iter()
            .map(|s| micros(s.kestrel) / micros(s.cranelift)),
    );
    println!(
        "compile-time ratio kestrel/cranelift (opt {}, geomean over {} functions): {ratio:.3}",
        args.level.name(),
        cases.len()
    );
    Ok(())
}
