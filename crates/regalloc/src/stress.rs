//! The stress driver behind `kestrel regalloc-stress`: generate, allocate, check with both
//! oracles, and optionally inject faults to show that the checker catches every corruption
//! that changes results.
//!
//! Output (the last lines are stable, for scripts):
//!
//! ```text
//! stats: <spill slots> spill slots, <splits> splits, <moves> moves, <spills> spills, <reloads> reloads
//! N functions, M checker failures, E executor mismatches
//! fault <kind>: I injected, C changed results, K caught by the checker     (with faults)
//! faults: I injected, C changed results, K of C caught by the checker       (with faults)
//! ```

use std::io::{self, Write};

use arbitrary::Unstructured;

use crate::exec::{self, Rng};
use crate::gen::TestCase;
use crate::{
    allocate, checker, Allocation, Block, Edit, Function, Inst, Options, Output, ProgPoint,
    RegClass, SpillSlot, Stats,
};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct StressOptions {
    /// Seed of the whole run.
    pub seed: u64,
    /// Number of functions.
    pub count: usize,
    /// Corrupt each allocation once and check that the checker notices.
    pub inject_faults: bool,
    /// Perturb the allocator's heuristics (`Options::perturb`), with a seed per function
    /// derived from this one.
    pub perturb: Option<u64>,
}

/// Kinds of injected faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Give one operand another location of its class.
    ReassignOperand,
    /// Delete one edit.
    DeleteEdit,
    /// Change one edit's source or destination.
    RetargetEdit,
    /// Move one edit to a neighbouring program point.
    MoveEdit,
}

impl FaultKind {
    /// All kinds.
    pub const ALL: [FaultKind; 4] = [
        FaultKind::ReassignOperand,
        FaultKind::DeleteEdit,
        FaultKind::RetargetEdit,
        FaultKind::MoveEdit,
    ];

    fn name(self) -> &'static str {
        match self {
            FaultKind::ReassignOperand => "reassign-operand",
            FaultKind::DeleteEdit => "delete-edit",
            FaultKind::RetargetEdit => "retarget-edit",
            FaultKind::MoveEdit => "move-edit",
        }
    }
}

/// Counts for one fault kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Faults injected.
    pub injected: usize,
    /// Faults after which the executor saw different values.
    pub changed: usize,
    /// Faults the checker reported.
    pub caught: usize,
    /// Faults that changed results and were caught.
    pub changed_and_caught: usize,
}

/// Totals of a stress run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StressSummary {
    /// Functions generated.
    pub functions: usize,
    /// Functions rejected by validation (a generator bug if nonzero).
    pub rejected: usize,
    /// Allocations the checker rejected (allocator bugs).
    pub checker_failures: usize,
    /// Allocations whose execution differed (allocator bugs).
    pub executor_mismatches: usize,
    /// Summed statistics.
    pub stats: Stats,
    /// Summed spill slots.
    pub spill_slots: usize,
    /// Per fault kind, in [`FaultKind::ALL`] order.
    pub faults: [FaultCounts; 4],
}

