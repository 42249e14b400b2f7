//! `kestrel fuzz`: an in-process differential fuzzing campaign.
//!
//! Oracle 1 (interpreter vs native) always runs; `--chaos` adds oracle 2 (native with the
//! chaos control vs without); `--opt` adds the mid-end's oracles (the optimized IR
//! interpreted, and native code at opt level `speed`, each vs the interpreter); `--against-cranelift` adds oracle 3 (Cranelift's interpreter),
//! available only in builds with the `cranelift` feature; `--object` adds the object oracle
//! (cases compiled to one ELF object, linked by `cc`, run as a separate process); `--aarch64`
//! adds the AArch64 object oracle (linked by `aarch64-linux-gnu-gcc -static`, run under
//! `qemu-aarch64`; cases it reports unsupported are counted, not run by it). Progress goes to stderr; the
//! coverage report (with `--coverage`) and the final `N cases, M failures` line go to stdout,
//! the final line last. `--cfg-shapes` runs the compile-only property of
//! `kestrel_difftest::cfg_shapes` instead (every verified function compiles on both ISAs).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use kestrel_difftest::campaign::{self, Campaign, Limit};

/// The command's options.
#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Campaign seed (default: from the clock; printed first).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop after this many seconds (default 60).
    #[arg(long, value_name = "SECS", conflicts_with = "count")]
    pub time: Option<u64>,
    /// Stop after this many cases (deterministic for a seed).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Also compare native code with the chaos control on against it off.
    #[arg(long)]
    pub chaos: bool,
    /// Also check the mid-end: the optimized IR in the interpreter, and native code at opt
    /// level `speed`, each against the interpreter on the original IR.
    #[arg(long)]
    pub opt: bool,
    /// Also run every case through an ELF object linked by `cc` into a separate process
    /// (cases batched into one executable), compared with the interpreter.
    #[arg(long)]
    pub object: bool,
    /// Also run every case compiled for AArch64 into an ELF object, linked statically by
    /// `aarch64-linux-gnu-gcc` and run under `qemu-aarch64` (batched), compared with the
    /// interpreter (not with `--against-cranelift`, whose generator filter differs).
    #[arg(long, conflicts_with = "against_cranelift")]
    pub aarch64: bool,
    /// With `--aarch64`: compile for Armv8.1 LSE atomics (`target aarch64 has_lse`) and run
    /// on qemu's `max` CPU.
    #[arg(long, requires = "aarch64")]
    pub lse: bool,
    /// Also compare with Cranelift 0.135.8 (builds with `--features cranelift` only).
    #[arg(long)]
    pub against_cranelift: bool,
    /// Directory for minimized failures (created if missing).
    #[arg(long, value_name = "DIR", default_value = "fuzz-failures")]
    pub out: PathBuf,
    /// Print which opcodes and lowering rules the campaign exercised.
    #[arg(long)]
    pub coverage: bool,
    /// Instead of the differential campaign, the compile-only property over random
    /// control-flow shapes (self loops, back edges, switches, many exits, entry-block
    /// edges the verifier must refuse): every function that verifies compiles on x86-64
    /// and AArch64, checker on, at both opt levels, without a panic or an error.
    #[arg(long, conflicts_with_all = ["chaos", "opt", "object", "aarch64", "against_cranelift", "coverage", "scaling"])]
    pub cfg_shapes: bool,
    /// Instead of comparing results, check compile-time scaling: random CFG shapes (chains,
    /// diamonds, switches, loop nests, early exits, calls, many live values) compiled at
    /// four doubling sizes; per shape and phase, the growth of the allocator's counted work
    /// (a phase above 2.3× per doubling is a failure) and of each phase's time (above 2.3×
    /// on average, reported as slow: times depend on the machine's load).
    #[arg(long, conflicts_with_all = ["chaos", "opt", "object", "aarch64", "against_cranelift", "coverage"])]
    pub scaling: bool,
    /// With `--scaling`: the smallest size, in units (a unit is a few blocks).
    #[arg(
        long,
        value_name = "UNITS",
        default_value_t = 1000,
        requires = "scaling"
    )]
    pub scaling_base: usize,
    /// With `--scaling`: measure only the random shape of this seed (as a report names it,
    /// `random#SEED`), to reproduce a finding.
    #[arg(long, value_name = "SEED", requires = "scaling")]
    pub scaling_shape: Option<u64>,
    /// With `--scaling-shape`: also write that shape's largest function to FILE (CLIF, for
    /// `kestrel compile --timing`).
    #[arg(long, value_name = "FILE", requires = "scaling_shape")]
    pub scaling_emit: Option<PathBuf>,
}

