//! Resolution: from allocated intervals to operand allocations and edits.
//!
//! Requires: every interval allocated by the scan (its guarantees hold).
//! Guarantees: an [`Output`] whose edits, executed with the instructions, deliver every
//! vreg to every operand's allocation; the checker verifies exactly this.
//!
//! Cost: O(instructions + operands + edits + edges + pieces + Σ |live_in(succ)| over the
//! edges along which some split vreg changes pieces (the others move only parameters));
//! moves are ordered by counting sorts. Piece lookups go through forward-only cursors
//! ([`locate::Cursor`]), each passing a vreg's pieces once.
//!
//! Edits at one program point form up to four *groups*, each one parallel move, run in
//! this order (positions as in [`crate::validate`], `g = 4i` is the gap before inst `i`):
//!
//! 0. **Edge moves into a block** (at its first instruction) for an edge from a block
//!    with several successors: such an edge is the block's only incoming edge (no
//!    critical edges), so the moves run on that edge alone (seed 001, case 2).
//! 1. **Split and pinned-def moves** at `g`: for a vreg split at `g` inside a live range,
//!    parent location → child location; for a def of inst `i - 1` pinned to a register or
//!    slot, that location → the vreg's interval location. One parallel move: sources are
//!    locations at `g - 1`, destinations at `g`.
//! 2. **Operand copies** for inst `i`: a fixed-register or stack use receives a copy of the
//!    vreg's location at `g`; a reused input is copied into the def's register. The
//!    destinations are reserved for this purpose (reservations, or the reuse def's own
//!    interval starting at `4i + 1`), so nothing live is overwritten.
//! 3. **Edge moves out of a block** (before its terminator) for an edge from a block with a
//!    single successor (cases 1 and 3). The terminator then has no operands, so the moves
//!    may overwrite anything not live into the successor.
//!
//! Spills are stored once: a vreg with a spill slot is copied into it right after its def
//! (group 1 of the next gap; at a block parameter's block start), and every later move of
//! the vreg from a register into its own slot is dropped, because the slot already holds
//! the (never changing) value on every path from the def.
//!
//! On each CFG edge, a vreg live into the successor moves from its location at the
//! predecessor's last position to its location at the successor's first; a block parameter
//! receives the location of the matching branch argument. Each group is sequenced by
//! [`crate::moves`] per class with the class's scratch register, or a register free at that
//! point, or failing both a borrowed register and emergency slots.

use crate::counting_sort::counting_sort;
mod locate;

use crate::intervals::Built;
use crate::liveness::Liveness;
use crate::moves::{self, Scratch as MoveScratch};
use crate::reuse::refill;
use crate::scan::Scanned;
use crate::validate::{gap, Cfg};
use crate::{
    Allocation, Block, Edit, Function, Inst, MachineEnv, Operand, OperandConstraint, OperandPos,
    Output, PReg, ProgPoint, RegAllocError, RegClass, SpillSlot, Stats, VReg,
};

/// A move waiting to be sequenced with the others of its point and group.
#[derive(Clone, Copy)]
struct PendingMove {
    point: ProgPoint,
    group: u8,
    class: RegClass,
    from: Allocation,
    to: Allocation,
    /// The vreg moved.
    vreg: VReg,
    /// Whether the move gives `vreg` its value (a def's store, a parameter binding), as
    /// opposed to copying a value it already has.
    defines: bool,
}

/// The resolver's working memory, kept by [`crate::Context`] between functions (lent to
/// the [`Resolver`]; every buffer is cleared or refilled before use).
#[derive(Default)]
pub(crate) struct Scratch {
    pending: Vec<PendingMove>,
    sorted: Vec<PendingMove>,
    sort_counts: Vec<u32>,
    def_site: Vec<(u32, Operand)>,
    /// Split vregs' pieces, and the three cursors over them (operands, block starts,
    /// block ends).
    split_table: locate::SplitTable,
    cursors: [locate::Cursor; 3],
    boundaries: locate::Boundaries,
    entered_by_change: Vec<bool>,
    start_loc: Vec<Option<(Option<Allocation>, bool)>>,
    group_moves: Vec<(Allocation, Allocation)>,
    seq: Vec<(Allocation, Allocation)>,
    occupancy: Occupancy,
}

