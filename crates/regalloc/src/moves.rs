//! Parallel moves: turning a set of simultaneous copies into a sequence of plain moves.
//!
//! A *parallel move* is a set of copies `src_k → dst_k` that conceptually read every
//! source first and then write every destination. Destinations are distinct; sources may
//! repeat (fan-out) and may be destinations of other copies (chains, cycles).
//!
//! Contract of [`resolve_parallel`]: given such a set, one register class, and a
//! [`Scratch`] plan, it returns moves which, executed one after another, leave every
//! destination holding the old value of its source and every other location holding its
//! old value, except the temporaries named by the plan. No returned move goes from a slot
//! to a slot (machines cannot do that in one instruction). Tested exhaustively over every
//! mapping on up to 6 locations and every register/slot split.
//!
//! Algorithm ([`sequence`]): repeatedly emit any copy whose destination no pending copy
//! still reads (the leaves of the move graph). When none is left, every pending copy lies
//! on a simple cycle (each location has one source, so a pending location read by a pending
//! copy has exactly one pending reader, and following readers must close a loop); save one
//! destination of the cycle in the temporary, redirect its reader to the temporary, and
//! continue: the cycle unwinds completely, its last move reading the temporary, before
//! another one is broken. [`lower`] then picks the temporary's home (the register, or a
//! slot when the cycle's window contains a slot-to-slot copy that needs the register) and
//! routes each slot-to-slot copy through the register.
//!
//! Cost: O(m log m) for a parallel move of m copies (grouping by destination), linear
//! sequencing after that.

use smallvec::SmallVec;

use crate::{Allocation, PReg, SpillSlot};

/// A location in a sequenced move: a real location or the cycle temporary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// A register or slot.
    At(Allocation),
    /// The temporary used to break a cycle.
    Temp,
}

/// Which temporaries the sequentializer may clobber.
#[derive(Clone, Copy, Debug)]
pub enum Scratch {
    /// `reg` holds no live value during the parallel move (a dedicated scratch register or
    /// one found free); `slot` likewise (used only when a cycle needs a slot temporary).
    Free {
        /// The free register.
        reg: PReg,
        /// A free slot.
        slot: SpillSlot,
    },
    /// No register is free: borrow `reg`, saving its value in `save` and restoring it
    /// after (or writing its new value from `new_value` if `reg` is itself a destination);
    /// `cycle` is a free slot for cycle breaking.
    Borrow {
        /// The borrowed register.
        reg: PReg,
        /// Where the borrowed register's old value is kept.
        save: SpillSlot,
        /// Where the borrowed register's new value is assembled.
        new_value: SpillSlot,
        /// Free slot for cycle breaking.
        cycle: SpillSlot,
    },
}

/// Orders the copies of a parallel move (see the module doc). Self-copies are dropped.
/// Destinations must be distinct.
/// Most parallel moves are a few copies: their sequence is kept inline.
pub fn sequence(moves: &[(Allocation, Allocation)]) -> SmallVec<[(Loc, Loc); 8]> {
    let mut pending: SmallVec<[(Loc, Allocation); 8]> = moves
        .iter()
        .filter(|(s, d)| s != d)
        .map(|&(s, d)| (Loc::At(s), d))
        .collect();
    debug_assert!(
        {
            let mut dsts: Vec<_> = pending.iter().map(|m| m.1).collect();
            dsts.sort();
            dsts.windows(2).all(|w| w[0] != w[1])
        },
        "parallel move with a repeated destination"
    );
    let mut out = SmallVec::with_capacity(pending.len() + 1);
    while !pending.is_empty() {
        // Emit every leaf: a copy whose destination no pending copy reads.
        let mut progress = true;
        while progress {
            progress = false;
            let mut k = 0;
            while k < pending.len() {
                let dst = pending[k].1;
                if pending.iter().any(|&(s, _)| s == Loc::At(dst)) {
                    k += 1;
                } else {
                    let (s, d) = pending.swap_remove(k);
                    out.push((s, Loc::At(d)));
                    progress = true;
                }
            }
        }
        if let Some(&(_, dst)) = pending.first() {
            // Only cycles remain: save `dst` and redirect its single reader.
            out.push((Loc::At(dst), Loc::Temp));
            for m in pending.iter_mut() {
                if m.0 == Loc::At(dst) {
                    m.0 = Loc::Temp;
                }
            }
        }
    }
    out
}