pub fn fuzz(args: FuzzArgs) -> Result<ExitCode, String> {
    let seed = args.seed.unwrap_or_else(fresh_seed);
    if args.scaling {
        let run = crate::scaling::Run {
            seed,
            time: args.time,
            count: args.count,
            base: args.scaling_base,
            only: args.scaling_shape,
            emit: args.scaling_emit,
        };
        return crate::scaling::campaign(run);
    }
    let limit = match (args.time, args.count) {
        (Some(_), Some(_)) => return Err("give --time or --count, not both".into()),
        (Some(secs), None) => Limit::Time(Duration::from_secs(secs)),
        (None, Some(n)) => Limit::Cases(n),
        (None, None) => Limit::Time(Duration::from_secs(60)),
    };
    if args.cfg_shapes {
        return cfg_shapes(seed, &limit, &args.out);
    }
    let mut campaign = Campaign::new(seed);
    campaign.limit = limit;
    campaign.chaos = args.chaos;
    campaign.opt = args.opt;
    campaign.out_dir = args.out;
    if args.object {
        campaign
            .extra
            .push(Box::new(kestrel_difftest::ObjectOracle::new()));
    }
    if args.aarch64 {
        campaign
            .extra
            .push(Box::new(kestrel_difftest::ObjectOracle::aarch64_with(
                if args.lse { &["has_lse"] } else { &[] },
            )?));
    }
    if args.against_cranelift {
        add_cranelift(&mut campaign)?;
    }
    let oracles: Vec<&str> = campaign::oracles(true, args.chaos, args.opt, Vec::new())
        .iter()
        .map(|o| o.name())
        .chain(campaign.extra.iter().map(|o| o.name()))
        .collect();
    eprintln!(
        "fuzz: seed {seed}, oracles: {}, failures into {}",
        oracles.join(", "),
        campaign.out_dir.display()
    );
    let summary = campaign::run(campaign, &mut std::io::stderr());
    let _ = std::io::stderr().flush();
    let mut out = std::io::stdout().lock();
    if args.coverage {
        if let Some(cov) = &summary.coverage {
            let _ = write!(out, "{}", cov.report());
        }
    }
    let _ = writeln!(out, "{}", summary.final_line());
    let _ = out.flush();
    Ok(if summary.failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--cfg-shapes`: progress on stderr, the final `N cases, M failures` line on stdout.
fn cfg_shapes(seed: u64, limit: &Limit, out: &std::path::Path) -> Result<ExitCode, String> {
    eprintln!(
        "fuzz --cfg-shapes: seed {seed}, failures into {}",
        out.display()
    );
    let summary = kestrel_difftest::cfg_shapes::campaign(seed, limit, out, &mut std::io::stderr())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "{} cases ({} compiled, {} rejected by the verifier), {} failures",
        summary.cases,
        summary.compiled,
        summary.rejected,
        summary.failures.len()
    );
    Ok(if summary.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ u64::from(std::process::id()).rotate_left(32)
}

#[cfg(feature = "cranelift")]
fn add_cranelift(campaign: &mut Campaign) -> Result<(), String> {
    crate::cranelift_oracle::install(campaign);
    Ok(())
}

#[cfg(not(feature = "cranelift"))]
fn add_cranelift(_: &mut Campaign) -> Result<(), String> {
    Err("this kestrel was built without Cranelift; rebuild with `cargo build --release -p kestrel --features cranelift` (or `cargo run --release -p kestrel --features cranelift -- fuzz --against-cranelift …`)".into())
}
