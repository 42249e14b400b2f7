//! The linear scan: assigns a register or a spill slot to every interval, splitting
//! intervals where a register or the stack serves only part of their lifetime.
//!
//! Requires: intervals and reservations from [`crate::intervals`].
//! Guarantees: every interval (including the split children created here) has an
//! allocation; no two intervals with the same register overlap, except the *steal* case
//! (a reuse def and its dying input share the input's register at the def's first
//! position, which only the instruction itself reads); no interval sits in a register at a
//! position reserved for another vreg; every register-requiring use lies in an interval
//! with a register; every split is at a gap position strictly inside the interval.
//!
//! Algorithm (Wimmer & Mössenböck 2005, on SSA after Wimmer & Franz 2010), one pass per
//! register class over intervals in order of increasing start:
//!
//! - `active` holds the intervals in a register that cover the current position,
//!   `inactive` those in a register that are in a lifetime hole there.
//! - *try_allocate_free*: a register free for the whole interval (no active interval, no
//!   inactive one coming back, no reservation of another vreg): the hint if it is free,
//!   else the first free one in the machine's preference order. Hints come from moves,
//!   reused inputs, fixed uses and defs, block parameters (the argument's register in an
//!   already allocated predecessor), back-edge arguments (the parameter's register) and,
//!   for split children, the parent's register. Unlike Wimmer, a register free for only a
//!   prefix is not taken: measured on the generated functions, the split it forces costs
//!   more moves and reloads than the blocked path below.
//! - *allocate_blocked*: "next use" per register; if every register is needed before the
//!   current interval's first register use, spill the current interval up to that use;
//!   otherwise take the register whose next use is farthest and evict its occupants: an
//!   active one gives the register up right after its last use before the current
//!   position (at the least loop-deep block boundary there, so that a loop it only passes
//!   through keeps it on the stack instead of reloading it on the back edge) and is
//!   reloaded before its next register use; an inactive one is split where it comes back.
//! - Split positions prefer block boundaries of the least loop depth between the two
//!   limits (moves land on edges outside loops), else the latest gap.
//! - Spill slots are per vreg and shared within a class between vregs whose lifetimes do
//!   not overlap: a slot is reused once the previous owner's whole lifetime has ended. A
//!   vreg owns its slot from its def (the resolver stores it there once, right after the
//!   def), so spilling a piece costs no store, only the reloads. A vreg first tries a free
//!   slot of a value it is copied from or to at a block boundary (a block parameter and
//!   its arguments), so the edge copies nothing between slots.
//! - Termination: every interval pushed back to `unhandled` starts strictly after the
//!   current position, and a split budget turns a would-be endless loop into an error.
//!
//! Perturbation ([`crate::Options::perturb`]): with a seed, the scan sometimes ignores the
//! hint, starts the free-register search at a random register, breaks ties between blocked
//! registers from a random start, spills the current interval although a register could be
//! taken (only where spilling it is legal), splits at a random legal gap instead of the best
//! one, and hands out a fresh spill slot instead of reusing one. Each alternative meets the
//! same guarantees as the usual choice; the termination argument is unchanged (a spilled
//! interval's child still starts strictly later).
//!
//! Cost: O(I + instructions) to order the I intervals (counting sorts), then per interval
//! a pass over the active list (at most one entry per register, plus a stolen input; an
//! active interval costs a comparison until the scan passes the end of its current range),
//! the inactive intervals through [`crate::holes`] (a pass over them while at most 128 wait
//! at once, else O(log) per range of the interval per register with an interval in a hole,
//! plus the intervals met when it is blocked: thousands of values waiting for their early
//! exits cost O(log) each), binary searches in ranges and uses, reservations through a cursor
//! and one search per range after a hole (O(log) however many reservations the hole
//! spans, plus those within [`MAX_RESERVATION_LEN`] of the range), and one search per
//! range and per clobbered register found among the clobber points (`clobber_conflicts`:
//! O(log distance) each, through a segment tree searched from the range's start). Each
//! split position costs O(log blocks) (the least loop-deep block between its limits,
//! through a segment tree over the loop depths, built in O(blocks)).
//! Spill slots are reused through a per-class heap: O(log slots) per spilled vreg, after
//! at most [`SLOT_HINT_CANDIDATES`] slots of related values are looked at; a slot taken by
//! such a hint leaves a stale heap entry, dropped when it reaches the top (at most one per
//! spilled vreg).

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use smallvec::SmallVec;

use crate::counting_sort::counting_sort;
use crate::depth_tree::DepthTree;
use crate::env_facts::EnvFacts;
use crate::holes::Holes;
use crate::intervals::{
    has_reg_use_in, next_reg_use, Built, ClobberPoint, Interval, UseSpan, MAX_RESERVATION_LEN,
};
use crate::or_tree::OrTree;
use crate::perturb::Perturb;
use crate::reuse::{refill, running_sum};
use crate::validate::{gap_floor, Cfg};
use crate::{Allocation, Block, Function, PReg, PRegSet, RegAllocError, RegClass, SpillSlot, VReg};

/// What the scan produces besides the allocations stored in the intervals.
#[derive(Default)]
pub(crate) struct Scanned {
    /// Spill slot of each vreg that has one.
    pub vreg_slot: Vec<Option<SpillSlot>>,
    /// Number of slots handed out.
    pub num_slots: u32,
    /// Number of splits.
    pub splits: usize,
    /// Work done (see [`crate::Work::scan`]).
    pub scan_steps: u64,
}

/// The scan's working memory, kept by [`crate::Context`] between functions; each buffer
/// is moved into the [`Scan`] of one class and back, and refilled before use.
#[derive(Default)]
pub(crate) struct Scratch {
    param_of: Vec<Option<(Block, u32)>>,
    arg_of: ArgsOf,
    slot_busy_until: Vec<u32>,
    slot_class: Vec<RegClass>,
    initial: Vec<(u32, u32)>,
    sort_counts: Vec<u32>,
    sort_buf: Vec<(u32, u32)>,
    sort_keys: Vec<u64>,
    unhandled: BinaryHeap<Reverse<(u32, u32)>>,
    active: Vec<Active>,
    holes: Holes,
    owners: Vec<(u32, u32)>,
    slot_heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
    slot_gen: Vec<u32>,
    clobber_bits: Vec<u64>,
    clobber_tree: OrTree,
    depth_tree: DepthTree,
    /// Per class, the machine facts' id (see `EnvFacts::id`) and the last two clobber sets
    /// translated for them (see [`class_bits`]).
    class_bits_memo: [(u64, [(PRegSet, u64); 2]); crate::NUM_CLASSES],
}

/// An interval covering the current position, with the end of the range that covers it:
/// until the scan reaches that position it stays active without a search of its ranges.
#[derive(Clone, Copy)]
struct Active {
    idx: u32,
    /// The end of the range covering the position it was last checked at. (Only a
    /// deactivated interval is split, so no split moves it.)
    until: u32,
    /// Its register's index in `regs` (an active interval keeps its allocation, so this
    /// stays its register's).
    reg: u32,
}

