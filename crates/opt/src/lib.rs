//! `kestrel-opt`, the mid-end: IR-to-IR passes between the verifier and lowering.
//!
//! [`optimize`] reads as the pipeline of opt level `speed`:
//! 0. [`insert_preheaders`]: every loop gets a block that runs exactly when it is entered,
//!    so that hoisting reaches every loop (compacted at once, only when a block was made);
//! 1. [`if_convert`]: two-way branches whose sides are a few cheap pure instructions become
//!    straight-line code with `select`s; early, so that the passes below simplify and number
//!    the merged sides together (its moves stay queued until simplification's walk, like
//!    hoisting's);
//! 2. [`eliminate_redundant_loads`]: loads equal to an available earlier one (`readonly`
//!    loads across dominated blocks, others within a block until a write that may alias);
//!    first, so that GVN sees the addresses computed from the loads it merged;
//! 3. [`hoist_loop_invariants`]: pure instructions and movable loads whose operands come
//!    from outside a loop move to its preheader; before simplification, whose compacting
//!    walk applies the moves (and then simplifies and numbers the hoisted code where it
//!    landed);
//! 4. [`simplify`]: the rewrite rules of `simplify.rules` (constant folding with the
//!    interpreter's arithmetic, algebraic identities, strength reduction, extension chains,
//!    reassociation of constants, branches on constants) and dominator-checked global value
//!    numbering, fused into one compacting walk;
//! 5. [`simplify_cfg`]'s rounds: decided branches (`brif`, `br_table`) become jumps, edges
//!    skip blocks that only jump, block parameters that always receive one value or are
//!    dead go, unreachable blocks are deleted; after simplification, whose folding decides
//!    branches and makes the constants it reads;
//! 6. [`eliminate_dead_code`]: instructions without effects that nothing uses (the
//!    conditions of decided branches among them);
//! 7. [`merge_blocks`]: a block whose only entry is its predecessor's `jump` joins that
//!    predecessor; last, because its moves are queued and the final compaction applies them.
//!
//! Contract. Requires a function the verifier accepts, with a compact layout (what the
//! parser and `FunctionBuilder::finalize` produce). Guarantees a compact function ([`optimize`];
//! [`optimize_in`] may leave the last removed instructions as tombstones) with the
//! same observable behavior (results, traps, memory effects, calls) that the verifier
//! accepts; with `verify`, the verifier is run on the result and a rejection is an
//! [`OptError`] (a mid-end bug, reported instead of compiled). Cost: linear in the function
//! size (each pass states its own; the control-flow graph and dominator tree are computed
//! once).

mod cfg_simplify;
mod dce;
mod gvn;
mod ifconvert;
mod licm;
mod loads;
mod loops;
mod magic;
mod preheaders;
mod rules;
mod simplify;
mod unreachable;

pub use cfg_simplify::{merge_blocks, simplify_cfg, CfgStats, MAX_ROUNDS, THREAD_GROWTH};
pub use dce::eliminate_dead_code;
pub use ifconvert::{if_convert, ARM_BUDGET, SELECT_BUDGET};
pub use licm::{hoist_loop_invariants, LOOP_REGISTERS};
pub use loads::eliminate_redundant_loads;
pub use preheaders::insert_preheaders;
pub use rules::{simplification_rules, Op};
pub use simplify::{simplify, SimplifyStats};
pub use unreachable::remove_unreachable_blocks;

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::compact::CompactMemory;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::Function;

/// How much the mid-end does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptLevel {
    /// No mid-end: the function is lowered as given.
    #[default]
    None,
    /// The mid-end's passes (see the crate docs).
    Speed,
}

impl OptLevel {
    /// Parse `none` or `speed` (the CLI's and CLIF's `opt_level` spellings).
    pub fn from_name(name: &str) -> Option<OptLevel> {
        match name {
            "none" => Some(OptLevel::None),
            "speed" | "speed_and_size" => Some(OptLevel::Speed),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OptLevel::None => "none",
            OptLevel::Speed => "speed",
        }
    }
}

/// The mid-end produced a function the verifier rejects: a bug in a pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the mid-end produced invalid IR for {function}: {errors}")]
pub struct OptError {
    pub function: String,
    pub errors: String,
}

/// What [`optimize`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptStats {
    /// Branches turned into `select`s.
    pub if_converted: usize,
    /// Loads deleted as redundant.
    pub loads: usize,
    pub simplify: SimplifyStats,
    /// Loop preheaders made.
    pub preheaders: usize,
    /// What control-flow simplification and block merging did (its `unreachable`: blocks
    /// deleted as unreachable once branches were decided).
    pub cfg: CfgStats,
    /// Instructions deleted as dead.
    pub dead: usize,
    /// Instructions moved out of loops.
    pub hoisted: usize,
}

