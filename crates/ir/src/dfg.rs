//! The data-flow graph: instructions, values, and block parameters.
//!
//! Storage follows Julia's SSA IR (seed 004): instructions are records in one dense array,
//! values are indices with a definition and a type, operand lists live in one shared pool, and
//! there are no use-lists. Replacing all uses of a value is done by turning it into an
//! *alias* of another; readers resolve aliases with [`DataFlowGraph::resolve`], and
//! compaction rewrites every operand to its resolved value and then drops the aliases' uses.
//!
//! Value numbers may be sparse: the parser keeps the numbers written in the text, so entries
//! never defined are [`ValueDef::Unused`].

use crate::entity::{Block, Constant, EntityRef, Immediate, Inst, PrimaryMap, SecondaryMap, Value};
use crate::instructions::InstructionData;
use crate::pool::{ValueList, ValueListPool};
use crate::types::Type;

/// The most parameters a block may have, and results an instruction may have: their
/// numbers are 16-bit in [`ValueDef`]. The parser, the builder and the verifier refuse more.
pub const MAX_VALUES_PER_DEF: usize = 1 << 16;

/// Where a value comes from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ValueDef {
    /// Result number `n` of an instruction.
    Result(Inst, u16),
    /// Parameter number `n` of a block.
    Param(Block, u16),
    /// Stands for another value (after a replace-all-uses).
    Alias(Value),
    /// A number that was never defined (sparse numbering) or whose definition was deleted.
    Unused,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

/// Per-block data that is not layout: the parameters.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct BlockData {
    pub params: ValueList,
    /// Marked `cold` in text.
    pub cold: bool,
}

/// Instructions, values, block parameters, and the pool their lists live in.
#[derive(Debug, Default)]
pub struct DataFlowGraph {
    pub(crate) insts: PrimaryMap<Inst, InstructionData>,
    pub(crate) results: SecondaryMap<Inst, ValueList>,
    pub(crate) values: PrimaryMap<Value, ValueData>,
    pub(crate) blocks: PrimaryMap<Block, BlockData>,
    pub pool: ValueListPool,
    /// The constant pool: the data of `vconst` and `f128const`, printed as `constN = 0x…`.
    pub constants: PrimaryMap<Constant, ConstantData>,
    /// `shuffle` lane masks, printed inline: sixteen byte indices, lane 0 in the low byte.
    pub immediates: PrimaryMap<Immediate, u128>,
}

/// A constant: up to 16 bytes, byte 0 (lane 0's first byte) in the low bits of `bits`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct ConstantData {
    pub bits: u128,
    /// The number of bytes (1 to 16); the bits above them are zero.
    pub bytes: u8,
}

impl Clone for DataFlowGraph {
    fn clone(&self) -> Self {
        let mut copy = DataFlowGraph::default();
        copy.clone_from(self);
        copy
    }

    /// Field by field, reusing this graph's memory.
    fn clone_from(&mut self, source: &Self) {
        // Destructured, so that a new field cannot be forgotten here.
        let DataFlowGraph {
            insts,
            results,
            values,
            blocks,
            pool,
            constants,
            immediates,
        } = source;
        self.insts.clone_from(insts);
        self.results.clone_from(results);
        self.values.clone_from(values);
        self.blocks.clone_from(blocks);
        self.pool.clone_from(pool);
        self.constants.clone_from(constants);
        self.immediates.clone_from(immediates);
    }
}

impl DataFlowGraph {
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    // ---- Instructions -------------------------------------------------------------------

    /// Add an instruction record (not yet placed in the layout, no results yet).
    #[inline]
    pub fn make_inst(&mut self, data: InstructionData) -> Inst {
        self.insts.push(data)
    }

    /// Add an instruction record with fresh result values of `types`, in order: what
    /// [`DataFlowGraph::make_inst`] and one [`DataFlowGraph::append_result`] per type give,
    /// with the result list made once.
    #[inline]
    pub fn make_inst_with_results(
        &mut self,
        data: InstructionData,
        types: impl IntoIterator<Item = Type>,
    ) -> Inst {
        let inst = self.insts.push(data);
        let first = self.values.len();
        for (n, ty) in types.into_iter().enumerate() {
            self.values.push(ValueData {
                ty,
                def: ValueDef::Result(inst, n as u16),
            });
        }
        let made = first..self.values.len();
        if !made.is_empty() {
            self.results[inst] = self.pool.alloc_iter(made.map(Value::new));
        }
        inst
    }

