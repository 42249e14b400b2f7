//! Loop-invariant code motion: pure instructions whose operands are all defined outside a
//! loop move to the loop's preheader.
//!
//! Constants never move by themselves (the backend folds them into immediates or makes them
//! where they are used; hoisting them would only lengthen live ranges): an instruction that
//! moves reads a copy of an in-loop constant operand made in the preheader.
//!
//! Register budget. A moved instruction's result is live across the whole loop it leaves,
//! so each loop takes at most [`LOOP_REGISTERS`] values per register class: the values its
//! header carries (its parameters) and those moved to its preheader. An instruction leaves
//! a loop only if every loop it leaves has room, and its result takes a place in the
//! outermost one. A loop that already carries more values than registers gets nothing
//! moved out of it: each moved value would be spilled and reloaded inside, costing more
//! than recomputing it (machine-generated state machines carry hundreds of values around
//! one loop; moving their per-state comparisons out multiplied the values live in it).
//! Movable loads are the exception: they move regardless (taking their place all the
//! same), since a spilled one is reloaded at the cost of the load it replaced, and the
//! addresses they read (a heap's base, a table's) are few and used throughout the loop.
//!
//! Contract. Requires a function (tombstones and queued insertions are fine: a queued
//! instruction counts as in the block it goes to, visited after that block's placed ones, and
//! moves like them) with its control-flow graph and dominator tree,
//! which may predate compactions that kept every block and edge (only their block queries
//! are used; instruction numbers are read from the layout). A
//! loop's preheader is its header's only predecessor outside the loop, when that block ends
//! in a `jump` (so it runs exactly when the loop is entered); the pipeline gives every loop
//! one first (`preheaders.rs`), and a loop without one is left alone. An instruction moves when it is pure (no
//! effects, no trap, no memory access, no frame value: `gvn::is_numberable`) or a load of
//! memory that never changes and that is valid wherever its address is defined
//! (`loads::is_movable_load`: `readonly notrap can_move`), and every
//! operand is defined outside the loop, or by an instruction already moved out of it; it
//! goes to the preheader of the outermost such loop, before the terminator, after the
//! instructions moved there earlier, unless an equal one (same opcode, resolved operands,
//! immediates and type) already moved there: then it is deleted and its results alias that
//! one's. Blocks are visited in reverse postorder, so a moved
//! instruction's operands are placed before it. Maintains SSA dominance (a preheader
//! dominates its loop), behavior (the moved instruction cannot trap or have effects, so
//! running it when the loop's body would not have is unobservable; a movable load reads
//! memory that cannot change and cannot trap) and types; [`hoist_loop_invariants`] leaves
//! the layout compact, the pipeline's variant leaves the moves queued for its compaction.
//! Cost: O(instructions × loop depth) after the loop forest, plus sorting the q queued
//! instructions by block (O(q log q), q at most the instructions) and a binary search per
//! loop block; the budgets are O(blocks' parameters + loops).

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::compact::CompactMemory;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::entity::SecondaryMap;
use kestrel_ir::layout::InsertPoint;
use rustc_hash::FxHashMap;

use kestrel_ir::{Block, Function, Inst, InstructionData, Type, Value, ValueDef};

use crate::gvn::{is_constant, is_numberable};
use crate::loads::is_movable_load;
use crate::loops::LoopForest;

/// How many values of one register class a loop may carry and have moved out of it:
/// the general registers x86-64 leaves to the allocator (15) less a few for the loop's own
/// temporaries. The smallest register file Kestrel targets sets it, so it is conservative
/// for AArch64.
pub const LOOP_REGISTERS: usize = 12;

/// The values each loop carries or has taken, per register class (integers, floats).
struct RegisterBudget {
    used: Vec<[usize; 2]>,
}

impl RegisterBudget {
    /// Each loop starts with its header's parameters.
    fn new(func: &Function, forest: &LoopForest) -> Self {
        let used = forest
            .loops
            .iter()
            .map(|l| {
                let mut used = [0, 0];
                for &p in func.dfg.block_params(l.header) {
                    used[class(func.dfg.value_type(p))] += 1;
                }
                used
            })
            .collect();
        RegisterBudget { used }
    }

    /// Whether loop `l` can carry `values` more (counted per class) in each class.
    fn has_room(&self, l: usize, values: [usize; 2]) -> bool {
        (0..2).all(|c| values[c] == 0 || self.used[l][c] + values[c] <= LOOP_REGISTERS)
    }

