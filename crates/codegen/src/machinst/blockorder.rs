//! `BlockLoweringOrder`: the final block layout, chosen before lowering (seed 000).
//!
//! # Contract
//!
//! Requires a verified [`Function`] (every branch destination is a block in the layout) whose
//! layout has no queued edits (they are invisible until `Function::compact`).
//! Computes, in one pass over the blocks, the loop forest ([`loops`]) and one depth-first
//! search ([`layout`]), the order in which lowering emits blocks; nothing reorders the code
//! afterwards.
//!
//! The search runs over a *virtual* graph that is never built: its nodes are the IR blocks
//! plus one *edge block* per critical edge, and its successor function is
//! "block `b`'s `i`-th branch destination, through its edge block if that edge is critical".
//! A destination that only jumps on, without arguments (no parameters, not the entry), is
//! *bypassed*: the slot goes to the end of that chain of jumps instead, so the empty block
//! is never reached (unless the chaos control skips [`Decision::EmptyBlockBypass`] for it;
//! a cycle of such blocks keeps one).
//! An edge is identified by its branch slot (`brif v, block1, block1` has two edges), and is
//! critical when its source has more than one slot and its destination more than one incoming
//! slot (the function entry counts as one). Every other edge needs no block of its own, since
//! fixup code for it can go at the end of its source or the start of its destination.
//!
//! Guarantees:
//! - the order lists each block reachable from the entry in the virtual graph exactly once
//!   (unreachable and bypassed blocks are left out, so never lowered), the entry first, and
//!   one edge block per critical edge out of a reachable block;
//! - it is the reverse postorder of the search, which visits a block's destinations so that
//!   its first destination tends to come right after it; so without cold blocks and rotated
//!   loops every block comes after its dominators;
//! - the search is loop-aware unless the chaos control skips [`Decision::LoopLayout`]: a
//!   loop's blocks (nested loops included) are contiguous and start at its header, and the
//!   successors that leave a loop come after all of it, so inside a loop the successor that
//!   stays in it follows its block and the branch peephole turns the exit into the taken
//!   side. A back edge `b -> h` of the lowered order then has `h <= b` with everything in
//!   between in the loop, which is what the register allocator's loop depths assume.
//!   Irreducible regions are laid out conservatively (see [`loops`]);
//! - unless the chaos control skips [`Decision::LoopRotation`], a loop with one back edge
//!   whose header exits it is *rotated* (see [`layout`]): its header comes last, right after
//!   the latch that falls into it, and its branch back to the loop's top is the one backward
//!   edge, so the allocator's loop depths still cover exactly the loop. The loop's other
//!   blocks then precede their dominator, the header: the register allocator accepts any
//!   order, and lowering counts value uses before it walks the blocks;
//! - blocks marked cold (`dfg.block_data(b).cold`), and edge blocks into or out of them, are
//!   moved to the end keeping their relative order, unless the chaos control skips
//!   [`Decision::ColdBlockSinking`]. A hot block can then come after a cold block that
//!   dominates it, so lowering must count value uses before it walks the blocks;
//! - successor lists (per lowered block, in branch-slot order, in lowered indices) and
//!   predecessor lists are recorded as the order is built; the lowered graph has no critical
//!   edges, and an edge block has exactly one predecessor and one successor.
//!
//! Cost: O(blocks + edges) (times an inverse-Ackermann factor in the loop forest's union-find):
//! one pass to find the slots, one to follow them past bypassed blocks (each block resolved
//! once) and count incoming slots, the loop forest, one depth-first search, one stable
//! partition for cold blocks. When the reachable blocks form a chain without cold blocks
//! (one block, or blocks joined by jumps, each entered from its predecessor alone: most
//! small functions), the order is the chain, found by following it, which is what the
//! search would find; the loop forest and the search are skipped.

use kestrel_ir::entity::EntityRef;
use kestrel_ir::{Block, Function, Opcode};

use crate::chaos::{Chaos, Decision};

mod layout;
mod loops;

use layout::LayoutSearch;
use loops::LoopForest;

/// A block of the lowered code: an IR block, or the block of a split critical edge.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum LoweredBlock {
    /// An IR block.
    Orig(Block),
    /// The critical edge `from`'s destination slot `succ_index`, going to `to`.
    Edge { from: Block, succ_index: u32, to: Block },
}

impl LoweredBlock {
    /// The IR block, if this is not an edge block.
    pub fn orig_block(self) -> Option<Block> {
        match self {
            LoweredBlock::Orig(b) => Some(b),
            LoweredBlock::Edge { .. } => None,
        }
    }
}

/// The index of a block in the lowered order.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct LoweredIndex(u32);

