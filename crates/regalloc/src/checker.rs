//! The allocation checker: abstract interpretation of symbolic values (seed 003).
//!
//! Requires: a function that passed validation and an [`Output`] claimed for it.
//! Guarantees: `Ok` only if, on every path, every operand's allocation holds the operand's
//! vreg when the instruction reads it (scratch registers hold nothing across an
//! instruction), and every allocation satisfies its constraint and is no scratch register.
//! It never runs the program and needs no input values: it proves the allocation for all
//! of them. It is independent of the allocator's data structures (it reads only the
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
//! - every instruction `i` also clobbers every [`MachineEnv::scratch`] register (the encoder
//!   may use it as a temporary anywhere inside `i`): `state[scratch] = Clobbered(i)`. Edits
//!   may use a scratch register freely, but only edits between the same two instructions
//!   can read back what they put there.
//! - edge `b → s` binding parameters `p_k` to arguments `a_k`: remove every `p_k`, then add
//!   `p_k` to each location holding `a_k` (simultaneously for all `k`).
//!
//! Within an instruction: edits before it; early uses checked; early defs written; late
//! uses checked; clobbers (and the scratch registers); late defs written; edits after it.
//! Constraints are checked statically per operand (fixed register, stack, register class,
//! reuse = same register as the reused input); no operand, whatever its constraint, may be
//! allocated to a scratch register, since the encoder could overwrite an input before
//! reading it or an output after writing it.
//!
//! # Cost
//!
//! Linear in the function and its liveness (see `flow` for the representation): states
//! are sparse and pruned to live vregs, so no structure is sized blocks × locations. The
//! scratch clobber costs O(classes) per instruction.

use std::fmt;

use smallvec::SmallVec;

