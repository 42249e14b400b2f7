//! Program order: an explicit block order over one flat instruction array.
//!
//! Seed 004's design: the body is a flat vector of instructions in program order and each
//! block is a contiguous range of it, in the explicit block order. There are no linked lists.
//!
//! Invariants (the layout is *compact* when `pending` is empty and nothing is removed):
//! 1. The blocks of `order` own consecutive, non-overlapping ranges of `insts`, in order, and
//!    together cover it. A block not in `order` owns nothing.
//! 2. `inst_block[i]` is the block whose range holds `i`, or `None` for an instruction that
//!    is not placed (never inserted, queued, or removed).
//!
//! Edits that cannot keep (1) cheaply are *queued*: inserting before an instruction, appending
//! to a block that is not the last one, or inserting a block in the middle. A queued edit is
//! invisible to iteration until [`crate::Function::compact`] applies it (Julia's insertion
//! buffer). Removing an instruction leaves a tombstone that iteration skips and compaction
//! drops. After compaction, instruction `Inst(n)` is the `n`-th instruction in program order.

use crate::entity::{Block, Inst, SecondaryMap};

/// Where a queued instruction goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum InsertPoint {
    /// Immediately before this instruction (which may itself be queued).
    Before(Inst),
    /// At the end of this block.
    AtEnd(Block),
}

#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
struct Range {
    start: u32,
    len: u32,
}

/// Block order and instruction order of a function.
#[derive(Debug, Default)]
pub struct Layout {
    order: Vec<Block>,
    in_order: SecondaryMap<Block, bool>,
    ranges: SecondaryMap<Block, Range>,
    insts: Vec<Inst>,
    inst_block: SecondaryMap<Inst, Option<Block>>,
    /// Queued insertions in queue order; `None`: withdrawn ([`Layout::withdraw_queued`]).
    pub(crate) pending_insts: Vec<(Option<InsertPoint>, Inst)>,
    pub(crate) pending_blocks: Vec<(Block, Block)>,
    pub(crate) removed_blocks: Vec<Block>,
    removed_insts: usize,
}

impl Clone for Layout {
    fn clone(&self) -> Self {
        let mut copy = Layout::default();
        copy.clone_from(self);
        copy
    }

    /// Field by field, reusing this layout's memory.
    fn clone_from(&mut self, source: &Self) {
        // Destructured, so that a new field cannot be forgotten here.
        let Layout {
            order,
            in_order,
            ranges,
            insts,
            inst_block,
            pending_insts,
            pending_blocks,
            removed_blocks,
            removed_insts,
        } = source;
        self.order.clone_from(order);
        self.in_order.clone_from(in_order);
        self.ranges.clone_from(ranges);
        self.insts.clone_from(insts);
        self.inst_block.clone_from(inst_block);
        self.pending_insts.clone_from(pending_insts);
        self.pending_blocks.clone_from(pending_blocks);
        self.removed_blocks.clone_from(removed_blocks);
        self.removed_insts = *removed_insts;
    }
}

impl Layout {
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// True when there are no queued edits and no tombstones.
    #[inline]
    pub fn is_compact(&self) -> bool {
        self.pending_insts.is_empty()
            && self.pending_blocks.is_empty()
            && self.removed_blocks.is_empty()
            && self.removed_insts == 0
    }

    /// True when edits wait for compaction that iteration does not show (queued
    /// insertions, queued or removed blocks). Tombstones do not count: iteration skips them,
    /// so a layout whose only edits are removed instructions reads as its compaction would,
    /// with gaps in the instruction numbering.
    pub fn has_queued_edits(&self) -> bool {
        !(self.pending_insts.is_empty()
            && self.pending_blocks.is_empty()
            && self.removed_blocks.is_empty())
    }

    // ---- Blocks -------------------------------------------------------------------------

    /// Blocks in program order.
    #[inline]
    pub fn blocks(&self) -> &[Block] {
        &self.order
    }

    #[inline]
    pub fn entry_block(&self) -> Option<Block> {
        self.order.first().copied()
    }

    #[inline]
    pub fn last_block(&self) -> Option<Block> {
        self.order.last().copied()
    }

    #[inline]
    pub fn is_block_inserted(&self, b: Block) -> bool {
        self.in_order[b]
    }

    /// Append `b` at the end of the block order.
    #[inline]
    pub fn append_block(&mut self, b: Block) {
        debug_assert!(!self.in_order[b], "{b} is already in the layout");
        self.ranges[b] = Range {
            start: self.insts.len() as u32,
            len: 0,
        };
        // Post-invariant (1): the new last block owns the empty range at the end of `insts`.
        self.in_order[b] = true;
        self.order.push(b);
    }

    /// Queue `new` to be placed right after `after` in the block order.
    #[inline]
    pub fn insert_block_after(&mut self, new: Block, after: Block) {
        debug_assert!(!self.in_order[new]);
        self.in_order[new] = true;
        self.pending_blocks.push((after, new));
    }

    /// Queue the removal of `b` and of every instruction in it.
    #[inline]
    pub fn remove_block(&mut self, b: Block) {
        if self.in_order[b] {
            self.removed_blocks.push(b);
        }
    }

    // ---- Instructions -------------------------------------------------------------------

