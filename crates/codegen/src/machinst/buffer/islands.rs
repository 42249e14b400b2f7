//! Deadlines, islands, veneers, the constant pool and `finish`.
//!
//! A label use is patched only once its label's offset is final (I5): at an island or at the
//! end. Until then it counts towards the buffer's *deadline*, the earliest offset some pending
//! use can still reach forward. The backend asks [`MachBuffer::island_needed`] before each
//! instruction (with `distance` at least the bytes it may emit before asking again); when the
//! worst-case island would end past the deadline it jumps around and calls
//! [`MachBuffer::emit_island`]. The island
//!
//! 1. patches every use whose label is final and in range (or, for an out-of-range backward
//!    use, or when the chaos control skips the direct patch, sends it through a veneer);
//! 2. sends each use whose label is still unknown through a veneer if its deadline falls
//!    before the island's worst-case end plus `distance` (earliest deadline first);
//! 3. emits the pending constants, binding their labels, and patches the uses of them and
//!    the label uses inside them (jump tables), or keeps those for later.
//!
//! A veneer's own use (a longer-range kind) is a new fixup, resolved the same way later.

use std::mem;

use super::types::{BufferError, Fixup, MachBufferFinalized, PendingConstant, UNBOUND};
use super::{BufferMemory, Label, LabelUse, MachBuffer};
use crate::chaos::{Chaos, Decision};

impl<U: LabelUse> MachBuffer<U> {
    /// Register `bytes` (aligned to `align`, a power of two) in the constant pool; it is
    /// emitted at the next island or at the end, where the returned label is bound.
    pub fn add_constant(&mut self, bytes: &[u8], align: u32) -> Label {
        self.add_constant_with_uses(bytes, align, Vec::new())
    }

    /// [`MachBuffer::add_constant`] for data that refers to code (a jump table): each
    /// `(offset, label, kind)` is a label use at `offset` in `bytes`, recorded where the
    /// constant lands and patched like any other use (so it sees jump threading).
    pub fn add_constant_with_uses(
        &mut self,
        bytes: &[u8],
        align: u32,
        uses: Vec<(u32, Label, U)>,
    ) -> Label {
        assert!(!bytes.is_empty(), "empty constant");
        assert!(align.is_power_of_two(), "constant alignment {align}");
        debug_assert!(
            uses.iter()
                .all(|&(off, _, kind)| off + kind.patch_size() <= bytes.len() as u32),
            "a use past the constant"
        );
        let label = self.get_label();
        let c = PendingConstant {
            label,
            align,
            bytes: bytes.to_vec(),
            uses,
        };
        self.pending_constants_size = self
            .pending_constants_size
            .saturating_add(c.worst_case_size());
        self.pending_constants.push(c);
        // Post-invariant: I4, the size bound grew by the constant's worst case and its label
        // is fresh, hence unbound.
        label
    }

    /// [`MachBuffer::add_constant`] for a constant of at most 16 bytes that may be shared:
    /// an equal pending constant (same bytes, same alignment) gives its label instead of a
    /// second copy. Cost: O(1) expected (one hash-map probe).
    pub fn add_pooled_constant(&mut self, bytes: &[u8], align: u32) -> Label {
        assert!(bytes.len() <= 16, "a pooled constant has at most 16 bytes");
        let mut key = [0u8; 16];
        key[..bytes.len()].copy_from_slice(bytes);
        let key = (key, bytes.len() as u8, align);
        if let Some(&label) = self.pooled.get(&key) {
            // Post-invariant: I4, nothing changed; the entry still names a pending constant.
            return label;
        }
        let label = self.add_constant(bytes, align);
        self.pooled.insert(key, label);
        // Post-invariant: I4, the new entry names the constant just added, with these bytes.
        label
    }

    /// The largest island that could be emitted now: a veneer (plus alignment) for every
    /// unpatched use, and every pending constant.
    fn worst_case_island_size(&self) -> u32 {
        let uses = (self.pending_fixups.len() + self.deferred_fixups.len()) as u32;
        uses.saturating_mul(U::MAX_VENEER_SIZE + U::ALIGN - 1)
            .saturating_add(self.pending_constants_size)
    }

    /// Must an island be emitted before `distance` more bytes, so that every pending label
    /// use can still be reached?
    pub fn island_needed(&self, distance: u32) -> bool {
        self.fixup_deadline != u32::MAX
            && self
                .cur_offset()
                .saturating_add(distance)
                .saturating_add(self.worst_case_island_size())
                > self.fixup_deadline
    }

