//! The value table of global value numbering: pure instructions already placed, by their
//! operation, operands and result type, with the block that holds each.
//!
//! Contract. A hit is an instruction whose block dominates the asking block (or is that
//! block, where it was placed earlier: the walk is in layout order), so its results can
//! replace the asker's. Constants are numbered within a block only: the backend folds them
//! into immediates or rematerializes them cheaply, and one constant shared across blocks
//! would only make a long live range (spilled across calls). Operands must be resolved (no
//! aliases), which compaction guarantees.
//! One entry per key: a later instruction the entry does not dominate takes its place, which
//! may miss a redundancy (never report a wrong one). Cost: O(1) expected per operation,
//! memory linear in the number of pure instructions.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::{Block, InstructionData, Opcode, Type, Value};

/// Results of a numbered instruction (at most two for a pure one: `isplit`, overflow ops).
type Results = [Value; 2];

#[derive(Default)]
pub(crate) struct ValueTable {
    map: FxHashMap<(InstructionData, Type), (Block, Results)>,
}

/// Whether instructions with opcode `op` may be numbered: no effects, no trap, no memory,
/// no frame values, no operand lists.
pub(crate) fn is_numberable(data: &InstructionData) -> bool {
    let op = data.opcode();
    !(op.has_side_effects()
        || op.can_trap()
        || op.can_load()
        || op.is_terminator()
        || op == Opcode::Nop
        || matches!(
            data,
            InstructionData::NullAry { .. }
                | InstructionData::MultiAry { .. }
                | InstructionData::Call { .. }
                | InstructionData::CallIndirect { .. }
        ))
}

/// `iconst`, `f32const`, `f64const`.
pub(crate) fn is_constant(data: &InstructionData) -> bool {
    matches!(
        data,
        InstructionData::UnaryImm { .. }
            | InstructionData::UnaryIeee32 { .. }
            | InstructionData::UnaryIeee64 { .. }
    )
}

/// Whether an entry for `data` placed in block `at` may replace an equal instruction in
/// `block`: the same block (placed earlier), or for a non-constant a dominating one.
fn serves(data: &InstructionData, at: Block, block: Block, domtree: &DominatorTree) -> bool {
    at == block || (!is_constant(data) && domtree.block_dominates(at, block))
}

impl ValueTable {
    /// Forgets every instruction, keeping the table's memory unless it is far larger than
    /// the last function needed (so the cost is linear in that function, not in the
    /// largest one so far).
    pub fn clear(&mut self) {
        kestrel_ir::scratch::empty_map(&mut self.map);
    }

    /// The results of an equal instruction (first result of type `ty`) that dominates
    /// `block`'s current point.
    pub fn lookup(
        &self,
        data: &InstructionData,
        ty: Type,
        block: Block,
        domtree: &DominatorTree,
    ) -> Option<Results> {
        let &(at, results) = self.map.get(&(*data, ty))?;
        serves(data, at, block, domtree).then_some(results)
    }

    /// Record `data` (first result of type `ty`) placed in `block` with `results`.
    pub fn insert(&mut self, data: InstructionData, ty: Type, block: Block, results: &[Value]) {
        debug_assert!(!results.is_empty() && results.len() <= 2);
        let second = *results.get(1).unwrap_or(&results[0]);
        self.map.insert((data, ty), (block, [results[0], second]));
    }

    /// [`ValueTable::lookup`]; if there is no such instruction, records `data`, placed in `block` with
    /// `results`, in its place (one hash lookup either way).
    pub fn lookup_or_insert(
        &mut self,
        data: InstructionData,
        ty: Type,
        block: Block,
        results: &[Value],
        domtree: &DominatorTree,
    ) -> Option<Results> {
        debug_assert!(!results.is_empty() && results.len() <= 2);
        let second = *results.get(1).unwrap_or(&results[0]);
        let entry = (block, [results[0], second]);
        match self.map.entry((data, ty)) {
            Entry::Occupied(mut slot) => {
                let (at, existing) = *slot.get();
                if serves(&data, at, block, domtree) {
                    return Some(existing);
                }
                slot.insert(entry);
                None
            }
            Entry::Vacant(slot) => {
                slot.insert(entry);
                None
            }
        }
    }
}
