//! The scaling check: compiles functions of one [`Shape`] at doubling sizes and reports
//! how each phase's work grows from one size to the next.
//!
//! Requires: nothing of the caller; a shape whose text does not compile is an error naming
//! the shape and size.
//! Guarantees: [`measure`] returns, per size, every phase's counted work (the allocator's
//! [`kestrel_regalloc::Work`], and [`crate::machinst::compile::CountedWork`] for block order, lowering and emission:
//! independent of the machine and its load) and every phase's time; [`Series::growth`] the factor by which each grows per doubling, and
//! [`Series::violations`] the counted phases whose work grows by more than [`MAX_GROWTH`]
//! at some doubling (a linear phase doubles; the slack covers fixed costs). The rule is
//! strict: one doubling above the limit is a violation, however the others grow.
//! Times are reported, never judged here: they depend on the machine's load. In debug
//! builds every allocation is also run through the register-allocation checker.
//!
//! Cost: the compiles themselves, O(Σ sizes) for linear phases.

pub mod shapes;

use std::time::Duration;

use kestrel_ir::Function;

use crate::isa::x64::X64Isa;
use crate::isa::TargetIsa;
use crate::machinst::compile::{CompileContext, PhaseTimes};
use crate::settings::Flags;
pub use shapes::{Rng, Shape, Unit};

/// The most a phase's counted work may grow when the function doubles.
pub const MAX_GROWTH: f64 = 2.3;

/// The counted phases, in pipeline order.
pub const COUNTED: [&str; 7] = [
    "block order",
    "lower",
    "liveness",
    "intervals",
    "scan",
    "resolve",
    "emit",
];

/// The timed phases, in pipeline order: the counted ones, then their total.
pub const TIMED: [&str; 8] = with_total(COUNTED);

/// `phases` followed by `"total"`.
const fn with_total(phases: [&'static str; 7]) -> [&'static str; 8] {
    let mut all = ["total"; 8];
    let mut k = 0;
    while k < phases.len() {
        all[k] = phases[k];
        k += 1;
    }
    all
}

/// One compile's measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// Units in the function.
    pub units: usize,
    /// IR instructions in the function.
    pub insts: usize,
    /// Counted work per phase of [`COUNTED`].
    pub work: [u64; 7],
    /// Time per phase of [`TIMED`] (the least over the repeats).
    pub time: [Duration; 8],
}

/// The samples of one shape at doubling sizes.
#[derive(Clone, Debug)]
pub struct Series {
    pub shape: Shape,
    pub samples: Vec<Sample>,
}

/// A counted phase that grew too fast between two sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub phase: &'static str,
    /// The smaller of the two sizes (units).
    pub from_units: usize,
    pub factor: f64,
}

impl Series {
    /// Per doubling, each counted phase's growth factor.
    pub fn growth(&self) -> Vec<[f64; 7]> {
        self.samples
            .windows(2)
            .map(|w| std::array::from_fn(|k| ratio(w[1].work[k] as f64, w[0].work[k] as f64)))
            .collect()
    }

    /// Per doubling, each timed phase's growth factor.
    pub fn time_growth(&self) -> Vec<[f64; 8]> {
        self.samples
            .windows(2)
            .map(|w| {
                std::array::from_fn(|k| {
                    ratio(w[1].time[k].as_secs_f64(), w[0].time[k].as_secs_f64())
                })
            })
            .collect()
    }

    /// The counted phases whose work grew by more than [`MAX_GROWTH`] at some doubling.
    pub fn violations(&self) -> Vec<Violation> {
        let mut found = Vec::new();
        for (w, g) in self.samples.windows(2).zip(self.growth()) {
            for (k, &factor) in g.iter().enumerate() {
                if factor > MAX_GROWTH {
                    found.push(Violation {
                        phase: COUNTED[k],
                        from_units: w[0].units,
                        factor,
                    });
                }
            }
        }
        found
    }
}

/// `a / b`, or 1 when both are zero-ish (a phase with nothing to do at either size).
fn ratio(a: f64, b: f64) -> f64 {
    if b <= 0.0 {
        if a <= 0.0 {
            1.0
        } else {
            f64::INFINITY
        }
    } else {
        a / b
    }
}

/// Doublings past `base` that [`measure`] may take to leave the small-function liveness.
const MAX_SKIPPED: usize = 6;

/// Compiles `shape` at `sizes` doubling sizes (each `repeats` times: the least time is
/// kept; the counted work is the same every time), for x86-64. The sizes start at `base`
/// units, or at the first doubling of it whose liveness is not the bounded bitset path of
/// small functions (see [`kestrel_regalloc::Work::dense_liveness`]).
pub fn measure(shape: &Shape, base: usize, sizes: usize, repeats: usize) -> Result<Series, String> {
    let mut ctx = CompileContext::new();
    // Debug builds (the tests) also check every allocation: the shapes reach allocator
    // paths that small test functions do not.
    let flags = Flags {
        check_regalloc: cfg!(debug_assertions),
        ..Flags::default()
    };
    let mut samples = Vec::new();
    let mut skipped = 0;
    let mut k = 0;
    while samples.len() < sizes {
        let units = base << k;
        k += 1;
        let text = shape.function(units);
        let what = format!("{} at {units} units", shape.name);
        let funcs =
            kestrel_ir::parse_functions(&text, &what).map_err(|e| format!("{what}: {e}"))?;
        let f = funcs
            .last()
            .ok_or_else(|| format!("{what}: no function generated"))?;
        kestrel_ir::verify_function(f).map_err(|e| format!("{what}: {e}"))?;
        let mut sample = Sample {
            units,
            insts: f.dfg.num_insts(),
            ..Sample::default()
        };
        let mut dense = false;
        for r in 0..repeats.max(1) {
            let m = compile_once(&mut ctx, f, &flags).map_err(|e| format!("{what}: {e}"))?;
            (sample.work, dense) = (m.work, m.dense_liveness);
            for (best, t) in sample.time.iter_mut().zip(m.time) {
                if r == 0 || t < *best {
                    *best = t;
                }
            }
        }
        if dense && samples.is_empty() && skipped < MAX_SKIPPED {
            skipped += 1;
            continue;
        }
        samples.push(sample);
    }
    Ok(Series {
        shape: shape.clone(),
        samples,
    })
}

/// What one compile measured.
struct Measured {
    work: [u64; 7],
    dense_liveness: bool,
    time: [Duration; 8],
}

/// One compile of `f`: counted work and times per phase.
fn compile_once(ctx: &mut CompileContext, f: &Function, flags: &Flags) -> Result<Measured, String> {
    let mut t = PhaseTimes::default();
    X64Isa::default()
        .compile_function_timed(ctx, f, flags, &mut t)
        .map_err(|e| e.to_string())?;
    let (w, o) = (t.regalloc_work, t.work);
    let ra = t.regalloc;
    let total = t.block_order + t.lower + ra.total() + t.emit;
    Ok(Measured {
        work: [
            o.block_order,
            o.lower,
            w.liveness,
            w.intervals,
            w.scan,
            w.resolve,
            o.emit,
        ],
        dense_liveness: w.dense_liveness,
        time: [
            t.block_order,
            t.lower,
            ra.liveness,
            ra.intervals,
            ra.allocation,
            ra.resolution,
            t.emit,
            total,
        ],
    })
}

#[cfg(test)]
mod tests;
