//! `kestrel-regalloc`: an SSA linear-scan register allocator with lifetime holes, interval
//! splitting, register hints and operand constraints, after Wimmer & Mössenböck (2005) and
//! Wimmer & Franz (2010), plus a symbolic checker that proves each allocation correct.
//!
//! # Contract
//!
//! Requires: a [`Function`] in SSA form whose blocks are listed in emission order (any
//! order: a block may come before its dominators, as a rotated loop's body comes before
//! its header; nothing assumes a value's first live range starts at its def), whose
//! entry block has no parameters, every block reachable from the entry, every block ending
//! in exactly one terminator (its last instruction), and **no critical edges** (an edge from
//! a block with several successors to a block with several predecessors). The client splits
//! critical edges before allocation; a violation is reported as
//! [`RegAllocError::CriticalEdge`]. The last instruction of a block defines nothing;
//! branches (terminators with successors) also clobber nothing, and a branch to a single
//! successor has no operands (the edge moves go right before it). Incoming function
//! arguments are defs with fixed-register constraints on an instruction of the entry block.
//!
//! Keeps: the function. The allocator never mutates its input; it returns an [`Output`]:
//! one [`Allocation`] per operand, [`Edit`]s (moves, spills, reloads) at [`ProgPoint`]s, the
//! number of spill slots and statistics.
//!
//! # Pipeline
//!
//! [`allocate`] reads as the pipeline: validate → liveness → intervals → linear scan →
//! resolve (operand allocations, split moves, edge moves, parallel-move sequencing) →
//! optionally the checker.
//!
//! # Cost
//!
//! Every phase is linear in the function and the size of its liveness (stated at the top
//! of each module), up to the sorts noted there: no structure is sized blocks × vregs, so
//! a function of 100,000 blocks costs what its instructions and live ranges cost.
//! [`Options::timing`] reports each phase's time ([`PhaseTimes`]).

mod types;

pub mod checker;
mod counting_sort;
mod depth_tree;
mod env_facts;
pub mod exec;
pub mod fuzzing;
pub mod gen;
mod holes;
mod intervals;
mod liveness;
pub mod moves;
mod or_tree;
mod perturb;
mod resolve;
mod reuse;
mod scan;
pub mod stress;
mod validate;

pub use types::*;

/// What the allocator needs to know about a function. Dense indices throughout.
pub trait Function {
    /// Number of instructions.
    fn num_insts(&self) -> usize;
    /// Number of blocks.
    fn num_blocks(&self) -> usize;
    /// The entry block.
    fn entry_block(&self) -> Block;
    /// The instructions of `block`; consecutive blocks own consecutive ranges.
    fn block_insns(&self, block: Block) -> InstRange;
    /// Successors of `block`, in the order of its branch's targets.
    fn block_succs(&self, block: Block) -> &[Block];
    /// Predecessors of `block`.
    fn block_preds(&self, block: Block) -> &[Block];
    /// Parameters of `block` (each defined by the incoming edge).
    fn block_params(&self, block: Block) -> &[VReg];
    /// Arguments that `block`'s terminator passes to its `succ_idx`-th successor.
    fn branch_blockparams(&self, block: Block, succ_idx: usize) -> &[VReg];
    /// Operands of `inst`.
    fn inst_operands(&self, inst: Inst) -> &[Operand];
    /// Physical registers `inst` overwrites (calls); written at its late point.
    fn inst_clobbers(&self, inst: Inst) -> PRegSet;
    /// `Some((dst, src))` if `inst` is a plain register copy (used only as a hint).
    fn is_move(&self, inst: Inst) -> Option<(Operand, Operand)>;
    /// Number of virtual registers (an upper bound on their indices).
    fn num_vregs(&self) -> usize;
}

/// The machine: which registers the allocator may use.
#[derive(Clone, Debug)]
pub struct MachineEnv {
    /// Allocatable registers per class, in order of preference.
    pub allocatable: [Vec<PReg>; NUM_CLASSES],
    /// Registers a call clobbers (informational for clients; the clobbers themselves come
    /// from [`Function::inst_clobbers`]).
    pub caller_saved: PRegSet,
    /// A register per class that the resolver may use freely to break move cycles and to
    /// move between two spill slots. Must not be allocatable nor used by fixed constraints.
    /// The client's encoder may also write it inside any instruction, so the checker
    /// rejects an operand allocated to it and treats every instruction as clobbering it:
    /// only edits between the same two instructions may read back what edits put there.
    /// When `None`, the resolver looks for a register free at that point, and failing that
    /// borrows one through an emergency spill slot.
    pub scratch: [Option<PReg>; NUM_CLASSES],
}