    #[inline]
    pub fn num_insts(&self) -> usize {
        self.insts.len()
    }

    #[inline]
    pub fn inst_is_valid(&self, inst: Inst) -> bool {
        self.insts.is_valid(inst)
    }

    #[inline]
    pub fn inst(&self, inst: Inst) -> &InstructionData {
        &self.insts[inst]
    }

    #[inline]
    pub fn inst_mut(&mut self, inst: Inst) -> &mut InstructionData {
        &mut self.insts[inst]
    }

    /// The results of an instruction.
    #[inline]
    pub fn inst_results(&self, inst: Inst) -> &[Value] {
        self.pool.get(self.results[inst])
    }

    /// The first result, if any.
    #[inline]
    pub fn first_result(&self, inst: Inst) -> Option<Value> {
        self.inst_results(inst).first().copied()
    }

    /// Create a new result value of type `ty` for `inst`.
    #[inline]
    pub fn append_result(&mut self, inst: Inst, ty: Type) -> Value {
        let n = self.results[inst].len() as u16;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Result(inst, n),
        });
        self.results[inst] = self.pool.push(self.results[inst], v);
        v
    }

    /// Attach an existing (so far unused) value number as the next result of `inst`. The
    /// parser uses this to keep the numbers written in the text.
    #[inline]
    pub fn attach_result(&mut self, inst: Inst, v: Value, ty: Type) {
        let n = self.results[inst].len() as u16;
        self.values[v] = ValueData {
            ty,
            def: ValueDef::Result(inst, n),
        };
        self.results[inst] = self.pool.push(self.results[inst], v);
    }

    /// Give up on an instruction that will never be placed: its results become `Unused` and
    /// it has none. (Compaction only renumbers placed instructions, so a stale
    /// `ValueDef::Result` would otherwise name whichever instruction takes its number.)
    #[inline]
    pub fn detach_results(&mut self, inst: Inst) {
        let results = std::mem::take(&mut self.results[inst]);
        for i in 0..results.len() {
            let r = self.pool.get(results)[i];
            self.values[r].def = ValueDef::Unused;
        }
    }

    /// The value operands of `inst` other than branch arguments.
    #[inline]
    pub fn inst_args(&self, inst: Inst) -> impl Iterator<Item = Value> + '_ {
        self.insts[inst].arguments(&self.pool)
    }

    /// The variable-length operand list of `inst` as a slice (empty if it has none).
    #[inline]
    pub fn inst_value_list(&self, inst: Inst) -> &[Value] {
        self.insts[inst]
            .value_list()
            .map(|l| self.pool.get(l))
            .unwrap_or(&[])
    }

    // ---- Values -------------------------------------------------------------------------

    #[inline]
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    #[inline]
    pub fn value_is_valid(&self, v: Value) -> bool {
        self.values.is_valid(v)
    }

    #[inline]
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    #[inline]
    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v].def
    }

    /// True when `v` is defined (result or parameter), possibly through aliases.
    #[inline]
    pub fn value_is_attached(&self, v: Value) -> bool {
        !matches!(self.value_def(self.resolve(v)), ValueDef::Unused)
    }

    /// Make sure value number `v` exists, creating unused placeholders up to it.
    #[inline]
    pub fn ensure_value(&mut self, v: Value) {
        while self.values.len() <= v.index() {
            self.values.push(ValueData {
                ty: Type::INVALID,
                def: ValueDef::Unused,
            });
        }
    }

    /// Follow aliases to the value that is actually defined.
    ///
    /// Alias chains cannot be cyclic: [`Self::change_to_alias`] refuses to create a cycle.
    #[inline]
    pub fn resolve(&self, mut v: Value) -> Value {
        while let ValueDef::Alias(to) = self.values[v].def {
            v = to;
        }
        v
    }

    /// Replace every use of `v` by `to` (lazily: uses resolve through the alias, and the next
    /// compaction rewrites them). `v`'s definition is detached: its defining instruction keeps
    /// a result slot that nothing reads. Returns false (and changes nothing) if that would
    /// create an alias cycle or the types differ.
    #[inline]
    pub fn change_to_alias(&mut self, v: Value, to: Value) -> bool {
        let target = self.resolve(to);
        if target == v || self.value_type(target) != self.value_type(v) {
            return false;
        }
        self.values[v].def = ValueDef::Alias(target);
        true
    }

    /// Forget every alias (each becomes `Unused`). After compaction nothing reads them, and
    /// a pass that then deletes an alias's target would leave it dangling. O(values).
    pub fn clear_aliases(&mut self) {
        for data in self.values.values_mut() {
            if let ValueDef::Alias(_) = data.def {
                data.def = ValueDef::Unused;
            }
        }
    }

    /// Define value number `v` as an alias of `to` (text syntax `v3 -> v1`).
    pub fn make_alias_at(&mut self, v: Value, to: Value) -> bool {
        self.ensure_value(v);
        if self.resolve(to) == v {
            return false;
        }
        let ty = self.value_type(self.resolve(to));
        self.values[v] = ValueData {
            ty,
            def: ValueDef::Alias(to),
        };
        true
    }

    // ---- Blocks -------------------------------------------------------------------------

    #[inline]
    pub fn make_block(&mut self) -> Block {
        self.blocks.push(BlockData::default())
    }

    /// Make sure block number `b` exists.
    #[inline]
    pub fn ensure_block(&mut self, b: Block) {
        while self.blocks.len() <= b.index() {
            self.blocks.push(BlockData::default());
        }
    }

    #[inline]
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    #[inline]
    pub fn block_is_valid(&self, b: Block) -> bool {
        self.blocks.is_valid(b)
    }

    #[inline]
    pub fn block_params(&self, b: Block) -> &[Value] {
        self.pool.get(self.blocks[b].params)
    }

    #[inline]
    pub fn block_data(&self, b: Block) -> &BlockData {
        &self.blocks[b]
    }

    #[inline]
    pub fn set_block_cold(&mut self, b: Block, cold: bool) {
        self.blocks[b].cold = cold;
    }

    /// Add a parameter of type `ty` to block `b`.
    #[inline]
    pub fn append_block_param(&mut self, b: Block, ty: Type) -> Value {
        let n = self.blocks[b].params.len() as u16;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Param(b, n),
        });
        self.blocks[b].params = self.pool.push(self.blocks[b].params, v);
        v
    }

    /// Attach existing value number `v` as the next parameter of `b` (parser).
    #[inline]
    pub fn attach_block_param(&mut self, b: Block, v: Value, ty: Type) {
        let n = self.blocks[b].params.len() as u16;
        self.values[v] = ValueData {
            ty,
            def: ValueDef::Param(b, n),
        };
        self.blocks[b].params = self.pool.push(self.blocks[b].params, v);
    }

    /// Remove parameter `index` of block `b`; later parameters shift down by one. The removed
    /// value becomes `Unused` unless it was already turned into an alias.
    #[inline]
    pub fn remove_block_param(&mut self, b: Block, index: usize) {
        let removed = self.block_params(b)[index];
        self.blocks[b].params = self.pool.remove(self.blocks[b].params, index);
        for (i, &p) in self.pool.get(self.blocks[b].params).iter().enumerate() {
            self.values[p].def = ValueDef::Param(b, i as u16);
        }
        if let ValueDef::Param(..) = self.values[removed].def {
            self.values[removed].def = ValueDef::Unused;
        }
    }

    /// Keep the parameters of `b` for which `keep(index, value)` is true, in order, and
    /// renumber them; each removed one becomes `Unused` unless it was already turned into
    /// an alias. O(parameters of `b`), however many go (unlike repeated
    /// [`Self::remove_block_param`]).
    pub fn retain_block_params(&mut self, b: Block, mut keep: impl FnMut(usize, Value) -> bool) {
        let list = self.blocks[b].params;
        let mut kept = 0;
        for k in 0..list.len() {
            let p = self.pool.get(list)[k];
            if keep(k, p) {
                self.pool.get_mut(list)[kept] = p;
                self.values[p].def = ValueDef::Param(b, kept as u16);
                kept += 1;
            } else if let ValueDef::Param(..) = self.values[p].def {
                self.values[p].def = ValueDef::Unused;
            }
        }
        // The kept parameters are the list's first `kept` slots: drop the rest from its end
        // (O(1) each).
        let mut kept_list = list;
        while kept_list.len() > kept {
            kept_list = self.pool.remove(kept_list, kept_list.len() - 1);
        }
        self.blocks[b].params = kept_list;
    }

    /// Arguments passed by a branch destination.
    #[inline]
    pub fn block_call_args(&self, call: &crate::instructions::BlockCall) -> &[Value] {
        self.pool.get(call.args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcode::Opcode;

    #[test]
    fn aliases_resolve_and_refuse_cycles() {
        let mut dfg = DataFlowGraph::new();
        let b = dfg.make_block();
        let x = dfg.append_block_param(b, Type::I32);
        let y = dfg.append_block_param(b, Type::I32);
        let f = dfg.append_block_param(b, Type::F32);
        assert!(dfg.change_to_alias(y, x));
        assert_eq!(dfg.resolve(y), x);
        assert!(!dfg.change_to_alias(x, y), "x -> y -> x would be a cycle");
        assert!(!dfg.change_to_alias(f, x), "types differ");
    }

    #[test]
    fn retained_parameters_keep_their_order_and_are_renumbered() {
        let mut dfg = DataFlowGraph::new();
        let b = dfg.make_block();
        let p: Vec<Value> = (0..5)
            .map(|_| dfg.append_block_param(b, Type::I64))
            .collect();
        assert!(dfg.change_to_alias(p[3], p[0]));
        dfg.retain_block_params(b, |k, _| k % 2 == 0);
        assert_eq!(dfg.block_params(b), [p[0], p[2], p[4]]);
        assert_eq!(dfg.value_def(p[4]), ValueDef::Param(b, 2));
        assert_eq!(dfg.value_def(p[1]), ValueDef::Unused);
        assert_eq!(
            dfg.value_def(p[3]),
            ValueDef::Alias(p[0]),
            "an alias stays one"
        );
    }

    #[test]
    fn results_made_at_once_are_the_appended_ones() {
        let mut dfg = DataFlowGraph::new();
        let b = dfg.make_block();
        let p = dfg.append_block_param(b, Type::I64);
        let data = InstructionData::Binary {
            opcode: Opcode::UaddOverflow,
            args: [p, p],
        };
        let appended = dfg.make_inst(data);
        let a0 = dfg.append_result(appended, Type::I64);
        let a1 = dfg.append_result(appended, Type::I8);
        let at_once = dfg.make_inst_with_results(data, [Type::I64, Type::I8]);
        let made = dfg.inst_results(at_once).to_vec();
        assert_eq!(made.len(), 2);
        assert_eq!(
            (made[0].index(), made[1].index()),
            (a1.index() + 1, a1.index() + 2)
        );
        for (n, &v) in made.iter().enumerate() {
            assert_eq!(dfg.value_def(v), ValueDef::Result(at_once, n as u16));
        }
        let types = |vs: &[Value]| vs.iter().map(|&v| dfg.value_type(v)).collect::<Vec<_>>();
        assert_eq!(types(&made), types(&[a0, a1]));
        let none = dfg.make_inst_with_results(data, []);
        assert!(dfg.inst_results(none).is_empty());
    }

    #[test]
    fn results_and_params() {
        let mut dfg = DataFlowGraph::new();
        let b = dfg.make_block();
        let p0 = dfg.append_block_param(b, Type::I64);
        let p1 = dfg.append_block_param(b, Type::I64);
        let i = dfg.make_inst(InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [p0, p1],
        });
        let r = dfg.append_result(i, Type::I64);
        assert_eq!(dfg.inst_results(i), &[r]);
        assert_eq!(dfg.value_def(r), ValueDef::Result(i, 0));
        dfg.remove_block_param(b, 0);
        assert_eq!(dfg.block_params(b), &[p1]);
        assert_eq!(dfg.value_def(p1), ValueDef::Param(b, 0));
        assert_eq!(dfg.value_def(p0), ValueDef::Unused);
    }
}
