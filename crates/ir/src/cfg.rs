//! The control-flow graph: successors and predecessors of every block.
//!
//! Contract. Requires nothing beyond a [`Function`] a parser or builder could produce: entity
//! references may dangle and the layout may hold queued edits. Guarantees:
//! - only blocks in the layout are nodes; an edge `a -> b` exists when the *last* placed
//!   instruction of `a` is a branch (`jump`, `brif`, `br_table`, the latter through its jump
//!   table) naming `b`, and `b` is a valid block in the layout. Dangling destinations, missing
//!   jump tables and branches in the middle of a block are ignored here (the verifier reports
//!   them);
//! - each edge appears once however many times the branch names the destination (`brif v,
//!   block1, block1` gives one edge), successors in the order the branch first names them,
//!   predecessors in layout order of the predecessor block;
//! - queries on any block number, valid or not, answer (an empty list) instead of panicking.
//!
//! Storage is dense: both directions are compressed-sparse-row arrays indexed by block number,
//! built with one counting sort; no hashing. The graph is a snapshot: recompute it after
//! editing branches.
//!
//! Cost: O(blocks + edges) to build; queries are slice lookups.

use crate::entity::{Block, EntityRef, Inst};
use crate::function::Function;
use crate::instructions::InstructionData;

/// A predecessor edge: the block and its branch instruction.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct BlockPredecessor {
    pub block: Block,
    pub inst: Inst,
}

/// Successors and predecessors of every block, as compressed rows.
#[derive(Clone, Debug, Default)]
pub struct ControlFlowGraph {
    /// `succs[succ_start[b]..succ_start[b + 1]]` are the successors of block `b`.
    succ_start: Vec<u32>,
    succs: Vec<Block>,
    /// `preds[pred_start[b]..pred_start[b + 1]]` are the predecessors of block `b`.
    pred_start: Vec<u32>,
    preds: Vec<BlockPredecessor>,
    /// Working memory of [`ControlFlowGraph::compute_into`], kept for the next function.
    edges: Vec<(Block, Block, Inst)>,
    seen: Vec<u32>,
    next: Vec<u32>,
}

impl ControlFlowGraph {
    /// Compute the graph of `func` (see the module contract).
    pub fn compute(func: &Function) -> Self {
        let mut cfg = ControlFlowGraph::default();
        cfg.compute_into(func);
        cfg
    }

    /// [`ControlFlowGraph::compute`] into `self`, reusing its memory.
    pub fn compute_into(&mut self, func: &Function) {
        let num_blocks = func.dfg.num_blocks();
        // Edges in layout order of their source block: (from, to, branch).
        let edges = &mut self.edges;
        edges.clear();
        // `seen[b] == stamp` when `b` is already a successor of the current block.
        let seen = &mut self.seen;
        seen.clear();
        seen.resize(num_blocks, 0);
        let mut stamp = 0u32;
        for &b in func.layout.blocks() {
            if b.index() >= num_blocks {
                continue;
            }
            let Some(inst) = func.layout.last_inst(b) else {
                continue;
            };
            if !func.dfg.inst_is_valid(inst) || !func.dfg.inst(inst).opcode().is_branch() {
                continue;
            }
            stamp += 1;
            for_each_destination(func, inst, |dest| {
                let ok = dest.index() < num_blocks && func.layout.is_block_inserted(dest);
                if ok && seen[dest.index()] != stamp {
                    seen[dest.index()] = stamp;
                    edges.push((b, dest, inst));
                }
            });
        }

        // Counting sort by source, then by destination; both keep layout order within a row.
        row_starts(&mut self.succ_start, num_blocks, edges.iter().map(|e| e.0));
        row_starts(&mut self.pred_start, num_blocks, edges.iter().map(|e| e.1));
        self.succs.clear();
        self.succs.resize(edges.len(), Block::from_u32(0));
        let no_pred = BlockPredecessor {
            block: Block::from_u32(0),
            inst: Inst::from_u32(0),
        };
        self.preds.clear();
        self.preds.resize(edges.len(), no_pred);
        // `next[b]`: the next free place in `b`'s row; rows fill in the edges' order.
        let next = &mut self.next;
        next.clone_from(&self.succ_start);
        for &(from, to, _) in edges.iter() {
            let s = &mut next[from.index()];
            self.succs[*s as usize] = to;
            *s += 1;
        }
        next.clone_from(&self.pred_start);
        for &(from, to, inst) in edges.iter() {
            let p = &mut next[to.index()];
            self.preds[*p as usize] = BlockPredecessor { block: from, inst };
            *p += 1;
        }
    }

    /// The distinct successors of `b`.
    pub fn successors(&self, b: Block) -> &[Block] {
        row(&self.succ_start, &self.succs, b)
    }

    /// The predecessor edges of `b`.
    pub fn predecessors(&self, b: Block) -> &[BlockPredecessor] {
        row(&self.pred_start, &self.preds, b)
    }

    /// Number of block numbers the graph covers.
    pub fn num_blocks(&self) -> usize {
        self.succ_start.len().saturating_sub(1)
    }
}

/// Call `f` on every destination block named by branch `inst`, with repeats, skipping a
/// `br_table` (or `try_call`) whose table does not exist.
pub(crate) fn for_each_destination(func: &Function, inst: Inst, mut f: impl FnMut(Block)) {
    match *func.dfg.inst(inst) {
        InstructionData::BranchTable { table, .. } => {
            if let Some(jt) = func.jump_tables.get(table) {
                jt.all_branches().for_each(|c| f(c.block));
            }
        }
        InstructionData::TryCall { table, .. } | InstructionData::TryCallIndirect { table, .. } => {
            if let Some(et) = func.exception_tables.get(table) {
                et.all_branches().for_each(|c| f(c.block));
            }
        }
        ref data => data.branch_destinations().iter().for_each(|c| f(c.block)),
    }
}

/// Row offsets (length `n + 1`) for a counting sort of `keys`, into `start`.
fn row_starts(start: &mut Vec<u32>, n: usize, keys: impl Iterator<Item = Block>) {
    start.clear();
    start.resize(n + 1, 0);
    for k in keys {
        start[k.index() + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
}

fn row<'a, T>(start: &[u32], items: &'a [T], b: Block) -> &'a [T] {
    match (start.get(b.index()), start.get(b.index() + 1)) {
        (Some(&lo), Some(&hi)) => &items[lo as usize..hi as usize],
        _ => &[],
    }
}
