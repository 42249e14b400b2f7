//! Compaction: applying queued edits and renumbering, optionally fused with a pass.
//!
//! Contract. Requires: a function whose layout may hold queued insertions, tombstones and
//! removed or queued blocks, and whose operands may name aliases. Guarantees afterwards:
//! - the layout is compact (see `layout.rs`), and `Inst(n)` is the `n`-th instruction in
//!   program order; every `ValueDef::Result`, source location and source position follows its
//!   instruction to the new number;
//! - every operand, branch argument and jump-table argument names a defined value, never an
//!   alias (aliases stay in the value table but nothing reads them);
//! - results of removed instructions become `ValueDef::Unused`;
//! - the list pool holds only live lists (garbage from moved or edited lists is dropped).
//!
//! Value and block numbers do not change.
//!
//! Cost: O(instructions + blocks + values + queued edits): removed blocks are looked up in a
//! table by block number, queued instructions and blocks are grouped by their anchor.
//!
//! Fused use (Julia's `IncrementalCompact`): [`Function::compact_with`] calls a visitor on each
//! instruction as it is moved into place, with its operands already resolved. The visitor sees
//! the already-compacted prefix of the function, may replace or delete the current
//! instruction, alias its results to other values (later instructions see the replacement,
//! because they are resolved when they are moved), and insert new instructions before it.
//! A pass that walks the function anyway thus pays for compaction with the memory traffic it
//! already does.

use crate::dfg::{DataFlowGraph, ValueDef};
use crate::entity::{Block, Inst, PrimaryMap, SecondaryMap, Value};
use crate::function::{Function, TextPos};
use crate::instructions::InstructionData;
use crate::layout::InsertPoint;
use crate::pool::{ValueList, ValueListPool};
use crate::types::Type;

/// The visitor's view of the instruction being moved into place.
pub struct CompactCursor<'a> {
    /// The function; `dfg.inst(i)` is valid for every already-compacted `i` (those numbered
    /// below the current one). Do not touch the layout from the visitor.
    pub func: &'a mut Function,
    /// The current instruction's data, operands resolved. Changes are kept.
    pub data: InstructionData,
    /// The current instruction's results.
    pub results: &'a [Value],
    /// The block the current instruction is placed in.
    pub block: Block,
    remove: bool,
    inserted: Vec<(InstructionData, Vec<Type>, Vec<Value>)>,
}

impl CompactCursor<'_> {
    /// The already-placed instruction that defines `v` (after aliases), with `v`'s result
    /// number; `None` for a block parameter, and for a value whose instruction comes later in
    /// the layout (a layout that does not follow dominance) or is being inserted: their
    /// `ValueDef` still holds a number of the old numbering. O(1).
    pub fn placed_def(&self, v: Value) -> Option<(Inst, u16)> {
        let dfg = &self.func.dfg;
        let v = dfg.resolve(v);
        let ValueDef::Result(inst, n) = dfg.value_def(v) else {
            return None;
        };
        // Placed exactly when the instruction now at that number lists `v` as that result.
        let placed = dfg.insts.is_valid(inst)
            && dfg.pool.get(dfg.results[inst]).get(usize::from(n)) == Some(&v);
        placed.then_some((inst, n))
    }

    /// Delete the current instruction. Its results become unused; alias them first if they
    /// still have uses.
    pub fn remove(&mut self) {
        self.remove = true;
    }

    /// Insert a new instruction before the current one; returns its result values.
    /// Operands must name values that are already defined.
    pub fn insert_before(&mut self, data: InstructionData, result_types: &[Type]) -> Vec<Value> {
        let mut values = Vec::with_capacity(result_types.len());
        for &ty in result_types {
            // Placeholder definition; fixed up when the instruction is placed.
            let v = self.func.dfg.values.push(crate::dfg::ValueData {
                ty,
                def: ValueDef::Unused,
            });
            values.push(v);
        }
        self.inserted
            .push((data, result_types.to_vec(), values.clone()));
        values
    }
}

/// One step of the final order: a block start (`old: None`) or an instruction to move.
struct Slot {
    old: Option<Inst>,
    block: Block,
}

