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
//! - `Unknown` (top): nothing has reached this point yet (the fixpoint has not visited it);
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

use std::fmt;

use smallvec::{smallvec, SmallVec};

use crate::{
    Allocation, Block, Function, Inst, MachineEnv, OperandConstraint, OperandPos, Output, PRegSet,
    VReg,
};

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
    Unknown,
    Vregs(VregSet),
    Clobbered(u32),
    Conflicted,
}

impl Value {
    fn meet(&self, other: &Value) -> Value {
        match (self, other) {
            (Value::Unknown, x) | (x, Value::Unknown) => x.clone(),
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
            Value::Unknown => write!(f, "nothing known (unreached)"),
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

type State = Vec<Value>;

struct Checker<'a, F: Function> {
    func: &'a F,
    out: &'a Output,
    /// `edits[edit_index[p]..edit_index[p + 1]]` are the edits at program point `p`.
    edit_index: Vec<u32>,
    /// Dense index of every location the output mentions (`u32::MAX` for the others,
    /// whose contents nothing reads); states are vectors over these.
    loc_map: Vec<u32>,
    num_locs: usize,
}

/// Checks `out` against `func`. See the module doc.
pub fn check<F: Function>(func: &F, env: &MachineEnv, out: &Output) -> Result<(), CheckError> {
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
    let checker = Checker {
        func,
        out,
        edit_index,
        loc_map,
        num_locs,
    };
    for i in 0..func.num_insts() {
        checker.check_constraints(env, Inst(i as u32))?;
    }
    let entry_states = checker.fixpoint();
    // Final pass: with the fixpoint reached, every use is checked once per block.
    for (b, state) in entry_states.iter().enumerate() {
        if let Some(state) = state {
            let mut state = state.clone();
            checker.block_transfer(Block(b as u32), &mut state, true)?;
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

impl<F: Function> Checker<'_, F> {
    fn check_constraints(&self, env: &MachineEnv, inst: Inst) -> Result<(), CheckError> {
        let ops = self.func.inst_operands(inst);
        let allocs = self.out.inst_allocs(inst);
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

    fn apply_edits(&self, point: usize, state: &mut State) {
        let (from, to) = (
            self.edit_index[point] as usize,
            self.edit_index[point + 1] as usize,
        );
        for (_, edit) in &self.out.edits[from..to] {
            let value = state[self.loc(edit.from)].clone();
            state[self.loc(edit.to)] = value;
        }
    }

    fn check_uses(&self, inst: Inst, pos: OperandPos, state: &State) -> Result<(), CheckError> {
        let ops = self.func.inst_operands(inst);
        let allocs = self.out.inst_allocs(inst);
        for (k, op) in ops.iter().enumerate() {
            if !op.is_use() || op.pos() != pos {
                continue;
            }
            let alloc = allocs[k];
            let held = &state[self.loc(alloc)];
            let ok = matches!(held, Value::Vregs(vs) if vs.contains(&op.vreg()));
            if !ok {
                return Err(CheckError::WrongValue {
                    inst: inst.0,
                    operand: k,
                    op: format!("{op:?}"),
                    vreg: op.vreg(),
                    alloc,
                    found: held.to_string(),
                });
            }
        }
        Ok(())
    }

    fn write_def(&self, state: &mut State, vreg: VReg, alloc: Allocation) {
        for value in state.iter_mut() {
            if let Value::Vregs(vs) = value {
                if let Some(k) = vs.iter().position(|&v| v == vreg) {
                    vs.swap_remove(k);
                    if vs.is_empty() {
                        *value = Value::Conflicted;
                    }
                }
            }
        }
        state[self.loc(alloc)] = Value::Vregs(smallvec![vreg]);
    }

    /// Dense index of a location the output mentions.
    fn loc(&self, a: Allocation) -> usize {
        self.loc_map[a.loc_index()] as usize
    }

    fn write_defs(&self, inst: Inst, pos: OperandPos, state: &mut State) {
        let ops = self.func.inst_operands(inst);
        let allocs = self.out.inst_allocs(inst);
        for (k, op) in ops.iter().enumerate() {
            // Reuse defs are written late whatever their declared position.
            let op_pos = if matches!(op.constraint(), OperandConstraint::Reuse(_)) {
                OperandPos::Late
            } else {
                op.pos()
            };
            if op.is_def() && op_pos == pos {
                self.write_def(state, op.vreg(), allocs[k]);
            }
        }
    }

    /// Runs a block from its entry state; with `check`, reports the first wrong use.
    fn block_transfer(
        &self,
        block: Block,
        state: &mut State,
        check: bool,
    ) -> Result<(), CheckError> {
        for inst in self.func.block_insns(block).iter() {
            self.apply_edits(2 * inst.index(), state);
            if check {
                self.check_uses(inst, OperandPos::Early, state)?;
            }
            self.write_defs(inst, OperandPos::Early, state);
            if check {
                self.check_uses(inst, OperandPos::Late, state)?;
            }
            let clobbers: PRegSet = self.func.inst_clobbers(inst);
            for r in clobbers.iter() {
                // A register no allocation or edit names is never read.
                if let Some(&k) = self.loc_map.get(r.index()).filter(|&&k| k != u32::MAX) {
                    state[k as usize] = Value::Clobbered(inst.0);
                }
            }
            self.write_defs(inst, OperandPos::Late, state);
            self.apply_edits(2 * inst.index() + 1, state);
        }
        Ok(())
    }

    /// The state entering `succ` along the edge `block → succ` (parameter binding).
    fn edge_state(&self, block: Block, succ_idx: usize, state: &State) -> State {
        let succ = self.func.block_succs(block)[succ_idx];
        let params = self.func.block_params(succ);
        if params.is_empty() {
            return state.clone();
        }
        let args = self.func.branch_blockparams(block, succ_idx);
        state
            .iter()
            .map(|value| match value {
                Value::Vregs(vs) => {
                    let mut new: VregSet =
                        vs.iter().copied().filter(|v| !params.contains(v)).collect();
                    for (a, p) in args.iter().zip(params) {
                        if vs.contains(a) && !new.contains(p) {
                            new.push(*p);
                        }
                    }
                    if new.is_empty() {
                        Value::Conflicted
                    } else {
                        Value::Vregs(new)
                    }
                }
                other => other.clone(),
            })
            .collect()
    }

    /// Entry state of every reached block at the fixpoint.
    fn fixpoint(&self) -> Vec<Option<State>> {
        let n = self.func.num_blocks();
        let mut entry: Vec<Option<State>> = vec![None; n];
        let start = self.func.entry_block();
        entry[start.index()] = Some(vec![Value::Conflicted; self.num_locs]);
        let mut worklist = vec![start];
        let mut queued = vec![false; n];
        queued[start.index()] = true;
        while let Some(block) = worklist.pop() {
            queued[block.index()] = false;
            let mut state = entry[block.index()]
                .clone()
                .expect("queued blocks are reached");
            // Unchecked transfer: errors are reported by the final pass.
            let _ = self.block_transfer(block, &mut state, false);
            for (k, &succ) in self.func.block_succs(block).iter().enumerate() {
                let incoming = self.edge_state(block, k, &state);
                let unknown;
                let old = match &entry[succ.index()] {
                    Some(old) => old,
                    None => {
                        unknown = vec![Value::Unknown; self.num_locs];
                        &unknown
                    }
                };
                let merged: State = old.iter().zip(&incoming).map(|(a, b)| a.meet(b)).collect();
                if entry[succ.index()].as_ref() != Some(&merged) {
                    entry[succ.index()] = Some(merged);
                    if !queued[succ.index()] {
                        queued[succ.index()] = true;
                        worklist.push(succ);
                    }
                }
            }
        }
        entry
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
            Value::Unknown,
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
            assert!(same(&a.meet(&Value::Unknown), a), "Unknown is top: {a}");
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
