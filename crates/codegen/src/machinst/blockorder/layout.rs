//! The loop-aware depth-first search that produces the block order (before cold sinking).
//!
//! # Contract
//!
//! Requires the branch slots of the function and, unless the layout ignores loops, its
//! [`LoopForest`]. Produces the postorder of a depth-first search over the virtual graph
//! (IR blocks and critical-edge blocks); its reverse is the layout.
//!
//! The search runs one level of the loop forest at a time. A *level* is the function, or a
//! loop entered through its header; the active levels form a chain, the loops around the
//! current block, innermost last. At block `u` a successor is
//! - *descended into* when it belongs to the innermost active level (a child loop is entered
//!   at its header, which opens that loop's level);
//! - *deferred* when it belongs to an outer active level `L`: it is an exit of the loop `C`
//!   that is `L`'s child on the chain, and is explored after all of `C`, as a successor of
//!   `C` seen as one node of `L`;
//! - *skipped* when it was visited, or when it enters a loop of an irreducible region
//!   elsewhere than at its header (it is reached from that header instead).
//!
//! An edge block goes where its destination goes, except that the edge block of a back edge
//! stays in the loop it closes.
//!
//! Guarantees:
//! - every node reachable from the entry finishes exactly once (every tree edge of the loop
//!   forest's own search is descended into or deferred, never skipped);
//! - within a level the order is the postorder of a depth-first search of that level's
//!   graph, in which a loop is one node whose successors are its exits; so a block's
//!   first slot that stays in the level tends to follow it, a loop's blocks are contiguous
//!   and follow its header, its exits come after it, and every block comes after its
//!   dominators (each block is discovered along a path from the entry, through them);
//! - without a loop forest every block is of the function level: the plain reverse
//!   postorder of seed 000.
//!
//! Cost: O(blocks + edges): each node is entered once, each slot placed once, each deferred
//! exit taken once; a loop's finished blocks are spliced into its parent level as a linked
//! list in O(1), never copied.

use kestrel_ir::entity::EntityRef;
use kestrel_ir::Block;

use super::loops::LoopForest;
use super::{Node, Slots};

/// End of a linked list (of finished nodes or of deferred exits).
const NIL: u32 = u32::MAX;

/// A linked list of finished nodes, in postorder.
#[derive(Copy, Clone)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY: List = List {
    head: NIL,
    tail: NIL,
};

/// An active level: the function (`header: None`) or an open loop.
struct Level {
    header: Option<Block>,
    /// Its finished nodes, in postorder.
    finished: List,
    /// Head of its deferred exits (LIFO: the first exit found is explored last, so it comes
    /// right after the loop).
    exits: u32,
}

#[derive(Copy, Clone)]
enum State {
    /// An edge block, or a block that heads no loop.
    Plain,
    /// A header whose loop level is open.
    LoopOpen,
    /// A header whose loop is finished (`body`, header last), now exploring its exits.
    LoopClosed { body: List, exits: u32 },
}

struct Frame {
    node: Node,
    /// Slots not yet placed; taken from the last down, so the first finishes last.
    remaining: usize,
    state: State,
}

/// What to do with a successor.
enum Place {
    Descend,
    /// Defer as an exit of the loop at this index of the active chain.
    Defer(usize),
    Skip,
}

/// Working memory of [`LayoutSearch::run`], kept between functions.
#[derive(Default)]
pub(super) struct LayoutSearch {
    visited: Vec<bool>,
    /// Finished nodes with the link to the next one of their list.
    finished: Vec<(Node, u32)>,
    /// Deferred exits with the link to the next one.
    deferred: Vec<(Node, u32)>,
    levels: Vec<Level>,
    frames: Vec<Frame>,
}

