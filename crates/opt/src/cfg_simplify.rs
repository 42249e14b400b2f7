//! Control-flow simplification: decided branches become jumps, edges skip blocks that only
//! jump, block parameters that always receive one value (or are never used) go, and a
//! block that is its single predecessor's unconditional successor joins that predecessor.
//!
//! [`simplify_cfg`] runs rounds of four edits, each over every reachable block:
//! 1. **Folding.** A `brif` on a constant (an `iconst`, aliases resolved), or whose two
//!    destinations are the same block with the same arguments, becomes a `jump` to the
//!    destination taken; so does a `br_table` on a constant (the entry it selects, or the
//!    default when the index is out of range) or whose entries all equal its default.
//! 2. **Threading.** A *forwarding* block is one, other than the entry, whose only
//!    instruction is `jump T(b…)` with `T` another block, and whose parameters nothing but
//!    that jump reads (an edge skipping it must not strand a use of them in a block it
//!    dominated). An edge `X -> F(a…)` to a
//!    forwarding `F` becomes `X -> T(b…)` with each of `F`'s parameters in `b` replaced by
//!    the matching `a`; forwarding blocks' own jumps are threaded first (along each chain,
//!    from its end), so one step skips a whole chain. An edge is threaded only if its
//!    argument list grows by at most [`THREAD_GROWTH`] values (a block jumping on with many
//!    arguments is not copied into each of its many predecessors), and never into a jump
//!    from a block to itself (a cycle of forwarding blocks stays).
//! 3. **Parameters.** A parameter of a block other than the entry is removed when every
//!    edge into the block passes either one other value `v` or the parameter itself (the
//!    parameter becomes an alias of `v`), or when its only uses are edges passing it back
//!    into its own place (it is dead); every edge into the block (jumps, both `brif`
//!    destinations, every jump-table entry, `try_call` destinations) loses the matching
//!    argument. A parameter passed a `try_call`'s `retN` or `exnN` is never made an alias
//!    of it (those values exist only as block arguments).
//! 4. Blocks that no path from the entry reaches any more are deleted
//!    (`unreachable.rs`), at the start of each round and at the end; each round walks the
//!    blocks a depth-first search from the entry finds, in the order it finds them.
//!
//! A round that changed something is followed by another, up to [`MAX_ROUNDS`] (an alias
//! made in one round can decide a branch or make a block forwarding for the next); so the
//! pass does a bounded number of linear walks whatever the function. [`merge_blocks`],
//! run separately, merges a block `B` into `A` when `A` ends in `jump B(a…)` and that is
//! `B`'s only incoming edge: `B`'s parameters become aliases of `a…`, the jump goes and
//! `B`'s instructions move to `A`'s end (chains `A -> B -> C` merge in one walk). The entry
//! block is never merged into another, nor threaded through (no branch may target it).
//!
//! Contract. Requires a function the verifier accepts (aliases in operands are fine) whose
//! layout holds no queued insertions (tombstones and queued block removals are fine).
//! Maintains:
//! - SSA dominance. Folding and threading only remove edges or replace a path by an edge
//!   with the same end (below). A value `v` that `F`'s jump passes and that is not one of
//!   `F`'s parameters is defined outside `F` (its only instruction is the jump) in a block
//!   dominating `F`, hence on every path to each predecessor `X` of `F`: it dominates `X`'s
//!   branch; `F`'s parameters are read by its jump alone, which the threaded edge replaces. A parameter `p` of `B` receiving only `v` or itself: the first edge of any path
//!   into `B` comes from a block `B` does not dominate, so it cannot pass `p` (which only
//!   blocks `B` dominates see) and passes `v`, whose definition therefore dominates that
//!   edge's source and so `B`. A merged `B`'s only entry is `A`'s jump, so what dominated
//!   `A`'s end dominates `B`'s instructions where they land.
//! - Behavior: a threaded edge passes `T` exactly the values the path through `F` passed
//!   (a forwarding block does nothing else); a decided branch goes where it always went;
//!   a removed parameter held `v` on every entry, or was never read; merging keeps the
//!   instructions' order on the one path that ran them. Instructions keep their identity,
//!   so source locations and trap codes stay with them.
//! - Types, and jump tables shared by several `br_table`s: a table is edited once per walk,
//!   and every edit is one that is correct for any branch reading it.
//!
//! Leaves queued block removals (and, after [`merge_blocks`], queued moves) for the next
//! compaction, aliases for it to resolve, and the control-flow graph in `cfg` computed after
//! the last edit (so [`merge_blocks`] can use it). Instructions made dead (a decided
//! branch's condition) are left to DCE.
//!
//! Cost: each round is O(blocks + instructions + edges + block parameters + branch
//! arguments + jump-table entries): one search for the reachable blocks, per-block and
//! per-parameter tables indexed densely, each forwarding block resolved once, each branch
//! and table rewritten once; argument lists grow by at most [`THREAD_GROWTH`] per threaded
//! edge. At most [`MAX_ROUNDS`] rounds run, so the pass is linear in the function's size.
//! [`merge_blocks`] is O(blocks + instructions of merged blocks).

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::compact::CompactMemory;
use kestrel_ir::entity::{JumpTable, SecondaryMap};
use kestrel_ir::layout::InsertPoint;
use kestrel_ir::{Block, BlockCall, Function, Inst, InstructionData, Opcode, Value, ValueDef};

