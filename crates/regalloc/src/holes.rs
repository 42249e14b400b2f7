//! The scan's intervals in lifetime holes: when each comes back, and which registers their
//! later ranges occupy.
//!
//! Requires: the scan's register guarantee (two intervals holding one register never
//! overlap, except a reuse def and its dying input at the def's first position), so the
//! ranges recorded for one register, ordered by start, also have non-decreasing ends.
//!
//! Guarantees: [`Holes::next_woken`] hands back every inactive interval once the scan
//! reaches the start of its next range, in `(wake, index)` order; [`Holes::meeting_regs`]
//! and [`Holes::owners_in`] answer in which registers, and which, intervals in holes are
//! live somewhere in an interval that starts at the scan's position, and
//! [`Holes::lower_use_pos`] how soon each register is needed again by them. The answers do
//! not depend on which of the two forms below holds the intervals.
//!
//! Cost: while at most [`FLAT_LIMIT`] intervals wait at once, they sit in a flat list and
//! each call passes over it: O(1) per call (at most the bound), and nothing to fill or free
//! (most functions never leave this form). A query with no register to ask about, and a
//! wake query before the list's least wake (kept as the list changes), make no pass; a
//! use-position query searches an interval's ranges only when its wake and next use could
//! lower a register's position. From the first time more wait, for the rest of the scan, an
//! interval's ranges are recorded once, when it first enters a hole (or when the list
//! moves to the maps), and each is removed at most once when a split cuts it off: O(log)
//! per range. Waking is then O(log) per hole passed. A query is O(log) per range asked
//! about and register, plus O(1) per range found: no scan step visits every interval in a
//! hole, so a function whose early exits keep thousands of values in holes costs O(log)
//! per interval, not O(intervals).
//!
//! Invariant (I) (of the maps): a recorded interval's ranges after the scan's position are in its
//! register's map exactly as the interval has them, unless the interval has ended or
//! lost its register (its entries are then removed). Ranges before the position may stay:
//! every query asks about ranges at or after it, which they cannot meet.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::intervals::{next_reg_use, Built, Range};

/// Per interval index: recorded (its ranges are in a map) and active (in a register and
/// covering the scan's position).
const RECORDED: u8 = 1;
const ACTIVE: u8 = 2;

/// While a scan has at most this many intervals in holes at once, they are kept in a flat
/// list and each query passes over all of them (O(1) per query: the common case, with no
/// map to fill); the first time more wait at once, they move to the maps for the rest of
/// the scan. Measured on the sqlite3 corpus (callgrind, the allocator's instructions): at
/// 32 the allocator took 3.3% more than at 128; at 512 and unbounded, 0.07% less.
const FLAT_LIMIT: usize = 128;

/// The steps one pass over the flat list counts: its bound, not its length, so the count
/// is an upper bound on the entries visited and a constant per call (a list that grows
/// with the function up to the bound is no growth in the cost per call).
const FLAT_PASS: u64 = FLAT_LIMIT as u64;

/// An interval in a hole while the list is flat: its register and the start of its next
/// range.
#[derive(Clone, Copy)]
struct Waiting {
    idx: u32,
    wake: u32,
    reg: u8,
}

#[derive(Default)]
pub(crate) struct Holes {
    /// Whether the maps and the wake queue are in use (else `flat`).
    mapped: bool,
    /// The inactive intervals while at most [`FLAT_LIMIT`] (none once `mapped`).
    flat: Vec<Waiting>,
    /// At most the least wake in `flat` (`u32::MAX` when it is empty): before it, nothing
    /// wakes and [`Holes::next_woken`] needs no pass.
    flat_min_wake: u32,
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
    /// Owners found by one register's query (working memory of `lower_use_pos`).
    found: Vec<(u32, u32)>,
    /// Work done: list passes (at [`FLAT_PASS`] each), map entries inserted, removed or
    /// visited, wakes pushed and popped.
    pub steps: u64,
}

