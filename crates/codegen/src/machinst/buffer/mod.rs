//! The `MachBuffer`: a machine-code sink that understands branches (seed 000).
//!
//! # Contract
//!
//! A backend emits code in final block order (see `blockorder`) and lowers every two-way
//! branch naively, as a conditional branch to the taken target followed by an unconditional
//! branch to the other. After emitting a branch's bytes it records the label use inside them
//! ([`MachBuffer::use_label_at_offset`]) and then describes the branch
//! ([`MachBuffer::add_uncond_branch`], [`MachBuffer::add_cond_branch`] with the bytes of the
//! inverted condition). The buffer streams those branches into their final form while code is
//! still being emitted, in one pass and linear time, by editing only the *tail* of the buffer:
//! it never moves code that follows an edit, so offsets already handed out stay valid.
//!
//! When a label is bound ([`MachBuffer::bind_label`]) the buffer looks at the branches that
//! end exactly at the tail ("the window") and applies, until none applies:
//!
//! 1. **Fallthrough removal** — the last branch targets the tail: delete it.
//! 2. **Inversion** — a conditional branch to the tail followed by an unconditional branch
//!    (with no label bound between them): invert the condition, retarget it to the
//!    unconditional branch's target, delete the unconditional branch.
//! 3. **Jump threading** — labels bound at an unconditional branch become *aliases* of its
//!    target, so every use of them resolves past the jump; an alias is never created when the
//!    target already resolves to the jump itself, which keeps alias chains acyclic.
//! 4. **Dead-branch removal** — an unconditional branch right after another one, with no label
//!    bound at it, is unreachable: delete it.
//!
//! Every rule asks the [`Chaos`] control first; skipping any of them is always correct.
//!
//! Label uses are patched late: at an island ([`MachBuffer::emit_island`]) or at
//! [`MachBuffer::finish`]. Each use has a *deadline* (the last offset its kind can reach
//! forward); [`MachBuffer::island_needed`] tells the backend when the worst-case island would
//! pass the earliest deadline, and the island then holds veneers (longer-range branches that
//! forward a short-range use) and the pending constants ([`MachBuffer::add_constant`];
//! [`MachBuffer::add_pooled_constant`] shares one copy among equal constants until they are
//! emitted, O(1) expected per constant of at most 16 bytes).
//! Relocations, trap sites, unwind markers ([`MachBuffer::add_unwind`], one per
//! prologue/epilogue step) and source ranges ([`MachBuffer::start_srcloc`]) are recorded
//! with their offsets, O(1) each (truncating a branch cuts the ranges back to the new tail);
//! `finish` resolves every label use and reports a label that was used but never bound.
//!
//! # Invariants
//!
//! Stated once here; every mutation below argues them in a `Post-invariant:` comment, and
//! [`MachBuffer::check_invariants`] checks all of them after every bind and island: in debug
//! builds and tests always (a violation panics), and in any build once
//! [`MachBuffer::set_validate`] is on (the first violation is kept and [`MachBuffer::finish`]
//! returns it as [`BufferError::Invariant`]).
//!
//! - **I1 (labels).** Each label is *unbound*, *bound* (an offset `<= cur_offset`, no alias) or
//!   an *alias* (of another label; its stored offset is meaningless). Following aliases from any
//!   label ends after finitely many steps (no cycles). A label only becomes an alias while it
//!   is bound at the start of a window branch.
//! - **I2 (labels at tail).** `labels_at_tail` is exactly the set of bound labels whose offset
//!   is `labels_at_tail_off`; `labels_at_tail_off <= cur_offset`; no bound label lies in
//!   `(labels_at_tail_off, cur_offset]`; every window branch ends at or before
//!   `labels_at_tail_off`.
//! - **I3 (window).** `latest_branches` are contiguous and increasing (`b[i].end ==
//!   b[i+1].start`, `start < end <= cur_offset`). Branch `b` owns `pending_fixups[b.fixup]`, a
//!   use of `b.target` inside `b.start..b.end`; the branches' fixups are consecutive, and when
//!   the window is *live* (its last branch ends at `cur_offset`) they are the tail of
//!   `pending_fixups`. `b.labels_here` is exactly the set of bound labels whose offset is
//!   `b.start`, and no bound label lies strictly inside a branch. A conditional branch's
//!   `inverted` bytes have its length. Every trap site and relocation lies before the first
//!   window branch, and every unwind marker at or before its start.
//! - **I4 (deadlines).** `fixup_deadline` is at most the deadline of every pending or deferred
//!   fixup (a bound, not the minimum: a fixup deleted with its branch leaves it lower, which
//!   can only make an island come early; each island recomputes it exactly);
//!   `pending_constants_size` bounds the bytes (with alignment padding) the pending constants
//!   need; their labels are unbound. Every entry of `pooled` names a pending constant whose
//!   bytes and alignment are the entry's key (so a pooled label is always one the next
//!   island or `finish` binds, in reach of every use recorded before it).
//! - **I5 (finality).** A label resolving to an offset below the window's start (below
//!   `cur_offset` when the window is empty) never changes its resolution again: only labels
//!   at window branch starts become aliases and only labels at or after them move. Label
//!   uses are patched only against such final offsets (islands and `finish` empty the window
//!   first).
//!
//! Semantics are preserved because an edit only deletes or rewrites branch bytes at the tail
//! and moves the labels bound there to where the same control flow now begins.

