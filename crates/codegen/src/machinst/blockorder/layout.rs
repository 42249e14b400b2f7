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
//! *Rotation* (when asked for): a loop whose header exits it, has exactly one back edge,
//! and whose last finished block is that back edge's source (the *latch*, or its edge
//! block), is laid out with its header last instead of first. The latch then falls through
//! into the header, whose branch back to the body is the loop's one taken branch per
//! iteration, where the unrotated loop took the latch's jump and then fell through the
//! header's test; the loop is entered by one jump to its header. A loop with several back
//! edges stays unrotated (its other latches would pay a second taken branch), and so does
//! a self-loop (its branch back to itself is already its only taken branch).
//!
//! Guarantees:
//! - every node reachable from the entry finishes exactly once (every tree edge of the loop
//!   forest's own search is descended into or deferred, never skipped);
//! - within a level the order is the postorder of a depth-first search of that level's
//!   graph, in which a loop is one node whose successors are its exits; so a block's
//!   first slot that stays in the level tends to follow it, a loop's blocks are contiguous
//!   and follow its header (a rotated loop: end with it), its exits come after it, and
//!   every block comes after its dominators (each block is discovered along a path from
//!   the entry, through them), except the blocks of a rotated loop, which come before its
//!   header;
//! - the entry block is never a rotated header, so it comes first;
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
    /// Whether one of the header's own slots leaves the loop (was deferred).
    header_exits: bool,
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
    /// Whether loops are rotated (see the contract), for this run.
    rotate: bool,
    /// The entry block of this run (never rotated: it must come first).
    entry: Option<Block>,
}

impl LayoutSearch {
    /// Refill `postorder` with the search's postorder from `entry` (see the contract);
    /// `rotate` asks for loop rotation (it needs `loops`).
    pub(super) fn run(
        &mut self,
        slots: &Slots,
        loops: Option<&LoopForest>,
        entry: Block,
        rotate: bool,
        postorder: &mut Vec<Node>,
    ) {
        self.rotate = rotate;
        self.entry = Some(entry);
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
            header_exits: false,
        });
        self.enter(slots, loops, Node::Block(entry));
        while let Some(top) = self.frames.last_mut() {
            if top.remaining > 0 {
                top.remaining -= 1;
                // The frame of an open loop's header is below every other frame of its loop,
                // so when it is on top its level is the innermost one.
                let from_open_header = matches!(top.state, State::LoopOpen);
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
                        if from_open_header {
                            self.levels.last_mut().expect("the open loop").header_exits = true;
                        }
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
                    // The loop's blocks are all finished: close its level, header last in
                    // postorder (first in the layout), or first when the loop is rotated.
                    let level = self.levels.pop().expect("an open loop has a level");
                    let mut body = level.finished;
                    let header = top.node;
                    let rotates = self.rotate
                        && level.header_exits
                        && latch_ends(&self.finished, self.entry, slots, body, header);
                    if rotates {
                        prepend(&mut self.finished, &mut body, header);
                    } else {
                        append(&mut self.finished, &mut body, header);
                    }
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
                        header_exits: false,
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

/// Whether the loop of `header` (not the entry) has one back edge, whose source is the
/// last node of `body` in the layout (the first finished): the condition for rotation.
/// A header has at least one incoming slot from outside its loop, so two incoming slots
/// mean exactly one back edge. O(1).
fn latch_ends(
    finished: &[(Node, u32)],
    entry: Option<Block>,
    slots: &Slots,
    body: List,
    header: Node,
) -> bool {
    let Node::Block(h) = header else {
        return false;
    };
    if Some(h) == entry || body.head == NIL || slots.incoming[h.index()] != 2 {
        return false;
    }
    match finished[body.head as usize].0 {
        Node::Block(b) => {
            let range = slots.range(b);
            range.len() == 1 && slots.to[range.start] == h
        }
        // A self-loop's branch already goes straight back to its top once its edge block
        // is empty, and its values would be laid out live before their definitions.
        Node::Edge(from, s) => from != h && slots.to[s] == h,
    }
}

/// Put `node` at the front of `list`.
fn prepend(finished: &mut Vec<(Node, u32)>, list: &mut List, node: Node) {
    let at = finished.len() as u32;
    finished.push((node, list.head));
    if list.head == NIL {
        list.tail = at;
    }
    list.head = at;
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
