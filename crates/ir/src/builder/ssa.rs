//! On-the-fly SSA construction after Braun, Buchwald, Hack, Leißa, Mallon and Zwinkau,
//! "Simple and Efficient Construction of SSA Form" (CC 2013).
//!
//! The paper's pieces map onto the IR as follows:
//! - `writeVariable` / `readVariable`: `defs[(var, block)]`, read through dfg aliases;
//! - a phi is a block parameter; its operands are the arguments the predecessors' branches
//!   pass for it, appended in place to their `BlockCall` lists in the pool (or jump tables);
//! - incomplete phis of unsealed blocks are recorded in `BlockState::incomplete` and get their
//!   operands in `seal_block`;
//! - `tryRemoveTrivialPhi`: a phi whose operands are all one value `w` (or itself) is turned
//!   into an alias of `w`, its parameter removed and the matching argument removed from every
//!   predecessor branch; then the phis that used it are retried (a worklist, using the
//!   `phi_users` lists recorded when operands are added).
//!
//! One departure from the paper, for cost: reading a variable in a *sealed* block with
//! several predecessors does not make the phi before reading them. The block gets a
//! [`DEFERRED`] mark instead; a read that comes back to it around a cycle makes the phi
//! then (the paper's cycle breaker), and otherwise the phi is made only if the
//! predecessors' values differ. Most such phis are trivial (Wasm code reads each local at
//! every merge), and this way they cost neither a parameter, arguments appended and
//! removed again, nor an alias left for compaction to resolve. A phi that is made and
//! found trivial before its operands are appended is likewise dropped without touching the
//! branches.
//!
//! A second departure: a sealed block that closes a structured region (`regions.rs`) is
//! read, for a variable the region did not define, as if the region's entry block were its
//! only predecessor.
//!
//! The paper's recursion is run on an explicit stack (`Step`) so deep CFGs cannot overflow
//! the native stack. Reading a variable whose definition is missing on some path ends in a
//! sealed block without predecessors: that is [`BuilderError::UndefinedVariable`], and the
//! builder is poisoned (see the module docs of `builder`).

use super::{BuilderError, FunctionBuilder, Variable};
use crate::dfg::ValueDef;
use crate::entity::{Block, Inst, SecondaryMap, Value};
use crate::instructions::InstructionData;
use crate::pool::{ValueList, ValueListPool};

/// The recursion's working lists, kept by the builder so that reads and seals allocate
/// nothing once they have grown.
#[derive(Default)]
pub(super) struct SsaScratch {
    steps: Vec<Step>,
    results: Vec<Value>,
    /// Blocks waiting for a `Record`, each with the `on_chain` mark it replaced.
    chain: Vec<(Block, u64)>,
    /// `on_chain[b] == epoch`: `b` waits for a `Record` and no phi was made since it was
    /// entered (see `run_steps`).
    on_chain: SecondaryMap<Block, u64>,
    /// Advanced at each run and each phi made; never reset, so stale marks never match.
    epoch: u64,
    /// `try_remove_trivial_phi`'s worklist.
    work: Vec<Value>,
}

/// The mark `defs[(var, b)]` holds while the phi of sealed block `b` is deferred (its
/// predecessors being read); never a real value (no function has 2^32 values).
const DEFERRED: Value = Value::from_u32(u32::MAX);

/// One pending piece of the paper's recursion.
pub(super) enum Step {
    /// Push the value of the variable at the end of the block onto the result stack.
    Read(Block),
    /// Record the value on top of the result stack as the variable's value in the block (the
    /// single-predecessor case).
    Record(Block),
    /// Pop one value per predecessor of the block and make them the operands of its phi;
    /// push what the phi resolves to (itself, or the value it was trivially equal to). The
    /// phi is [`DEFERRED`] when it is made only if needed: unless a cycle made it, none is
    /// made when every predecessor gives the same value.
    Finish(Block, Value),
}

impl FunctionBuilder {
    /// `readVariable(var, block)`.
    pub(super) fn read_variable(
        &mut self,
        var: Variable,
        block: Block,
    ) -> Result<Value, BuilderError> {
        // The common case, a variable defined in this block: no recursion to run.
        if let Some(v) = self.known_def(var, block) {
            return Ok(v);
        }
        let mut steps = std::mem::take(&mut self.ssa.steps);
        steps.push(Step::Read(block));
        self.run(var, steps)
    }

