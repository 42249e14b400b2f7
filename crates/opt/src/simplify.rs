//! The simplification pass: rewrite rules and global value numbering in one compacting walk
//! (seed 004's `IncrementalCompact`: the pass rewrites while compaction moves each
//! instruction into place, instead of one walk per concern).
//!
//! Contract. Requires a verified function, or one that is verified once the edits queued
//! in its layout are applied (the pipeline's: the loads pass's tombstones and aliases,
//! hoisting's moves), which this walk applies. For each instruction in layout order, with
//! its operands resolved:
//! 1. one with a single result and no side effects or memory access goes to the rules
//!    (`simplify.rules`); if they give a value, the result becomes an alias of it and the
//!    instruction is deleted;
//! 2. a `brif` the rules decide (`simplify_branch`) becomes a `jump` to the block taken;
//! 3. otherwise a pure instruction (see `gvn::is_numberable`) equal to one placed earlier in
//!    a dominating block is deleted, its results aliased to that one's; else it is recorded.
//!
//! Maintains: SSA dominance (rules return values that dominate the instruction, the table
//! returns only dominating instructions), types (a replacement of another type is refused),
//! traps and effects (only instructions without side effects are deleted, and a trapping one
//! only by a rule that proves it cannot trap). Breaks: a decided branch loses an edge, so
//! blocks may become unreachable (the driver removes them) and the caller's CFG is stale.
//! Leaves: a compact layout, possibly dead
//! instructions (operands of deleted ones) for DCE, and, where the layout does not follow
//! dominance, operands placed before the definition they read that may still name an alias
//! made later in the walk; the next compaction (DCE's, which always follows) resolves them. Cost: linear in the function size
//! (O(1) expected per table operation, bounded work per rule).

use kestrel_ir::compact::CompactMemory;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::{Function, InstructionData, Opcode};

use crate::gvn::{is_numberable, ValueTable};
use crate::rules::{
    constructor_simplify, constructor_simplify_branch, op_of, simplification_rules, RulesCtx, Taken,
};

/// What the pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimplifyStats {
    /// Instructions replaced by a rule.
    pub simplified: usize,
    /// Instructions replaced by an equal dominating one.
    pub numbered: usize,
    /// Conditional branches turned into jumps.
    pub branches: usize,
    /// Per rule of [`simplification_rules`]: how often it fired.
    pub fired: Vec<u32>,
}

/// Run the pass on `func`, whose dominator tree is `domtree`.
pub fn simplify(func: &mut Function, domtree: &DominatorTree) -> SimplifyStats {
    let mut fired = Vec::new();
    let mut stats = simplify_in(
        func,
        domtree,
        &mut ValueTable::default(),
        &mut CompactMemory::default(),
        &mut fired,
    );
    stats.fired = fired;
    stats
}

/// [`simplify`] with a value table and compaction memory kept across functions; the
/// per-rule counts go to `fired` (refilled), not to the returned stats.
pub(crate) fn simplify_in(
    func: &mut Function,
    domtree: &DominatorTree,
    values: &mut ValueTable,
    memory: &mut CompactMemory,
    fired: &mut Vec<u32>,
) -> SimplifyStats {
    let mut stats = SimplifyStats::default();
    fired.clear();
    fired.resize(simplification_rules().len(), 0);
    values.clear();
    func.compact_with_in(memory, |cursor| {
        let data = cursor.data;
        let op = data.opcode();
        if let InstructionData::Brif { blocks, .. } = data {
            let mut ctx = RulesCtx {
                cursor: &mut *cursor,
                values: &mut *values,
                domtree,
                fired: &mut *fired,
                depth: 0,
            };
            if let Some(taken) = constructor_simplify_branch(&mut ctx, op_of(&data)) {
                // Post-invariant: the branch goes where it always went; the edge it never
                // takes is gone (the tree, computed with it, stays conservative: removing an
                // edge only adds dominance).
                let destination = match taken {
                    Taken::Then => blocks[0],
                    Taken::Else => blocks[1],
                };
                cursor.data = InstructionData::Jump {
                    opcode: Opcode::Jump,
                    destination,
                };
                stats.branches += 1;
            }
            return;
        }
        let rewritable = cursor.results.len() == 1
            && !op.has_side_effects()
            && !op.can_load()
            && op != Opcode::Nop;
        if rewritable {
            let result = cursor.results[0];
            let ty = cursor.func.dfg.value_type(result);
            let mut ctx = RulesCtx {
                cursor: &mut *cursor,
                values: &mut *values,
                domtree,
                fired: &mut *fired,
                depth: 0,
            };
            if let Some(v) = constructor_simplify(&mut ctx, ty, op_of(&data)) {
                // Post-invariant: `v` is defined before this instruction and dominates it;
                // refused (the instruction stays) only if a rule gave a value of another type.
                let replaced = cursor.func.dfg.change_to_alias(result, v);
                debug_assert!(replaced, "rule gave {v} for {result} of another type");
                if replaced {
                    cursor.remove();
                    stats.simplified += 1;
                    return;
                }
            }
        }
        if !is_numberable(&data) || cursor.results.is_empty() {
            return;
        }
        let ty = cursor.func.dfg.value_type(cursor.results[0]);
        let (block, results) = (cursor.block, cursor.results);
        if let Some(existing) = values.lookup_or_insert(data, ty, block, results, domtree) {
            // Post-invariant: `existing` was placed before this point in a dominating block,
            // so every use of these results may read it instead.
            for (&r, &e) in results.iter().zip(&existing) {
                let replaced = cursor.func.dfg.change_to_alias(r, e);
                debug_assert!(replaced, "equal instructions have equal result types");
            }
            cursor.remove();
            stats.numbered += 1;
        }
    });
    stats
}
