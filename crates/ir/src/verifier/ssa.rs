//! SSA dominance: every use is dominated by its definition.
//!
//! A result of instruction `d` used by instruction `u` needs `d` placed, `d != u`, and `d`
//! dominating `u` (earlier in the same block, or in a dominating block). A parameter of block
//! `p` used in block `b` needs `p` placed and dominating `b` (parameters are defined at block
//! entry). Branch arguments are uses by the branch. A `try_call`'s results are used only
//! as its own block arguments: returns on the normal destination, payloads on handlers. Following Cranelift, uses in blocks that
//! are unreachable from the entry are only checked for a placed definition: dominance is
//! vacuous there.

use std::fmt;

use super::Verifier;
use crate::dfg::ValueDef;
use crate::domtree::DominatorTree;
use crate::entity::{Block, Inst, Value};

/// A used value as reports name it: `v5`, or `v5 (alias of v3)`. Formatted only when a
/// report is made, so checking a valid function allocates nothing per use.
#[derive(Clone, Copy)]
struct Shown {
    used: Value,
    resolved: Value,
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.used == self.resolved {
            write!(f, "{}", self.used)
        } else {
            write!(f, "{} (alias of {})", self.used, self.resolved)
        }
    }
}

impl Verifier<'_> {
    /// Check the uses of `inst` (whose references are known to be valid), placed in `block`:
    /// its arguments, then the arguments of its branch destinations.
    pub(super) fn check_dominance(&mut self, inst: Inst, block: Block, domtree: &DominatorTree) {
        let func = self.func;
        let reachable = domtree.is_reachable(block);
        for v in func.dfg.inst_args(inst) {
            self.check_dominated_use(inst, block, reachable, domtree, v);
        }
        let data = func.dfg.inst(inst);
        if !data.opcode().is_branch() {
            return;
        }
        if let Some(table) = data.exception_table() {
            self.check_try_call_args(inst, block, reachable, domtree, table);
        } else if let crate::instructions::InstructionData::BranchTable { table, .. } = *data {
            for call in func
                .jump_tables
                .get(table)
                .into_iter()
                .flat_map(|jt| jt.all_branches())
            {
                for &v in func.dfg.block_call_args(call) {
                    self.check_dominated_use(inst, block, reachable, domtree, v);
                }
            }
        } else {
            for call in data.branch_destinations() {
                for &v in func.dfg.block_call_args(call) {
                    self.check_dominated_use(inst, block, reachable, domtree, v);
                }
            }
        }
    }

    /// A `try_call`'s block arguments: its own results as `retN` on the normal destination
    /// and `exnN` on the handlers, other values as ordinary uses.
    fn check_try_call_args(
        &mut self,
        inst: Inst,
        block: Block,
        reachable: bool,
        domtree: &DominatorTree,
        table: crate::entity::ExceptionTable,
    ) {
        let func = self.func;
        let Some(et) = func.exception_tables.get(table) else {
            return;
        };
        let rets = func
            .dfg
            .inst_results(inst)
            .len()
            .saturating_sub(crate::function::EXCEPTION_PAYLOAD_TYPES.len());
        for (k, call) in et.all_branches().enumerate() {
            for &v in func.dfg.block_call_args(call) {
                match func.dfg.value_def(v) {
                    ValueDef::Result(def, n) if def == inst => {
                        let n = n as usize;
                        if k == 0 && n >= rets {
                            self.report_inst(
                                inst,
                                format!("passes exn{} (an exception payload) to the normal destination {}", n - rets, call.block),
                            );
                        } else if k > 0 && n < rets {
                            self.report_inst(
                                inst,
                                format!(
                                    "passes ret{n} (a return value) to the handler {}",
                                    call.block
                                ),
                            );
                        }
                    }
                    _ => self.check_dominated_use(inst, block, reachable, domtree, v),
                }
            }
        }
    }

    /// Check one use of `v` by `inst` in `block` (see the module doc).
    fn check_dominated_use(
        &mut self,
        inst: Inst,
        block: Block,
        reachable: bool,
        domtree: &DominatorTree,
        v: Value,
    ) {
        let func = self.func;
        let Some(r) = self.resolve(v) else { return };
        let shown = Shown {
            used: v,
            resolved: r,
        };
        match func.dfg.value_def(r) {
            ValueDef::Result(def, _) => match func.layout.inst_block(def) {
                None => self.report_inst(
                    inst,
                    format!("uses {shown}, defined by {def}, which is not in the layout"),
                ),
                Some(_) if def == inst => {
                    self.report_inst(inst, format!("uses its own result {shown}"))
                }
                Some(_) if func.dfg.inst(def).opcode().is_try_call() => self.report_inst(
                    inst,
                    format!(
                        "uses {shown}, a result of the `try_call` {def}, which is only available                          as a block argument of that `try_call` (retN, exnN)"
                    ),
                ),
                Some(def_block) => {
                    if reachable && !domtree.dominates(def, inst, &func.layout) {
                        self.report_inst(
                            inst,
                            format!(
                                "uses {shown}, but its definition ({def} in {def_block}) \
                                 does not dominate this use"
                            ),
                        );
                    }
                }
            },
            ValueDef::Param(pb, _) => {
                if !func.layout.is_block_inserted(pb) {
                    self.report_inst(
                        inst,
                        format!("uses {shown}, a parameter of {pb}, which is not in the layout"),
                    );
                } else if reachable && !domtree.block_dominates(pb, block) {
                    self.report_inst(
                        inst,
                        format!(
                            "uses {shown}, a parameter of {pb}, but {pb} does not dominate {block}"
                        ),
                    );
                }
            }
            // Reported by the entity checks; such instructions never get here.
            ValueDef::Alias(_) | ValueDef::Unused => {}
        }
    }
}
