//! `FunctionBuilder`: build a [`Function`] instruction by instruction, with mutable
//! [`Variable`]s turned into SSA on the fly (`ssa.rs`, after Braun et al. 2013) and a
//! [`Switch`] helper (`switch.rs`).
//!
//! Contract. The builder owns the function it builds. Requires nothing of its user: every
//! misuse — emitting with no current block or after a terminator, switching to a filled block,
//! branching to a sealed block, reading an undeclared variable or one with no definition on
//! some path, defining a variable with a value of the wrong type, naming entities that do not
//! exist, emitting an ill-typed instruction — returns a [`BuilderError`] saying what to do.
//! The one promise taken on trust is a structured front end's [`FunctionBuilder::close_region`]
//! (`regions.rs`), which debug builds check.
//! Guarantees: [`FunctionBuilder::finalize`] returns a compact function in which every block
//! in the layout is sealed and ends with a terminator; each emitted instruction passed the
//! verifier's type checks when it was emitted (unless a front end that checks its output
//! otherwise turned those off in a release build: [`FunctionBuilder::set_type_checks`]).
//!
//! Cost: an instruction costs O(its operands and branch destinations) — a `br_table`'s
//! distinct destinations are found with a per-block stamp, not by searching the list;
//! variable reads and seals are Braun's algorithm, each block's definition of a variable
//! memoized, and a read reaching the end of a closed region goes around it (`regions.rs`);
//! [`FunctionBuilder::reset`] costs O(the previous function).
//!
//! Usage: create blocks, `switch_to_block`, emit with `ins()`, `seal_block` a block once all
//! branches to it are emitted (or `seal_all_blocks` at the end, at some cost in phi
//! precision), `finalize`. A block enters the layout when it is first switched to, so block
//! order is the order in which blocks are first switched to.
//!
//! Invariants (block state, see [`BlockState`]):
//! 1. a block's parameters are its user parameters first, then SSA phis; users may append
//!    parameters only before the block has predecessors, instructions or phis;
//! 2. for every predecessor edge of a block, each branch argument list to it has one argument
//!    per user parameter and per *finished* phi (a phi whose operands have been added);
//!    unfinished phis are always the last parameters, so appending their operand keeps the
//!    lists aligned with the parameters;
//! 3. a sealed block gains no predecessors; an unsealed block's phis are all in its
//!    `incomplete` list;
//! 4. a filled block (ended by a terminator) gains no instructions.
//!
//! After an SSA error (an undefined variable found while reading or sealing) the builder's
//! phis may be half built, so it refuses all further work with the same error.

mod defs;
mod ins;
mod regions;
mod ssa;
mod switch;

#[cfg(test)]
mod tests;

pub use ins::{Handler, InstBuilder, TryCallArg};
pub use regions::RegionMark;
pub use switch::Switch;

use std::fmt;

use crate::compact::CompactMemory;
use crate::entity::{Block, EntityRef, Inst, PrimaryMap, SecondaryMap, Value};
use crate::function::{
    ExtFuncData, Function, FunctionName, GlobalValueData, Signature, StackSlotData,
};
use crate::instructions::InstructionData;
use crate::opcode::{Ctrl, Opcode};
use crate::types::Type;
use crate::{FuncRef, GlobalValue, JumpTable, SigRef, StackSlot};

/// A mutable variable of the source program, turned into SSA values by the builder.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variable(u32);

impl EntityRef for Variable {
    fn new(index: usize) -> Self {
        Variable(index as u32)
    }
    fn index(self) -> usize {
        self.0 as usize
    }
}

impl Variable {
    pub const fn from_u32(n: u32) -> Self {
        Variable(n)
    }
}

impl fmt::Display for Variable {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "var{}", self.0)
    }
}

