//! SSA dominance: every use is dominated by its definition.
//!
//! A result of instruction `d` used by instruction `u` needs `d` placed, `d != u`, and `d`
//! dominating `u` (earlier in the same block, or in a dominating block). A parameter of block
//! `p` used in block `b` needs `p` placed and dominating `b` (parameters are defined at block
//! entry). Branch arguments are uses by the branch. Following Cranelift, uses in blocks that
//! are unreachable from the entry are only checked for a placed definition: dominance is
//! vacuous there.

use super::Verifier;
use crate::dfg::ValueDef;
use crate::domtree::DominatorTree;
use crate::entity::{Block, Inst, Value};

impl Verifier<'_> {
    /// Check the uses of `inst` (whose references are known to be valid), placed in `block`.
    pub(super) fn check_dominance(&mut self, inst: Inst, block: Block, domtree: &DominatorTree) {
        let func = self.func;
        let mut uses: Vec<Value> = func.dfg.inst_args(inst).collect();
        if func.dfg.inst(inst).opcode().is_branch() {
            let data = func.dfg.inst(inst);
            let calls: Vec<_> = match *data {
                crate::instructions::InstructionData::BranchTable { table, .. } => func
                    .jump_tables
                    .get(table)
                    .map(|jt| jt.all_branches().copied().collect())
                    .unwrap_or_default(),
                _ => data.branch_destinations().to_vec(),
            };
            for call in &calls {
                uses.extend_from_slice(func.dfg.block_call_args(call));
            }
        }
        let reachable = domtree.is_reachable(block);
        for v in uses {
            let Some(r) = self.resolve(v) else { continue };
            let shown = if r == v {
                format!("{v}")
            } else {
                format!("{v} (alias of {r})")
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
                            format!(
                                "uses {shown}, a parameter of {pb}, which is not in the layout"
                            ),
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
}