/// Memory kept from one compaction to the next (of the same function or another): the
/// tables the last compaction replaced, emptied, for the next to fill, and the walk's
/// lists. Only capacity carries over.
#[derive(Default)]
pub struct CompactMemory {
    insts: PrimaryMap<Inst, InstructionData>,
    results: SecondaryMap<Inst, ValueList>,
    srclocs: SecondaryMap<Inst, Option<u32>>,
    pool: ValueListPool,
    order: Vec<Slot>,
    stack: Vec<Block>,
    placed: Vec<Inst>,
    block_lens: Vec<(Block, u32)>,
    values: Vec<Value>,
}

impl Function {
    /// Apply queued edits and renumber (see the module docs).
    pub fn compact(&mut self) {
        self.compact_with(|_| {});
    }

    /// [`Function::compact`] in `memory`.
    pub fn compact_in(&mut self, memory: &mut CompactMemory) {
        self.compact_with_in(memory, |_| {});
    }

    /// Compact, calling `visit` on each instruction as it is placed, in program order.
    pub fn compact_with(&mut self, visit: impl FnMut(&mut CompactCursor)) {
        self.compact_with_in(&mut CompactMemory::default(), visit);
    }

    /// [`Function::compact_with`] in `memory`: the new tables are the ones the last
    /// compaction in `memory` replaced, and the replaced ones go back to it.
    pub fn compact_with_in(
        &mut self,
        memory: &mut CompactMemory,
        mut visit: impl FnMut(&mut CompactCursor),
    ) {
        let mut order = std::mem::take(&mut memory.order);
        self.final_order(&mut order, &mut memory.stack, &mut memory.placed);
        // The spare tables (empty) become the function's; the old ones are read and then
        // emptied into the spares.
        let mut old_insts =
            std::mem::replace(&mut self.dfg.insts, std::mem::take(&mut memory.insts));
        let mut old_results =
            std::mem::replace(&mut self.dfg.results, std::mem::take(&mut memory.results));
        let mut old_srclocs =
            std::mem::replace(&mut self.srclocs, std::mem::take(&mut memory.srclocs));
        let old_positions = self
            .source_map
            .as_mut()
            .map(|sm| std::mem::take(&mut sm.insts));
        // About as many instructions come out as went in: no growth while placing them.
        self.dfg.insts.clear();
        self.dfg.results.clear();
        self.srclocs.clear();
        self.dfg.insts.reserve(old_insts.len());
        self.dfg.results.reserve(old_insts.len());
        self.srclocs.reserve(old_insts.len());
        // The placed instructions' result lists go to the old pool's end until
        // `compact_pool` copies the live lists out: about one result each.
        self.dfg.pool.reserve(old_insts.len());

        let block_lens = &mut memory.block_lens;
        block_lens.clear();
        let mut current: Option<(Block, u32)> = None;
        // The current instruction's results, in one buffer for the whole walk.
        let results = &mut memory.values;
        for &Slot { old, block } in &order {
            if current.map(|(b, _)| b) != Some(block) {
                if let Some(done) = current.take() {
                    block_lens.push(done);
                }
                current = Some((block, 0));
            }
            let Some(old) = old else { continue };
            let mut data = old_insts[old];
            resolve_operands(
                &mut self.dfg,
                &mut data,
                &mut self.jump_tables,
                &self.exception_tables,
            );
            results.clear();
            results.extend_from_slice(self.dfg.pool.get(old_results[old]));
            let mut cursor = CompactCursor {
                func: self,
                data,
                results,
                block,
                remove: false,
                inserted: Vec::new(),
            };
            visit(&mut cursor);
            let CompactCursor {
                data,
                remove,
                inserted,
                ..
            } = cursor;
            let srcloc = old_srclocs[old];
            let pos = old_positions.as_ref().map(|p| p[old]).unwrap_or_default();
            let len = &mut current.as_mut().expect("a block is open").1;
            for (idata, _types, values) in inserted {
                self.place(idata, &values, srcloc, pos);
                *len += 1;
            }
            if remove {
                for &r in results.iter() {
                    if let ValueDef::Result(..) = self.dfg.values[r].def {
                        self.dfg.values[r].def = ValueDef::Unused;
                    }
                }
            } else {
                self.place(data, results, srcloc, pos);
                *len += 1;
            }
        }
        if let Some(done) = current.take() {
            block_lens.push(done);
        }
        let num = self.dfg.insts.len();
        self.layout.rebuild(block_lens, num);
        old_insts.clear();
        old_results.clear();
        old_srclocs.clear();
        order.clear();
        memory.insts = old_insts;
        memory.results = old_results;
        memory.srclocs = old_srclocs;
        memory.order = order;
        self.compact_pool(&mut memory.pool);
    }

