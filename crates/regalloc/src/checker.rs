//! The allocation checker: abstract interpretation of symbolic values (seed 003).
//!
//! Requires: a function that passed validation and an [`Output`] claimed for it.
//! Guarantees: `Ok` only if, on every path, every operand's allocation holds the operand's
//! vreg when the instruction reads it, and every allocation satisfies its constraint. It
//! never runs the program and needs no input values: it proves the allocation for all of
//! them. It is independent of the allocator's data structures (it reads only the
//! [`Function`] and the [`Output`]).
//!
//! # Lattice
//!
//! The state maps every location (register or spill slot) to one of:
//!
//! - `Unknown` (top): nothing has reached this point yet (the fixpoint has not visited it;
//!   represented as a block without a state, never per location);
//! - `Vregs(S)`: the location certainly holds the value of every vreg in `S` (several vregs
//!   when a block parameter was bound to an argument held there);
//! - `Clobbered(i)`: garbage written by instruction `i`'s clobbers (a flavour of bottom
//!   that remembers why, for error messages);
//! - `Conflicted` (bottom): no vreg is certainly there (garbage at entry, or paths that
//!   disagree).
//!
//! Meet (at control-flow joins) is per location: `Unknown ∧ x = x`; `Vregs(A) ∧ Vregs(B) =
//! Vregs(A ∩ B)` (empty means `Conflicted`); `Clobbered(i) ∧ Clobbered(i) = Clobbered(i)`;
//! anything else gives `Conflicted`. The domain is finite and meet only descends, so the
//! worklist fixpoint terminates.
//!
//! # Transfer functions
//!
//! - edit `from → to`: `state[to] = state[from]`.
//! - use of `v` in allocation `a`: error unless `state[a] = Vregs(S)` with `v ∈ S`.
//! - def of `v` in `a`: remove `v` from every location (an older value of `v`, from a
//!   previous loop iteration, is no longer `v`), then `state[a] = Vregs({v})`.
//! - clobber of register `r` by instruction `i`: `state[r] = Clobbered(i)`; a value left in
//!   a caller-saved register across a call is caught at its next use.
//! - edge `b → s` binding parameters `p_k` to arguments `a_k`: remove every `p_k`, then add
//!   `p_k` to each location holding `a_k` (simultaneously for all `k`).
//!
//! Within an instruction: edits before it; early uses checked; early defs written; late
//! uses checked; clobbers; late defs written; edits after it. Constraints are checked
//! statically per operand (fixed register, stack, register class, reuse = same register
//! as the reused input).
//!
//! # Cost
//!
//! Linear in the function and its liveness (see `flow` for the representation): states
//! are sparse and pruned to live vregs, so no structure is sized blocks × locations.

use std::fmt;

use smallvec::SmallVec;

use crate::liveness::Liveness;
use crate::validate::Cfg;
use crate::{Allocation, Block, Function, Inst, MachineEnv, OperandConstraint, Output, VReg};

mod flow;
use flow::{Flow, Scratch};

/// An error found by the checker: an allocator bug (or a corrupted output).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// An operand's allocation does not hold its vreg.
    #[error(
        "inst{inst} operand {operand} ({op}): expected {vreg} in {alloc}, but it holds {found}"
    )]
    WrongValue {
        /// Instruction.
        inst: u32,
        /// Operand index.
        operand: usize,
        /// The operand, printed.
        op: String,
        /// The vreg the operand reads.
        vreg: VReg,
        /// Where it reads it.
        alloc: Allocation,
        /// What the checker knows is there.
        found: String,
    },
    /// An allocation that violates the operand's constraint.
    #[error(
        "inst{inst} operand {operand} ({op}): allocation {alloc} violates the constraint: {reason}"
    )]
    Constraint {
        /// Instruction.
        inst: u32,
        /// Operand index.
        operand: usize,
        /// The operand, printed.
        op: String,
        /// The allocation.
        alloc: Allocation,
        /// Why it is wrong.
        reason: String,
    },
    /// The output does not fit the function (counts, slots out of range, edits unordered).
    #[error("malformed output: {0}")]
    Shape(String),
}