use crate::unreachable::remove_blocks;

/// Most rounds [`simplify_cfg`] runs.
pub const MAX_ROUNDS: usize = 3;

/// How many more arguments a threaded edge may pass than the edge it replaces.
pub const THREAD_GROWTH: usize = 4;

/// What [`simplify_cfg`] and [`merge_blocks`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CfgStats {
    /// Branches turned into jumps.
    pub folded: usize,
    /// Edges redirected past a forwarding block.
    pub threaded: usize,
    /// Block parameters removed.
    pub params: usize,
    /// Blocks deleted as unreachable.
    pub unreachable: usize,
    /// Blocks merged into their predecessor.
    pub merged: usize,
    /// Rounds of edits run.
    pub rounds: usize,
}

/// Simplify the control flow of `func` (verified, compact) and merge blocks, leaving it
/// compact; returns what was done.
pub fn simplify_cfg(func: &mut Function) -> CfgStats {
    let mut cfg = ControlFlowGraph::default();
    let mut stats = simplify_cfg_in(func, &mut cfg, &mut Scratch::default());
    stats.merged = merge_blocks(func, &cfg);
    // Removed parameters and merged blocks leave aliases for compaction to resolve.
    if !func.layout.is_compact() || stats.params > 0 || stats.merged > 0 {
        func.compact_in(&mut CompactMemory::default());
    }
    func.dfg.clear_aliases();
    stats
}

/// The rounds of [`simplify_cfg`] (no merging, no compaction), in the caller's tables;
/// `cfg` is computed here and describes the result.
pub(crate) fn simplify_cfg_in(
    func: &mut Function,
    cfg: &mut ControlFlowGraph,
    scratch: &mut Scratch,
) -> CfgStats {
    let mut stats = CfgStats::default();
    loop {
        find_reachable(func, scratch);
        let reached = &scratch.reached;
        let walk = scratch.walk_id;
        // Post-invariant: the removed blocks hold no placed instruction, so they have no
        // edges, and `order` lists exactly the blocks that remain reachable.
        stats.unreachable += remove_blocks(func, |b| reached[b] != walk);
        if stats.rounds == MAX_ROUNDS {
            break;
        }
        stats.rounds += 1;
        let before = (stats.folded, stats.threaded, stats.params);
        let order = std::mem::take(&mut scratch.order);
        fold_branches(func, &order, &mut stats);
        thread_edges(func, &order, scratch, &mut stats);
        remove_params(func, &order, scratch, &mut stats);
        scratch.order = order;
        if before == (stats.folded, stats.threaded, stats.params) {
            break;
        }
    }
    cfg.compute_into(func);
    stats
}

