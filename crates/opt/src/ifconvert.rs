//! If-conversion: a two-way branch whose sides are short runs of cheap pure instructions
//! that meet again becomes straight-line code, the values the sides pass chosen by `select`.
//!
//! A branch whose direction the hardware cannot predict costs a pipeline flush on every
//! misprediction; computing both sides' few instructions and selecting (a `cmov` or `csel`)
//! costs a cycle or two and nothing to mispredict. The shape and the budget keep the
//! transformation to cases where the extra work is small either way.
//!
//! Shape. Block `H` ends in `brif c, S1, S2` with `c` an integer of at most 64 bits. Each
//! side is either a direct edge to a join block `J`, with arguments, or an *arm*: a block
//! other than `H` and `J`, not cold, without parameters, whose only predecessor is `H`,
//! holding at most [`ARM_BUDGET`] instructions besides constants, each cheap and
//! speculatable (`speculatable`: pure, cannot trap, no memory, one or two machine
//! instructions on both ISAs, scalars of at most 64 bits), and ending in `jump J(args)`. Both sides reach
//! the same `J`, the two arms (if both are arms) are different blocks, and at most
//! [`SELECT_BUDGET`] argument positions differ between the sides, each of a type `select`
//! lowers to (integers of at most 64 bits, `f32`, `f64`).
//!
//! Rewrite. The arms' instructions move to the end of `H` (the first side's arm first, each
//! in order); the `brif` becomes `jump J(v…)`, where `v` is the sides' common argument or a
//! new `select c, a1, a2` placed before the jump; the arms are removed.
//!
//! Contract. Requires a compact, verified function and its control-flow graph. Maintains
//! SSA dominance: an arm's only predecessor is `H`, so its operands are defined in `H`, in
//! blocks dominating `H`, or earlier in the arm, all of which now precede the moved
//! instruction; an arm dominates no other block (its only successor `J` is also reached by
//! the other side), so its results were used only in the arm and its jump, now in `H`
//! before the `jump`. Maintains behavior: a moved instruction has no effect, cannot trap and
//! reads no memory, so running both sides is unobservable, and each `select` picks what the
//! side `c` takes passed. Breaks the control-flow graph and dominator tree (the arms and
//! their edges are gone; `H` now jumps to `J`) and leaves the moves and removals queued:
//! the arms are left empty, so a graph computed from the placed code is the converted one
//! (the arms unreachable); the next compaction applies the edits. Cost: O(blocks + instructions of the arms
//! examined); a block is examined as an arm only by its single predecessor.

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::compact::CompactMemory;
use kestrel_ir::entity::EntityRef;
use kestrel_ir::instructions::BlockCall;
use kestrel_ir::layout::InsertPoint;
use kestrel_ir::{Block, Function, Inst, InstructionData, Opcode, Type, Value};

use crate::gvn::is_constant;

/// Non-constant instructions an arm may hold.
pub const ARM_BUDGET: usize = 4;
/// Arguments of the join that may differ between the sides (one `select` each).
pub const SELECT_BUDGET: usize = 4;

/// Whether `inst` may run on the path that did not ask for it, at the cost of one or two
/// cheap machine instructions: an opcode of the list below (pure, non-trapping, no memory
/// access; no division, square root or conversion sequence), on scalars of at most 64 bits.
fn speculatable(func: &Function, inst: Inst) -> bool {
    use Opcode::*;
    let data = func.dfg.inst(inst);
    let cheap = matches!(
        data.opcode(),
        Iconst
            | F32const
            | F64const
            | Select
            | Icmp
            | Iadd
            | Isub
            | Ineg
            | Iabs
            | Imul
            | Smin
            | Umin
            | Smax
            | Umax
            | Band
            | Bor
            | Bxor
            | Bnot
            | BandNot
            | BorNot
            | BxorNot
            | Rotl
            | Rotr
            | Ishl
            | Ushr
            | Sshr
            | Bmask
            | Uextend
            | Sextend
            | Ireduce
            | Fcmp
            | Fadd
            | Fsub
            | Fmul
            | Fneg
            | Fabs
            | Bitcast
    );
    cheap
        && func
            .dfg
            .inst_results(inst)
            .iter()
            .all(|&r| selectable(func.dfg.value_type(r)))
        && data
            .fixed_args()
            .iter()
            .all(|&a| selectable(func.dfg.value_type(a)))
}

/// A scalar type `select` lowers to one conditional move for.
fn selectable(ty: Type) -> bool {
    (ty.is_int() && ty.bits() <= 64) || ty == Type::F32 || ty == Type::F64
}

/// One side of the branch: the arm block it runs (if any) and the join it reaches with its
/// arguments.
#[derive(Clone, Copy)]
struct Side {
    arm: Option<Block>,
    join: BlockCall,
}