struct Scan<'a, F: Function> {
    func: &'a F,
    cfg: &'a Cfg,
    built: &'a mut Built,
    regs: &'a [PReg],
    /// Index of a register within `regs`, by `PReg::index()`.
    reg_slot: &'a [u8; 128],
    /// The intervals built from liveness, sorted by decreasing start (popped from the end).
    initial: Vec<(u32, u32)>,
    /// Split children waiting for allocation, by increasing start.
    unhandled: BinaryHeap<Reverse<(u32, u32)>>,
    active: Vec<Active>,
    /// The registers the `active` intervals hold.
    active_regs: HeldRegs,
    /// The intervals in a register but in a lifetime hole (inactive), and the ranges they
    /// come back with.
    holes: Holes,
    /// Owners found by a [`Holes::owners_in`] query (working memory).
    owners: Vec<(u32, u32)>,
    vreg_slot: Vec<Option<SpillSlot>>,
    slot_busy_until: Vec<u32>,
    /// Class of the values each slot holds.
    slot_class: Vec<RegClass>,
    /// This class's slots by `(busy_until, slot, generation)`, least busy first: the top
    /// current entry is reusable for a lifetime starting at `from` exactly when any slot
    /// is (`busy_until <= from`). An entry is current while its generation is the slot's
    /// (`slot_gen`): a slot handed out by a hint keeps its old entry, made stale.
    slot_heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
    slot_gen: Vec<u32>,
    param_of: Vec<Option<(Block, u32)>>,
    /// Per vreg, the (successor, parameter index) pairs it is passed to as a branch argument.
    arg_of: ArgsOf,
    splits: usize,
    split_budget: usize,
    /// Per register (by its index in `regs`, below 64 as `resv_left`'s bits are), the first
    /// reservation that may still matter (see `reservation_conflict`).
    resv_cursor: [Cell<u32>; 64],
    /// Bit k: `regs[k]` has reservations its cursor has not passed yet.
    resv_left: Cell<u64>,
    /// Per clobber point, the registers of this class it clobbers (bit k: `regs[k]`).
    clobber_bits: Vec<u64>,
    /// Union of `clobber_bits`.
    clobber_any: u64,
    /// `clobber_bits` as a segment tree, to find the next point adding a register.
    clobber_tree: OrTree,
    /// The blocks' loop depths as a segment tree, for splits spanning more than
    /// [`LINEAR_SPLIT_SEARCH`] blocks (built only for functions that have them).
    depth_tree: &'a DepthTree,
    /// Alternative heuristic choices, when perturbing.
    perturb: Perturb,
    /// Work done outside `holes`: intervals taken, active entries and ranges visited.
    steps: u64,
    /// Reservations visited (counted apart: the search takes `&self`).
    resv_steps: Cell<u64>,
}

/// Up to this many blocks between its limits, a split position is searched block by block.
const LINEAR_SPLIT_SEARCH: usize = 32;

/// Split children with more ranges than this are cut after their next register use (see
/// [`Scan::push_child`]).
const LONG_TAIL: usize = 16;

/// How many values [`Scan::slot_hint`] looks at for one vreg.
const SLOT_HINT_CANDIDATES: usize = 8;

/// Runs the scan for every class, filling `scanned`.
pub(crate) fn run<F: Function>(
    func: &F,
    facts: &EnvFacts,
    cfg: &Cfg,
    built: &mut Built,
    perturb: Option<u64>,
    scanned: &mut Scanned,
    scratch: &mut Scratch,
) -> Result<(), RegAllocError> {
    let mut perturb = Perturb::new(perturb);
    let nv = func.num_vregs();
    let param_of = &mut scratch.param_of;
    refill(param_of, nv, None);
    for b in 0..func.num_blocks() {
        for (k, p) in func.block_params(Block(b as u32)).iter().enumerate() {
            param_of[p.index()] = Some((Block(b as u32), k as u32));
        }
    }
    scratch.arg_of.refill(func);
    refill(&mut scanned.vreg_slot, nv, None);
    scratch.slot_busy_until.clear();
    scratch.slot_class.clear();
    // Vregs pinned to their slot by an operand get a slot of their own up front.
    for (v, slot) in scanned.vreg_slot.iter_mut().enumerate() {
        if built.needs_slot[v] {
            *slot = Some(SpillSlot(scratch.slot_busy_until.len() as u32));
            scratch.slot_busy_until.push(u32::MAX);
            scratch
                .slot_class
                .push(built.vregs[v].map_or(RegClass::Int, |vreg| vreg.class()));
        }
    }
    if func.num_blocks() > LINEAR_SPLIT_SEARCH {
        scratch.depth_tree.rebuild(&cfg.loop_depth);
    }
    let split_budget = 64 + 16 * (built.intervals.len() + 4 * func.num_insts());
    scanned.splits = 0;
    scanned.scan_steps = 0;
    for class in RegClass::ALL {
        if built.live_in_class[class.index()] == 0 {
            // No interval of this class: nothing to scan (many functions use one class).
            continue;
        }
        let regs = &facts.lists[class.index()];
        let reg_slot = &facts.reg_slot[class.index()];
        by_decreasing_start(built, class, func.num_insts(), scratch);
        let memo = &mut scratch.class_bits_memo[class.index()];
        if memo.0 != facts.id {
            // Other facts than the memo's: forget it.
            *memo = (facts.id, Default::default());
        }
        class_bits(
            &built.clobbers,
            reg_slot,
            &mut memo.1,
            &mut scratch.clobber_bits,
        );
        let clobber_any = scratch.clobber_bits.iter().fold(0, |any, &bits| any | bits);
        scratch.clobber_tree.rebuild(&scratch.clobber_bits);
        let resv_left = regs
            .iter()
            .enumerate()
            .filter(|(_, r)| !built.reservations.of(r.index()).is_empty())
            .fold(0, |bits, (k, _)| bits | 1 << k);
        let mut slot_heap = std::mem::take(&mut scratch.slot_heap);
        slot_heap.clear();
        let mut slot_gen = std::mem::take(&mut scratch.slot_gen);
        refill(&mut slot_gen, scratch.slot_busy_until.len(), 0);
        slot_heap.extend(
            scratch
                .slot_busy_until
                .iter()
                .zip(&scratch.slot_class)
                .enumerate()
                .filter(|(_, (_, &c))| c == class)
                .map(|(k, (&busy, _))| Reverse((busy, k as u32, 0))),
        );
        fn take_cleared<T>(v: &mut Vec<T>) -> Vec<T> {
            let mut v = std::mem::take(v);
            v.clear();
            v
        }
        let mut unhandled = std::mem::take(&mut scratch.unhandled);
        unhandled.clear();
        let mut scan = Scan {
            func,
            cfg,
            built: &mut *built,
            regs,
            reg_slot,
            initial: std::mem::take(&mut scratch.initial),
            unhandled,
            active: take_cleared(&mut scratch.active),
            active_regs: HeldRegs::default(),
            holes: {
                let mut holes = std::mem::take(&mut scratch.holes);
                holes.reset(regs.len());
                holes
            },
            owners: take_cleared(&mut scratch.owners),
            vreg_slot: std::mem::take(&mut scanned.vreg_slot),
            slot_heap,
            slot_gen,
            slot_busy_until: std::mem::take(&mut scratch.slot_busy_until),
            slot_class: std::mem::take(&mut scratch.slot_class),
            param_of: std::mem::take(&mut scratch.param_of),
            arg_of: std::mem::take(&mut scratch.arg_of),
            splits: scanned.splits,
            split_budget,
            resv_cursor: std::array::from_fn(|_| Cell::new(0)),
            resv_left: Cell::new(resv_left),
            clobber_bits: std::mem::take(&mut scratch.clobber_bits),
            clobber_any,
            clobber_tree: std::mem::take(&mut scratch.clobber_tree),
            depth_tree: &scratch.depth_tree,
            perturb,
            steps: 0,
            resv_steps: Cell::new(0),
        };
        let result = scan.run();
        // The buffers go back even on failure, for the next function.
        perturb = scan.perturb;
        scanned.vreg_slot = scan.vreg_slot;
        scanned.splits = scan.splits;
        scratch.initial = scan.initial;
        scratch.unhandled = scan.unhandled;
        scratch.active = scan.active;
        scanned.scan_steps += scan.steps + scan.holes.steps + scan.resv_steps.get();
        scratch.holes = scan.holes;
        scratch.owners = scan.owners;
        scratch.slot_heap = scan.slot_heap;
        scratch.slot_gen = scan.slot_gen;
        scratch.slot_busy_until = scan.slot_busy_until;
        scratch.slot_class = scan.slot_class;
        scratch.param_of = scan.param_of;
        scratch.arg_of = scan.arg_of;
        scratch.clobber_bits = scan.clobber_bits;
        scratch.clobber_tree = scan.clobber_tree;
        result?;
    }
    scanned.num_slots = scratch.slot_busy_until.len() as u32;
    Ok(())
}