use crate::liveness::Liveness;
use crate::validate::Cfg;
use crate::{
    Allocation, Block, Function, Inst, MachineEnv, OperandConstraint, Output, PReg, PRegSet, VReg,
};

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
    /// An operand allocated to a scratch register, which the encoder may overwrite inside
    /// any instruction.
    #[error(
        "inst{inst} operand {operand} ({op}): allocated to scratch register {reg}, which the encoder may overwrite inside the instruction"
    )]
    ScratchOperand {
        /// Instruction.
        inst: u32,
        /// Operand index.
        operand: usize,
        /// The operand, printed.
        op: String,
        /// The scratch register.
        reg: PReg,
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
    let scratch_regs: PRegSet = env.scratch.iter().flatten().copied().collect();
    for i in 0..func.num_insts() {
        check_constraints(func, out, env, scratch_regs, Inst(i as u32))?;
    }
    // Scratch registers that no allocation or edit names are never read.
    let scratch_locs = scratch_regs
        .iter()
        .map(|r| loc_map[r.index()])
        .filter(|&k| k != u32::MAX)
        .collect();
    let flow = Flow {
        func,
        out,
        live,
        edit_index,
        loc_map,
        num_locs,
        scratch_locs,
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
    scratch_regs: PRegSet,
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
                if scratch_regs.contains(r) {
                    return Err(CheckError::ScratchOperand {
                        inst: inst.0,
                        operand: k,
                        op: format!("{op:?}"),
                        reg: r,
                    });
                }
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
    use super::{check, CheckError, Value};
    use crate::gen::{TestBlock, TestFunc, TestInst};
    use crate::{
        Allocation, Block, Edit, Inst, InstRange, MachineEnv, Operand, OperandConstraint,
        OperandKind, OperandPos, Output, PReg, PRegSet, ProgPoint, RegClass, VReg,
    };

    fn v(n: usize) -> VReg {
        VReg::new(n, RegClass::Int)
    }

    fn r(n: usize) -> Allocation {
        Allocation::Reg(PReg::new(n, RegClass::Int))
    }

    /// r0–r3 allocatable, r15 the integer scratch (as x64 reserves r11 and xmm15).
    fn scratch_env() -> MachineEnv {
        MachineEnv {
            allocatable: [
                (0..4).map(|k| PReg::new(k, RegClass::Int)).collect(),
                vec![PReg::new(0, RegClass::Float)],
            ],
            caller_saved: PRegSet::empty(),
            scratch: [
                Some(PReg::new(15, RegClass::Int)),
                Some(PReg::new(15, RegClass::Float)),
            ],
        }
    }

    /// Blocks given as (operands of each instruction, successors), in emission order;
    /// no block parameters.
    fn func(blocks: &[(Vec<Vec<Operand>>, Vec<u32>)]) -> TestFunc {
        let mut f = TestFunc::default();
        for (b, (insts, succs)) in blocks.iter().enumerate() {
            let start = Inst(f.insts.len() as u32);
            for ops in insts {
                for op in ops {
                    f.num_vregs = f.num_vregs.max(op.vreg().index() + 1);
                }
                f.insts.push(TestInst {
                    operands: ops.clone(),
                    clobbers: PRegSet::empty(),
                    is_move: false,
                });
            }
            let preds = blocks
                .iter()
                .enumerate()
                .filter(|(_, (_, ss))| ss.contains(&(b as u32)))
                .map(|(p, _)| Block(p as u32))
                .collect();
            f.blocks.push(TestBlock {
                insts: InstRange {
                    start,
                    end: Inst(f.insts.len() as u32),
                },
                succs: succs.iter().map(|&s| Block(s)).collect(),
                preds,
                params: Vec::new(),
                args: succs.iter().map(|_| Vec::new()).collect(),
            });
        }
        f
    }

    /// A hand-built output: the allocations of each instruction's operands, and edits.
    fn output(allocs: &[&[Allocation]], edits: &[(ProgPoint, Allocation, Allocation)]) -> Output {
        let mut offsets = Vec::new();
        let mut flat = Vec::new();
        for a in allocs {
            offsets.push(flat.len() as u32);
            flat.extend_from_slice(a);
        }
        Output {
            allocs: flat,
            inst_alloc_offsets: offsets,
            edits: edits
                .iter()
                .map(|&(p, from, to)| {
                    let class = RegClass::Int;
                    (p, Edit { from, to, class })
                })
                .collect(),
            num_spillslots: 0,
            stats: Default::default(),
            times: Default::default(),
        }
    }

    #[test]
    fn operand_in_a_scratch_register_is_rejected() {
        let early_def = Operand::new(
            v(0),
            OperandKind::Def,
            OperandPos::Early,
            OperandConstraint::RegOrStack,
        );
        let f = func(&[(
            vec![
                vec![Operand::reg_def(v(1)), early_def],
                vec![Operand::reg_use(v(1)), Operand::reg_use(v(0))],
            ],
            vec![],
        )]);
        let env = scratch_env();
        let ok = output(&[&[r(0), r(1)], &[r(0), r(1)]], &[]);
        assert_eq!(check(&f, &env, &ok), Ok(()));
        // A def in the scratch register: the encoder may overwrite it after writing it.
        let def = output(&[&[r(0), r(15)], &[r(0), r(1)]], &[]);
        let err = check(&f, &env, &def).unwrap_err();
        assert!(
            matches!(&err, CheckError::ScratchOperand { inst: 0, operand: 1, reg, .. }
                if *reg == PReg::new(15, RegClass::Int)),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("inst0 operand 1") && msg.contains("scratch register r15"),
            "{msg}"
        );
        // A use in the scratch register, even with the right value there (an edit put it
        // there): the encoder may overwrite it before reading it.
        let use_ = output(
            &[&[r(0), r(1)], &[r(0), r(15)]],
            &[(ProgPoint::before(Inst(1)), r(1), r(15))],
        );
        let err = check(&f, &env, &use_).unwrap_err();
        assert!(
            matches!(&err, CheckError::ScratchOperand { inst: 1, operand: 1, reg, .. }
                if *reg == PReg::new(15, RegClass::Int)),
            "{err:?}"
        );
    }

    /// `err` says inst2 read a value that inst1's scratch clobber destroyed.
    fn assert_clobbered_at_inst2(err: CheckError) {
        assert!(
            matches!(&err, CheckError::WrongValue { inst: 2, operand: 0, found, .. }
                if found.contains("clobbered by inst1")),
            "{err:?}"
        );
    }

    #[test]
    fn value_kept_in_a_scratch_register_across_an_instruction_is_rejected() {
        let env = scratch_env();
        // inst0 defines v0 in r0; an edit parks it in r15; inst1 runs (and may write r15);
        // an edit brings r15 back to r2 for inst2's use.
        let f = func(&[(
            vec![
                vec![Operand::reg_def(v(0))],
                vec![Operand::reg_def(v(1))],
                vec![Operand::reg_use(v(0)), Operand::reg_use(v(1))],
            ],
            vec![],
        )]);
        let out = output(
            &[&[r(0)], &[r(1)], &[r(2), r(1)]],
            &[
                (ProgPoint::after(Inst(0)), r(0), r(15)),
                (ProgPoint::before(Inst(2)), r(15), r(2)),
            ],
        );
        assert_clobbered_at_inst2(check(&f, &env, &out).unwrap_err());
        // The same through a block boundary: the jump is an instruction too.
        let f = func(&[
            (vec![vec![Operand::reg_def(v(0))], vec![]], vec![1]),
            (vec![vec![Operand::reg_use(v(0))]], vec![]),
        ]);
        let out = output(
            &[&[r(0)], &[], &[r(2)]],
            &[
                (ProgPoint::after(Inst(0)), r(0), r(15)),
                (ProgPoint::before(Inst(2)), r(15), r(2)),
            ],
        );
        assert_clobbered_at_inst2(check(&f, &env, &out).unwrap_err());
        // Control: through r3 (not a scratch register) the value survives inst1.
        let out = output(
            &[&[r(0)], &[], &[r(2)]],
            &[
                (ProgPoint::after(Inst(0)), r(0), r(3)),
                (ProgPoint::before(Inst(2)), r(3), r(2)),
            ],
        );
        assert_eq!(check(&f, &env, &out), Ok(()));
    }

    #[test]
    fn scratch_register_breaks_a_cycle_between_two_instructions() {
        let env = scratch_env();
        // inst0 defines v0 in r0 and v1 in r1; inst1 wants them swapped.
        let f = func(&[(
            vec![
                vec![Operand::reg_def(v(0)), Operand::reg_def(v(1))],
                vec![Operand::reg_use(v(0)), Operand::reg_use(v(1))],
            ],
            vec![],
        )]);
        let allocs: &[&[Allocation]] = &[&[r(0), r(1)], &[r(1), r(0)]];
        // The swap at one point, as the resolver emits it.
        let at_one_point = output(
            allocs,
            &[
                (ProgPoint::before(Inst(1)), r(0), r(15)),
                (ProgPoint::before(Inst(1)), r(1), r(0)),
                (ProgPoint::before(Inst(1)), r(15), r(1)),
            ],
        );
        assert_eq!(check(&f, &env, &at_one_point), Ok(()));
        // Split over the two points between inst0 and inst1: still no instruction between.
        let over_two_points = output(
            allocs,
            &[
                (ProgPoint::after(Inst(0)), r(0), r(15)),
                (ProgPoint::before(Inst(1)), r(1), r(0)),
                (ProgPoint::before(Inst(1)), r(15), r(1)),
            ],
        );
        assert_eq!(check(&f, &env, &over_two_points), Ok(()));
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