struct Resolver<'a, F: Function> {
    func: &'a F,
    env: &'a MachineEnv,
    cfg: &'a Cfg,
    built: &'a Built,
    vreg_slot: &'a [Option<SpillSlot>],
    pending: Vec<PendingMove>,
    /// Whether `spare.occupancy` describes this function: it is built on demand (only a
    /// parallel move that needs a temporary, on a machine without a scratch register, asks).
    occupancy_built: bool,
    emergency_base: u32,
    used_emergency: bool,
    /// Per vreg defined by an instruction: the instruction and the def (`u32::MAX` for
    /// block parameters).
    def_site: Vec<(u32, Operand)>,
    /// Piece lookups for operands, in program order.
    operand_cursor: locate::Cursor,
    split_table: locate::SplitTable,
    /// The rest of the working memory (borrowed, not moved: it is large).
    spare: &'a mut Scratch,
    /// Work done in the edge loop (see [`crate::Work::resolve`]).
    steps: u64,
}

/// Up to this many moves, a comparison sort beats the counting sorts' passes.
const SMALL_SORT: usize = 64;

/// Orders `moves` by point, then group, then class (the order of `sequence_all`), in
/// O(moves + points): a stable counting sort by group and class, then one by point (a
/// comparison sort for a few moves). Moves within one group are a parallel move, so their
/// order among themselves does not matter. `counts` and `buf` are working memory.
fn sort_moves(
    moves: &mut Vec<PendingMove>,
    num_points: usize,
    counts: &mut Vec<u32>,
    buf: &mut Vec<PendingMove>,
) {
    if moves.len() <= SMALL_SORT {
        moves.sort_unstable_by_key(|m| (m.point, m.group, m.class.index()));
        return;
    }
    let group_and_class = |m: &PendingMove| 2 * usize::from(m.group) + m.class.index();
    counting_sort(moves, 8, group_and_class, counts, buf);
    counting_sort(buf, num_points, |m| m.point.raw() as usize, counts, moves);
}

/// Per register index, the positions occupied by allocated pieces and reservations, as one
/// bitmap row per register that holds anything (positions up to the gap after the last
/// instruction). Kept in the resolver's scratch memory between functions.
#[derive(Default)]
struct Occupancy {
    /// Row of each register index in `bits`, or `NO_ROW` when nothing occupies it.
    row_of: Vec<u32>,
    /// Words per row.
    words: usize,
    bits: Vec<u64>,
}

const NO_ROW: u32 = u32::MAX;

impl Occupancy {
    /// Refills the rows for `built`. O(ranges + reservations + registers used ·
    /// instructions / 16): pieces on one register never overlap, so filling a row writes
    /// each of its words a bounded number of times beyond one per range.
    fn refill(&mut self, built: &Built, num_insts: usize) {
        let Occupancy {
            row_of,
            words,
            bits,
        } = self;
        refill(row_of, 128, NO_ROW);
        let mut rows = 0u32;
        let mut row = |r: usize, row_of: &mut Vec<u32>| {
            if row_of[r] == NO_ROW {
                row_of[r] = rows;
                rows += 1;
            }
        };
        for iv in &built.intervals {
            if let (Some(Allocation::Reg(r)), true) = (iv.alloc, iv.has_ranges()) {
                row(r.index(), row_of);
            }
        }
        for r in 0..128 {
            if !built.reservations.of(r).is_empty() {
                row(r, row_of);
            }
        }
        // Positions end at the gap after the last instruction.
        *words = (4 * num_insts + 8).div_ceil(64);
        refill(bits, rows as usize * *words, 0);
        let w = *words;
        for iv in &built.intervals {
            if let Some(Allocation::Reg(r)) = iv.alloc {
                let at = row_of[r.index()] as usize * w;
                for rg in built.ranges_of(iv) {
                    set_bits(&mut bits[at..at + w], rg.from, rg.to);
                }
            }
        }
        for (r, &row) in row_of.iter().enumerate() {
            if row != NO_ROW {
                let at = row as usize * w;
                for rv in built.reservations.of(r) {
                    set_bits(&mut bits[at..at + w], rv.from, rv.to);
                }
            }
        }
    }

