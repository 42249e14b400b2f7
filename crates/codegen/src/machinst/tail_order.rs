//! The order lowering reads a block in: program order, except that a conditional branch's
//! condition is computed ahead of the other pure instructions at the end of the block.
//!
//! A block's *tail* is the run of pure instructions (no effect, trap or memory access)
//! right before its terminator, at most 16 of them. When the terminator tests a value (`brif`, `br_table`)
//! computed in the tail, lowering takes the tail in a new order: first the instructions the
//! condition needs (its producer and, transitively, theirs within the tail), then the rest,
//! each group in program order. The branch's inputs are then ready as early as the block
//! allows, so the processor resolves the branch (and recovers from a misprediction)
//! sooner; the values the branch merely passes on come after, as a value-driven code
//! generator (Cranelift's elaboration of its e-graph) also orders them.
//!
//! Contract. Reads a verified function; writes the block's instructions into `out` when the
//! order differs from the layout's (the IR is not changed). The order respects every dependence: an instruction of the condition's
//! group reads only values from before the tail or from the group, placed in program order;
//! an instruction of the rest may read the group, now before it; only pure instructions
//! move, so effects, traps and memory accesses keep their order. Cost: O(1) per block
//! (the tail and the values its group reads are bounded), plus O(block) when it reorders; `needed` is indexed by instruction number, left all `false`.

use kestrel_ir::opcode::OpFlags;
use kestrel_ir::{Block, Function, Inst, InstructionData, Opcode, Value, ValueDef};

/// Whether `inst` may move within its block: no effect, no trap, no memory access.
#[inline]
fn pure(func: &Function, inst: Inst) -> bool {
    let fixed = OpFlags::TERMINATOR
        .union(OpFlags::CAN_TRAP)
        .union(OpFlags::LOADS)
        .union(OpFlags::STORES)
        .union(OpFlags::SIDE_EFFECTS);
    !func.dfg.inst(inst).opcode().flags().intersects(fixed)
}

/// The most instructions before the terminator taken as the tail: the condition's group
/// sits at the block's end, and the bound keeps the work per block constant (the group is
/// a bit mask over the tail).
const TAIL_LIMIT: usize = 16;
/// The most values a condition's group may read for the tail to be reordered.
const GROUP_OPERANDS: usize = 16;

/// Memory kept across blocks and functions.
#[derive(Default)]
pub(crate) struct TailOrder {
    /// The tail, in program order.
    tail: Vec<Inst>,
    /// The values the condition's group reads (at most [`GROUP_OPERANDS`]).
    read: Vec<Value>,
}

impl TailOrder {
    /// When lowering should read `b` in another order than the layout's (module docs): fill
    /// `out` with that order and return true. Otherwise return false, `out` untouched.
    pub(crate) fn block_order(&mut self, func: &Function, b: Block, out: &mut Vec<Inst>) -> bool {
        let Some(terminator) = func.layout.last_inst(b) else {
            return false;
        };
        let condition = match *func.dfg.inst(terminator) {
            InstructionData::Brif { arg, .. } | InstructionData::BranchTable { arg, .. } => {
                func.dfg.resolve(arg)
            }
            _ => return false,
        };
        let ValueDef::Result(root, _) = func.dfg.value_def(condition) else {
            return false;
        };
        if func.layout.inst_block(root) != Some(b) {
            return false;
        }
        self.tail.clear();
        let before_terminator = func.layout.block_insts(b).rev().skip(1);
        self.tail.extend(
            before_terminator
                .take(TAIL_LIMIT)
                .take_while(|&i| pure(func, i)),
        );
        self.tail.reverse();
        let position = |tail: &[Inst], i: Inst| tail.iter().position(|&t| t == i);
        let Some(r) = position(&self.tail, root) else {
            return false;
        };
        // The condition's group as a mask over tail positions, marked last to first (an
        // operand precedes its user).
        let mut group: u32 = 1 << r;
        for k in (0..=r).rev() {
            if group & (1 << k) == 0 {
                continue;
            }
            for v in func.dfg.inst_args(self.tail[k]) {
                if let ValueDef::Result(p, _) = func.dfg.value_def(func.dfg.resolve(v)) {
                    if let Some(q) = position(&self.tail[..k], p) {
                        group |= 1 << q;
                    }
                }
            }
        }
        // Already first: the group's positions are 0..n.
        if group & (group + 1) == 0 || !self.shares_no_operand(func, group) {
            return false;
        }
        // A stable partition: the group first, then the rest, each in program order.
        let before = func.layout.block_insts(b).count() - self.tail.len() - 1;
        let tail = &self.tail;
        out.clear();
        out.extend(func.layout.block_insts(b).take(before));
        out.extend(
            (0..tail.len())
                .filter(|k| group & (1 << k) != 0)
                .map(|k| tail[k]),
        );
        out.extend(
            (0..tail.len())
                .filter(|k| group & (1 << k) == 0)
                .map(|k| tail[k]),
        );
        out.push(terminator);
        true
    }