impl MachineEnv {
    /// This machine with `reg` taken out of the allocatable registers (a register the
    /// client reserves for its own use).
    pub fn without(&self, reg: PReg) -> MachineEnv {
        let mut env = self.clone();
        for class in &mut env.allocatable {
            class.retain(|&r| r != reg);
        }
        env
    }
}

/// Options for [`allocate`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Run the checker on the result and fail with [`RegAllocError::Checker`] on a bug.
    pub check: bool,
    /// Perturb the scan's heuristics (hints, register choice, split gaps, spill decisions,
    /// slot reuse) from this seed, for differential testing: every perturbed allocation is
    /// as correct as the usual one, only slower. `None`: the usual allocation, at no cost.
    pub perturb: Option<u64>,
    /// Measure each phase's wall-clock time into [`Output::times`] (otherwise the clock is
    /// never read and the times stay zero).
    pub timing: bool,
    /// Skip the full input validation (predecessor and successor lists agree, edge
    /// arguments match parameters, no critical edges, the operand rules, single
    /// definitions, one class per vreg): only the block facts every phase needs are
    /// computed, and a use not dominated by its def is still an error. For a client whose
    /// code generator is itself tested with validation on: an input breaking the crate's
    /// contract may then panic or be allocated wrongly instead of returning an error.
    /// Kestrel's backends trust their input in release builds with the checker off.
    pub trust_input: bool,
}

/// Wall-clock time of each allocator phase (see [`Options::timing`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Input validation and CFG facts.
    pub validate: std::time::Duration,
    /// Live-in sets (live-out sets are gathered from them where needed).
    pub liveness: std::time::Duration,
    /// Live intervals and their uses.
    pub intervals: std::time::Duration,
    /// The linear scan: registers, splits and spills.
    pub allocation: std::time::Duration,
    /// Edge and split moves, parallel-move sequencing, the final edit list.
    pub resolution: std::time::Duration,
    /// The checker (zero unless [`Options::check`]).
    pub checker: std::time::Duration,
}

impl PhaseTimes {
    /// The sum of all phases.
    pub fn total(&self) -> std::time::Duration {
        self.validate
            + self.liveness
            + self.intervals
            + self.allocation
            + self.resolution
            + self.checker
    }
}

impl std::ops::AddAssign for PhaseTimes {
    fn add_assign(&mut self, o: PhaseTimes) {
        self.validate += o.validate;
        self.liveness += o.liveness;
        self.intervals += o.intervals;
        self.allocation += o.allocation;
        self.resolution += o.resolution;
        self.checker += o.checker;
    }
}

/// Reads the clock only when timing is on; `lap` adds the time since the last lap.
struct Stopwatch(Option<std::time::Instant>);

impl Stopwatch {
    fn new(on: bool) -> Stopwatch {
        Stopwatch(on.then(std::time::Instant::now))
    }

    // Inline: with timing off (compiles outside `--timing`), a lap is one test of the option.
    #[inline]
    fn lap(&mut self, slot: &mut std::time::Duration) {
        if let Some(start) = self.0.as_mut() {
            let now = std::time::Instant::now();
            *slot += now - *start;
            *start = now;
        }
    }
}

/// Counters describing one allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Number of live intervals built (one per live vreg).
    pub intervals: usize,
    /// Number of interval splits performed by the scan.
    pub splits: usize,
    /// Register-to-register moves inserted.
    pub moves: usize,
    /// Register-to-slot moves inserted.
    pub spills: usize,
    /// Slot-to-register moves inserted.
    pub reloads: usize,
    /// Slot-to-slot moves inserted (only through the scratch; counted apart).
    pub stack_moves: usize,
    /// The most vregs live at once at any instruction (register pressure before allocation).
    pub max_live: usize,
    /// Work counted in each phase.
    pub work: Work,
}

/// Steps counted by each phase: a measure of work that does not depend on the machine or
/// its load, for checking that each phase's cost grows linearly with the function (a
/// phase's count grows at most by the factor its "Cost:" line allows). Each counter is a
/// sum of loop trips over the phase's main structures, added up where the loop ends, so
/// counting costs a few additions per loop, not per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Liveness: blocks, vregs, instructions, reads, and predecessors visited by the walks
    /// (small functions: the bitsets' words and the worklist's passes over them).
    pub liveness: u64,
    /// Intervals: blocks, instructions, vregs, uses, ranges, clobber points, and the
    /// successors' live-in entries read for each block's live-out set.
    pub intervals: u64,
    /// The scan: intervals taken, active entries visited, and the hole structure's
    /// insertions, removals, wakes and entries visited.
    pub scan: u64,
    /// Resolution: instructions, blocks, operands, edits, edges, and the live-in entries
    /// looked up on edges where pieces change.
    pub resolve: u64,
    /// Whether liveness took the bitset path of small functions (blocks × vregs bounded by
    /// a constant, quadratic below that bound): its count is not comparable with the
    /// per-value walk's of larger functions, so a growth check compares sizes past it.
    pub dense_liveness: bool,
}

