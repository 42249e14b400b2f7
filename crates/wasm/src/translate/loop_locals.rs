//! Loop-invariant locals: per `loop`, the locals its body reads but never assigns.
//!
//! Contract. [`LoopLocals`] is fed a function body's operators in order (validation does,
//! while it decodes them) and lists, per `loop` operator in the order they appear
//! (unreachable code included), the locals read anywhere inside the loop (nested code
//! included) and assigned nowhere inside it. The translator seeds each such local's value
//! at the loop header from the value on entry, so reads inside the loop stop at the header
//! instead of leaving an incomplete phi there, which sealing the header would resolve by
//! walking every back edge's path through the body only to find the phi trivial.
//!
//! Only the first [`MAX_TRACKED_LOCALS`] locals are tracked (a function rarely has more; the
//! others are simply not seeded), so each loop's bitsets have a bounded size.
//!
//! Cost: O(operators): each open loop keeps a read and a write bitset over the tracked
//! locals (at most 2 × 64 words), merged into the enclosing loop's when it ends.

use wasmparser::Operator;

/// Locals tracked per loop: a constant bound on each loop's bitsets, so that a body with
/// many loops and very many locals (declared in a few bytes) stays linear.
pub const MAX_TRACKED_LOCALS: usize = 4096;

/// See the module doc.
#[derive(Default)]
pub struct LoopLocals {
    /// Words per bitset (tracked locals / 64, rounded up).
    words: usize,
    /// Per loop, in the order of their `loop` operators: its range of `locals`.
    ranges: Vec<(u32, u32)>,
    locals: Vec<u32>,
    /// The open structured instructions: the loop index of each open `loop`, `None` for
    /// the others (the function body's own frame included).
    open: Vec<Option<u32>>,
    /// Per open loop, innermost last: its read bitset, then its write bitset.
    bits: Vec<u64>,
    /// Whether the lists describe a whole body (see [`LoopLocals::is_complete`]).
    complete: bool,
}

impl LoopLocals {
    /// Starts a body with `num_locals` locals (parameters included).
    pub fn begin(&mut self, num_locals: usize) {
        self.words = num_locals.min(MAX_TRACKED_LOCALS).div_ceil(64);
        self.ranges.clear();
        self.locals.clear();
        self.open.clear();
        self.open.push(None);
        self.bits.clear();
        self.complete = false;
    }

    /// Notes one operator of the body.
    #[inline]
    pub fn op(&mut self, op: &Operator) {
        match *op {
            Operator::Block { .. } | Operator::If { .. } => self.open.push(None),
            Operator::Loop { .. } => {
                self.open.push(Some(self.ranges.len() as u32));
                self.ranges.push((0, 0));
                self.bits.resize(self.bits.len() + 2 * self.words, 0);
            }
            Operator::End => {
                if let Some(Some(index)) = self.open.pop() {
                    self.close_loop(index as usize);
                }
                if self.open.is_empty() {
                    // The body's own `end`: every loop is closed.
                    self.complete = self.bits.is_empty();
                }
            }
            Operator::LocalGet { local_index } => self.mark(local_index, 0),
            Operator::LocalSet { local_index } | Operator::LocalTee { local_index } => {
                self.mark(local_index, self.words)
            }
            _ => {}
        }
    }

    /// Sets bit `local` of the innermost open loop's bitset at `offset` (0: reads,
    /// `words`: writes); nothing outside loops or for an untracked local.
    #[inline]
    fn mark(&mut self, local: u32, offset: usize) {
        let k = local as usize;
        if self.bits.is_empty() || k / 64 >= self.words {
            return;
        }
        let base = self.bits.len() - 2 * self.words + offset;
        self.bits[base + k / 64] |= 1 << (k % 64);
    }

    /// Lists loop `index`'s read-but-never-assigned locals and merges its sets into the
    /// enclosing loop's.
    fn close_loop(&mut self, index: usize) {
        let w = self.words;
        let own = self.bits.len() - 2 * w;
        let start = self.locals.len() as u32;
        for word in 0..w {
            let mut invariant = self.bits[own + word] & !self.bits[own + w + word];
            while invariant != 0 {
                self.locals
                    .push((word * 64) as u32 + invariant.trailing_zeros());
                invariant &= invariant - 1;
            }
        }
        self.ranges[index] = (start, self.locals.len() as u32);
        if own > 0 {
            // The enclosing loop reads and writes what this one does.
            let parent = own - 2 * w;
            for word in 0..2 * w {
                self.bits[parent + word] |= self.bits[own + word];
            }
        }
        self.bits.truncate(own);
    }

    /// Whether the operators noted since [`LoopLocals::begin`] were a whole body, every
    /// loop closed.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The locals loop `index` (in `loop` operator order) reads and never assigns.
    pub fn invariant(&self, index: usize) -> &[u32] {
        match self.ranges.get(index) {
            Some(&(lo, hi)) => &self.locals[lo as usize..hi as usize],
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LoopLocals;
    use wasmparser::{BlockType, Operator as O};

    #[test]
    fn reads_without_writes_are_listed_per_loop_nested_code_included() {
        let mut l = LoopLocals::default();
        l.begin(70);
        let ops = [
            O::LocalGet { local_index: 0 }, // outside any loop: ignored
            O::Loop {
                blockty: BlockType::Empty,
            }, // loop 0
            O::LocalGet { local_index: 1 },
            O::LocalGet { local_index: 2 },
            O::Block {
                blockty: BlockType::Empty,
            },
            O::Loop {
                blockty: BlockType::Empty,
            }, // loop 1
            O::LocalGet { local_index: 65 },
            O::LocalTee { local_index: 2 },
            O::LocalGet { local_index: 3 },
            O::End, // loop 1
            O::End, // block
            O::LocalSet { local_index: 3 },
            O::End, // loop 0
            O::Loop {
                blockty: BlockType::Empty,
            }, // loop 2: reads nothing
            O::End,
            O::End, // the body
        ];
        for op in &ops {
            l.op(op);
        }
        assert!(l.is_complete());
        // Loop 0 reads 1, 2, 3, 65 (65 through loop 1) and writes 2 (in loop 1) and 3.
        assert_eq!(l.invariant(0), [1, 65]);
        // Loop 1 reads 65, 3 and writes 2 (its read of 2 is the tee's, not a get).
        assert_eq!(l.invariant(1), [3, 65]);
        assert!(l.invariant(2).is_empty());
        assert!(l.invariant(3).is_empty());
    }

    #[test]
    fn locals_past_the_tracked_ones_are_never_listed() {
        let mut l = LoopLocals::default();
        l.begin(super::MAX_TRACKED_LOCALS + 10);
        let last = super::MAX_TRACKED_LOCALS as u32 - 1;
        for op in [
            O::Loop {
                blockty: BlockType::Empty,
            },
            O::LocalGet { local_index: last },
            O::LocalGet {
                local_index: last + 5,
            },
            O::End,
            O::End,
        ] {
            l.op(&op);
        }
        assert!(l.is_complete());
        assert_eq!(l.invariant(0), [last]);
    }

    #[test]
    fn an_unfinished_body_is_not_complete() {
        let mut l = LoopLocals::default();
        l.begin(1);
        l.op(&O::Loop {
            blockty: BlockType::Empty,
        });
        assert!(!l.is_complete());
    }
}
