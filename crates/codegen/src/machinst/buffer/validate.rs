//! The full validator of the `MachBuffer` invariants I1–I4 (I5 is a property over time and
//! is exercised by the randomized execution test instead).
//!
//! Cost: O(labels + fixups + window + metadata) per call. It runs after every `bind_label`
//! and island in debug builds and tests, so a debug build of a function with `n` blocks pays
//! O(n²) here; release builds only run it when asked (the fuzz target does).

use super::types::{PendingConstant, UNBOUND};
use super::{Label, LabelUse, MachBuffer};

impl<U: LabelUse> MachBuffer<U> {
    /// Check every structural invariant; the error names the first one violated.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_labels()?;
        self.check_labels_at_tail()?;
        self.check_window()?;
        self.check_deadlines()
    }

    /// Unaliased labels bound at `offset`, sorted.
    fn bound_at(&self, offset: u32) -> Vec<Label> {
        (0..self.label_offsets.len())
            .filter(|&i| self.label_aliases[i] == UNBOUND && self.label_offsets[i] == offset)
            .map(|i| Label(i as u32))
            .collect()
    }

    fn is_bound(&self, i: usize) -> bool {
        self.label_aliases[i] == UNBOUND && self.label_offsets[i] != UNBOUND
    }

    /// I1: states and acyclic alias chains.
    fn check_labels(&self) -> Result<(), String> {
        let cur = self.cur_offset();
        let n = self.label_offsets.len();
        for i in 0..n {
            let alias = self.label_aliases[i];
            if alias == UNBOUND {
                let off = self.label_offsets[i];
                if off != UNBOUND && off > cur {
                    return Err(format!("I1: label{i} bound at {off} past the tail {cur}"));
                }
                continue;
            }
            let mut l = i;
            for _ in 0..=n {
                l = self.label_aliases[l] as usize;
                if l >= n {
                    return Err(format!("I1: label{i} aliases a label that does not exist"));
                }
                if self.label_aliases[l] == UNBOUND {
                    break;
                }
            }
            if self.label_aliases[l] != UNBOUND {
                return Err(format!("I1: the alias chain from label{i} has a cycle"));
            }
        }
        Ok(())
    }

    /// I2: `labels_at_tail` is exact and nothing is bound between it and the tail.
    fn check_labels_at_tail(&self) -> Result<(), String> {
        let cur = self.cur_offset();
        let off = self.labels_at_tail_off;
        if off > cur {
            return Err(format!("I2: labels_at_tail_off {off} past the tail {cur}"));
        }
        let mut listed = self.labels_at_tail.clone();
        listed.sort();
        if listed[..] != self.bound_at(off)[..] {
            return Err(format!(
                "I2: labels_at_tail {listed:?} but bound at {off}: {:?}",
                self.bound_at(off)
            ));
        }
        for i in 0..self.label_offsets.len() {
            let o = self.label_offsets[i];
            if self.is_bound(i) && o > off && o <= cur {
                return Err(format!(
                    "I2: label{i} bound at {o}, after the tail list at {off}"
                ));
            }
        }
        if let Some(b) = self.latest_branches.last() {
            if b.end > off {
                return Err(format!(
                    "I2: window ends at {} after the tail list {off}",
                    b.end
                ));
            }
        }
        Ok(())
    }

    /// I3: the window is contiguous, owns its fixups, and knows its labels.
    fn check_window(&self) -> Result<(), String> {
        let cur = self.cur_offset();
        let w = &self.latest_branches;
        for (k, b) in w.iter().enumerate() {
            if !(b.start < b.end && b.end <= cur) {
                return Err(format!(
                    "I3: branch {k} at {}..{} (tail {cur})",
                    b.start, b.end
                ));
            }
            if k > 0 && (w[k - 1].end != b.start || w[k - 1].fixup + 1 != b.fixup) {
                return Err(format!(
                    "I3: branch {k} not contiguous with the previous one"
                ));
            }
            let Some(f) = self.pending_fixups.get(b.fixup) else {
                return Err(format!("I3: branch {k} owns no fixup"));
            };
            if f.label != b.target || f.offset < b.start || f.offset + f.kind.patch_size() > b.end {
                return Err(format!("I3: branch {k}'s fixup {f:?} is not its own"));
            }
            let mut here = b.labels_here.clone();
            here.sort();
            if here[..] != self.bound_at(b.start)[..] {
                return Err(format!("I3: branch {k} labels {here:?} inexact"));
            }
            for i in 0..self.label_offsets.len() {
                let o = self.label_offsets[i];
                if self.is_bound(i) && o > b.start && o < b.end {
                    return Err(format!("I3: label{i} bound inside branch {k}"));
                }
            }
            if let Some(inv) = &b.inverted {
                if inv.as_slice().len() != (b.end - b.start) as usize {
                    return Err(format!(
                        "I3: branch {k} inverted bytes have the wrong length"
                    ));
                }
            }
        }
        if let (Some(first), Some(last)) = (w.first(), w.last()) {
            if last.end == cur && last.fixup + 1 != self.pending_fixups.len() {
                return Err("I3: the live window's fixups are not the tail".into());
            }
            if self.traps.iter().any(|t| t.offset >= first.start)
                || self
                    .relocs
                    .iter()
                    .any(|r| r.offset + r.kind.size() > first.start)
            {
                return Err("I3: a trap site or relocation lies in the window".into());
            }
        }
        Ok(())
    }

    /// I4: the deadline bound and the constant pool.
    fn check_deadlines(&self) -> Result<(), String> {
        let all = self.pending_fixups.iter().chain(&self.deferred_fixups);
        if let Some(min) = all.map(|f| f.deadline()).min() {
            if self.fixup_deadline > min {
                return Err(format!(
                    "I4: deadline {} above a fixup's {min}",
                    self.fixup_deadline
                ));
            }
        }
        let need: u32 = self
            .pending_constants
            .iter()
            .map(|c| c.worst_case_size())
            .sum();
        if self.pending_constants_size < need {
            return Err("I4: pending constant size too small".into());
        }
        for c in &self.pending_constants {
            let i = c.label.index();
            if self.label_offsets[i] != UNBOUND || self.label_aliases[i] != UNBOUND {
                return Err(format!("I4: constant {} already bound", c.label));
            }
        }
        let by_label: std::collections::HashMap<Label, &PendingConstant<U>> = self
            .pending_constants
            .iter()
            .map(|c| (c.label, c))
            .collect();
        for (&(bytes, len, align), label) in &self.pooled {
            let named = by_label.get(label).is_some_and(|c| {
                c.align == align && c.bytes.as_slice() == &bytes[..usize::from(len)]
            });
            if !named {
                return Err(format!(
                    "I4: pooled {label} names no pending constant with its bytes"
                ));
            }
        }
        Ok(())
    }
}