    /// Seal `block`: all its predecessors are known. Gives its incomplete phis their
    /// operands. Sealing a sealed block does nothing.
    pub fn seal_block(&mut self, block: Block) -> Result<(), BuilderError> {
        self.check_block(block)?;
        if self.blocks[block].sealed {
            return Ok(());
        }
        let mut incomplete = std::mem::take(&mut self.blocks[block].incomplete);
        // Post-invariant 3: sealed from here on; no new predecessors, no new incomplete phis.
        self.blocks[block].sealed = true;
        for &(var, phi) in &incomplete {
            // Invariant 2: the phis are finished in parameter order, so each appended operand
            // lands at the phi's index (earlier removals shift both lists alike).
            let mut steps = std::mem::take(&mut self.ssa.steps);
            steps.push(Step::Finish(block, phi));
            steps.extend(
                self.blocks[block]
                    .preds
                    .iter()
                    .rev()
                    .map(|p| Step::Read(p.block)),
            );
            self.run(var, steps)?;
        }
        // Hand the emptied list back, keeping its memory for a later function.
        incomplete.clear();
        self.blocks[block].incomplete = incomplete;
        Ok(())
    }

    /// Seal every block not sealed yet.
    pub fn seal_all_blocks(&mut self) -> Result<(), BuilderError> {
        for n in 0..self.func.dfg.num_blocks() {
            let b = Block::from_u32(n as u32);
            if self.blocks[b].created {
                self.seal_block(b)?;
            }
        }
        Ok(())
    }

    /// The variable's known value at the end of `block`, through aliases (a deferred phi's
    /// mark, left only by a run that failed, is no value).
    fn known_def(&self, var: Variable, block: Block) -> Option<Value> {
        match self.defs.get(var, block) {
            Some(DEFERRED) | None => None,
            Some(v) => Some(self.func.dfg.resolve(v)),
        }
    }

    /// Run the explicit-stack recursion for `var` from `steps` (the builder's scratch list,
    /// taken by the caller; returned to it emptied); returns the last value produced.
    fn run(&mut self, var: Variable, mut steps: Vec<Step>) -> Result<Value, BuilderError> {
        let mut results = std::mem::take(&mut self.ssa.results);
        let mut chain = std::mem::take(&mut self.ssa.chain);
        let outcome = self.run_steps(var, &mut steps, &mut results, &mut chain);
        steps.clear();
        results.clear();
        chain.clear();
        (self.ssa.steps, self.ssa.results, self.ssa.chain) = (steps, results, chain);
        outcome
    }