/// Refills `scratch.initial` with the intervals of `class` as `(start, index)`, ordered by
/// decreasing start, then index: two stable counting sorts (by the position within the
/// instruction, then by the instruction), O(intervals + instructions); a comparison sort
/// for a few intervals.
fn by_decreasing_start(built: &Built, class: RegClass, num_insts: usize, scratch: &mut Scratch) {
    let Scratch {
        initial: of_class,
        sort_counts,
        sort_buf,
        sort_keys,
        ..
    } = scratch;
    of_class.clear();
    of_class.extend(
        built
            .intervals
            .iter()
            .enumerate()
            .filter(|(_, iv)| iv.has_ranges() && iv.vreg.class() == class)
            .map(|(idx, iv)| (iv.start(), idx as u32)),
    );
    if of_class.len() <= SMALL_SORT {
        // Packed as `start << 32 | index`, whose order is the pairs' order: integers sort
        // faster than pairs compared field by field.
        let packed = sort_keys;
        packed.clear();
        packed.extend(
            of_class
                .iter()
                .map(|&(s, i)| u64::from(s) << 32 | u64::from(i)),
        );
        packed.sort_unstable();
        of_class.clear();
        of_class.extend(packed.iter().rev().map(|&k| ((k >> 32) as u32, k as u32)));
        return;
    }
    counting_sort(
        of_class,
        4,
        |&(start, _)| (start % 4) as usize,
        sort_counts,
        sort_buf,
    );
    // A start is at most the gap after the last instruction.
    let by_inst = |&(start, _): &(u32, u32)| (start / 4) as usize;
    counting_sort(sort_buf, num_insts + 2, by_inst, sort_counts, of_class);
    of_class.reverse();
}

/// The bits `0..n` set (`n <= 64`, a register mask of one class).
#[inline]
fn low_bits(n: usize) -> u64 {
    debug_assert!(n <= 64);
    u64::MAX.checked_shr(64 - n as u32).unwrap_or(0)
}

/// The set bits of `bits` in the order `first, first + 1, …, 63, 0, …, first - 1` (the
/// registers of a class from a starting one, wrapping around), without division.
#[inline]
fn bits_from(bits: u64, first: usize) -> impl Iterator<Item = usize> {
    let below = bits & low_bits(first);
    let mut parts = [bits & !below, below];
    let mut part = 0;
    std::iter::from_fn(move || {
        while part < 2 {
            let word = &mut parts[part];
            if *word != 0 {
                let k = word.trailing_zeros() as usize;
                *word &= *word - 1;
                return Some(k);
            }
            part += 1;
        }
        None
    })
}

/// Up to this many intervals, a comparison sort beats the counting sorts' passes.
const SMALL_SORT: usize = 64;

/// Per clobber point, its registers of one class as bits over that class's allocatable
/// registers (`reg_slot` maps a register index to its bit). A run of equal sets is
/// translated once, and a set equal to one of the last two translated (`memo`, the latest
/// first, kept across functions for one machine's facts: calls of one convention clobber
/// one set, less the result register when there is one) not at all: O(points + Σ over
/// translated runs |set|).
fn class_bits(
    points: &[ClobberPoint],
    reg_slot: &[u8; 128],
    memo: &mut [(PRegSet, u64); 2],
    bits: &mut Vec<u64>,
) {
    bits.clear();
    let mut c = 0;
    while c < points.len() {
        let regs = points[c].regs;
        let mask = match *memo {
            [(set, mask), _] if set == regs => mask,
            [latest, (set, mask)] if set == regs => {
                *memo = [(set, mask), latest];
                mask
            }
            [latest, _] => {
                let mut mask = 0u64;
                for r in regs.iter() {
                    if let Some(&k) = reg_slot.get(r.index()).filter(|&&k| k != u8::MAX) {
                        mask |= 1 << k;
                    }
                }
                *memo = [(regs, mask), latest];
                mask
            }
        };
        let run_end = points[c].run_end as usize;
        bits.resize(run_end, mask);
        c = run_end;
    }
}

/// Per vreg, the (successor, parameter index) pairs it is passed to as a branch argument,
/// in one flat array grouped by vreg (a counting sort; no allocation per vreg).
#[derive(Default)]
struct ArgsOf {
    start: Vec<u32>,
    items: Vec<(Block, u32)>,
}

impl ArgsOf {
    /// Refills the table for `func`, keeping the buffers.
    fn refill<F: Function>(&mut self, func: &F) {
        let nv = func.num_vregs();
        /// Calls `visit(vreg, successor, parameter index)` for every branch argument.
        fn each<F: Function>(func: &F, mut visit: impl FnMut(usize, Block, u32)) {
            for b in 0..func.num_blocks() {
                let block = Block(b as u32);
                for (k, &succ) in func.block_succs(block).iter().enumerate() {
                    for (j, a) in func.branch_blockparams(block, k).iter().enumerate() {
                        visit(a.index(), succ, j as u32);
                    }
                }
            }
        }
        let ArgsOf { start, items } = self;
        refill(start, nv + 1, 0);
        each(func, |v, _, _| start[v + 1] += 1);
        running_sum(&mut start[..=nv]);
        // `start[v]` serves as v's fill cursor, ending at the next vreg's start; shifting by
        // one place afterwards restores the starts.
        refill(items, start[nv] as usize, (Block(0), 0));
        each(func, |v, succ, j| {
            items[start[v] as usize] = (succ, j);
            start[v] += 1;
        });
        for v in (1..=nv).rev() {
            start[v] = start[v - 1];
        }
        start[0] = 0;
    }