impl LoweredIndex {
    /// The index of the `index`-th lowered block.
    pub fn new(index: usize) -> Self {
        LoweredIndex(u32::try_from(index).expect("lowered block index fits in u32"))
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn as_u32(self) -> u32 {
        self.0
    }
}

/// The final block order with its successor and predecessor lists.
#[derive(Clone, Debug, Default)]
pub struct BlockLoweringOrder {
    order: Vec<LoweredBlock>,
    /// `succs[succ_start[i]..succ_start[i + 1]]` are lowered block `i`'s successors.
    succ_start: Vec<u32>,
    succs: Vec<LoweredIndex>,
    /// `preds[pred_start[i]..pred_start[i + 1]]` are its predecessors.
    pred_start: Vec<u32>,
    preds: Vec<LoweredIndex>,
    cold: Vec<bool>,
    /// Lowered index of each IR block, by block number (`None`: unreachable).
    orig_index: Vec<Option<LoweredIndex>>,
}

/// The branch slots of every block, as compressed rows: slot `s` of block `b` is
/// `to[start[b] + s]`, a destination with empty blocks bypassed (see [`Slots::compute`]).
#[derive(Default)]
struct Slots {
    start: Vec<u32>,
    to: Vec<Block>,
    /// Incoming slots per block (plus one for the entry).
    incoming: Vec<u32>,
    /// Per block, where a branch to it really goes (itself unless it is bypassed).
    forward: Vec<Block>,
    /// Per block, whether `forward` is final for it yet (see `bypass`).
    resolved: Vec<Resolved>,
    /// The bypassable blocks met on the chain being followed.
    chain: Vec<Block>,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Resolved {
    No,
    OnChain,
    Yes,
}

impl Slots {
    /// Refills the rows for `func`, keeping the buffers.
    ///
    /// A block other than the entry whose only instruction is `jump` without arguments,
    /// and which has no parameters, does nothing: a branch to it goes straight to its
    /// jump's destination (followed through a chain of such blocks), and the block itself
    /// is left unreachable, unless the chaos control skips [`Decision::EmptyBlockBypass`]
    /// for it. A cycle of such blocks (an empty infinite loop) keeps the block at which the
    /// first chain followed into it closes (see `bypass`).
    /// Cost: O(blocks + slots); each block's destination is resolved once.
    fn compute(&mut self, func: &Function, chaos: &mut Chaos) {
        let n = func.dfg.num_blocks();
        let Slots {
            start,
            to,
            incoming,
            forward,
            resolved,
            chain,
        } = self;
        start.clear();
        to.clear();
        // Most blocks end in a jump or a two-way branch.
        to.reserve(2 * n);
        forward.clear();
        forward.extend((0..n).map(Block::new));
        resolved.clear();
        resolved.resize(n, Resolved::Yes);
        let entry = func.layout.entry_block();
        for i in 0..n {
            start.push(to.len() as u32);
            let b = Block::new(i);
            if !func.layout.is_block_inserted(b) {
                continue;
            }
            let Some(inst) = func.layout.last_inst(b) else {
                continue;
            };
            if !func.dfg.inst(inst).opcode().is_branch() {
                continue;
            }
            for k in 0..func.num_branch_destinations(inst) {
                let call = func.branch_destination(inst, k);
                assert!(
                    func.layout.is_block_inserted(call.block),
                    "{b} branches to {}, which is not in the layout",
                    call.block
                );
                to.push(call.block);
            }
            let bypassable = Some(b) != entry
                && func.layout.first_inst(b) == Some(inst)
                && func.dfg.inst(inst).opcode() == Opcode::Jump
                && func.dfg.block_params(b).is_empty()
                && func
                    .dfg
                    .block_call_args(&func.branch_destination(inst, 0))
                    .is_empty();
            if bypassable && !chaos.should_skip(Decision::EmptyBlockBypass) {
                forward[i] = func.branch_destination(inst, 0).block;
                resolved[i] = Resolved::No;
            }
        }
        start.push(to.len() as u32);
        // Follow each slot's destination to the end of its chain of bypassed blocks.
        incoming.clear();
        incoming.resize(n, 0);
        for dest in to.iter_mut() {
            *dest = bypass(*dest, forward, resolved, chain);
            incoming[dest.index()] += 1;
        }
        if let Some(entry) = entry {
            incoming[entry.index()] += 1;
        }
    }

    #[inline]
    fn range(&self, b: Block) -> std::ops::Range<usize> {
        self.start[b.index()] as usize..self.start[b.index() + 1] as usize
    }

