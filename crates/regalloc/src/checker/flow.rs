//! The checker's dataflow: sparse states, the per-block transfer, and the fixpoint.
//!
//! Representation. A reached state lists only the locations whose value is not
//! `Conflicted` (sorted by location); everything absent is `Conflicted`. `Unknown` (top) is
//! an unreached block's missing state, never a location's value inside a state. At each
//! edge, a state keeps only the vregs live into the successor (its live-in set and its
//! parameters): a vreg not live there is never read again before a new def, so dropping
//! it can only turn a correct "holds v" into "holds nothing known"; it can make the
//! checker stricter (an error where liveness were wrong), never accept a wrong allocation.
//!
//! Within a block the state is unpacked into a dense scratch array with a reverse index
//! (vreg → locations holding it), so a def removes its vreg's old copies in time
//! proportional to their number, not to the number of locations.
//!
//! Cost: one visit of block `b` is O(|entry state| + instructions + operands + edits +
//! Σ over edges |live_in(succ)| + k log k), k the locations it touched (the scratch clobber
//! adds O(classes) per instruction); the states together hold O(L + blocks × (clobbered +
//! scratch registers)) entries (L: the liveness sets' size).
//! Blocks are visited in reverse postorder from a priority queue; a block is revisited
//! only when a back edge lowers its entry state, which happens at most lattice-height
//! times (in practice the loop nesting depth plus one).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use smallvec::{smallvec, SmallVec};

use super::{CheckError, Value, VregSet};
use crate::liveness::Liveness;
use crate::{Allocation, Block, Function, Inst, OperandConstraint, OperandPos, Output, VReg};

/// A reached block's entry state: `(location, value)` for every location not
/// `Conflicted`, sorted by location.
pub(super) type State = Vec<(u32, Value)>;

/// Everything the flow reads, fixed for one check.
pub(super) struct Flow<'a, F: Function> {
    pub func: &'a F,
    pub out: &'a Output,
    pub live: &'a Liveness,
    /// `edits[edit_index[p]..edit_index[p + 1]]` are the edits at program point `p`.
    pub edit_index: Vec<u32>,
    /// Dense index of every location the output mentions (`u32::MAX` for the others,
    /// whose contents nothing reads).
    pub loc_map: Vec<u32>,
    pub num_locs: usize,
    /// Dense indices of the scratch registers the output mentions (at most one per
    /// class): every instruction clobbers them.
    pub scratch_locs: SmallVec<[u32; 2]>,
}

/// One block's state, unpacked. Invariant: `holders[v]` lists exactly the locations whose
/// value is `Vregs(S)` with `v ∈ S`; `touched` lists every location not `Conflicted`
/// (and maybe some that are), each once (`is_touched`).
pub(super) struct Scratch {
    value: Vec<Value>,
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    holders: Vec<SmallVec<[u32; 2]>>,
    held: Vec<u32>,
}

impl Scratch {
    pub fn new(num_locs: usize, num_vregs: usize) -> Scratch {
        Scratch {
            value: vec![Value::Conflicted; num_locs],
            touched: Vec::new(),
            is_touched: vec![false; num_locs],
            holders: vec![SmallVec::new(); num_vregs],
            held: Vec::new(),
        }
    }

    /// Empties the scratch (all `Conflicted`) in time proportional to what was touched.
    fn reset(&mut self) {
        for &l in &self.touched {
            self.value[l as usize] = Value::Conflicted;
            self.is_touched[l as usize] = false;
        }
        self.touched.clear();
        for &v in &self.held {
            self.holders[v as usize].clear();
        }
        self.held.clear();
    }

    fn load(&mut self, state: &State) {
        self.reset();
        for (l, value) in state {
            self.set(*l as usize, value.clone());
        }
    }

    /// The packed state.
    fn export(&mut self) -> State {
        self.touched.sort_unstable();
        self.touched
            .iter()
            .filter(|&&l| self.value[l as usize] != Value::Conflicted)
            .map(|&l| (l, self.value[l as usize].clone()))
            .collect()
    }

    fn get(&self, loc: usize) -> &Value {
        &self.value[loc]
    }

