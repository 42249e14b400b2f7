//! `kestrel-bench regalloc [--seed S] [--count N] [--reps R] [--only kestrel]
//! [--contexts reused|fresh]`: Kestrel's allocator against regalloc2 0.15.2 (backtracking
//! `ion` and `fastalloc`) on the same generated functions.
//!
//! Memory: by default each allocator keeps one context for the whole run, as a client
//! compiling many functions does (Kestrel's `Context` with `allocate_in`, regalloc2's `Ctx`
//! with `run_with_ctx`; fastalloc allocates afresh either way); `--contexts fresh`
//! allocates every function in new memory on both sides.
//!
//! The functions come from `kestrel_regalloc::stress::case` (the fuzzing generator: loops,
//! diamonds, block parameters, x86-64-like constraints, calls, high pressure). An adapter
//! presents each one to regalloc2 through its `Function` trait. Reported per allocator:
//! total allocation time and its ratio to ion in the same run; inserted moves
//! (register-to-register), spills (register-to-slot) and reloads (slot-to-register); and
//! the same weighted by loop depth (an edit in a block at depth d counts 10^d, d capped at
//! 4). Kestrel's results are checked by its checker after timing. Input validation is off on
//! both sides in the timed runs, as in regalloc2's default options: Kestrel validates each
//! function once, untimed, and trusts (`Options::trust_input`) those it accepts.

use std::time::{Duration, Instant};

use kestrel_regalloc::gen::TestFunc;
use kestrel_regalloc::{self as kr, Function as _};
use regalloc2 as ra2;

struct Args {
    seed: u64,
    count: usize,
    reps: usize,
    /// Time only Kestrel (for profiling it); the ratios then are not printed.
    kestrel_only: bool,
    /// Allocate every function in fresh memory instead of one context per allocator.
    fresh: bool,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        seed: 1,
        count: 2000,
        reps: 5,
        kestrel_only: false,
        fresh: false,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |_| format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--seed" => parsed.seed = value.parse().map_err(bad)?,
            "--count" => parsed.count = value.parse().map_err(bad)?,
            "--reps" => parsed.reps = value.parse().map_err(bad)?,
            "--only" if value == "kestrel" => parsed.kestrel_only = true,
            "--contexts" if value == "fresh" => parsed.fresh = true,
            "--contexts" if value == "reused" => parsed.fresh = false,
            _ => {
                return Err(format!(
                    "unknown option {flag} (options: --seed S --count N --reps R --only kestrel --contexts reused|fresh)"
                ))
            }
        }
    }
    Ok(parsed)
}

fn ra2_class(class: kr::RegClass) -> ra2::RegClass {
    match class {
        kr::RegClass::Int => ra2::RegClass::Int,
        kr::RegClass::Float => ra2::RegClass::Float,
    }
}

fn ra2_preg(r: kr::PReg) -> ra2::PReg {
    ra2::PReg::new(r.hw_enc(), ra2_class(r.class()))
}

fn ra2_vreg(v: kr::VReg) -> ra2::VReg {
    ra2::VReg::new(v.index(), ra2_class(v.class()))
}

/// A [`TestFunc`] seen through regalloc2's `Function` trait.
struct Adapter {
    num_insts: usize,
    num_vregs: usize,
    insns: Vec<ra2::InstRange>,
    succs: Vec<Vec<ra2::Block>>,
    preds: Vec<Vec<ra2::Block>>,
    params: Vec<Vec<ra2::VReg>>,
    args: Vec<Vec<Vec<ra2::VReg>>>,
    operands: Vec<Vec<ra2::Operand>>,
    clobbers: Vec<ra2::PRegSet>,
    terminator: Vec<(bool, bool)>,
}

