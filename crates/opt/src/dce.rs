//! Dead-code elimination: deletes instructions without effects whose results nothing uses.
//!
//! Contract. Requires a function whose layout holds no queued insertions (tombstones are
//! fine: they are skipped). An instruction is removable when it has no side
//! effects, cannot trap and reads no memory (so deleting it changes no behavior); it is dead
//! when it is removable and none of its results is used by a live instruction (operands,
//! branch and jump-table arguments). Use counts are computed once; deleting a dead
//! instruction decrements its operands' counts, and a definition whose count reaches zero is
//! examined in turn (a worklist), so chains of dead instructions go in one pass. Maintains
//! SSA and types; [`eliminate_dead_code`] leaves the layout compact, the pipeline's variant
//! leaves tombstones for the next compaction. Cost: linear in the function size.

use kestrel_ir::compact::CompactMemory;
use kestrel_ir::entity::SecondaryMap;
use kestrel_ir::{Function, Inst, Value, ValueDef};

/// Whether deleting `inst`, if unused, preserves behavior.
fn removable(func: &Function, inst: Inst) -> bool {
    let op = func.dfg.inst(inst).opcode();
    !(op.has_side_effects() || op.can_trap() || op.can_load() || op.is_terminator())
}

/// Every value `inst` reads, aliases resolved; whether some operand names an alias.
fn for_each_use(func: &Function, inst: Inst, mut f: impl FnMut(Value)) -> bool {
    let mut reads_alias = false;
    let mut visit = |v: Value| {
        let resolved = func.dfg.resolve(v);
        reads_alias |= resolved != v;
        f(resolved);
    };
    for v in func.dfg.inst_args(inst) {
        visit(v);
    }
    for k in 0..func.num_branch_destinations(inst) {
        let dest = func.branch_destination(inst, k);
        for &v in func.dfg.block_call_args(&dest) {
            visit(v);
        }
    }
    reads_alias
}

/// The pass's working memory, kept across functions (refilled before use).
#[derive(Default)]
pub(crate) struct Scratch {
    uses: SecondaryMap<Value, u32>,
    dead: SecondaryMap<Inst, bool>,
    worklist: Vec<Inst>,
    order: Vec<Inst>,
}

/// Delete every dead instruction of `func`; returns how many.
pub fn eliminate_dead_code(func: &mut Function) -> usize {
    let outcome = eliminate_dead_code_in(func, &mut Scratch::default());
    if outcome.reads_alias || !func.layout.is_compact() {
        func.compact_in(&mut CompactMemory::default());
    }
    // Aliases may name the deleted results; after compaction nothing reads them.
    func.dfg.clear_aliases();
    outcome.removed
}

/// What [`eliminate_dead_code_in`] did.
pub(crate) struct Outcome {
    /// Instructions deleted.
    pub removed: usize,
    /// Whether a live instruction names an alias, which a compaction must resolve.
    pub reads_alias: bool,
}

/// [`eliminate_dead_code`] in `scratch`, without compacting: the deleted instructions stay
/// as tombstones (their results detached) and aliased operands stay, for the caller's next
/// compaction (the pipeline's is LICM's, so one compaction serves both passes).
pub(crate) fn eliminate_dead_code_in(func: &mut Function, scratch: &mut Scratch) -> Outcome {
    let Scratch {
        uses,
        dead,
        worklist,
        order,
    } = scratch;
    uses.clear();
    dead.clear();
    // The layout is walked twice in place (counting, then seeding the worklist) rather
    // than copied into a list first.
    let placed = || {
        func.layout
            .blocks()
            .iter()
            .flat_map(|&b| func.layout.block_insts(b))
    };
    let mut reads_alias = false;
    for inst in placed() {
        reads_alias |= for_each_use(func, inst, |v| uses[v] += 1);
    }
    let unused = |uses: &SecondaryMap<Value, u32>, inst: Inst| {
        func.dfg.inst_results(inst).iter().all(|&r| uses[r] == 0)
    };
    worklist.clear();
    // Seeded in reverse, so the first unused instruction is popped first.
    for &b in func.layout.blocks().iter().rev() {
        for i in func.layout.block_insts(b).rev() {
            if removable(func, i) && unused(uses, i) {
                worklist.push(i);
            }
        }
    }
    order.clear();
    while let Some(inst) = worklist.pop() {
        if dead[inst] {
            continue;
        }
        dead[inst] = true;
        order.push(inst);
        let _ = for_each_use(func, inst, |v| {
            uses[v] -= 1;
            if uses[v] != 0 {
                return;
            }
            if let ValueDef::Result(def, _) = func.dfg.value_def(v) {
                if !dead[def] && removable(func, def) && unused(uses, def) {
                    worklist.push(def);
                }
            }
        });
    }
    for &inst in order.iter() {
        func.layout.remove_inst(inst);
        func.dfg.detach_results(inst);
    }
    Outcome {
        removed: order.len(),
        reads_alias,
    }
}
