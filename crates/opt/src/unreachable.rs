//! Removal of the blocks no path from the entry reaches (once decided branches dropped their
//! edges).
//!
//! Contract. Requires the set of reachable blocks of the function's current edges (a
//! dominator tree computed from them, or [`remove_blocks`]'s predicate). Deletes every
//! unreachable block with its instructions. Maintains SSA: a value defined in an
//! unreachable block is used only in unreachable blocks (its definition dominated every use
//! before edges were removed, and removing edges keeps reachable blocks reachable only along
//! paths that existed before). Leaves the layout with queued removals (compaction applies
//! them). A block already removed (queued, with no placed instruction left) is skipped, so
//! the pass may run again before compaction. Cost: O(blocks + instructions of the removed
//! blocks), plus compaction's.

use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::{Block, Function, Inst};

/// Delete the unreachable blocks of `func`; returns how many.
pub fn remove_unreachable_blocks(func: &mut Function, domtree: &DominatorTree) -> usize {
    remove_blocks(func, |b| !domtree.is_reachable(b))
}

/// Delete the blocks of `func` for which `unreachable` holds (it must hold exactly for the
/// blocks no path from the entry reaches); returns how many.
pub(crate) fn remove_blocks(func: &mut Function, unreachable: impl Fn(Block) -> bool) -> usize {
    let dead: Vec<Block> = func
        .layout
        .blocks()
        .iter()
        .copied()
        .filter(|&b| unreachable(b) && func.layout.first_inst(b).is_some())
        .collect();
    for &b in &dead {
        let insts: Vec<Inst> = func.layout.block_insts(b).collect();
        for inst in insts {
            func.layout.remove_inst(inst);
            func.dfg.detach_results(inst);
        }
        func.layout.remove_block(b);
    }
    dead.len()
}