impl std::ops::AddAssign for Work {
    fn add_assign(&mut self, o: Work) {
        self.liveness += o.liveness;
        self.intervals += o.intervals;
        self.scan += o.scan;
        self.resolve += o.resolve;
        self.dense_liveness |= o.dense_liveness;
    }
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, other: Stats) {
        self.intervals += other.intervals;
        self.splits += other.splits;
        self.moves += other.moves;
        self.spills += other.spills;
        self.reloads += other.reloads;
        self.stack_moves += other.stack_moves;
        self.max_live = self.max_live.max(other.max_live);
        self.work += other.work;
    }
}

/// The result of allocation.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// Allocation of every operand, instruction after instruction.
    pub allocs: Vec<Allocation>,
    /// `allocs[inst_alloc_offsets[i]..]` are the allocations of instruction `i`'s operands.
    pub inst_alloc_offsets: Vec<u32>,
    /// Edits in execution order (sorted by program point; edits at one point run in order).
    pub edits: Vec<(ProgPoint, Edit)>,
    /// Number of spill slots used (slots are `0..num_spillslots`).
    pub num_spillslots: usize,
    /// Statistics.
    pub stats: Stats,
    /// Time per phase, when [`Options::timing`] asked for it.
    pub times: PhaseTimes,
}

impl Output {
    /// The allocations of `inst`'s operands, in operand order.
    #[inline]
    pub fn inst_allocs(&self, inst: Inst) -> &[Allocation] {
        let start = self.inst_alloc_offsets[inst.index()] as usize;
        let end = self
            .inst_alloc_offsets
            .get(inst.index() + 1)
            .map_or(self.allocs.len(), |&e| e as usize);
        &self.allocs[start..end]
    }

    /// Recomputes move/spill/reload counters from the edits (after a client changed them).
    pub fn count_edits(edits: &[(ProgPoint, Edit)], stats: &mut Stats) {
        stats.moves = 0;
        stats.spills = 0;
        stats.reloads = 0;
        stats.stack_moves = 0;
        for (_, edit) in edits {
            match (edit.from.is_stack(), edit.to.is_stack()) {
                (false, false) => stats.moves += 1,
                (false, true) => stats.spills += 1,
                (true, false) => stats.reloads += 1,
                (true, true) => stats.stack_moves += 1,
            }
        }
    }
}

/// What the client did wrong (or, for `Internal`, what the allocator could not do).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegAllocError {
    /// The function's shape is inconsistent (ranges, successor/predecessor lists, counts).
    #[error("malformed function: {0}")]
    Malformed(String),
    /// An edge from a block with several successors to one with several predecessors.
    #[error("critical edge block{from} -> block{to}: split it before allocation (insert an empty block on the edge)")]
    CriticalEdge {
        /// Source block.
        from: u32,
        /// Destination block.
        to: u32,
    },
    /// A block not reachable from the entry.
    #[error("block{0} is unreachable from the entry block; remove it before allocation")]
    Unreachable(u32),
    /// The entry block has parameters (define function arguments with fixed-register defs instead).
    #[error("the entry block has parameters; define incoming arguments with fixed-register defs on an instruction instead")]
    EntryParams,
    /// A vreg is defined more than once.
    #[error("{vreg} is defined more than once (at {first} and at {second}): the function is not in SSA form")]
    NotSsa {
        /// The vreg.
        vreg: VReg,
        /// Where it was first defined.
        first: String,
        /// Where it was defined again.
        second: String,
    },
    /// A use that its def does not dominate (or a use of a vreg that is never defined).
    #[error("{vreg} used at inst{inst} is not defined on every path to it (its def does not dominate the use)")]
    UseNotDominated {
        /// The vreg.
        vreg: VReg,
        /// The using instruction.
        inst: u32,
    },
    /// An operand's constraint cannot be satisfied or is inconsistent.
    #[error("inst{inst} operand {operand}: {reason}")]
    BadOperand {
        /// The instruction.
        inst: u32,
        /// Operand index.
        operand: usize,
        /// What is wrong.
        reason: String,
    },
    /// An instruction needs more registers of a class at once than the machine has.
    #[error(
        "inst{inst} needs {needed} {class:?} registers at once but only {available} can hold them"
    )]
    TooManyRegisters {
        /// The instruction.
        inst: u32,
        /// The class.
        class: RegClass,
        /// Registers required simultaneously.
        needed: usize,
        /// Registers available.
        available: usize,
    },
    /// The checker found the allocation wrong (an allocator bug); only with `Options::check`.
    #[error("checker: {0}")]
    Checker(#[from] checker::CheckError),
    /// The allocator gave up (internal limit); a bug to report with the input.
    #[error("internal allocator failure: {0}")]
    Internal(String),
}

