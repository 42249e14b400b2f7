//! The dominator tree, by Semi-NCA (Georgiadis; as in Lengauer and Tarjan, semidominators
//! from a depth-first preorder with path compression, then the nearest common ancestor step).
//!
//! Contract. Requires a [`ControlFlowGraph`] computed from the same function. Guarantees:
//! - reachability: a block is reachable when a path of CFG edges leads to it from the entry
//!   block (the first block in the layout); the others have no immediate dominator;
//! - `idom(b)` is the immediate dominator of every reachable block but the entry;
//! - [`DominatorTree::dominates`] is *non-strict* (everything dominates itself). Between
//!   instructions of the same block it compares layout positions recorded when the tree was
//!   computed; a block dominates every instruction it contains. An unreachable block is
//!   dominated only by itself (the verifier does not ask about unreachable code);
//! - queries on block or instruction numbers the function does not have answer `false` /
//!   `None` instead of panicking.
//!
//! Block dominance queries are O(1): the tree is numbered by a depth-first walk (entry and
//! exit times), and `a` dominates `b` exactly when `b`'s interval nests in `a`'s. Cost of
//! `compute`: O(edges · log blocks) for the idoms (path compression without balancing),
//! O(blocks + edges + instructions) for the orders and numberings.

use crate::cfg::ControlFlowGraph;
use crate::entity::{refill, Block, EntityRef, Inst};
use crate::function::Function;
use crate::layout::Layout;

/// A block or an instruction: something that can dominate or be dominated.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ProgramPoint {
    Block(Block),
    Inst(Inst),
}

impl From<Block> for ProgramPoint {
    fn from(b: Block) -> Self {
        ProgramPoint::Block(b)
    }
}

impl From<Inst> for ProgramPoint {
    fn from(i: Inst) -> Self {
        ProgramPoint::Inst(i)
    }
}

const UNREACHABLE: u32 = 0;

/// Immediate dominators and reverse postorder of a function's blocks.
#[derive(Clone, Debug, Default)]
pub struct DominatorTree {
    /// Reachable blocks in reverse postorder; `rpo[0]` is the entry.
    rpo: Vec<Block>,
    /// Per block number: 1 + its index in `rpo`, or `UNREACHABLE`.
    rpo_num: Vec<u32>,
    /// Per block number: the immediate dominator (none for the entry and unreachable blocks).
    idom: Vec<Option<Block>>,
    /// Per instruction number: its position in layout order when the tree was computed.
    inst_seq: Vec<u32>,
    /// Per block number: entry and exit times of the depth-first walk of the tree
    /// (`enter < exit` for reachable blocks; both 0 for unreachable ones).
    enter: Vec<u32>,
    exit: Vec<u32>,
    /// Working memory of [`DominatorTree::compute_into`], kept for the next function.
    scratch: Scratch,
}

/// The temporary lists of one computation (their contents never carry over).
#[derive(Clone, Debug, Default)]
struct Scratch {
    visited: Vec<bool>,
    /// (block, index of its next successor or child to visit)
    stack: Vec<(Block, usize)>,
    num: Vec<u32>,
    vertex: Vec<Block>,
    parent: Vec<u32>,
    semi: Vec<u32>,
    label: Vec<u32>,
    ancestor: Vec<u32>,
    path: Vec<u32>,
    idom: Vec<u32>,
    start: Vec<u32>,
    fill: Vec<u32>,
    children: Vec<Block>,
}

impl DominatorTree {
    /// Compute the tree for `func` with its control-flow graph `cfg`.
    pub fn compute(func: &Function, cfg: &ControlFlowGraph) -> Self {
        let mut tree = DominatorTree::default();
        tree.compute_into(func, cfg);
        tree
    }

