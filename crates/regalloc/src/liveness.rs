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

    /// `self |= other`; returns whether `self` changed.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let new = *a | *b;
            changed |= new != *a;
            *a = new;
        }
        changed
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

/// Liveness result.
pub(crate) struct Liveness {
    /// Live-in set per block (parameters excluded).
    pub live_in: Vec<BitSet>,
    /// Live-out set per block (branch arguments included).
    pub live_out: Vec<BitSet>,
}

/// Computes live-in and live-out sets.
pub(crate) fn compute<F: Function>(func: &F, cfg: &Cfg) -> Liveness {
    let n = func.num_blocks();
    let nv = func.num_vregs();
    let mut gen = vec![BitSet::new(nv); n];
    let mut kill = vec![BitSet::new(nv); n];
    let mut args_out = vec![BitSet::new(nv); n];
    for b in 0..n {
        let block = Block(b as u32);
        for k in 0..func.block_succs(block).len() {
            for &a in func.branch_blockparams(block, k) {
                args_out[b].insert(a.index());
            }
        }
        // Walk backwards: a use makes the vreg generated unless a later-walked (earlier in
        // program order) def kills it; since SSA defs dominate uses, a def seen after a use
        // in this backward walk is in this block and removes the vreg from gen.
        for i in (cfg.block_first[b]..cfg.block_end[b]).rev() {
            for op in func.inst_operands(Inst(i)) {
                if op.is_def() {
                    kill[b].insert(op.vreg().index());
                    gen[b].remove(op.vreg().index());
                }
            }
            for op in func.inst_operands(Inst(i)) {
                if op.is_use() {
                    gen[b].insert(op.vreg().index());
                }
            }
        }
        for &p in func.block_params(block) {
            kill[b].insert(p.index());
            gen[b].remove(p.index());
        }
    }
    // Args read at the end of the block count as uses unless defined in it.
    for b in 0..n {
        for v in args_out[b].iter() {
            if !kill[b].contains(v) {
                gen[b].insert(v);
            }
        }
    }

    let mut live_in = vec![BitSet::new(nv); n];
    let mut live_out = args_out;
    let mut queued = vec![true; n];
    let mut worklist: Vec<Block> = cfg.postorder.iter().rev().copied().collect();
    let mut scratch = BitSet::new(nv);
    while let Some(block) = worklist.pop() {
        let b = block.index();
        queued[b] = false;
        for &s in func.block_succs(block) {
            live_out[b].union_with(&live_in[s.index()]);
        }
        scratch.words.copy_from_slice(&live_out[b].words);
        for (w, (&g, &k)) in scratch
            .words
            .iter_mut()
            .zip(gen[b].words.iter().zip(&kill[b].words))
        {
            *w = g | (*w & !k);
        }
        if scratch != live_in[b] {
            live_in[b].words.copy_from_slice(&scratch.words);
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