    /// `value[loc] = new`, keeping `holders` exact.
    fn set(&mut self, loc: usize, new: Value) {
        if let Value::Vregs(old) = &self.value[loc] {
            for v in old {
                let list = &mut self.holders[v.index()];
                if let Some(k) = list.iter().position(|&l| l as usize == loc) {
                    list.swap_remove(k);
                }
            }
        }
        if let Value::Vregs(vs) = &new {
            for v in vs {
                let list = &mut self.holders[v.index()];
                if list.is_empty() {
                    self.held.push(v.index() as u32);
                }
                list.push(loc as u32);
            }
        }
        if !self.is_touched[loc] {
            self.is_touched[loc] = true;
            self.touched.push(loc as u32);
        }
        self.value[loc] = new;
    }

    /// A def of `vreg` into `loc`: older copies of `vreg` (a previous loop iteration's)
    /// stop being `vreg`, then `loc` holds it alone.
    fn define(&mut self, vreg: VReg, loc: usize) {
        let copies = std::mem::take(&mut self.holders[vreg.index()]);
        for l in copies {
            let l = l as usize;
            if let Value::Vregs(vs) = &mut self.value[l] {
                vs.retain(|v| *v != vreg);
                if vs.is_empty() {
                    self.value[l] = Value::Conflicted;
                }
            }
        }
        self.set(loc, Value::Vregs(smallvec![vreg]));
    }
}