/// The vregs a location holds (usually one; inline).
type VregSet = SmallVec<[VReg; 2]>;

/// Abstract value of one location.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Vregs(VregSet),
    Clobbered(u32),
    Conflicted,
}

impl Value {
    fn meet(&self, other: &Value) -> Value {
        match (self, other) {
            (Value::Vregs(a), Value::Vregs(b)) => {
                let both: VregSet = a.iter().copied().filter(|v| b.contains(v)).collect();
                if both.is_empty() {
                    Value::Conflicted
                } else {
                    Value::Vregs(both)
                }
            }
            (Value::Clobbered(i), Value::Clobbered(j)) if i == j => Value::Clobbered(*i),
            _ => Value::Conflicted,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Vregs(vs) => {
                write!(f, "{{")?;
                for (k, v) in vs.iter().enumerate() {
                    if k > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "}}")
            }
            Value::Clobbered(i) => write!(f, "garbage (clobbered by inst{i})"),
            Value::Conflicted => write!(
                f,
                "no known value (garbage, or different values on different paths)"
            ),
        }
    }
}

/// Checks `out` against `func`. See the module doc.
pub fn check<F: Function>(func: &F, env: &MachineEnv, out: &Output) -> Result<(), CheckError> {
    let cfg = crate::validate::validate(func, env)
        .map_err(|e| CheckError::Shape(format!("the function itself is invalid: {e}")))?;
    let live = crate::liveness::compute(func, &cfg);
    check_with(func, env, out, &cfg, &live)
}

/// [`check`] with the validation facts and liveness already computed (by the allocator).
pub(crate) fn check_with<F: Function>(
    func: &F,
    env: &MachineEnv,
    out: &Output,
    cfg: &Cfg,
    live: &Liveness,
) -> Result<(), CheckError> {
    check_shape(func, out)?;
    let mut loc_map = vec![u32::MAX; 128 + out.num_spillslots];
    let mut num_locs = 0;
    let mentioned = out
        .allocs
        .iter()
        .chain(out.edits.iter().flat_map(|(_, e)| [&e.from, &e.to]));
    for a in mentioned {
        let slot = &mut loc_map[a.loc_index()];
        if *slot == u32::MAX {
            *slot = num_locs as u32;
            num_locs += 1;
        }
    }
    let points = 2 * func.num_insts();
    let mut edit_index = vec![0u32; points + 1];
    for (p, _) in &out.edits {
        edit_index[p.raw() as usize + 1] += 1;
    }
    for p in 0..points {
        edit_index[p + 1] += edit_index[p];
    }
    for i in 0..func.num_insts() {
        check_constraints(func, out, env, Inst(i as u32))?;
    }
    let flow = Flow {
        func,
        out,
        live,
        edit_index,
        loc_map,
        num_locs,
    };
    let rpo: Vec<Block> = cfg.postorder.iter().rev().copied().collect();
    let entry_states = flow.fixpoint(&rpo);
    // Final pass: with the fixpoint reached, every use is checked once per block.
    let mut scratch = Scratch::new(num_locs, func.num_vregs());
    for &b in &rpo {
        if let Some(state) = &entry_states[b.index()] {
            flow.block_transfer(b, state, &mut scratch, true)?;
        }
    }
    Ok(())
}

fn check_shape<F: Function>(func: &F, out: &Output) -> Result<(), CheckError> {
    if out.inst_alloc_offsets.len() != func.num_insts() {
        return Err(CheckError::Shape(
            "one allocation offset per instruction expected".into(),
        ));
    }
    let mut expected = 0usize;
    for i in 0..func.num_insts() {
        if out.inst_alloc_offsets[i] as usize != expected {
            return Err(CheckError::Shape(format!(
                "allocation offset of inst{i} is wrong"
            )));
        }
        expected += func.inst_operands(Inst(i as u32)).len();
    }
    if out.allocs.len() != expected {
        return Err(CheckError::Shape(
            "one allocation per operand expected".into(),
        ));
    }
    let in_range = |a: Allocation| match a {
        Allocation::Reg(_) => true,
        Allocation::Stack(s) => (s.0 as usize) < out.num_spillslots,
    };
    if let Some(a) = out.allocs.iter().find(|a| !in_range(**a)) {
        return Err(CheckError::Shape(format!(
            "allocation {a} beyond the {} spill slots",
            out.num_spillslots
        )));
    }
    let mut last = 0;
    for (p, e) in &out.edits {
        if p.raw() < last || p.inst().index() >= func.num_insts() {
            return Err(CheckError::Shape(format!(
                "edit at {p:?} out of order or out of range"
            )));
        }
        last = p.raw();
        if !in_range(e.from) || !in_range(e.to) {
            return Err(CheckError::Shape(format!(
                "edit {} -> {} names a slot out of range",
                e.from, e.to
            )));
        }
    }
    Ok(())
}

