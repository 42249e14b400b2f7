//! Redundant load elimination: a load equal to an earlier one that is still available is
//! deleted and its result aliased to the earlier load's.
//!
//! Two loads are equal when they have the same opcode, result type, address value (aliases
//! resolved), offset and memory flags (so the same trap code and alias region too). An
//! earlier load is available at a later equal one when memory at that address cannot have
//! changed in between:
//! - a `readonly` load's memory never changes while the function runs, so it is available
//!   in every block it dominates (and later in its own block), whatever runs in between;
//! - any other load is available only later in its own block, until an instruction that may
//!   write memory it may read: a store in region `r` clobbers loads in `r` and loads without
//!   a region; a store without a region, a call, an atomic or a fence clobbers all of them.
//!
//! Replacing the later load keeps traps too: the earlier load ran without trapping at the
//! same address with the same flags, and nothing in between changed that memory.
//!
//! Contract. Requires a function and its dominator tree (only block queries are used), with
//! no queued edits other than insertions of instructions that access no memory (which the
//! walk does not see: if-conversion's arms). Maintains SSA dominance (the kept load dominates the deleted one's uses), types
//! and behavior (above). Keeps every block and edge; leaves the layout compact (the
//! pipeline's variant leaves tombstones for the next compacting pass). Cost:
//! linear in the function size: one walk in layout order, O(1) expected per instruction
//! (a clobber bumps a counter instead of emptying a table), memory linear in the loads; the
//! tables kept between functions are emptied per function in time linear in the last one.

use rustc_hash::FxHashMap;

use kestrel_ir::compact::CompactMemory;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::immediates::AliasRegion;
use kestrel_ir::{Block, Function, Inst, InstructionData, Type, Value};

use crate::gvn::ValueTable;

/// Whether a load may be executed anywhere its address is defined, such as a loop's
/// preheader: `readonly` (its memory never changes), `notrap` and `can_move` (the address is
/// valid wherever it is defined, not only where the load stands).
pub(crate) fn is_movable_load(data: &InstructionData) -> bool {
    matches!(data, InstructionData::Load { flags, .. }
        if flags.readonly && flags.can_move && flags.trap_code.is_none())
}

/// What an instruction may write, as far as loads are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clobber {
    Nothing,
    /// A store in one region: loads in it and loads without a region.
    Region(AliasRegion),
    /// Any memory.
    All,
}

fn clobber_of(data: &InstructionData) -> Clobber {
    let op = data.opcode();
    match data {
        InstructionData::Store { flags, .. } => match flags.alias_region {
            Some(region) => Clobber::Region(region),
            None => Clobber::All,
        },
        _ if op.can_store() || op.is_call() || (op.has_side_effects() && op.can_load()) => {
            Clobber::All
        }
        _ => Clobber::Nothing,
    }
}

/// The non-`readonly` loads available at the current point of one block.
///
/// Invariant: an entry is available exactly when its block epoch and its region's epoch
/// are the current ones; starting a block or clobbering everything bumps the block epoch,
/// a store in region `r` bumps `r`'s epoch and that of loads without a region (`None`).
#[derive(Default)]
struct BlockLoads {
    entries: FxHashMap<(InstructionData, Type), (Value, u32, u32)>,
    block_epoch: u32,
    region_epochs: FxHashMap<Option<AliasRegion>, u32>,
}

impl BlockLoads {
    fn region_epoch(&self, region: Option<AliasRegion>) -> u32 {
        self.region_epochs.get(&region).copied().unwrap_or(0)
    }

    fn lookup(
        &self,
        data: &InstructionData,
        ty: Type,
        region: Option<AliasRegion>,
    ) -> Option<Value> {
        let &(v, block_epoch, region_epoch) = self.entries.get(&(*data, ty))?;
        (block_epoch == self.block_epoch && region_epoch == self.region_epoch(region)).then_some(v)
    }

    fn insert(&mut self, data: InstructionData, ty: Type, region: Option<AliasRegion>, v: Value) {
        let epochs = (self.block_epoch, self.region_epoch(region));
        self.entries.insert((data, ty), (v, epochs.0, epochs.1));
    }

    /// Forget every entry (a new block, or a write to any memory).
    fn clear(&mut self) {
        self.block_epoch += 1;
    }

    /// Start a function: drop the last function's entries for real, so the table stays
    /// linear in one function (and its epochs cannot wrap around to match a stale entry).
    fn reset(&mut self) {
        kestrel_ir::scratch::empty_map(&mut self.entries);
        kestrel_ir::scratch::empty_map(&mut self.region_epochs);
        self.block_epoch = 0;
    }