impl<F: Function> Flow<'_, F> {
    /// Dense index of a location the output mentions.
    fn loc(&self, a: Allocation) -> usize {
        self.loc_map[a.loc_index()] as usize
    }

    fn apply_edits(&self, point: usize, s: &mut Scratch) {
        let (from, to) = (
            self.edit_index[point] as usize,
            self.edit_index[point + 1] as usize,
        );
        for (_, edit) in &self.out.edits[from..to] {
            let value = s.get(self.loc(edit.from)).clone();
            s.set(self.loc(edit.to), value);
        }
    }

    fn check_uses(&self, inst: Inst, pos: OperandPos, s: &Scratch) -> Result<(), CheckError> {
        let ops = self.func.inst_operands(inst);
        let allocs = self.out.inst_allocs(inst);
        for (k, op) in ops.iter().enumerate() {
            if !op.is_use() || op.pos() != pos {
                continue;
            }
            let alloc = allocs[k];
            let held = s.get(self.loc(alloc));
            if !matches!(held, Value::Vregs(vs) if vs.contains(&op.vreg())) {
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

    fn write_defs(&self, inst: Inst, pos: OperandPos, s: &mut Scratch) {
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
                s.define(op.vreg(), self.loc(allocs[k]));
            }
        }
    }

    /// Runs `block` from `entry`, leaving its exit state in `s`; with `check`, reports
    /// the first wrong use.
    pub fn block_transfer(
        &self,
        block: Block,
        entry: &State,
        s: &mut Scratch,
        check: bool,
    ) -> Result<(), CheckError> {
        s.load(entry);
        for inst in self.func.block_insns(block).iter() {
            self.apply_edits(2 * inst.index(), s);
            if check {
                self.check_uses(inst, OperandPos::Early, s)?;
            }
            self.write_defs(inst, OperandPos::Early, s);
            if check {
                self.check_uses(inst, OperandPos::Late, s)?;
            }
            for r in self.func.inst_clobbers(inst).iter() {
                // A register no allocation or edit names is never read.
                if let Some(&k) = self.loc_map.get(r.index()).filter(|&&k| k != u32::MAX) {
                    s.set(k as usize, Value::Clobbered(inst.0));
                }
            }
            // The encoder may write a scratch register anywhere inside the instruction (no
            // operand is in one: `check_constraints`), so nothing held there survives it.
            for &k in &self.scratch_locs {
                s.set(k as usize, Value::Clobbered(inst.0));
            }
            self.write_defs(inst, OperandPos::Late, s);
            self.apply_edits(2 * inst.index() + 1, s);
        }
        Ok(())
    }

    /// The state entering `succ` along edge `succ_idx` of `block`, from the exit state
    /// `exit`: parameters bound to the locations of their arguments, and only vregs live
    /// into `succ` kept. `mark` is per-vreg scratch (all zero on entry and exit).
    fn edge_state(
        &self,
        block: Block,
        succ_idx: usize,
        exit: &State,
        mark: &mut [u8],
        pairs: &mut Vec<(u32, u32)>,
    ) -> State {
        const LIVE: u8 = 1;
        const PARAM: u8 = 2;
        const ARG: u8 = 4;
        let succ = self.func.block_succs(block)[succ_idx];
        let params = self.func.block_params(succ);
        let args = self.func.branch_blockparams(block, succ_idx);
        let live_in = self.live.live_in.get(succ.index());
        for &v in live_in {
            mark[v as usize] |= LIVE;
        }
        for p in params {
            mark[p.index()] |= PARAM;
        }
        // (argument, parameter) pairs sorted by argument, to find each argument's
        // parameters by binary search.
        pairs.clear();
        for (a, p) in args.iter().zip(params) {
            mark[a.index()] |= ARG;
            pairs.push((a.index() as u32, p.index() as u32));
        }
        pairs.sort_unstable();
        let mut state = State::new();
        for (l, value) in exit {
            let kept = match value {
                Value::Vregs(vs) => {
                    let mut new: VregSet = vs
                        .iter()
                        .copied()
                        .filter(|v| mark[v.index()] & (LIVE | PARAM) == LIVE)
                        .collect();
                    for v in vs.iter().filter(|v| mark[v.index()] & ARG != 0) {
                        let a = v.index() as u32;
                        let first = pairs.partition_point(|&(x, _)| x < a);
                        for &(_, p) in pairs[first..].iter().take_while(|&&(x, _)| x == a) {
                            let p = VReg::new(p as usize, v.class());
                            if !new.contains(&p) {
                                new.push(p);
                            }
                        }
                    }
                    (!new.is_empty()).then_some(Value::Vregs(new))
                }
                other => Some(other.clone()),
            };
            if let Some(value) = kept {
                state.push((*l, value));
            }
        }
        for &v in live_in {
            mark[v as usize] = 0;
        }
        for v in params.iter().chain(args) {
            mark[v.index()] = 0;
        }
        state
    }

    /// Entry state of every reached block at the fixpoint.
    pub fn fixpoint(&self, rpo: &[Block]) -> Vec<Option<State>> {
        let n = self.func.num_blocks();
        let mut rpo_index = vec![u32::MAX; n];
        for (k, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = k as u32;
        }
        let mut entry: Vec<Option<State>> = vec![None; n];
        let start = self.func.entry_block();
        // Nothing is known at the entry: every location `Conflicted`, the empty list.
        entry[start.index()] = Some(State::new());
        let mut queue = BinaryHeap::new();
        let mut queued = vec![false; n];
        queue.push(Reverse(rpo_index[start.index()]));
        queued[start.index()] = true;
        let mut scratch = Scratch::new(self.num_locs, self.func.num_vregs());
        let mut mark = vec![0u8; self.func.num_vregs()];
        let mut pairs = Vec::new();
        while let Some(Reverse(k)) = queue.pop() {
            let block = rpo[k as usize];
            queued[block.index()] = false;
            let state = entry[block.index()]
                .as_ref()
                .expect("queued blocks are reached");
            // Unchecked transfer: errors are reported by the final pass.
            let _ = self.block_transfer(block, state, &mut scratch, false);
            let exit = scratch.export();
            for (k, &succ) in self.func.block_succs(block).iter().enumerate() {
                let incoming = self.edge_state(block, k, &exit, &mut mark, &mut pairs);
                let changed = match &mut entry[succ.index()] {
                    slot @ None => {
                        *slot = Some(incoming);
                        true
                    }
                    Some(old) => {
                        let merged = meet_states(old, &incoming);
                        let changed = merged != *old;
                        *old = merged;
                        changed
                    }
                };
                if changed && !queued[succ.index()] {
                    queued[succ.index()] = true;
                    queue.push(Reverse(rpo_index[succ.index()]));
                }
            }
        }
        entry
    }
}

/// Pointwise meet of two reached states; a location absent from either is `Conflicted`
/// there, so only locations in both can survive.
fn meet_states(a: &State, b: &State) -> State {
    let mut out = State::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let m = a[i].1.meet(&b[j].1);
                if m != Value::Conflicted {
                    out.push((a[i].0, m));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}