impl fmt::Debug for Variable {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A misuse of the builder. Each message says what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuilderError {
    #[error("cannot emit `{opcode}`: there is no current block; call switch_to_block first")]
    NoCurrentBlock { opcode: Opcode },
    #[error("cannot emit `{opcode}` into {block}: it already ends with a terminator; switch to another block")]
    BlockFilled { block: Block, opcode: Opcode },
    #[error("cannot switch to {block}: it already ends with a terminator; create a new block")]
    SwitchToFilledBlock { block: Block },
    #[error("{block} was not created by this builder; use create_block")]
    UnknownBlock { block: Block },
    #[error("{value} does not exist or is not defined; use a value returned by the builder")]
    UnknownValue { value: Value },
    #[error("{what} does not exist; create it with the builder first")]
    UnknownEntity { what: String },
    #[error("{var} was never declared; call declare_var first")]
    UndeclaredVariable { var: Variable },
    #[error("{var} is used in {block} but has no definition on some path from the entry block; call def_var on every path before use_var")]
    UndefinedVariable { var: Variable, block: Block },
    #[error("def_var({var}, {value}): {var} has type {expected} but {value} has type {found}")]
    VariableTypeMismatch {
        var: Variable,
        value: Value,
        expected: Type,
        found: Type,
    },
    #[error("cannot branch from {from} to {to}: {to} is already sealed; seal a block only after every branch to it is emitted")]
    BranchToSealedBlock { from: Block, to: Block },
    #[error(
        "branch to {block} passes {found} argument(s), but {block} has {expected} parameter(s)"
    )]
    BranchArgCount { block: Block, expected: usize, found: usize },
    #[error("cannot add a parameter to {block}: it already has predecessors, instructions or variable phis; append parameters right after create_block")]
    ParamsAfterUse { block: Block },
    #[error("{ty} is not a value type; use an integer or float type")]
    InvalidType { ty: Type },
    #[error(
        "{block} has {} parameters already, the most a block may have",
        crate::dfg::MAX_VALUES_PER_DEF
    )]
    TooManyParams { block: Block },
    #[error("invalid `{opcode}`: {message}")]
    InvalidInstruction { opcode: Opcode, message: String },
    #[error("{table} is already used by another br_table; create a jump table per br_table")]
    JumpTableReused { table: JumpTable },
    #[error("{block} is not sealed; call seal_block({block}) once all branches to it are emitted (or seal_all_blocks)")]
    UnsealedBlock { block: Block },
    #[error(
        "{block} does not end with a terminator; end it with jump, brif, br_table, return or trap"
    )]
    UnterminatedBlock { block: Block },
    #[error("{block} is a branch target but was never filled; switch_to_block({block}) and emit its code")]
    UnplacedBranchTarget { block: Block },
    #[error("the function has no blocks; create one, switch to it and emit code")]
    EmptyFunction,
    #[error("switch case {index} is given twice; each case value needs exactly one block")]
    DuplicateSwitchCase { index: u128 },
    #[error("switch case {index} does not fit in the selector type {ty}")]
    SwitchCaseOutOfRange { index: u128, ty: Type },
}

/// What the builder knows about one block.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockState {
    /// Created by `create_block` (blocks the function already had are not ours).
    created: bool,
    /// All predecessors are known (invariant 3).
    sealed: bool,
    /// Ends with a terminator (invariant 4).
    filled: bool,
    /// Has at least one instruction.
    has_insts: bool,
    /// Branch instructions targeting this block, one per branching block.
    preds: Vec<Pred>,
    /// Phis created while the block was unsealed, in parameter order (invariant 2).
    incomplete: Vec<(Variable, Value)>,
    /// Set when the block ends a structured region (`regions.rs`).
    shortcut: Option<regions::Shortcut>,
}

impl BlockState {
    /// Back to the default state, keeping the lists' memory.
    fn reset(&mut self) {
        let BlockState {
            created,
            sealed,
            filled,
            has_insts,
            preds,
            incomplete,
            shortcut,
        } = self;
        (*created, *sealed, *filled, *has_insts) = (false, false, false, false);
        preds.clear();
        incomplete.clear();
        *shortcut = None;
    }
}

/// A predecessor edge as the builder records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pred {
    block: Block,
    inst: Inst,
}