    /// Whether anything occupies register index `reg` at a position in `[lo, hi)`.
    fn occupied(&self, reg: usize, lo: u32, hi: u32) -> bool {
        let row = self.row_of[reg];
        if row == NO_ROW {
            return false;
        }
        let bits = &self.bits[row as usize * self.words..][..self.words];
        (lo..hi).any(|p| {
            bits.get(p as usize / 64)
                .is_some_and(|w| w >> (p % 64) & 1 != 0)
        })
    }
}

/// Sets the bits `[from, to)` of `row`.
fn set_bits(row: &mut [u64], from: u32, to: u32) {
    let (from, to) = (from as usize, (to as usize).min(row.len() * 64));
    let mut p = from;
    while p < to {
        let (w, b) = (p / 64, p % 64);
        let n = (64 - b).min(to - p);
        let mask = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << b
        };
        row[w] |= mask;
        p += n;
    }
}

fn internal(msg: String) -> RegAllocError {
    RegAllocError::Internal(msg)
}

/// The error of a lookup that found no location (an allocator bug).
#[cold]
#[inline(never)]
fn no_location(vreg: VReg, pos: u32) -> RegAllocError {
    internal(format!("{vreg} has no location at position {pos}"))
}

/// Where split vregs are, for the edge loop: each live-in's location at its block's start
/// (by live-in entry), the pieces, and where pieces start.
#[derive(Clone, Copy)]
struct Located<'a> {
    start_loc: &'a [Option<(Option<Allocation>, bool)>],
    table: &'a locate::SplitTable,
    boundaries: &'a locate::Boundaries,
}

/// What the earlier phases found, as the resolver reads it.
pub(crate) struct Found<'a> {
    pub cfg: &'a Cfg,
    pub live: &'a Liveness,
    pub built: &'a Built,
    pub scanned: &'a Scanned,
}

/// Computes operand allocations and edits into `output` (every field rewritten, its
/// buffers reused).
pub(crate) fn resolve<F: Function>(
    func: &F,
    env: &MachineEnv,
    found: Found<'_>,
    output: &mut Output,
    scratch: &mut Scratch,
) -> Result<(), RegAllocError> {
    let Found {
        cfg,
        live,
        built,
        scanned,
    } = found;
    let spare = scratch;
    let mut pending = std::mem::take(&mut spare.pending);
    pending.clear();
    let mut def_site = std::mem::take(&mut spare.def_site);
    let no_def = (u32::MAX, Operand::reg_use(VReg::new(0, RegClass::Int)));
    refill(&mut def_site, func.num_vregs(), no_def);
    let mut split_table = std::mem::take(&mut spare.split_table);
    split_table.refill(built);
    let mut operand_cursor = std::mem::take(&mut spare.cursors[0]);
    operand_cursor.reset(&split_table);
    let mut r = Resolver {
        func,
        env,
        cfg,
        built,
        vreg_slot: &scanned.vreg_slot,
        pending,
        occupancy_built: false,
        emergency_base: scanned.num_slots,
        used_emergency: false,
        def_site,
        operand_cursor,
        split_table,
        spare,
        steps: 0,
    };
    let result = r.resolve_into(live, output);
    // The buffers go back even on failure, for the next function.
    r.spare.pending = r.pending;
    r.spare.def_site = r.def_site;
    r.spare.cursors[0] = r.operand_cursor;
    r.spare.split_table = r.split_table;
    result?;
    output.stats = Stats {
        intervals: built.num_live_vregs,
        splits: scanned.splits,
        max_live: built.max_live,
        work: crate::Work {
            liveness: live.steps,
            intervals: built.steps,
            scan: scanned.scan_steps,
            resolve: r.steps
                + (func.num_insts() + func.num_blocks() + output.allocs.len() + output.edits.len())
                    as u64,
            dense_liveness: live.dense,
        },
        ..Stats::default()
    };
    Output::count_edits(&output.edits, &mut output.stats);
    output.num_spillslots = scanned.num_slots as usize + if r.used_emergency { 3 } else { 0 };
    output.times = Default::default();
    Ok(())
}

