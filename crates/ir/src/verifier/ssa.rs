//! SSA dominance: every use is dominated by its definition.
//!
//! A result of instruction `d` used by instruction `u` needs `d` placed, `d != u`, and `d`
//! dominating `u` (earlier in the same block, or in a dominating block). A parameter of block
//! `p` used in block `b` needs `p` placed and dominating `b` (parameters are defined at block
//! entry). Branch arguments are uses by the branch. Following Cranelift, uses in blocks that
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
        if let crate::instructions::InstructionData::BranchTable { table, .. } = *data {
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