mod islands;
mod types;
mod validate;

pub mod fuzzing;
#[cfg(test)]
mod tests;
pub mod toy;

use std::mem;

use crate::chaos::{Chaos, Decision};
use types::{Branch, Fixup, InlineBytes, LabelList, PendingConstant, UNBOUND};
pub use types::{BufferError, Label, LabelUse, MachBufferFinalized, Reloc, RelocKind, TrapSite};

use kestrel_ir::{FunctionName, TrapCode};

use super::unwind::UnwindOp;

/// A machine-code buffer with branch peephole, islands, constant pool, relocations and traps.
pub struct MachBuffer<U: LabelUse> {
    /// The bytes emitted so far; `cur_offset` is their length.
    data: Vec<u8>,
    /// Per label: its offset when bound, else `UNBOUND` (meaningless for an alias).
    label_offsets: Vec<u32>,
    /// Per label: the label it aliases, else `UNBOUND`.
    label_aliases: Vec<u32>,
    /// Label uses recorded since the last island, in recording order.
    pending_fixups: Vec<Fixup<U>>,
    /// Label uses an island could not resolve yet (their label was not final).
    deferred_fixups: Vec<Fixup<U>>,
    /// Lower bound of every pending and deferred fixup's deadline (I4).
    fixup_deadline: u32,
    /// The branches that end contiguously at (or near) the tail: the window (I3).
    latest_branches: Vec<Branch>,
    /// Labels bound at `labels_at_tail_off` (I2).
    labels_at_tail: LabelList,
    labels_at_tail_off: u32,
    /// Constants waiting for an island or the end.
    pending_constants: Vec<PendingConstant<U>>,
    pending_constants_size: u32,
    /// The pooled pending constants by (bytes zero-padded to 16, length, alignment) (I4).
    pooled: std::collections::HashMap<([u8; 16], u8, u32), Label>,
    relocs: Vec<Reloc>,
    traps: Vec<TrapSite>,
    /// Call-frame rule changes, by offset (never past a truncatable branch: see `add_unwind`).
    unwind: Vec<(u32, UnwindOp)>,
    /// `(start, end, srcloc)` of the instructions emitted so far that have a location.
    srclocs: Vec<(u32, u32, u32)>,
    /// The location of the instruction being emitted, with its start offset.
    open_srcloc: Option<(u32, u32)>,
    /// About how many instructions the code has (from the caller's size hint): room the
    /// location list takes at its first entry, so it is allocated once, not regrown.
    srcloc_hint: usize,
    /// About how many bytes of code the caller expects: the trap and relocation lists take
    /// room for such code's usual share at their first entry (a function without traps or
    /// relocations allocates neither list).
    code_hint: usize,
    /// A branch may only be registered when it starts at or after this offset: every trap
    /// site and relocation lies before it (I3).
    metadata_end: u32,
    /// The first range error met in an island (reported by `finish`).
    error: Option<BufferError>,
    /// Run the full validator after every bind and island, in any build.
    validate: bool,
    /// The first invariant violation the validator found (reported by `finish`).
    invariant_error: Option<String>,
    /// Work counted (see [`MachBuffer::steps`]).
    steps: u64,
}

