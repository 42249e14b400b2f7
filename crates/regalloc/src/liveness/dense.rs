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
use crate::reuse::refill;
use crate::validate::Cfg;
use crate::{Block, Function, Inst};

/// The most words (of 64 vregs) all blocks' sets may take for this path.
pub(super) const MAX_WORDS: usize = 2048;

/// One bitset over vregs per block, stored flat.
#[derive(Default)]
struct BlockSets {
    words: usize,
    data: Vec<u64>,
}

impl BlockSets {
    /// Empties the sets and sizes them for `blocks` sets of `words` words.
    fn reset(&mut self, blocks: usize, words: usize) {
        self.words = words;
        refill(&mut self.data, words * blocks, 0);
    }

    fn get(&self, b: usize) -> &[u64] {
        &self.data[b * self.words..(b + 1) * self.words]
    }

    fn insert(&mut self, b: usize, bit: usize) {
        self.data[b * self.words + bit / 64] |= 1 << (bit % 64);
    }

    /// Refills `lists` with the per-block lists of the set bits, ascending.
    fn to_lists(&self, blocks: usize, lists: &mut BlockLists) {
        let BlockLists { start, items } = lists;
        start.clear();
        items.clear();
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
    }
}

fn set_bit(set: &mut [u64], bit: usize) {
    set[bit / 64] |= 1 << (bit % 64);
}

fn gen_if_not_killed(gen: &mut [u64], kill: &[u64], bit: usize) {
    let mask = 1 << (bit % 64);
    gen[bit / 64] |= mask & !kill[bit / 64];
}

/// Whether the dense path applies to a function of this size.
pub(super) fn fits(blocks: usize, vregs: usize) -> bool {
    blocks.saturating_mul(vregs.div_ceil(64)) <= MAX_WORDS
}

/// Working memory kept between functions (reset before use).
#[derive(Default)]
pub(super) struct Scratch {
    gen: BlockSets,
    kill: BlockSets,
    live_out: BlockSets,
    live_in: BlockSets,
    queued: Vec<bool>,
    worklist: Vec<Block>,
}

// Kept out of line: inlined into `compute_into` it took 2.4x the perf samples it had out of
// line (repository corpus); out of line again, the compile-speed ratio improved by under 1%.
#[inline(never)]
pub(super) fn compute<F: Function>(func: &F, cfg: &Cfg, live: &mut Liveness, s: &mut Scratch) {
    let n = func.num_blocks();
    let words = func.num_vregs().div_ceil(64);
    let Scratch {
        gen,
        kill,
        live_out,
        live_in,
        queued,
        worklist,
    } = s;
    gen.reset(n, words);
    kill.reset(n, words);
    live_out.reset(n, words);
    for b in 0..n {
        let block = Block(b as u32);
        // Forwards, each bit set once: parameters are defined first; then per instruction
        // its uses, read before its defs, generate unless an earlier def killed them; branch
        // arguments are read last. (No use-before-def assumption: a vreg read before any
        // def reaches the entry's live-in set, which the caller reports.)
        let range = b * words..(b + 1) * words;
        let (gen_b, kill_b) = (&mut gen.data[range.clone()], &mut kill.data[range]);
        for &p in func.block_params(block) {
            set_bit(kill_b, p.index());
        }
        for i in cfg.block_first[b]..cfg.block_end[b] {
            let ops = func.inst_operands(Inst(i));
            for op in ops.iter().filter(|op| op.is_use()) {
                gen_if_not_killed(gen_b, kill_b, op.vreg().index());
            }
            for op in ops.iter().filter(|op| op.is_def()) {
                set_bit(kill_b, op.vreg().index());
            }
        }
        for k in 0..func.block_succs(block).len() {
            for &a in func.branch_blockparams(block, k) {
                live_out.insert(b, a.index());
                gen_if_not_killed(gen_b, kill_b, a.index());
            }
        }
    }
    live_in.reset(n, words);
    refill(queued, n, true);
    worklist.clear();
    worklist.extend(cfg.postorder.iter().rev().copied());
    let (live_in_words, live_out_words) = (&mut live_in.data, &mut live_out.data);
    let mut pops = 0u64;
    while let Some(block) = worklist.pop() {
        pops += 1;
        let b = block.index();
        queued[b] = false;
        // Word by word, in place: no copy of the set, and a one-word set (at most 64
        // vregs, most functions) costs one pass.
        let mut grew = false;
        for w in 0..words {
            let k = b * words + w;
            let out = func
                .block_succs(block)
                .iter()
                .fold(live_out_words[k], |out, s| {
                    out | live_in_words[s.index() * words + w]
                });
            live_out_words[k] = out;
            let new_in = gen.data[k] | (out & !kill.data[k]);
            grew |= new_in != live_in_words[k];
            live_in_words[k] = new_in;
        }
        if grew {
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
    live_in.to_lists(n, &mut live.live_in);
    live.live_into_entry = live_into_entry;
    // The four sets' words, the worklist's passes over a block's words, the function.
    live.steps = (4 * n * words + func.num_insts()) as u64 + pops * words as u64;
}
