//! Dead-code elimination: deletes instructions without effects whose results nothing uses.
//!
//! Contract. Requires a compact function. An instruction is removable when it has no side
//! effects, cannot trap and reads no memory (so deleting it changes no behavior); it is dead
//! when it is removable and none of its results is used by a live instruction (operands,
//! branch and jump-table arguments). Use counts are computed once; deleting a dead
//! instruction decrements its operands' counts, and a definition whose count reaches zero is
//! examined in turn (a worklist), so chains of dead instructions go in one pass. Maintains
//! SSA and types; leaves the layout compact. Cost: linear in the function size.

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
    insts: Vec<Inst>,
    worklist: Vec<Inst>,
    order: Vec<Inst>,
}

/// Delete every dead instruction of `func`; returns how many.
pub fn eliminate_dead_code(func: &mut Function) -> usize {
    eliminate_dead_code_in(func, &mut Scratch::default(), &mut CompactMemory::default())
}

/// [`eliminate_dead_code`] in `scratch`, compacting in `memory`.
pub(crate) fn eliminate_dead_code_in(
    func: &mut Function,
    scratch: &mut Scratch,
    memory: &mut CompactMemory,
) -> usize {
    let Scratch {
        uses,
        dead,
        insts,
        worklist,
        order,
    } = scratch;
    uses.clear();
    dead.clear();
    insts.clear();
    insts.extend(
        func.layout
            .blocks()
            .iter()
            .flat_map(|&b| func.layout.block_insts(b)),
    );
    let mut reads_alias = false;
    for &inst in insts.iter() {
        reads_alias |= for_each_use(func, inst, |v| uses[v] += 1);
    }
    let unused = |uses: &SecondaryMap<Value, u32>, inst: Inst| {
        func.dfg.inst_results(inst).iter().all(|&r| uses[r] == 0)
    };
    worklist.clear();
    worklist.extend(
        insts
            .iter()
            .rev()
            .copied()
            .filter(|&i| removable(func, i) && unused(uses, i)),
    );
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
    // Compaction applies the removals (ours and queued ones) and resolves aliased operands;
    // with neither, the function already is what it would produce.
    if !order.is_empty() || reads_alias || !func.layout.is_compact() {
        func.compact_in(memory);
    }
    // Aliases may name the deleted results; after compaction nothing reads them.
    func.dfg.clear_aliases();
    order.len()
}
