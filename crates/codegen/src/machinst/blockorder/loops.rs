//! `LoopForest`: the loop nesting forest of the IR blocks, for the block layout.
//!
//! # Contract
//!
//! Requires the branch slots of a verified function ([`Slots`]) and its entry block.
//! Finds the loops with Havlak's algorithm: a depth-first search numbers the blocks reachable
//! from the entry in preorder; an edge `v -> w` whose destination `w` is an ancestor of `v` in
//! the search tree is a *back edge*, and `w` a loop *header*. Headers are processed from the
//! last preorder number down; the body of header `w` is found by walking predecessors
//! backwards from its back-edge sources, where every block already in an inner loop stands
//! for that whole loop (a union-find with path compression collapses inner loops into their
//! headers; union by rank keeps it near-linear).
//!
//! Irreducible control flow is handled conservatively: a loop's body only ever holds DFS
//! descendants of its header, and an edge entering a body from a block that is not such a
//! descendant is ignored (Havlak records these entries, which is what makes his algorithm
//! quadratic in the worst case). A loop can then be smaller than the strongly connected
//! region around it, never wrong in a way the layout depends on: every block of a body is
//! reachable from its header through the body.
//!
//! Guarantees, for every block `b` reachable from the entry:
//! - `is_header(b)` iff `b` is the destination of a back edge (a self-loop included);
//! - `level(b)` is the innermost loop that holds `b` as a member other than as its own
//!   header: for a header, the loop around its loop; `None` is the function level;
//! - the loops nest: `level(h)` of a header encloses `h`'s loop, and `depth(h)` is one more
//!   than `depth(level(h))` (the function level has depth 0);
//! - every block of a loop is a DFS descendant of its header, and every DFS tree edge into a
//!   block other than a header comes from a block of the same loop (or one nested in it).
//!
//! Cost: O((blocks + edges) · α): one search, one counting sort of the predecessors, and
//! one union-find lookup per predecessor edge; buffers are kept between functions. A
//! function whose search meets no back edge (no loop) stops after the search.

use kestrel_ir::entity::{refill, EntityRef};
use kestrel_ir::Block;

use super::Slots;

/// Marks "no block" in the dense arrays (preorder numbers, union-find parents, headers).
const NONE: u32 = u32::MAX;

/// The loop forest; refilled by [`LoopForest::compute`], with its working memory.
#[derive(Default)]
pub(super) struct LoopForest {
    /// Preorder number of each block (`NONE`: unreachable).
    preorder: Vec<u32>,
    /// Block of each preorder number.
    block_at: Vec<Block>,
    /// Largest preorder number in the search subtree of each preorder number.
    last_descendant: Vec<u32>,
    /// Predecessors by preorder number, as compressed rows (`pred_start` has one more entry).
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    /// Union-find parent by preorder number (`NONE`: the root of a set), with the rank of
    /// each root and the block each root's set stands for (its outermost header so far).
    union_parent: Vec<u32>,
    rank: Vec<u8>,
    stands_for: Vec<u32>,
    /// Innermost enclosing header by preorder number, as a preorder number (`NONE`: none).
    enclosing: Vec<u32>,
    header: Vec<bool>,
    /// Loop depth of each header's own loop, by preorder number.
    depth: Vec<u32>,
    /// Which header last put a representative into its body (deduplication).
    collected_by: Vec<u32>,
    body: Vec<u32>,
    stack: Vec<(Block, usize)>,
    /// The search met an edge to a block still on its stack: some loop exists.
    has_back_edge: bool,
}

impl LoopForest {
    /// Recompute the forest for the function whose branch slots are `slots`.
    pub(super) fn compute(&mut self, slots: &Slots, entry: Block) {
        self.number(slots, entry);
        if !self.has_back_edge {
            // Acyclic: every block is at the function level, and no header exists.
            let count = self.block_at.len();
            refill(&mut self.enclosing, count, NONE);
            refill(&mut self.header, count, false);
            refill(&mut self.depth, count, 0);
            return;
        }
        self.collect_preds(slots);
        self.find_loops();
    }

    /// Is `b` a loop header? (False for unreachable blocks.)
    pub(super) fn is_header(&self, b: Block) -> bool {
        let n = self.preorder[b.index()];
        n != NONE && self.header[n as usize]
    }

    /// The loop that holds `b` as a member, as its header (`None`: the function level).
    pub(super) fn level(&self, b: Block) -> Option<Block> {
        let n = self.preorder[b.index()];
        if n == NONE || self.enclosing[n as usize] == NONE {
            return None;
        }
        Some(self.block_at[self.enclosing[n as usize] as usize])
    }

    /// Depth of the loop of header `h` (`None`, the function level, has depth 0).
    pub(super) fn depth(&self, h: Option<Block>) -> usize {
        h.map_or(0, |h| {
            self.depth[self.preorder[h.index()] as usize] as usize
        })
    }

    /// Depth-first search from `entry`: preorder numbers and subtree ends.
    fn number(&mut self, slots: &Slots, entry: Block) {
        let n = slots.incoming.len();
        self.preorder.clear();
        self.preorder.resize(n, NONE);
        self.block_at.clear();
        self.last_descendant.clear();
        self.stack.clear();
        self.has_back_edge = false;
        // A block's subtree end is NONE while it is on the stack.
        self.preorder[entry.index()] = 0;
        self.block_at.push(entry);
        self.last_descendant.push(NONE);
        self.stack.push((entry, 0));
        while let Some(top) = self.stack.last_mut() {
            let (b, next) = *top;
            let range = slots.range(b);
            if next == range.len() {
                let last = self.block_at.len() as u32 - 1;
                self.last_descendant[self.preorder[b.index()] as usize] = last;
                self.stack.pop();
                continue;
            }
            top.1 += 1;
            let to = slots.to[range.start + next];
            let n = self.preorder[to.index()];
            if n == NONE {
                self.preorder[to.index()] = self.block_at.len() as u32;
                self.block_at.push(to);
                self.last_descendant.push(NONE);
                self.stack.push((to, 0));
            } else if self.last_descendant[n as usize] == NONE {
                // `to` is on the stack, an ancestor: a back edge.
                self.has_back_edge = true;
            }
        }
    }

