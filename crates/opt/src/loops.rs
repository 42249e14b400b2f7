//! Natural loops and their nesting, from the dominator tree's back edges.
//!
//! Contract. Requires the control-flow graph and dominator tree of the same function. A back
//! edge is an edge `b -> h` where `h` dominates `b`; the loop of header `h` is `h` with every
//! block that reaches one of its back edges' sources without passing `h`. Loops are found
//! innermost first (headers in reverse RPO), and a block belongs to its innermost loop;
//! each loop knows its parent. Unreachable blocks belong to no loop. Cost: O(blocks + edges)
//! for the forest (each block is claimed once, an inner loop is crossed through its
//! outermost known ancestor); `contains` is O(loop depth).

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::entity::SecondaryMap;
use kestrel_ir::Block;

/// A loop: its header and the loop immediately around it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loop {
    pub header: Block,
    pub parent: Option<usize>,
}

/// Every natural loop of a function.
pub(crate) struct LoopForest {
    pub loops: Vec<Loop>,
    /// Per block: its innermost loop, as an index into `loops`.
    innermost: SecondaryMap<Block, Option<usize>>,
}

impl LoopForest {
    pub fn compute(cfg: &ControlFlowGraph, domtree: &DominatorTree) -> Self {
        let mut forest = LoopForest {
            loops: Vec::new(),
            innermost: SecondaryMap::new(),
        };
        for &h in domtree.rpo().iter().rev() {
            let latches: Vec<Block> = cfg
                .predecessors(h)
                .iter()
                .map(|p| p.block)
                .filter(|&b| domtree.is_reachable(b) && domtree.block_dominates(h, b))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let id = forest.loops.len();
            forest.loops.push(Loop {
                header: h,
                parent: None,
            });
            forest.innermost[h] = Some(id);
            let mut stack = latches;
            while let Some(b) = stack.pop() {
                let from = match forest.innermost[b] {
                    // Not yet in a loop: it is in this one.
                    None => {
                        forest.innermost[b] = Some(id);
                        b
                    }
                    // In an inner loop: its outermost ancestor so far nests in this one.
                    Some(inner) => {
                        let top = forest.outermost(inner);
                        if top == id {
                            continue;
                        }
                        forest.loops[top].parent = Some(id);
                        forest.loops[top].header
                    }
                };
                for p in cfg.predecessors(from) {
                    if p.block != h && domtree.is_reachable(p.block) {
                        stack.push(p.block);
                    }
                }
            }
        }
        forest
    }

    fn outermost(&self, mut l: usize) -> usize {
        while let Some(p) = self.loops[l].parent {
            l = p;
        }
        l
    }

    /// The innermost loop around `b`.
    pub fn innermost(&self, b: Block) -> Option<usize> {
        self.innermost[b]
    }

    /// Whether loop `l` contains block `b`.
    pub fn contains(&self, l: usize, b: Block) -> bool {
        let mut cur = self.innermost[b];
        while let Some(c) = cur {
            if c == l {
                return true;
            }
            cur = self.loops[c].parent;
        }
        false
    }
}
