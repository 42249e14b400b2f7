//! A function: signature, preamble entities (stack slots, signatures, external functions,
//! global values, jump tables), the data-flow graph and the layout.

use std::fmt;

use crate::dfg::DataFlowGraph;
use crate::entity::{
    Block, ExceptionTable, FuncRef, GlobalValue, Inst, JumpTable, PrimaryMap, SecondaryMap, SigRef,
    StackSlot,
};
use crate::instructions::BlockCall;
use crate::layout::Layout;
use crate::types::Type;

/// Calling conventions CLIF can name. All parse; which compile is the backend's business.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum CallConv {
    #[default]
    SystemV,
    Fast,
    Cold,
    Tail,
    WindowsFastcall,
    AppleAarch64,
    Probestack,
    Winch,
    Patchable,
}

impl CallConv {
    const NAMES: [(CallConv, &'static str); 9] = [
        (CallConv::SystemV, "system_v"),
        (CallConv::Fast, "fast"),
        (CallConv::Cold, "cold"),
        (CallConv::Tail, "tail"),
        (CallConv::WindowsFastcall, "windows_fastcall"),
        (CallConv::AppleAarch64, "apple_aarch64"),
        (CallConv::Probestack, "probestack"),
        (CallConv::Winch, "winch"),
        (CallConv::Patchable, "patchable"),
    ];

    #[inline]
    pub fn from_name(s: &str) -> Option<CallConv> {
        Self::NAMES.iter().find(|(_, n)| *n == s).map(|(c, _)| *c)
    }

    #[inline]
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(c, _)| *c == self).unwrap().1
    }
}

/// How a parameter or return value narrower than a register is extended.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum ArgumentExtension {
    #[default]
    None,
    Uext,
    Sext,
}

/// A special role of a parameter.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum ArgumentPurpose {
    #[default]
    Normal,
    /// Pointer to memory for returned values (`sret`).
    StructReturn,
    /// The VM context pointer (`vmctx`).
    VMContext,
}

/// A parameter or return value of a signature.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct AbiParam {
    pub value_type: Type,
    pub extension: ArgumentExtension,
    pub purpose: ArgumentPurpose,
}

impl AbiParam {
    #[inline]
    pub fn new(value_type: Type) -> Self {
        AbiParam {
            value_type,
            extension: ArgumentExtension::None,
            purpose: ArgumentPurpose::Normal,
        }
    }

    #[inline]
    pub fn uext(mut self) -> Self {
        self.extension = ArgumentExtension::Uext;
        self
    }

    #[inline]
    pub fn sext(mut self) -> Self {
        self.extension = ArgumentExtension::Sext;
        self
    }
}

impl fmt::Display for AbiParam {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.value_type)?;
        match self.extension {
            ArgumentExtension::None => {}
            ArgumentExtension::Uext => f.write_str(" uext")?,
            ArgumentExtension::Sext => f.write_str(" sext")?,
        }
        match self.purpose {
            ArgumentPurpose::Normal => {}
            ArgumentPurpose::StructReturn => f.write_str(" sret")?,
            ArgumentPurpose::VMContext => f.write_str(" vmctx")?,
        }
        Ok(())
    }
}

/// Parameter and return types plus calling convention.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Signature {
    pub params: Vec<AbiParam>,
    pub returns: Vec<AbiParam>,
    pub call_conv: CallConv,
}

impl Signature {
    /// Index of the first parameter with `purpose` (e.g. the `vmctx` parameter).
    #[inline]
    pub fn special_param_index(&self, purpose: ArgumentPurpose) -> Option<usize> {
        self.params.iter().position(|p| p.purpose == purpose)
    }

    #[inline]
    pub fn new(call_conv: CallConv) -> Self {
        Signature {
            params: Vec::new(),
            returns: Vec::new(),
            call_conv,
        }
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str(")")?;
        if !self.returns.is_empty() {
            f.write_str(" -> ")?;
            for (i, p) in self.returns.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{p}")?;
            }
        }
        write!(f, " {}", self.call_conv.name())
    }
}

/// An explicit stack slot.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct StackSlotData {
    pub size: u32,
    /// log2 of the alignment in bytes.
    pub align_shift: u8,
}

/// A function's name: `%name` or a user name `u1:2`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum FunctionName {
    Named(String),
    User { namespace: u32, index: u32 },
}

impl Default for FunctionName {
    fn default() -> Self {
        FunctionName::Named(String::new())
    }
}