    /// Placed instructions of `b`, in order, skipping removed ones. Queued insertions are not
    /// visible until compaction.
    #[inline]
    pub fn block_insts(&self, b: Block) -> impl DoubleEndedIterator<Item = Inst> + '_ {
        let r = self.ranges[b];
        let slice: &[Inst] = if self.in_order[b] {
            &self.insts[r.start as usize..(r.start + r.len) as usize]
        } else {
            &[]
        };
        // Only a removal unplaces an instruction inside a range (invariant 2): without
        // tombstones every slot is placed, and the walk reads no per-instruction entry.
        let no_tombstones = self.removed_insts == 0;
        slice
            .iter()
            .copied()
            .filter(move |&i| no_tombstones || self.inst_block[i].is_some())
    }

    /// The positions of `b`'s slots in the flat array. When the layout is compact these are
    /// exactly `b`'s instruction numbers, so a reader can walk `Inst(start..end)` directly.
    #[inline]
    pub fn block_range(&self, b: Block) -> std::ops::Range<u32> {
        let r = self.ranges[b];
        if self.in_order[b] {
            r.start..r.start + r.len
        } else {
            0..0
        }
    }

    /// The last placed instruction of `b`.
    #[inline]
    pub fn last_inst(&self, b: Block) -> Option<Inst> {
        self.block_insts(b).next_back()
    }

    #[inline]
    pub fn first_inst(&self, b: Block) -> Option<Inst> {
        self.block_insts(b).next()
    }

    /// The block holding `inst`, if it is placed.
    #[inline]
    pub fn inst_block(&self, inst: Inst) -> Option<Block> {
        self.inst_block[inst]
    }

    /// Number of placed slots in the flat array (tombstones included).
    #[inline]
    pub fn num_slots(&self) -> usize {
        self.insts.len()
    }

    /// Append `inst` at the end of `b`. O(1) when `b` is the last block; otherwise queued.
    #[inline]
    pub fn append_inst(&mut self, inst: Inst, b: Block) {
        debug_assert!(self.in_order[b], "{b} is not in the layout");
        if self.order.last() == Some(&b) && self.pending_blocks.is_empty() {
            self.insts.push(inst);
            self.ranges[b].len += 1;
            // Post-invariant (1): `b` is last, so its range still ends at the end of `insts`.
            self.inst_block[inst] = Some(b);
        } else {
            self.pending_insts.push((Some(InsertPoint::AtEnd(b)), inst));
        }
    }

    /// Queue `inst` for insertion at `at`.
    #[inline]
    pub fn insert_inst(&mut self, inst: Inst, at: InsertPoint) {
        self.pending_insts.push((Some(at), inst));
    }

    /// The queued insertions not withdrawn, in queue order: `(k, at, inst)`, `k` naming the
    /// insertion for [`Layout::withdraw_queued`].
    pub fn queued_insts(&self) -> impl Iterator<Item = (usize, InsertPoint, Inst)> + '_ {
        self.pending_insts
            .iter()
            .enumerate()
            .filter_map(|(k, &(at, inst))| Some((k, at?, inst)))
    }

    /// Withdraw the `k`-th queued insertion: its instruction stays unplaced (a pass moving a
    /// queued instruction elsewhere withdraws it, then queues it again at the new point).
    #[inline]
    pub fn withdraw_queued(&mut self, k: usize) {
        self.pending_insts[k].0 = None;
    }

    /// Remove a placed instruction (tombstone; dropped by compaction).
    #[inline]
    pub fn remove_inst(&mut self, inst: Inst) {
        if self.inst_block[inst].take().is_some() {
            self.removed_insts += 1;
        }
    }

    /// Rebuild from a fully ordered description (used by compaction): `blocks` in order, each
    /// with its instructions already renumbered.
    pub(crate) fn rebuild(&mut self, blocks: &[(Block, u32)], num_insts: usize) {
        // Refilled in place: the tables keep their capacity (the function's size is about
        // what it was), and nothing of the old layout survives.
        self.order.clear();
        self.in_order.clear();
        self.ranges.clear();
        self.insts.clear();
        self.inst_block.clear();
        self.pending_insts.clear();
        self.pending_blocks.clear();
        self.removed_blocks.clear();
        self.removed_insts = 0;
        self.insts.reserve(num_insts);
        self.inst_block.reserve(num_insts);
        let mut next = 0u32;
        for &(b, len) in blocks {
            self.in_order[b] = true;
            self.order.push(b);
            self.ranges[b] = Range { start: next, len };
            for i in next..next + len {
                let inst = Inst::from_u32(i);
                self.insts.push(inst);
                self.inst_block[inst] = Some(b);
            }
            next += len;
        }
        debug_assert_eq!(next as usize, num_insts);
    }

    /// Raw placed slots of `b` including tombstones (compaction reads these).
    #[inline]
    pub(crate) fn block_slots(&self, b: Block) -> &[Inst] {
        let r = self.ranges[b];
        &self.insts[r.start as usize..(r.start + r.len) as usize]
    }

    #[inline]
    pub(crate) fn is_removed_or_unplaced(&self, inst: Inst) -> bool {
        self.inst_block[inst].is_none()
    }
}
