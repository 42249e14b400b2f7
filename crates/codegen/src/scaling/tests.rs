//! The scaling smoke: counted work per phase grows at most [`MAX_GROWTH`] at every doubling
//! of four sizes, on the fixed shapes and on seeded random ones (no timed assertions: work
//! is counted).

use super::*;

/// Four sizes from `BASE` units: small enough for a debug build, large enough that a phase
/// quadratic in the units shows (its work would grow about 4× per doubling).
const BASE: usize = 48;
const SIZES: usize = 4;

fn assert_linear(shape: &Shape) {
    let series = measure(shape, BASE, SIZES, 1).unwrap_or_else(|e| panic!("{e}"));
    let bad = series.violations();
    assert!(
        bad.is_empty(),
        "{}: counted work grew too fast: {bad:?} (work per size: {:?})",
        shape.name,
        series.samples.iter().map(|s| s.work).collect::<Vec<_>>()
    );
    // The sizes really doubled, and every counted phase did some work.
    for w in series.samples.windows(2) {
        assert!(
            w[1].insts > w[0].insts * 19 / 10,
            "{}: sizes do not double",
            shape.name
        );
    }
    assert!(
        series.samples[0].work.iter().all(|&w| w > 0),
        "{}: a phase counted nothing",
        shape.name
    );
}

#[test]
fn exit_chains_are_linear_in_every_counted_phase() {
    for shape in Shape::fixed(BASE) {
        assert_linear(&shape);
    }
}

#[test]
fn random_shapes_are_linear_in_every_counted_phase() {
    for seed in 0..12 {
        assert_linear(&Shape::random(seed, BASE));
    }
}

#[test]
fn every_unit_kind_generates_and_compiles() {
    let kinds = [
        Unit::Straight,
        Unit::Diamond,
        Unit::Switch,
        Unit::Loops,
        Unit::Exit,
        Unit::Call,
    ];
    for (k, _) in kinds.iter().enumerate() {
        let mut shape = Shape::random(100 + k as u64, 8);
        shape.weights = [0; 6];
        shape.weights[k] = 1;
        shape.loop_depth = 3;
        shape.pool = 4;
        let series = measure(&shape, 8, 2, 1).unwrap_or_else(|e| panic!("unit {k}: {e}"));
        assert!(series.samples[1].insts > series.samples[0].insts);
    }
}

/// The check can fail: a series whose work quadruples is flagged at each step, one that
/// doubles is not; a single step above the limit is flagged though the others double.
#[test]
fn violations_flag_growth_above_the_limit() {
    let sample = |units: usize, w: u64| Sample {
        units,
        work: [w, 2 * w, w, w, 3 * w, w, w],
        ..Sample::default()
    };
    let series = |works: &[u64]| Series {
        shape: Shape::exit_chain(false, false, 1),
        samples: works
            .iter()
            .enumerate()
            .map(|(k, &w)| sample(10 << k, w))
            .collect(),
    };
    let bad = series(&[100, 400, 1600]).violations();
    assert_eq!(bad.len(), 14, "{bad:?}");
    assert!(bad.iter().all(|v| v.factor == 4.0));
    assert!(series(&[100, 200, 400, 800]).violations().is_empty());
    let step = series(&[100, 200, 480, 960]);
    let bad = step.violations();
    assert_eq!(bad.len(), 7, "{bad:?}");
    assert!(bad.iter().all(|v| v.from_units == 20));
}

#[test]
fn timed_phases_are_the_counted_ones_then_their_total() {
    assert_eq!(TIMED[..COUNTED.len()], COUNTED);
    assert_eq!(TIMED[COUNTED.len()..], ["total"]);
}