/// Side `call` of `h`'s branch, if it is a direct edge or an arm (see the module docs).
fn side(func: &Function, cfg: &ControlFlowGraph, h: Block, call: BlockCall) -> Option<Side> {
    let b = call.block;
    let is_arm = b != h
        && !func.dfg.block_data(b).cold
        && func.dfg.block_params(b).is_empty()
        && cfg.predecessors(b).len() == 1;
    if !is_arm {
        return Some(Side {
            arm: None,
            join: call,
        });
    }
    let end = func.layout.last_inst(b)?;
    let InstructionData::Jump { destination, .. } = *func.dfg.inst(end) else {
        return None;
    };
    let mut work = 0;
    for inst in func.layout.block_insts(b) {
        if inst == end {
            break;
        }
        if !speculatable(func, inst) {
            return None;
        }
        work += usize::from(!is_constant(func.dfg.inst(inst)));
        if work > ARM_BUDGET {
            return None;
        }
    }
    (destination.block != b && destination.block != h).then_some(Side {
        arm: Some(b),
        join: destination,
    })
}

/// The sides of `h`'s `brif`, when the branch has the shape the module docs describe.
fn diamond(func: &Function, cfg: &ControlFlowGraph, h: Block) -> Option<(Inst, Value, [Side; 2])> {
    let branch = func.layout.last_inst(h)?;
    let InstructionData::Brif { arg, blocks, .. } = *func.dfg.inst(branch) else {
        return None;
    };
    let cond = func.dfg.value_type(arg);
    if !cond.is_int() || cond.bits() > 64 {
        return None;
    }
    let first = side(func, cfg, h, blocks[0])?;
    let second = side(func, cfg, h, blocks[1])?;
    if first.join.block != second.join.block {
        return None;
    }
    if first.arm.is_some() && first.arm == second.arm {
        return None;
    }
    // Defensive: an arm has one predecessor, `H`, so the other side cannot reach it as the
    // join; a join that is an arm would be removed with it.
    if [first.arm, second.arm].contains(&Some(first.join.block)) {
        return None;
    }
    let (a1, a2) = (
        func.dfg.block_call_args(&first.join),
        func.dfg.block_call_args(&second.join),
    );
    let differing = a1.iter().zip(a2).filter(|(x, y)| x != y);
    let mut count = 0;
    for (&x, _) in differing {
        if !selectable(func.dfg.value_type(x)) {
            return None;
        }
        count += 1;
    }
    (count <= SELECT_BUDGET).then_some((branch, arg, [first, second]))
}

/// If-convert every branch of `func` (compact, verified) that has the shape the module docs
/// describe; returns how many. Leaves `func` compact.
pub fn if_convert(func: &mut Function) -> usize {
    let mut cfg = ControlFlowGraph::default();
    cfg.compute_into(func);
    let converted = if_convert_in(func, &cfg);
    if !func.layout.is_compact() {
        func.compact_in(&mut CompactMemory::default());
    }
    converted
}

/// [`if_convert`] without compacting. `cfg` must describe `func`'s current edges; it is
/// stale afterwards, and the layout holds queued moves and removals.
pub(crate) fn if_convert_in(func: &mut Function, cfg: &ControlFlowGraph) -> usize {
    let mut converted = 0;
    let mut insts: Vec<Inst> = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    // The join's arguments from each side, position by position.
    let mut pairs: Vec<(Value, Value)> = Vec::new();
    // Blocks taking part in a conversion so far (as `H` or as an arm): a converted `H` now
    // ends in a jump and its queued instructions are invisible to `block_insts`, so it must
    // not become another branch's arm. An arm's only predecessor is its `H`, so no other
    // branch sees it.
    let mut touched: Vec<bool> = Vec::new();
    for k in 0..func.layout.blocks().len() {
        let h = func.layout.blocks()[k];
        let Some((branch, cond, sides)) = diamond(func, cfg, h) else {
            continue;
        };
        if touched.is_empty() {
            touched.resize(func.dfg.num_blocks(), false);
        }
        if sides
            .iter()
            .any(|s| s.arm.is_some_and(|a| touched[a.index()]))
        {
            continue;
        }
        touched[h.index()] = true;
        for arm in sides.iter().filter_map(|s| s.arm) {
            insts.clear();
            insts.extend(func.layout.block_insts(arm));
            let (jump, body) = insts.split_last().expect("an arm ends in its jump");
            // Post-invariant: queued before `H`'s terminator in order, after the first
            // side's instructions; their operands precede them (module docs).
            for &inst in body {
                func.layout.remove_inst(inst);
                func.layout.insert_inst(inst, InsertPoint::Before(branch));
            }
            func.layout.remove_inst(*jump);
            func.layout.remove_block(arm);
            touched[arm.index()] = true;
        }
        pairs.clear();
        pairs.extend(
            func.dfg
                .block_call_args(&sides[0].join)
                .iter()
                .copied()
                .zip(func.dfg.block_call_args(&sides[1].join).iter().copied()),
        );
        args.clear();
        for &(x, y) in &pairs {
            if x == y {
                args.push(x);
                continue;
            }
            let ty = func.dfg.value_type(x);
            let select = func.make_inst(
                InstructionData::Ternary {
                    opcode: Opcode::Select,
                    args: [cond, x, y],
                },
                ty,
            );
            func.layout.insert_inst(select, InsertPoint::Before(branch));
            args.push(func.dfg.first_result(select).expect("select has a result"));
        }
        let destination = BlockCall::new(sides[0].join.block, &args, &mut func.dfg.pool);
        // Post-invariant: `H` passes `J` what the side `cond` selects would have passed.
        *func.dfg.inst_mut(branch) = InstructionData::Jump {
            opcode: Opcode::Jump,
            destination,
        };
        converted += 1;
    }
    converted
}