    fn take(&mut self, l: usize, values: [usize; 2]) {
        for (used, more) in self.used[l].iter_mut().zip(values) {
            *used += more;
        }
    }
}

/// The register class of a value of type `ty`: 1 for floats, 0 otherwise.
fn class(ty: Type) -> usize {
    usize::from(ty.is_float())
}

/// How many results of `inst` each register class holds (an overflow add has two).
fn results_by_class(func: &Function, inst: Inst) -> [usize; 2] {
    let mut values = [0, 0];
    for &r in func.dfg.inst_results(inst) {
        values[class(func.dfg.value_type(r))] += 1;
    }
    values
}

/// The preheader of each loop, if it has one.
fn preheaders(func: &Function, cfg: &ControlFlowGraph, forest: &LoopForest) -> Vec<Option<Block>> {
    let preheader = |l: usize| {
        let header = forest.loops[l].header;
        let mut outside = cfg
            .predecessors(header)
            .iter()
            .filter(|p| !forest.contains(l, p.block));
        let p = outside.next()?.block;
        let end = func.layout.last_inst(p)?;
        let jumps = matches!(func.dfg.inst(end), InstructionData::Jump { .. });
        (outside.next().is_none() && jumps).then_some(p)
    };
    (0..forest.loops.len()).map(preheader).collect()
}

/// Hoist loop-invariant instructions of `func`, whose control-flow graph is `cfg` and
/// dominator tree `domtree`; returns how many moved.
pub fn hoist_loop_invariants(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
) -> usize {
    let moved = hoist_loop_invariants_in(func, cfg, domtree);
    if !func.layout.is_compact() {
        func.compact_in(&mut CompactMemory::default());
    }
    moved
}

