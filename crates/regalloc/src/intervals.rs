//! Live intervals with lifetime holes, use positions and hints; fixed-register reservations
//! and clobber points.
//!
//! Requires: validated function, liveness.
//! Guarantees: one [`Interval`] per vreg that has a live range, its `ranges` sorted,
//! disjoint and non-adjacent (holes between them), its `uses` sorted by position; one sorted
//! list of [`Reservation`]s per allocatable physical register; the [`ClobberPoint`]s sorted
//! by position.
//!
//! Positions are those of [`crate::validate`] (`4i` gap, `4i+1` early, `4i+2` late).
//!
//! - A use at early(i) makes the range reach `4i+2` (exclusive), so a late def of `i` may
//!   take the same register; a late use reaches `4i+3`.
//! - A late def starts its interval at `4i+2`, an early def at `4i+1`.
//! - A def with a *reuse* constraint starts at `4i+1`: it must not share a register with the
//!   instruction's other inputs, because its register receives a copy of the reused input
//!   before the instruction. The exception (when the reused input dies at `i` and sits in a
//!   register) is the *steal* case of the scan: the def takes that very register.
//! - A def *pinned* to a fixed register or to the stack is written there by the instruction;
//!   its interval starts at the next gap, `4(i+1)`, where the resolver copies the value from
//!   the pinned location into the interval's location (a no-op when the hint is honoured).
//! - Fixed uses and fixed defs reserve their register around the instruction (uses
//!   `[4i, 4i+2)` or `[4i, 4i+3)` if late; defs `[4i+2, 4i+4)` or `[4i+1, 4i+4)` if early),
//!   tagged with the vreg so that the vreg's own interval may sit there. Every reservation
//!   is at most 3 positions long, which the scan's conflict search relies on.
//! - Clobbers are one [`ClobberPoint`] per clobbering instruction: its allocatable clobbered
//!   registers, except those its own fixed defs write, are unavailable to every interval
//!   at `4i+2`. Kept apart from the reservations because a call clobbers most registers:
//!   the scan learns every register an interval's calls clobber with a few searches (see
//!   `scan::clobber_conflicts`), instead of one reservation search per register.
//!
//! Cost: O(instructions + operands + L), L = Σ over CFG edges (b, s) of |live_in(s)| plus
//! the edges' arguments (each block's walk starts from its live-out set, gathered from its
//! successors' live-in lists, and adds one range per vreg live out); the
//! reservations are grouped by register with a counting sort, already in order. The live
//! set is sparse, so nothing is sized blocks × vregs.

use smallvec::SmallVec;

use crate::env_facts::EnvFacts;
use crate::liveness::{Liveness, SparseSet};
use crate::reuse::{refill, running_sum};
use crate::validate::{early, gap, late, Cfg};
use crate::{
    Allocation, Block, Function, Inst, Operand, OperandConstraint, OperandKind, OperandPos, PReg,
    PRegSet, RegClass, VReg,
};

/// A half-open range of positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub from: u32,
    pub to: u32,
}

/// A position where an interval's value is read or written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UsePos {
    pub pos: u32,
    /// The operand's allocation is the interval's and must be a register.
    pub requires_reg: bool,
    /// The register the operand is fixed to, if any (a hint for the interval).
    pub hint: Option<PReg>,
}

/// An interval's ranges: `Built::ranges[lo..hi]`, sorted, disjoint and non-adjacent.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RangeSpan {
    pub lo: u32,
    pub hi: u32,
}

/// An interval's use positions: `Built::uses[lo..hi]`. A vreg's uses lie together in
/// `Built::uses`, sorted by position, so splitting an interval splits its span in two.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UseSpan {
    pub lo: u32,
    pub hi: u32,
}

/// First register-requiring use in `uses` (sorted) at or after `pos`.
#[inline]
pub(crate) fn next_reg_use(uses: &[UsePos], pos: u32) -> Option<u32> {
    let k = uses.partition_point(|u| u.pos < pos);
    uses[k..].iter().find(|u| u.requires_reg).map(|u| u.pos)
}

/// Whether a register-requiring use in `uses` (sorted) lies in `[from, to)`.
#[inline]
pub(crate) fn has_reg_use_in(uses: &[UsePos], from: u32, to: u32) -> bool {
    let k = uses.partition_point(|u| u.pos < from);
    uses[k..]
        .iter()
        .take_while(|u| u.pos < to)
        .any(|u| u.requires_reg)
}

/// First position in both `a` and `b` (each sorted and disjoint), if any; see
/// [`Built::first_intersection`].
fn first_overlap(a: &[Range], b: &[Range]) -> Option<u32> {
    let (mut i, mut j) = (0, 0);
    // Invariant: no range of `a` before `i` meets a range of `b`, nor one of `b` before `j`
    // a range of `a` (each skipped range ends before the other side's next one starts).
    while i < a.len() && j < b.len() {
        if a[i].to <= b[j].from {
            i = skip_ending_by(a, i, b[j].from);
        } else if b[j].to <= a[i].from {
            j = skip_ending_by(b, j, a[i].from);
        } else {
            // Neither ends before the other starts: they overlap from the later start.
            return Some(a[i].from.max(b[j].from));
        }
    }
    None
}