impl Adapter {
    fn new(f: &TestFunc) -> Adapter {
        let block = |b: &kr::Block| ra2::Block::new(b.index());
        let mut terminator = vec![(false, false); f.insts.len()];
        for b in &f.blocks {
            let last = b.insts.last().index();
            terminator[last] = (b.succs.is_empty(), !b.succs.is_empty());
        }
        let operands = f
            .insts
            .iter()
            .map(|i| {
                i.operands
                    .iter()
                    .enumerate()
                    .map(|(k, op)| {
                        // A reused input ends up in the def's register either way; regalloc2's
                        // fast allocator wants it to say so.
                        let reused = i
                            .operands
                            .iter()
                            .any(|d| d.constraint() == kr::OperandConstraint::Reuse(k));
                        let constraint = match op.constraint() {
                            kr::OperandConstraint::RegOrStack if reused => {
                                ra2::OperandConstraint::Reg
                            }
                            kr::OperandConstraint::Reg => ra2::OperandConstraint::Reg,
                            kr::OperandConstraint::RegOrStack => ra2::OperandConstraint::Any,
                            kr::OperandConstraint::Stack => ra2::OperandConstraint::Stack,
                            kr::OperandConstraint::FixedReg(r) => {
                                ra2::OperandConstraint::FixedReg(ra2_preg(r))
                            }
                            kr::OperandConstraint::Reuse(n) => ra2::OperandConstraint::Reuse(n),
                        };
                        let kind = if op.is_use() {
                            ra2::OperandKind::Use
                        } else {
                            ra2::OperandKind::Def
                        };
                        let pos = match op.pos() {
                            kr::OperandPos::Early => ra2::OperandPos::Early,
                            kr::OperandPos::Late => ra2::OperandPos::Late,
                        };
                        ra2::Operand::new(ra2_vreg(op.vreg()), constraint, kind, pos)
                    })
                    .collect()
            })
            .collect();
        // regalloc2 forbids naming a register both as a clobber and as a fixed def.
        let clobbers = f
            .insts
            .iter()
            .map(|i| {
                let mut set = ra2::PRegSet::empty();
                for r in i.clobbers.iter() {
                    let fixed_def = i.operands.iter().any(|op| {
                        op.is_def() && op.constraint() == kr::OperandConstraint::FixedReg(r)
                    });
                    if !fixed_def {
                        set.add(ra2_preg(r));
                    }
                }
                set
            })
            .collect();
        Adapter {
            num_insts: f.insts.len(),
            num_vregs: f.num_vregs,
            insns: f
                .blocks
                .iter()
                .map(|b| {
                    ra2::InstRange::new(
                        ra2::Inst::new(b.insts.start.index()),
                        ra2::Inst::new(b.insts.end.index()),
                    )
                })
                .collect(),
            succs: f
                .blocks
                .iter()
                .map(|b| b.succs.iter().map(block).collect())
                .collect(),
            preds: f
                .blocks
                .iter()
                .map(|b| b.preds.iter().map(block).collect())
                .collect(),
            params: f
                .blocks
                .iter()
                .map(|b| b.params.iter().copied().map(ra2_vreg).collect())
                .collect(),
            args: f
                .blocks
                .iter()
                .map(|b| {
                    b.args
                        .iter()
                        .map(|a| a.iter().copied().map(ra2_vreg).collect())
                        .collect()
                })
                .collect(),
            operands,
            clobbers,
            terminator,
        }
    }
}

