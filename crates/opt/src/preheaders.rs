//! Loop preheaders: every loop gets a block that runs exactly when the loop is entered, so
//! hoisting ([`crate::hoist_loop_invariants`], whose loops are those of `loops.rs`) has
//! somewhere to put what it moves.
//!
//! A loop has a preheader when its header has exactly one predecessor outside the loop and
//! that block ends in a `jump`. For any other loop a new block `P` is made, placed just
//! before the header in the layout, and every edge into the header from outside the loop
//! (jumps, `brif` sides, jump-table entries, unreachable predecessors included) goes to `P`
//! instead. With one such edge, `P` has no parameters and its `jump` passes the header what
//! that edge passed; with several, `P` takes the header's parameter types and passes its
//! parameters on. A `br_table` whose jump table other `br_table`s read too gets its own copy
//! of the table before its entries change. A loop entered from a `try_call` gets none.
//!
//! Contract. Requires a function the verifier accepts with its control-flow graph and
//! dominator tree, and no queued insertions. Maintains behavior (`P` only forwards what the
//! edges passed), SSA dominance (the values an edge passed are available at its branch;
//! `P`'s successor is the header, which `P`'s new jump reaches with values defined at that
//! branch's block, which dominates `P` when it is `P`'s only predecessor, or with `P`'s own
//! parameters), types, and the entry block (never a loop header: no branch may target it).
//! Leaves the new blocks and their jumps queued (the caller compacts and recomputes the
//! graph and tree when any was made). Cost: O(blocks + edges × loop depth + jump-table
//! entries), plus the loop forest's.

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::entity::{JumpTable, SecondaryMap};
use kestrel_ir::{Block, BlockCall, Function, Inst, InstructionData, Opcode, Type, Value};

use crate::loops::LoopForest;

/// Give every loop of `func` a preheader; returns how many blocks were made.
pub fn insert_preheaders(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
) -> usize {
    let forest = LoopForest::compute(cfg, domtree);
    if forest.loops.is_empty() {
        return 0;
    }
    let mut made = 0;
    // How many `br_table`s read each jump table, and the block before each in the layout.
    let mut readers: SecondaryMap<JumpTable, u32> = SecondaryMap::new();
    let mut layout_prev: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
    let mut prev = None;
    for &b in func.layout.blocks() {
        layout_prev[b] = prev;
        prev = Some(b);
        if let Some(end) = func.layout.last_inst(b) {
            if let InstructionData::BranchTable { table, .. } = *func.dfg.inst(end) {
                readers[table] += 1;
            }
        }
    }
    let mut outside: Vec<Inst> = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    for l in 0..forest.loops.len() {
        let header = forest.loops[l].header;
        outside.clear();
        outside.extend(
            cfg.predecessors(header)
                .iter()
                .filter(|p| !forest.contains(l, p.block))
                .map(|p| p.inst),
        );
        let has_one = match outside.as_slice() {
            [only] => matches!(func.dfg.inst(*only), InstructionData::Jump { .. }),
            _ => false,
        };
        // An edge from a `try_call` may carry its `retN`/`exnN`, which only it can pass: such
        // a loop keeps no preheader (hoisting skips it).
        let from_try_call = outside
            .iter()
            .any(|&inst| func.dfg.inst(inst).opcode().is_try_call());
        if has_one || outside.is_empty() || from_try_call {
            continue;
        }
        let Some(before) = layout_prev[header] else {
            continue; // the entry block: never a loop header
        };
        let edges: usize = outside
            .iter()
            .map(|&inst| count_edges_to(func, inst, header))
            .sum();
        let p = func.dfg.make_block();
        let types: Vec<Type> = func
            .dfg
            .block_params(header)
            .iter()
            .map(|&v| func.dfg.value_type(v))
            .collect();
        // One edge: `P` passes on that edge's arguments; several: its own parameters.
        let mut onward: Option<Vec<Value>> = None;
        if edges > 1 {
            onward = Some(
                types
                    .iter()
                    .map(|&ty| func.dfg.append_block_param(p, ty))
                    .collect(),
            );
        }
        for &inst in &outside {
            own_table(func, inst, &mut readers);
            retarget(func, inst, header, p, edges > 1, &mut onward, &mut args);
        }
        let passed = onward.unwrap_or_default();
        let destination = BlockCall::new(header, &passed, &mut func.dfg.pool);
        let jump = func.make_inst(
            InstructionData::Jump {
                opcode: Opcode::Jump,
                destination,
            },
            Type::INVALID,
        );
        // Post-invariant: `P` is queued right after the block before the header, holding
        // only its jump; every edge from outside the loop into the header now enters `P`.
        func.layout.insert_block_after(p, before);
        func.layout.append_inst(jump, p);
        made += 1;
    }
    made
}

/// How many destinations of branch `inst` name `target`.
fn count_edges_to(func: &Function, inst: Inst, target: Block) -> usize {
    (0..func.num_branch_destinations(inst))
        .filter(|&k| func.branch_destination(inst, k).block == target)
        .count()
}

/// Give `br_table` `inst` a jump table of its own if other `br_table`s read its table.
fn own_table(func: &mut Function, inst: Inst, readers: &mut SecondaryMap<JumpTable, u32>) {
    let InstructionData::BranchTable { table, .. } = *func.dfg.inst(inst) else {
        return;
    };
    if readers[table] <= 1 {
        return;
    }
    let mut copy = func.jump_tables[table].clone();
    for call in copy.all_branches_mut() {
        let args = func.dfg.block_call_args(call).to_vec();
        *call = BlockCall::new(call.block, &args, &mut func.dfg.pool);
    }
    let new = func.jump_tables.push(copy);
    readers[table] -= 1;
    readers[new] = 1;
    if let InstructionData::BranchTable { table, .. } = func.dfg.inst_mut(inst) {
        *table = new;
    }
}

/// Point every destination of `inst` naming `header` at `p`: with `keep_args`, passing the
/// same arguments; otherwise none, the one edge's arguments going to `onward`.
fn retarget(
    func: &mut Function,
    inst: Inst,
    header: Block,
    p: Block,
    keep_args: bool,
    onward: &mut Option<Vec<Value>>,
    args: &mut Vec<Value>,
) {
    let mut redirect = |func: &mut Function, call: BlockCall| -> BlockCall {
        if keep_args {
            return BlockCall { block: p, ..call };
        }
        args.clear();
        args.extend_from_slice(func.dfg.block_call_args(&call));
        *onward = Some(args.clone());
        BlockCall::new(p, &[], &mut func.dfg.pool)
    };
    let mut data = *func.dfg.inst(inst);
    if let InstructionData::BranchTable { table, .. } = data {
        let n = func.jump_tables[table].entries.len();
        for k in 0..=n {
            let call = match k {
                0 => func.jump_tables[table].default,
                _ => func.jump_tables[table].entries[k - 1],
            };
            if call.block == header {
                let new = redirect(func, call);
                let jt = &mut func.jump_tables[table];
                *(if k == 0 {
                    &mut jt.default
                } else {
                    &mut jt.entries[k - 1]
                }) = new;
            }
        }
        return;
    }
    for k in 0..data.branch_destinations().len() {
        let call = data.branch_destinations()[k];
        if call.block == header {
            data.branch_destinations_mut()[k] = redirect(func, call);
        }
    }
    *func.dfg.inst_mut(inst) = data;
}