impl LayoutSearch {
    /// Refill `postorder` with the search's postorder from `entry` (see the contract).
    pub(super) fn run(
        &mut self,
        slots: &Slots,
        loops: Option<&LoopForest>,
        entry: Block,
        postorder: &mut Vec<Node>,
    ) {
        self.visited.clear();
        self.visited.resize(slots.incoming.len(), false);
        self.finished.clear();
        self.deferred.clear();
        self.levels.clear();
        self.frames.clear();
        self.levels.push(Level {
            header: None,
            finished: EMPTY,
            exits: NIL,
        });
        self.enter(slots, loops, Node::Block(entry));
        while let Some(top) = self.frames.last_mut() {
            if top.remaining > 0 {
                top.remaining -= 1;
                let (next, to) = match top.node {
                    Node::Block(b) => {
                        let s = slots.range(b).start + top.remaining;
                        match slots.is_critical(b, s) {
                            // An edge block has one predecessor (this slot): never seen before.
                            true => (Node::Edge(b, s), slots.to[s]),
                            false => (Node::Block(slots.to[s]), slots.to[s]),
                        }
                    }
                    Node::Edge(_, s) => (Node::Block(slots.to[s]), slots.to[s]),
                };
                match self.place(loops, next, to) {
                    Place::Descend => self.enter(slots, loops, next),
                    Place::Defer(at) => {
                        let level = &mut self.levels[at];
                        self.deferred.push((next, level.exits));
                        level.exits = self.deferred.len() as u32 - 1;
                    }
                    Place::Skip => {}
                }
                continue;
            }
            match top.state {
                State::LoopOpen => {
                    // The loop's blocks are all finished: close its level, header last.
                    let level = self.levels.pop().expect("an open loop has a level");
                    let mut body = level.finished;
                    append(&mut self.finished, &mut body, top.node);
                    top.state = State::LoopClosed {
                        body,
                        exits: level.exits,
                    };
                }
                State::LoopClosed { body, exits } if exits != NIL => {
                    // Post-invariant: the exits were deferred to this loop because they
                    // belong to the level now innermost, so they are descended into here.
                    let (next, rest) = self.deferred[exits as usize];
                    top.state = State::LoopClosed { body, exits: rest };
                    let seen = matches!(next, Node::Block(b) if self.visited[b.index()]);
                    if !seen {
                        self.enter(slots, loops, next);
                    }
                }
                State::LoopClosed { body, .. } => {
                    self.frames.pop();
                    let level = self.levels.last_mut().expect("the function level");
                    splice(&mut self.finished, &mut level.finished, body);
                }
                State::Plain => {
                    let node = top.node;
                    self.frames.pop();
                    let level = self.levels.last_mut().expect("the function level");
                    append(&mut self.finished, &mut level.finished, node);
                }
            }
        }
        debug_assert_eq!(self.levels.len(), 1, "every loop level is closed");
        postorder.clear();
        postorder.reserve(self.finished.len());
        let mut at = self.levels[0].finished.head;
        while at != NIL {
            postorder.push(self.finished[at as usize].0);
            at = self.finished[at as usize].1;
        }
    }

    /// Push a frame for `node`, opening its loop level if it is a header.
    fn enter(&mut self, slots: &Slots, loops: Option<&LoopForest>, node: Node) {
        let (remaining, state) = match node {
            Node::Block(b) => {
                self.visited[b.index()] = true;
                let heads_loop = loops.is_some_and(|l| l.is_header(b));
                if heads_loop {
                    self.levels.push(Level {
                        header: Some(b),
                        finished: EMPTY,
                        exits: NIL,
                    });
                }
                let state = if heads_loop {
                    State::LoopOpen
                } else {
                    State::Plain
                };
                (slots.range(b).len(), state)
            }
            Node::Edge(..) => (1, State::Plain),
        };
        self.frames.push(Frame {
            node,
            remaining,
            state,
        });
    }

    /// Where successor `next` (a block, or the edge block of a slot to `to`) goes.
    fn place(&self, loops: Option<&LoopForest>, next: Node, to: Block) -> Place {
        let Some(loops) = loops else {
            return match next {
                Node::Block(b) if self.visited[b.index()] => Place::Skip,
                _ => Place::Descend,
            };
        };
        let innermost = self.levels.last().expect("the function level").header;
        let on_chain = |level: Option<Block>| {
            let d = loops.depth(level);
            d < self.levels.len() && self.levels[d].header == level
        };
        // The level the successor belongs to; a back edge's block stays in its loop.
        let level = match next {
            Node::Block(b) if self.visited[b.index()] => return Place::Skip,
            Node::Edge(..) if loops.is_header(to) && on_chain(Some(to)) => Some(to),
            _ => loops.level(to),
        };
        if level == innermost {
            Place::Descend
        } else if on_chain(level) {
            Place::Defer(loops.depth(level) + 1)
        } else if matches!(next, Node::Edge(..)) {
            // An irreducible entry's edge block: placed here, its destination skipped.
            Place::Descend
        } else {
            Place::Skip
        }
    }
}

/// Append `node` to `list`.
fn append(finished: &mut Vec<(Node, u32)>, list: &mut List, node: Node) {
    let at = finished.len() as u32;
    finished.push((node, NIL));
    if list.head == NIL {
        list.head = at;
    } else {
        finished[list.tail as usize].1 = at;
    }
    list.tail = at;
}

/// Move the nodes of `other` to the end of `list`.
fn splice(finished: &mut [(Node, u32)], list: &mut List, other: List) {
    if other.head == NIL {
        return;
    }
    if list.head == NIL {
        list.head = other.head;
    } else {
        finished[list.tail as usize].1 = other.head;
    }
    list.tail = other.tail;
}
