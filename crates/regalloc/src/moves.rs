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
//! Cost: a parallel move of up to 64 copies is sequenced by rescanning its pending copies
//! (bounded work, quickest at that size); a larger one in O(m log m): the locations are
//! numbered by a sort, then sequencing is linear.

use smallvec::SmallVec;

use crate::reuse::running_sum;
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

/// Up to this many copies, rescanning the pending copies (a bounded number of times a
/// bounded number) beats numbering the locations.
const SMALL_PARALLEL_MOVE: usize = 64;

/// Orders the copies of a parallel move (see the module doc). Self-copies are dropped.
/// Destinations must be distinct.
/// Most parallel moves are a few copies: their sequence is kept inline.
pub fn sequence(moves: &[(Allocation, Allocation)]) -> SmallVec<[(Loc, Loc); 8]> {
    if moves.len() > SMALL_PARALLEL_MOVE {
        return sequence_indexed(moves);
    }
    sequence_small(moves)
}

/// [`sequence`] by rescanning: O(m²) per round of leaves, for a few copies.
fn sequence_small(moves: &[(Allocation, Allocation)]) -> SmallVec<[(Loc, Loc); 8]> {
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

/// [`sequence`] for many copies, in O(m log m): the locations are numbered (sorted), each
/// copy's destination counts its pending readers, and a worklist holds the copies whose
/// destination no pending copy reads. A copy emitted releases its source; the copy writing
/// that source becomes a leaf when its last reader is gone. With no leaf left, the first
/// pending copy lies on a cycle: its destination goes to the temporary, and its one
/// pending reader reads the temporary instead.
fn sequence_indexed(moves: &[(Allocation, Allocation)]) -> SmallVec<[(Loc, Loc); 8]> {
    let moves: Vec<(Allocation, Allocation)> =
        moves.iter().copied().filter(|(s, d)| s != d).collect();
    let mut locs: Vec<Allocation> = moves.iter().flat_map(|&(s, d)| [s, d]).collect();
    locs.sort_unstable();
    locs.dedup();
    let index = |a: Allocation| locs.binary_search(&a).expect("numbered above");
    const NONE: u32 = u32::MAX;
    let (src, dst): (Vec<usize>, Vec<usize>) =
        moves.iter().map(|&(s, d)| (index(s), index(d))).unzip();
    // Per location: pending copies reading it, and the copy writing it.
    let mut readers = vec![0u32; locs.len()];
    let mut writer = vec![NONE; locs.len()];
    // Per location, the copies reading it (grouped by a counting sort), to find the one
    // reader left on a cycle.
    let mut read_start = vec![0u32; locs.len() + 1];
    for (k, (&s, &d)) in src.iter().zip(&dst).enumerate() {
        readers[s] += 1;
        read_start[s + 1] += 1;
        writer[d] = k as u32;
    }
    running_sum(&mut read_start[..=locs.len()]);
    let mut fill = read_start.clone();
    let mut read_by = vec![0u32; moves.len()];
    for (k, &s) in src.iter().enumerate() {
        read_by[fill[s] as usize] = k as u32;
        fill[s] += 1;
    }
    // The copies' current sources: their own, or the temporary once a cycle is broken.
    let mut reads_temp = vec![false; moves.len()];
    let mut done = vec![false; moves.len()];
    let mut leaves: Vec<usize> = (0..moves.len()).filter(|&k| readers[dst[k]] == 0).collect();
    let mut out = SmallVec::with_capacity(moves.len() + 1);
    let mut next_pending = 0;
    loop {
        while let Some(k) = leaves.pop() {
            done[k] = true;
            if reads_temp[k] {
                out.push((Loc::Temp, Loc::At(moves[k].1)));
                continue;
            }
            out.push((Loc::At(moves[k].0), Loc::At(moves[k].1)));
            let s = src[k];
            readers[s] -= 1;
            if readers[s] == 0 && writer[s] != NONE && !done[writer[s] as usize] {
                leaves.push(writer[s] as usize);
            }
        }
        // Pending copies only lie on cycles now; break the first one left.
        while next_pending < moves.len() && done[next_pending] {
            next_pending += 1;
        }
        let Some(k) = (next_pending < moves.len()).then_some(next_pending) else {
            return out;
        };
        let d = dst[k];
        out.push((Loc::At(moves[k].1), Loc::Temp));
        let span = read_start[d] as usize..read_start[d + 1] as usize;
        for &r in &read_by[span] {
            let r = r as usize;
            if !done[r] && !reads_temp[r] {
                reads_temp[r] = true;
                readers[d] -= 1;
            }
        }
        debug_assert_eq!(readers[d], 0, "a cycle's location has one pending reader");
        leaves.push(k);
    }
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

    /// Runs `seq` on locations holding their own names; `Err` unless every destination of
    /// `moves` ends with its source's old value and every other location read keeps its own.
    fn check_sequence(
        moves: &[(Allocation, Allocation)],
        seq: &[(Loc, Loc)],
    ) -> Result<(), String> {
        let mut held: Vec<(Loc, Loc)> = Vec::new();
        let value =
            |held: &[(Loc, Loc)], l: Loc| held.iter().rev().find(|h| h.0 == l).map_or(l, |h| h.1);
        for &(src, dst) in seq {
            let v = value(&held, src);
            held.push((dst, v));
        }
        for &(src, dst) in moves {
            if value(&held, Loc::At(dst)) != Loc::At(src) {
                return Err(format!("{dst:?} lacks {src:?}: {moves:?} as {seq:?}"));
            }
            if !moves.iter().any(|m| m.1 == src) && value(&held, Loc::At(src)) != Loc::At(src) {
                return Err(format!("{src:?} was overwritten: {moves:?} as {seq:?}"));
            }
        }
        Ok(())
    }

    /// Both sequencing methods, on every mapping of up to 6 locations (registers and slots
    /// mixed) and on random larger ones, give sequences that do what the moves ask.
    #[test]
    fn small_and_indexed_sequencing_agree_with_the_moves() {
        let loc = |k: usize| {
            if k % 3 == 2 || k >= 60 {
                s(k as u32)
            } else {
                r(k)
            }
        };
        for n in 1..=6usize {
            let total = (n + 1).pow(n as u32);
            for code in 0..total {
                let mut c = code;
                let moves: Vec<_> = (0..n)
                    .filter_map(|dst| {
                        let digit = c % (n + 1);
                        c /= n + 1;
                        digit.checked_sub(1).map(|src| (loc(src), loc(dst)))
                    })
                    .collect();
                check_sequence(&moves, &sequence_small(&moves)).unwrap();
                check_sequence(&moves, &sequence_indexed(&moves)).unwrap();
            }
        }
        let mut rng = crate::exec::Rng::new(7);
        for case in 0..2000 {
            let n = 9 + case % 100;
            let mut moves = Vec::new();
            for dst in 0..n {
                if rng.next_u64() % 4 != 0 {
                    moves.push((loc(rng.next_u64() as usize % n), loc(dst)));
                }
            }
            check_sequence(&moves, &sequence(&moves)).unwrap();
            check_sequence(&moves, &sequence_small(&moves)).unwrap();
            check_sequence(&moves, &sequence_indexed(&moves)).unwrap();
        }
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