    /// Is global slot `s`, out of `b`, a critical edge?
    #[inline]
    fn is_critical(&self, b: Block, s: usize) -> bool {
        self.range(b).len() > 1 && self.incoming[self.to[s].index()] > 1
    }
}

/// Where a branch to `b` goes: the end of the chain of bypassed blocks from `b` (`b` itself
/// if it is not bypassed). Every block on the chain is resolved to that end on the way, so
/// each is followed once over all calls. A chain that comes back to one of its own blocks
/// (a cycle of empty blocks) ends at that block, which then stays (its jump, followed
/// through the cycle, comes back to itself).
fn bypass(
    b: Block,
    forward: &mut [Block],
    resolved: &mut [Resolved],
    chain: &mut Vec<Block>,
) -> Block {
    chain.clear();
    let mut at = b;
    let end = loop {
        match resolved[at.index()] {
            Resolved::Yes => break forward[at.index()],
            Resolved::OnChain => break at,
            Resolved::No => {
                resolved[at.index()] = Resolved::OnChain;
                chain.push(at);
                at = forward[at.index()];
            }
        }
    };
    // Post-invariant: each block of the chain leads to `end`; `end` itself, when it closed
    // a cycle, is resolved to itself (it is kept).
    for &c in chain.iter() {
        forward[c.index()] = if c == end { c } else { end };
        resolved[c.index()] = Resolved::Yes;
    }
    end
}

/// Whether the blocks reachable from `entry` form a chain free of cold blocks: each has one
/// branch slot, to a block entered from it alone, and the last branches nowhere (a
/// function of one block, or straight-line blocks joined by jumps: most small functions).
/// If so, `order` holds the chain. O(chain length): the incoming counts rule out
/// revisiting a block (the entry counts one incoming slot of its own).
fn chain_from(func: &Function, slots: &Slots, entry: Block, order: &mut Vec<Node>) -> bool {
    order.clear();
    let mut b = entry;
    loop {
        if func.dfg.block_data(b).cold {
            return false;
        }
        order.push(Node::Block(b));
        let range = slots.range(b);
        match range.len() {
            0 => return true,
            1 if slots.incoming[slots.to[range.start].index()] == 1 => b = slots.to[range.start],
            _ => return false,
        }
    }
}

/// Working memory of [`BlockLoweringOrder::rebuild`], kept between functions by a
/// compile context (every buffer is cleared or refilled before use).
#[derive(Default)]
pub(crate) struct OrderScratch {
    slots: Slots,
    loops: LoopForest,
    search: LayoutSearch,
    order: Vec<Node>,
    sunk: Vec<Node>,
    edge_index: Vec<LoweredIndex>,
}

/// A node of the virtual graph: an IR block, or the edge block of global slot `s`.
#[derive(Copy, Clone, Debug)]
enum Node {
    Block(Block),
    Edge(Block, usize),
}

impl BlockLoweringOrder {
    /// Counted work of the last [`BlockLoweringOrder::rebuild`], by the sizes its passes
    /// walk (each visits every IR block and slot a bounded number of times, see the module's
    /// Cost): IR blocks, lowered blocks, and their successor and predecessor lists.
    pub fn work(&self) -> u64 {
        (self.orig_index.len() + self.order.len() + self.succs.len() + self.preds.len()) as u64
    }

    /// Compute the order for `func` (see the module contract).
    pub fn new(func: &Function, chaos: &mut Chaos) -> Self {
        let mut order = BlockLoweringOrder::default();
        order.rebuild(func, chaos, &mut OrderScratch::default());
        order
    }

    /// [`BlockLoweringOrder::new`] into `self`, reusing its buffers and `scratch`'s.
    pub(crate) fn rebuild(
        &mut self,
        func: &Function,
        chaos: &mut Chaos,
        scratch: &mut OrderScratch,
    ) {
        scratch.slots.compute(func, chaos);
        let OrderScratch {
            slots,
            loops,
            search,
            order,
            sunk,
            edge_index,
        } = scratch;
        let Some(entry) = func.layout.entry_block() else {
            order.clear();
            self.cold.clear();
            self.index(func, slots, order, edge_index);
            return;
        };
        if chain_from(func, slots, entry, order) {
            // The reachable blocks form a chain: the order is the chain (no loop, no
            // critical edge, nothing cold to sink), as the search would find it.
            self.cold.clear();
            self.cold.resize(order.len(), false);
            self.index(func, slots, order, edge_index);
            return;
        }
        let loop_aware = !chaos.should_skip(Decision::LoopLayout);
        if loop_aware {
            loops.compute(slots, entry);
        }
        let rotate = loop_aware && !chaos.should_skip(Decision::LoopRotation);
        search.run(slots, loop_aware.then_some(&*loops), entry, rotate, order);
        order.reverse();

        let is_cold = |node: &Node| match *node {
            Node::Block(b) => func.dfg.block_data(b).cold,
            Node::Edge(from, s) => {
                func.dfg.block_data(from).cold || func.dfg.block_data(slots.to[s]).cold
            }
        };
        let cold = &mut self.cold;
        cold.clear();
        cold.extend(order.iter().map(is_cold));
        if cold.iter().any(|&c| c) && !chaos.should_skip(Decision::ColdBlockSinking) {
            // Stable partition: hot blocks keep their order, then the cold ones.
            sunk.clear();
            sunk.extend(order.iter().copied().filter(is_cold));
            order.retain(|n| !is_cold(n));
            cold.clear();
            cold.resize(order.len(), false);
            cold.resize(order.len() + sunk.len(), true);
            order.append(sunk);
        }
        self.index(func, slots, order, edge_index);
    }

