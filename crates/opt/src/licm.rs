//! Loop-invariant code motion: pure instructions whose operands are all defined outside a
//! loop move to the loop's preheader.
//!
//! Contract. Requires a compact function with its control-flow graph and dominator tree,
//! which may predate compactions that kept every block and edge (only their block queries
//! are used; instruction numbers are read from the layout). A
//! loop's preheader is its header's only predecessor outside the loop, when that block ends
//! in a `jump` (so it runs exactly when the loop is entered); loops without one are left
//! alone (making preheaders is a later step). An instruction moves when it is pure (no
//! effects, no trap, no memory access, no frame value: `gvn::is_numberable`) and every
//! operand is defined outside the loop, or by an instruction already moved out of it; it
//! goes to the preheader of the outermost such loop, before the terminator, after the
//! instructions moved there earlier. Blocks are visited in reverse postorder, so a moved
//! instruction's operands are placed before it. Maintains SSA dominance (a preheader
//! dominates its loop), behavior (the moved instruction cannot trap or have effects, so
//! running it when the loop's body would not have is unobservable) and types; leaves the
//! layout compact. Cost: O(instructions × loop depth) after the loop forest.

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::entity::SecondaryMap;
use kestrel_ir::layout::InsertPoint;
use kestrel_ir::{Block, Function, Inst, InstructionData, ValueDef};

use crate::gvn::is_numberable;
use crate::loops::LoopForest;

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
    let forest = LoopForest::compute(cfg, domtree);
    if forest.loops.is_empty() {
        return 0;
    }
    let preheader = preheaders(func, cfg, &forest);
    // Where each moved instruction now lives.
    let mut moved_to: SecondaryMap<Inst, Option<Block>> = SecondaryMap::new();
    let mut moves: Vec<(Inst, Block)> = Vec::new();
    for &b in domtree.rpo() {
        if forest.innermost(b).is_none() {
            continue;
        }
        for inst in func.layout.block_insts(b) {
            let data = func.dfg.inst(inst);
            if !is_numberable(data) || func.dfg.inst_results(inst).is_empty() {
                continue;
            }
            // The block each operand is defined in, after earlier moves.
            let def_block = |v| match func.dfg.value_def(func.dfg.resolve(v)) {
                ValueDef::Result(i, _) => moved_to[i].or(func.layout.inst_block(i)),
                ValueDef::Param(block, _) => Some(block),
                _ => None,
            };
            let operands: Vec<Option<Block>> =
                data.fixed_args().iter().map(|&v| def_block(v)).collect();
            let mut target = None;
            let mut l = forest.innermost(b);
            while let Some(cur) = l {
                let Some(p) = preheader[cur] else { break };
                let invariant = operands
                    .iter()
                    .all(|d| d.is_some_and(|d| !forest.contains(cur, d)));
                if !invariant {
                    break;
                }
                target = Some(p);
                l = forest.loops[cur].parent;
            }
            if let Some(p) = target {
                moved_to[inst] = Some(p);
                moves.push((inst, p));
            }
        }
    }
    // Post-invariant: each moved instruction is queued before its preheader's terminator in
    // visiting order, so its operands (outside the loop, or moved earlier) still come first.
    for &(inst, p) in &moves {
        let end = func
            .layout
            .last_inst(p)
            .expect("a preheader ends in its jump");
        func.layout.remove_inst(inst);
        func.layout.insert_inst(inst, InsertPoint::Before(end));
    }
    if !moves.is_empty() {
        func.compact();
    }
    moves.len()
}