/// The working lists of a [`MachBuffer`] that outlive it, for the next function's buffer
/// (see [`MachBuffer::reusing`]); their contents never carry over.
pub struct BufferMemory<U: LabelUse> {
    label_offsets: Vec<u32>,
    label_aliases: Vec<u32>,
    pending_fixups: Vec<Fixup<U>>,
    deferred_fixups: Vec<Fixup<U>>,
    latest_branches: Vec<Branch>,
    pending_constants: Vec<PendingConstant<U>>,
    /// The vectors of an earlier result the caller is done with ([`BufferMemory::recycle`]),
    /// which the next buffer writes its code and metadata into: a caller that reads each
    /// result before compiling the next makes compiles allocate nothing here.
    recycled: MachBufferFinalized,
}

impl<U: LabelUse> Default for BufferMemory<U> {
    fn default() -> Self {
        BufferMemory {
            label_offsets: Vec::new(),
            label_aliases: Vec::new(),
            pending_fixups: Vec::new(),
            deferred_fixups: Vec::new(),
            latest_branches: Vec::new(),
            pending_constants: Vec::new(),
            recycled: MachBufferFinalized::default(),
        }
    }
}

impl<U: LabelUse> BufferMemory<U> {
    /// Lend `done`'s vectors (emptied, their capacity kept) to the next buffer built in this
    /// memory, for its code and metadata.
    pub fn recycle(&mut self, done: MachBufferFinalized) {
        self.recycled = done;
    }
}

impl<U: LabelUse> BufferMemory<U> {
    fn clear(&mut self) {
        self.label_offsets.clear();
        self.label_aliases.clear();
        self.pending_fixups.clear();
        self.deferred_fixups.clear();
        self.latest_branches.clear();
        self.pending_constants.clear();
        let r = &mut self.recycled;
        r.data.clear();
        r.relocs.clear();
        r.traps.clear();
        r.unwind.clear();
        r.srclocs.clear();
    }
}

impl<U: LabelUse> Default for MachBuffer<U> {
    fn default() -> Self {
        Self::new()
    }
}

impl<U: LabelUse> MachBuffer<U> {
    /// An empty buffer.
    pub fn new() -> Self {
        MachBuffer {
            data: Vec::new(),
            label_offsets: Vec::new(),
            label_aliases: Vec::new(),
            pending_fixups: Vec::new(),
            deferred_fixups: Vec::new(),
            fixup_deadline: u32::MAX,
            latest_branches: Vec::new(),
            labels_at_tail: LabelList::new(),
            labels_at_tail_off: 0,
            pending_constants: Vec::new(),
            pending_constants_size: 0,
            pooled: std::collections::HashMap::new(),
            relocs: Vec::new(),
            traps: Vec::new(),
            unwind: Vec::new(),
            srclocs: Vec::new(),
            open_srcloc: None,
            srcloc_hint: 0,
            code_hint: 0,
            metadata_end: 0,
            error: None,
            validate: false,
            invariant_error: None,
            steps: 0,
        }
    }