/// Builds one function; see the module docs.
pub struct FunctionBuilder {
    func: Function,
    current: Option<Block>,
    blocks: SecondaryMap<Block, BlockState>,
    /// Declared variables and their types.
    vars: PrimaryMap<Variable, Type>,
    /// The value each variable holds at the end of each block, where known (`defs.rs`):
    /// sized by the definitions recorded, never variables × blocks.
    defs: defs::Defs,
    /// The numbers of each variable's definitions, for structured regions (`regions.rs`).
    history: regions::DefHistory,
    /// Block parameters created as phis by the SSA construction (and not removed).
    is_phi: SecondaryMap<Value, bool>,
    /// For each phi, the phis that use it as an operand (for cascading trivial-phi removal).
    phi_users: SecondaryMap<Value, Vec<Value>>,
    /// Jump tables already used by a `br_table`.
    jt_used: SecondaryMap<JumpTable, bool>,
    /// Set by an SSA error; every later call fails with it.
    poisoned: Option<BuilderError>,
    /// The source location given to the instructions built from now on.
    srcloc: Option<u32>,
    /// The SSA construction's working lists (`ssa.rs`).
    ssa: ssa::SsaScratch,
    /// A finished function handed back for its memory ([`FunctionBuilder::recycle`]).
    spare: Function,
    /// Blocks and values of the last function [`FunctionBuilder::finish`] handed out (the
    /// entries `reset` must clear).
    finished_sizes: (usize, usize),
    /// Some emitted instruction was refused; its record sits unplaced in the dfg, so the
    /// instruction numbers have a gap only compaction closes.
    refused_insts: bool,
    /// The destinations of the branch being emitted (working memory of `build`).
    dest_scratch: Vec<Block>,
    /// `dest_seen[b] == dest_stamp`: `b` already has the branch being emitted as a
    /// predecessor (the stamp advances per instruction; old marks never match).
    dest_seen: SecondaryMap<Block, u64>,
    dest_stamp: u64,
    /// Compaction's tables, kept across functions.
    compact_memory: CompactMemory,
    /// Whether `build` type-checks each instruction ([`FunctionBuilder::set_type_checks`]).
    type_checks: bool,
}

impl FunctionBuilder {
    /// Start building a function with this name and signature.
    pub fn new(name: FunctionName, signature: Signature) -> Self {
        FunctionBuilder {
            func: Function::with_name_signature(name, signature),
            current: None,
            blocks: SecondaryMap::new(),
            vars: PrimaryMap::new(),
            defs: defs::Defs::default(),
            history: regions::DefHistory::default(),
            is_phi: SecondaryMap::new(),
            phi_users: SecondaryMap::new(),
            jt_used: SecondaryMap::new(),
            poisoned: None,
            srcloc: None,
            ssa: ssa::SsaScratch::default(),
            spare: Function::default(),
            finished_sizes: (0, 0),
            refused_insts: false,
            dest_scratch: Vec::new(),
            dest_seen: SecondaryMap::new(),
            dest_stamp: 0,
            compact_memory: CompactMemory::default(),
            type_checks: true,
        }
    }

    /// Whether each emitted instruction is type-checked as the verifier would (on by default,
    /// kept across [`FunctionBuilder::reset`]). A front end whose output is verified in its
    /// own tests may turn it off to build faster: in a release build an ill-typed
    /// instruction is then not reported here (the verifier, if run, still reports it), while
    /// debug builds check regardless. The structural checks (values, entities, branch
    /// destinations, blocks) always run.
    pub fn set_type_checks(&mut self, on: bool) {
        self.type_checks = on;
    }

    /// Start building another function with this name and signature, in the memory of the
    /// previous one (the builder's tables, and the function handed back by
    /// [`FunctionBuilder::recycle`]). A front end that builds many functions keeps one
    /// builder per thread this way instead of allocating afresh for each. Any function in
    /// progress is dropped. Cost: O(size of the previous function).
    pub fn reset(&mut self, name: FunctionName, signature: Signature) {
        // Only the previous function's blocks and values have state to clear: entries past
        // them were cleared by earlier resets (or never used), so this is O(previous
        // function), not O(largest function so far).
        let dfg = &self.func.dfg;
        let num_blocks = dfg.num_blocks().max(self.finished_sizes.0);
        let num_values = dfg.num_values().max(self.finished_sizes.1);
        // Block states keep their lists' memory; an emptied state is the default state.
        for st in self.blocks.values_mut().take(num_blocks) {
            st.reset();
        }
        for users in self.phi_users.values_mut().take(num_values) {
            users.clear();
        }
        // Field-wise `clone_from` keeps each table's memory (see `Function::clone_from`).
        let mut func = std::mem::take(&mut self.spare);
        func.clone_from(&Function::with_name_signature(name, signature));
        self.func = func;
        self.current = None;
        // In O(what the last function used), not O(the largest function's tables).
        self.defs.clear(self.vars.len());
        self.history.clear(self.vars.len());
        self.vars.clear();
        self.is_phi.clear();
        self.jt_used.clear();
        self.poisoned = None;
        self.srcloc = None;
        self.refused_insts = false;
    }