/// [`hoist_loop_invariants`] without compacting: the moves stay queued in the layout (and
/// merged results aliased) for the caller's compaction.
pub(crate) fn hoist_loop_invariants_in(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
) -> usize {
    let forest = LoopForest::compute(cfg, domtree);
    if forest.loops.is_empty() {
        return 0;
    }
    let preheader = preheaders(func, cfg, &forest);
    let mut budget = RegisterBudget::new(func, &forest);
    // Where each moved or copied instruction now lives.
    let mut moved_to: SecondaryMap<Inst, Option<Block>> = SecondaryMap::new();
    // The copy of each constant made in each preheader.
    let mut copies: FxHashMap<(Block, InstructionData, Type), Value> = FxHashMap::default();
    // The instructions moved to each preheader, by data (operands resolved) and type.
    let mut hoisted: FxHashMap<(Block, InstructionData, Type), Inst> = FxHashMap::default();
    // Instructions an earlier pass queued (if-conversion's, before a block's terminator)
    // belong to the block they go to, and are visited after its placed instructions. A placed
    // instruction of that block visited before one that it reads finds the operand in the
    // loop and stays: only conservative.
    let mut queued: Vec<(Block, Inst, usize)> = Vec::new();
    for (k, at, inst) in func.layout.queued_insts() {
        let block = match at {
            InsertPoint::Before(anchor) => func.layout.inst_block(anchor),
            InsertPoint::AtEnd(block) => Some(block),
        };
        if let Some(block) = block {
            moved_to[inst] = Some(block);
            queued.push((block, inst, k));
        }
    }
    queued.sort_by_key(|&(block, _, k)| (block, k));
    let mut moved = 0;
    // One block's instructions (with the queue position of a queued one), and one
    // instruction's operands: buffers for the whole walk.
    let mut insts: Vec<(Inst, Option<usize>)> = Vec::new();
    let mut operands: Vec<(Option<Block>, Option<InstructionData>)> = Vec::new();
    for &b in domtree.rpo() {
        if forest.innermost(b).is_none() {
            continue;
        }
        insts.clear();
        insts.extend(func.layout.block_insts(b).map(|inst| (inst, None)));
        let first = queued.partition_point(|q| q.0 < b);
        let of_b = queued[first..].iter().take_while(|q| q.0 == b);
        insts.extend(of_b.map(|&(_, inst, k)| (inst, Some(k))));
        for &(inst, queued_at) in &insts {
            let data = *func.dfg.inst(inst);
            let movable = is_numberable(&data) || is_movable_load(&data);
            if !movable || is_constant(&data) || func.dfg.inst_results(inst).is_empty() {
                continue;
            }
            // Each operand's block (after earlier moves) and, for a constant, its data.
            operands.clear();
            operands.extend(data.fixed_args().iter().map(|&v| {
                match func.dfg.value_def(func.dfg.resolve(v)) {
                    ValueDef::Result(i, _) => {
                        let at = moved_to[i].or(func.layout.inst_block(i));
                        let def = *func.dfg.inst(i);
                        (at, is_constant(&def).then_some(def))
                    }
                    ValueDef::Param(block, _) => (Some(block), None),
                    _ => (None, None),
                }
            }));
            let carried = results_by_class(func, inst);
            let mut target = None;
            let mut l = forest.innermost(b);
            while let Some(cur) = l {
                let Some(p) = preheader[cur] else { break };
                let invariant = operands.iter().all(|&(at, constant)| {
                    constant.is_some() || at.is_some_and(|d| !forest.contains(cur, d))
                });
                let room = is_movable_load(&data) || budget.has_room(cur, carried);
                if !invariant || !room {
                    break;
                }
                target = Some((p, cur));
                l = forest.loops[cur].parent;
            }
            let Some((p, outermost)) = target else {
                continue;
            };
            let end = func
                .layout
                .last_inst(p)
                .expect("a preheader ends in its jump");
            // Constants inside the loops left stay there (the backend folds or
            // rematerializes them); the moved instruction reads a copy made in the
            // preheader, queued before it.
            for (k, &(at, constant)) in operands.iter().enumerate() {
                let Some(def) = constant else { continue };
                if !at.is_some_and(|d| forest.contains(outermost, d)) {
                    continue;
                }
                let ty = func.dfg.value_type(data.fixed_args()[k]);
                let copy = *copies.entry((p, def, ty)).or_insert_with(|| {
                    let ctrl = if matches!(def, InstructionData::UnaryImm { .. }) {
                        ty
                    } else {
                        Type::INVALID
                    };
                    let c = func.make_inst(def, ctrl);
                    func.layout.insert_inst(c, InsertPoint::Before(end));
                    moved_to[c] = Some(p);
                    func.dfg.first_result(c).expect("a constant has a result")
                });
                func.dfg.inst_mut(inst).fixed_args_mut()[k] = copy;
            }
            // Equal instructions from different blocks of the loop (which dominator-scoped
            // GVN could not merge) meet in the preheader: keep the first, so the loop does
            // not carry several registers of one value.
            let mut resolved = *func.dfg.inst(inst);
            for a in resolved.fixed_args_mut() {
                *a = func.dfg.resolve(*a);
            }
            *func.dfg.inst_mut(inst) = resolved;
            let results = func.dfg.inst_results(inst);
            let key = (p, *func.dfg.inst(inst), func.dfg.value_type(results[0]));
            if let Some(&first) = hoisted.get(&key) {
                // Post-invariant: `first` sits in the preheader before every use of `inst`'s
                // results (in the loop, or moved to the preheader after it), and computes
                // the same values (pure, or a load of unchanging memory at that address).
                let count = results.len();
                for k in 0..count {
                    let (r, to) = (
                        func.dfg.inst_results(inst)[k],
                        func.dfg.inst_results(first)[k],
                    );
                    let aliased = func.dfg.change_to_alias(r, to);
                    debug_assert!(aliased, "equal instructions have equal result types");
                }
                unplace(func, inst, queued_at);
                moved += 1;
                continue;
            }
            hoisted.insert(key, inst);
            // Post-invariant: the outermost loop left counts the values it now carries.
            budget.take(outermost, carried);
            // Post-invariant: queued before the preheader's terminator in visiting order,
            // after its operands (outside the loop, moved earlier, or copies just queued).
            unplace(func, inst, queued_at);
            func.layout.insert_inst(inst, InsertPoint::Before(end));
            moved_to[inst] = Some(p);
            moved += 1;
        }
    }
    moved
}

/// Take `inst` out of its place: a tombstone if it is placed, its queued insertion
/// withdrawn if it is queued (`queued_at`).
fn unplace(func: &mut Function, inst: Inst, queued_at: Option<usize>) {
    match queued_at {
        Some(k) => func.layout.withdraw_queued(k),
        None => func.layout.remove_inst(inst),
    }
}