impl fmt::Display for FunctionName {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FunctionName::Named(n) => write!(f, "%{n}"),
            FunctionName::User { namespace, index } => write!(f, "u{namespace}:{index}"),
        }
    }
}

/// An external function referenced by `call` / `func_addr`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ExtFuncData {
    pub name: FunctionName,
    pub signature: SigRef,
    /// Defined in the same module (a near call).
    pub colocated: bool,
}

/// A global value definition.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum GlobalValueData {
    /// The function's `vmctx` parameter.
    VMContext,
    /// A load from another global value plus an offset.
    Load {
        base: GlobalValue,
        offset: i32,
        global_type: Type,
        flags: crate::immediates::MemFlags,
    },
    /// Another global value plus a constant.
    IAddImm { base: GlobalValue, offset: i64, global_type: Type },
    /// The address of a symbol (a function or data object, here or in another object file)
    /// plus `offset`, resolved by the linker or the JIT. A pointer-sized integer.
    Symbol {
        name: FunctionName,
        offset: i64,
        /// Defined in the same module or executable: addressed PC-relative, no GOT.
        colocated: bool,
    },
}

/// The targets of a `br_table`: a default and one entry per index.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct JumpTableData {
    pub default: BlockCall,
    pub entries: Vec<BlockCall>,
}

impl JumpTableData {
    /// Default first, then the entries.
    pub fn all_branches(&self) -> impl Iterator<Item = &BlockCall> {
        std::iter::once(&self.default).chain(self.entries.iter())
    }

    pub fn all_branches_mut(&mut self) -> impl Iterator<Item = &mut BlockCall> {
        std::iter::once(&mut self.default).chain(self.entries.iter_mut())
    }
}

/// The destinations of a `try_call`: where a normal return goes, and per handler the
/// exception tag it catches (`None`: `default`, any tag) and where it goes. Handlers are tried
/// in order.
///
/// A `try_call`'s results are the callee's return values followed by the exception payload
/// values ([`EXCEPTION_PAYLOAD_TYPES`]); they are not values of the function body: the return
/// values may only be arguments of `normal` (`retN` in text) and the payloads only of the
/// handlers (`exnN`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ExceptionTableData {
    /// The signature written in text (`sig0`); for `try_call` it must match the callee's.
    pub sig: SigRef,
    pub normal: BlockCall,
    pub tags: Vec<Option<u32>>,
    pub handlers: Vec<BlockCall>,
}

/// The types of the exception payload values a handler receives (`exn0`, `exn1`): two
/// pointer-sized words, on the 64-bit targets Kestrel has.
pub const EXCEPTION_PAYLOAD_TYPES: [Type; 2] = [Type::I64, Type::I64];

impl ExceptionTableData {
    /// The normal successor first, then the handlers in order.
    pub fn all_branches(&self) -> impl Iterator<Item = &BlockCall> {
        std::iter::once(&self.normal).chain(self.handlers.iter())
    }

    pub fn all_branches_mut(&mut self) -> impl Iterator<Item = &mut BlockCall> {
        std::iter::once(&mut self.normal).chain(self.handlers.iter_mut())
    }
}

/// Line and column (1-based) in the text a function was parsed from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct TextPos {
    pub line: u32,
    pub col: u32,
}

/// A declared memory region: `regionN = USER_ID "DESCRIPTION"`. Only the identity matters
/// to the compiler (for alias analysis); the id and description are kept for printing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AliasRegionData {
    pub user_id: u32,
    pub description: String,
}

/// Where the entities of a parsed function were written, for error messages.
#[derive(Debug, Default)]
pub struct SourceMap {
    /// The name of the text (as given to the parser), shared by its functions.
    pub file: std::sync::Arc<str>,
    pub function: TextPos,
    pub insts: SecondaryMap<Inst, TextPos>,
    pub blocks: SecondaryMap<Block, TextPos>,
}

impl Clone for SourceMap {
    fn clone(&self) -> Self {
        let mut copy = SourceMap::default();
        copy.clone_from(self);
        copy
    }

    /// Field by field, reusing this map's memory.
    fn clone_from(&mut self, source: &Self) {
        let SourceMap {
            file,
            function,
            insts,
            blocks,
        } = source;
        self.file.clone_from(file);
        self.function = *function;
        self.insts.clone_from(insts);
        self.blocks.clone_from(blocks);
    }
}