    fn run_steps(
        &mut self,
        var: Variable,
        steps: &mut Vec<Step>,
        results: &mut Vec<Value>,
        chain: &mut Vec<(Block, u64)>,
    ) -> Result<Value, BuilderError> {
        let ty = self.var_type(var)?;
        // `chain` holds the blocks waiting for a `Record`. Meeting one again with no phi made
        // since it was entered means a cycle of single-predecessor blocks, which is only
        // possible in unreachable code where nothing defines `var`. (With a phi made since,
        // the path went through a phi block, which now has a definition, so reading on
        // terminates.) Records pop the chain in stack order, so a block's mark, set to the
        // epoch when it is entered and restored when it leaves, equals the current epoch
        // exactly when such a cycle closes: O(1) per step.
        self.ssa.epoch += 1;
        while let Some(step) = steps.pop() {
            match step {
                Step::Read(b) => {
                    match self.defs.get(var, b) {
                        Some(DEFERRED) => {
                            // A cycle back to a block whose phi was deferred: it is needed
                            // now, as the value the cycle carries.
                            self.ssa.epoch += 1;
                            let phi = self.new_phi(b, ty);
                            self.defs.insert(var, b, phi, self.func.dfg.num_blocks());
                            results.push(phi);
                            continue;
                        }
                        Some(v) => {
                            results.push(self.func.dfg.resolve(v));
                            continue;
                        }
                        None => {}
                    }
                    let st = &self.blocks[b];
                    let (sealed, num_preds) = (st.sealed, st.preds.len());
                    let cycle = self.ssa.on_chain[b] == self.ssa.epoch;
                    // The block to read on from when `b` is as good as having one
                    // predecessor: the entry of the region `b` closes, if the region does
                    // not define `var` (`regions.rs`), else `b`'s only predecessor.
                    let single_pred = match st.shortcut {
                        Some(shortcut) if sealed => shortcut.entry_for(var, &self.history),
                        _ => None,
                    }
                    .or_else(|| (num_preds == 1).then(|| st.preds[0].block));
                    if !sealed {
                        self.ssa.epoch += 1;
                        // Incomplete phi; invariant 2: it is the last parameter and unfinished.
                        let phi = self.new_phi(b, ty);
                        self.blocks[b].incomplete.push((var, phi));
                        self.defs.insert(var, b, phi, self.func.dfg.num_blocks());
                        results.push(phi);
                    } else if let (Some(p), false) = (single_pred, cycle) {
                        chain.push((b, self.ssa.on_chain[b]));
                        self.ssa.on_chain[b] = self.ssa.epoch;
                        steps.push(Step::Record(b));
                        steps.push(Step::Read(p));
                    } else if num_preds == 0 || cycle {
                        let err = BuilderError::UndefinedVariable { var, block: b };
                        self.poisoned = Some(err.clone());
                        return Err(err);
                    } else {
                        // The phi is deferred: made only if a cycle reaches `b` again (which
                        // then sees the mark) or its operands differ, so the phis that would
                        // be trivial at once are never made (most of them, in practice).
                        self.ssa.epoch += 1;
                        self.defs
                            .insert(var, b, DEFERRED, self.func.dfg.num_blocks());
                        steps.push(Step::Finish(b, DEFERRED));
                        steps.extend(
                            self.blocks[b]
                                .preds
                                .iter()
                                .rev()
                                .map(|p| Step::Read(p.block)),
                        );
                    }
                }
                Step::Record(b) => {
                    if let Some((c, mark)) = chain.pop() {
                        debug_assert_eq!(c, b, "records pop the chain in stack order");
                        self.ssa.on_chain[c] = mark;
                    }
                    if let Some(&v) = results.last() {
                        self.defs.insert(var, b, v, self.func.dfg.num_blocks());
                    }
                }
                Step::Finish(b, phi) => {
                    let num_preds = self.blocks[b].preds.len();
                    let split = results.len().saturating_sub(num_preds);
                    // A deferred phi made here has operands known to differ: it is not
                    // trivial, so neither check below is run for it.
                    let mut differs = false;
                    let phi = match phi {
                        DEFERRED => match self.defs.get(var, b) {
                            Some(DEFERRED) => {
                                let trivial =
                                    self.trivial_operands(DEFERRED, &results[split..], num_preds);
                                if let Some(same) = trivial {
                                    // Every predecessor passes `same`: no phi at all.
                                    self.defs.insert(var, b, same, self.func.dfg.num_blocks());
                                    results.truncate(split);
                                    results.push(same);
                                    continue;
                                }
                                // Invariant 2: made now, its operands appended at once.
                                let phi = self.new_phi(b, ty);
                                self.defs.insert(var, b, phi, self.func.dfg.num_blocks());
                                differs = true;
                                phi
                            }
                            // Made when a cycle reached `b`.
                            Some(phi) => phi,
                            None => unreachable!("a deferred phi's mark stays until finished"),
                        },
                        phi => phi,
                    };
                    // Trivial before any operand is appended: alias it (which changes
                    // nothing when it cannot be made) and drop its parameter.
                    // With every operand at hand, this check is the final word on
                    // triviality; the one after appending runs only when some are missing.
                    let complete = results.len() - split == num_preds;
                    let trivial = if differs {
                        None
                    } else {
                        self.trivial_operands(phi, &results[split..], num_preds)
                    };
                    if let Some(same) = trivial.filter(|&w| self.func.dfg.change_to_alias(phi, w)) {
                        results.truncate(split);
                        let v = self.drop_trivial_phi(phi, b, same);
                        results.push(v);
                        continue;
                    }
                    for k in 0..results.len() - split {
                        let (pred, v) = (self.blocks[b].preds[k], results[split + k]);
                        self.append_phi_arg(pred.inst, b, v);
                        let r = self.func.dfg.resolve(v);
                        if self.is_phi[r] && r != phi {
                            self.phi_users[r].push(phi);
                        }
                    }
                    results.truncate(split);
                    let v = if complete {
                        phi
                    } else {
                        self.try_remove_trivial_phi(phi)
                    };
                    results.push(v);
                }
            }
        }
        results.pop().ok_or(BuilderError::UndefinedVariable {
            var,
            block: Block::from_u32(0),
        })
    }