/// The blocks a depth-first search from the entry reaches over the current branches, into
/// `scratch.order` (in the order found), each marked with a new `scratch.walk_id` in
/// `scratch.reached`. O(blocks + edges).
fn find_reachable(func: &Function, scratch: &mut Scratch) {
    scratch.walk_id += 1;
    let (walk, reached, order, stack) = (
        scratch.walk_id,
        &mut scratch.reached,
        &mut scratch.order,
        &mut scratch.path,
    );
    order.clear();
    stack.clear();
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    reached[entry] = walk;
    stack.push(entry);
    while let Some(b) = stack.pop() {
        order.push(b);
        let Some(end) = func.layout.last_inst(b) else {
            continue;
        };
        for k in 0..func.num_branch_destinations(end) {
            let next = func.branch_destination(end, k).block;
            if reached[next] != walk {
                reached[next] = walk;
                stack.push(next);
            }
        }
    }
}

/// Tables reused across rounds and functions (only capacity carries over).
#[derive(Default)]
pub(crate) struct Scratch {
    /// The reachable blocks, in the order the search found them.
    order: Vec<Block>,
    /// Per block: the search that last reached it.
    reached: SecondaryMap<Block, u32>,
    walk_id: u32,
    /// Per block: forwarding state (see [`thread_edges`]).
    state: SecondaryMap<Block, u8>,
    path: Vec<Block>,
    /// Per jump table: the walk that last rewrote it.
    table_walk: SecondaryMap<JumpTable, u32>,
    walk: u32,
    /// Per block: index of its first parameter in the flat per-parameter tables.
    first_param: SecondaryMap<Block, u32>,
    incoming: Vec<Incoming>,
    self_uses: Vec<u32>,
    keep: Vec<bool>,
    uses: SecondaryMap<Value, u32>,
    args: Vec<Value>,
}

impl Scratch {
    /// Start a walk that rewrites each jump table at most once.
    fn next_walk(&mut self) -> u32 {
        self.walk += 1;
        self.walk
    }
}

/// What the edges into a block pass one parameter, besides the parameter itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Incoming {
    Nothing,
    One(Value),
    Many,
}

/// The value of integer constant `v` (aliases resolved), zero-extended from its type.
fn constant(func: &Function, v: Value) -> Option<u64> {
    let v = func.dfg.resolve(v);
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return None;
    };
    let InstructionData::UnaryImm {
        opcode: Opcode::Iconst,
        imm,
    } = *func.dfg.inst(inst)
    else {
        return None;
    };
    let bits = func.dfg.value_type(v).bits();
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    Some(imm as u64 & mask)
}

/// Whether two destinations are the same block with the same arguments (aliases resolved).
fn same_call(func: &Function, a: &BlockCall, b: &BlockCall) -> bool {
    let (x, y) = (func.dfg.block_call_args(a), func.dfg.block_call_args(b));
    a.block == b.block
        && x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|(&u, &v)| func.dfg.resolve(u) == func.dfg.resolve(v))
}

/// The destination a branch always takes, if it is decided (see the module docs).
fn decided(func: &Function, data: &InstructionData) -> Option<BlockCall> {
    match *data {
        InstructionData::Brif { arg, blocks, .. } => match constant(func, arg) {
            Some(c) => Some(blocks[usize::from(c == 0)]),
            None => same_call(func, &blocks[0], &blocks[1]).then_some(blocks[0]),
        },
        InstructionData::BranchTable { arg, table, .. } => {
            let jt = &func.jump_tables[table];
            match constant(func, arg) {
                Some(k) => Some(
                    usize::try_from(k)
                        .ok()
                        .and_then(|k| jt.entries.get(k))
                        .copied()
                        .unwrap_or(jt.default),
                ),
                None => jt
                    .entries
                    .iter()
                    .all(|e| same_call(func, e, &jt.default))
                    .then_some(jt.default),
            }
        }
        _ => None,
    }
}