    fn get(&self, v: usize) -> &[(Block, u32)] {
        &self.items[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

impl<F: Function> Scan<'_, F> {
    fn iv(&self, idx: u32) -> &Interval {
        &self.built.intervals[idx as usize]
    }

    fn reg_of(&self, idx: u32) -> usize {
        match self.iv(idx).alloc {
            Some(Allocation::Reg(r)) => self.reg_slot[r.index()] as usize,
            _ => unreachable!("active and inactive intervals hold registers"),
        }
    }

    fn run(&mut self) -> Result<(), RegAllocError> {
        let mut last_pos = u32::MAX;
        while let Some((start, cur)) = self.next_unhandled() {
            if self.splits > self.split_budget {
                return Err(RegAllocError::Internal("split budget exhausted".into()));
            }
            debug_assert_eq!(start, self.iv(cur).start());
            debug_assert!(self.iv(cur).alloc.is_none());
            // At an unchanged position the sets are still right: since the last advance,
            // only intervals starting here joined `active`, and evictions removed theirs.
            if start != last_pos {
                self.advance(start);
                last_pos = start;
            }
            // Hints are preferences only: ignoring one is always legal.
            let hint = if self.perturb.one_in(4) {
                None
            } else {
                self.hint_for(cur)
            };
            self.steps += 1;
            if !self.try_allocate_free(cur, hint) {
                self.allocate_blocked(cur, hint)?;
            }
            if matches!(self.iv(cur).alloc, Some(Allocation::Reg(_))) {
                // At its start, its first range covers the position.
                let until = self.built.ranges_of(self.iv(cur))[0].to;
                self.activate(cur, until);
            }
        }
        Ok(())
    }

    /// Moves intervals between active, inactive and handled for position `pos`.
    fn advance(&mut self, pos: u32) {
        let mut k = 0;
        self.steps += self.active.len() as u64;
        while k < self.active.len() {
            let Active { idx, until, reg } = self.active[k];
            if pos < until {
                debug_assert!(self.built.covers(self.iv(idx), pos), "a stale range end");
                k += 1; // still in the range that covered an earlier position
                continue;
            }
            let iv = self.iv(idx);
            if iv.end() <= pos {
                self.deactivate_at(k);
            } else {
                match self.built.range_around(iv, pos) {
                    Ok(until) => {
                        self.active[k].until = until;
                        k += 1;
                    }
                    Err(wake) => {
                        self.deactivate_at(k);
                        self.holes.enter_hole(
                            idx,
                            reg as usize,
                            wake,
                            self.built,
                            self.active.iter().map(|a| a.idx),
                        );
                    }
                }
            }
        }
        // Only the intervals whose next range has started are looked at.
        while let Some(idx) = self.holes.next_woken(pos) {
            let iv = self.iv(idx);
            if iv.end() <= pos {
                // Over (or cut off by a split while in its hole).
                let reg = self.reg_of(idx);
                self.holes.leave(reg);
                continue;
            }
            match self.built.range_around(iv, pos) {
                // The range that started by `pos` also ended by it.
                Err(wake) => self.holes.requeue(idx, self.reg_of(idx), wake),
                Ok(until) => {
                    let reg = self.reg_of(idx);
                    self.holes.leave(reg);
                    self.activate(idx, until);
                }
            }
        }
    }

    /// Adds `idx` (holding a register, covering the current position with a range that
    /// ends at `until`) to `active`.
    fn activate(&mut self, idx: u32, until: u32) {
        let r = self.reg_of(idx);
        self.active_regs.add(r);
        self.active.push(Active {
            idx,
            until,
            reg: r as u32,
        });
        self.holes.set_active(idx, true);
    }

    /// Removes `active[k]` (the order of `active` does not matter).
    fn deactivate_at(&mut self, k: usize) {
        let Active { idx, reg, .. } = self.active.swap_remove(k);
        self.active_regs.remove(reg as usize);
        self.holes.set_active(idx, false);
    }

    /// First position where `iv` meets a reservation of `regs[slot]` owned by another vreg.
    #[inline(always)]
    fn reservation_conflict(&self, slot: usize, iv: &Interval) -> Option<u32> {
        if self.resv_left.get() & (1 << slot) == 0 {
            return None; // no reservation of this register is left (the common answer)
        }
        self.reservation_conflict_in_list(slot, iv)
    }

    /// [`Scan::reservation_conflict`] for a register with reservations left.
    #[inline(never)]
    fn reservation_conflict_in_list(&self, slot: usize, iv: &Interval) -> Option<u32> {
        let reg = self.regs[slot];
        let list = self.built.reservations.of(reg.index());
        // Intervals are queried in order of increasing start, so reservations that end
        // before the current start are never relevant again: a per-register cursor skips
        // them. (Reservations are sorted by `from` and at most MAX_RESERVATION_LEN long.)
        let cursor = &self.resv_cursor[slot];
        let passed = cursor.get() as usize;
        let mut k = passed;
        let from = iv.start().saturating_sub(MAX_RESERVATION_LEN);
        while k < list.len() && list[k].from < from {
            k += 1;
        }
        cursor.set(k as u32);
        // The reservations the cursor passed.
        let mut steps = (k - passed) as u64;
        if k == list.len() {
            self.resv_steps.set(self.resv_steps.get() + steps);
            self.resv_left.set(self.resv_left.get() & !(1 << slot));
            return None;
        }
        if list[k].from >= iv.end() {
            self.resv_steps.set(self.resv_steps.get() + steps);
            return None; // the next reservation begins after `iv`
        }
        let mut j = 0;
        let ranges = self.built.ranges_of(iv);
        let found = loop {
            if k >= list.len() || j >= ranges.len() {
                break None;
            }
            steps += 1;
            let r = list[k];
            if r.owner == Some(iv.vreg) {
                k += 1;
                continue;
            }
            if r.to <= ranges[j].from {
                // Every reservation ending by this range's start is behind it. Those that
                // start more than MAX_RESERVATION_LEN before it are skipped by one search
                // (a range after a long hole would otherwise walk every reservation in the
                // hole: thousands, where early exits each reserve the return register); one
                // that starts nearer is passed alone, as the search would pass it.
                let floor = ranges[j].from.saturating_sub(MAX_RESERVATION_LEN);
                if r.from >= floor {
                    k += 1;
                } else {
                    k += list[k..].partition_point(|x| x.from < floor);
                }
                continue;
            }
            if ranges[j].to <= r.from {
                j += ranges[j..].partition_point(|rg| rg.to <= r.from);
                continue;
            }
            break Some(r.from.max(ranges[j].from));
        };
        self.resv_steps.set(self.resv_steps.get() + steps);
        found
    }

    /// Registers (bits over `regs`) that some clobber point inside `cur`'s ranges
    /// overwrites; with `first`, also lowers `first[k]` to the first such position of
    /// register `k`.
    ///
    /// Per range of `cur`: its points by two table lookups ([`Built::first_clobber_at`]),
    /// then, while some register may still be added, a search of the segment tree for the
    /// first point in the range that adds one (so every register's first point is found, in
    /// position order). Cost: O(ranges + registers found · log points) per interval,
    /// whatever the points' sets (each search O(log) of the distance it covers).
    fn clobber_conflicts(&self, cur: u32, mut first: Option<&mut [u32]>) -> u64 {
        let points = &self.built.clobbers;
        let mut conflicts = 0u64;
        let iv = &self.built.intervals[cur as usize];
        for range in self.built.ranges_of(iv) {
            if conflicts == self.clobber_any {
                break;
            }
            // The points in the range, by table lookups.
            let lo = self.built.first_clobber_at(range.from);
            let hi = self.built.first_clobber_at(range.to);
            if lo == hi {
                continue; // no clobber point in this range
            }
            let mut at = lo;
            loop {
                let want = self.clobber_any & !conflicts;
                // The next point itself adds a register most of the time (calls of one
                // convention): take it without a tree search.
                let next = if at < hi && self.clobber_bits[at] & want != 0 {
                    Some(at)
                } else {
                    self.clobber_tree.first_meeting(at, hi, want)
                };
                let Some(c) = next else { break };
                let new = self.clobber_bits[c] & !conflicts;
                if let Some(first) = first.as_deref_mut() {
                    let mut bits = new;
                    while bits != 0 {
                        let k = bits.trailing_zeros() as usize;
                        first[k] = first[k].min(points[c].pos);
                        bits &= bits - 1;
                    }
                }
                conflicts |= new;
                at = c + 1;
            }
        }
        conflicts
    }

    /// First register-requiring use of interval `idx` at or after `pos`.
    fn next_reg_use(&self, idx: u32, pos: u32) -> Option<u32> {
        next_reg_use(self.built.uses_of(self.iv(idx)), pos)
    }

    fn loc_at(&self, vreg: VReg, pos: u32) -> Option<Allocation> {
        self.built.loc_at(vreg, pos)
    }

    fn hint_for(&self, cur: u32) -> Option<usize> {
        let iv = self.iv(cur);
        let reg = |alloc: Option<Allocation>| match alloc {
            Some(Allocation::Reg(r)) if self.reg_slot[r.index()] != u8::MAX => {
                Some(self.reg_slot[r.index()] as usize)
            }
            _ => None,
        };
        if let Some((v, pos)) = iv.hint_vreg {
            if let Some(r) = reg(self.loc_at(v, pos)) {
                return Some(r);
            }
        }
        if iv.is_param {
            if let Some((block, k)) = self.param_of[iv.vreg.index()] {
                // The interval starts at its block, or earlier when the block is a loop
                // header laid out after its loop (rotated): either way the predecessors
                // ending before that start are allocated.
                if self.cfg.block_start_pos(block.index()) >= iv.start() {
                    for &pred in self.func.block_preds(block) {
                        let end = self.cfg.block_end_pos(pred.index());
                        if end > iv.start() {
                            continue;
                        }
                        let succ_idx = self.func.block_succs(pred).iter().position(|&s| s == block);
                        let Some(succ_idx) = succ_idx else { continue };
                        let arg = self.func.branch_blockparams(pred, succ_idx)[k as usize];
                        if let Some(r) = reg(self.loc_at(arg, end - 1)) {
                            return Some(r);
                        }
                    }
                }
            }
        }
        let fixed_use = || {
            self.built
                .uses_of(iv)
                .iter()
                .find_map(|u| u.hint)
                .and_then(|r| reg(Some(Allocation::Reg(r))))
        };
        let static_hint = || iv.hint_reg.and_then(|r| reg(Some(Allocation::Reg(r))));
        let from_use = if iv.is_child {
            static_hint().or_else(fixed_use)
        } else {
            fixed_use().or_else(static_hint)
        };
        if from_use.is_some() {
            return from_use;
        }
        // An argument on a back edge: the parameter it feeds is allocated already (its
        // interval started earlier, at its block or, for a rotated loop's header, at the
        // loop's top); a parameter not allocated yet has no location.
        for &(succ, k) in self.arg_of.get(iv.vreg.index()) {
            let start = self.cfg.block_start_pos(succ.index());
            let param = self.func.block_params(succ)[k as usize];
            if let Some(r) = reg(self.loc_at(param, start)) {
                return Some(r);
            }
        }
        None
    }

    /// Takes a register free for the whole of `cur`: the hint if it is, else the first in
    /// preference order. A register free for only part of the interval is not taken (Wimmer
    /// splits there): measured on the generated functions, evicting the occupant with the
    /// farthest next use, or spilling up to the first use, costs clearly fewer moves and
    /// reloads than a split whose tail needs another register right away.
    fn try_allocate_free(&mut self, cur: u32, hint: Option<usize>) -> bool {
        let n = self.regs.len();
        if n == 0 {
            return false;
        }
        // Any register free for the whole interval will do: perturbed, search from a random one.
        let first = self.perturb.pick(n).unwrap_or(0);
        let iv = self.iv(cur);
        let start = iv.start();
        // Registers held by active intervals (bit k: `regs[k]`), and those whose inactive
        // intervals come back while `cur` is live.
        let mut busy = self.active_regs.mask;
        let mut stolen_idx = None;
        if let Some(stolen) = iv.steal {
            // Steal: the reused input, dying here, may share its register with the def,
            // unless another active interval holds it too. Dying here: its range ends right
            // after the def's first position (only the def's own instruction reads it
            // there; a split child, starting at a gap, never qualifies), and no later
            // position is live for both. The input may come back later in the order (after
            // a lifetime hole it is live only on paths that do not pass this instruction),
            // as long as the def is dead by then.
            for &Active { idx: a, reg, .. } in &self.active {
                let other = self.iv(a);
                if other.vreg == stolen
                    && self.built.range_ends_at(other, start + 1)
                    && !self.built.intersect_from(other, iv, start + 1)
                {
                    let r = reg as usize;
                    if self.active_regs.holders[r] == 1 {
                        busy &= !(1 << r);
                        stolen_idx = Some(a);
                    }
                }
            }
        }
        // A register no active interval holds is busy when an interval in a hole comes back
        // in it while `cur` is live. The flat list answers for every register in one pass;
        // the maps one register at a time (one search of its records per range of `cur`),
        // so with them a register is asked about only when it is the one tried next.
        let maybe = self.holes.inactive_mask & !busy & low_bits(n);
        let unasked = if self.holes.is_mapped() {
            maybe
        } else {
            busy |= self.holes.meeting_regs(maybe, self.built, cur, stolen_idx);
            0
        };
        self.steps += self.active.len() as u64;
        busy |= self.clobber_conflicts(cur, None);
        let candidates = !busy & low_bits(n);
        // The same register a search of every candidate in order would choose: the asked
        // registers' answers are those `meeting_regs` gives, asked in that order.
        let mut chosen = hint.filter(|&h| self.is_free(h, candidates, unasked, cur, stolen_idx));
        if chosen.is_none() {
            for k in bits_from(candidates, first) {
                if self.is_free(k, candidates, unasked, cur, stolen_idx) {
                    chosen = Some(k);
                    break;
                }
            }
        }
        match chosen {
            Some(r) => {
                self.assign_reg(cur, r);
                true
            }
            None => false,
        }
    }

    /// Whether `regs[k]` is free for all of `cur`: a candidate (bit k of `candidates`), no
    /// reservation of another vreg meets `cur`, and, when bit k of `unasked` is set, no
    /// interval in a hole in it other than `skip` meets `cur`.
    #[inline]
    fn is_free(
        &mut self,
        k: usize,
        candidates: u64,
        unasked: u64,
        cur: u32,
        skip: Option<u32>,
    ) -> bool {
        let bit = 1u64 << k;
        if candidates & bit == 0 {
            return false;
        }
        let iv = &self.built.intervals[cur as usize];
        if self.reservation_conflict(k, iv).is_some() {
            return false;
        }
        unasked & bit == 0 || !self.holes.meets_reg(k, self.built, cur, skip)
    }

    fn assign_reg(&mut self, idx: u32, reg_index: usize) {
        self.built.intervals[idx as usize].alloc = Some(Allocation::Reg(self.regs[reg_index]));
    }

    /// How soon the register of active interval `a` is needed again, if `a` were evicted at
    /// `pos`; 0 if it cannot be evicted there (a register use too close to move around).
    fn eviction_use_pos(&self, a: u32, pos: u32) -> u32 {
        let iv = self.iv(a);
        let split = gap_floor(pos);
        let uses = self.built.uses_of(iv);
        if has_reg_use_in(uses, split.max(iv.start()), pos) {
            return 0;
        }
        match next_reg_use(uses, pos) {
            Some(u) if gap_floor(u) <= pos => 0,
            Some(u) => u,
            None => u32::MAX,
        }
    }

    fn allocate_blocked(&mut self, cur: u32, hint: Option<usize>) -> Result<(), RegAllocError> {
        let n = self.regs.len();
        // Perturbed: ties between registers go to the first from a random start, and the
        // current interval may be spilled even though a register could be taken.
        let first = self.perturb.pick(n).unwrap_or(0);
        let prefer_spill = self.perturb.one_in(4);
        // Per allocatable register (by its place in `regs`; at most 64 of them).
        let mut use_pos_of = [u32::MAX; 64];
        let mut block_pos_of = [u32::MAX; 64];
        let (use_pos, block_pos) = (&mut use_pos_of[..n], &mut block_pos_of[..n]);
        let iv = self.iv(cur);
        let start = iv.start();
        for &Active { idx: a, reg, .. } in &self.active {
            let r = reg as usize;
            use_pos[r] = use_pos[r].min(self.eviction_use_pos(a, start));
        }
        // The intervals in holes that come back while `cur` is live: their next use.
        self.steps += self.active.len() as u64;
        let maybe = self.holes.inactive_mask & low_bits(n);
        self.holes.lower_use_pos(maybe, self.built, cur, use_pos);
        let iv = self.iv(cur);
        for k in 0..n {
            if use_pos[k] <= start {
                continue; // unusable already; a reservation cannot make it usable
            }
            if let Some(x) = self.reservation_conflict(k, iv) {
                block_pos[k] = block_pos[k].min(x);
            }
        }
        self.clobber_conflicts(cur, Some(&mut *block_pos));
        for k in 0..n {
            use_pos[k] = use_pos[k].min(block_pos[k]);
        }
        let iv = self.iv(cur);
        // The farthest use position, the first in the order `first + 1, …, n - 1, 0, …`
        // on ties (two plain loops: cheaper than a chained iterator).
        let mut reg = first;
        for k in first + 1..n {
            if use_pos[k] > use_pos[reg] {
                reg = k;
            }
        }
        for k in 0..first {
            if use_pos[k] > use_pos[reg] {
                reg = k;
            }
        }
        if let Some(h) = hint {
            if n > 0 && use_pos[h] == use_pos[reg] {
                reg = h;
            }
        }
        let first_use = self.next_reg_use(cur, start);
        let can_spill_cur = first_use.is_none_or(|u| gap_floor(u) > start);
        let others_sooner = n == 0 || first_use.is_none_or(|u| use_pos[reg] < u);
        if (others_sooner || prefer_spill) && can_spill_cur {
            self.spill_current(cur, first_use)
        } else if n == 0 || use_pos[reg] <= start || block_pos[reg] <= start {
            Err(RegAllocError::Internal(format!(
                "no register of class {:?} for {} at position {start}",
                iv.vreg.class(),
                iv.vreg
            )))
        } else {
            self.take_register(cur, reg, block_pos[reg])
        }
    }

    fn spill_current(&mut self, cur: u32, first_use: Option<u32>) -> Result<(), RegAllocError> {
        let start = self.iv(cur).start();
        let slot = self.slot_for(self.iv(cur).vreg);
        self.built.intervals[cur as usize].alloc = Some(Allocation::Stack(slot));
        if let Some(u) = first_use {
            let split = self
                .best_split(start, gap_floor(u))
                .ok_or_else(|| RegAllocError::Internal("no split position before a use".into()))?;
            let child = self.split(cur, split);
            self.push_child(child)?;
        }
        Ok(())
    }

    fn take_register(&mut self, cur: u32, reg: usize, block_pos: u32) -> Result<(), RegAllocError> {
        let start = self.iv(cur).start();
        self.assign_reg(cur, reg);
        if block_pos < self.iv(cur).end() {
            // The register is reserved later: keep it only up to there.
            let split = self
                .best_split(start, gap_floor(block_pos))
                .ok_or_else(|| {
                    RegAllocError::Internal(format!(
                        "cannot split {} before a reservation",
                        self.iv(cur).vreg
                    ))
                })?;
            let child = self.split(cur, split);
            self.push_child(child)?;
        }
        // Evict the active intervals in the register: split at the current position, the tail
        // goes to the stack and is reloaded before its next register use.
        let victims: SmallVec<[u32; 4]> = self
            .active
            .iter()
            .filter(|a| a.reg as usize == reg)
            .map(|a| a.idx)
            .collect();
        for a in victims {
            let k = self.active.iter().position(|x| x.idx == a);
            self.deactivate_at(k.expect("a victim is active"));
            self.evict_active(a, start)?;
        }
        // The intervals in holes that come back in the register while `cur` is live give it
        // up there. (A split keeps each in its hole with the register: it only moves its
        // end, and `split` cuts the ranges it loses from the records.)
        let mut owners = std::mem::take(&mut self.owners);
        self.holes.owners_in(1 << reg, self.built, cur, &mut owners);
        for &(_, a) in &owners {
            if let Some(x) = self.built.first_intersection(self.iv(a), self.iv(cur)) {
                let split = gap_floor(x);
                if split <= self.iv(a).start() {
                    self.owners = owners;
                    return Err(RegAllocError::Internal(
                        "inactive interval split at its start".into(),
                    ));
                }
                let child = self.split(a, split);
                if let Err(e) = self.push_child(child) {
                    self.owners = owners;
                    return Err(e);
                }
            }
        }
        self.owners = owners;
        Ok(())
    }

    fn evict_active(&mut self, a: u32, pos: u32) -> Result<(), RegAllocError> {
        // Give the register up as early as possible after the last use before `pos`,
        // preferring a boundary outside loops: the value is already in its slot (stored
        // at its def), so the earlier split costs nothing, and a loop the value only
        // passes through then holds it on the stack instead of reloading it on the back
        // edge.
        let iv = self.iv(a);
        let uses = self.built.uses_of(iv);
        let k = uses.partition_point(|u| u.pos < pos);
        let last_use = if k > 0 { uses[k - 1].pos } else { iv.start() };
        let after = last_use.max(iv.start());
        let split = self.best_split(after, pos).unwrap_or(gap_floor(pos));
        let tail = if split <= self.iv(a).start() {
            // The whole interval goes to the stack. Post-invariant (I) of `holes`: it has
            // no recorded range left.
            let reg = self.reg_of(a);
            let ranges = self.built.ranges_of(&self.built.intervals[a as usize]);
            self.holes.forget(a, reg, ranges);
            a
        } else {
            self.split(a, split)
        };
        let vreg = self.iv(tail).vreg;
        let slot = self.slot_for(vreg);
        self.built.intervals[tail as usize].alloc = Some(Allocation::Stack(slot));
        if let Some(u) = self.next_reg_use(tail, pos) {
            let from = pos.max(self.iv(tail).start());
            let reload = self.best_split(from, gap_floor(u)).ok_or_else(|| {
                RegAllocError::Internal(format!("cannot reload {vreg} before its use"))
            })?;
            let child = self.split(tail, reload);
            self.push_child(child)?;
        }
        Ok(())
    }

    /// The unhandled interval with the smallest start (then the smallest index).
    fn next_unhandled(&mut self) -> Option<(u32, u32)> {
        match (self.initial.last(), self.unhandled.peek()) {
            (Some(&a), Some(&Reverse(b))) if b < a => self.unhandled.pop().map(|Reverse(b)| b),
            (Some(_), _) => self.initial.pop(),
            (None, _) => self.unhandled.pop().map(|Reverse(b)| b),
        }
    }

    fn push_unhandled(&mut self, idx: u32) {
        self.unhandled.push(Reverse((self.iv(idx).start(), idx)));
    }

    /// Queues split child `child` for allocation. A child of more than [`LONG_TAIL`]
    /// ranges (a value live into far-away early exits, or to the function's end) is first
    /// cut, at the best gap after its last register use within its first [`LONG_TAIL`]
    /// ranges (its first register use at least) and before the next one: the head is
    /// queued, the rest goes to the vreg's slot (stored at the def, so the rest costs no
    /// store), and a reload piece is cut off the rest before its next register use and
    /// treated the same way. Otherwise every eviction of such a value would queue its whole
    /// remaining lifetime again, and each allocation attempt searches all of an interval's
    /// ranges: quadratic in the value's uses times its exits. A value's long stretches
    /// (one range through a chain of blocks, with all its uses there) stay in one piece.
    ///
    /// Every piece queued starts at or after `child`'s start (so after the scan's position,
    /// as `child` does); every register use stays in a queued piece; the pieces put in the
    /// slot have none.
    #[inline]
    fn push_child(&mut self, child: u32) -> Result<(), RegAllocError> {
        if self.built.ranges_of(self.iv(child)).len() <= LONG_TAIL {
            self.push_unhandled(child);
            return Ok(());
        }
        self.push_long_child(child)
    }

    /// [`Scan::push_child`] for a child of more than [`LONG_TAIL`] ranges.
    #[inline(never)]
    fn push_long_child(&mut self, child: u32) -> Result<(), RegAllocError> {
        let mut piece = child;
        loop {
            let iv = self.iv(piece);
            if self.built.ranges_of(iv).len() <= LONG_TAIL {
                self.push_unhandled(piece);
                return Ok(());
            }
            let (start, end, vreg) = (iv.start(), iv.end(), iv.vreg);
            // The head keeps at most LONG_TAIL ranges: it ends by the next one's start.
            let bound = self.built.ranges_of(iv)[LONG_TAIL].from;
            let uses = self.built.uses_of(iv);
            let k = uses.partition_point(|u| u.pos < start);
            let mut reg_uses = uses[k..].iter().filter(|u| u.requires_reg).map(|u| u.pos);
            let Some(first) = reg_uses.next() else {
                // No register use left: the whole piece lives in the slot.
                let slot = self.slot_for(vreg);
                self.built.intervals[piece as usize].alloc = Some(Allocation::Stack(slot));
                return Ok(());
            };
            // The head takes every register use before the bound (at least the first one);
            // the cut goes at the best gap after the last of them, before the next one.
            let (mut last, mut next) = (first, None);
            for u in reg_uses {
                if u < bound {
                    last = u;
                } else {
                    next = Some(u);
                    break;
                }
            }
            if first >= bound {
                // No register use in the first ranges: they stay in the slot, and the
                // piece to queue starts before the first use.
                if let Some(reload) = self.best_split(start, gap_floor(first)) {
                    let slot = self.slot_for(vreg);
                    self.built.intervals[piece as usize].alloc = Some(Allocation::Stack(slot));
                    piece = self.split(piece, reload);
                    continue;
                }
            }
            let limit = next
                .map_or(end - 1, |u| gap_floor(u).saturating_sub(4))
                .min(end - 1);
            let cut = self
                .best_split(last, limit.min(bound))
                .or_else(|| self.best_split(last, limit));
            let Some(cut) = cut else {
                // No gap between the last use and the next: the piece stays whole.
                self.push_unhandled(piece);
                return Ok(());
            };
            let rest = self.split(piece, cut);
            self.push_unhandled(piece);
            // (The rest starts at `cut`, or later when `cut` falls in a lifetime hole.)
            let rest_start = self.iv(rest).start();
            let reload = match self.next_reg_use(rest, rest_start) {
                None => None,
                Some(u) => match self.best_split(rest_start, gap_floor(u)) {
                    Some(reload) => Some(reload),
                    // The rest needs a register at its very start: it is the next piece.
                    None => {
                        piece = rest;
                        continue;
                    }
                },
            };
            let slot = self.slot_for(vreg);
            self.built.intervals[rest as usize].alloc = Some(Allocation::Stack(slot));
            match reload {
                Some(reload) => piece = self.split(rest, reload),
                None => return Ok(()),
            }
        }
    }

    /// The slot of `vreg`, handing out one free for its whole lifetime if it has none.
    ///
    /// The resolver stores a spilled vreg once, right after its def, and then treats the
    /// slot as holding it for the rest of its lifetime (SSA values never change), so the
    /// slot belongs to the vreg from its def to its last use.
    ///
    /// A free slot of a value the vreg is copied from or to at a block boundary (see
    /// [`Scan::slot_hint`]) is taken first: an edge move between two values in one slot
    /// vanishes, so machine-generated code passing a hundred spilled values from block to
    /// block does not copy them slot to slot at every edge.
    fn slot_for(&mut self, vreg: VReg) -> SpillSlot {
        if let Some(slot) = self.vreg_slot[vreg.index()] {
            return slot;
        }
        let from = self.built.vreg_start[vreg.index()];
        let end = self.built.vreg_end[vreg.index()];
        let class = vreg.class();
        // Perturbed: sometimes a fresh slot although one could be reused (always legal).
        let fresh = self.perturb.one_in(4);
        let hinted = if fresh {
            None
        } else {
            self.slot_hint(vreg, from)
        };
        let reusable = hinted.or_else(|| loop {
            match self.slot_heap.peek() {
                Some(&Reverse((_, k, gen))) if gen != self.slot_gen[k as usize] => {
                    self.slot_heap.pop(); // stale: the slot was handed out by a hint
                }
                Some(&Reverse((busy, k, _))) if busy <= from && !fresh => {
                    self.slot_heap.pop();
                    break Some(k as usize);
                }
                _ => break None,
            }
        });
        let k = match reusable {
            Some(k) => k,
            None => {
                self.slot_busy_until.push(0);
                self.slot_class.push(class);
                self.slot_gen.push(0);
                self.slot_busy_until.len() - 1
            }
        };
        // Post-invariant: the previous owner's whole lifetime ended at or before `from`, the
        // start of this vreg's lifetime; owners of a slot form a chain of disjoint lifetimes.
        // Slots are shared within a class only: the resolver sequences each class's moves
        // on its own, which is a valid split of a parallel move only if no location is
        // written in one class and read in another. A new generation makes any entry the
        // slot still has in the heap stale, so the heap holds one current entry per slot.
        self.slot_busy_until[k] = end;
        self.slot_gen[k] = self.slot_gen[k].wrapping_add(1);
        self.slot_heap
            .push(Reverse((end, k as u32, self.slot_gen[k])));
        let slot = SpillSlot(k as u32);
        self.vreg_slot[vreg.index()] = Some(slot);
        slot
    }

    /// A slot of `vreg`'s class, free from `from` on, that holds a value `vreg` is copied
    /// from or to at a block boundary: for a block parameter, the slot of an argument some
    /// predecessor passes it; for a branch argument, the slot of the parameter it is
    /// passed to or of another argument passed to that parameter. At most
    /// [`SLOT_HINT_CANDIDATES`] values are looked at, so a block with many predecessors
    /// costs O(1) per vreg.
    fn slot_hint(&self, vreg: VReg, from: u32) -> Option<usize> {
        let mut budget = SLOT_HINT_CANDIDATES;
        let usable = |u: VReg| -> Option<usize> {
            let k = self.vreg_slot[u.index()]?.0 as usize;
            (self.slot_class[k] == vreg.class() && self.slot_busy_until[k] <= from).then_some(k)
        };
        // The arguments passed to parameter `j` of `block`, by its first few predecessors.
        let args_to = |block: Block, j: u32, budget: &mut usize| -> Option<usize> {
            for &pred in self.func.block_preds(block) {
                // Every predecessor looked at counts, found or not, so a block with
                // thousands of predecessors costs O(1) here too.
                if *budget == 0 {
                    return None;
                }
                *budget -= 1;
                let succs = self.func.block_succs(pred);
                let Some(k) = succs
                    .iter()
                    .take(SLOT_HINT_CANDIDATES)
                    .position(|&s| s == block)
                else {
                    continue;
                };
                let arg = self.func.branch_blockparams(pred, k).get(j as usize)?;
                if let Some(k) = usable(*arg) {
                    return Some(k);
                }
            }
            None
        };
        if let Some((block, j)) = self.param_of[vreg.index()] {
            if let Some(k) = args_to(block, j, &mut budget) {
                return Some(k);
            }
        }
        for &(succ, j) in self.arg_of.get(vreg.index()) {
            if budget == 0 {
                return None;
            }
            budget -= 1;
            let param = self.func.block_params(succ)[j as usize];
            if let Some(k) = usable(param).or_else(|| args_to(succ, j, &mut budget)) {
                return Some(k);
            }
        }
        None
    }

    /// Best gap position in `(min_excl, max_incl]`: the start of the least-deep block
    /// boundary between them (latest on ties), else the latest gap. Perturbed, sometimes
    /// any gap in that range (every one is a legal split position for the callers).
    fn best_split(&mut self, min_excl: u32, max_incl: u32) -> Option<u32> {
        let hi = gap_floor(max_incl);
        if hi <= min_excl {
            return None;
        }
        let lowest = gap_floor(min_excl) + 4;
        if self.perturb.one_in(2) {
            if let Some(k) = self.perturb.pick(((hi - lowest) / 4 + 1) as usize) {
                return Some(lowest + 4 * k as u32);
            }
        }
        // The last block of least loop depth among those starting in `(min_excl, hi]`:
        // its start, or `hi` itself when `hi`'s own block is one of the least deep.
        let lo_block = self.cfg.block_of_pos(min_excl);
        let hi_block = self.cfg.block_of_pos(hi);
        if lo_block == hi_block {
            return Some(hi);
        }
        let shallowest = if hi_block - lo_block <= LINEAR_SPLIT_SEARCH {
            let depth = &self.cfg.loop_depth;
            let least = (lo_block + 1..=hi_block).map(|b| depth[b]).min();
            (lo_block + 1..=hi_block)
                .rev()
                .find(|&b| Some(depth[b]) == least)
                .unwrap_or(hi_block)
        } else {
            debug_assert!(self.depth_tree.covers(self.cfg.loop_depth.len()));
            self.depth_tree.shallowest_last(lo_block + 1, hi_block)
        };
        Some(if shallowest == hi_block {
            hi
        } else {
            self.cfg.block_start_pos(shallowest)
        })
    }

    /// Splits interval `idx` at gap `pos`; returns the new child covering `[pos, end)`.
    fn split(&mut self, idx: u32, pos: u32) -> u32 {
        self.splits += 1;
        let parent = &self.built.intervals[idx as usize];
        debug_assert!(pos % 4 == 0 && parent.start() < pos && pos < parent.end());
        match parent.alloc {
            // Post-invariant (I) of `holes`: a recorded parent keeps only its head there
            // (nothing is recorded while the list is flat).
            Some(Allocation::Reg(r)) if self.holes.is_mapped() => {
                let reg = self.reg_slot[r.index()] as usize;
                self.holes.cut(idx, reg, pos, self.built.ranges_of(parent));
            }
            _ => {}
        }
        let (child_ranges, copied) = self.built.split_ranges(idx as usize, pos);
        self.steps += copied as u64 + 1;
        // The vreg's uses are sorted: the child takes the tail of the parent's span.
        let parent = &self.built.intervals[idx as usize];
        let parent_uses = self.built.uses_of(parent);
        let cut = parent.uses.lo + parent_uses.partition_point(|u| u.pos < pos) as u32;
        let child_uses = UseSpan {
            lo: cut,
            hi: parent.uses.hi,
        };
        let child = Interval::child(parent, child_ranges, child_uses, self.built);
        self.built.intervals[idx as usize].uses.hi = cut;
        let child_start = child.start();
        let vreg = child.vreg;
        let child_idx = self.built.intervals.len() as u32;
        self.built.intervals.push(child);
        let pieces = self.built.pieces.of(vreg.index());
        let at =
            pieces.partition_point(|&p| self.built.intervals[p as usize].start() < child_start);
        self.built.pieces.insert(vreg.index(), at, child_idx);
        child_idx
    }
}

/// Registers (by place in the class's list) held by a set of intervals, with how many
/// hold each: two intervals share a register only in the steal case.
#[derive(Clone, Copy)]
struct HeldRegs {
    holders: [u8; 64],
    /// Bit k: `holders[k] > 0`.
    mask: u64,
}

impl Default for HeldRegs {
    fn default() -> HeldRegs {
        HeldRegs {
            holders: [0; 64],
            mask: 0,
        }
    }
}

impl HeldRegs {
    fn add(&mut self, r: usize) {
        self.holders[r] += 1;
        self.mask |= 1 << r;
    }

    fn remove(&mut self, r: usize) {
        debug_assert!(self.holders[r] > 0);
        self.holders[r] -= 1;
        if self.holders[r] == 0 {
            self.mask &= !(1 << r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{bits_from, class_bits, low_bits};
    use crate::intervals::ClobberPoint;
    use crate::{PReg, PRegSet, RegClass};

    #[test]
    fn clobber_sets_translate_alike_with_and_without_the_memo() {
        // A class whose list is r5, r2, r9 (bits 0, 1, 2); other registers are not its.
        let mut reg_slot = [u8::MAX; 128];
        for (k, hw) in [5, 2, 9].into_iter().enumerate() {
            reg_slot[PReg::new(hw, RegClass::Int).index()] = k as u8;
        }
        let set = |hws: &[usize]| {
            let mut s = PRegSet::empty();
            hws.iter()
                .for_each(|&hw| s.add(PReg::new(hw, RegClass::Int)));
            s
        };
        let (a, b, c) = (set(&[2, 5, 7]), set(&[9]), set(&[2, 9]));
        // Runs a, b, a, c, a (each a run of one point, then a run of two for the last).
        let sets = [a, b, a, c, a, a];
        let points: Vec<ClobberPoint> = sets
            .iter()
            .enumerate()
            .map(|(k, &regs)| ClobberPoint {
                pos: 4 * k as u32,
                regs,
                run_end: if k < 4 { k as u32 + 1 } else { 6 },
            })
            .collect();
        let want = [0b011, 0b100, 0b011, 0b110, 0b011, 0b011];
        let mut memo = [(PRegSet::empty(), 0); 2];
        let mut bits = Vec::new();
        for round in 0..3 {
            class_bits(&points, &reg_slot, &mut memo, &mut bits);
            assert_eq!(bits, want, "round {round}");
        }
        // A stale entry never answers for another set.
        memo = [(b, 0b100), (a, 0b011)];
        let one = [ClobberPoint {
            pos: 0,
            regs: c,
            run_end: 1,
        }];
        class_bits(&one, &reg_slot, &mut memo, &mut bits);
        assert_eq!(bits, [0b110]);
    }

    #[test]
    fn register_order_wraps_around_from_the_first() {
        assert_eq!(low_bits(0), 0);
        assert_eq!(low_bits(5), 0b11111);
        assert_eq!(low_bits(64), u64::MAX);
        let order: Vec<usize> = bits_from(0b1011_0110, 4).collect();
        assert_eq!(order, [4, 5, 7, 1, 2]);
        let all: Vec<usize> = bits_from(low_bits(16), 15).collect();
        assert_eq!(all, [15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
        assert_eq!(bits_from(0, 3).count(), 0);
        assert_eq!(bits_from(1 << 63, 0).collect::<Vec<_>>(), [63]);
    }
}