    /// Put `data` at the next instruction number with `results` as its results.
    fn place(
        &mut self,
        data: InstructionData,
        results: &[Value],
        srcloc: Option<u32>,
        pos: TextPos,
    ) {
        let new = self.dfg.insts.push(data);
        for (n, &r) in results.iter().enumerate() {
            // A result aliased away by an earlier edit keeps its alias.
            if !matches!(self.dfg.values[r].def, ValueDef::Alias(_)) {
                self.dfg.values[r].def = ValueDef::Result(new, n as u16);
            }
        }
        self.dfg.results[new] = self.dfg.pool.alloc(results);
        self.srclocs[new] = srcloc;
        if let Some(sm) = self.source_map.as_mut() {
            sm.insts[new] = pos;
        }
    }

    /// The final program order: each block (with queued blocks after their anchors), each
    /// with its surviving and queued instructions. A block with no instructions still gets an
    /// entry (`old: None`) so it keeps its place.
    fn final_order(&mut self, out: &mut Vec<Slot>, stack: &mut Vec<Block>, placed: &mut Vec<Inst>) {
        let layout = &mut self.layout;
        if layout.removed_blocks.is_empty()
            && layout.pending_blocks.is_empty()
            && layout.pending_insts.is_empty()
        {
            // Nothing queued or removed but instructions: the layout's own order, without
            // the tables the general case builds.
            out.clear();
            out.reserve(layout.num_slots() + layout.blocks().len());
            for &b in layout.blocks() {
                out.push(Slot {
                    old: None,
                    block: b,
                });
                let slots = layout.block_slots(b).iter().copied();
                out.extend(
                    slots
                        .filter(|&i| !layout.is_removed_or_unplaced(i))
                        .map(|i| Slot {
                            old: Some(i),
                            block: b,
                        }),
                );
            }
            return;
        }
        // Membership by block number: O(blocks + removed), whatever number were removed.
        let mut removed: SecondaryMap<Block, bool> = SecondaryMap::new();
        for b in std::mem::take(&mut layout.removed_blocks) {
            removed[b] = true;
        }
        let pending_blocks = std::mem::take(&mut layout.pending_blocks);
        let pending_insts = std::mem::take(&mut layout.pending_insts);

        let mut before: SecondaryMap<Inst, Vec<Inst>> = SecondaryMap::new();
        let mut at_end: SecondaryMap<Block, Vec<Inst>> = SecondaryMap::new();
        for (at, inst) in pending_insts {
            let Some(at) = at else {
                continue; // withdrawn
            };
            match at {
                InsertPoint::Before(i) => before[i].push(inst),
                InsertPoint::AtEnd(b) => at_end[b].push(inst),
            }
        }
        let mut blocks_after: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
        for (after, new) in pending_blocks {
            blocks_after[after].push(new);
        }

        out.clear();
        out.reserve(layout.num_slots());
        stack.clear();
        stack.extend(layout.blocks().iter().rev().copied());
        // A block's surviving instructions, in one buffer for the whole walk.
        while let Some(b) = stack.pop() {
            // Blocks queued after `b` come right after it (in queue order).
            for &n in blocks_after[b].iter().rev() {
                stack.push(n);
            }
            if removed[b] {
                continue;
            }
            out.push(Slot {
                old: None,
                block: b,
            });
            placed.clear();
            if layout.is_block_inserted(b) {
                placed.extend(
                    layout
                        .block_slots(b)
                        .iter()
                        .copied()
                        .filter(|&i| !layout.is_removed_or_unplaced(i)),
                );
            }
            for &i in placed.iter().chain(&at_end[b]) {
                emit_with_before(i, b, &before, out);
            }
        }
    }