    /// Give a function finished by this builder (or any function no longer needed) back, so
    /// that the next [`FunctionBuilder::reset`] builds in its memory.
    pub fn recycle(&mut self, func: Function) {
        self.spare = func;
    }

    /// Attach source location `loc` (a line, a byte offset: whatever the front end's debug
    /// info means by it; `None`: no location) to the instructions built from now on. It is
    /// printed as `@hex` and becomes the line of their machine code in debug info.
    pub fn set_srcloc(&mut self, loc: Option<u32>) {
        self.srcloc = loc;
    }

    /// The function built so far (queued instructions are not yet in layout order).
    pub fn func(&self) -> &Function {
        &self.func
    }

    // ---- Preamble entities ---------------------------------------------------------------

    pub fn import_signature(&mut self, sig: Signature) -> SigRef {
        self.func.signatures.push(sig)
    }

    pub fn import_function(&mut self, data: ExtFuncData) -> FuncRef {
        self.func.ext_funcs.push(data)
    }

    pub fn create_stack_slot(&mut self, data: StackSlotData) -> StackSlot {
        self.func.stack_slots.push(data)
    }

    pub fn create_global_value(&mut self, data: GlobalValueData) -> GlobalValue {
        self.func.global_values.push(data)
    }

    // ---- Blocks --------------------------------------------------------------------------

    pub fn create_block(&mut self) -> Block {
        let b = self.func.dfg.make_block();
        self.blocks[b].created = true;
        b
    }

    pub fn current_block(&self) -> Option<Block> {
        self.current
    }

    pub fn is_sealed(&self, b: Block) -> bool {
        self.blocks[b].sealed
    }

    pub fn is_filled(&self, b: Block) -> bool {
        self.blocks[b].filled
    }

    /// The parameters of `b` (user parameters, then phis); empty for an unknown block.
    pub fn block_params(&self, b: Block) -> &[Value] {
        if self.func.dfg.block_is_valid(b) {
            self.func.dfg.block_params(b)
        } else {
            &[]
        }
    }