/// Bytes from which the `index`-th case of run `seed` is generated.
pub fn case_bytes(seed: u64, index: usize, len: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// Generates the `index`-th case of run `seed`.
pub fn case(seed: u64, index: usize) -> TestCase {
    let bytes = case_bytes(seed, index, 4096);
    let mut u = Unstructured::new(&bytes);
    <TestCase as arbitrary::Arbitrary>::arbitrary(&mut u)
        .expect("the generator never fails on enough bytes")
}

/// Runs the stress test, printing to `out`.
pub fn run(options: &StressOptions, out: &mut dyn Write) -> io::Result<StressSummary> {
    let mut summary = StressSummary::default();
    let mut rng = Rng::new(options.seed ^ 0xfa17);
    for index in 0..options.count {
        let mut case = case(options.seed, index);
        if index % 4 == 3 {
            // Every fourth function in a shuffled block order (the entry first): the
            // allocator must not rely on dominators coming first.
            let mut order: Vec<Block> = (1..case.func.blocks.len() as u32).map(Block).collect();
            for k in (1..order.len()).rev() {
                order.swap(k, rng.below(k + 1));
            }
            order.insert(0, Block(0));
            case.func = case.func.with_block_order(&order);
        }
        summary.functions += 1;
        let ra_options = Options {
            check: false,
            perturb: options
                .perturb
                .map(|p| p ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            timing: false,
            trust_input: false,
        };
        let output = match allocate(&case.func, &case.env, ra_options) {
            Ok(output) => output,
            Err(err) => {
                summary.rejected += 1;
                summary.checker_failures += 1;
                writeln!(out, "function {index}: allocation failed: {err}")?;
                continue;
            }
        };
        summary.stats += output.stats;
        summary.spill_slots += output.num_spillslots;
        if let Err(err) = checker::check(&case.func, &case.env, &output) {
            summary.checker_failures += 1;
            writeln!(out, "function {index}: checker: {err}")?;
        }
        let exec_seed = options.seed.wrapping_add(index as u64);
        if let Err(m) = exec::compare(&case.func, &output, exec_seed) {
            summary.executor_mismatches += 1;
            writeln!(out, "function {index}: executor: {m}")?;
        }
        if options.inject_faults {
            let kind = FaultKind::ALL[rng.below(4)];
            if let Some(faulty) = inject(&case.func, &output, kind, &mut rng) {
                let counts = &mut summary.faults[kind as usize];
                counts.injected += 1;
                let changed = exec::compare(&case.func, &faulty, exec_seed).is_err();
                let caught = checker::check(&case.func, &case.env, &faulty).is_err();
                counts.changed += changed as usize;
                counts.caught += caught as usize;
                counts.changed_and_caught += (changed && caught) as usize;
                if changed && !caught {
                    writeln!(
                        out,
                        "function {index}: {} fault changed results but passed the checker",
                        kind.name()
                    )?;
                }
            }
        }
    }
    let s = summary.stats;
    writeln!(
        out,
        "stats: {} spill slots, {} splits, {} moves, {} spills, {} reloads",
        summary.spill_slots, s.splits, s.moves, s.spills, s.reloads
    )?;
    writeln!(
        out,
        "{} functions, {} checker failures, {} executor mismatches",
        summary.functions, summary.checker_failures, summary.executor_mismatches
    )?;
    if options.inject_faults {
        let mut total = FaultCounts::default();
        for kind in FaultKind::ALL {
            let c = summary.faults[kind as usize];
            writeln!(
                out,
                "fault {}: {} injected, {} changed results, {} caught by the checker",
                kind.name(),
                c.injected,
                c.changed,
                c.caught
            )?;
            total.injected += c.injected;
            total.changed += c.changed;
            total.changed_and_caught += c.changed_and_caught;
        }
        writeln!(
            out,
            "faults: {} injected, {} changed results, {} of {} caught by the checker",
            total.injected, total.changed, total.changed_and_caught, total.changed
        )?;
    }
    Ok(summary)
}

/// Another location of `class` than `not`: a register of the class or an existing slot.
fn other_location(rng: &mut Rng, class: RegClass, num_slots: usize, not: Allocation) -> Allocation {
    loop {
        let loc = if num_slots > 0 && rng.below(3) == 0 {
            Allocation::Stack(SpillSlot(rng.below(num_slots) as u32))
        } else {
            Allocation::Reg(crate::PReg::new(rng.below(16), class))
        };
        if loc != not {
            return loc;
        }
    }
}

/// Applies one fault of `kind` to a copy of `output`; `None` if there is nothing to corrupt.
pub fn inject<F: Function>(
    func: &F,
    output: &Output,
    kind: FaultKind,
    rng: &mut Rng,
) -> Option<Output> {
    let mut out = output.clone();
    match kind {
        FaultKind::ReassignOperand => {
            if out.allocs.is_empty() {
                return None;
            }
            let k = rng.below(out.allocs.len());
            let inst = out.inst_alloc_offsets.partition_point(|&o| o as usize <= k) - 1;
            let op =
                func.inst_operands(Inst(inst as u32))[k - out.inst_alloc_offsets[inst] as usize];
            out.allocs[k] = other_location(rng, op.class(), out.num_spillslots, out.allocs[k]);
        }
        FaultKind::DeleteEdit => {
            if out.edits.is_empty() {
                return None;
            }
            let k = rng.below(out.edits.len());
            out.edits.remove(k);
        }
        FaultKind::RetargetEdit => {
            if out.edits.is_empty() {
                return None;
            }
            let k = rng.below(out.edits.len());
            let (point, edit) = out.edits[k];
            let new = if rng.below(2) == 0 {
                Edit {
                    from: other_location(rng, edit.class, out.num_spillslots, edit.from),
                    ..edit
                }
            } else {
                Edit {
                    to: other_location(rng, edit.class, out.num_spillslots, edit.to),
                    ..edit
                }
            };
            out.edits[k] = (point, new);
        }
        FaultKind::MoveEdit => {
            if out.edits.is_empty() {
                return None;
            }
            let k = rng.below(out.edits.len());
            let (point, edit) = out.edits.remove(k);
            let max = 2 * func.num_insts() as u32 - 1;
            let raw = if (rng.below(2) == 0 && point.raw() > 0) || point.raw() == max {
                point.raw() - 1
            } else {
                point.raw() + 1
            };
            let new_point = ProgPoint::from_raw(raw);
            // Moved later: first at its new point; moved earlier: last at its new point.
            let at = if raw > point.raw() {
                out.edits.partition_point(|(p, _)| *p < new_point)
            } else {
                out.edits.partition_point(|(p, _)| *p <= new_point)
            };
            out.edits.insert(at, (new_point, edit));
        }
    }
    Output::count_edits(&out.edits, &mut out.stats);
    Some(out)
}