impl ra2::Function for Adapter {
    fn num_insts(&self) -> usize {
        self.num_insts
    }
    fn num_blocks(&self) -> usize {
        self.insns.len()
    }
    fn entry_block(&self) -> ra2::Block {
        ra2::Block::new(0)
    }
    fn block_insns(&self, block: ra2::Block) -> ra2::InstRange {
        self.insns[block.index()]
    }
    fn block_succs(&self, block: ra2::Block) -> &[ra2::Block] {
        &self.succs[block.index()]
    }
    fn block_preds(&self, block: ra2::Block) -> &[ra2::Block] {
        &self.preds[block.index()]
    }
    fn block_params(&self, block: ra2::Block) -> &[ra2::VReg] {
        &self.params[block.index()]
    }
    fn is_ret(&self, insn: ra2::Inst) -> bool {
        self.terminator[insn.index()].0
    }
    fn is_branch(&self, insn: ra2::Inst) -> bool {
        self.terminator[insn.index()].1
    }
    fn branch_blockparams(
        &self,
        block: ra2::Block,
        _insn: ra2::Inst,
        succ_idx: usize,
    ) -> &[ra2::VReg] {
        &self.args[block.index()][succ_idx]
    }
    fn inst_operands(&self, insn: ra2::Inst) -> &[ra2::Operand] {
        &self.operands[insn.index()]
    }
    fn inst_clobbers(&self, insn: ra2::Inst) -> ra2::PRegSet {
        self.clobbers[insn.index()]
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
    fn spillslot_size(&self, _regclass: ra2::RegClass) -> usize {
        1
    }
}

/// regalloc2's machine matching a Kestrel one: Kestrel's preference order puts the
/// caller-saved registers first, so regalloc2 gets those as preferred and the callee-saved
/// ones as non-preferred.
fn ra2_env(env: &kr::MachineEnv) -> ra2::MachineEnv {
    let mut preferred = [ra2::PRegSet::empty(); 3];
    let mut non_preferred = [ra2::PRegSet::empty(); 3];
    for class in kr::RegClass::ALL {
        for &r in &env.allocatable[class.index()] {
            if env.caller_saved.contains(r) {
                preferred[class.index()].add(ra2_preg(r));
            } else {
                non_preferred[class.index()].add(ra2_preg(r));
            }
        }
    }
    ra2::MachineEnv {
        preferred_regs_by_class: preferred,
        non_preferred_regs_by_class: non_preferred,
        scratch_by_class: [
            env.scratch[0].map(ra2_preg),
            env.scratch[1].map(ra2_preg),
            None,
        ],
        fixed_stack_slots: Vec::new(),
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    time: Duration,
    failures: usize,
    moves: u64,
    spills: u64,
    reloads: u64,
    w_moves: u64,
    w_spills: u64,
    w_reloads: u64,
}

impl Tally {
    fn add_edit(&mut self, from_stack: bool, to_stack: bool, weight: u64) {
        match (from_stack, to_stack) {
            (false, true) => {
                self.spills += 1;
                self.w_spills += weight;
            }
            (true, false) => {
                self.reloads += 1;
                self.w_reloads += weight;
            }
            _ => {
                self.moves += 1;
                self.w_moves += weight;
            }
        }
    }

    fn weighted_cost(&self) -> u64 {
        self.w_moves + self.w_spills + self.w_reloads
    }
}

fn weight(depth: u32) -> u64 {
    10u64.pow(depth.min(4))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    let cases: Vec<_> = (0..args.count)
        .map(|i| kr::stress::case(args.seed, i))
        .collect();
    let insts: usize = cases.iter().map(|c| c.func.num_insts()).sum();
    let adapters: Vec<Adapter> = cases.iter().map(|c| Adapter::new(&c.func)).collect();
    let ra2_envs: Vec<ra2::MachineEnv> = cases.iter().map(|c| ra2_env(&c.env)).collect();
    let mut tallies = [Tally::default(); 3];
    let mut phases = kr::PhaseTimes::default();
    // One context per allocator for the whole run, as a client compiling many functions
    // keeps one (unless `--contexts fresh`).
    let mut ion_ctx = ra2::Ctx::default();
    let mut kestrel_ctx = kr::Context::new();
    // Timed as regalloc2 runs by default (its SSA validation off): the functions a
    // validating run accepts, all validated here before any timing (so no function is
    // timed right after a warm-up of its own), are trusted in the timed runs.
    let valid: Vec<bool> = cases
        .iter()
        .map(|c| kr::allocate(&c.func, &c.env, kr::Options::default()).is_ok())
        .collect();
    let names = ["regalloc2 ion", "regalloc2 fastalloc", "kestrel"];
    for (k, case) in cases.iter().enumerate() {
        let depths = kr::loop_depths(&case.func);
        let block_of: Vec<usize> = {
            let mut v = vec![0; case.func.num_insts()];
            for (b, block) in case.func.blocks.iter().enumerate() {
                for i in block.insts.iter() {
                    v[i.index()] = b;
                }
            }
            v
        };
        let w = |inst: usize| weight(depths[block_of[inst]]);
        let ra2_algorithms = if args.kestrel_only {
            &[][..]
        } else {
            &[ra2::Algorithm::Ion, ra2::Algorithm::Fastalloc][..]
        };
        for (a, &algorithm) in ra2_algorithms.iter().enumerate() {
            let options = ra2::RegallocOptions {
                algorithm,
                ..Default::default()
            };
            let start = Instant::now();
            let mut result = None;
            for _ in 0..args.reps {
                result = Some(if args.fresh {
                    ra2::run(&adapters[k], &ra2_envs[k], &options).map(Some)
                } else {
                    ra2::run_with_ctx(&adapters[k], &ra2_envs[k], &options, &mut ion_ctx)
                        .map(|_| None)
                });
            }
            tallies[a].time += start.elapsed();
            // (Outside the clock: the result of the last repetition.)
            let result = result
                .expect("reps > 0")
                .map(|out| out.unwrap_or_else(|| std::mem::take(&mut ion_ctx.output)));
            match result {
                Ok(out) => {
                    for (point, edit) in &out.edits {
                        let ra2::Edit::Move { from, to } = edit;
                        tallies[a].add_edit(
                            from.is_stack(),
                            to.is_stack(),
                            w(point.inst().index()),
                        );
                    }
                }
                Err(_) => tallies[a].failures += 1,
            }
        }
        let options = kr::Options {
            trust_input: valid[k],
            ..Default::default()
        };
        let start = Instant::now();
        let mut result = None;
        for _ in 0..args.reps {
            result = Some(if args.fresh {
                kr::allocate(&case.func, &case.env, options).map(Some)
            } else {
                kr::allocate_in(&mut kestrel_ctx, &case.func, &case.env, options).map(|_| None)
            });
        }
        tallies[2].time += start.elapsed();
        // (Outside the clock: the result of the last repetition.)
        let result =
            result.map(|r| r.map(|out| out.unwrap_or_else(|| kestrel_ctx.output().clone())));
        // One more, untimed run, to split Kestrel's time by phase (in the kept context
        // unless `--contexts fresh`, as the timed runs).
        let timed = kr::Options {
            timing: true,
            ..options
        };
        let times = if args.fresh {
            kr::allocate(&case.func, &case.env, timed).map(|out| out.times)
        } else {
            kr::allocate_in(&mut kestrel_ctx, &case.func, &case.env, timed).map(|out| out.times)
        };
        if let Ok(times) = times {
            phases += times;
        }
        match result.expect("reps > 0") {
            Ok(out) => {
                if kr::checker::check(&case.func, &case.env, &out).is_err() {
                    tallies[2].failures += 1;
                }
                for (point, edit) in &out.edits {
                    tallies[2].add_edit(
                        edit.from.is_stack(),
                        edit.to.is_stack(),
                        w(point.inst().index()),
                    );
                }
            }
            Err(_) => tallies[2].failures += 1,
        }
    }
    println!(
        "{} functions ({} instructions), seed {}, {} repetitions each",
        args.count, insts, args.seed, args.reps
    );
    println!(
        "| allocator | time (ms) | time / ion | moves | spills | reloads | weighted moves | weighted spills | weighted reloads | weighted cost / ion | failures |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let ion = tallies[0];
    // With `--only kestrel` there is no ion run to compare with.
    let ratio = |x: f64, ion: f64| {
        if args.kestrel_only {
            "–".to_string()
        } else {
            format!("{:.3}", x / ion)
        }
    };
    for (name, t) in names.iter().zip(&tallies) {
        if args.kestrel_only && *name != "kestrel" {
            continue;
        }
        println!(
            "| {name} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            t.time.as_secs_f64() * 1e3,
            ratio(t.time.as_secs_f64(), ion.time.as_secs_f64()),
            t.moves,
            t.spills,
            t.reloads,
            t.w_moves,
            t.w_spills,
            t.w_reloads,
            ratio(t.weighted_cost() as f64, ion.weighted_cost().max(1) as f64),
            t.failures
        );
    }
    let share = |d: Duration| 100.0 * d.as_secs_f64() / phases.total().as_secs_f64().max(1e-9);
    println!(
        "\nKestrel by phase (one extra run): validate {:.0}%, liveness {:.0}%, intervals {:.0}%, scan {:.0}%, resolution {:.0}%",
        share(phases.validate),
        share(phases.liveness),
        share(phases.intervals),
        share(phases.allocation),
        share(phases.resolution)
    );
    Ok(())
}
