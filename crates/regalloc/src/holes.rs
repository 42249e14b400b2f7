//! The scan's intervals in lifetime holes: when each comes back, and which registers their
//! later ranges occupy.
//!
//! Requires: the scan's register guarantee (two intervals holding one register never
//! overlap, except a reuse def and its dying input at the def's first position), so the
//! ranges recorded for one register, ordered by start, also have non-decreasing ends.
//!
//! Guarantees: [`Holes::next_woken`] hands back every inactive interval once the scan
//! reaches the start of its next range; [`Holes::meets`] and [`Holes::owners_meeting`]
//! answer whether, and which, recorded intervals of a register are live somewhere in a
//! list of ranges at or after the scan's position.
//!
//! Cost: an interval's ranges are recorded once, when it first enters a hole (intervals
//! without holes never are), and each is removed at most once when a split cuts it off:
//! O(log) per range. Waking is O(log) per hole passed. A query is O(log) per range asked
//! about ([`Holes::meets`]), plus O(1) per range found ([`Holes::owners_meeting`]): no
//! scan step visits every interval in a hole, so a function whose early exits keep
//! thousands of values in holes costs O(log) per interval, not O(intervals).
//!
//! Invariant (I): a recorded interval's ranges after the scan's position are in its
//! register's map exactly as the interval has them, unless the interval has ended or
//! lost its register (its entries are then removed). Ranges before the position may stay:
//! every query asks about ranges at or after it, which they cannot meet.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use smallvec::SmallVec;

use crate::intervals::Range;

/// Per interval index: recorded (its ranges are in a map) and active (in a register and
/// covering the scan's position).
const RECORDED: u8 = 1;
const ACTIVE: u8 = 2;

#[derive(Default)]
pub(crate) struct Holes {
    /// Per register (by place in the class's list): the recorded ranges, keyed by
    /// `(start, interval)`, to their end.
    by_reg: Vec<BTreeMap<(u32, u32), u32>>,
    /// Inactive intervals by the start of their next range: `(wake, interval)`.
    wakes: BinaryHeap<Reverse<(u32, u32)>>,
    /// Per register, how many intervals in `wakes` hold it.
    inactive: Vec<u32>,
    /// Bit k: `inactive[k] > 0`.
    pub inactive_mask: u64,
    /// Per interval index: `RECORDED | ACTIVE` bits.
    state: Vec<u8>,
    /// Work done: map entries inserted, removed or visited, wakes pushed and popped.
    pub steps: u64,
}

impl Holes {
    /// Empties every structure for a scan over `regs` registers (keeping the buffers).
    pub fn reset(&mut self, regs: usize) {
        self.by_reg
            .resize_with(regs.max(self.by_reg.len()), BTreeMap::new);
        for map in &mut self.by_reg {
            map.clear();
        }
        self.wakes.clear();
        crate::reuse::refill(&mut self.inactive, regs, 0);
        self.inactive_mask = 0;
        self.state.clear();
        self.steps = 0;
    }

    #[inline]
    fn state_mut(&mut self, idx: u32) -> &mut u8 {
        let i = idx as usize;
        if i >= self.state.len() {
            self.state.resize(i + 1, 0);
        }
        &mut self.state[i]
    }

    /// Whether interval `idx` is active.
    #[inline]
    pub fn is_active(&self, idx: u32) -> bool {
        self.state
            .get(idx as usize)
            .is_some_and(|s| s & ACTIVE != 0)
    }

    #[inline]
    pub fn set_active(&mut self, idx: u32, on: bool) {
        let s = self.state_mut(idx);
        if on {
            *s |= ACTIVE;
        } else {
            *s &= !ACTIVE;
        }
    }

    /// Interval `idx`, holding register `reg`, enters a hole until `wake`; `later` are its
    /// ranges from `wake` on (recorded the first time only: invariant (I) keeps them).
    pub fn enter_hole(&mut self, idx: u32, reg: usize, wake: u32, later: &[Range]) {
        let s = self.state_mut(idx);
        if *s & RECORDED == 0 {
            *s |= RECORDED;
            let map = &mut self.by_reg[reg];
            for r in later {
                map.insert((r.from, idx), r.to);
            }
            self.steps += later.len() as u64;
        }
        self.inactive[reg] += 1;
        self.inactive_mask |= 1 << reg;
        self.wakes.push(Reverse((wake, idx)));
        self.steps += 1;
    }

    /// An inactive interval whose next range starts at or before `pos`, taken out of the
    /// wake queue (the caller puts it back with [`Holes::requeue`] or releases it with
    /// [`Holes::leave`]).
    pub fn next_woken(&mut self, pos: u32) -> Option<u32> {
        match self.wakes.peek() {
            Some(&Reverse((wake, idx))) if wake <= pos => {
                self.wakes.pop();
                self.steps += 1;
                Some(idx)
            }
            _ => None,
        }
    }

    /// Puts a woken interval back: its next range starts at `wake`.
    pub fn requeue(&mut self, idx: u32, wake: u32) {
        self.wakes.push(Reverse((wake, idx)));
        self.steps += 1;
    }

    /// A woken interval holding `reg` is no longer inactive (ended or active again).
    pub fn leave(&mut self, reg: usize) {
        self.inactive[reg] -= 1;
        if self.inactive[reg] == 0 {
            self.inactive_mask &= !(1 << reg);
        }
    }