impl<F: Function> Resolver<'_, F> {
    /// Every step, in order; the allocations, their offsets and the edits go to `output`.
    fn resolve_into(&mut self, live: &Liveness, output: &mut Output) -> Result<(), RegAllocError> {
        self.operand_allocations(&mut output.allocs, &mut output.inst_alloc_offsets)?;
        self.split_moves();
        self.edge_moves(live)?;
        self.def_stores();
        self.sequence_all(&mut output.edits);
        Ok(())
    }

    /// Location of `vreg` at `pos`, an operand's position where `vreg` is live. Operands
    /// are resolved in program order, so one forward cursor serves every lookup.
    /// Always inlined, so the found location stays in registers: returned through memory
    /// as a `Result` (the error is large), the caller's reads of it stalled on the
    /// differently sized stores just before (store-to-load forwarding fails).
    #[inline(always)]
    fn loc(&mut self, vreg: VReg, pos: u32) -> Result<Allocation, RegAllocError> {
        match self
            .operand_cursor
            .loc(self.built, &self.split_table, vreg.index() as u32, pos)
        {
            Some(alloc) => Ok(alloc),
            None => Err(no_location(vreg, pos)),
        }
    }

    fn slot(&self, vreg: VReg) -> Result<Allocation, RegAllocError> {
        self.vreg_slot[vreg.index()]
            .map(Allocation::Stack)
            .ok_or_else(|| internal(format!("{vreg} is pinned to the stack but has no slot")))
    }

    fn add(&mut self, point: ProgPoint, group: u8, vreg: VReg, from: Allocation, to: Allocation) {
        self.add_move(point, group, vreg, from, to, false);
    }

    fn add_move(
        &mut self,
        point: ProgPoint,
        group: u8,
        vreg: VReg,
        from: Allocation,
        to: Allocation,
        defines: bool,
    ) {
        if from != to {
            let class = vreg.class();
            self.pending.push(PendingMove {
                point,
                group,
                class,
                from,
                to,
                vreg,
                defines,
            });
        }
    }

    fn operand_allocations(
        &mut self,
        allocs: &mut Vec<Allocation>,
        offsets: &mut Vec<u32>,
    ) -> Result<(), RegAllocError> {
        let func = self.func;
        allocs.clear();
        offsets.clear();
        for i in 0..func.num_insts() as u32 {
            let inst = Inst(i);
            let ops = func.inst_operands(inst);
            let base = allocs.len();
            offsets.push(base as u32);
            let g = gap(i);
            for op in ops {
                let v = op.vreg();
                if op.is_def() {
                    self.def_site[v.index()] = (i, *op);
                }
                let alloc = match (op.is_use(), op.constraint()) {
                    (true, OperandConstraint::FixedReg(r)) => {
                        let from = self.loc(v, g)?;
                        self.add(ProgPoint::before(inst), 2, v, from, Allocation::Reg(r));
                        Allocation::Reg(r)
                    }
                    (true, OperandConstraint::Stack) => {
                        let slot = self.slot(v)?;
                        let from = self.loc(v, g)?;
                        self.add(ProgPoint::before(inst), 2, v, from, slot);
                        slot
                    }
                    (true, _) => {
                        let pos = if op.pos() == OperandPos::Early {
                            g + 1
                        } else {
                            g + 2
                        };
                        self.loc(v, pos)?
                    }
                    (false, OperandConstraint::FixedReg(r)) => {
                        if let Some(to) = self.built.loc_at(v, gap(i + 1)) {
                            self.add_move(
                                ProgPoint::before(Inst(i + 1)),
                                1,
                                v,
                                Allocation::Reg(r),
                                to,
                                true,
                            );
                        }
                        Allocation::Reg(r)
                    }
                    (false, OperandConstraint::Stack) => {
                        let slot = self.slot(v)?;
                        if let Some(to) = self.built.loc_at(v, gap(i + 1)) {
                            self.add_move(ProgPoint::before(Inst(i + 1)), 1, v, slot, to, true);
                        }
                        slot
                    }
                    (false, OperandConstraint::Reuse(_)) => self.loc(v, g + 1)?,
                    (false, _) => {
                        let pos = if op.pos() == OperandPos::Early {
                            g + 1
                        } else {
                            g + 2
                        };
                        self.loc(v, pos)?
                    }
                };
                allocs.push(alloc);
            }
            for (k, op) in ops.iter().enumerate() {
                if let OperandConstraint::Reuse(n) = op.constraint() {
                    let target = allocs[base + k];
                    debug_assert!(
                        target.as_reg().is_some(),
                        "a reuse def is allocated a register"
                    );
                    let input = ops[n].vreg();
                    let from = self.loc(input, g)?;
                    self.add(ProgPoint::before(inst), 2, input, from, target);
                    allocs[base + n] = target;
                }
            }
        }
        Ok(())
    }

    /// Moves where a vreg was split inside a live range (not at a block boundary, where the
    /// edge moves take over).
    fn split_moves(&mut self) {
        for pieces in self.built.pieces.split_lists() {
            for w in pieces.windows(2) {
                let a = &self.built.intervals[w[0] as usize];
                let b = &self.built.intervals[w[1] as usize];
                let p = b.start();
                if self.cfg.is_block_start_pos(p) || !self.built.covers(a, p - 1) {
                    continue;
                }
                debug_assert_eq!(p % 4, 0);
                let (from, to) = (a.alloc.expect("allocated"), b.alloc.expect("allocated"));
                let vreg = a.vreg;
                self.add(ProgPoint::before(Inst(p / 4)), 1, vreg, from, to);
            }
        }
    }

    /// Moves on each CFG edge: vregs live across it whose location changes, and block
    /// parameters receiving their arguments.
    ///
    /// Lookups go through cursors that only move forward: one sweep in block order finds
    /// each live-in vreg's location at its block's start, and the edge loop, also in block
    /// order, finds locations at each predecessor's end. Each cursor passes each piece of a
    /// vreg once, so the cost is O(Σ |live_in| + edges' arguments + pieces).
    fn edge_moves(&mut self, live: &Liveness) -> Result<(), RegAllocError> {
        let func = self.func;
        let built = self.built;
        // Per (block, live-in vreg) of several pieces: its location at the block's start,
        // and whether the piece holding it began before the block (then, on the edge from
        // the block laid out just before, the vreg stays in that piece: no move). Without
        // any split, every vreg has one location and only parameters move.
        let table = std::mem::take(&mut self.split_table);
        let spare = &mut self.spare;
        let mut at_start = std::mem::take(&mut spare.cursors[1]);
        at_start.reset(&table);
        let any_split = built.intervals.len() > func.num_vregs();
        let mut start_loc = std::mem::take(&mut spare.start_loc);
        refill(
            &mut start_loc,
            if any_split { live.live_in.total() } else { 0 },
            None,
        );
        self.steps += start_loc.len() as u64;
        let mut boundaries = std::mem::take(&mut spare.boundaries);
        // Blocks entered by an edge along which pieces change (see `edge_moves_with`): the
        // only ones whose live-in locations are read.
        let mut entered = std::mem::take(&mut spare.entered_by_change);
        refill(&mut entered, func.num_blocks(), false);
        if any_split {
            boundaries.refill(&table, gap(func.num_insts() as u32 + 1) as usize);
            for b in 0..func.num_blocks() {
                let pred_last = self.cfg.block_end_pos(b) - 1;
                for s in func.block_succs(Block(b as u32)) {
                    let first = self.cfg.block_start_pos(s.index());
                    entered[s.index()] |=
                        boundaries.any_between(pred_last.min(first), pred_last.max(first));
                }
            }
        }
        for b in (0..func.num_blocks()).filter(|&b| entered[b]) {
            let first = self.cfg.block_start_pos(b);
            let span = live.live_in.span(b);
            for (slot, &v) in start_loc[span.clone()].iter_mut().zip(live.live_in.get(b)) {
                if let Some(k) = built.pieces.split_index(v as usize) {
                    let piece = at_start.split_piece(&table, k, first);
                    *slot = Some((piece.alloc, piece.start < first));
                }
            }
        }
        self.spare.entered_by_change = entered;
        let mut at_end = std::mem::take(&mut self.spare.cursors[2]);
        at_end.reset(&table);
        let found = Located {
            start_loc: &start_loc,
            table: &table,
            boundaries: &boundaries,
        };
        let result = self.edge_moves_with(live, any_split, found, &mut at_end);
        self.split_table = table;
        self.spare.cursors[1] = at_start;
        self.spare.cursors[2] = at_end;
        self.spare.start_loc = start_loc;
        self.spare.boundaries = boundaries;
        result
    }

    /// The edge loop of [`Resolver::edge_moves`], given each live-in vreg's location at its
    /// block's start.
    ///
    /// An edge along which no piece of a split vreg starts (no boundary between the
    /// predecessor's last position and the successor's first, in either direction) leaves
    /// every live vreg in one piece: only its parameters can move, and its live-in vregs are
    /// not looked up.
    fn edge_moves_with(
        &mut self,
        live: &Liveness,
        any_split: bool,
        found: Located<'_>,
        at_end: &mut locate::Cursor,
    ) -> Result<(), RegAllocError> {
        let Located {
            start_loc,
            table,
            boundaries,
        } = found;
        let func = self.func;
        let built = self.built;
        for b in 0..func.num_blocks() {
            let block = Block(b as u32);
            let succs = func.block_succs(block);
            let pred_last = self.cfg.block_end_pos(b) - 1;
            for (k, &s) in succs.iter().enumerate() {
                let (point, group) = if succs.len() == 1 {
                    (ProgPoint::before(Inst(self.cfg.block_end[b] - 1)), 3)
                } else {
                    (ProgPoint::before(Inst(self.cfg.block_first[s.index()])), 0)
                };
                let falls_through = s.index() == b + 1;
                let first = self.cfg.block_start_pos(s.index());
                let pieces_change =
                    any_split && boundaries.any_between(pred_last.min(first), pred_last.max(first));
                // (Empty when no piece changes: the zip then stops at once.)
                let span = if pieces_change {
                    live.live_in.span(s.index())
                } else {
                    0..0
                };
                self.steps += span.len() as u64 + 1;
                for (&at_succ, &v) in start_loc[span].iter().zip(live.live_in.get(s.index())) {
                    let Some(split) = built.pieces.split_index(v as usize) else {
                        continue; // one location for the whole lifetime
                    };
                    let vreg = built.vregs[v as usize]
                        .ok_or_else(|| internal(format!("live vreg {v} never named")))?;
                    let Some((Some(to), began_before)) = at_succ else {
                        return Err(internal(format!("{vreg} unallocated on an edge")));
                    };
                    if falls_through && began_before {
                        continue; // the piece at the successor's start covers `pred_last`
                    }
                    let Some(from) = at_end.split_piece(table, split, pred_last).alloc else {
                        return Err(internal(format!("{vreg} unallocated on an edge")));
                    };
                    self.add(point, group, vreg, from, to);
                }
                let args = func.branch_blockparams(block, k);
                for (&a, &p) in args.iter().zip(func.block_params(s)) {
                    let from = at_end.loc(built, table, a.index() as u32, pred_last);
                    // An unsplit parameter has one piece, which covers its block's start; a
                    // split one is looked up (its first piece starts before its block when
                    // the block heads a rotated loop).
                    let to = match built.pieces.split_index(p.index()) {
                        None => built.pieces.of(p.index()).first().copied(),
                        Some(_) => built.piece_at(p, first),
                    }
                    .and_then(|q| built.intervals[q as usize].alloc);
                    let (Some(from), Some(to)) = (from, to) else {
                        return Err(internal(format!("{p} or {a} unallocated on an edge")));
                    };
                    self.add_move(point, group, p, from, to, true);
                }
            }
        }
        Ok(())
    }

    /// Stores every vreg that has a spill slot into it once, right after its def (or at
    /// the start of its block for a parameter), unless the def writes the slot itself.
    ///
    /// Post-invariant: from its def on, a vreg's slot holds the vreg on every path (the def
    /// dominates the vreg's lifetime, values never change in SSA, and the scan gives the
    /// slot to no other vreg during this lifetime). Every other move of the vreg from a
    /// register into its slot is therefore redundant and dropped by `sequence_all`.
    fn def_stores(&mut self) {
        // The piece at the def is looked up by position: in a block order where a loop's
        // header comes after its body (rotation), a vreg's first piece may start before it.
        for b in 0..self.func.num_blocks() {
            let start = self.cfg.block_start_pos(b);
            for &p in self.func.block_params(Block(b as u32)) {
                // A block parameter: bound by the edge moves at its block's start.
                self.def_store(p, start, |reg| (ProgPoint::before(Inst(start / 4)), reg));
            }
        }
        for v in 0..self.func.num_vregs() {
            let (def_inst, def_op) = self.def_site[v];
            // (Only a vreg with a slot is stored: most have none.)
            if def_inst == u32::MAX || self.vreg_slot[v].is_none() {
                continue;
            }
            let at = crate::intervals::def_start(def_op, def_inst);
            let after = ProgPoint::before(Inst(def_inst + 1));
            match def_op.constraint() {
                OperandConstraint::FixedReg(fixed) => {
                    self.def_store(def_op.vreg(), at, |_| (after, Allocation::Reg(fixed)));
                }
                OperandConstraint::Stack => {}
                _ => self.def_store(def_op.vreg(), at, |reg| (after, reg)),
            }
        }
    }

    /// The store of `vreg` into its slot (if it has one) when its piece at `def_pos` is in a
    /// register: `place` gives the point and the source location from that register.
    fn def_store(
        &mut self,
        vreg: VReg,
        def_pos: u32,
        place: impl FnOnce(Allocation) -> (ProgPoint, Allocation),
    ) {
        let Some(slot) = self.vreg_slot[vreg.index()] else {
            return;
        };
        let piece = self.built.piece_at(vreg, def_pos);
        let Some(Allocation::Reg(reg)) = piece.and_then(|q| self.built.intervals[q as usize].alloc)
        else {
            return; // no live range, or the def (or the parameter binding) writes the slot
        };
        let (point, from) = place(Allocation::Reg(reg));
        self.add_move(point, 1, vreg, from, Allocation::Stack(slot), true);
    }

    /// Whether `m` copies a vreg from a register into the vreg's own slot, which already
    /// holds it (see `def_stores`).
    fn is_redundant_store(&self, m: &PendingMove) -> bool {
        !m.defines
            && !m.from.is_stack()
            && Some(m.to) == self.vreg_slot[m.vreg.index()].map(Allocation::Stack)
    }

    fn occupancy(&mut self) -> &Occupancy {
        if !self.occupancy_built {
            self.spare
                .occupancy
                .refill(self.built, self.func.num_insts());
            self.occupancy_built = true;
        }
        &self.spare.occupancy
    }

    /// A register of `class` holding nothing live around gap `g` and not named by `moves`.
    fn free_reg(
        &mut self,
        class: RegClass,
        g: u32,
        moves: &[(Allocation, Allocation)],
    ) -> Option<PReg> {
        let env = self.env;
        let occ = self.occupancy();
        env.allocatable[class.index()].iter().copied().find(|&r| {
            let a = Allocation::Reg(r);
            if moves.iter().any(|&(s, d)| s == a || d == a) {
                return false;
            }
            !occ.occupied(r.index(), g.saturating_sub(1), g + 2)
        })
    }

    fn sequence_all(&mut self, edits: &mut Vec<(ProgPoint, Edit)>) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.retain(|m| !self.is_redundant_store(m));
        let num_points = ProgPoint::before(Inst(self.func.num_insts() as u32)).raw() as usize + 2;
        let spare = &mut self.spare;
        sort_moves(
            &mut pending,
            num_points,
            &mut spare.sort_counts,
            &mut spare.sorted,
        );
        edits.clear();
        edits.reserve(pending.len());
        let mut group_moves = std::mem::take(&mut spare.group_moves);
        let mut seq = std::mem::take(&mut spare.seq);
        let mut k = 0;
        while k < pending.len() {
            let head = pending[k];
            let mut end = k;
            group_moves.clear();
            while end < pending.len()
                && (pending[end].point, pending[end].group, pending[end].class)
                    == (head.point, head.group, head.class)
            {
                group_moves.push((pending[end].from, pending[end].to));
                end += 1;
            }
            seq.clear();
            if group_moves.len() > 1 {
                // Two operands may ask for the same copy (one vreg fixed to one register
                // twice); a parallel move names each destination once.
                group_moves.sort_unstable_by_key(|&(from, to)| (to, from));
                group_moves.dedup();
                debug_assert!(group_moves.windows(2).all(|w| w[0].1 != w[1].1));
            }
            if let [(from, to)] = group_moves[..] {
                if !(from.is_stack() && to.is_stack()) {
                    edits.push((
                        head.point,
                        Edit {
                            from,
                            to,
                            class: head.class,
                        },
                    ));
                    k = end;
                    continue;
                }
            }
            // Most groups need no temporary: sequence them directly, and look for a free
            // register only when a cycle or a slot-to-slot copy needs one.
            let ordered = moves::sequence(&group_moves);
            let needs_temp = ordered.iter().any(|&(s, d)| {
                s == moves::Loc::Temp
                    || d == moves::Loc::Temp
                    || (matches!(s, moves::Loc::At(Allocation::Stack(_)))
                        && matches!(d, moves::Loc::At(Allocation::Stack(_))))
            });
            if needs_temp {
                match self.scratch_for(head.class, head.point, &group_moves) {
                    // With a free temporary, `resolve_parallel` would sequence the group
                    // again, into `ordered`: give its temporary a home instead.
                    MoveScratch::Free { reg, slot } => moves::lower(&ordered, reg, slot, &mut seq),
                    borrowed => moves::resolve_parallel(&group_moves, borrowed, &mut seq),
                }
            } else {
                seq.extend(ordered.iter().map(|&(s, d)| match (s, d) {
                    (moves::Loc::At(s), moves::Loc::At(d)) => (s, d),
                    _ => unreachable!("no temporary in this sequence"),
                }));
            }
            for &(from, to) in &seq {
                edits.push((
                    head.point,
                    Edit {
                        from,
                        to,
                        class: head.class,
                    },
                ));
            }
            k = end;
        }
        self.pending = pending;
        self.spare.group_moves = group_moves;
        self.spare.seq = seq;
    }

    fn scratch_for(
        &mut self,
        class: RegClass,
        point: ProgPoint,
        moves: &[(Allocation, Allocation)],
    ) -> MoveScratch {
        let base = self.emergency_base;
        let slot = SpillSlot(base + 2);
        if let Some(reg) = self.env.scratch[class.index()] {
            self.note_emergency_if_cyclic(moves);
            return MoveScratch::Free { reg, slot };
        }
        let g = gap(point.inst().0);
        if let Some(reg) = self.free_reg(class, g, moves) {
            self.note_emergency_if_cyclic(moves);
            return MoveScratch::Free { reg, slot };
        }
        self.used_emergency = true;
        let reg = self.env.allocatable[class.index()][0];
        MoveScratch::Borrow {
            reg,
            save: SpillSlot(base),
            new_value: SpillSlot(base + 1),
            cycle: slot,
        }
    }

    /// The cycle slot may be used by any parallel move with a cycle; reserve the emergency
    /// slots whenever one might be needed (cheap: three slots per function at most).
    /// (`moves` is sorted by destination, as `sequence_all` leaves a group: a source is
    /// looked up among the destinations by binary search, O(m log m).)
    fn note_emergency_if_cyclic(&mut self, moves: &[(Allocation, Allocation)]) {
        debug_assert!(moves.is_sorted_by_key(|m| m.1));
        if moves
            .iter()
            .any(|&(s, _)| moves.binary_search_by_key(&s, |m| m.1).is_ok())
        {
            self.used_emergency = true;
        }
    }
}