/// A function in SSA form.
#[derive(Debug, Default)]
pub struct Function {
    pub name: FunctionName,
    pub signature: Signature,
    pub stack_slots: PrimaryMap<StackSlot, StackSlotData>,
    pub global_values: PrimaryMap<GlobalValue, GlobalValueData>,
    pub signatures: PrimaryMap<SigRef, Signature>,
    pub ext_funcs: PrimaryMap<FuncRef, ExtFuncData>,
    pub jump_tables: PrimaryMap<JumpTable, JumpTableData>,
    pub exception_tables: PrimaryMap<ExceptionTable, ExceptionTableData>,
    /// Memory regions named by `regionN` flags, in declaration order (`regionN` is entry N).
    pub alias_regions: Vec<AliasRegionData>,
    /// `stack_limit = gvN`: the prologue traps with `stk_ovf` when the stack pointer would
    /// fall below this global value's value once the frame is allocated.
    pub stack_limit: Option<GlobalValue>,
    pub dfg: DataFlowGraph,
    pub layout: Layout,
    /// `@offset` source locations attached in text.
    pub srclocs: SecondaryMap<Inst, Option<u32>>,
    /// Present when the function was parsed from text.
    pub source_map: Option<Box<SourceMap>>,
}

impl Clone for Function {
    fn clone(&self) -> Self {
        let mut copy = Function::default();
        copy.clone_from(self);
        copy
    }

    /// Field by field, reusing this function's memory (the mid-end copies each function it
    /// optimizes into one kept by the compile context).
    fn clone_from(&mut self, source: &Self) {
        // Destructured, so that a new field cannot be forgotten here.
        let Function {
            name,
            signature,
            stack_slots,
            global_values,
            signatures,
            ext_funcs,
            jump_tables,
            exception_tables,
            alias_regions,
            stack_limit,
            dfg,
            layout,
            srclocs,
            source_map,
        } = source;
        self.name.clone_from(name);
        self.signature.clone_from(signature);
        self.stack_slots.clone_from(stack_slots);
        self.global_values.clone_from(global_values);
        self.signatures.clone_from(signatures);
        self.ext_funcs.clone_from(ext_funcs);
        self.jump_tables.clone_from(jump_tables);
        self.exception_tables.clone_from(exception_tables);
        self.alias_regions.clone_from(alias_regions);
        self.stack_limit = *stack_limit;
        self.dfg.clone_from(dfg);
        self.layout.clone_from(layout);
        self.srclocs.clone_from(srclocs);
        self.source_map.clone_from(source_map);
    }
}

impl Function {
    #[inline]
    pub fn with_name_signature(name: FunctionName, signature: Signature) -> Self {
        Function {
            name,
            signature,
            ..Default::default()
        }
    }

    /// The entry block (first in layout).
    #[inline]
    pub fn entry_block(&self) -> Option<Block> {
        self.layout.entry_block()
    }

    /// Number of placed instructions.
    #[inline]
    pub fn num_placed_insts(&self) -> usize {
        self.layout
            .blocks()
            .iter()
            .map(|&b| self.layout.block_insts(b).count())
            .sum()
    }

    /// Where `inst` was written, if the function came from text.
    #[inline]
    pub fn inst_pos(&self, inst: Inst) -> Option<TextPos> {
        let sm = self.source_map.as_ref()?;
        let p = sm.insts[inst];
        (p.line != 0).then_some(p)
    }

    /// The source line a debugger shows for `inst` (0: none): its line in the CLIF text when
    /// the function was parsed, otherwise the `@srcloc` a front end attached.
    #[inline]
    pub fn debug_line(&self, inst: Inst) -> u32 {
        match &self.source_map {
            Some(sm) => sm.insts[inst].line,
            None => self.srclocs[inst].unwrap_or(0),
        }
    }

    /// The name of the text the function was parsed from.
    pub fn source_file(&self) -> Option<&str> {
        self.source_map.as_deref().map(|sm| &*sm.file)
    }

    /// Where `block`'s header was written, if the function came from text.
    #[inline]
    pub fn block_pos(&self, block: Block) -> Option<TextPos> {
        let sm = self.source_map.as_ref()?;
        let p = sm.blocks[block];
        (p.line != 0).then_some(p)
    }