/// The mid-end's memory kept between functions (the analyses' tables); nothing but capacity
/// carries over.
#[derive(Default)]
pub struct OptContext {
    cfg: ControlFlowGraph,
    domtree: DominatorTree,
    values: gvn::ValueTable,
    loads: loads::Scratch,
    dce: dce::Scratch,
    cfg_simplify: cfg_simplify::Scratch,
    compact: CompactMemory,
    /// Per rule of [`simplification_rules`]: how often it fired in the last run.
    fired: Vec<u32>,
}

impl OptContext {
    pub fn new() -> OptContext {
        OptContext::default()
    }

    /// How often each rule of [`simplification_rules`] fired in the last [`optimize_in`]
    /// (the stats it returns leave `simplify.fired` empty; [`optimize`] fills it).
    pub fn fired(&self) -> &[u32] {
        &self.fired
    }
}

/// Run the pipeline of `level` on `func` in place (nothing for [`OptLevel::None`]), leaving
/// it compact; with `verify`, check the result with the IR verifier.
pub fn optimize(func: &mut Function, level: OptLevel, verify: bool) -> Result<OptStats, OptError> {
    let mut ctx = OptContext::new();
    let mut stats = optimize_in(&mut ctx, func, level, verify)?;
    if !func.layout.is_compact() {
        func.compact_in(&mut ctx.compact);
    }
    stats.simplify.fired = ctx.fired;
    Ok(stats)
}

/// [`optimize`] in `ctx`'s memory, for a caller that lowers the result next: the dead
/// instructions removed last may stay as tombstones (no queued insertions, no operand
/// naming an alias), which every layout walk skips and the verifier and lowering accept;
/// instruction numbers then have gaps. [`optimize`] compacts them away.
pub fn optimize_in(
    ctx: &mut OptContext,
    func: &mut Function,
    level: OptLevel,
    verify: bool,
) -> Result<OptStats, OptError> {
    let mut stats = OptStats::default();
    if level == OptLevel::None {
        return Ok(stats);
    }
    debug_assert!(
        func.layout.is_compact(),
        "the mid-end needs a compact function"
    );
    let OptContext {
        cfg,
        domtree,
        values,
        loads,
        dce,
        cfg_simplify: cfg_scratch,
        compact,
        fired,
    } = ctx;
    cfg.compute_into(func);
    domtree.compute_into(func, cfg);
    stats.preheaders = preheaders::insert_preheaders(func, cfg, domtree);
    if stats.preheaders > 0 {
        // The new blocks and their jumps are queued: placed, the graph and tree see them.
        func.compact_in(compact);
        cfg.compute_into(func);
        domtree.compute_into(func, cfg);
    }
    stats.if_converted = ifconvert::if_convert_in(func, cfg);
    if stats.if_converted > 0 {
        // The arms are left empty (their removal and their instructions' moves queued), so
        // the graph read from the placed code is the converted one, the arms unreachable.
        cfg.compute_into(func);
        domtree.compute_into(func, cfg);
    }
    // If-conversion leaves its moves queued, the loads pass tombstones and aliases, hoisting
    // its moves queued; simplification's walk applies all of them (compaction takes any
    // layout and resolves aliases as it moves instructions), so they cost no compaction of
    // their own. If-conversion's queued instructions access no memory, so the loads pass
    // need not see them; hoisting reads the queue (see its contract).
    stats.loads = loads::eliminate_redundant_loads_in(func, domtree, loads);
    stats.hoisted = licm::hoist_loop_invariants_in(func, cfg, domtree);
    stats.simplify = simplify::simplify_in(func, domtree, values, compact, fired);
    // Leaves the graph describing the result (the tree is stale from here on).
    stats.cfg = cfg_simplify::simplify_cfg_in(func, cfg, cfg_scratch);
    let dead = dce::eliminate_dead_code_in(func, dce);
    stats.dead = dead.removed;
    // Dead code keeps every edge, so the graph still describes the function.
    stats.cfg.merged = cfg_simplify::merge_blocks(func, cfg);
    // Dead code alone leaves only tombstones, which every reader of the result skips (the
    // verifier, lowering): no compaction for them. Removed blocks and merged blocks' moves
    // are queued, and aliases must be resolved (the parameters removed or merged made some
    // that dead code did not see read), so those compact.
    if dead.reads_alias || stats.cfg.params > 0 || func.layout.has_queued_edits() {
        func.compact_in(compact);
    }
    // Aliases may name deleted results; nothing live reads them.
    func.dfg.clear_aliases();
    if verify {
        kestrel_ir::verify_function(func).map_err(|errors| OptError {
            function: func.name.to_string(),
            errors: errors.to_string(),
        })?;
    }
    Ok(stats)
}