    fn new_phi(&mut self, b: Block, ty: crate::types::Type) -> Value {
        let phi = self.func.dfg.append_block_param(b, ty);
        self.is_phi[phi] = true;
        phi
    }

    /// If the operands that phi `phi` is about to receive (`operands`, one per predecessor
    /// of its block, not yet appended) are all `phi` itself or one value `w`, return `w`.
    fn trivial_operands(&self, phi: Value, operands: &[Value], num_preds: usize) -> Option<Value> {
        if operands.len() != num_preds {
            return None;
        }
        sole_other_value(&self.func.dfg, phi, operands.iter().map(|&v| Some(v)))
    }

    /// Finish replacing phi `phi` of block `b`, already made an alias of `same` because its
    /// operands were all `same` (or itself) before any was appended: remove its parameter
    /// and retry the phis that used it; returns what `phi` now stands for. This is
    /// `try_remove_trivial_phi` without its cost: no argument was appended for `phi`, so
    /// none is removed.
    fn drop_trivial_phi(&mut self, phi: Value, b: Block, same: Value) -> Value {
        // The alias keeps `phi`'s def, so its parameter index is found in the block's list.
        let idx = self
            .func
            .dfg
            .block_params(b)
            .iter()
            .rposition(|&p| p == phi)
            .expect("an unfinished phi is a parameter of its block");
        // Invariant 2: phis are finished in parameter order, so every predecessor's
        // argument list to `b` ends before `phi`'s index; removing the parameter alone
        // keeps arguments and the remaining parameters aligned.
        debug_assert!(self.blocks[b]
            .preds
            .iter()
            .all(|pred| phi_operand(&self.func, pred.inst, b, idx).is_none()));
        self.func.dfg.remove_block_param(b, idx);
        self.is_phi[phi] = false;
        let users = std::mem::take(&mut self.phi_users[phi]);
        if !users.is_empty() {
            if self.is_phi[same] {
                self.phi_users[same].extend(users.iter().copied().filter(|&u| u != same));
            }
            self.ssa.work.extend(users);
            self.remove_trivial_phis();
        }
        self.func.dfg.resolve(phi)
    }

    /// Remove `phi` if it is trivial, then retry the phis that used it; returns what `phi`
    /// now stands for.
    fn try_remove_trivial_phi(&mut self, phi: Value) -> Value {
        self.ssa.work.push(phi);
        self.remove_trivial_phis();
        self.func.dfg.resolve(phi)
    }

    /// Remove every trivial phi on the worklist `ssa.work`, retrying the users of each one
    /// removed, until the list is empty.
    fn remove_trivial_phis(&mut self) {
        let mut work = std::mem::take(&mut self.ssa.work);
        while let Some(p) = work.pop() {
            if !self.is_phi[p] {
                continue; // already removed
            }
            let ValueDef::Param(b, idx) = self.func.dfg.value_def(p) else {
                continue;
            };
            let idx = idx as usize;
            let Some(same) = self.trivial_value(p, b, idx) else {
                continue;
            };
            // Replace `p` by `same`: alias first, so removing the parameter keeps the alias
            // (readers and compaction resolve through it).
            let aliased = self.func.dfg.change_to_alias(p, same);
            debug_assert!(
                aliased,
                "a phi and its operands share a type and `same != p`"
            );
            if !aliased {
                continue;
            }
            self.func.dfg.remove_block_param(b, idx);
            // Post-invariant 2: the argument at `idx` goes from every predecessor edge, so
            // arguments stay aligned with the remaining parameters.
            for k in 0..self.blocks[b].preds.len() {
                let pred = self.blocks[b].preds[k];
                edit_calls_to(&mut self.func, pred.inst, b, |pool, list| {
                    if idx < list.len() {
                        pool.remove(list, idx)
                    } else {
                        list
                    }
                });
            }
            self.is_phi[p] = false;
            let users = std::mem::take(&mut self.phi_users[p]);
            if self.is_phi[same] {
                self.phi_users[same].extend(users.iter().copied().filter(|&u| u != same));
            }
            work.extend(users);
        }
        self.ssa.work = work;
    }