fn is_stack(loc: Loc) -> bool {
    matches!(loc, Loc::At(Allocation::Stack(_)))
}

/// Gives the temporary a home and removes slot-to-slot copies (see the module doc).
pub fn lower(
    seq: &[(Loc, Loc)],
    reg: PReg,
    slot: SpillSlot,
    out: &mut Vec<(Allocation, Allocation)>,
) {
    let reg_loc = Allocation::Reg(reg);
    let mut temp_home = reg_loc;
    for (k, &(src, dst)) in seq.iter().enumerate() {
        if dst == Loc::Temp {
            // A window opens: it closes at the move reading the temporary.
            let close = seq[k + 1..]
                .iter()
                .position(|m| m.0 == Loc::Temp)
                .map_or(seq.len(), |p| k + 1 + p);
            let needs_reg = seq[k + 1..close]
                .iter()
                .any(|&(s, d)| is_stack(s) && is_stack(d));
            temp_home = if needs_reg {
                Allocation::Stack(slot)
            } else {
                reg_loc
            };
        }
        let resolve = |l: Loc| match l {
            Loc::At(a) => a,
            Loc::Temp => temp_home,
        };
        let (s, d) = (resolve(src), resolve(dst));
        if s.is_stack() && d.is_stack() {
            out.push((s, reg_loc));
            out.push((reg_loc, d));
        } else {
            out.push((s, d));
        }
    }
}

/// Sequences a parallel move of one class with the given temporaries (module contract).
pub fn resolve_parallel(
    moves: &[(Allocation, Allocation)],
    scratch: Scratch,
    out: &mut Vec<(Allocation, Allocation)>,
) {
    match scratch {
        Scratch::Free { reg, slot } => {
            let seq = sequence(moves);
            lower(&seq, reg, slot, out);
        }
        Scratch::Borrow {
            reg,
            save,
            new_value,
            cycle,
        } => {
            let r = Allocation::Reg(reg);
            let moves: Vec<_> = moves.iter().copied().filter(|(s, d)| s != d).collect();
            if moves.is_empty() {
                return;
            }
            let is_src = moves.iter().any(|m| m.0 == r);
            let is_dst = moves.iter().any(|m| m.1 == r);
            let (save, new_value) = (Allocation::Stack(save), Allocation::Stack(new_value));
            if is_src || !is_dst {
                out.push((r, save));
            }
            let renamed: Vec<_> = moves
                .iter()
                .map(|&(s, d)| {
                    (
                        if s == r { save } else { s },
                        if d == r { new_value } else { d },
                    )
                })
                .collect();
            let seq = sequence(&renamed);
            lower(&seq, reg, cycle, out);
            out.push((if is_dst { new_value } else { save }, r));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RegClass;

    fn r(n: usize) -> Allocation {
        Allocation::Reg(PReg::new(n, RegClass::Int))
    }

    fn s(n: u32) -> Allocation {
        Allocation::Stack(SpillSlot(n))
    }

    #[test]
    fn chains_need_no_temporary_and_cycles_one() {
        // r0 -> r1 -> r2 (a chain): written back to front.
        let seq = sequence(&[(r(0), r(1)), (r(1), r(2))]);
        assert_eq!(
            seq[..],
            [
                (Loc::At(r(1)), Loc::At(r(2))),
                (Loc::At(r(0)), Loc::At(r(1)))
            ]
        );
        // A three-cycle uses the temporary exactly once.
        let seq = sequence(&[(r(0), r(1)), (r(1), r(2)), (r(2), r(0))]);
        assert_eq!(seq.iter().filter(|m| m.1 == Loc::Temp).count(), 1);
        assert_eq!(seq.len(), 4);
    }

    #[test]
    fn slot_swap_goes_through_the_register_and_a_slot() {
        let mut out = Vec::new();
        resolve_parallel(
            &[(s(0), s(1)), (s(1), s(0))],
            Scratch::Free {
                reg: PReg::new(9, RegClass::Int),
                slot: SpillSlot(7),
            },
            &mut out,
        );
        assert!(
            out.iter().all(|(a, b)| !(a.is_stack() && b.is_stack())),
            "{out:?}"
        );
        assert!(
            out.contains(&(s(1), r(9))) || out.contains(&(s(0), r(9))),
            "{out:?}"
        );
    }
}