    /// An empty buffer in `memory` (the working lists a previous buffer gave back through
    /// [`MachBuffer::finish_into`]), with room for `code_bytes` of code and `labels` labels.
    /// Only the code and the metadata handed to the caller are allocated afresh, unless the
    /// caller recycled an earlier result's vectors into `memory`.
    pub fn reusing(mut memory: BufferMemory<U>, code_bytes: usize, labels: usize) -> Self {
        memory.clear();
        let mut buf = MachBuffer {
            label_offsets: memory.label_offsets,
            label_aliases: memory.label_aliases,
            pending_fixups: memory.pending_fixups,
            deferred_fixups: memory.deferred_fixups,
            latest_branches: memory.latest_branches,
            pending_constants: memory.pending_constants,
            data: memory.recycled.data,
            relocs: memory.recycled.relocs,
            traps: memory.recycled.traps,
            unwind: memory.recycled.unwind,
            srclocs: memory.recycled.srclocs,
            ..Self::new()
        };
        buf.reserve(code_bytes, labels);
        buf
    }

    /// Room for about `code_bytes` of code and `labels` labels; the metadata lists handed to
    /// the caller take room for what such code usually carries (a few unwind rules, a trap
    /// site per few instructions) at their first entry, so that each is allocated at most
    /// once instead of regrown, and not at all when the code has none.
    fn reserve(&mut self, code_bytes: usize, labels: usize) {
        self.data.reserve(code_bytes);
        self.label_offsets.reserve(labels);
        self.label_aliases.reserve(labels);
        self.srcloc_hint = code_bytes / 4;
        self.code_hint = code_bytes;
    }

    /// An empty buffer with room for `code_bytes` of code and `labels` labels, so that
    /// emitting about that much grows nothing (a hint: the buffer grows as needed).
    pub fn with_capacity(code_bytes: usize, labels: usize) -> Self {
        let mut buf = Self::new();
        buf.reserve(code_bytes, labels);
        buf
    }

    /// Run the full validator after every bind and island, and report the first violation
    /// from `finish` instead of panicking (debug builds check even when this is off).
    pub fn set_validate(&mut self, on: bool) {
        self.validate = on;
    }

    /// Work counted so far: trips of the branch peephole's loop and label uses resolved
    /// (each pass over the uses counts them all).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The offset the next byte will be written at.
    #[inline]
    pub fn cur_offset(&self) -> u32 {
        debug_assert!(
            self.data.len() < u32::MAX as usize,
            "code larger than 4 GiB"
        );
        self.data.len() as u32
    }

    /// The bytes emitted so far (branch bytes at the tail may still change).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    // ---------------------------------------------------------------- byte sink

    /// Append one byte.
    // Post-invariant (all `put*`): appending moves `cur_offset` forward only. I2 holds because
    // no label is bound in the new range; I3 because window branches still end `<= cur_offset`
    // (the window merely stops being "live"); I4/I5 are unaffected.
    #[inline]
    pub fn put1(&mut self, value: u8) {
        self.data.push(value);
    }

    /// Append a little-endian `u16`.
    #[inline]
    pub fn put2(&mut self, value: u16) {
        self.data.extend_from_slice(&value.to_le_bytes());
    }

    /// Append a little-endian `u32`.
    #[inline]
    pub fn put4(&mut self, value: u32) {
        self.data.extend_from_slice(&value.to_le_bytes());
    }

    /// Append a little-endian `u64`.
    #[inline]
    pub fn put8(&mut self, value: u64) {
        self.data.extend_from_slice(&value.to_le_bytes());
    }

    /// Append raw bytes.
    #[inline]
    pub fn put_data(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
    }

    /// Pad with zero bytes up to a multiple of `align` (a power of two).
    pub(crate) fn align_to(&mut self, align: u32) {
        debug_assert!(align.is_power_of_two());
        let len = self.cur_offset().next_multiple_of(align);
        // Post-invariant: as for `put*`.
        self.data.resize(len as usize, 0);
    }

    // ---------------------------------------------------------------- labels