    fn check_block(&self, block: Block) -> Result<(), BuilderError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        if self.blocks[block].created {
            Ok(())
        } else {
            Err(BuilderError::UnknownBlock { block })
        }
    }

    /// Make `b` the block new instructions go to. The first switch places `b` at the end of
    /// the layout.
    pub fn switch_to_block(&mut self, block: Block) -> Result<(), BuilderError> {
        self.check_block(block)?;
        if self.blocks[block].filled {
            return Err(BuilderError::SwitchToFilledBlock { block });
        }
        if !self.func.layout.is_block_inserted(block) {
            self.func.layout.append_block(block);
        }
        self.current = Some(block);
        Ok(())
    }

    /// Add a parameter to `block` (only before it has predecessors, instructions or phis).
    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Result<Value, BuilderError> {
        self.check_block(block)?;
        if !crate::typing::TypeSet::AnyOrVector.contains(ty) {
            return Err(BuilderError::InvalidType { ty });
        }
        let st = &self.blocks[block];
        if !st.preds.is_empty() || st.has_insts || !st.incomplete.is_empty() {
            return Err(BuilderError::ParamsAfterUse { block });
        }
        if self.func.dfg.block_params(block).len() == crate::dfg::MAX_VALUES_PER_DEF {
            return Err(BuilderError::TooManyParams { block });
        }
        // Post-invariant 1: no phis yet, so user parameters stay first.
        Ok(self.func.dfg.append_block_param(block, ty))
    }

    /// Add one parameter per signature parameter (for the entry block).
    pub fn append_block_params_for_function_params(
        &mut self,
        block: Block,
    ) -> Result<Vec<Value>, BuilderError> {
        let types: Vec<Type> = self
            .func
            .signature
            .params
            .iter()
            .map(|p| p.value_type)
            .collect();
        types
            .into_iter()
            .map(|ty| self.append_block_param(block, ty))
            .collect()
    }

    // ---- Variables -----------------------------------------------------------------------

    /// Declare a new variable of type `ty`.
    pub fn declare_var(&mut self, ty: Type) -> Variable {
        self.vars.push(ty)
    }

    fn var_type(&self, var: Variable) -> Result<Type, BuilderError> {
        self.vars
            .get(var)
            .copied()
            .ok_or(BuilderError::UndeclaredVariable { var })
    }

    /// `var = value` at the current point of the current block.
    pub fn def_var(&mut self, var: Variable, value: Value) -> Result<(), BuilderError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        let expected = self.var_type(var)?;
        self.check_value(value)?;
        let found = self.func.dfg.value_type(value);
        if found != expected {
            return Err(BuilderError::VariableTypeMismatch {
                var,
                value,
                expected,
                found,
            });
        }
        let block = self.current.ok_or(BuilderError::NoCurrentBlock {
            opcode: Opcode::Nop,
        })?;
        self.defs
            .insert(var, block, value, self.func.dfg.num_blocks());
        self.history.record(var);
        Ok(())
    }

    /// The value `var` holds at the current point of the current block.
    pub fn use_var(&mut self, var: Variable) -> Result<Value, BuilderError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        self.var_type(var)?;
        let block = self.current.ok_or(BuilderError::NoCurrentBlock {
            opcode: Opcode::Nop,
        })?;
        self.read_variable(var, block)
    }

    fn check_value(&self, value: Value) -> Result<(), BuilderError> {
        let dfg = &self.func.dfg;
        if dfg.value_is_valid(value) && dfg.value_is_attached(value) {
            Ok(())
        } else {
            Err(BuilderError::UnknownValue { value })
        }
    }

    // ---- Instructions --------------------------------------------------------------------

    /// The instruction helpers (`iadd`, `jump`, …) for the current block.
    pub fn ins(&mut self) -> InstBuilder<'_> {
        InstBuilder::new(self)
    }

    /// The results of an emitted instruction.
    pub fn inst_results(&self, inst: Inst) -> &[Value] {
        if self.func.dfg.inst_is_valid(inst) {
            self.func.dfg.inst_results(inst)
        } else {
            &[]
        }
    }

    /// Emit `data` at the end of the current block. `ty` is the controlling type for opcodes
    /// whose type is a suffix (`iconst`, `load`, `uextend`, …) and ignored otherwise (it
    /// comes from an operand). Branch arguments name the destination's user parameters only;
    /// the builder adds the phi arguments.
    pub fn build(&mut self, data: InstructionData, ty: Type) -> Result<Inst, BuilderError> {
        self.build_with(data, ty, |_, _| {})
    }

    /// [`Self::build`], calling `fill` on the made instruction (its results exist) before its
    /// destinations are checked: a `try_call`'s block calls name its results.
    pub(crate) fn build_with(
        &mut self,
        data: InstructionData,
        ty: Type,
        fill: impl FnOnce(&mut Function, Inst),
    ) -> Result<Inst, BuilderError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        let opcode = data.opcode();
        let block = self
            .current
            .ok_or(BuilderError::NoCurrentBlock { opcode })?;
        if self.blocks[block].filled {
            return Err(BuilderError::BlockFilled { block, opcode });
        }
        let invalid = |message: String| BuilderError::InvalidInstruction { opcode, message };
        if data.format() != opcode.format() {
            return Err(invalid(format!(
                "its operands are of format {:?}, it needs {:?}",
                data.format(),
                opcode.format()
            )));
        }
        for v in data.arguments(&self.func.dfg.pool) {
            self.check_value(v)?;
        }
        self.check_entities(&data)?;
        let mut dests = std::mem::take(&mut self.dest_scratch);
        let late = data.exception_table().is_some();
        if !late {
            if let Err(e) = self.check_destinations(block, &data, &mut dests) {
                self.dest_scratch = dests;
                return Err(e);
            }
        }
        let ctrl = match opcode.ctrl() {
            // A call's types come from its signature (`call_indirect`'s callee address is
            // in its value list, not a fixed operand); the type checks handle it.
            _ if opcode.is_call() => Type::INVALID,
            Ctrl::None => Type::INVALID,
            Ctrl::Suffix => ty,
            Ctrl::Operand(n) | Ctrl::OperandPrinted(n) => match data.fixed_args().get(n as usize) {
                Some(&v) => self.func.dfg.value_type(v),
                None => return Err(invalid("it is missing its typed operand".into())),
            },
        };
        let inst = self.func.make_inst(data, ctrl);
        if late {
            fill(&mut self.func, inst);
            if let Err(e) = self.check_destinations(block, &data, &mut dests) {
                self.func.dfg.detach_results(inst);
                self.refused_insts = true;
                self.dest_scratch = dests;
                return Err(e);
            }
        }
        if self.type_checks || cfg!(debug_assertions) {
            let mut errors = Vec::new();
            crate::verifier::types::inst_type_errors(&self.func, inst, &mut errors);
            if !errors.is_empty() {
                // The record stays unplaced in the dfg, where nothing reaches it.
                self.func.dfg.detach_results(inst);
                self.refused_insts = true;
                return Err(invalid(errors.join("; ")));
            }
        }
        // Post-invariant 4: only the current, unfilled block receives the instruction.
        self.func.layout.append_inst(inst, block);
        if self.srcloc.is_some() {
            self.func.srclocs[inst] = self.srcloc;
        }
        let st = &mut self.blocks[block];
        st.has_insts = true;
        st.filled = opcode.is_terminator();
        if let InstructionData::BranchTable { table, .. } = data {
            self.jt_used[table] = true;
        }
        // Post-invariant 3: `check_destinations` refused sealed destinations. Each distinct
        // destination gets one predecessor entry, found distinct by a per-block stamp (one
        // pass, also for a `br_table` naming thousands of blocks).
        self.dest_stamp += 1;
        for &dest in &dests {
            if self.dest_seen[dest] != self.dest_stamp {
                self.dest_seen[dest] = self.dest_stamp;
                self.blocks[dest].preds.push(Pred { block, inst });
            }
        }
        self.dest_scratch = dests;
        Ok(inst)
    }

    /// Entities named by `data` exist; a jump table is not reused.
    fn check_entities(&self, data: &InstructionData) -> Result<(), BuilderError> {
        let f = &self.func;
        let missing = |what: String| Err(BuilderError::UnknownEntity { what });
        match *data {
            InstructionData::Call { func_ref, .. } | InstructionData::FuncAddr { func_ref, .. } => {
                match f.ext_funcs.get(func_ref) {
                    None => return missing(func_ref.to_string()),
                    Some(ext) if !f.signatures.is_valid(ext.signature) => {
                        return missing(ext.signature.to_string())
                    }
                    Some(_) => {}
                }
            }
            InstructionData::CallIndirect { sig_ref, .. } if !f.signatures.is_valid(sig_ref) => {
                return missing(sig_ref.to_string())
            }
            InstructionData::StackLoad { stack_slot, .. }
            | InstructionData::StackStore { stack_slot, .. }
                if !f.stack_slots.is_valid(stack_slot) =>
            {
                return missing(stack_slot.to_string())
            }
            InstructionData::UnaryGlobalValue { global_value, .. }
                if !f.global_values.is_valid(global_value) =>
            {
                return missing(global_value.to_string())
            }
            InstructionData::BranchTable { table, .. } => {
                if !f.jump_tables.is_valid(table) {
                    return missing(table.to_string());
                }
                if self.jt_used[table] {
                    return Err(BuilderError::JumpTableReused { table });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Check the branch destinations of `data` emitted from `from`, leaving the destination
    /// blocks in `dests` (emptied first; with repeats, as the branch names them). Allocates
    /// nothing once `dests` has room: non-branches return at once, and a jump table is read
    /// in place.
    fn check_destinations(
        &self,
        from: Block,
        data: &InstructionData,
        dests: &mut Vec<Block>,
    ) -> Result<(), BuilderError> {
        dests.clear();
        let f = &self.func;
        let check = |call: &crate::instructions::BlockCall, dests: &mut Vec<Block>| {
            let to = call.block;
            self.check_block(to)?;
            let st = &self.blocks[to];
            if st.sealed {
                return Err(BuilderError::BranchToSealedBlock { from, to });
            }
            let args = f.dfg.block_call_args(call);
            // Invariant 3: unsealed, so every phi is incomplete and last (invariant 2).
            let params = f.dfg.block_params(to);
            let user_params = &params[..params.len().saturating_sub(st.incomplete.len())];
            if args.len() != user_params.len() {
                return Err(BuilderError::BranchArgCount {
                    block: to,
                    expected: user_params.len(),
                    found: args.len(),
                });
            }
            for (i, (&a, &p)) in args.iter().zip(user_params).enumerate() {
                self.check_value(a)?;
                let (at, pt) = (f.dfg.value_type(a), f.dfg.value_type(p));
                if at != pt {
                    return Err(BuilderError::InvalidInstruction {
                        opcode: data.opcode(),
                        message: format!(
                            "branch to {to} passes {a} of type {at} as parameter {i}, which has type {pt}"
                        ),
                    });
                }
            }
            dests.push(to);
            Ok(())
        };
        match *data {
            InstructionData::BranchTable { table, .. } => {
                // `check_entities` ran first: the table exists.
                if let Some(jt) = f.jump_tables.get(table) {
                    for call in jt.all_branches() {
                        check(call, dests)?;
                    }
                }
            }
            InstructionData::TryCall { table, .. }
            | InstructionData::TryCallIndirect { table, .. } => {
                if let Some(et) = f.exception_tables.get(table) {
                    for call in et.all_branches() {
                        check(call, dests)?;
                    }
                }
            }
            _ => {
                for call in data.branch_destinations() {
                    check(call, dests)?;
                }
            }
        }
        Ok(())
    }

    // ---- Finishing -----------------------------------------------------------------------

    /// Check that every block is sealed and terminated and every branch target was filled,
    /// then compact the function and return it.
    pub fn finalize(mut self) -> Result<Function, BuilderError> {
        self.finish()
    }

    /// [`FunctionBuilder::finalize`] for a builder that goes on to build another function
    /// ([`FunctionBuilder::reset`]); after an error, only `reset` is useful.
    pub fn finish(&mut self) -> Result<Function, BuilderError> {
        self.check_finished()?;
        self.func.compact_in(&mut self.compact_memory);
        Ok(self.hand_out())
    }

    /// [`FunctionBuilder::finish`] for a caller whose next step is a compacting pass (the
    /// mid-end): skips the compaction when the layout allows. The function it returns has
    /// a compact layout with instructions numbered in program order, but its operands may
    /// name aliases (the phis that SSA construction found trivial) and its list pool may
    /// hold garbage; the verifier, the mid-end and lowering accept that. When the layout
    /// is not compact (instructions appended to a block after switching away from it) or
    /// an emitted instruction was refused, it compacts as `finish` does.
    pub fn finish_uncompacted(&mut self) -> Result<Function, BuilderError> {
        self.check_finished()?;
        if !self.func.layout.is_compact() || self.refused_insts {
            self.func.compact_in(&mut self.compact_memory);
        }
        Ok(self.hand_out())
    }

    /// Every block sealed and terminated, every branch target placed.
    fn check_finished(&self) -> Result<(), BuilderError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        if self.func.layout.blocks().is_empty() {
            return Err(BuilderError::EmptyFunction);
        }
        for &block in self.func.layout.blocks() {
            let st = &self.blocks[block];
            if !st.filled {
                return Err(BuilderError::UnterminatedBlock { block });
            }
            if !st.sealed {
                return Err(BuilderError::UnsealedBlock { block });
            }
        }
        for n in 0..self.func.dfg.num_blocks() {
            let block = Block::new(n);
            if !self.blocks[block].preds.is_empty() && !self.func.layout.is_block_inserted(block) {
                return Err(BuilderError::UnplacedBranchTarget { block });
            }
        }
        Ok(())
    }

    /// Hand the finished function out, remembering its size for `reset`.
    fn hand_out(&mut self) -> Function {
        self.finished_sizes = (self.func.dfg.num_blocks(), self.func.dfg.num_values());
        // Post: the builder holds an empty function until `reset`.
        std::mem::take(&mut self.func)
    }
}