    fn clobber(&mut self, clobber: Clobber) {
        match clobber {
            Clobber::Nothing => {}
            Clobber::All => self.clear(),
            Clobber::Region(r) => {
                *self.region_epochs.entry(Some(r)).or_default() += 1;
                *self.region_epochs.entry(None).or_default() += 1;
            }
        }
    }
}

/// The pass's tables and lists, kept across functions (emptied before use).
#[derive(Default)]
pub(crate) struct Scratch {
    readonly: ValueTable,
    local: BlockLoads,
    blocks: Vec<Block>,
    insts: Vec<Inst>,
}

/// Delete the redundant loads of `func`, whose dominator tree is `domtree`; returns how
/// many. Leaves the function compact.
pub fn eliminate_redundant_loads(func: &mut Function, domtree: &DominatorTree) -> usize {
    let removed = eliminate_redundant_loads_in(func, domtree, &mut Scratch::default());
    if removed > 0 {
        func.compact_in(&mut CompactMemory::default());
    }
    removed
}

/// [`eliminate_redundant_loads`] in `scratch`, without its compaction: the deleted loads
/// stay as tombstones whose results are aliases, for the caller's next compacting walk
/// (the pipeline's simplification pass) to drop and resolve.
pub(crate) fn eliminate_redundant_loads_in(
    func: &mut Function,
    domtree: &DominatorTree,
    scratch: &mut Scratch,
) -> usize {
    let Scratch {
        readonly,
        local,
        blocks,
        insts,
    } = scratch;
    readonly.clear();
    local.reset();
    let mut removed = 0;
    blocks.clear();
    blocks.extend_from_slice(func.layout.blocks());
    for &block in blocks.iter() {
        local.clear();
        insts.clear();
        insts.extend(func.layout.block_insts(block));
        for &inst in insts.iter() {
            let mut data = *func.dfg.inst(inst);
            let InstructionData::Load { flags, arg, .. } = &mut data else {
                local.clobber(clobber_of(&data));
                continue;
            };
            *arg = func.dfg.resolve(*arg);
            let (is_readonly, region) = (flags.readonly, flags.alias_region);
            let result = func.dfg.first_result(inst).expect("a load has a result");
            let ty = func.dfg.value_type(result);
            // A readonly load is recorded by its lookup when it finds no earlier one.
            let earlier = if is_readonly {
                readonly
                    .lookup_or_insert(data, ty, block, &[result], domtree)
                    .map(|r| r[0])
            } else {
                local.lookup(&data, ty, region)
            };
            match earlier {
                Some(v) => {
                    // Post-invariant: `v` is defined earlier in this block or in a
                    // dominating one, and its memory is unchanged since (module docs).
                    let replaced = func.dfg.change_to_alias(result, v);
                    debug_assert!(replaced, "equal loads have equal types");
                    func.layout.remove_inst(inst);
                    removed += 1;
                }
                None if is_readonly => {}
                None => local.insert(data, ty, region, result),
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_ir::cfg::ControlFlowGraph;

    fn run(scratch: &mut Scratch, text: &str) -> usize {
        let mut func = kestrel_ir::parse_functions(text, "loads.rs")
            .expect("the case parses")
            .remove(0);
        let cfg = ControlFlowGraph::compute(&func);
        let domtree = DominatorTree::compute(&func, &cfg);
        eliminate_redundant_loads_in(&mut func, &domtree, scratch)
    }

    /// Kept memory holds one function's loads at a time: a second function starts from an
    /// empty table (so the table cannot grow with every function a worker compiles).
    #[test]
    fn the_kept_table_holds_only_the_current_functions_loads() {
        let mut scratch = Scratch::default();
        let many = (0..40)
            .map(|k| format!("    v{} = load.i64 v0+{}\n", k + 1, 8 * k))
            .collect::<String>();
        let first = format!("function %a(i64) {{\nblock0(v0: i64):\n{many}    return\n}}\n");
        assert_eq!(run(&mut scratch, &first), 0);
        assert_eq!(scratch.local.entries.len(), 40);
        let second = "function %b(i64) {
block0(v0: i64):
    v1 = load.i64 v0
    v2 = load.i64 v0
    return
}
";
        assert_eq!(run(&mut scratch, second), 1);
        assert_eq!(scratch.local.entries.len(), 1);
    }
}