    /// A fresh, unbound label.
    pub fn get_label(&mut self) -> Label {
        let l = Label(self.label_offsets.len() as u32);
        self.label_offsets.push(UNBOUND);
        self.label_aliases.push(UNBOUND);
        // Post-invariant: the new label is unbound (I1) and in no list.
        l
    }

    /// Number of labels created so far.
    pub fn num_labels(&self) -> usize {
        self.label_offsets.len()
    }

    /// Bind `label` to the current offset (once per label), then simplify the branches that
    /// end here.
    pub fn bind_label(&mut self, label: Label, chaos: &mut Chaos) {
        self.bind_label_here(label);
        self.optimize_branches(chaos);
        // Post-invariant: by `optimize_branches`.
        self.after_mutation();
    }

    /// Bind `label` at the tail without running the peephole (islands use this too).
    fn bind_label_here(&mut self, label: Label) {
        let i = label.index();
        assert!(
            self.label_offsets[i] == UNBOUND && self.label_aliases[i] == UNBOUND,
            "{label:?} is bound twice"
        );
        let cur = self.cur_offset();
        if self.labels_at_tail_off != cur {
            // No bound label lies in (labels_at_tail_off, cur] (I2), so the empty list is exact.
            self.labels_at_tail.clear();
            self.labels_at_tail_off = cur;
        }
        self.label_offsets[i] = cur;
        self.labels_at_tail.push(label);
        // Post-invariant: I1, the label is bound at `cur <= cur_offset`. I2, the list held every
        // label at `cur` and now holds the new one too. I3, window branches end `<= cur`, and
        // the label is not strictly inside any of them because they all end at or before `cur`.
    }

    /// Follow aliases from `label` to the label that carries the offset.
    fn resolve_alias(&self, label: Label) -> Label {
        let mut l = label.0;
        let mut steps = 0usize;
        while self.label_aliases[l as usize] != UNBOUND {
            l = self.label_aliases[l as usize];
            steps += 1;
            // I1 says chains are acyclic, so a chain can visit each label at most once.
            assert!(steps <= self.label_aliases.len(), "cycle in label aliases");
        }
        Label(l)
    }

    /// The offset `label` currently resolves to, if it (or what it aliases) is bound. Offsets
    /// of labels at the tail may still change until more code is emitted.
    pub fn label_offset(&self, label: Label) -> Option<u32> {
        let off = self.resolved_offset(label);
        (off != UNBOUND).then_some(off)
    }

    fn resolved_offset(&self, label: Label) -> u32 {
        self.label_offsets[self.resolve_alias(label).index()]
    }

    // ---------------------------------------------------------------- label uses

    /// Record that the bytes at `offset` (already emitted, `kind.patch_size()` of them) refer
    /// to `label`; they are patched once the label's offset is final.
    pub fn use_label_at_offset(&mut self, offset: u32, label: Label, kind: U) {
        debug_assert!(label.index() < self.label_offsets.len());
        debug_assert!(
            offset + kind.patch_size() <= self.cur_offset(),
            "use past the tail"
        );
        if self
            .latest_branches
            .last()
            .is_some_and(|b| b.end == self.cur_offset())
        {
            // The tail is branch bytes and this use may point into them: stop editing them.
            self.latest_branches.clear();
        }
        let fixup = Fixup {
            label,
            offset,
            kind,
        };
        self.fixup_deadline = self.fixup_deadline.min(fixup.deadline());
        self.pending_fixups.push(fixup);
        // Post-invariant: I3, either the window does not end at the tail (so a later branch
        // either owns this fixup or clears the window, see `add_branch`) or it was cleared. I4,
        // the deadline bound includes the new fixup.
    }

    // ---------------------------------------------------------------- branches

    /// Describe the unconditional branch just emitted at `start..end` (`end` is the current
    /// offset); its label use (to `target`) must be the last one recorded.
    pub fn add_uncond_branch(&mut self, start: u32, end: u32, target: Label) {
        self.add_branch(start, end, target, None);
    }