/// The first index at or after `k` of a range of `ranges` (sorted, disjoint) that ends after
/// `pos`, or `ranges.len()`; `ranges[k]` itself must end by `pos`. Galloping: O(log d) for
/// a result `d` places on.
#[inline]
fn skip_ending_by(ranges: &[Range], k: usize, pos: u32) -> usize {
    let mut step = 1;
    let mut lo = k + 1; // ranges before `lo` end by `pos`
    loop {
        let probe = lo + step - 1;
        if probe >= ranges.len() || ranges[probe].to > pos {
            let hi = probe.min(ranges.len());
            return lo + ranges[lo..hi].partition_point(|r| r.to <= pos);
        }
        lo = probe + 1;
        step *= 2;
    }
}

/// Every vreg's pieces (interval indices), each vreg's sorted by start.
///
/// Most vregs are never split: such a vreg's only piece is its own interval, whose index is
/// the vreg's, so one `u32` per vreg says all (`NO_PIECE`, or the index). The lists of
/// split vregs live apart, in `split_lists`; the per-vreg word then holds `SPLIT | k`.
/// Refilling costs one word per vreg, and walks over split vregs only touch their lists.
#[derive(Default)]
pub(crate) struct Pieces {
    head: Vec<u32>,
    split_lists: Vec<SmallVec<[u32; 4]>>,
}

const NO_PIECE: u32 = u32::MAX;
const SPLIT: u32 = 1 << 31;

impl Pieces {
    /// `num_vregs` vregs, none with a piece yet.
    fn reset(&mut self, num_vregs: usize) {
        refill(&mut self.head, num_vregs, NO_PIECE);
        self.split_lists.clear();
    }

    /// Gives vreg `v` its first piece, its own interval `v`.
    fn set_own(&mut self, v: usize) {
        debug_assert!(v < SPLIT as usize && self.head[v] == NO_PIECE);
        self.head[v] = v as u32;
    }

    /// The pieces of vreg index `v`, sorted by start (empty for a vreg without interval).
    #[inline]
    pub fn of(&self, v: usize) -> &[u32] {
        let head = &self.head[v];
        match *head {
            NO_PIECE => &[],
            h if h & SPLIT != 0 => &self.split_lists[(h & !SPLIT) as usize],
            _ => std::slice::from_ref(head),
        }
    }

    /// The number of `v`'s list among [`Pieces::split_lists`], if `v` has several pieces.
    #[inline]
    pub fn split_index(&self, v: usize) -> Option<usize> {
        let h = self.head[v];
        (h != NO_PIECE && h & SPLIT != 0).then_some((h & !SPLIT) as usize)
    }

    /// The only piece of unsplit `v` (`None` if `v` has no interval or is split).
    #[inline]
    pub fn own(&self, v: usize) -> Option<usize> {
        let h = self.head[v];
        (h & SPLIT == 0).then_some(h as usize)
    }

    /// The piece lists of the split vregs (every list has at least two pieces).
    pub fn split_lists(&self) -> impl Iterator<Item = &[u32]> {
        self.split_lists.iter().map(|l| &l[..])
    }

    /// Inserts `piece` into `v`'s list at `at` (keeping it sorted is the caller's part).
    pub fn insert(&mut self, v: usize, at: usize, piece: u32) {
        let h = self.head[v];
        debug_assert!(h != NO_PIECE, "a split vreg had an interval");
        let k = if h & SPLIT != 0 {
            (h & !SPLIT) as usize
        } else {
            self.split_lists.push(smallvec::smallvec![h]);
            self.head[v] = SPLIT | (self.split_lists.len() - 1) as u32;
            self.split_lists.len() - 1
        };
        self.split_lists[k].insert(at, piece);
    }
}

/// A live interval (or, after splitting, a piece of one vreg's lifetime).
#[derive(Clone, Debug)]
pub(crate) struct Interval {
    pub vreg: VReg,
    /// Where the ranges are; set with [`Built::set_ranges`], which also caches the first
    /// range's start and the last range's end.
    ranges: RangeSpan,
    start: u32,
    end: u32,
    pub uses: UseSpan,
    pub alloc: Option<Allocation>,
    /// Preferred register.
    pub hint_reg: Option<PReg>,
    /// Prefer the register `vreg` occupies at `pos` (moves, reuse inputs).
    pub hint_vreg: Option<(VReg, u32)>,
    /// Reused input that may share the def's register at the def's start (see module doc).
    pub steal: Option<VReg>,
    /// Whether this interval is a block parameter (hinted from the predecessors' arguments).
    pub is_param: bool,
    /// Whether this interval was split off another (its `hint_reg` is the parent's register).
    pub is_child: bool,
}

impl Interval {
    /// An interval of `vreg` without ranges yet.
    pub(crate) fn empty(vreg: VReg) -> Interval {
        Interval {
            vreg,
            ranges: RangeSpan::default(),
            start: 0,
            end: 0,
            uses: UseSpan::default(),
            alloc: None,
            hint_reg: None,
            hint_vreg: None,
            steal: None,
            is_param: false,
            is_child: false,
        }
    }