/// Allocates registers for `func` on machine `env`.
///
/// A client allocating many functions should keep one [`Context`] and call
/// [`allocate_in`]: this function is that with a fresh context, so every buffer is
/// allocated anew.
pub fn allocate<F: Function>(
    func: &F,
    env: &MachineEnv,
    options: Options,
) -> Result<Output, RegAllocError> {
    let mut ctx = Context::default();
    allocate_in(&mut ctx, func, env, options)?;
    Ok(std::mem::take(&mut ctx.output))
}

/// Working memory of the allocator, kept between functions: every phase refills the
/// buffers it is given, so once a context has seen a function of some size, allocating
/// another of that size or smaller allocates (almost) nothing. Nothing carries over
/// between functions but capacity: every buffer is cleared or refilled before it is read.
#[derive(Default)]
pub struct Context {
    env: env_facts::EnvCache,
    cfg: validate::Cfg,
    validate: validate::Scratch,
    live: liveness::Liveness,
    liveness: liveness::Scratch,
    built: intervals::Built,
    intervals: intervals::Scratch,
    scanned: scan::Scanned,
    scan: scan::Scratch,
    resolve: resolve::Scratch,
    output: Output,
}

impl Context {
    /// An empty context (its buffers grow with the first functions allocated in it).
    pub fn new() -> Context {
        Context::default()
    }

    /// The output of the last successful [`allocate_in`] with this context.
    pub fn output(&self) -> &Output {
        &self.output
    }
}

/// [`allocate`] in `ctx`'s memory; the result stays in the context until the next call.
pub fn allocate_in<'c, F: Function>(
    ctx: &'c mut Context,
    func: &F,
    env: &MachineEnv,
    options: Options,
) -> Result<&'c Output, RegAllocError> {
    let mut times = PhaseTimes::default();
    let mut watch = Stopwatch::new(options.timing);
    let facts = ctx.env.facts(env);
    let checks = if options.trust_input {
        validate::Checks::ShapeOnly
    } else {
        validate::Checks::Full
    };
    validate::validate_into(func, env, facts, checks, &mut ctx.cfg, &mut ctx.validate)?;
    let cfg = &ctx.cfg;
    watch.lap(&mut times.validate);
    liveness::compute_into(func, cfg, &mut ctx.live, &mut ctx.liveness);
    let live = &ctx.live;
    if let Some(v) = live.live_into_entry {
        // Something is read on a path from the entry that does not pass its def.
        let vreg = VReg::new(v as usize, RegClass::Int);
        return Err(validate::explain_undominated_use(func, cfg, vreg));
    }
    watch.lap(&mut times.liveness);
    let built = &mut ctx.built;
    intervals::build(func, cfg, live, facts, built, &mut ctx.intervals);
    watch.lap(&mut times.intervals);
    let scanned = &mut ctx.scanned;
    scan::run(
        func,
        facts,
        cfg,
        built,
        options.perturb,
        scanned,
        &mut ctx.scan,
    )?;
    watch.lap(&mut times.allocation);
    let found = resolve::Found {
        cfg,
        live,
        built,
        scanned,
    };
    let output = &mut ctx.output;
    resolve::resolve(func, env, found, output, &mut ctx.resolve)?;
    watch.lap(&mut times.resolution);
    if options.check {
        checker::check_with(func, env, output, cfg, live)?;
        watch.lap(&mut times.checker);
    }
    output.times = times;
    Ok(output)
}

/// Loop depth of each block, from back edges in emission order: a back edge `b -> h` with
/// `h <= b` marks blocks `h..=b` as one loop level deeper. Used for split placement and for
/// weighting costs; exact for reducible CFGs whose loops are laid out contiguously.
pub fn loop_depths<F: Function>(func: &F) -> Vec<u32> {
    let mut depths = Vec::new();
    loop_depths_into(func, &mut depths, &mut Vec::new());
    depths
}

/// [`loop_depths`] into `depths`, with `delta` as working memory (both refilled).
pub(crate) fn loop_depths_into<F: Function>(func: &F, depths: &mut Vec<u32>, delta: &mut Vec<i64>) {
    let n = func.num_blocks();
    reuse::refill(delta, n + 1, 0);
    for b in 0..n {
        for &s in func.block_succs(Block(b as u32)) {
            if s.index() <= b {
                delta[s.index()] += 1;
                delta[b + 1] -= 1;
            }
        }
    }
    let mut depth = 0i64;
    depths.clear();
    depths.extend((0..n).map(|b| {
        depth += delta[b];
        depth as u32
    }));
}