    /// Interval `idx` of register `reg` loses its ranges from `pos` on (a split there; `tail`
    /// are its ranges that end after `pos`, before the split). Post-invariant (I): its
    /// entries are what the interval keeps.
    pub fn cut(&mut self, idx: u32, reg: usize, pos: u32, tail: &[Range]) {
        if self
            .state
            .get(idx as usize)
            .is_none_or(|s| s & RECORDED == 0)
        {
            return;
        }
        let map = &mut self.by_reg[reg];
        for r in tail {
            self.steps += 1;
            if r.from >= pos {
                map.remove(&(r.from, idx));
            } else if let Some(to) = map.get_mut(&(r.from, idx)) {
                *to = pos;
            }
        }
    }

    /// Interval `idx` of register `reg` gives up its register entirely (`ranges`: all of
    /// them). Post-invariant (I): none of its entries is left.
    pub fn forget(&mut self, idx: u32, reg: usize, ranges: &[Range]) {
        self.cut(idx, reg, 0, ranges);
        *self.state_mut(idx) &= !RECORDED;
    }

    /// Whether an interval recorded for `reg`, other than `skip`, is live somewhere in
    /// `ranges` (all at or after the scan's position).
    ///
    /// Per range `[s, e)`: the entry with the greatest start before `e` meets it exactly
    /// when it ends after `s` (ends do not decrease with starts, see the Requires). The one
    /// exception to disjointness, a dying input stolen by the def (`skip`), can only meet the
    /// def's first range, and no other entry before it can then reach that far.
    pub fn meets(&mut self, reg: usize, ranges: &[Range], skip: Option<u32>) -> bool {
        let map = &self.by_reg[reg];
        self.steps += ranges.len() as u64;
        ranges.iter().any(|r| {
            map.range(..(r.to, 0))
                .next_back()
                .is_some_and(|(&(_, owner), &to)| to > r.from && Some(owner) != skip)
        })
    }

    /// The recorded, inactive intervals of `reg` live somewhere in `ranges`, each once,
    /// into `out` (cleared first).
    pub fn owners_meeting(&mut self, reg: usize, ranges: &[Range], out: &mut SmallVec<[u32; 8]>) {
        out.clear();
        let map = &self.by_reg[reg];
        let mut steps = 0u64;
        for r in ranges {
            // The one entry starting before the range that may reach into it, then every
            // entry starting inside it.
            let before = map
                .range(..(r.from, 0))
                .next_back()
                .filter(|(_, &to)| to > r.from);
            let inside = map.range((r.from, 0)..(r.to, 0));
            for (&(_, owner), _) in before.into_iter().chain(inside) {
                steps += 1;
                if !self.is_active(owner) {
                    out.push(owner);
                }
            }
        }
        self.steps += steps;
        out.sort_unstable();
        out.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(from: u32, to: u32) -> Range {
        Range { from, to }
    }

    #[test]
    fn wakes_in_order_and_answers_overlaps_from_recorded_ranges() {
        let mut h = Holes::default();
        h.reset(2);
        // Interval 7 in register 0 comes back at 40 and 80; interval 9 in register 1 at 20.
        h.enter_hole(7, 0, 40, &[r(40, 50), r(80, 90)]);
        h.enter_hole(9, 1, 20, &[r(20, 30)]);
        assert_eq!(h.inactive_mask, 0b11);
        assert!(h.meets(0, &[r(45, 46)], None));
        assert!(h.meets(0, &[r(10, 20), r(85, 100)], None));
        assert!(
            !h.meets(0, &[r(50, 80), r(90, 95)], None),
            "the hole and the end are free"
        );
        assert!(
            !h.meets(0, &[r(45, 46)], Some(7)),
            "the stolen input is skipped"
        );
        let mut owners = SmallVec::new();
        h.owners_meeting(0, &[r(0, 100)], &mut owners);
        assert_eq!(&owners[..], &[7]);
        // Waking: 9 first (at 20), then 7 (at 40); nothing before its wake.
        assert_eq!(h.next_woken(19), None);
        assert_eq!(h.next_woken(25), Some(9));
        h.leave(1);
        assert_eq!(h.inactive_mask, 0b01);
        assert_eq!(h.next_woken(25), None);
        assert_eq!(h.next_woken(40), Some(7));
        h.requeue(7, 80);
        assert_eq!(h.next_woken(79), None);
    }

    #[test]
    fn cuts_and_forgets_keep_only_what_the_interval_keeps() {
        let mut h = Holes::default();
        h.reset(1);
        h.enter_hole(3, 0, 10, &[r(10, 20), r(30, 40), r(50, 60)]);
        // A split at 35: the range 30..40 ends at 35, 50..60 goes.
        h.cut(3, 0, 35, &[r(30, 40), r(50, 60)]);
        assert!(h.meets(0, &[r(34, 35)], None));
        assert!(!h.meets(0, &[r(35, 100)], None));
        // An active interval found in a map is not an owner in a hole.
        h.set_active(3, true);
        let mut owners = SmallVec::new();
        h.owners_meeting(0, &[r(0, 100)], &mut owners);
        assert!(owners.is_empty());
        h.set_active(3, false);
        h.forget(3, 0, &[r(10, 20), r(30, 35)]);
        assert!(!h.meets(0, &[r(0, 100)], None));
        // Unrecorded intervals are not touched by a cut.
        h.cut(4, 0, 0, &[r(0, 100)]);
        assert!(h.steps > 0);
    }
}