impl Holes {
    /// Empties every structure for a scan over `regs` registers (keeping the buffers).
    pub fn reset(&mut self, regs: usize) {
        if self.mapped {
            for map in &mut self.by_reg {
                map.clear();
            }
            self.wakes.clear();
        }
        if self.by_reg.len() < regs {
            self.by_reg.resize_with(regs, BTreeMap::new);
        }
        self.mapped = false;
        self.flat.clear();
        self.flat_min_wake = u32::MAX;
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

    /// Whether the maps hold the intervals (else the flat list).
    #[inline]
    pub fn is_mapped(&self) -> bool {
        self.mapped
    }

    /// Whether interval `idx` is active.
    #[inline]
    pub fn is_active(&self, idx: u32) -> bool {
        self.state
            .get(idx as usize)
            .is_some_and(|s| s & ACTIVE != 0)
    }

    /// Records whether interval `idx` is active. Only the maps' queries read it, so while
    /// the list is flat nothing is written (the move to the maps marks the active ones).
    #[inline]
    pub fn set_active(&mut self, idx: u32, on: bool) {
        if !self.mapped {
            return;
        }
        let s = self.state_mut(idx);
        if on {
            *s |= ACTIVE;
        } else {
            *s &= !ACTIVE;
        }
    }

    /// Records `idx`'s ranges from `wake` on in `reg`'s map, the first time only
    /// (invariant (I) keeps them).
    fn record(&mut self, idx: u32, reg: usize, wake: u32, built: &Built) {
        let s = self.state_mut(idx);
        if *s & RECORDED == 0 {
            *s |= RECORDED;
            let ranges = built.ranges_of(&built.intervals[idx as usize]);
            let later = &ranges[ranges.partition_point(|r| r.from < wake)..];
            let map = &mut self.by_reg[reg];
            for r in later {
                map.insert((r.from, idx), r.to);
            }
            self.steps += later.len() as u64;
        }
    }

    /// Interval `idx`, holding register `reg`, enters a hole until `wake`; `active` lists
    /// the active intervals (read only when the list moves to the maps).
    pub fn enter_hole(
        &mut self,
        idx: u32,
        reg: usize,
        wake: u32,
        built: &Built,
        active: impl Iterator<Item = u32>,
    ) {
        self.inactive[reg] += 1;
        self.inactive_mask |= 1 << reg;
        self.steps += 1;
        if !self.mapped {
            if self.flat.len() < FLAT_LIMIT {
                self.push_flat(idx, reg, wake);
                return;
            }
            // Too many at once: the waiting ones move to the maps. An interval in a hole
            // covers no position between the scan's and its wake, so its ranges from the
            // wake on are all it has left.
            self.mapped = true;
            for a in active {
                self.set_active(a, true);
                self.steps += 1;
            }
            let flat = std::mem::take(&mut self.flat);
            for w in &flat {
                self.record(w.idx, w.reg as usize, w.wake, built);
                self.wakes.push(Reverse((w.wake, w.idx)));
            }
            self.steps += flat.len() as u64;
            self.flat = flat;
            self.flat.clear();
        }
        self.record(idx, reg, wake, built);
        self.wakes.push(Reverse((wake, idx)));
    }

    /// An inactive interval whose next range starts at or before `pos`, the one with the
    /// least `(wake, index)`, taken out (the caller puts it back with [`Holes::requeue`] or
    /// releases it with [`Holes::leave`]).
    #[inline]
    pub fn next_woken(&mut self, pos: u32) -> Option<u32> {
        if !self.mapped && pos < self.flat_min_wake {
            // Every waiting interval wakes later (an O(1) answer, within the step the scan
            // counts for the interval it takes).
            return None;
        }
        self.next_woken_by_search(pos)
    }

    /// [`Holes::next_woken`] when something may have woken.
    #[inline(never)]
    fn next_woken_by_search(&mut self, pos: u32) -> Option<u32> {
        if !self.mapped {
            // One pass: the least woken `(wake, index)`, and the least wake of the others
            // (post-condition: `flat_min_wake` is exact for the list that stays).
            self.steps += FLAT_PASS;
            let mut woken: Option<usize> = None;
            let mut rest_min = u32::MAX;
            for (k, w) in self.flat.iter().enumerate() {
                let earlier = |b: usize| (w.wake, w.idx) < (self.flat[b].wake, self.flat[b].idx);
                if w.wake <= pos && woken.is_none_or(earlier) {
                    if let Some(b) = woken {
                        rest_min = rest_min.min(self.flat[b].wake);
                    }
                    woken = Some(k);
                } else {
                    rest_min = rest_min.min(w.wake);
                }
            }
            self.flat_min_wake = rest_min;
            return woken.map(|k| self.flat.swap_remove(k).idx);
        }
        match self.wakes.peek() {
            Some(&Reverse((wake, idx))) if wake <= pos => {
                self.wakes.pop();
                self.steps += 1;
                Some(idx)
            }
            _ => None,
        }
    }

    /// Puts a woken interval, holding `reg`, back: its next range starts at `wake`.
    pub fn requeue(&mut self, idx: u32, reg: usize, wake: u32) {
        self.steps += 1;
        if self.mapped {
            self.wakes.push(Reverse((wake, idx)));
        } else {
            self.push_flat(idx, reg, wake);
        }
    }

    /// Adds `idx` of `reg`, waking at `wake`, to the flat list. Post-condition:
    /// `flat_min_wake` is at most every wake in the list.
    fn push_flat(&mut self, idx: u32, reg: usize, wake: u32) {
        self.flat.push(Waiting {
            idx,
            wake,
            reg: reg as u8,
        });
        self.flat_min_wake = self.flat_min_wake.min(wake);
    }

    /// A woken interval holding `reg` is no longer inactive (ended or active again).
    pub fn leave(&mut self, reg: usize) {
        self.inactive[reg] -= 1;
        if self.inactive[reg] == 0 {
            self.inactive_mask &= !(1 << reg);
        }
    }

    /// Interval `idx` of register `reg` loses its ranges from `pos` on (a split there;
    /// `ranges` are its ranges before the split). Post-invariant (I): its entries are what
    /// the interval keeps.
    #[inline]
    pub fn cut(&mut self, idx: u32, reg: usize, pos: u32, ranges: &[Range]) {
        if self.mapped {
            self.cut_recorded(idx, reg, pos, ranges);
        }
    }

    /// [`Holes::cut`] once the maps are in use.
    #[inline(never)]
    fn cut_recorded(&mut self, idx: u32, reg: usize, pos: u32, ranges: &[Range]) {
        if self
            .state
            .get(idx as usize)
            .is_none_or(|s| s & RECORDED == 0)
        {
            return; // nothing recorded
        }
        let tail = &ranges[ranges.partition_point(|r| r.to <= pos)..];
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
        if let Some(s) = self.state.get_mut(idx as usize) {
            *s &= !RECORDED;
        }
    }

    /// The registers in `mask` in which an interval in a hole, other than `skip`, is live
    /// somewhere in interval `cur` (which starts at the scan's position).
    #[inline]
    pub fn meeting_regs(&mut self, mask: u64, built: &Built, cur: u32, skip: Option<u32>) -> u64 {
        if mask == 0 {
            return 0; // no interval in a hole in these registers
        }
        self.meeting_regs_in(mask, built, cur, skip)
    }

    /// [`Holes::meeting_regs`] for a non-empty `mask`.
    #[inline(never)]
    fn meeting_regs_in(&mut self, mask: u64, built: &Built, cur: u32, skip: Option<u32>) -> u64 {
        let iv = &built.intervals[cur as usize];
        let mut met = 0;
        if !self.mapped {
            self.steps += FLAT_PASS;
            for w in &self.flat {
                let bit = 1u64 << w.reg;
                // Waking after `cur`'s end, it cannot meet it.
                if mask & !met & bit != 0
                    && w.wake < iv.end()
                    && Some(w.idx) != skip
                    && built
                        .first_intersection(&built.intervals[w.idx as usize], iv)
                        .is_some()
                {
                    met |= bit;
                }
            }
            return met;
        }
        let ranges = built.ranges_of(iv);
        let mut maybe = mask;
        while maybe != 0 {
            let r = maybe.trailing_zeros() as usize;
            maybe &= maybe - 1;
            if self.meets(r, ranges, skip) {
                met |= 1 << r;
            }
        }
        met
    }

    /// With the maps in use: whether an interval in a hole in `reg`, other than `skip`, is
    /// live somewhere in interval `cur` (which starts at the scan's position); the answer
    /// [`Holes::meeting_regs`] gives for that register.
    pub fn meets_reg(&mut self, reg: usize, built: &Built, cur: u32, skip: Option<u32>) -> bool {
        debug_assert!(self.mapped);
        self.meets(reg, built.ranges_of(&built.intervals[cur as usize]), skip)
    }

    /// Whether an interval recorded for `reg`, other than `skip`, is live somewhere in
    /// `ranges` (all at or after the scan's position).
    ///
    /// Per range `[s, e)`: the entry with the greatest start before `e` meets it exactly
    /// when it ends after `s` (ends do not decrease with starts, see the Requires). The one
    /// exception to disjointness, a dying input stolen by the def (`skip`), can only meet the
    /// def's first range, and no other entry before it can then reach that far.
    fn meets(&mut self, reg: usize, ranges: &[Range], skip: Option<u32>) -> bool {
        let map = &self.by_reg[reg];
        self.steps += ranges.len() as u64;
        ranges.iter().any(|r| {
            map.range(..(r.to, 0))
                .next_back()
                .is_some_and(|(&(_, owner), &to)| to > r.from && Some(owner) != skip)
        })
    }

    /// The intervals in holes in a register of `mask` that are live somewhere in interval
    /// `cur` (which starts at the scan's position), as `(register, interval)` pairs, each
    /// once, in increasing order, into `out` (cleared first).
    #[inline]
    pub fn owners_in(&mut self, mask: u64, built: &Built, cur: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if mask != 0 {
            self.owners_in_regs(mask, built, cur, out);
        }
    }

    /// [`Holes::owners_in`] for a non-empty `mask`.
    #[inline(never)]
    fn owners_in_regs(&mut self, mask: u64, built: &Built, cur: u32, out: &mut Vec<(u32, u32)>) {
        let iv = &built.intervals[cur as usize];
        if !self.mapped {
            self.steps += FLAT_PASS;
            for w in &self.flat {
                if mask & (1 << w.reg) != 0
                    && w.wake < iv.end()
                    && built
                        .first_intersection(&built.intervals[w.idx as usize], iv)
                        .is_some()
                {
                    out.push((u32::from(w.reg), w.idx));
                }
            }
            out.sort_unstable();
            return;
        }
        let ranges = built.ranges_of(iv);
        let mut maybe = mask;
        while maybe != 0 {
            let r = maybe.trailing_zeros();
            maybe &= maybe - 1;
            let from = out.len();
            self.owners_meeting(r as usize, ranges, r, out);
            out[from..].sort_unstable();
            let mut k = from;
            // Each owner once (one may meet several ranges).
            for j in from..out.len() {
                if j == from || out[j] != out[k - 1] {
                    out[k] = out[j];
                    k += 1;
                }
            }
            out.truncate(k);
        }
    }

    /// Lowers `use_pos[r]`, for each register `r` in `mask`, to the next register use (at or
    /// after the scan's position) of every interval in a hole in `r` that is live somewhere
    /// in interval `cur` (which starts at the scan's position): the owners
    /// [`Holes::owners_in`] finds, less those that cannot lower it. An interval in a hole
    /// has its next use in a later range, so at or after its wake, which is after the
    /// position: one waking at or after `use_pos[r]` cannot lower it, nor can any of a
    /// register whose `use_pos` is at or before the position.
    #[inline]
    pub fn lower_use_pos(&mut self, mask: u64, built: &Built, cur: u32, use_pos: &mut [u32]) {
        if mask != 0 {
            self.lower_use_pos_in(mask, built, cur, use_pos);
        }
    }

    /// [`Holes::lower_use_pos`] for a non-empty `mask`.
    #[inline(never)]
    fn lower_use_pos_in(&mut self, mask: u64, built: &Built, cur: u32, use_pos: &mut [u32]) {
        let iv = &built.intervals[cur as usize];
        let start = iv.start();
        let next_use = |a: u32| {
            next_reg_use(built.uses_of(&built.intervals[a as usize]), start).unwrap_or(u32::MAX)
        };
        if !self.mapped {
            self.steps += FLAT_PASS;
            for w in &self.flat {
                let r = usize::from(w.reg);
                // The range search comes last, only when the use would lower the position.
                if mask & (1 << r) == 0 || w.wake >= iv.end() || w.wake >= use_pos[r] {
                    continue;
                }
                let next = next_use(w.idx);
                if next < use_pos[r]
                    && built
                        .first_intersection(&built.intervals[w.idx as usize], iv)
                        .is_some()
                {
                    use_pos[r] = next;
                }
            }
            return;
        }
        let ranges = built.ranges_of(iv);
        let mut found = std::mem::take(&mut self.found);
        let mut maybe = mask;
        while maybe != 0 {
            let r = maybe.trailing_zeros() as usize;
            maybe &= maybe - 1;
            if use_pos[r] <= start {
                continue;
            }
            found.clear();
            self.owners_meeting(r, ranges, r as u32, &mut found);
            for &(_, a) in &found {
                use_pos[r] = use_pos[r].min(next_use(a));
            }
        }
        self.found = found;
    }

    /// Appends `(tag, owner)` for each recorded, inactive interval of `reg` live somewhere in
    /// `ranges` (once per range it meets).
    fn owners_meeting(
        &mut self,
        reg: usize,
        ranges: &[Range],
        tag: u32,
        out: &mut Vec<(u32, u32)>,
    ) {
        let map = &self.by_reg[reg];
        let mut steps = 0u64;
        for r in ranges {
            // One search: the entries starting inside the range, latest first, then the one
            // starting before it, which reaches into it when it ends after the range's start
            // (ends do not decrease with starts, so no earlier entry does).
            for (&(from, owner), &to) in map.range(..(r.to, 0)).rev() {
                steps += 1;
                if from < r.from && to <= r.from {
                    break;
                }
                if !self.is_active(owner) {
                    out.push((tag, owner));
                }
                if from < r.from {
                    break;
                }
            }
        }
        self.steps += steps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Rng;
    use crate::intervals::{Interval, RangeSpan, UsePos, UseSpan};

    fn r(from: u32, to: u32) -> Range {
        Range { from, to }
    }

    /// Appends an interval with `ranges` to `built`, with a use in the middle of each range
    /// (of the first, third, … range a register use); its index.
    fn push(built: &mut Built, ranges: &[Range]) -> u32 {
        let lo = built.ranges.len() as u32;
        built.ranges.extend_from_slice(ranges);
        let span = RangeSpan {
            lo,
            hi: built.ranges.len() as u32,
        };
        let mut iv = Interval::empty(crate::VReg::new(
            built.intervals.len(),
            crate::RegClass::Int,
        ));
        iv.set_ranges(span, &built.ranges);
        let uses_lo = built.uses.len() as u32;
        built
            .uses
            .extend(ranges.iter().enumerate().map(|(k, r)| UsePos {
                pos: r.from + (r.to - r.from) / 2,
                requires_reg: k % 2 == 0,
                hint: None,
            }));
        iv.uses = UseSpan {
            lo: uses_lo,
            hi: built.uses.len() as u32,
        };
        built.intervals.push(iv);
        built.intervals.len() as u32 - 1
    }

    fn overlap(a: &[Range], b: &[Range]) -> bool {
        a.iter()
            .any(|x| b.iter().any(|y| x.from < y.to && y.from < x.to))
    }

    /// With few and with many intervals in holes (the flat list and the maps), the
    /// registers and owners met by random intervals are those a pairwise check finds, and
    /// the wakes come in `(wake, index)` order.
    #[test]
    fn both_forms_answer_as_a_pairwise_check() {
        let mut rng = Rng::new(48);
        for (case, waiting) in [3usize, 12, FLAT_LIMIT, FLAT_LIMIT + 1, 90]
            .into_iter()
            .cycle()
            .take(40)
            .enumerate()
        {
            let mut built = Built::default();
            let mut h = Holes::default();
            h.reset(3);
            // Per register, disjoint ranges dealt out to its intervals, all after 100 (the
            // scan stands at 100 with every interval in a hole).
            let mut owned: Vec<(usize, Vec<Range>)> = Vec::new();
            for k in 0..waiting {
                let reg = rng.below(3);
                owned.push((reg, Vec::new()));
                let _ = k;
            }
            let mut pos = [100u32; 3];
            for _ in 0..waiting * 3 {
                let k = rng.below(waiting);
                let reg = owned[k].0;
                let from = pos[reg] + 1 + rng.below(20) as u32;
                let to = from + 1 + rng.below(10) as u32;
                pos[reg] = to;
                owned[k].1.push(r(from, to));
            }
            for (k, (reg, ranges)) in owned.iter_mut().enumerate() {
                if ranges.is_empty() {
                    let from = pos[*reg] + 1;
                    pos[*reg] = from + 2;
                    ranges.push(r(from, from + 2));
                }
                let idx = push(&mut built, ranges);
                assert_eq!(idx as usize, k);
            }
            for (k, (reg, ranges)) in owned.iter().enumerate() {
                h.enter_hole(k as u32, *reg, ranges[0].from, &built, std::iter::empty());
            }
            assert_eq!(h.mapped, waiting > FLAT_LIMIT, "case {case}");
            for _ in 0..20 {
                let from = 100 + rng.below(400) as u32;
                let mut cur_ranges = vec![r(from, from + 1 + rng.below(30) as u32)];
                let next = cur_ranges[0].to + 1 + rng.below(50) as u32;
                cur_ranges.push(r(next, next + 1 + rng.below(30) as u32));
                let cur = push(&mut built, &cur_ranges);
                let mut want_regs = 0u64;
                let mut want_owners: Vec<(u32, u32)> = Vec::new();
                for (k, (reg, ranges)) in owned.iter().enumerate() {
                    if overlap(ranges, &cur_ranges) {
                        want_regs |= 1 << reg;
                        want_owners.push((*reg as u32, k as u32));
                    }
                }
                want_owners.sort_unstable();
                assert_eq!(
                    h.meeting_regs(0b111, &built, cur, None),
                    want_regs,
                    "case {case}"
                );
                if h.is_mapped() {
                    for reg in 0..3 {
                        let met = h.meets_reg(reg, &built, cur, None);
                        assert_eq!(met, want_regs & (1 << reg) != 0, "case {case}: {reg}");
                    }
                }
                let mut owners = Vec::new();
                h.owners_in(0b111, &built, cur, &mut owners);
                assert_eq!(&owners[..], &want_owners[..], "case {case}");
                h.owners_in(0b010, &built, cur, &mut owners);
                let only1: Vec<_> = want_owners.iter().filter(|o| o.0 == 1).copied().collect();
                assert_eq!(&owners[..], &only1[..], "case {case}");
                // The use positions lowered by the owners' next register uses from `cur`'s
                // start, from starting values below, inside and past the owners' ranges.
                let start = cur_ranges[0].from;
                let initial: Vec<u32> = (0..3)
                    .map(|_| [0, 100 + rng.below(600) as u32, u32::MAX][rng.below(3)])
                    .collect();
                let mut want_use_pos = initial.clone();
                for &(reg, k) in &want_owners {
                    let next = owned[k as usize]
                        .1
                        .iter()
                        .step_by(2)
                        .map(|r| r.from + (r.to - r.from) / 2)
                        .find(|&p| p >= start);
                    if let Some(p) = next {
                        let u = &mut want_use_pos[reg as usize];
                        *u = (*u).min(p);
                    }
                }
                let mut use_pos = initial.clone();
                h.lower_use_pos(0b111, &built, cur, &mut use_pos);
                assert_eq!(use_pos, want_use_pos, "case {case}: from {initial:?}");
            }
            let mut wakes: Vec<(u32, u32)> = owned
                .iter()
                .enumerate()
                .map(|(k, (_, ranges))| (ranges[0].from, k as u32))
                .collect();
            wakes.sort_unstable();
            let mut got = Vec::new();
            while let Some(idx) = h.next_woken(u32::MAX) {
                got.push((owned[idx as usize].1[0].from, idx));
                h.leave(owned[idx as usize].0);
            }
            assert_eq!(got, wakes, "case {case}");
            assert_eq!(h.inactive_mask, 0);
        }
    }

    #[test]
    fn cuts_and_forgets_keep_only_what_the_interval_keeps() {
        let mut built = Built::default();
        let mut h = Holes::default();
        h.reset(1);
        // Enough intervals in holes that the maps hold them.
        for k in 0..=FLAT_LIMIT as u32 {
            let at = 1000 + 10 * k;
            push(&mut built, &[r(at, at + 5)]);
            h.enter_hole(k, 0, at, &built, std::iter::empty());
        }
        let three = push(&mut built, &[r(10, 20), r(30, 40), r(50, 60)]);
        h.enter_hole(three, 0, 10, &built, std::iter::empty());
        assert!(h.mapped);
        let probe = |built: &mut Built, h: &mut Holes, rs: &[Range]| {
            let cur = push(built, rs);
            h.meeting_regs(1, built, cur, None) != 0
        };
        // A split at 35: the range 30..40 ends at 35, 50..60 goes.
        h.cut(three, 0, 35, &[r(10, 20), r(30, 40), r(50, 60)]);
        assert!(probe(&mut built, &mut h, &[r(34, 35)]));
        assert!(!probe(&mut built, &mut h, &[r(35, 100)]));
        assert!(
            !h.meets(0, &[r(34, 35)], Some(three)),
            "the stolen input is skipped"
        );
        // An active interval found in a map is not an owner in a hole.
        h.set_active(three, true);
        let cur = push(&mut built, &[r(0, 100)]);
        let mut owners = Vec::new();
        h.owners_in(1, &built, cur, &mut owners);
        assert!(owners.is_empty());
        h.set_active(three, false);
        h.forget(three, 0, &[r(10, 20), r(30, 35)]);
        assert!(!probe(&mut built, &mut h, &[r(0, 100)]));
        // Unrecorded intervals are not touched by a cut.
        h.cut(cur, 0, 0, &[r(0, 100)]);
        assert!(h.steps > 0);
    }
}