/// Turn `inst` into a jump if it is a decided branch; returns whether it did.
fn fold(func: &mut Function, inst: Inst) -> bool {
    let data = *func.dfg.inst(inst);
    let Some(taken) = decided(func, &data) else {
        return false;
    };
    // A jump-table entry's list stays the table's: the jump gets its own copy.
    let args = func.dfg.block_call_args(&taken).to_vec();
    let destination = BlockCall::new(taken.block, &args, &mut func.dfg.pool);
    // Post-invariant: the jump goes where the branch always went, passing the same values;
    // the edges it never took are gone (removing edges keeps dominance).
    *func.dfg.inst_mut(inst) = InstructionData::Jump {
        opcode: Opcode::Jump,
        destination,
    };
    true
}

/// Fold every decided branch of the reachable blocks.
fn fold_branches(func: &mut Function, order: &[Block], stats: &mut CfgStats) {
    for &b in order {
        if let Some(end) = func.layout.last_inst(b) {
            stats.folded += usize::from(fold(func, end));
        }
    }
}

/// Rewrite every destination of branch `inst` with `f` (which returns the new call, or
/// `None` to keep it); a jump table already rewritten in walk `walk` is left alone.
fn rewrite_calls(
    func: &mut Function,
    inst: Inst,
    table_walk: &mut SecondaryMap<JumpTable, u32>,
    walk: u32,
    mut f: impl FnMut(&mut Function, BlockCall) -> Option<BlockCall>,
) -> usize {
    let mut rewritten = 0;
    let mut data = *func.dfg.inst(inst);
    if let InstructionData::BranchTable { table, .. } = data {
        if table_walk[table] == walk {
            return 0;
        }
        table_walk[table] = walk;
        for k in 0..=func.jump_tables[table].entries.len() {
            let call = match k {
                0 => func.jump_tables[table].default,
                _ => func.jump_tables[table].entries[k - 1],
            };
            if let Some(new) = f(func, call) {
                let jt = &mut func.jump_tables[table];
                *(if k == 0 {
                    &mut jt.default
                } else {
                    &mut jt.entries[k - 1]
                }) = new;
                rewritten += 1;
            }
        }
        return rewritten;
    }
    if let Some(table) = data.exception_table() {
        // One `try_call` per exception table: no walk marks needed.
        for k in 0..=func.exception_tables[table].handlers.len() {
            let call = match k {
                0 => func.exception_tables[table].normal,
                _ => func.exception_tables[table].handlers[k - 1],
            };
            if let Some(new) = f(func, call) {
                let et = &mut func.exception_tables[table];
                *(if k == 0 {
                    &mut et.normal
                } else {
                    &mut et.handlers[k - 1]
                }) = new;
                rewritten += 1;
            }
        }
        return rewritten;
    }
    for k in 0..data.branch_destinations().len() {
        if let Some(new) = f(func, data.branch_destinations()[k]) {
            data.branch_destinations_mut()[k] = new;
            rewritten += 1;
        }
    }
    if rewritten > 0 {
        *func.dfg.inst_mut(inst) = data;
    }
    rewritten
}

// Forwarding states of [`Scratch::state`].
const UNSEEN: u8 = 0;
const NOT_FORWARDING: u8 = 1;
const ON_PATH: u8 = 2;
const FORWARDING: u8 = 3;

/// `b`'s jump if `b` is a forwarding block (see the module docs) whose parameters only its
/// jump reads (`uses` counts every use): an edge that skips it must not leave a use of its
/// parameters in a block it dominated.
fn forwarding_jump(func: &Function, uses: &SecondaryMap<Value, u32>, b: Block) -> Option<Inst> {
    if Some(b) == func.layout.entry_block() {
        return None;
    }
    let first = func.layout.first_inst(b)?;
    if func.layout.last_inst(b) != Some(first) {
        return None;
    }
    let InstructionData::Jump { destination, .. } = func.dfg.inst(first) else {
        return None;
    };
    // Each parameter the jump passes is one use of it: the parameters' uses are all in
    // the jump exactly when they number the arguments that are parameters of `b`.
    let passed = func.dfg.block_call_args(destination);
    let in_jump = passed
        .iter()
        .filter(|&&v| matches!(func.dfg.value_def(func.dfg.resolve(v)), ValueDef::Param(o, _) if o == b))
        .count();
    let params = func.dfg.block_params(b);
    let only_passed = params.iter().map(|&p| uses[p] as usize).sum::<usize>() == in_jump;
    (destination.block != b && only_passed).then_some(first)
}