    /// Number the nodes of `order` and record successors and predecessors (every list of
    /// `self` but `cold` is refilled here).
    fn index(
        &mut self,
        func: &Function,
        slots: &Slots,
        order: &[Node],
        edge_index: &mut Vec<LoweredIndex>,
    ) {
        let BlockLoweringOrder {
            order: lowered,
            succ_start,
            succs,
            pred_start,
            preds,
            cold: _,
            orig_index,
        } = self;
        orig_index.clear();
        orig_index.resize(func.dfg.num_blocks(), None);
        edge_index.clear();
        edge_index.resize(slots.to.len(), LoweredIndex(u32::MAX));
        for (i, node) in order.iter().enumerate() {
            let li = LoweredIndex(i as u32);
            match *node {
                Node::Block(b) => orig_index[b.index()] = Some(li),
                Node::Edge(_, s) => edge_index[s] = li,
            }
        }
        let reached = |b: Block| orig_index[b.index()].expect("successor of a reached block");
        succ_start.clear();
        succs.clear();
        lowered.clear();
        for node in order {
            succ_start.push(succs.len() as u32);
            match *node {
                Node::Block(b) => {
                    lowered.push(LoweredBlock::Orig(b));
                    for s in slots.range(b) {
                        succs.push(if slots.is_critical(b, s) {
                            edge_index[s]
                        } else {
                            reached(slots.to[s])
                        });
                    }
                }
                Node::Edge(from, s) => {
                    let to = slots.to[s];
                    lowered.push(LoweredBlock::Edge {
                        from,
                        succ_index: (s - slots.range(from).start) as u32,
                        to,
                    });
                    succs.push(reached(to));
                }
            }
        }
        succ_start.push(succs.len() as u32);

        // Predecessors: a counting sort of the successor lists by destination.
        pred_start.clear();
        pred_start.resize(order.len() + 1, 0);
        for s in succs.iter() {
            pred_start[s.index() + 1] += 1;
        }
        for i in 0..order.len() {
            pred_start[i + 1] += pred_start[i];
        }
        // `pred_start[to]` serves as `to`'s fill cursor, ending at the next block's start;
        // shifting by one place afterwards restores the starts.
        preds.clear();
        preds.resize(succs.len(), LoweredIndex(0));
        for from in 0..order.len() {
            for &to in &succs[succ_start[from] as usize..succ_start[from + 1] as usize] {
                preds[pred_start[to.index()] as usize] = LoweredIndex(from as u32);
                pred_start[to.index()] += 1;
            }
        }
        for i in (1..=order.len()).rev() {
            pred_start[i] = pred_start[i - 1];
        }
        pred_start[0] = 0;
    }

    /// The blocks in final order.
    pub fn lowered_order(&self) -> &[LoweredBlock] {
        &self.order
    }

    /// Number of lowered blocks.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True for a function without blocks.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Successors of lowered block `i`, one per branch slot, in slot order.
    #[inline]
    pub fn succ_indices(&self, i: LoweredIndex) -> &[LoweredIndex] {
        &self.succs[self.succ_start[i.index()] as usize..self.succ_start[i.index() + 1] as usize]
    }

    /// Predecessors of lowered block `i` (one per incoming slot), in lowered order.
    #[inline]
    pub fn pred_indices(&self, i: LoweredIndex) -> &[LoweredIndex] {
        &self.preds[self.pred_start[i.index()] as usize..self.pred_start[i.index() + 1] as usize]
    }

    /// Is lowered block `i` cold (a cold block, or an edge into or out of one)? Cold blocks
    /// form the end of the order unless sinking was skipped.
    pub fn is_cold(&self, i: LoweredIndex) -> bool {
        self.cold[i.index()]
    }

    /// The lowered index of IR block `b`, or `None` if it is unreachable.
    pub fn lowered_index_for_block(&self, b: Block) -> Option<LoweredIndex> {
        self.orig_index.get(b.index()).copied().flatten()
    }

    /// Iterate `(index, block)` in final order.
    pub fn iter(&self) -> impl Iterator<Item = (LoweredIndex, LoweredBlock)> + '_ {
        self.order
            .iter()
            .enumerate()
            .map(|(i, &b)| (LoweredIndex(i as u32), b))
    }
}

#[cfg(test)]
mod tests;