    /// A split child of `parent`'s vreg, given its ranges and uses.
    pub fn child(parent: &Interval, ranges: RangeSpan, uses: UseSpan, built: &Built) -> Interval {
        let hint_reg = match parent.alloc {
            Some(Allocation::Reg(r)) => Some(r),
            _ => parent.hint_reg,
        };
        let mut child = Interval {
            hint_reg,
            uses,
            is_child: true,
            ..Interval::empty(parent.vreg)
        };
        child.set_ranges(ranges, &built.ranges);
        child
    }

    #[inline]
    pub fn start(&self) -> u32 {
        self.start
    }

    #[inline]
    pub fn end(&self) -> u32 {
        self.end
    }

    /// Whether the interval has any range (a vreg never named has none).
    #[inline]
    pub fn has_ranges(&self) -> bool {
        self.ranges.lo < self.ranges.hi
    }

    /// Points the interval at `pool[span]` (non-empty), caching its bounds.
    pub(crate) fn set_ranges(&mut self, span: RangeSpan, pool: &[Range]) {
        debug_assert!(span.lo < span.hi);
        self.ranges = span;
        self.start = pool[span.lo as usize].from;
        self.end = pool[span.hi as usize - 1].to;
    }
}

/// A stretch of positions where a physical register is unavailable to every interval
/// except those of `owner` (if any).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reservation {
    pub from: u32,
    pub to: u32,
    pub owner: Option<VReg>,
}

/// Every register's reservations, in one list grouped by register (by [`PReg::index`]),
/// each group sorted by `from`.
pub(crate) struct Reservations {
    items: Vec<Reservation>,
    /// Group `r < top` is `items[starts[r]..starts[r + 1]]`; registers from `top` on have
    /// none (most functions reserve a few low-numbered registers, so only a prefix of
    /// `starts` is ever written).
    starts: [u32; 129],
    top: usize,
    /// Working memory of `regroup`.
    fill: [u32; 129],
}

impl Default for Reservations {
    fn default() -> Reservations {
        Reservations {
            items: Vec::new(),
            starts: [0; 129],
            top: 0,
            fill: [0; 129],
        }
    }
}

impl Reservations {
    /// Groups `pending` (register index, reservation) by register, each group sorted by
    /// `from`, with a counting sort by register: O(n + registers), into the buffer kept.
    ///
    /// Requires: `pending` in the order the build's backward walk pushes it, so each
    /// register's reservations come in non-increasing `from` order (instructions walked
    /// backwards; within one, a register's def reservation, from the early or late point,
    /// comes before its use reservation, from the gap). Filling each group from its end
    /// leaves it ascending.
    fn regroup(&mut self, pending: &[(u8, Reservation)]) {
        let Reservations {
            items,
            starts,
            top: kept_top,
            fill,
        } = self;
        let top = pending
            .iter()
            .map(|&(r, _)| usize::from(r) + 1)
            .max()
            .unwrap_or(0);
        *kept_top = top;
        starts[..=top].fill(0);
        for &(r, _) in pending {
            starts[usize::from(r) + 1] += 1;
        }
        running_sum(&mut starts[..=top]);
        let placeholder = Reservation {
            from: 0,
            to: 0,
            owner: None,
        };
        refill(items, pending.len(), placeholder);
        // `fill[r]`: one past the next free place of group `r`, filled backwards.
        fill[..=top].copy_from_slice(&starts[..=top]);
        for &(r, res) in pending {
            let slot = &mut fill[usize::from(r) + 1];
            *slot -= 1;
            items[*slot as usize] = res;
        }
        debug_assert!((0..128).all(|r| self.of(r).is_sorted_by_key(|res| res.from)));
    }

    /// The reservations of the register with index `reg`, sorted by `from`.
    #[inline]
    pub fn of(&self, reg: usize) -> &[Reservation] {
        if reg >= self.top {
            return &[];
        }
        &self.items[self.starts[reg] as usize..self.starts[reg + 1] as usize]
    }
}

/// A clobbering instruction: no interval may hold a register of `regs` at `pos` (the
/// instruction's late point).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClobberPoint {
    pub pos: u32,
    pub regs: PRegSet,
    /// Index of the next clobber point with a different register set (calls of one
    /// convention come in long runs: the scan translates each run's set into its register
    /// bits once).
    pub run_end: u32,
}

/// Longest reservation; the conflict search starts this far before an interval's start.
pub(crate) const MAX_RESERVATION_LEN: u32 = 3;