    /// Describe the conditional branch just emitted at `start..end`; `inverted` is the same
    /// instruction with the opposite condition (same length, label field at the same place).
    pub fn add_cond_branch(&mut self, start: u32, end: u32, target: Label, inverted: &[u8]) {
        debug_assert_eq!(inverted.len(), (end - start) as usize, "inverted length");
        self.add_branch(start, end, target, Some(InlineBytes::new(inverted)));
    }

    fn add_branch(&mut self, start: u32, end: u32, target: Label, inverted: Option<InlineBytes>) {
        assert!(
            start < end && end == self.cur_offset(),
            "branch must end at the tail"
        );
        let fixup = self.pending_fixups.len().wrapping_sub(1);
        let owned = self.pending_fixups.last().is_some_and(|f| {
            f.label == target && f.offset >= start && f.offset + f.kind.patch_size() <= end
        });
        assert!(owned, "the last label use must be the branch's");
        debug_assert!(
            self.labels_at_tail_off <= start || self.labels_at_tail.is_empty(),
            "a label was bound inside the branch"
        );
        if start < self.metadata_end {
            // A trap or relocation lies in the branch: leave it alone (never edited).
            self.latest_branches.clear();
            // Post-invariant: I3 holds for the empty window.
            return;
        }
        if let Some(last) = self.latest_branches.last() {
            if last.end != start || last.fixup + 1 != fixup {
                // Non-branch code or uses came in between: the old window is no longer at the
                // tail and never will be again.
                self.latest_branches.clear();
            }
        }
        let labels_here = if self.labels_at_tail_off == start {
            mem::take(&mut self.labels_at_tail)
        } else {
            self.labels_at_tail.clear();
            LabelList::new()
        };
        self.labels_at_tail_off = end;
        self.latest_branches.push(Branch {
            start,
            end,
            target,
            fixup,
            inverted,
            labels_here,
        });
        // Post-invariant: I2, by I2 before, `labels_at_tail` (at its offset) was exact, so
        // `labels_here` is exactly the labels at `start` (none if the offset differed, since
        // none lie in (labels_at_tail_off, cur]); none is bound in (start, end], so the empty
        // list at `end` is exact and the new branch ends at `labels_at_tail_off`. I3, the
        // branch is contiguous with the kept window, owns the last fixup which follows the
        // previous branch's, and starts after every trap and relocation.
    }

    // ---------------------------------------------------------------- the peephole

    /// Apply the four rules to the window until none applies (see the module doc).
    fn optimize_branches(&mut self, chaos: &mut Chaos) {
        loop {
            self.steps += 1;
            let cur = self.cur_offset();
            let Some(b) = self.latest_branches.last() else {
                return;
            };
            if b.end != cur {
                // Code follows the window: it can never be edited again.
                self.latest_branches.clear();
                // Post-invariant: I3 holds for the empty window.
                return;
            }

            // Rule 1: a branch to the code right after it.
            if self.resolved_offset(b.target) == cur
                && !chaos.should_skip(Decision::FallthroughRemoval)
            {
                self.truncate_last_branch();
                // Semantics: the branch went to `cur`; the code at `cur` now starts where the
                // branch did, and every label at either place moved there.
                continue;
            }

            let n = self.latest_branches.len();
            if self.latest_branches[n - 1].inverted.is_some() {
                return;
            }

            // Rule 3: thread labels at this jump through to its target.
            let b = &self.latest_branches[n - 1];
            if !b.labels_here.is_empty()
                && self.resolved_offset(b.target) != b.start
                && !chaos.should_skip(Decision::JumpThreading)
            {
                let b = &mut self.latest_branches[n - 1];
                let target = b.target;
                for l in mem::take(&mut b.labels_here) {
                    self.label_aliases[l.index()] = target.0;
                }
                // Post-invariant: I1, each `l` was bound at `b.start` and unaliased, so a chain
                // from `target` could only reach `l` by ending there, i.e. by resolving to
                // `b.start`, which we excluded: no cycle. The aliased labels are no longer
                // bound, so `labels_here` = {} is exact (I3); they were not at the tail (I2)
                // since `b.start < b.end <= labels_at_tail_off`.
                // Semantics: a jump to `l` reached the jump to `target`; it now goes there.
            }

            let b = &self.latest_branches[n - 1];
            if n >= 2 && b.labels_here.is_empty() {
                let prev = &self.latest_branches[n - 2];
                debug_assert_eq!(prev.end, b.start, "window not contiguous");

                // Rule 4: an unconditional branch after an unconditional branch.
                if prev.inverted.is_none() && !chaos.should_skip(Decision::DeadBranchRemoval) {
                    self.truncate_last_branch();
                    // Semantics: nothing falls into the branch and no label names it.
                    continue;
                }

                // Rule 2: `jcc L1; jmp L2; L1:` becomes `jncc L2; L1:`.
                if prev.inverted.is_some()
                    && self.resolved_offset(prev.target) == cur
                    && !chaos.should_skip(Decision::BranchInversion)
                {
                    self.invert_over_last_branch();
                    continue;
                }
            }
            return;
        }
    }

