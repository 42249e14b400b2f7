//! `kestrel fuzz --scaling`: a compile-time scaling campaign over generated CFG shapes.
//!
//! The fixed shapes (exit chains) first, then random shapes from the seed, until the time
//! or count runs out. Per shape, one line on stdout: the shape, then per counted phase the
//! growth of its work at each doubling, per timed phase the average growth of its time, and
//! the verdict (`ok`; `SLOW` when only a time grew above the limit on average; `FAIL` when
//! a counted phase's work grew above it at some doubling, see `kestrel_codegen::scaling`,
//! or when a compile failed: then the line names the shape and the error). The last line is `N shapes, M failures, K slow`; exit status 1 on a failure.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use kestrel_codegen::scaling::{self, Series, Shape, COUNTED, MAX_GROWTH, TIMED};

/// Sizes measured per shape, and compiles per size (the least time is kept).
const SIZES: usize = 4;
const REPEATS: usize = 3;

/// The campaign's options (see `FuzzArgs`).
pub struct Run {
    pub seed: u64,
    pub time: Option<u64>,
    pub count: Option<u64>,
    pub base: usize,
    pub only: Option<u64>,
    pub emit: Option<std::path::PathBuf>,
}

pub fn campaign(run: Run) -> Result<ExitCode, String> {
    let Run {
        seed,
        time,
        mut count,
        base,
        only,
        emit,
    } = run;
    if let Some(shape_seed) = only {
        count = Some(1);
        if let Some(path) = &emit {
            let text = Shape::random(shape_seed, base).function(base << (SIZES - 1));
            std::fs::write(path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(time.unwrap_or(60));
    let limit = count.unwrap_or(u64::MAX);
    eprintln!(
        "fuzz --scaling: seed {seed}, sizes {base}..{} units",
        base << (SIZES - 1)
    );
    let mut out = std::io::stdout().lock();
    let (mut shapes, mut failures, mut slow) = (0u64, 0u64, 0u64);
    let mut rng = scaling::Rng::new(seed);
    let mut fixed = Shape::fixed(base).into_iter();
    while shapes < limit && (count.is_some() || Instant::now() < deadline) {
        let shape = match only {
            Some(shape_seed) => Shape::random(shape_seed, base),
            None => fixed
                .next()
                .unwrap_or_else(|| Shape::random(rng.next_u64(), base)),
        };
        shapes += 1;
        let series = match scaling::measure(&shape, base, SIZES, REPEATS) {
            Ok(series) => series,
            Err(e) => {
                // A compile failure is a finding too: reported, and the campaign goes on.
                failures += 1;
                let _ = writeln!(out, "{}: {e} FAIL", shape.name);
                continue;
            }
        };
        let verdict = if !series.violations().is_empty() {
            failures += 1;
            "FAIL"
        } else if time_above(&series) {
            slow += 1;
            "SLOW"
        } else {
            "ok"
        };
        let _ = writeln!(out, "{} {}", describe(&series), verdict);
        let _ = out.flush();
    }
    let _ = writeln!(out, "{shapes} shapes, {failures} failures, {slow} slow");
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Per timed phase, the average growth per doubling from the smallest size to the largest.
fn average_time_growth(series: &Series) -> [f64; 8] {
    let (first, last) = (
        &series.samples[0],
        &series.samples[series.samples.len() - 1],
    );
    let doublings = (series.samples.len() - 1).max(1) as f64;
    std::array::from_fn(|k| {
        let (a, b) = (first.time[k].as_secs_f64(), last.time[k].as_secs_f64());
        if a <= 0.0 {
            1.0
        } else {
            (b / a).powf(1.0 / doublings)
        }
    })
}

/// Whether some phase's time grew above the limit on average (phases under a
/// millisecond at the largest size are too short to judge).
fn time_above(series: &Series) -> bool {
    let last = &series.samples[series.samples.len() - 1];
    average_time_growth(series)
        .iter()
        .zip(&last.time)
        .any(|(&g, t)| g > MAX_GROWTH && *t > Duration::from_millis(1))
}

fn describe(series: &Series) -> String {
    let s = &series.shape;
    let first = &series.samples[0];
    let last = &series.samples[series.samples.len() - 1];
    let mut line = format!(
        "{} (units {:?} pool {} exits{}{} args {} {}{} switch {} loops {}) insts {}..{}: work",
        s.name,
        s.weights,
        s.pool,
        if s.cold_exits { " cold" } else { "" },
        if s.exit_first { " first" } else { "" },
        s.exit_args,
        if s.exit_reads_head { "head" } else { "-" },
        if s.exit_calls { " call" } else { "" },
        s.switch_targets,
        s.loop_depth,
        first.insts,
        last.insts,
    );
    let growth = series.growth();
    for (k, name) in COUNTED.iter().enumerate() {
        let per: Vec<String> = growth.iter().map(|g| format!("{:.2}", g[k])).collect();
        line.push_str(&format!(" {name} {}", per.join("/")));
    }
    let worst = growth.iter().flatten().copied().fold(0.0, f64::max);
    line.push_str(&format!(" (at most {worst:.2})"));
    line.push_str("; time");
    for (name, g) in TIMED.iter().zip(average_time_growth(series)) {
        line.push_str(&format!(" {name} {g:.2}"));
    }
    line.push_str(&format!(
        " ({:.1} ms at the largest)",
        last.time[7].as_secs_f64() * 1e3
    ));
    line
}