    /// Rebuild the list pool so it holds only live lists, building it in `spare` (empty)
    /// and leaving the old pool there, emptied.
    fn compact_pool(&mut self, spare: &mut ValueListPool) {
        let mut old = std::mem::take(&mut self.dfg.pool);
        // The live lists fit in what the old pool used (garbage included).
        let mut pool = std::mem::take(spare);
        pool.clear();
        pool.reserve(old.capacity_used());
        let dfg = &mut self.dfg;
        for inst in dfg.insts.keys() {
            dfg.results[inst] = old.compact_into(dfg.results[inst], &mut pool);
            let data = &mut dfg.insts[inst];
            if let Some(list) = data.value_list_mut() {
                *list = old.compact_into(*list, &mut pool);
            }
            for dest in data.branch_destinations_mut() {
                dest.args = old.compact_into(dest.args, &mut pool);
            }
        }
        for b in dfg.blocks.keys() {
            dfg.blocks[b].params = old.compact_into(dfg.blocks[b].params, &mut pool);
        }
        for jt in self.jump_tables.values_mut() {
            for dest in jt.all_branches_mut() {
                dest.args = old.compact_into(dest.args, &mut pool);
            }
        }
        for et in self.exception_tables.values_mut() {
            for dest in et.all_branches_mut() {
                dest.args = old.compact_into(dest.args, &mut pool);
            }
        }
        dfg.pool = pool;
        old.clear();
        *spare = old;
    }
}

fn emit_with_before(
    inst: Inst,
    block: Block,
    before: &SecondaryMap<Inst, Vec<Inst>>,
    out: &mut Vec<Slot>,
) {
    for &b in &before[inst] {
        emit_with_before(b, block, before, out);
    }
    out.push(Slot {
        old: Some(inst),
        block,
    });
}

/// Rewrite every operand of `data` (and, for `br_table` and `try_call`, of its jump or
/// exception table) to resolved values.
fn resolve_operands(
    dfg: &mut DataFlowGraph,
    data: &mut InstructionData,
    jump_tables: &mut PrimaryMap<crate::entity::JumpTable, crate::function::JumpTableData>,
    exception_tables: &PrimaryMap<
        crate::entity::ExceptionTable,
        crate::function::ExceptionTableData,
    >,
) {
    for i in 0..data.fixed_args().len() {
        let v = data.fixed_args()[i];
        data.fixed_args_mut()[i] = dfg.resolve(v);
    }
    if let Some(list) = data.value_list() {
        resolve_list(dfg, list);
    }
    for dest in data.branch_destinations() {
        resolve_list(dfg, dest.args);
    }
    if let InstructionData::BranchTable { table, .. } = *data {
        for dest in jump_tables[table].all_branches() {
            resolve_list(dfg, dest.args);
        }
    }
    if let Some(table) = data.exception_table() {
        for dest in exception_tables[table].all_branches() {
            resolve_list(dfg, dest.args);
        }
    }
}

