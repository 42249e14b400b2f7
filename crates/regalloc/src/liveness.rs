//! Liveness by per-value path exploration over SSA, stored sparsely.
//!
//! Requires: a validated function (shape, SSA with single defs, reachable blocks).
//! Guarantees: `live_in(b)` is the set of vregs live at the start of block `b`, *excluding*
//! `b`'s own parameters (they are defined by the incoming edge), sorted by vreg index. The
//! set live at the end of `b` is not stored: it is the union of its successors' live-in
//! sets and the arguments its branch passes them, which the interval builder reads from
//! these lists as it walks each block. A vreg read on a path from the entry that does not
//! pass its def is reported in [`Liveness::live_into_entry`] (the caller turns it into an
//! error).
//!
//! Method (Brandner et al., "Computing Liveness Sets for SSA-Form Programs", path
//! exploration): in SSA a vreg `v` is live into block `b` exactly when `b` is not `v`'s def
//! block and some use of `v` is reachable from `b`'s start without passing `v`'s def. So,
//! one vreg at a time, every block that reads `v` (before any def there, which SSA rules out
//! outside the def block) is marked live-in, and the marking walks predecessors backwards,
//! marking them live-in unless they are the def block. A per-block stamp (the vreg last
//! marked there) stops the walk at blocks already marked for `v`.
//!
//! Cost: O(blocks + instructions + operands + L), where L = Σ over CFG edges (p, b) of
//! |live_in(b)|: each vreg marked live into `b` is passed on to each of `b`'s predecessors
//! once (the result itself, Σ |live_in(b)|, is at most L); no structure is sized blocks ×
//! vregs. (The old dense dataflow kept four blocks × vregs
//! bitsets: gigabytes at 100,000 blocks.)

use crate::reuse::{refill, running_sum};
use crate::validate::Cfg;
use crate::{Block, Function, Inst};

mod dense;

/// Per-block lists of vreg indices, stored flat (compressed rows).
#[derive(Default)]
pub(crate) struct BlockLists {
    /// `items[start[b]..start[b + 1]]` is block `b`'s list.
    pub(super) start: Vec<u32>,
    pub(super) items: Vec<u32>,
}

impl BlockLists {
    /// Refills the lists with `(block, vreg)` pairs grouped by block (a counting sort);
    /// stable, so each block's list keeps the pairs' order.
    fn refill_from_pairs(&mut self, blocks: usize, pairs: &[(u32, u32)]) {
        refill(&mut self.start, blocks + 1, 0);
        for &(b, _) in pairs {
            self.start[b as usize + 1] += 1;
        }
        self.refill_from_counted_pairs(blocks, pairs);
    }

    /// [`Self::refill_from_pairs`] when `start[b + 1]` already holds the number of pairs
    /// of block `b` (counted as they were made; `start` has `blocks + 1` entries).
    fn refill_from_counted_pairs(&mut self, blocks: usize, pairs: &[(u32, u32)]) {
        let BlockLists { start, items } = self;
        debug_assert_eq!(start.len(), blocks + 1);
        running_sum(&mut start[..=blocks]);
        // `start[b]` serves as block b's fill cursor, ending at the next block's start;
        // shifting by one place afterwards restores the starts.
        refill(items, pairs.len(), 0);
        for &(b, v) in pairs {
            items[start[b as usize] as usize] = v;
            start[b as usize] += 1;
        }
        for b in (1..=blocks).rev() {
            start[b] = start[b - 1];
        }
        start[0] = 0;
    }

    /// Block `b`'s list.
    #[inline]
    pub fn get(&self, b: usize) -> &[u32] {
        &self.items[self.span(b)]
    }

    /// Where block `b`'s list lies among all blocks' items (for tables parallel to them).
    #[inline]
    pub fn span(&self, b: usize) -> std::ops::Range<usize> {
        self.start[b] as usize..self.start[b + 1] as usize
    }

    /// The number of items over all blocks.
    pub fn total(&self) -> usize {
        self.items.len()
    }
}

/// A set of small integers with O(1) insert, remove and membership, and iteration and
/// clearing in O(members) (Briggs & Torczon's sparse set). Sized once for the universe.
#[derive(Default)]
pub(crate) struct SparseSet {
    dense: Vec<u32>,
    /// `sparse[x]` is `x`'s index in `dense` when `x` is a member.
    sparse: Vec<u32>,
}

impl SparseSet {
    /// Empties the set and makes room for members below `universe`, in O(1) when the
    /// room is there already: stale `sparse` entries are harmless, since membership is
    /// confirmed through `dense`.
    pub fn reset(&mut self, universe: usize) {
        self.dense.clear();
        if self.sparse.len() < universe {
            self.sparse.resize(universe, 0);
        }
    }