    /// Predecessor rows by preorder number, over the reachable blocks (a counting sort).
    fn collect_preds(&mut self, slots: &Slots) {
        let count = self.block_at.len();
        self.pred_start.clear();
        self.pred_start.resize(count + 1, 0);
        for &b in &self.block_at {
            for s in slots.range(b) {
                self.pred_start[self.preorder[slots.to[s].index()] as usize + 1] += 1;
            }
        }
        for i in 0..count {
            self.pred_start[i + 1] += self.pred_start[i];
        }
        // `pred_start[w]` is `w`'s fill cursor; shifting by one place restores the starts.
        self.preds.clear();
        self.preds.resize(self.pred_start[count] as usize, 0);
        for (v, &b) in self.block_at.iter().enumerate() {
            for s in slots.range(b) {
                let w = self.preorder[slots.to[s].index()] as usize;
                self.preds[self.pred_start[w] as usize] = v as u32;
                self.pred_start[w] += 1;
            }
        }
        for i in (1..=count).rev() {
            self.pred_start[i] = self.pred_start[i - 1];
        }
        self.pred_start[0] = 0;
    }

    /// Is preorder number `a` an ancestor of (or equal to) `d` in the search tree?
    fn is_ancestor(&self, a: u32, d: u32) -> bool {
        a <= d && d <= self.last_descendant[a as usize]
    }

    /// The representative of `x`'s set: the outermost header found so far whose loop holds
    /// `x`, or `x` itself.
    fn find(&mut self, x: u32) -> u32 {
        let root = self.find_root(x);
        self.stands_for[root as usize]
    }

    /// Merge the set of representative `x` into that of header `w`, which stands for both.
    fn union(&mut self, x: u32, w: u32) {
        let (a, b) = (self.find_root(x), self.find_root(w));
        let (low, high) = match self.rank[a as usize] < self.rank[b as usize] {
            true => (a, b),
            false => (b, a),
        };
        if self.rank[low as usize] == self.rank[high as usize] {
            self.rank[high as usize] += 1;
        }
        self.union_parent[low as usize] = high;
        self.stands_for[high as usize] = w;
    }

    /// The root of `x`'s set; compresses the path it walks.
    fn find_root(&mut self, x: u32) -> u32 {
        let mut root = x;
        while self.union_parent[root as usize] != NONE {
            root = self.union_parent[root as usize];
        }
        let mut at = x;
        while at != root {
            let next = self.union_parent[at as usize];
            self.union_parent[at as usize] = root;
            at = next;
        }
        root
    }

    /// Havlak's main loop, headers from the innermost (last preorder number) out.
    fn find_loops(&mut self) {
        let count = self.block_at.len();
        self.union_parent.clear();
        self.union_parent.resize(count, NONE);
        self.rank.clear();
        self.rank.resize(count, 0);
        self.stands_for.clear();
        self.stands_for.extend(0..count as u32);
        self.enclosing.clear();
        self.enclosing.resize(count, NONE);
        self.header.clear();
        self.header.resize(count, false);
        self.collected_by.clear();
        self.collected_by.resize(count, NONE);
        for w in (0..count as u32).rev() {
            self.body.clear();
            let preds =
                self.pred_start[w as usize] as usize..self.pred_start[w as usize + 1] as usize;
            for p in preds {
                let v = self.preds[p];
                if !self.is_ancestor(w, v) {
                    continue;
                }
                // A back edge `v -> w`.
                self.header[w as usize] = true;
                let r = self.find(v);
                if r != w && self.collected_by[r as usize] != w {
                    self.collected_by[r as usize] = w;
                    self.body.push(r);
                }
            }
            // Walk backwards from the back-edge sources; `body` doubles as the worklist.
            let mut next = 0;
            while next < self.body.len() {
                let x = self.body[next];
                next += 1;
                let preds =
                    self.pred_start[x as usize] as usize..self.pred_start[x as usize + 1] as usize;
                for p in preds {
                    let y = self.preds[p];
                    if self.is_ancestor(x, y) {
                        continue; // a back edge into `x`: inside `x`'s own loop.
                    }
                    let r = self.find(y);
                    // An entry from outside `w`'s subtree is irreducible: left out.
                    if r == w || !self.is_ancestor(w, r) || self.collected_by[r as usize] == w {
                        continue;
                    }
                    self.collected_by[r as usize] = w;
                    self.body.push(r);
                }
            }
            // Post-invariant: every representative in `body` joins `w`'s set, so it is never
            // collected again and each predecessor row is walked at most once overall.
            for i in 0..self.body.len() {
                let x = self.body[i];
                self.enclosing[x as usize] = w;
                self.union(x, w);
            }
        }
        // Depths in preorder: an enclosing header has a smaller number than what it holds.
        self.depth.clear();
        self.depth.resize(count, 0);
        for x in 0..count {
            if self.header[x] {
                let outer = self.enclosing[x];
                self.depth[x] = if outer == NONE {
                    1
                } else {
                    self.depth[outer as usize] + 1
                };
            }
        }
    }
}