    /// Whether the group (a mask over the tail) and the rest of the tail read no common
    /// value (constants aside: they are rematerialized where used). Otherwise moving the
    /// group ahead would keep such a value live past the group's last read of it, where the
    /// program order let it die there (a loop counter decremented for the test and summed
    /// too: the decrement could no longer reuse the counter's register). A group reading
    /// more than [`GROUP_OPERANDS`] values is left in place.
    fn shares_no_operand(&mut self, func: &Function, group: u32) -> bool {
        let constant = |v: Value| {
            matches!(func.dfg.value_def(v), ValueDef::Result(p, _)
                if matches!(func.dfg.inst(p).opcode(), Opcode::Iconst | Opcode::F32const | Opcode::F64const))
        };
        let in_group = |k: usize| group & (1 << k) != 0;
        self.read.clear();
        for k in (0..self.tail.len()).filter(|&k| in_group(k)) {
            for v in func.dfg.inst_args(self.tail[k]) {
                let v = func.dfg.resolve(v);
                if !constant(v) && !self.read.contains(&v) {
                    self.read.push(v);
                }
            }
        }
        if self.read.len() > GROUP_OPERANDS {
            return false;
        }
        (0..self.tail.len())
            .filter(|&k| !in_group(k))
            .flat_map(|k| func.dfg.inst_args(self.tail[k]))
            .all(|v| !self.read.contains(&func.dfg.resolve(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of block `k` of `text`'s only function, as positions in program order.
    fn order(text: &str, k: usize) -> Vec<usize> {
        let funcs = kestrel_ir::parse_functions(text, "tail_order.rs").expect("the case parses");
        let f = &funcs[0];
        let b = f.layout.blocks()[k];
        let program: Vec<Inst> = f.layout.block_insts(b).collect();
        let mut out = Vec::new();
        if !TailOrder::default().block_order(f, b, &mut out) {
            out.clone_from(&program);
        }
        out.iter()
            .map(|i| {
                program
                    .iter()
                    .position(|p| p == i)
                    .expect("an instruction of b")
            })
            .collect()
    }

    #[test]
    fn the_condition_and_what_it_needs_come_before_the_passed_values() {
        let text = "
function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    jump block1(v2, v2)
block1(v3: i64, v4: i64):
    v5 = load.i64 v0
    v6 = iadd v4, v5
    v7 = iconst.i64 1
    v8 = iadd v3, v7
    v9 = icmp ult v8, v1
    brif v9, block1(v8, v6), block2(v6)
block2(v10: i64):
    return v10
}";
        // load, iconst, iadd v3, icmp, iadd v4 (passed on only), brif.
        assert_eq!(order(text, 1), [0, 2, 3, 4, 1, 5]);
        // No condition: program order.
        assert_eq!(order(text, 0), [0, 1]);
    }

    #[test]
    fn the_tail_stops_at_the_last_instruction_with_an_effect() {
        // `v4` comes before the store, outside the tail: it stays where it is.
        let text = "
function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v4 = iadd v0, v1
    store v1, v0
    v5 = ineg v0
    v6 = icmp ult v4, v1
    brif v6, block1(v5), block1(v0)
block1(v7: i64):
    return v7
}";
        assert_eq!(order(text, 0), [0, 1, 3, 2, 4]);
    }

    #[test]
    fn a_value_read_by_the_condition_and_by_the_rest_leaves_the_order_alone() {
        // The counter `v2` is summed and decremented for the test: moving the decrement
        // first would keep `v2` live past it.
        let text = "
function %f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v0, v1)
block1(v2: i32, v3: i32):
    v4 = iadd v3, v2
    v7 = iconst.i32 -1
    v5 = iadd v2, v7
    v8 = iconst.i32 0
    v6 = icmp ne v5, v8
    brif v6, block1(v5, v4), block2
block2:
    return v4
}";
        assert_eq!(order(text, 1), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_condition_from_before_the_tail_leaves_the_order_alone() {
        let text = "
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    v3 = load.i64 v0
    brif v3, block1(v2), block1(v0)
block1(v4: i64):
    return v4
}";
        assert_eq!(order(text, 0), [0, 1, 2, 3]);
    }
}
