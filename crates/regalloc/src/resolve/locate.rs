//! Locations of vregs at positions, for resolution's lookups.
//!
//! Requires: the scan's final pieces (every piece allocated, each split vreg's list sorted
//! by start and cutting its lifetime into consecutive stretches).
//! Guarantees: [`Cursor::loc`] gives the allocation of the piece covering a live position.
//!
//! An unsplit vreg has one location, read from its interval. For split vregs,
//! [`SplitTable`] copies each piece's start and allocation into one flat list, grouped by
//! vreg, so that a lookup walks a few adjacent words instead of following piece indices
//! into intervals and their range vectors. A [`Cursor`] keeps, per split vreg, the entry of
//! its last lookup and only moves forward.
//!
//! [`Boundaries`] counts the pieces of split vregs starting at or before each position, so
//! that "does any split vreg change pieces between these two positions?" is O(1): when it
//! does not, every vreg live at both positions is in the same piece at both.
//!
//! Cost: building the table is O(pieces of split vregs); resetting a cursor is O(split
//! vregs); lookups at non-decreasing positions per vreg cost O(pieces) in all through one
//! cursor, plus O(1) each. Building the boundary counts is O(positions + pieces).

use crate::intervals::Built;
use crate::Allocation;

/// A piece of a split vreg: where it starts and where it lives.
#[derive(Clone, Copy)]
pub(super) struct PieceLoc {
    pub start: u32,
    pub alloc: Option<Allocation>,
}

/// The pieces of every split vreg, list `k` (as numbered by [`crate::intervals::Pieces`])
/// at `entries[first[k]..first[k + 1]]`.
#[derive(Default)]
pub(super) struct SplitTable {
    entries: Vec<PieceLoc>,
    first: Vec<u32>,
}

impl SplitTable {
    /// Refills the table from `built`'s split lists.
    pub fn refill(&mut self, built: &Built) {
        self.entries.clear();
        self.first.clear();
        for list in built.pieces.split_lists() {
            self.first.push(self.entries.len() as u32);
            self.entries.extend(list.iter().map(|&p| {
                let piece = &built.intervals[p as usize];
                PieceLoc {
                    start: piece.start(),
                    alloc: piece.alloc,
                }
            }));
        }
        self.first.push(self.entries.len() as u32);
    }
}

/// Per split vreg, the table entry found by its last lookup.
#[derive(Default)]
pub(super) struct Cursor {
    at: Vec<u32>,
}

impl Cursor {
    /// Points every split vreg at its first piece.
    pub fn reset(&mut self, table: &SplitTable) {
        self.at.clear();
        self.at
            .extend_from_slice(&table.first[..table.first.len().saturating_sub(1)]);
    }

    /// The location of vreg `v` at `pos`, where `v` is live; for a split vreg, `pos` is at
    /// least the start of the piece found by its previous lookup through this cursor.
    #[inline(always)]
    pub fn loc(
        &mut self,
        built: &Built,
        table: &SplitTable,
        v: u32,
        pos: u32,
    ) -> Option<Allocation> {
        match built.pieces.split_index(v as usize) {
            None => built.intervals.get(built.pieces.own(v as usize)?)?.alloc,
            Some(k) => self.split_piece(table, k, pos).alloc,
        }
    }

    /// The piece of split list `k` covering `pos` (see [`Cursor::loc`]).
    #[inline]
    pub fn split_piece(&mut self, table: &SplitTable, k: usize, pos: u32) -> PieceLoc {
        let end = table.first[k + 1] as usize;
        let mut i = self.at[k] as usize;
        while i + 1 < end && table.entries[i + 1].start <= pos {
            i += 1;
        }
        self.at[k] = i as u32;
        table.entries[i]
    }
}

/// Per position `p`, how many pieces of split vregs start at or before `p`.
#[derive(Default)]
pub(super) struct Boundaries {
    starts_upto: Vec<u32>,
}

impl Boundaries {
    /// Refills the counts from `table`, for positions below `num_positions`.
    pub fn refill(&mut self, table: &SplitTable, num_positions: usize) {
        let counts = &mut self.starts_upto;
        crate::reuse::refill(counts, num_positions + 1, 0);
        for piece in &table.entries {
            // A start past the last position changes nothing any lookup can see.
            if let Some(c) = counts.get_mut(piece.start as usize) {
                *c += 1;
            }
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            sum += *c;
            *c = sum;
        }
    }

    /// Whether a piece of a split vreg starts in `(lo, hi]` (`lo <= hi`).
    #[inline]
    pub fn any_between(&self, lo: u32, hi: u32) -> bool {
        let at = |p: u32| {
            let last = self.starts_upto.len() - 1;
            self.starts_upto[(p as usize).min(last)]
        };
        at(hi) != at(lo)
    }
}