    /// [`DominatorTree::compute`] into `self`, reusing its memory.
    pub fn compute_into(&mut self, func: &Function, cfg: &ControlFlowGraph) {
        let n = func.dfg.num_blocks();
        self.rpo.clear();
        refill(&mut self.rpo_num, n, UNREACHABLE);
        refill(&mut self.idom, n, None);
        refill(&mut self.inst_seq, func.dfg.num_insts(), 0);
        refill(&mut self.enter, n, 0);
        refill(&mut self.exit, n, 0);
        let mut seq = 0u32;
        for &b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                if let Some(slot) = self.inst_seq.get_mut(i.index()) {
                    *slot = seq;
                }
                seq += 1;
            }
        }
        let Some(entry) = func.layout.entry_block().filter(|e| e.index() < n) else {
            return;
        };
        self.compute_rpo(entry, cfg);
        self.compute_idoms(entry, cfg);
        self.number_tree();
    }

    /// Entry/exit times of a depth-first walk of the dominator tree (children grouped by
    /// a counting sort on their idom).
    fn number_tree(&mut self) {
        let n = self.idom.len();
        let Scratch {
            start,
            fill,
            children,
            stack,
            ..
        } = &mut self.scratch;
        refill(start, n + 1, 0);
        for d in self.idom.iter().flatten() {
            start[d.index() + 1] += 1;
        }
        for b in 0..n {
            start[b + 1] += start[b];
        }
        fill.clone_from(start);
        refill(children, start[n] as usize, Block::new(0));
        for &b in &self.rpo {
            if let Some(d) = self.idom[b.index()] {
                children[fill[d.index()] as usize] = b;
                fill[d.index()] += 1;
            }
        }
        let Some(&entry) = self.rpo.first() else {
            return;
        };
        let mut clock = 1u32;
        stack.clear();
        stack.push((entry, start[entry.index()] as usize));
        self.enter[entry.index()] = clock;
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            if next < start[b.index() + 1] as usize {
                top.1 += 1;
                let c = children[next];
                clock += 1;
                self.enter[c.index()] = clock;
                stack.push((c, start[c.index()] as usize));
            } else {
                clock += 1;
                self.exit[b.index()] = clock;
                stack.pop();
            }
        }
    }

    /// Depth-first search from the entry; postorder reversed.
    fn compute_rpo(&mut self, entry: Block, cfg: &ControlFlowGraph) {
        let Scratch { visited, stack, .. } = &mut self.scratch;
        refill(visited, self.rpo_num.len(), false);
        let post = &mut self.rpo;
        post.clear();
        stack.clear();
        stack.push((entry, 0));
        visited[entry.index()] = true;
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            if let Some(&s) = cfg.successors(b).get(next) {
                top.1 += 1;
                if s.index() < visited.len() && !visited[s.index()] {
                    visited[s.index()] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        for (i, &b) in post.iter().enumerate() {
            self.rpo_num[b.index()] = i as u32 + 1;
        }
    }

    /// Immediate dominators by Semi-NCA (Georgiadis): semidominators from one depth-first
    /// preorder with path-compressed evaluation, then each idom as the nearest ancestor of
    /// the tree parent whose number is at most the semidominator. O(edges · log blocks),
    /// where the fixpoint it replaces was quadratic when many blocks branch to one.
    fn compute_idoms(&mut self, entry: Block, cfg: &ControlFlowGraph) {
        const NONE: u32 = u32::MAX;
        let nb = self.rpo_num.len();
        let Scratch {
            stack,
            num,
            vertex,
            parent,
            semi,
            label,
            ancestor,
            path,
            idom,
            ..
        } = &mut self.scratch;
        // Preorder numbering from the entry; `parent` is the depth-first tree.
        refill(num, nb, NONE);
        vertex.clear();
        parent.clear();
        stack.clear();
        stack.push((entry, 0));
        num[entry.index()] = 0;
        vertex.push(entry);
        parent.push(0);
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            if let Some(&s) = cfg.successors(b).get(next) {
                top.1 += 1;
                if s.index() < nb && num[s.index()] == NONE {
                    num[s.index()] = vertex.len() as u32;
                    vertex.push(s);
                    parent.push(num[b.index()]);
                    stack.push((s, 0));
                }
            } else {
                stack.pop();
            }
        }
        let n = vertex.len();
        // `ancestor[v]` is `v`'s link in the forest of processed vertices: a vertex is linked
        // to its tree parent once processed, i.e. when its number exceeds the current `w`.
        semi.clear();
        semi.extend(0..n as u32);
        label.clone_from(semi);
        ancestor.clone_from(parent);
        path.clear();
        for w in (1..n as u32).rev() {
            for p in cfg.predecessors(vertex[w as usize]) {
                let Some(&v) = num.get(p.block.index()).filter(|&&v| v != NONE) else {
                    continue; // unreachable predecessors do not constrain dominance
                };
                // eval(v): `v` itself if unprocessed, else the vertex of least semi on
                // its forest path (compressing the path on the way).
                let u = if v <= w {
                    v
                } else {
                    let mut x = v;
                    while ancestor[x as usize] > w {
                        path.push(x);
                        x = ancestor[x as usize];
                    }
                    // Post-invariant: each vertex on the path links straight to the root of
                    // its tree and labels the least-semi vertex between them.
                    while let Some(y) = path.pop() {
                        let a = ancestor[y as usize];
                        if a > w {
                            if semi[label[a as usize] as usize] < semi[label[y as usize] as usize] {
                                label[y as usize] = label[a as usize];
                            }
                            ancestor[y as usize] = ancestor[a as usize];
                        }
                    }
                    label[v as usize]
                };
                semi[w as usize] = semi[w as usize].min(semi[u as usize]);
            }
        }
        idom.clone_from(parent);
        for w in 1..n {
            let mut d = idom[w];
            while d > semi[w] {
                d = idom[d as usize];
            }
            idom[w] = d;
        }
        for w in 1..n {
            self.idom[vertex[w].index()] = Some(vertex[idom[w] as usize]);
        }
    }

    fn rpo_index(&self, b: Block) -> Option<usize> {
        match self.rpo_num.get(b.index()) {
            Some(&n) if n != UNREACHABLE => Some(n as usize - 1),
            _ => None,
        }
    }

    /// Reachable blocks in reverse postorder, entry first.
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index(b).is_some()
    }

    /// The immediate dominator of `b` (none for the entry and for unreachable blocks).
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom.get(b.index()).copied().flatten()
    }

    /// Does block `a` dominate block `b`? (Non-strict.) O(1).
    pub fn block_dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        let (Some(_), Some(_)) = (self.rpo_index(a), self.rpo_index(b)) else {
            return false;
        };
        self.enter[a.index()] <= self.enter[b.index()]
            && self.exit[b.index()] <= self.exit[a.index()]
    }

    /// Does `a` dominate `b`? (Non-strict; see the module contract.) `layout` must be the one
    /// the tree was computed from.
    pub fn dominates(
        &self,
        a: impl Into<ProgramPoint>,
        b: impl Into<ProgramPoint>,
        layout: &Layout,
    ) -> bool {
        let (a, b) = (a.into(), b.into());
        let (Some(ba), Some(bb)) = (point_block(a, layout), point_block(b, layout)) else {
            return false;
        };
        if ba != bb {
            return self.block_dominates(ba, bb);
        }
        match (a, b) {
            (ProgramPoint::Block(_), _) => true,
            (ProgramPoint::Inst(_), ProgramPoint::Block(_)) => false,
            (ProgramPoint::Inst(x), ProgramPoint::Inst(y)) => self.seq(x) <= self.seq(y),
        }
    }

    fn seq(&self, i: Inst) -> u32 {
        self.inst_seq.get(i.index()).copied().unwrap_or(u32::MAX)
    }
}