fn check_constraints<F: Function>(
    func: &F,
    out: &Output,
    env: &MachineEnv,
    inst: Inst,
) -> Result<(), CheckError> {
    {
        let ops = func.inst_operands(inst);
        let allocs = out.inst_allocs(inst);
        for (k, (op, &alloc)) in ops.iter().zip(allocs).enumerate() {
            let fail = |reason: String| CheckError::Constraint {
                inst: inst.0,
                operand: k,
                op: format!("{op:?}"),
                alloc,
                reason,
            };
            if let Allocation::Reg(r) = alloc {
                let fixed = matches!(op.constraint(), OperandConstraint::FixedReg(_));
                if !fixed && !env.allocatable[op.class().index()].contains(&r) {
                    return Err(fail(format!("register {r} is not allocatable")));
                }
                if r.class() != op.class() {
                    return Err(fail(format!(
                        "register {r} is not of class {:?}",
                        op.class()
                    )));
                }
            }
            match op.constraint() {
                OperandConstraint::Reg if alloc.is_stack() => {
                    return Err(fail("a register is required".into()))
                }
                OperandConstraint::FixedReg(r) if alloc != Allocation::Reg(r) => {
                    return Err(fail(format!("fixed register {r} is required")))
                }
                OperandConstraint::Stack if !alloc.is_stack() => {
                    return Err(fail("a spill slot is required".into()))
                }
                OperandConstraint::Reuse(n) => {
                    if alloc.is_stack() {
                        return Err(fail("a reuse def needs a register".into()));
                    }
                    if allocs.get(n) != Some(&alloc) {
                        return Err(fail(format!(
                            "must be the register of reused input {n}, which is {:?}",
                            allocs.get(n)
                        )));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Value;
    use crate::{RegClass, VReg};

    fn v(n: usize) -> VReg {
        VReg::new(n, RegClass::Int)
    }

    #[test]
    fn meet_is_a_lattice_meet() {
        let values = [
            Value::Vregs(smallvec::smallvec![v(1)]),
            Value::Vregs(smallvec::smallvec![v(1), v(2)]),
            Value::Vregs(smallvec::smallvec![v(3)]),
            Value::Clobbered(4),
            Value::Clobbered(5),
            Value::Conflicted,
        ];
        let same = |a: &Value, b: &Value| match (a, b) {
            (Value::Vregs(x), Value::Vregs(y)) => {
                x.len() == y.len() && x.iter().all(|e| y.contains(e))
            }
            _ => a == b,
        };
        for a in &values {
            assert!(same(&a.meet(a), a), "idempotent: {a}");
            assert_eq!(
                a.meet(&Value::Conflicted),
                Value::Conflicted,
                "Conflicted is bottom"
            );
            for b in &values {
                assert!(same(&a.meet(b), &b.meet(a)), "commutative: {a} {b}");
                for c in &values {
                    assert!(
                        same(&a.meet(b).meet(c), &a.meet(&b.meet(c))),
                        "associative: {a} {b} {c}"
                    );
                }
            }
        }
        assert_eq!(
            Value::Vregs(smallvec::smallvec![v(1), v(2)])
                .meet(&Value::Vregs(smallvec::smallvec![v(2)])),
            Value::Vregs(smallvec::smallvec![v(2)])
        );
        assert_eq!(
            Value::Vregs(smallvec::smallvec![v(1)]).meet(&Value::Vregs(smallvec::smallvec![v(3)])),
            Value::Conflicted
        );
    }
}