    /// Emit an island here: veneers for uses that cannot wait and the pending constants. The
    /// caller guarantees control never falls into it (it jumps around it), and passes the same
    /// `distance` as to `island_needed`.
    pub fn emit_island(&mut self, distance: u32, chaos: &mut Chaos) {
        self.latest_branches.clear();
        // Post-invariant: I3 holds for the empty window; from here on I5 makes every label
        // resolving below `cur_offset` final.
        let start = self.cur_offset();
        let threshold = start
            .saturating_add(distance)
            .saturating_add(self.worst_case_island_size());
        let mut work = mem::take(&mut self.pending_fixups);
        work.append(&mut self.deferred_fixups);
        self.resolve_fixups(&mut work, start, threshold, chaos);
        self.emit_pending_constants(&mut work);
        // Labels bound in the island (or at its start, now that bytes follow) are final too.
        let end = self.cur_offset();
        self.resolve_fixups(&mut work, end, 0, chaos);
        self.fixup_deadline = work.iter().map(Fixup::deadline).min().unwrap_or(u32::MAX);
        // The kept uses become the deferred ones; the (empty) deferred list's memory serves
        // the next pending uses.
        self.pending_fixups = mem::replace(&mut self.deferred_fixups, work);
        // Post-invariant: I4, the deadline is recomputed over exactly the remaining fixups
        // (pending is empty) and the constants are gone.
        self.after_mutation();
    }

    /// Resolve every label use, emit the constant pool, and return the finished code with
    /// the final offset of every label.
    pub fn finish(mut self, chaos: &mut Chaos) -> Result<MachBufferFinalized, BufferError> {
        let mut label_offsets = Vec::new();
        let mut done = self.finish_parts(chaos, &mut BufferMemory::default(), |buf| {
            label_offsets = (0..buf.num_labels())
                .map(|i| buf.label_offset(Label(i as u32)))
                .collect();
        })?;
        done.label_offsets = label_offsets;
        Ok(done)
    }

    /// [`MachBuffer::finish`] without the label offsets (left empty: the compile pipeline
    /// does not ask for them), emptying the buffer and giving its working lists to `memory`
    /// for the next buffer ([`MachBuffer::reusing`]) when it succeeds.
    pub fn finish_into(
        &mut self,
        chaos: &mut Chaos,
        memory: &mut BufferMemory<U>,
    ) -> Result<MachBufferFinalized, BufferError> {
        self.finish_parts(chaos, memory, |_| {})
    }