    /// If every operand of phi `p` (parameter `idx` of `b`) is `p` itself or one value `w`,
    /// return `w`. A phi with a missing operand, or only itself as operand, is kept.
    fn trivial_value(&self, p: Value, b: Block, idx: usize) -> Option<Value> {
        let operands = self.blocks[b]
            .preds
            .iter()
            .map(|pred| phi_operand(&self.func, pred.inst, b, idx));
        sole_other_value(&self.func.dfg, p, operands)
    }

    /// Append `v` to every argument list of branch `inst` that targets `dest`.
    fn append_phi_arg(&mut self, inst: Inst, dest: Block, v: Value) {
        edit_calls_to(&mut self.func, inst, dest, |pool, list| pool.push(list, v));
    }
}

/// The one value other than `phi` among `operands` (through aliases) when every operand is
/// `phi` or that value: what a trivial phi stands for. `None` when two operands differ, one
/// is missing, or all are `phi` itself.
fn sole_other_value(
    dfg: &crate::dfg::DataFlowGraph,
    phi: Value,
    operands: impl IntoIterator<Item = Option<Value>>,
) -> Option<Value> {
    let mut same = None;
    for operand in operands {
        let a = dfg.resolve(operand?);
        if a == phi || Some(a) == same {
            continue;
        }
        if same.is_some() {
            return None;
        }
        same = Some(a);
    }
    same
}

/// Apply `edit` to the argument list of every destination of branch `inst` that is `dest`,
/// storing back the (possibly moved) list.
fn edit_calls_to(
    func: &mut crate::function::Function,
    inst: Inst,
    dest: Block,
    mut edit: impl FnMut(&mut ValueListPool, ValueList) -> ValueList,
) {
    let mut data = *func.dfg.inst(inst);
    if let InstructionData::BranchTable { table, .. } = data {
        if func.jump_tables.is_valid(table) {
            let jt = &mut func.jump_tables[table];
            for call in jt.all_branches_mut().filter(|c| c.block == dest) {
                call.args = edit(&mut func.dfg.pool, call.args);
            }
        }
        return;
    }
    if let Some(table) = data.exception_table() {
        if func.exception_tables.is_valid(table) {
            let et = &mut func.exception_tables[table];
            for call in et.all_branches_mut().filter(|c| c.block == dest) {
                call.args = edit(&mut func.dfg.pool, call.args);
            }
        }
        return;
    }
    for call in data.branch_destinations_mut() {
        if call.block == dest {
            call.args = edit(&mut func.dfg.pool, call.args);
        }
    }
    *func.dfg.inst_mut(inst) = data;
}

/// The argument branch `inst` passes for parameter `idx` of `dest`.
fn phi_operand(
    func: &crate::function::Function,
    inst: Inst,
    dest: Block,
    idx: usize,
) -> Option<Value> {
    let data = func.dfg.inst(inst);
    let call = match *data {
        InstructionData::BranchTable { table, .. } => func
            .jump_tables
            .get(table)?
            .all_branches()
            .find(|c| c.block == dest)
            .copied(),
        InstructionData::TryCall { table, .. } | InstructionData::TryCallIndirect { table, .. } => {
            func.exception_tables
                .get(table)?
                .all_branches()
                .find(|c| c.block == dest)
                .copied()
        }
        _ => data
            .branch_destinations()
            .iter()
            .find(|c| c.block == dest)
            .copied(),
    }?;
    func.dfg.block_call_args(&call).get(idx).copied()
}