/// Intervals and reservations.
#[derive(Default)]
pub(crate) struct Built {
    /// All intervals; the scan appends split children.
    pub intervals: Vec<Interval>,
    /// Every interval's ranges, each interval's together (see [`RangeSpan`]); a split
    /// appends the child's.
    pub ranges: Vec<Range>,
    /// Per vreg, its pieces (indices into `intervals`) sorted by start.
    pub pieces: Pieces,
    /// Every interval's use positions, grouped by vreg and sorted by position within each
    /// group (see [`UseSpan`]).
    pub uses: Vec<UsePos>,
    /// Per physical register, its reservations sorted by `from`.
    pub reservations: Reservations,
    /// Clobbering instructions, by increasing position.
    pub clobbers: Vec<ClobberPoint>,
    /// Per instruction `i` (and one past the last two): the index of the first clobber point
    /// at an instruction `>= i` (see [`Built::first_clobber_at`]).
    clobber_from: Vec<u32>,
    /// Per vreg, the start of its whole lifetime (0 if it has no interval).
    pub vreg_start: Vec<u32>,
    /// Per vreg, the end of its whole lifetime (0 if it has no interval).
    pub vreg_end: Vec<u32>,
    /// Per vreg, whether an operand pins it to its spill slot (it gets a slot of its own).
    pub needs_slot: Vec<bool>,
    /// Per vreg index, the vreg (with its class) if any operand or parameter names it.
    pub vregs: Vec<Option<VReg>>,
    /// The most vregs live at once at any instruction.
    pub max_live: usize,
    /// How many vregs have a live range (an interval of their own before any split).
    pub num_live_vregs: usize,
    /// Of those, how many per register class (the scan skips a class without any).
    pub live_in_class: [usize; crate::NUM_CLASSES],
    /// Work done (see [`crate::Work::intervals`]).
    pub steps: u64,
}

impl Built {
    /// The index of the first clobber point at position `pos` or later, in O(1): a point
    /// of instruction `i` is at `late(i) = 4i + 2`.
    #[inline]
    pub fn first_clobber_at(&self, pos: u32) -> usize {
        let i = (pos / 4) as usize;
        let at = if pos <= late(i as u32) { i } else { i + 1 };
        self.clobber_from[at] as usize
    }

    /// The ranges of `iv`.
    #[inline]
    pub fn ranges_of(&self, iv: &Interval) -> &[Range] {
        &self.ranges[iv.ranges.lo as usize..iv.ranges.hi as usize]
    }

    /// Whether `pos` lies in one of `iv`'s ranges.
    #[inline]
    pub fn covers(&self, iv: &Interval, pos: u32) -> bool {
        if pos < iv.start || pos >= iv.end {
            return false;
        }
        let ranges = self.ranges_of(iv);
        if ranges.len() == 1 {
            return true;
        }
        let k = ranges.partition_point(|r| r.to <= pos);
        k < ranges.len() && ranges[k].from <= pos
    }

    /// For `iv` live somewhere after `pos`: `Ok(end)` of the range covering `pos`, or
    /// `Err(start)` of its first range after `pos` when `pos` is in a hole. Cost: O(log
    /// ranges).
    #[inline]
    pub fn range_around(&self, iv: &Interval, pos: u32) -> Result<u32, u32> {
        let ranges = self.ranges_of(iv);
        let k = ranges.partition_point(|r| r.to <= pos);
        let r = ranges.get(k).expect("the interval is live after `pos`");
        if r.from <= pos {
            Ok(r.to)
        } else {
            Err(r.from)
        }
    }

    /// First position where `a` and `b` both are live, if any. Cost: O(log) per run of
    /// ranges of one interval that passes between two ranges of the other (a galloping
    /// merge), so a long interval met by a short one costs little more than a search.
    pub fn first_intersection(&self, a: &Interval, b: &Interval) -> Option<u32> {
        if a.end <= b.start || b.end <= a.start {
            return None;
        }
        first_overlap(self.ranges_of(a), self.ranges_of(b))
    }

    /// Whether one of `iv`'s ranges ends exactly at `pos` (the interval is in a lifetime
    /// hole, or over, from `pos` on). Cost: O(log ranges).
    pub fn range_ends_at(&self, iv: &Interval, pos: u32) -> bool {
        let ranges = self.ranges_of(iv);
        let k = ranges.partition_point(|r| r.to < pos);
        ranges.get(k).is_some_and(|r| r.to == pos)
    }