    /// Rule 2's edit: invert the second-to-last branch, give it the last branch's target, and
    /// delete the last branch.
    fn invert_over_last_branch(&mut self) {
        let n = self.latest_branches.len();
        let new_target = self.latest_branches[n - 1].target;
        let prev = &mut self.latest_branches[n - 2];
        let range = prev.start as usize..prev.end as usize;
        let inverted = prev.inverted.as_mut().expect("conditional branch");
        let original = InlineBytes::new(&self.data[range.clone()]);
        self.data[range].copy_from_slice(inverted.as_slice());
        *inverted = original;
        prev.target = new_target;
        self.pending_fixups[prev.fixup].label = new_target;
        // Post-invariant: I3, the branch keeps its range and its fixup (now naming its new
        // target, at the same offset since inversion keeps the label field in place), and its
        // `inverted` bytes are again the opposite condition.
        self.truncate_last_branch();
        // Semantics: before, "if c goto cur else goto T"; after truncation the tail is the old
        // `cur` (its labels moved), so "if !c goto T else fall through to it" is the same.
    }

    /// Delete the last window branch, which ends at the tail, and move the labels bound at the
    /// tail back to its start.
    fn truncate_last_branch(&mut self) {
        let b = self.latest_branches.pop().expect("a branch to truncate");
        let cur = self.cur_offset();
        debug_assert_eq!(b.end, cur);
        debug_assert_eq!(b.fixup + 1, self.pending_fixups.len());
        if self.labels_at_tail_off != cur {
            // No bound label lies in (labels_at_tail_off, cur] (I2).
            self.labels_at_tail.clear();
        }
        self.data.truncate(b.start as usize);
        self.pending_fixups.truncate(b.fixup);
        // Source ranges may cover the branch (it is an instruction with a location): cut them
        // back to the new tail. Unwind markers never lie past a window branch's start.
        while let Some(last) = self.srclocs.last_mut() {
            if last.1 <= b.start {
                break;
            }
            if last.0 >= b.start {
                self.srclocs.pop();
            } else {
                last.1 = b.start;
            }
        }
        if let Some((start, _)) = &mut self.open_srcloc {
            *start = (*start).min(b.start);
        }
        for &l in &self.labels_at_tail {
            self.label_offsets[l.index()] = b.start;
        }
        // Merge the smaller list into the larger (the labels are already at `b.start`): a
        // chain of empty blocks piles every label up here, and copying the pile at each
        // removed jump was quadratic; merging small into large copies each label O(log n)
        // times in all.
        let mut here = b.labels_here;
        if here.len() > self.labels_at_tail.len() {
            mem::swap(&mut here, &mut self.labels_at_tail);
        }
        self.labels_at_tail.extend(here);
        self.labels_at_tail_off = b.start;
        // Post-invariant: I2, the labels at the old tail and those at `b.start` (exact by I3)
        // are now all at `b.start`, the new tail; no label was strictly inside the branch (I3),
        // so nothing else lies past the tail. I3, the remaining branches end at or before
        // `b.start` and their fixups are still the tail of `pending_fixups` (we dropped only
        // the last one); trap sites and relocations lie before the window, so none is cut.
        // I4, the deadline bound over a smaller set of fixups is still a bound.
    }