    /// The signature a call instruction uses, if `data` is a call.
    pub fn call_signature(
        &self,
        data: &crate::instructions::InstructionData,
    ) -> Option<&Signature> {
        call_signature_in(&self.ext_funcs, &self.signatures, data)
    }

    /// Create an instruction (not placed in the layout) with fresh result values: for calls
    /// from the callee's signature, otherwise from the typing rules for controlling type `ctrl`
    /// (ignored by opcodes that are not polymorphic). The caller checks `ctrl` against
    /// [`crate::typing::ctrl_type_set`] first.
    pub fn make_inst(&mut self, data: crate::instructions::InstructionData, ctrl: Type) -> Inst {
        // (The tables are borrowed apart from the data flow graph the instruction goes into.)
        match call_signature_in(&self.ext_funcs, &self.signatures, &data) {
            // A tail call returns the callee's results from this function: it has none.
            Some(_) if data.opcode().is_return_call() => self.dfg.make_inst_with_results(data, []),
            Some(sig) if data.opcode().is_try_call() => self.dfg.make_inst_with_results(
                data,
                sig.returns
                    .iter()
                    .map(|p| p.value_type)
                    .chain(EXCEPTION_PAYLOAD_TYPES),
            ),
            Some(sig) => self
                .dfg
                .make_inst_with_results(data, sig.returns.iter().map(|p| p.value_type)),
            None => {
                let types = crate::typing::result_types(data.opcode(), ctrl);
                self.dfg
                    .make_inst_with_results(data, types.as_slice().iter().copied())
            }
        }
    }

    /// The successors of a block's terminator, in order (with repeats), by destination.
    /// Number of destinations of `inst` (0 for a non-branch), without copying them.
    #[inline]
    pub fn num_branch_destinations(&self, inst: Inst) -> usize {
        let data = self.dfg.inst(inst);
        match *data {
            crate::instructions::InstructionData::BranchTable { table, .. } => {
                1 + self.jump_tables[table].entries.len()
            }
            crate::instructions::InstructionData::TryCall { table, .. }
            | crate::instructions::InstructionData::TryCallIndirect { table, .. } => {
                1 + self.exception_tables[table].handlers.len()
            }
            _ => data.branch_destinations().len(),
        }
    }

    /// Destination `k` of branch `inst` (in [`Self::branch_destinations`] order), without
    /// copying the others: O(1) even for a `br_table`.
    #[inline]
    pub fn branch_destination(&self, inst: Inst, k: usize) -> BlockCall {
        let data = self.dfg.inst(inst);
        match *data {
            crate::instructions::InstructionData::BranchTable { table, .. } => {
                let jt = &self.jump_tables[table];
                if k == 0 {
                    jt.default
                } else {
                    jt.entries[k - 1]
                }
            }
            crate::instructions::InstructionData::TryCall { table, .. }
            | crate::instructions::InstructionData::TryCallIndirect { table, .. } => {
                let et = &self.exception_tables[table];
                if k == 0 {
                    et.normal
                } else {
                    et.handlers[k - 1]
                }
            }
            _ => data.branch_destinations()[k],
        }
    }

    #[inline]
    pub fn branch_destinations(&self, inst: Inst) -> Vec<BlockCall> {
        let data = self.dfg.inst(inst);
        match *data {
            crate::instructions::InstructionData::BranchTable { table, .. } => {
                self.jump_tables[table].all_branches().copied().collect()
            }
            crate::instructions::InstructionData::TryCall { table, .. }
            | crate::instructions::InstructionData::TryCallIndirect { table, .. } => self
                .exception_tables[table]
                .all_branches()
                .copied()
                .collect(),
            _ => data.branch_destinations().to_vec(),
        }
    }
}

/// [`Function::call_signature`] over the two tables it reads.
fn call_signature_in<'a>(
    ext_funcs: &PrimaryMap<FuncRef, ExtFuncData>,
    signatures: &'a PrimaryMap<SigRef, Signature>,
    data: &crate::instructions::InstructionData,
) -> Option<&'a Signature> {
    match *data {
        crate::instructions::InstructionData::Call { func_ref, .. }
        | crate::instructions::InstructionData::TryCall { func_ref, .. } => {
            signatures.get(ext_funcs.get(func_ref)?.signature)
        }
        crate::instructions::InstructionData::CallIndirect { sig_ref, .. }
        | crate::instructions::InstructionData::TryCallIndirect { sig_ref, .. } => {
            signatures.get(sig_ref)
        }
        _ => None,
    }
}