/// Count every use of every value in the reachable blocks (operands, branch and jump-table
/// arguments), aliases resolved.
fn count_uses(func: &Function, order: &[Block], uses: &mut SecondaryMap<Value, u32>) {
    uses.clear();
    for &b in order {
        for inst in func.layout.block_insts(b) {
            for v in func.dfg.inst_args(inst) {
                uses[func.dfg.resolve(v)] += 1;
            }
            for k in 0..func.num_branch_destinations(inst) {
                let call = func.branch_destination(inst, k);
                for &a in func.dfg.block_call_args(&call) {
                    uses[func.dfg.resolve(a)] += 1;
                }
            }
        }
    }
}

/// The edge `call` redirected past the forwarding block it names, if that is allowed.
fn threaded(
    func: &mut Function,
    state: &SecondaryMap<Block, u8>,
    call: BlockCall,
) -> Option<BlockCall> {
    let f = call.block;
    if state[f] != FORWARDING {
        return None;
    }
    let jump = func.layout.first_inst(f)?;
    let InstructionData::Jump { destination, .. } = *func.dfg.inst(jump) else {
        return None;
    };
    let (passed, onward) = (
        func.dfg.block_call_args(&call),
        func.dfg.block_call_args(&destination),
    );
    if destination.block == f || onward.len() > passed.len() + THREAD_GROWTH {
        return None;
    }
    let args: Vec<Value> = onward
        .iter()
        .map(|&v| {
            let v = func.dfg.resolve(v);
            match func.dfg.value_def(v) {
                ValueDef::Param(b, k) if b == f => passed[usize::from(k)],
                _ => v,
            }
        })
        .collect();
    Some(BlockCall::new(destination.block, &args, &mut func.dfg.pool))
}

/// Thread every edge into a forwarding block (see the module docs).
fn thread_edges(func: &mut Function, order: &[Block], scratch: &mut Scratch, stats: &mut CfgStats) {
    // Only forwarding blocks with parameters need the use counts.
    let counted = order.iter().any(|&b| {
        !func.dfg.block_params(b).is_empty()
            && func.layout.first_inst(b).is_some()
            && func.layout.first_inst(b) == func.layout.last_inst(b)
    });
    if counted {
        count_uses(func, order, &mut scratch.uses);
    }
    let uses = &scratch.uses;
    let state = &mut scratch.state;
    state.clear();
    let walk = scratch.walk + 1;
    scratch.walk = walk;
    let table_walk = &mut scratch.table_walk;
    // Forwarding blocks' own jumps first: follow each chain to its end, then thread from the
    // end back, so each block's jump skips the (already threaded) rest of its chain.
    for &start in order {
        if state[start] != UNSEEN {
            continue;
        }
        let path = &mut scratch.path;
        path.clear();
        let mut b = start;
        loop {
            let Some(jump) = forwarding_jump(func, uses, b) else {
                state[b] = NOT_FORWARDING;
                break;
            };
            state[b] = ON_PATH;
            path.push(b);
            let InstructionData::Jump { destination, .. } = *func.dfg.inst(jump) else {
                unreachable!("a forwarding block ends in a jump");
            };
            if state[destination.block] != UNSEEN {
                break;
            }
            b = destination.block;
        }
        for &p in path.iter().rev() {
            let jump = func
                .layout
                .first_inst(p)
                .expect("a forwarding block has its jump");
            // The next block on the path is resolved already; the chain's end (a block on
            // the path: a cycle) is not, so a cycle is not threaded into itself.
            stats.threaded += rewrite_calls(func, jump, table_walk, walk, |func, call| {
                threaded(func, state, call).filter(|new| new.block != p)
            });
            state[p] = FORWARDING;
        }
    }
    // Then every other branch.
    for &b in order {
        if state[b] == FORWARDING {
            continue;
        }
        let Some(end) = func.layout.last_inst(b) else {
            continue;
        };
        if !func.dfg.inst(end).opcode().is_branch() {
            continue;
        }
        let n = rewrite_calls(func, end, table_walk, walk, |func, call| {
            threaded(func, state, call)
        });
        if n > 0 {
            stats.threaded += n;
            // Both sides may now be one edge.
            stats.folded += usize::from(fold(func, end));
        }
    }
}

