//! Liveness of small functions by bitset dataflow, into the same lists as the sparse path.
//!
//! Used only when `blocks × ⌈vregs / 64⌉` is at most [`MAX_WORDS`], so its four
//! blocks × vregs bitsets are bounded by a constant: for the many small functions of a
//! module, word-parallel set operations beat the per-value walk's bookkeeping, and the
//! bound keeps the whole compile linear.
//!
//! Equations: `live_out(b) = ∪ live_in(s) ∪ args(b→s)` over successors `s`; `live_in(b) =
//! gen(b) ∪ (live_out(b) − kill(b))`, `gen` the vregs read in `b` before any def there,
//! `kill` its defs and parameters. Solved with a worklist seeded in postorder; a block is
//! re-queued when the live-in of one of its successors grows. The result is identical to
//! the sparse path's (a test compares them).

use super::{BlockLists, Liveness};
use crate::validate::Cfg;
use crate::{Block, Function, Inst};

/// The most words (of 64 vregs) all blocks' sets may take for this path.
pub(super) const MAX_WORDS: usize = 2048;

/// One bitset over vregs per block, stored flat.
struct BlockSets {
    words: usize,
    data: Vec<u64>,
}

impl BlockSets {
    fn new(blocks: usize, words: usize) -> BlockSets {
        BlockSets {
            words,
            data: vec![0; words * blocks],
        }
    }

    fn get(&self, b: usize) -> &[u64] {
        &self.data[b * self.words..(b + 1) * self.words]
    }

    fn insert(&mut self, b: usize, bit: usize) {
        self.data[b * self.words + bit / 64] |= 1 << (bit % 64);
    }

    fn remove(&mut self, b: usize, bit: usize) {
        self.data[b * self.words + bit / 64] &= !(1 << (bit % 64));
    }

    /// Per-block lists of the set bits, ascending.
    fn to_lists(&self, blocks: usize) -> BlockLists {
        let total: u32 = self.data.iter().map(|w| w.count_ones()).sum();
        let mut start = Vec::with_capacity(blocks + 1);
        let mut items = Vec::with_capacity(total as usize);
        start.push(0);
        for b in 0..blocks {
            for (w, &word) in self.get(b).iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    items.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
            start.push(items.len() as u32);
        }
        BlockLists { start, items }
    }
}

/// Whether the dense path applies to a function of this size.
pub(super) fn fits(blocks: usize, vregs: usize) -> bool {
    blocks.saturating_mul(vregs.div_ceil(64)) <= MAX_WORDS
}

pub(super) fn compute<F: Function>(func: &F, cfg: &Cfg) -> Liveness {
    let n = func.num_blocks();
    let words = func.num_vregs().div_ceil(64);
    let mut gen = BlockSets::new(n, words);
    let mut kill = BlockSets::new(n, words);
    let mut live_out = BlockSets::new(n, words);
    for b in 0..n {
        let block = Block(b as u32);
        // Backwards: branch arguments are read last; then per instruction, defs kill and
        // uses (read before the instruction's defs) generate.
        for k in 0..func.block_succs(block).len() {
            for &a in func.branch_blockparams(block, k) {
                live_out.insert(b, a.index());
                gen.insert(b, a.index());
            }
        }
        for i in (cfg.block_first[b]..cfg.block_end[b]).rev() {
            let ops = func.inst_operands(Inst(i));
            for op in ops.iter().filter(|op| op.is_def()) {
                kill.insert(b, op.vreg().index());
                gen.remove(b, op.vreg().index());
            }
            for op in ops.iter().filter(|op| op.is_use()) {
                gen.insert(b, op.vreg().index());
            }
        }
        for &p in func.block_params(block) {
            kill.insert(b, p.index());
            gen.remove(b, p.index());
        }
    }
    let mut live_in = BlockSets::new(n, words);
    let mut queued = vec![true; n];
    let mut worklist: Vec<Block> = cfg.postorder.iter().rev().copied().collect();
    let mut scratch = vec![0u64; words];
    while let Some(block) = worklist.pop() {
        let b = block.index();
        queued[b] = false;
        for &s in func.block_succs(block) {
            for w in 0..words {
                live_out.data[b * words + w] |= live_in.data[s.index() * words + w];
            }
        }
        for (w, slot) in scratch.iter_mut().enumerate() {
            let k = b * words + w;
            *slot = gen.data[k] | (live_out.data[k] & !kill.data[k]);
        }
        if scratch[..] != *live_in.get(b) {
            live_in.data[b * words..(b + 1) * words].copy_from_slice(&scratch);
            for &p in func.block_preds(block) {
                if !queued[p.index()] {
                    queued[p.index()] = true;
                    worklist.push(p);
                }
            }
        }
    }
    let entry = func.entry_block().index();
    let live_into_entry = live_in
        .get(entry)
        .iter()
        .enumerate()
        .find(|(_, &w)| w != 0)
        .map(|(w, &word)| (w * 64) as u32 + word.trailing_zeros());
    Liveness {
        live_in: live_in.to_lists(n),
        live_out: live_out.to_lists(n),
        live_into_entry,
    }
}