fn resolve_list(dfg: &mut DataFlowGraph, list: crate::pool::ValueList) {
    for i in 0..list.len() {
        let v = dfg.pool.get(list)[i];
        let r = dfg.resolve(v);
        dfg.pool.get_mut(list)[i] = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::{AbiParam, CallConv, FunctionName, Signature};
    use crate::layout::InsertPoint;
    use crate::opcode::Opcode;

    /// `block0(v0, v1): v2 = iadd v0, v1; v3 = imul v2, v2; return v3`
    fn sample() -> (Function, [Inst; 3], [Value; 4]) {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params = vec![AbiParam::new(Type::I32); 2];
        sig.returns = vec![AbiParam::new(Type::I32)];
        let mut f = Function::with_name_signature(FunctionName::Named("f".into()), sig);
        let b = f.dfg.make_block();
        f.layout.append_block(b);
        let v0 = f.dfg.append_block_param(b, Type::I32);
        let v1 = f.dfg.append_block_param(b, Type::I32);
        let add = f.make_inst(
            InstructionData::Binary {
                opcode: Opcode::Iadd,
                args: [v0, v1],
            },
            Type::I32,
        );
        f.layout.append_inst(add, b);
        let v2 = f.dfg.first_result(add).unwrap();
        let mul = f.make_inst(
            InstructionData::Binary {
                opcode: Opcode::Imul,
                args: [v2, v2],
            },
            Type::I32,
        );
        f.layout.append_inst(mul, b);
        let v3 = f.dfg.first_result(mul).unwrap();
        let args = f.dfg.pool.alloc(&[v3]);
        let ret = f.make_inst(
            InstructionData::MultiAry {
                opcode: Opcode::Return,
                args,
            },
            Type::INVALID,
        );
        f.layout.append_inst(ret, b);
        (f, [add, mul, ret], [v0, v1, v2, v3])
    }

    fn opcodes(f: &Function) -> Vec<Opcode> {
        let b = f.entry_block().unwrap();
        f.layout
            .block_insts(b)
            .map(|i| f.dfg.inst(i).opcode())
            .collect()
    }

    #[test]
    fn a_withdrawn_insertion_is_dropped_and_can_be_queued_again_elsewhere() {
        let (mut f, [add, mul, _], [v0, v1, _, _]) = sample();
        let sub = f.make_inst(
            InstructionData::Binary {
                opcode: Opcode::Isub,
                args: [v0, v1],
            },
            Type::I32,
        );
        f.layout.insert_inst(sub, InsertPoint::Before(mul));
        let queued: Vec<_> = f.layout.queued_insts().collect();
        assert_eq!(queued, [(0, InsertPoint::Before(mul), sub)]);
        // Moved: withdrawn from before the multiply, queued again before the add.
        f.layout.withdraw_queued(0);
        assert_eq!(f.layout.queued_insts().count(), 0);
        f.layout.insert_inst(sub, InsertPoint::Before(add));
        f.compact();
        assert_eq!(
            opcodes(&f),
            [Opcode::Isub, Opcode::Iadd, Opcode::Imul, Opcode::Return]
        );
    }

    #[test]
    fn queued_insertion_is_placed_and_renumbered() {
        let (mut f, [add, mul, _], [v0, _, v2, _]) = sample();
        // Insert `v4 = isub v2, v0` before the multiply and make the multiply use it.
        let sub = f.make_inst(
            InstructionData::Binary {
                opcode: Opcode::Isub,
                args: [v2, v0],
            },
            Type::I32,
        );
        let v4 = f.dfg.first_result(sub).unwrap();
        f.layout.insert_inst(sub, InsertPoint::Before(mul));
        assert_eq!(
            opcodes(&f).len(),
            3,
            "queued edits are invisible until compaction"
        );
        *f.dfg.inst_mut(mul) = InstructionData::Binary {
            opcode: Opcode::Imul,
            args: [v4, v4],
        };
        assert!(!f.layout.is_compact());
        f.compact();
        assert!(f.layout.is_compact());
        assert_eq!(
            opcodes(&f),
            [Opcode::Iadd, Opcode::Isub, Opcode::Imul, Opcode::Return]
        );
        // Instructions are numbered in program order and value definitions follow them.
        let insts: Vec<Inst> = f.layout.block_insts(f.entry_block().unwrap()).collect();
        assert_eq!(insts, (0..4).map(Inst::from_u32).collect::<Vec<_>>());
        assert_eq!(f.dfg.value_def(v4), ValueDef::Result(Inst::from_u32(1), 0));
        assert_eq!(f.dfg.value_def(v2), ValueDef::Result(add, 0));
    }

    /// Compactions sharing one memory give exactly what fresh ones give, whatever the
    /// memory held before (a larger function's tables, then a smaller one's).
    #[test]
    fn shared_memory_changes_nothing() {
        let edit = |f: &mut Function, mul: Inst, v2: Value, v3: Value| {
            assert!(f.dfg.change_to_alias(v3, v2));
            f.layout.remove_inst(mul);
        };
        let mut memory = CompactMemory::default();
        for round in 0..3 {
            let (mut fresh, [_, mul, _], [_, _, v2, v3]) = sample();
            let (mut shared, ..) = sample();
            if round > 0 {
                edit(&mut fresh, mul, v2, v3);
                edit(&mut shared, mul, v2, v3);
            }
            fresh.compact();
            shared.compact_in(&mut memory);
            assert_eq!(shared.to_string(), fresh.to_string(), "round {round}");
            assert_eq!(shared.dfg.num_insts(), fresh.dfg.num_insts());
            assert_eq!(
                shared.dfg.pool.capacity_used(),
                fresh.dfg.pool.capacity_used()
            );
        }
    }

    #[test]
    fn removal_and_alias_resolution() {
        let (mut f, [_, mul, ret], [_, _, v2, v3]) = sample();
        // Replace all uses of v3 by v2, then delete the multiply.
        assert!(f.dfg.change_to_alias(v3, v2));
        f.layout.remove_inst(mul);
        assert_eq!(opcodes(&f), [Opcode::Iadd, Opcode::Return]);
        f.compact();
        assert_eq!(opcodes(&f), [Opcode::Iadd, Opcode::Return]);
        let ret = Inst::from_u32(ret.as_u32() - 1);
        assert_eq!(f.dfg.inst_value_list(ret), &[v2], "operand rewritten");
        assert_eq!(f.dfg.num_insts(), 2);
    }

    #[test]
    fn appends_to_earlier_blocks_are_queued_then_applied() {
        let (mut f, _, [v0, ..]) = sample();
        let b0 = f.entry_block().unwrap();
        let b1 = f.dfg.make_block();
        f.layout.append_block(b1);
        let trap = f.make_inst(
            InstructionData::Trap {
                opcode: Opcode::Trap,
                code: crate::immediates::TrapCode::user(1).unwrap(),
            },
            Type::INVALID,
        );
        f.layout.append_inst(trap, b1);
        // b0 is no longer last: this append is queued.
        let neg = f.make_inst(
            InstructionData::Unary {
                opcode: Opcode::Ineg,
                arg: v0,
            },
            Type::I32,
        );
        f.layout.append_inst(neg, b0);
        assert!(!f.layout.is_compact());
        f.compact();
        assert_eq!(
            opcodes(&f),
            [Opcode::Iadd, Opcode::Imul, Opcode::Return, Opcode::Ineg]
        );
        assert_eq!(f.layout.block_insts(b1).count(), 1);
        assert_eq!(f.layout.first_inst(b1), Some(Inst::from_u32(4)));
    }

    #[test]
    fn fused_walk_rewrites_while_compacting() {
        // A tiny strength-reduction pass run as the compaction visitor:
        // `imul x, x` where x = `iadd a, b` stays, but every iadd gets a `bnot` inserted
        // before it and the multiply's result is aliased away to the add, then deleted.
        let (mut f, _, [_, _, v2, _]) = sample();
        let mut seen = Vec::new();
        f.compact_with(|c| {
            seen.push(c.data.opcode());
            match c.data.opcode() {
                Opcode::Iadd => {
                    let arg = c.data.fixed_args()[0];
                    c.insert_before(
                        InstructionData::Unary {
                            opcode: Opcode::Bnot,
                            arg,
                        },
                        &[Type::I32],
                    );
                }
                Opcode::Imul => {
                    let r = c.results[0];
                    assert!(c.func.dfg.change_to_alias(r, v2));
                    c.remove();
                }
                _ => {}
            }
        });
        assert_eq!(seen, [Opcode::Iadd, Opcode::Imul, Opcode::Return]);
        assert_eq!(opcodes(&f), [Opcode::Bnot, Opcode::Iadd, Opcode::Return]);
        // The return, moved after the alias was made, already reads v2.
        assert_eq!(f.dfg.inst_value_list(Inst::from_u32(2)), &[v2]);
        // The inserted instruction's result is defined at its new number.
        let bnot_result = f.dfg.first_result(Inst::from_u32(0)).unwrap();
        assert_eq!(
            f.dfg.value_def(bnot_result),
            ValueDef::Result(Inst::from_u32(0), 0)
        );
    }

    #[test]
    fn pool_garbage_is_dropped() {
        let (mut f, [_, _, ret], [v0, ..]) = sample();
        // Grow the return's list repeatedly; each growth may leave garbage.
        let mut list = f.dfg.inst(ret).value_list().unwrap();
        for _ in 0..5 {
            list = f.dfg.pool.push(list, v0);
            f.dfg.pool.alloc(&[v0]);
        }
        *f.dfg.inst_mut(ret).value_list_mut().unwrap() = list;
        let before = f.dfg.pool.capacity_used();
        f.compact();
        assert!(f.dfg.pool.capacity_used() < before);
        assert_eq!(f.dfg.inst_value_list(ret).len(), 6);
    }
}