/// Remove the block parameters that always receive one value or are dead (module docs).
fn remove_params(
    func: &mut Function,
    order: &[Block],
    scratch: &mut Scratch,
    stats: &mut CfgStats,
) {
    let entry = func.layout.entry_block();
    let Scratch {
        first_param,
        incoming,
        self_uses,
        keep,
        uses,
        ..
    } = scratch;
    first_param.clear();
    let mut total = 0u32;
    for &b in order {
        first_param[b] = total;
        total += func.dfg.block_params(b).len() as u32;
    }
    if total == 0 {
        return;
    }
    incoming.clear();
    incoming.resize(total as usize, Incoming::Nothing);
    self_uses.clear();
    self_uses.resize(total as usize, 0);
    // Every use of every value in the reachable blocks, and what each edge passes.
    count_uses(func, order, uses);
    for &b in order {
        if let Some(end) = func.layout.last_inst(b) {
            for k in 0..func.num_branch_destinations(end) {
                let call = func.branch_destination(end, k);
                let params = func.dfg.block_params(call.block);
                let base = first_param[call.block] as usize;
                for (i, &a) in func.dfg.block_call_args(&call).iter().enumerate() {
                    let a = func.dfg.resolve(a);
                    if a == params[i] {
                        self_uses[base + i] += 1;
                        continue;
                    }
                    // A `try_call`'s result exists only as its block argument: a parameter
                    // receiving one stays.
                    let from_try_call = matches!(func.dfg.value_def(a),
                        ValueDef::Result(d, _) if func.dfg.inst(d).opcode().is_try_call());
                    let slot = &mut incoming[base + i];
                    *slot = match *slot {
                        _ if from_try_call => Incoming::Many,
                        Incoming::Nothing => Incoming::One(a),
                        Incoming::One(v) if v == a => Incoming::One(v),
                        _ => Incoming::Many,
                    };
                }
            }
        }
    }
    keep.clear();
    keep.resize(total as usize, true);
    let mut any = false;
    for &b in order {
        if Some(b) == entry {
            continue;
        }
        let base = first_param[b] as usize;
        for i in 0..func.dfg.block_params(b).len() {
            let p = func.dfg.block_params(b)[i];
            let dead = uses[p] == self_uses[base + i];
            // Post-invariant (module docs): `v` dominates `b`, and `p` held `v` on every
            // entry, so `p`'s uses may read `v`; refused only for an alias cycle.
            let same = match incoming[base + i] {
                Incoming::One(v) => func.dfg.change_to_alias(p, v),
                _ => false,
            };
            if dead || same {
                keep[base + i] = false;
                any = true;
                stats.params += 1;
            }
        }
    }
    if !any {
        return;
    }
    // Every edge into a block that lost parameters drops the matching arguments (each jump
    // table once); then the blocks drop the parameters.
    let walk = scratch.next_walk();
    let Scratch {
        first_param,
        keep,
        table_walk,
        args,
        ..
    } = scratch;
    let dropped = |b: Block, k: usize| !keep[first_param[b] as usize + k];
    for &b in order {
        let Some(end) = func.layout.last_inst(b) else {
            continue;
        };
        if !func.dfg.inst(end).opcode().is_branch() {
            continue;
        }
        rewrite_calls(func, end, table_walk, walk, |func, call| {
            let n = func.dfg.block_params(call.block).len();
            if !(0..n).any(|k| dropped(call.block, k)) {
                return None;
            }
            args.clear();
            let old = func.dfg.block_call_args(&call);
            args.extend((0..n).filter(|&k| !dropped(call.block, k)).map(|k| old[k]));
            Some(BlockCall::new(call.block, args, &mut func.dfg.pool))
        });
    }
    for &b in order {
        let n = func.dfg.block_params(b).len();
        if Some(b) != entry && (0..n).any(|k| dropped(b, k)) {
            func.dfg.retain_block_params(b, |k, _| !dropped(b, k));
        }
    }
}