    /// The shared part of [`MachBuffer::finish`] and [`MachBuffer::finish_into`]; `labels`
    /// may read the final label offsets before the working lists go to `memory`.
    fn finish_parts(
        &mut self,
        chaos: &mut Chaos,
        memory: &mut BufferMemory<U>,
        labels: impl FnOnce(&Self),
    ) -> Result<MachBufferFinalized, BufferError> {
        if let Some(e) = self.invariant_error.take() {
            return Err(BufferError::Invariant(e));
        }
        self.latest_branches.clear();
        // Post-invariant: I3 holds for the empty window; no code follows, so every bound label
        // is final.
        let mut work = mem::take(&mut self.pending_fixups);
        work.append(&mut self.deferred_fixups);
        self.resolve_fixups(&mut work, u32::MAX, 0, chaos);
        self.emit_pending_constants(&mut work);
        // Each round patches what it can; a veneer adds a use of a kind that reaches further
        // (a `LabelUse` requirement), so a few rounds end it.
        // `LabelUse` requires a veneer's kind to reach further than the use it forwards, so
        // chains are short; the bound only guards against a target that breaks that rule.
        let mut rounds = 0;
        while !work.is_empty() {
            // Every label that will ever be bound is bound now.
            if let Some(f) = work.iter().find(|f| self.label_offset(f.label).is_none()) {
                return Err(BufferError::UnboundLabel(f.label));
            }
            self.resolve_fixups(&mut work, u32::MAX, 0, chaos);
            rounds += 1;
            assert!(rounds < 64, "veneer chain does not end");
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        labels(self);
        self.relocs.sort_by_key(|r| r.offset);
        self.traps.sort_by_key(|t| t.offset);
        *memory = BufferMemory {
            label_offsets: mem::take(&mut self.label_offsets),
            label_aliases: mem::take(&mut self.label_aliases),
            pending_fixups: work,
            deferred_fixups: mem::take(&mut self.deferred_fixups),
            latest_branches: mem::take(&mut self.latest_branches),
            pending_constants: mem::take(&mut self.pending_constants),
            recycled: MachBufferFinalized::default(),
        };
        Ok(MachBufferFinalized {
            data: mem::take(&mut self.data),
            relocs: mem::take(&mut self.relocs),
            traps: mem::take(&mut self.traps),
            unwind: mem::take(&mut self.unwind),
            srclocs: mem::take(&mut self.srclocs),
            label_offsets: Vec::new(),
        })
    }

    /// Patch or veneer each use in `work` whose label resolves below `final_below` (final by
    /// I5); veneer a use of an unknown label whose deadline is before `threshold`; leave in
    /// `work` the rest, plus the veneers' own uses, in processing order.
    fn resolve_fixups(
        &mut self,
        work: &mut Vec<Fixup<U>>,
        final_below: u32,
        threshold: u32,
        chaos: &mut Chaos,
    ) {
        // Earliest deadline first, so the most urgent veneers sit nearest.
        work.sort_by_key(Fixup::deadline);
        self.steps += work.len() as u64;
        // In place: each use yields at most one, written at `kept <= i` after use i was read.
        let mut kept = 0;
        for i in 0..work.len() {
            let f = work[i];
            let target = self.resolved_offset(f.label);
            let next = if target != UNBOUND && target < final_below {
                self.patch_or_veneer(f, target, chaos)
            } else if f.kind.supports_veneer() && f.deadline() < threshold {
                self.emit_veneer(f)
            } else {
                Some(f)
            };
            if let Some(next) = next {
                work[kept] = next;
                kept += 1;
            }
        }
        work.truncate(kept);
    }

    /// Patch `f` to `target` when in range, else forward it through a veneer. Returns the
    /// veneer's use, if one was emitted.
    fn patch_or_veneer(&mut self, f: Fixup<U>, target: u32, chaos: &mut Chaos) -> Option<Fixup<U>> {
        let in_range = if target >= f.offset {
            target - f.offset <= f.kind.max_pos_range()
        } else {
            f.offset - target <= f.kind.max_neg_range()
        };
        let veneer_reachable = f.kind.supports_veneer() && self.veneer_in_reach(&f);
        if in_range && !(veneer_reachable && chaos.should_skip(Decision::DirectPatch)) {
            let at = f.offset as usize;
            let bytes = &mut self.data[at..at + f.kind.patch_size() as usize];
            f.kind.patch(bytes, f.offset, target);
            // Post-invariant: only bytes of a final use changed; no structure changed.
            None
        } else if f.kind.supports_veneer() {
            self.emit_veneer(f)
        } else {
            self.record_error(BufferError::OutOfRange {
                offset: f.offset,
                label: f.label,
                target,
            });
            None
        }
    }

    /// Would a veneer emitted now be reachable from `f`?
    fn veneer_in_reach(&self, f: &Fixup<U>) -> bool {
        let at = self.cur_offset().next_multiple_of(U::ALIGN);
        at >= f.offset && at - f.offset <= f.kind.max_pos_range()
    }

    /// Emit a veneer for `f` at the tail, point `f` at it, and return the veneer's own use.
    fn emit_veneer(&mut self, f: Fixup<U>) -> Option<Fixup<U>> {
        if !self.veneer_in_reach(&f) {
            self.record_error(BufferError::OutOfRange {
                offset: f.offset,
                label: f.label,
                target: self.cur_offset(),
            });
            return None;
        }
        self.align_to(U::ALIGN);
        let at = self.cur_offset();
        let size = f.kind.veneer_size();
        self.data.resize((at + size) as usize, 0);
        let (use_offset, kind) = f.kind.generate_veneer(&mut self.data[at as usize..], at);
        let start = f.offset as usize;
        f.kind.patch(
            &mut self.data[start..start + f.kind.patch_size() as usize],
            f.offset,
            at,
        );
        // Post-invariant: the window is empty (islands and `finish` clear it), so appending
        // keeps I2/I3 as `put*` does; the new use is returned to the caller's work list, which
        // feeds `deferred_fixups` and the recomputed deadline (I4).
        Some(Fixup {
            label: f.label,
            offset: use_offset,
            kind,
        })
    }

    /// Emit every pending constant, binding its label where it lands; add the label uses
    /// inside them to `uses`, for the caller to resolve.
    fn emit_pending_constants(&mut self, uses: &mut Vec<Fixup<U>>) {
        let mut constants = mem::take(&mut self.pending_constants);
        for c in constants.drain(..) {
            self.align_to(c.align);
            self.bind_label_here(c.label);
            let at = self.cur_offset();
            self.put_data(&c.bytes);
            uses.extend(c.uses.into_iter().map(|(off, label, kind)| Fixup {
                label,
                offset: at + off,
                kind,
            }));
        }
        // (Emitting bytes adds no constant: the list taken is the whole pool.)
        debug_assert!(self.pending_constants.is_empty());
        self.pending_constants = constants;
        self.pending_constants_size = 0;
        self.pooled.clear();
        // Post-invariant: I4, no constant is pending and none is pooled. Each constant label is bound below
        // `cur_offset` (constants are never empty), so it is final (I5). The added uses lie
        // inside emitted bytes; the caller (an island or `finish`) resolves them with its
        // work list, which feeds `deferred_fixups` and the recomputed deadline, and the
        // island's worst case counted a veneer for each of them.
    }

    fn record_error(&mut self, e: BufferError) {
        self.error.get_or_insert(e);
    }
}