    /// Whether `a` and `b` are both live at some position at or after `from`. Cost:
    /// O(log ranges + ranges after `from`).
    pub fn intersect_from(&self, a: &Interval, b: &Interval, from: u32) -> bool {
        if a.end <= from || b.end <= from {
            return false;
        }
        let (a, b) = (self.ranges_of(a), self.ranges_of(b));
        let mut i = a.partition_point(|r| r.to <= from);
        let mut j = b.partition_point(|r| r.to <= from);
        while i < a.len() && j < b.len() {
            if a[i].from.max(b[j].from).max(from) < a[i].to.min(b[j].to) {
                return true;
            }
            if a[i].to <= b[j].to {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }

    /// Cuts interval `idx`'s ranges at `pos` (strictly inside them): the interval keeps
    /// those before `pos`, and the returned span holds the rest. The smaller side is
    /// copied to the end of the pool and the larger stays in place (the range `pos` falls
    /// in, if any, is copied whole and cut on both sides), so a long interval split again
    /// and again near its front costs the short heads, not its whole tail each time.
    /// Cost: O(log ranges + the smaller side's ranges). Returns the child's span and the
    /// ranges copied.
    pub fn split_ranges(&mut self, idx: usize, pos: u32) -> (RangeSpan, usize) {
        let span = self.intervals[idx].ranges;
        let (lo, hi) = (span.lo as usize, span.hi as usize);
        let k = lo + self.ranges[lo..hi].partition_point(|r| r.to <= pos);
        // Range k is the first ending after `pos`; it straddles `pos` when it starts
        // before it. The parent then ends with its head, the child starts with its tail.
        let straddles = self.ranges[k].from < pos;
        let parent_len = k - lo + usize::from(straddles);
        let child_len = hi - k;
        let end = self.ranges.len();
        let (parent, child, copied) = if parent_len < child_len {
            // The parent's ranges are copied out; the child keeps the tail in place.
            self.ranges.extend_from_within(lo..lo + parent_len);
            if straddles {
                self.ranges[end + parent_len - 1].to = pos;
                self.ranges[k].from = pos;
            }
            let parent = RangeSpan {
                lo: end as u32,
                hi: (end + parent_len) as u32,
            };
            (
                parent,
                RangeSpan {
                    lo: k as u32,
                    hi: hi as u32,
                },
                parent_len,
            )
        } else {
            self.ranges.extend_from_within(k..hi);
            if straddles {
                self.ranges[end].from = pos;
                self.ranges[k].to = pos;
            }
            let parent = RangeSpan {
                lo: span.lo,
                hi: (lo + parent_len) as u32,
            };
            let child = RangeSpan {
                lo: end as u32,
                hi: self.ranges.len() as u32,
            };
            (parent, child, child_len)
        };
        let Built {
            intervals, ranges, ..
        } = self;
        intervals[idx].set_ranges(parent, ranges);
        (child, copied)
    }

    /// The use positions of `iv`.
    #[inline]
    pub fn uses_of(&self, iv: &Interval) -> &[UsePos] {
        &self.uses[iv.uses.lo as usize..iv.uses.hi as usize]
    }

    /// Index of the piece of `vreg` covering `pos`, if any.
    #[inline]
    pub fn piece_at(&self, vreg: VReg, pos: u32) -> Option<u32> {
        let pieces = self.pieces.of(vreg.index());
        let k = pieces.partition_point(|&p| self.intervals[p as usize].start() <= pos);
        let piece = *pieces.get(k.checked_sub(1)?)?;
        self.covers(&self.intervals[piece as usize], pos)
            .then_some(piece)
    }

    /// Location of `vreg` at `pos`, if a piece covering it is allocated.
    #[inline]
    pub fn loc_at(&self, vreg: VReg, pos: u32) -> Option<Allocation> {
        self.intervals[self.piece_at(vreg, pos)? as usize].alloc
    }
}

/// Reverses the backward-collected clobber points into position order and links each to
/// the end of its run of equal register sets.
fn order_and_link_runs(points: &mut [ClobberPoint]) {
    points.reverse();
    let n = points.len();
    for c in (0..n).rev() {
        points[c].run_end = if c + 1 < n && points[c + 1].regs == points[c].regs {
            points[c + 1].run_end
        } else {
            c as u32 + 1
        };
    }
}

fn pinned(constraint: OperandConstraint) -> bool {
    matches!(
        constraint,
        OperandConstraint::FixedReg(_) | OperandConstraint::Stack
    )
}

/// Where the interval of `def`, a def operand of instruction `i`, starts: after the
/// instruction for a def pinned to a register or slot (the resolver moves it from there),
/// at `i`'s early position for a reuse or early def, else at its late position.
#[inline]
pub(crate) fn def_start(def: Operand, i: u32) -> u32 {
    match def.constraint() {
        c if pinned(c) => gap(i + 1),
        OperandConstraint::Reuse(_) => early(i),
        _ if def.pos() == OperandPos::Early => early(i),
        _ => late(i),
    }
}

/// Working memory of the build, kept by [`crate::Context`] between functions.
#[derive(Default)]
pub(crate) struct Scratch {
    pending: Vec<(u8, Reservation)>,
    use_bound: Vec<u32>,
    live_now: SparseSet,
    growing: GrowingRanges,
}

/// The ranges of every vreg while the backward walk collects them: per vreg a list
/// linked from its earliest range (the one added last) to later ones, in one pool.
#[derive(Default)]
struct GrowingRanges {
    nodes: Vec<(Range, u32)>,
    /// Per vreg, its earliest node (`NO_NODE` before the first range).
    earliest: Vec<u32>,
}

const NO_NODE: u32 = u32::MAX;

impl GrowingRanges {
    fn reset(&mut self, num_vregs: usize) {
        self.nodes.clear();
        refill(&mut self.earliest, num_vregs, NO_NODE);
    }

    /// Adds [from, to) to v's ranges. Post-invariant: v's list stays ascending and
    /// non-adjacent, because calls come in non-increasing `from` order within a block and
    /// blocks are visited backwards, so a new range either merges with the earliest one or
    /// lies entirely before it.
    #[inline]
    fn add(&mut self, v: usize, from: u32, to: u32) {
        debug_assert!(from < to);
        let head = self.earliest[v];
        if let Some((earliest, _)) = self.nodes.get_mut(head as usize) {
            if earliest.from <= to {
                earliest.from = earliest.from.min(from);
                earliest.to = earliest.to.max(to);
                return;
            }
        }
        self.earliest[v] = self.nodes.len() as u32;
        self.nodes.push((Range { from, to }, head));
    }

    /// The earliest range of `v`, which must have one.
    fn earliest_mut(&mut self, v: usize) -> &mut Range {
        &mut self.nodes[self.earliest[v] as usize].0
    }

    /// Appends v's ranges, in order, to `pool`; the span they take, if any.
    #[inline]
    fn copy_into(&self, v: usize, pool: &mut Vec<Range>) -> Option<RangeSpan> {
        let lo = pool.len() as u32;
        let mut at = self.earliest[v];
        while let Some(&(range, next)) = self.nodes.get(at as usize) {
            pool.push(range);
            at = next;
        }
        let hi = pool.len() as u32;
        (lo < hi).then_some(RangeSpan { lo, hi })
    }
}

/// Builds intervals for every vreg of `func` into `built`, reusing its buffers.
pub(crate) fn build<F: Function>(
    func: &F,
    cfg: &Cfg,
    live: &Liveness,
    facts: &EnvFacts,
    built: &mut Built,
    scratch: &mut Scratch,
) {
    let nv = func.num_vregs();
    let Built {
        intervals,
        ranges: range_pool,
        pieces,
        uses,
        reservations: grouped_reservations,
        clobbers: clobber_points,
        clobber_from,
        vreg_start,
        vreg_end,
        needs_slot,
        vregs: class_of,
        max_live: built_max_live,
        num_live_vregs,
        live_in_class,
        steps,
    } = built;
    let Scratch {
        pending: reservations,
        use_bound,
        live_now,
        growing,
    } = scratch;
    // Interval `v` is vreg `v`'s; its ranges are collected in `growing` during the backward
    // walk and copied into the pool at the end. Vregs without ranges keep an empty
    // interval, never queued.
    // Room for the scan's split children too (an eighth more), so that splitting rarely
    // moves the whole table.
    intervals.clear();
    intervals.reserve(nv + nv / 8 + 8);
    intervals.extend((0..nv).map(|v| Interval::empty(VReg::new(v, RegClass::Int))));
    growing.reset(nv);
    refill(class_of, nv, None);
    refill(needs_slot, nv, false);
    // (register index, reservation), grouped by register at the end.
    reservations.clear();
    // Collected backwards, reversed at the end.
    clobber_points.clear();
    let allocatable = facts.allocatable;

    // Uses are written into one flat list, each vreg's in a group of its own: count them
    // (every use, and every def not pinned), then fill each group from its end during the
    // backward walk, which leaves it ascending but for the order within one instruction.
    // `use_bound[v + 1]` is first the end of v's group, then (moving down as the group
    // fills) its next free place, and at the end its start, so group v is finally
    // `use_bound[v + 1]..use_bound[v + 2]`.
    refill(use_bound, nv + 2, 0);
    // Counted through a slice taken once, which the loop keeps in a register (through the
    // vector, each count would reload its buffer pointer).
    let counts = &mut use_bound[..];
    for i in 0..func.num_insts() {
        for op in func.inst_operands(Inst(i as u32)) {
            if op.is_use() || !pinned(op.constraint()) {
                counts[op.vreg().index() + 1] += 1;
            }
        }
    }
    running_sum(&mut use_bound[..=nv]);
    use_bound[nv + 1] = use_bound[nv];
    let placeholder = UsePos {
        pos: 0,
        requires_reg: false,
        hint: None,
    };
    refill(uses, use_bound[nv] as usize, placeholder);
    let mut add_use = |v: VReg, u: UsePos| {
        let slot = &mut use_bound[v.index() + 1];
        *slot -= 1;
        uses[*slot as usize] = u;
    };

    // The vregs live at the current position of the backward walk. Post-invariant at each
    // block start: it holds the block's live-in set (plus parameters, removed below). It
    // starts as the block's live-out set: its successors' live-in sets and the arguments it
    // passes them (liveness stores no live-out lists), so the walk costs O(Σ |live_in(s)|
    // + arguments) per block, over its successors `s`.
    live_now.reset(nv);
    let mut max_live = 0;
    // Live-in entries of successors read (the walk's Σ |live_in(s)|).
    let mut live_out_read = 0u64;
    for b in (0..func.num_blocks()).rev() {
        let block = Block(b as u32);
        let bstart = cfg.block_start_pos(b);
        let bend = cfg.block_end_pos(b);
        live_now.clear();
        for (k, &s) in func.block_succs(block).iter().enumerate() {
            let live_in = live.live_in.get(s.index()).iter().map(|&v| v as usize);
            live_out_read += live_in.len() as u64;
            if k == 0 {
                // The first successor's live-in list has no repeats and the set is empty:
                // every vreg in it is new (the common single-successor block needs no
                // membership tests).
                for v in live_in {
                    live_now.insert_new(v);
                    growing.add(v, bstart, bend);
                }
            } else {
                for v in live_in {
                    if live_now.insert(v) {
                        growing.add(v, bstart, bend);
                    }
                }
            }
            for v in func.branch_blockparams(block, k).iter().map(|a| a.index()) {
                // Once per vreg live out of `b` (a vreg live into two successors, or
                // passed twice, is one range).
                if live_now.insert(v) {
                    growing.add(v, bstart, bend);
                }
            }
        }
        max_live = max_live.max(live_now.len());
        for i in (cfg.block_first[b]..cfg.block_end[b]).rev() {
            let inst = Inst(i);
            let ops = func.inst_operands(inst);
            let move_src = func.is_move(inst).map(|(_, src)| src.vreg());
            // Bit k: a def reuses operand k, for k < 64 (the uses below look operands past
            // 63 up among the defs instead): one pass over the defs, not one per use.
            let mut reused_inputs = 0u64;
            for op in ops.iter().filter(|op| op.is_def()) {
                let v = op.vreg();
                class_of[v.index()] = Some(v);
                let constraint = op.constraint();
                let start = def_start(*op, i);
                if let OperandConstraint::Reuse(n) = constraint {
                    reused_inputs |= 1u64.checked_shl(n as u32).unwrap_or(0);
                }
                if let OperandConstraint::FixedReg(r) = constraint {
                    if allocatable.contains(r) {
                        let from = if op.pos() == OperandPos::Early {
                            early(i)
                        } else {
                            late(i)
                        };
                        reservations.push((
                            r.index() as u8,
                            Reservation {
                                from,
                                to: gap(i + 1),
                                owner: Some(v),
                            },
                        ));
                    }
                    intervals[v.index()].hint_reg = Some(r);
                }
                if constraint == OperandConstraint::Stack {
                    needs_slot[v.index()] = true;
                }
                if let OperandConstraint::Reuse(n) = constraint {
                    let input = ops[n].vreg();
                    intervals[v.index()].steal = Some(input);
                    intervals[v.index()].hint_vreg = Some((input, early(i)));
                }
                if let Some(src) = move_src {
                    intervals[v.index()].hint_vreg = Some((src, early(i)));
                }
                if live_now.contains(v.index()) {
                    let first = growing.earliest_mut(v.index());
                    debug_assert!(first.from <= start && start < first.to);
                    first.from = start;
                    live_now.remove(v.index());
                } else if !pinned(constraint) {
                    // A dead def still occupies its location at the def point.
                    growing.add(v.index(), start, start + 1);
                }
                if !pinned(constraint) {
                    let requires_reg = !matches!(constraint, OperandConstraint::RegOrStack);
                    add_use(
                        v,
                        UsePos {
                            pos: start,
                            requires_reg,
                            hint: None,
                        },
                    );
                }
            }
            let clobbers = func.inst_clobbers(inst);
            if !clobbers.is_empty() {
                let mut fixed_defs = PRegSet::empty();
                for op in ops.iter().filter(|op| op.is_def()) {
                    if let OperandConstraint::FixedReg(r) = op.constraint() {
                        fixed_defs.add(r);
                    }
                }
                let regs = clobbers.intersection(allocatable).difference(fixed_defs);
                if !regs.is_empty() {
                    clobber_points.push(ClobberPoint {
                        pos: late(i),
                        regs,
                        run_end: 0,
                    });
                }
            }
            for (k, op) in ops.iter().enumerate().filter(|(_, op)| op.is_use()) {
                let v = op.vreg();
                class_of[v.index()] = Some(v);
                let (pos, end) = match op.pos() {
                    OperandPos::Early => (early(i), early(i) + 1),
                    OperandPos::Late => (late(i), late(i) + 1),
                };
                growing.add(v.index(), cfg.block_start_pos(b), end);
                live_now.insert(v.index());
                let reused = if k < 64 {
                    reused_inputs & (1 << k) != 0
                } else {
                    ops.iter().any(|d| {
                        d.kind() == OperandKind::Def
                            && d.constraint() == OperandConstraint::Reuse(k)
                    })
                };
                let requires_reg = op.constraint() == OperandConstraint::Reg && !reused;
                match op.constraint() {
                    OperandConstraint::FixedReg(r) if allocatable.contains(r) => {
                        reservations.push((
                            r.index() as u8,
                            Reservation {
                                from: gap(i),
                                to: end,
                                owner: Some(v),
                            },
                        ));
                    }
                    OperandConstraint::Stack => needs_slot[v.index()] = true,
                    _ => {}
                }
                let hint = match op.constraint() {
                    OperandConstraint::FixedReg(r) => Some(r),
                    _ => None,
                };
                add_use(
                    v,
                    UsePos {
                        pos,
                        requires_reg,
                        hint,
                    },
                );
            }
            max_live = max_live.max(live_now.len());
        }
        for &p in func.block_params(block) {
            class_of[p.index()] = Some(p);
            intervals[p.index()].is_param = true;
            if live_now.contains(p.index()) {
                growing.earliest_mut(p.index()).from = bstart;
                live_now.remove(p.index());
            } else {
                growing.add(p.index(), bstart, bstart + 1);
            }
        }
        debug_assert!(
            b != func.entry_block().index() || live_now.is_empty(),
            "validated SSA: nothing is live into the entry block"
        );
    }

    pieces.reset(nv);
    refill(vreg_end, nv, 0);
    refill(vreg_start, nv, 0);
    range_pool.clear();
    range_pool.reserve(growing.nodes.len());
    *num_live_vregs = 0;
    *live_in_class = [0; crate::NUM_CLASSES];
    for (v, iv) in intervals.iter_mut().enumerate() {
        let Some(span) = growing.copy_into(v, range_pool) else {
            continue;
        };
        *num_live_vregs += 1;
        iv.set_ranges(span, range_pool);
        iv.uses = UseSpan {
            lo: use_bound[v + 1],
            hi: use_bound[v + 2],
        };
        // Several operands of one instruction may name v; keep the group sorted.
        let group = &mut uses[use_bound[v + 1] as usize..use_bound[v + 2] as usize];
        if !group.is_sorted_by_key(|u| u.pos) {
            group.sort_by_key(|u| u.pos);
        }
        iv.vreg = class_of[v].expect("a vreg with ranges was seen");
        live_in_class[iv.vreg.class().index()] += 1;
        vreg_end[v] = iv.end();
        vreg_start[v] = iv.start();
        pieces.set_own(v);
    }
    grouped_reservations.regroup(reservations);
    order_and_link_runs(clobber_points);
    // Walking instructions down, `k` is the first point at or after instruction `i`.
    let num_insts = func.num_insts();
    refill(clobber_from, num_insts + 2, clobber_points.len() as u32);
    let mut k = clobber_points.len();
    for i in (0..=num_insts).rev() {
        while k > 0 && clobber_points[k - 1].pos / 4 >= i as u32 {
            k -= 1;
        }
        clobber_from[i] = k as u32;
    }
    *built_max_live = max_live;
    *steps = (func.num_blocks() + num_insts + nv + uses.len() + range_pool.len()) as u64
        + live_out_read
        + clobber_points.len() as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorted disjoint ranges from a seeded stream: runs of short ranges with gaps.
    fn ranges(seed: &mut u64, count: usize) -> Vec<Range> {
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let mut pos = (next() % 8) as u32;
        (0..count)
            .map(|_| {
                let from = pos + (next() % 6) as u32;
                let to = from + 1 + (next() % 5) as u32;
                pos = to;
                Range { from, to }
            })
            .collect()
    }

    /// A split at every gap of every interval gives the head and the tail the positions
    /// before and after the cut, whichever side is copied.
    #[test]
    fn split_ranges_keeps_every_position_on_its_side() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        for case in 0..300 {
            let original = ranges(&mut seed, 1 + case % 30);
            let (start, end) = (original[0].from, original[original.len() - 1].to);
            for pos in start + 1..end {
                let mut built = Built::default();
                built.ranges.extend_from_slice(&original);
                let mut iv = Interval::empty(crate::VReg::new(0, crate::RegClass::Int));
                let span = RangeSpan {
                    lo: 0,
                    hi: original.len() as u32,
                };
                iv.set_ranges(span, &built.ranges);
                built.intervals.push(iv);
                let (child, _) = built.split_ranges(0, pos);
                let head = built.ranges_of(&built.intervals[0]).to_vec();
                let tail = built.ranges[child.lo as usize..child.hi as usize].to_vec();
                let covers = |rs: &[Range], p: u32| rs.iter().any(|r| r.from <= p && p < r.to);
                for p in start..end {
                    let want = covers(&original, p);
                    assert_eq!(
                        covers(&head, p),
                        want && p < pos,
                        "case {case} at {pos}: {p}"
                    );
                    assert_eq!(
                        covers(&tail, p),
                        want && p >= pos,
                        "case {case} at {pos}: {p}"
                    );
                }
                assert!(head.iter().chain(&tail).all(|r| r.from < r.to));
            }
        }
    }

    /// The galloping merge finds the first common position a position-by-position scan
    /// finds, on lists of very different lengths too.
    #[test]
    fn first_overlap_is_the_first_common_position() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for case in 0..3000 {
            let a = ranges(&mut seed, 1 + case % 40);
            let b = ranges(&mut seed, 1 + (case / 40) % 7);
            let live = |rs: &[Range], p: u32| rs.iter().any(|r| r.from <= p && p < r.to);
            let end = a.last().unwrap().to.max(b.last().unwrap().to);
            let expected = (0..end).find(|&p| live(&a, p) && live(&b, p));
            assert_eq!(first_overlap(&a, &b), expected, "case {case}: {a:?} {b:?}");
            assert_eq!(first_overlap(&b, &a), expected, "case {case} swapped");
        }
    }
}