/// Merge each block into its predecessor when that predecessor ends in an unconditional jump
/// that is the block's only incoming edge and both have the same `cold` mark (see the module
/// docs); returns how many were merged. `cfg` must describe `func`'s edges; the layout must
/// hold no queued insertions. Leaves the moves and removals queued for compaction.
pub fn merge_blocks(func: &mut Function, cfg: &ControlFlowGraph) -> usize {
    let entry = func.layout.entry_block();
    // The block whose jump is `b`'s only incoming edge, if `b` can be merged into it.
    let merge_target = |func: &Function, b: Block| -> Option<Inst> {
        let [pred] = cfg.predecessors(b) else {
            return None;
        };
        let jumps = matches!(func.dfg.inst(pred.inst), InstructionData::Jump { .. });
        let same_heat = func.dfg.block_data(pred.block).cold == func.dfg.block_data(b).cold;
        (Some(b) != entry && pred.block != b && jumps && same_heat).then_some(pred.inst)
    };
    let mut merged = 0;
    let mut insts: Vec<Inst> = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    let mut chain: Vec<(Block, Inst)> = Vec::new();
    for k in 0..func.layout.blocks().len() {
        let a = func.layout.blocks()[k];
        // Chains start at a block that is not merged itself (a cycle of such blocks would be
        // unreachable, and unreachable blocks are gone).
        if merge_target(func, a).is_some() {
            continue;
        }
        let Some(mut end) = func.layout.last_inst(a) else {
            continue;
        };
        // The chain `a -> b1 -> b2 …` (each the only successor of the one before, by a
        // jump, and entered only by it), found before anything moves.
        chain.clear();
        while let InstructionData::Jump { destination, .. } = *func.dfg.inst(end) {
            let b = destination.block;
            if merge_target(func, b) != Some(end) {
                break;
            }
            chain.push((b, end));
            end = func
                .layout
                .last_inst(b)
                .expect("a reachable block ends in a terminator");
        }
        for (i, &(b, jump)) in chain.iter().enumerate() {
            let InstructionData::Jump { destination, .. } = *func.dfg.inst(jump) else {
                unreachable!("the chain is linked by jumps");
            };
            args.clear();
            args.extend_from_slice(func.dfg.block_call_args(&destination));
            let params = func.dfg.block_params(b).to_vec();
            // Post-invariant: each parameter held its argument on the one entry to `b`.
            let aliased = params
                .iter()
                .zip(&args)
                .all(|(&p, &v)| func.dfg.change_to_alias(p, v));
            debug_assert!(
                aliased,
                "a jump's arguments match its destination's parameters"
            );
            // The jump into `b` is still placed (in `a`, or in the block before, which kept
            // it back); `b`'s own jump to the next block of the chain stays for the same.
            func.layout.remove_inst(jump);
            let onward = chain.get(i + 1).map(|&(_, j)| j);
            insts.clear();
            insts.extend(
                func.layout
                    .block_insts(b)
                    .filter(|&inst| Some(inst) != onward),
            );
            // Post-invariant: `a`'s placed instructions but its jump, then each merged
            // block's but the jump to the next, then the last one's terminator: the one
            // path's order.
            for &inst in &insts {
                func.layout.remove_inst(inst);
                func.layout.insert_inst(inst, InsertPoint::AtEnd(a));
            }
            func.layout.remove_block(b);
            merged += 1;
        }
    }
    merged
}