    #[inline]
    pub fn contains(&self, x: usize) -> bool {
        let k = self.sparse[x] as usize;
        k < self.dense.len() && self.dense[k] as usize == x
    }

    /// Adds `x`; whether it was new.
    #[inline]
    pub fn insert(&mut self, x: usize) -> bool {
        let new = !self.contains(x);
        if new {
            self.sparse[x] = self.dense.len() as u32;
            self.dense.push(x as u32);
        }
        new
    }

    /// Adds `x`, which the caller knows is not a member (no membership test).
    #[inline]
    pub fn insert_new(&mut self, x: usize) {
        debug_assert!(!self.contains(x), "{x} is a member already");
        self.sparse[x] = self.dense.len() as u32;
        self.dense.push(x as u32);
    }

    #[inline]
    pub fn remove(&mut self, x: usize) {
        if self.contains(x) {
            let k = self.sparse[x] as usize;
            let last = *self.dense.last().expect("a member exists");
            self.dense[k] = last;
            self.sparse[last as usize] = k as u32;
            self.dense.pop();
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.dense.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    #[inline]
    pub fn clear(&mut self) {
        self.dense.clear();
    }
}

/// Liveness result.
#[derive(Default)]
pub(crate) struct Liveness {
    /// Live-in list per block (parameters excluded).
    pub live_in: BlockLists,
    /// The lowest-numbered vreg read on a path from the entry that misses its def.
    pub live_into_entry: Option<u32>,
    /// Work done (see [`crate::Work::liveness`]).
    pub steps: u64,
    /// Whether the bounded bitset path computed it (see [`crate::Work::dense_liveness`]).
    pub dense: bool,
}

const NONE: u32 = u32::MAX;

/// Working memory of both paths, kept by [`crate::Context`] between functions (refilled
/// before use).
#[derive(Default)]
pub(crate) struct Scratch {
    dense: dense::Scratch,
    def_block: Vec<u32>,
    reads: Vec<(u32, u32)>,
    arg_reads: Vec<(u32, u32)>,
    reads_by_vreg: BlockLists,
    args_by_vreg: BlockLists,
    in_stamp: Vec<u32>,
    live_in: Vec<(u32, u32)>,
    stack: Vec<u32>,
}

/// Computes the live-in lists: by bitset dataflow for small functions (see
/// `dense`, bounded size), by per-value path exploration otherwise.
pub(crate) fn compute<F: Function>(func: &F, cfg: &Cfg) -> Liveness {
    let mut live = Liveness::default();
    compute_into(func, cfg, &mut live, &mut Scratch::default());
    live
}

/// Computes the lists into `live`, reusing its buffers and `scratch`'s.
#[inline(never)]
pub(crate) fn compute_into<F: Function>(
    func: &F,
    cfg: &Cfg,
    live: &mut Liveness,
    scratch: &mut Scratch,
) {
    if dense::fits(func.num_blocks(), func.num_vregs()) {
        dense::compute(func, cfg, live, &mut scratch.dense);
        live.dense = true;
    } else {
        compute_sparse(func, cfg, live, scratch);
        live.dense = false;
    }
}

/// Path exploration, one vreg at a time (see the module doc).
#[inline]
fn compute_sparse<F: Function>(func: &F, cfg: &Cfg, live: &mut Liveness, scratch: &mut Scratch) {
    let n = func.num_blocks();
    let nv = func.num_vregs();
    let entry = func.entry_block().index();
    let Scratch {
        def_block,
        reads,
        arg_reads,
        reads_by_vreg,
        args_by_vreg,
        in_stamp,
        live_in,
        stack,
        ..
    } = scratch;

    // Def block of every vreg, and the blocks that read each vreg (grouped per vreg by a
    // counting sort, so the walk below handles one vreg at a time). A read counts when it
    // comes before any def of the vreg in its block; in the def block that only happens in
    // a malformed function, which the walk then reports.
    refill(def_block, nv, NONE);
    reads.clear(); // (vreg, block)
    arg_reads.clear(); // (vreg, branching block)
    for b in 0..n {
        let block = Block(b as u32);
        for &p in func.block_params(block) {
            def_block[p.index()] = b as u32;
        }
        for i in cfg.block_first[b]..cfg.block_end[b] {
            let ops = func.inst_operands(Inst(i));
            // Uses first: an instruction reads before it writes.
            for op in ops.iter().filter(|op| op.is_use()) {
                let v = op.vreg().index();
                if def_block[v] == b as u32 {
                    continue; // read after its def in this block: not live-in
                }
                reads.push((v as u32, b as u32));
            }
            for op in ops.iter().filter(|op| op.is_def()) {
                def_block[op.vreg().index()] = b as u32;
            }
        }
        for k in 0..func.block_succs(block).len() {
            for &a in func.branch_blockparams(block, k) {
                arg_reads.push((a.index() as u32, b as u32));
            }
        }
    }
    reads_by_vreg.refill_from_pairs(nv, reads);
    args_by_vreg.refill_from_pairs(nv, arg_reads);

    refill(in_stamp, n, NONE);
    // (block, vreg) pairs, vregs ascending; the live-in lists' starts count each block's
    // pairs as they are made.
    live_in.clear();
    let counts = &mut live.live_in.start;
    refill(counts, n + 1, 0);
    let mut live_into_entry = None;
    stack.clear();
    // Predecessors visited by walks from a def block (malformed functions only; the
    // others are counted after the walks, from the live-in counts).
    let mut walked_from_def = 0u64;
    for v in 0..nv as u32 {
        let def = def_block[v as usize];
        // Marks `b` live-in for v (unless it defines v), which queues it for the walk: the
        // pairs made for v, from `first` on, are the walk's worklist.
        // Post-invariant: `in_stamp[b] == v` exactly for the blocks marked so far, so each
        // block is marked, and walked from, at most once per vreg.
        let mut mark_in = |b: u32, live_in: &mut Vec<(u32, u32)>| {
            if b != def && in_stamp[b as usize] != v {
                in_stamp[b as usize] = v;
                live_in.push((b, v));
                counts[b as usize + 1] += 1;
            }
        };
        let first = live_in.len();
        for &b in args_by_vreg.get(v as usize) {
            mark_in(b, live_in);
        }
        for &b in reads_by_vreg.get(v as usize) {
            if b == def {
                // Read before its def in the def block: not SSA. Walking on from here
                // reaches the entry, which reports it.
                stack.push(b);
            }
            mark_in(b, live_in);
        }
        let mut next = first;
        loop {
            let b = if let Some(&(b, _)) = live_in.get(next) {
                next += 1;
                b
            } else if let Some(b) = stack.pop() {
                walked_from_def += func.block_preds(Block(b)).len() as u64;
                b
            } else {
                break;
            };
            if b as usize == entry {
                // Live into the entry: a read not dominated by its def.
                live_into_entry.get_or_insert(v);
                continue;
            }
            for &p in func.block_preds(Block(b)) {
                mark_in(p.0, live_in);
            }
        }
    }
    // Predecessors visited by the walks (the L of the module doc): every block marked
    // live-in for a vreg is walked from once for it (the entry's walks stop there), so
    // they are Σ over the other blocks of their live-in count times their predecessors
    // (one pass here rather than a count in the walk's inner loop).
    let walked = (0..n)
        .filter(|&b| b != entry)
        .map(|b| u64::from(counts[b + 1]) * func.block_preds(Block(b as u32)).len() as u64)
        .sum::<u64>()
        + walked_from_def;
    live.steps = (n + nv + func.num_insts() + reads.len() + arg_reads.len()) as u64 + walked;
    live.live_in.refill_from_counted_pairs(n, live_in);
    live.live_into_entry = live_into_entry;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both paths agree on every generated function (with its pressure, loops, block
    /// parameters and constraints): live-in lists, their order and the entry report.
    #[test]
    fn dense_and_sparse_paths_agree() {
        let mut dense_cases = 0;
        // Cases of one word per block's set (at most 64 vregs, a path of its own) and of more.
        let (mut one_word, mut more_words) = (0, 0);
        for i in 0..400 {
            let case = crate::stress::case(11, i);
            let Ok(cfg) = crate::validate::validate(&case.func, &case.env) else {
                continue;
            };
            let mut sparse = Liveness::default();
            compute_sparse(&case.func, &cfg, &mut sparse, &mut Scratch::default());
            let mut dense = Liveness::default();
            dense::compute(&case.func, &cfg, &mut dense, &mut dense::Scratch::default());
            dense_cases += 1;
            if case.func.num_vregs() <= 64 {
                one_word += 1;
            } else {
                more_words += 1;
            }
            for b in 0..case.func.num_blocks() {
                assert_eq!(
                    sparse.live_in.get(b),
                    dense.live_in.get(b),
                    "case {i} block{b} in"
                );
            }
            assert_eq!(sparse.live_into_entry, dense.live_into_entry, "case {i}");
        }
        assert!(dense_cases > 300, "{dense_cases} valid cases");
        assert!(
            one_word > 50 && more_words > 50,
            "{one_word} cases of one word, {more_words} of more"
        );
    }
}