fn point_block(p: ProgramPoint, layout: &Layout) -> Option<Block> {
    match p {
        ProgramPoint::Block(b) => layout.is_block_inserted(b).then_some(b),
        ProgramPoint::Inst(i) => layout.inst_block(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::Value;
    use crate::instructions::{BlockCall, InstructionData};
    use crate::opcode::Opcode;
    use crate::pool::ValueList;
    use crate::types::Type;

    /// A function whose blocks are `0..n` in layout order with the given terminators:
    /// `edges[b]` lists the successors of block `b` (0 → return, 1 → jump, 2 → brif).
    fn shape(edges: &[&[u32]]) -> Function {
        let mut f = Function::default();
        let blocks: Vec<Block> = edges.iter().map(|_| f.dfg.make_block()).collect();
        let cond = f.dfg.append_block_param(blocks[0], Type::I32);
        for (b, succ) in edges.iter().enumerate() {
            f.layout.append_block(blocks[b]);
            let call = |s: u32| BlockCall {
                block: Block::from_u32(s),
                args: ValueList::EMPTY,
            };
            let data = match succ {
                [] => InstructionData::MultiAry {
                    opcode: Opcode::Return,
                    args: ValueList::EMPTY,
                },
                [s] => InstructionData::Jump {
                    opcode: Opcode::Jump,
                    destination: call(*s),
                },
                [s, t, ..] => InstructionData::Brif {
                    opcode: Opcode::Brif,
                    arg: cond,
                    blocks: [call(*s), call(*t)],
                },
            };
            let i = f.make_inst(data, Type::INVALID);
            f.layout.append_inst(i, blocks[b]);
        }
        f
    }

    fn b(n: u32) -> Block {
        Block::from_u32(n)
    }

    #[test]
    fn diamond_and_loop() {
        // 0 -> {1, 2}; 1 -> 3; 2 -> 3; 3 -> {4, 1}; 4 returns; 5 unreachable -> 3.
        let f = shape(&[&[1, 2], &[3], &[3], &[4, 1], &[], &[3]]);
        let cfg = ControlFlowGraph::compute(&f);
        assert_eq!(cfg.successors(b(0)), &[b(1), b(2)]);
        let preds: Vec<Block> = cfg.predecessors(b(3)).iter().map(|p| p.block).collect();
        assert_eq!(preds, [b(1), b(2), b(5)]);
        let dt = DominatorTree::compute(&f, &cfg);
        assert_eq!(dt.rpo()[0], b(0));
        assert_eq!(dt.idom(b(3)), Some(b(0)));
        assert_eq!(dt.idom(b(1)), Some(b(0)));
        assert_eq!(dt.idom(b(4)), Some(b(3)));
        assert_eq!(dt.idom(b(0)), None);
        assert!(!dt.is_reachable(b(5)));
        assert_eq!(dt.idom(b(5)), None);
        assert!(dt.block_dominates(b(0), b(4)));
        assert!(dt.block_dominates(b(3), b(4)));
        assert!(!dt.block_dominates(b(1), b(3)));
        assert!(!dt.block_dominates(b(5), b(3)));
        assert!(dt.block_dominates(b(5), b(5)));
        assert!(!dt.block_dominates(b(0), b(5)));
        // Out-of-range queries answer instead of panicking.
        assert!(!dt.block_dominates(b(0), b(99)));
        assert_eq!(dt.idom(b(99)), None);
        assert!(cfg.successors(b(99)).is_empty());
    }

    #[test]
    fn instructions_within_a_block() {
        let mut f = shape(&[&[]]);
        let entry = b(0);
        // Put two more instructions before the return by rebuilding block 0.
        let mut g = Function::default();
        let blk = g.dfg.make_block();
        g.layout.append_block(blk);
        let c = g.make_inst(
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm: 1,
            },
            Type::I32,
        );
        g.layout.append_inst(c, blk);
        let v: Value = g.dfg.first_result(c).unwrap();
        let add = g.make_inst(
            InstructionData::Binary {
                opcode: Opcode::Iadd,
                args: [v, v],
            },
            Type::I32,
        );
        g.layout.append_inst(add, blk);
        let cfg = ControlFlowGraph::compute(&g);
        let dt = DominatorTree::compute(&g, &cfg);
        assert!(dt.dominates(c, add, &g.layout));
        assert!(!dt.dominates(add, c, &g.layout));
        assert!(dt.dominates(c, c, &g.layout));
        assert!(dt.dominates(blk, add, &g.layout));
        assert!(!dt.dominates(add, blk, &g.layout));
        assert!(!dt.dominates(Inst::from_u32(77), add, &g.layout));
        // A function with no blocks has an empty tree.
        f.layout = Layout::new();
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        assert!(dt.rpo().is_empty() && !dt.is_reachable(entry));
    }

    #[test]
    fn irreducible_graph_converges() {
        // 0 -> {1, 2}; 1 -> 2; 2 -> 1: neither 1 nor 2 dominates the other.
        let f = shape(&[&[1, 2], &[2], &[1]]);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        assert_eq!(dt.idom(b(1)), Some(b(0)));
        assert_eq!(dt.idom(b(2)), Some(b(0)));
        assert!(!dt.block_dominates(b(1), b(2)));
    }

    #[test]
    fn dominance_by_numbering_matches_the_idom_chain() {
        // Pseudo-random CFGs of up to 40 blocks, some blocks unreachable.
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |m: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as u32
        };
        // One graph and one tree for every case: memory reused across functions of
        // varying sizes must not change any answer.
        let (mut cfg, mut dt) = (ControlFlowGraph::default(), DominatorTree::default());
        for _ in 0..200 {
            let n = 2 + next(39);
            let edges: Vec<Vec<u32>> = (0..n)
                .map(|_| match next(4) {
                    0 => vec![],
                    1 => vec![next(n)],
                    _ => vec![next(n), next(n)],
                })
                .collect();
            let refs: Vec<&[u32]> = edges.iter().map(|e| e.as_slice()).collect();
            let f = shape(&refs);
            cfg.compute_into(&f);
            dt.compute_into(&f, &cfg);
            let dt = &dt;
            let by_chain = |a: Block, mut x: Block| loop {
                if x == a {
                    return true;
                }
                match dt.idom(x) {
                    Some(d) => x = d,
                    None => return false,
                }
            };
            // Independent oracle: `a` dominates reachable `c` iff `c` cannot be reached
            // from the entry once `a` is removed.
            let reach_without = |skip: u32| {
                let mut seen = vec![false; n as usize];
                let mut stack = vec![];
                if skip != 0 {
                    seen[0] = true;
                    stack.push(0u32);
                }
                while let Some(x) = stack.pop() {
                    for &y in &edges[x as usize] {
                        if y != skip && !seen[y as usize] {
                            seen[y as usize] = true;
                            stack.push(y);
                        }
                    }
                }
                seen
            };
            let reachable = reach_without(u32::MAX);
            for a in 0..n {
                let without = reach_without(a);
                for c in 0..n {
                    if reachable[c as usize] && reachable[a as usize] {
                        let naive = a == c || !without[c as usize];
                        assert_eq!(
                            dt.block_dominates(b(a), b(c)),
                            naive,
                            "{edges:?}: {a} dom {c} (naive)"
                        );
                    }
                }
            }
            for a in 0..n {
                for c in 0..n {
                    let want = a == c
                        || (dt.is_reachable(b(a)) && dt.is_reachable(b(c)) && by_chain(b(a), b(c)));
                    assert_eq!(
                        dt.block_dominates(b(a), b(c)),
                        want,
                        "{edges:?}: {a} dom {c}"
                    );
                }
            }
        }
    }
}
