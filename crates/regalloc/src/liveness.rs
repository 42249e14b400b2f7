//! Liveness by bitset dataflow.
//!
//! Requires: a validated function (SSA, reachable blocks).
//! Guarantees: `live_in[b]` is the set of vregs live at the start of block `b`, *excluding*
//! `b`'s own parameters (they are defined by the incoming edge). A vreg passed as a branch
//! argument is live at the end of the branching block.
//!
//! Equations: `live_out(b) = ∪ live_in(s) ∪ args(b→s)` over successors `s`;
//! `live_in(b) = gen(b) ∪ (live_out(b) − kill(b))` where `gen` are the vregs read in `b`
//! before any def in `b` and `kill` the defs and parameters of `b`. Solved with a worklist
//! seeded in postorder (successors first), which converges in a few passes on reducible
//! graphs; a block is re-queued when the live-in of one of its successors grows.

use crate::validate::Cfg;
use crate::{Block, Function, Inst};

/// A dense bitset over vreg indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(bits: usize) -> BitSet {
        BitSet {
            words: vec![0; bits.div_ceil(64)],
        }
    }

    pub fn insert(&mut self, bit: usize) {
        self.words[bit / 64] |= 1 << (bit % 64);
    }

    pub fn remove(&mut self, bit: usize) {
        self.words[bit / 64] &= !(1 << (bit % 64));
    }

    pub fn contains(&self, bit: usize) -> bool {
        self.words[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Overwrites the set with `words` (same length).
    pub fn copy_from(&mut self, words: &[u64]) {
        self.words.copy_from_slice(words);
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + b)
            })
        })
    }
}

/// The set bits of a bitset given as words.
pub(crate) fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(w * 64 + b)
        })
    })
}

/// One bitset over vregs per block, stored flat (one allocation for all blocks).
pub(crate) struct BlockSets {
    words: usize,
    data: Vec<u64>,
}

impl BlockSets {
    fn new(blocks: usize, bits: usize) -> BlockSets {
        let words = bits.div_ceil(64);
        BlockSets {
            words,
            data: vec![0; words * blocks],
        }
    }

    /// The set of block `b`.
    pub fn get(&self, b: usize) -> &[u64] {
        &self.data[b * self.words..(b + 1) * self.words]
    }

    fn get_mut(&mut self, b: usize) -> &mut [u64] {
        &mut self.data[b * self.words..(b + 1) * self.words]
    }

    fn insert(&mut self, b: usize, bit: usize) {
        self.data[b * self.words + bit / 64] |= 1 << (bit % 64);
    }

    fn remove(&mut self, b: usize, bit: usize) {
        self.data[b * self.words + bit / 64] &= !(1 << (bit % 64));
    }

    fn contains(&self, b: usize, bit: usize) -> bool {
        self.data[b * self.words + bit / 64] & (1 << (bit % 64)) != 0
    }
}

/// Liveness result.
pub(crate) struct Liveness {
    /// Live-in set per block (parameters excluded).
    pub live_in: BlockSets,
    /// Live-out set per block (branch arguments included).
    pub live_out: BlockSets,
}

/// Computes live-in and live-out sets.
pub(crate) fn compute<F: Function>(func: &F, cfg: &Cfg) -> Liveness {
    let n = func.num_blocks();
    let nv = func.num_vregs();
    let mut gen = BlockSets::new(n, nv);
    let mut kill = BlockSets::new(n, nv);
    let mut live_out = BlockSets::new(n, nv);
    for b in 0..n {
        let block = Block(b as u32);
        // Walk backwards: a use makes the vreg generated unless a later-walked (earlier in
        // program order) def kills it; since SSA defs dominate uses, a def seen after a use
        // in this backward walk is in this block and removes the vreg from gen. Branch
        // arguments are read at the very end.
        for k in 0..func.block_succs(block).len() {
            for &a in func.branch_blockparams(block, k) {
                live_out.insert(b, a.index());
                gen.insert(b, a.index());
            }
        }
        for i in (cfg.block_first[b]..cfg.block_end[b]).rev() {
            let ops = func.inst_operands(Inst(i));
            for op in ops {
                if op.is_def() {
                    kill.insert(b, op.vreg().index());
                    gen.remove(b, op.vreg().index());
                }
            }
            for op in ops {
                if op.is_use() {
                    gen.insert(b, op.vreg().index());
                }
            }
        }
        for &p in func.block_params(block) {
            kill.insert(b, p.index());
            gen.remove(b, p.index());
        }
        debug_assert!(func
            .block_params(block)
            .iter()
            .all(|p| !gen.contains(b, p.index())));
    }

    let mut live_in = BlockSets::new(n, nv);
    let mut queued = vec![true; n];
    let mut worklist: Vec<Block> = cfg.postorder.iter().rev().copied().collect();
    let mut scratch = vec![0u64; live_in.words];
    while let Some(block) = worklist.pop() {
        let b = block.index();
        queued[b] = false;
        for &s in func.block_succs(block) {
            let words = live_in.words;
            let (succ_in, out) = (
                &live_in.data[s.index() * words..(s.index() + 1) * words],
                live_out.get_mut(b),
            );
            for (o, &i) in out.iter_mut().zip(succ_in) {
                *o |= i;
            }
        }
        for (w, ((&o, &g), &k)) in scratch
            .iter_mut()
            .zip(live_out.get(b).iter().zip(gen.get(b)).zip(kill.get(b)))
        {
            *w = g | (o & !k);
        }
        if scratch[..] != *live_in.get(b) {
            live_in.get_mut(b).copy_from_slice(&scratch);
            for &p in func.block_preds(block) {
                if !queued[p.index()] {
                    queued[p.index()] = true;
                    worklist.push(p);
                }
            }
        }
    }
    Liveness { live_in, live_out }
}