    // ---------------------------------------------------------------- metadata

    /// Record a relocation of `kind` at `offset` (inside the bytes emitted so far) against
    /// `target` plus `addend`.
    pub fn add_reloc(&mut self, offset: u32, kind: RelocKind, target: FunctionName, addend: i64) {
        debug_assert!(
            offset + kind.size() <= self.cur_offset(),
            "reloc past the tail"
        );
        if self.relocs.capacity() == 0 {
            self.relocs.reserve(self.code_hint / 64 + 2);
        }
        self.relocs.push(Reloc {
            offset,
            kind,
            target,
            addend,
        });
        self.end_window_at_metadata(offset);
    }

    /// Record that the instruction about to be emitted at the current offset may trap with
    /// `code`.
    pub fn add_trap(&mut self, code: TrapCode) {
        let offset = self.cur_offset();
        if self.traps.capacity() == 0 {
            self.traps.reserve(self.code_hint / 16 + 4);
        }
        self.traps.push(TrapSite { offset, code });
        self.end_window_at_metadata(offset);
    }

    /// Record a call-frame rule change taking effect at the current offset.
    pub fn add_unwind(&mut self, op: UnwindOp) {
        let offset = self.cur_offset();
        debug_assert!(self.unwind.last().is_none_or(|&(o, _)| o <= offset));
        if self.unwind.capacity() == 0 {
            self.unwind.reserve(16);
        }
        self.unwind.push((offset, op));
        self.latest_branches.clear();
        self.metadata_end = self.metadata_end.max(offset);
        // Post-invariant: I3, the window is empty and later branches start at or after the
        // marker, so truncating one never leaves the marker past the tail.
    }

    /// The instructions emitted from now until [`end_srcloc`](Self::end_srcloc) come from
    /// source location `loc`.
    pub fn start_srcloc(&mut self, loc: u32) {
        self.open_srcloc = Some((self.cur_offset(), loc));
    }

    /// Close the range opened by [`start_srcloc`](Self::start_srcloc) (empty ranges vanish).
    pub fn end_srcloc(&mut self) {
        if let Some((start, loc)) = self.open_srcloc.take() {
            let end = self.cur_offset();
            if end > start {
                if self.srclocs.capacity() == 0 {
                    self.srclocs.reserve(self.srcloc_hint);
                }
                self.srclocs.push((start, end, loc));
            }
        }
    }

    fn end_window_at_metadata(&mut self, offset: u32) {
        self.latest_branches.clear();
        self.metadata_end = self.metadata_end.max(offset + 1).max(self.cur_offset());
        // Post-invariant: I3, the window is empty and later branches start at or after
        // `metadata_end`, past every trap site and relocation.
    }

    /// Validate I1–I4 where the mutations claim them: with validation on, keep the first
    /// violation for `finish`; otherwise panic on one in debug builds and tests, and skip
    /// the (quadratic) check in release builds.
    fn after_mutation(&mut self) {
        if self.validate {
            if self.invariant_error.is_none() {
                self.invariant_error = self.check_invariants().err();
            }
        } else if cfg!(any(test, debug_assertions)) {
            if let Err(e) = self.check_invariants() {
                panic!("MachBuffer invariant violated: {e}");
            }
        }
    }
}
