//! Translation of one Wasm function body into one Kestrel IR [`Function`].
//!
//! Contract. Requires: the module validated with [`crate::features::SUPPORTED`] and was
//! decoded into `info`. Guarantees: the result has the signature of
//! [`sig::wasm_signature`] (`vmctx` first), is built by [`FunctionBuilder`] (so it passes
//! the verifier's type checks), has every block sealed as soon as its predecessors are all
//! known, and traps with the codes of [`crate::trap`]; every instruction built for an
//! operator has that operator's byte offset in the module as its source location (what a
//! trap reports; the entry block's setup has none). Operators Kestrel does not translate
//! are [`WasmError::Unsupported`] naming the operator and its offset; a builder failure is
//! [`WasmError::Translate`] (a bug), never a panic.
//!
//! Shape (after cranelift-wasm's, written anew): Wasm locals are builder `Variable`s
//! (zero-initialized at entry), the operand stack is a stack of IR values, and each open
//! `block`/`loop`/`if` is a `control::Frame` on the control stack. Code after an
//! unconditional branch is not translated: `reachable` goes false and only the nesting of
//! the skipped structured instructions is counted until the enclosing frame ends. With
//! the body's facts from validation ([`BodyFacts`]), a local the body never assigns is read
//! as its entry value, and a loop's header defines each local the loop reads and never
//! assigns as its value on entry (`loop_locals.rs`), so the builder makes no phi there.
//!
//! Cost: one pass over the operators; each emits O(1) instructions except `br_table` (one
//! per target) and calls (one per argument), and a `loop` reads its invariant locals once.
//! SSA construction is the builder's (linear in practice, Braun et al.).

mod calls;
mod control;
pub mod loop_locals;
mod memory;
mod numeric;
pub mod sig;
mod tables;

use kestrel_ir::builder::{FunctionBuilder, Variable};
use kestrel_ir::immediates::AliasRegion;
use kestrel_ir::{
    Function, FunctionName, GlobalValueData, InstructionData, MemFlags, Opcode, TrapCode, Type,
    Value as IrValue, ValueDef,
};
use wasmparser::{BinaryReader, FunctionBody, Operator};

use crate::config::BoundsChecks;
use crate::error::WasmError;
use crate::module_info::ModuleInfo;
use crate::runtime::vmctx::offsets;
use control::Frame;

/// The IR name of defined or imported function `index` (`u0:index`).
pub fn func_name(index: u32) -> FunctionName {
    FunctionName::User {
        namespace: 0,
        index,
    }
}

/// What a thread keeps between the functions it translates: the builder's memory and the
/// translator's stacks, so that translating a module allocates per thread, not per function.
#[derive(Default)]
pub struct TranslateContext {
    /// Leave compaction to the mid-end (see `FunctionBuilder::finish_uncompacted`).
    uncompacted: bool,
    builder: Option<FunctionBuilder>,
    locals: Vec<Variable>,
    stack: Vec<IrValue>,
    control: Vec<Frame>,
    heap_cache: memory::HeapCache,
    constants: Vec<(Type, i64, IrValue)>,
    fixed_locals: Vec<Option<IrValue>>,
    /// What validation learned of the next function's body, when `facts_known` (see
    /// [`TranslateContext::body_facts_for_next`]).
    facts: BodyFacts,
    facts_known: bool,
    /// Skip the builder's per-instruction type checks (release builds; see
    /// [`TranslateContext::set_type_checks`]).
    unchecked: bool,
}

/// What validating a body learns for its translation: whether each local is assigned
/// (by index), and per loop the locals it reads and never assigns.
#[derive(Default)]
pub struct BodyFacts {
    pub written: Vec<bool>,
    pub loops: loop_locals::LoopLocals,
}

impl TranslateContext {
    pub fn new() -> Self {
        Self::default()
    }

    /// A context whose functions go straight to the mid-end, whose first compacting pass
    /// does the builder's compaction's work: they may name aliases and hold garbage lists
    /// (see `FunctionBuilder::finish_uncompacted`), so they are for compiling, not for
    /// printing.
    pub fn for_mid_end() -> Self {
        TranslateContext {
            uncompacted: true,
            ..Self::default()
        }
    }

    /// Whether the next functions go to the mid-end (as [`TranslateContext::for_mid_end`]
    /// makes them) or straight to the backend (as [`TranslateContext::new`]).
    pub fn set_for_mid_end(&mut self, for_mid_end: bool) {
        self.uncompacted = for_mid_end;
    }

    /// Whether the builder type-checks each instruction of the next translations (on by
    /// default; see `FunctionBuilder::set_type_checks`): off for a compile that skips the
    /// verifier too, as Wasmtime runs Cranelift. Debug builds (the test suite's) type-check
    /// and verify regardless.
    pub fn set_type_checks(&mut self, on: bool) {
        self.unchecked = !on;
    }

    /// Facts to fill, before the next translation, about the next function's body
    /// (`features::validate_body` does, while validating); confirmed by
    /// [`TranslateContext::body_facts_known`]. Reads of a local the body never assigns then
    /// take its entry value without SSA construction, and a loop's reads of a local it
    /// never assigns stop at its header.
    pub fn body_facts_for_next(&mut self) -> &mut BodyFacts {
        self.facts_known = false;
        &mut self.facts
    }

    /// The facts from [`TranslateContext::body_facts_for_next`] are complete for the next
    /// function (used by that translation only).
    pub fn body_facts_known(&mut self) {
        self.facts_known = true;
    }

    /// Hand a translated function back once it is compiled, so the next translation builds
    /// in its memory.
    pub fn recycle(&mut self, func: Function) {
        if let Some(b) = &mut self.builder {
            b.recycle(func);
        }
    }
}

/// Translate defined function `index` (imports included in the numbering), whose body is
/// `module_bytes[info.bodies[index - imports]]`.
pub fn translate_function(
    info: &ModuleInfo,
    module_bytes: &[u8],
    index: u32,
    bounds_checks: BoundsChecks,
) -> Result<Function, WasmError> {
    translate_function_in(
        &mut TranslateContext::new(),
        info,
        module_bytes,
        index,
        bounds_checks,
        None,
    )
}

/// [`translate_function`] in `ctx`'s memory. With `decoded`, the body's operators as
/// [`crate::features::validate_body`] decoded them (left empty), the translation replays
/// them instead of decoding the body again.
pub fn translate_function_in(
    ctx: &mut TranslateContext,
    info: &ModuleInfo,
    module_bytes: &[u8],
    index: u32,
    bounds_checks: BoundsChecks,
    decoded: Option<&mut crate::features::DecodedOps<'_>>,
) -> Result<Function, WasmError> {
    let range = info.bodies[(index - info.num_imported_funcs) as usize].clone();
    let body = FunctionBody::new(BinaryReader::new(&module_bytes[range.clone()], range.start));
    let sig = sig::wasm_signature(info.func_type(index), range.start)?;
    let builder = match &mut ctx.builder {
        Some(b) => {
            b.reset(func_name(index), sig);
            b
        }
        empty => empty.insert(FunctionBuilder::new(func_name(index), sig)),
    };
    builder.set_type_checks(!ctx.unchecked);
    let (mut locals, mut stack, mut control, mut heap_cache, mut constants) = (
        std::mem::take(&mut ctx.locals),
        std::mem::take(&mut ctx.stack),
        std::mem::take(&mut ctx.control),
        std::mem::take(&mut ctx.heap_cache),
        std::mem::take(&mut ctx.constants),
    );
    let mut fixed_locals = std::mem::take(&mut ctx.fixed_locals);
    fixed_locals.clear();
    // Known facts serve this translation only.
    let facts = ctx.facts_known.then(|| std::mem::take(&mut ctx.facts));
    ctx.facts_known = false;
    constants.clear();
    locals.clear();
    stack.clear();
    control.clear();
    heap_cache.clear();
    let mut t = FuncTranslator {
        info,
        index,
        bounds_checks,
        offset: range.start,
        b: builder,
        vmctx: IrValue::from_u32(0),
        locals,
        stack,
        control,
        reachable: true,
        skipped_depth: 0,
        refs: calls::Refs::default(),
        stack_limit: None,
        heap_cache,
        constants_block: None,
        constants,
        fixed_locals,
        facts,
        loops_seen: 0,
        pending_flag: None,
    };
    let translated = t.translate(&body, decoded);
    let limit = t.stack_limit;
    (
        ctx.locals,
        ctx.stack,
        ctx.control,
        ctx.heap_cache,
        ctx.constants,
    ) = (t.locals, t.stack, t.control, t.heap_cache, t.constants);
    ctx.fixed_locals = t.fixed_locals;
    if let Some(facts) = t.facts {
        ctx.facts = facts;
    }
    translated?;
    let builder = ctx.builder.as_mut().expect("set above");
    let finished = if ctx.uncompacted {
        builder.finish_uncompacted()
    } else {
        builder.finish()
    };
    let mut func = finished.map_err(|e| WasmError::Translate {
        func: index,
        offset: range.end,
        message: e.to_string(),
    })?;
    // Global values survive finalization's compaction unchanged.
    func.stack_limit = limit;
    Ok(func)
}

/// The state of one function's translation; see the module docs.
pub(crate) struct FuncTranslator<'a> {
    info: &'a ModuleInfo,
    index: u32,
    /// How memory accesses are kept in bounds (`memory.rs`).
    bounds_checks: BoundsChecks,
    /// Byte offset of the operator being translated (for errors).
    offset: usize,
    b: &'a mut FunctionBuilder,
    /// The entry block's `vmctx` parameter (dominates everything).
    vmctx: IrValue,
    locals: Vec<Variable>,
    /// The operand stack.
    stack: Vec<IrValue>,
    /// Open structured instructions, the function's own frame at the bottom.
    control: Vec<Frame>,
    /// Whether the current point can be reached; when false operators are skipped.
    reachable: bool,
    /// While unreachable: structured instructions opened (and skipped) since.
    skipped_depth: u32,
    /// External functions and signatures declared in the function's preamble.
    refs: calls::Refs,
    /// The global value holding the stack limit.
    stack_limit: Option<kestrel_ir::GlobalValue>,
    /// Memory pointers and addresses computed so far, reusable where they dominate
    /// (`memory.rs`).
    heap_cache: memory::HeapCache,
    /// Per local, its value for the whole function when the body is known never to assign
    /// it (a parameter as passed, a declared local's zero, both defined in the entry block,
    /// so they dominate every read): reads take it directly, without SSA construction
    /// (which would find the same value, through a phi per enclosing loop header made and
    /// then removed as trivial).
    fixed_locals: Vec<Option<IrValue>>,
    /// What validation learned of the body (which locals it assigns, and per loop the
    /// locals it reads and never assigns), when known.
    facts: Option<BodyFacts>,
    /// The `loop` operators met so far (translated or skipped): the next one's index in
    /// `facts.loops`.
    loops_seen: usize,
    /// The block whose integer constants `constants` lists (`numeric.rs`).
    constants_block: Option<kestrel_ir::Block>,
    constants: Vec<(Type, i64, IrValue)>,
    /// The stack's top is this `i8` comparison result, standing for its `i32` zero
    /// extension, which is emitted only if the next operator needs the `i32` (a branch or
    /// `select` condition takes the comparison itself).
    pending_flag: Option<IrValue>,
}

type Res<T = ()> = Result<T, WasmError>;

impl FuncTranslator<'_> {
    /// Turn a builder error into [`WasmError::Translate`] at the current operator.
    fn err(&self, e: kestrel_ir::builder::BuilderError) -> WasmError {
        WasmError::Translate {
            func: self.index,
            offset: self.offset,
            message: e.to_string(),
        }
    }

    fn unsupported(&self, what: impl Into<String>) -> WasmError {
        WasmError::Unsupported {
            offset: self.offset,
            feature: what.into(),
        }
    }

    fn pop(&mut self) -> IrValue {
        // Validation guarantees the operand stack holds what each operator consumes.
        self.stack
            .pop()
            .expect("validated: operand stack underflow")
    }

    /// Pop a branch or `select` condition. A comparison's `i32` result is `uextend` of the
    /// comparison's `i8`; the condition takes the `i8` itself, so the backend can fuse the
    /// comparison into the branch (the `uextend` is left without uses).
    fn pop_condition(&mut self) -> IrValue {
        let v = self.pop();
        if self.pending_flag.take() == Some(v) {
            return v;
        }
        let dfg = &self.b.func().dfg;
        if let ValueDef::Result(inst, 0) = dfg.value_def(dfg.resolve(v)) {
            if let InstructionData::Unary {
                opcode: Opcode::Uextend,
                arg,
            } = *dfg.inst(inst)
            {
                if let ValueDef::Result(cmp, 0) = dfg.value_def(dfg.resolve(arg)) {
                    if matches!(dfg.inst(cmp).opcode(), Opcode::Icmp | Opcode::Fcmp) {
                        return arg;
                    }
                }
            }
        }
        v
    }

    /// Push a comparison's `i8` result as the Wasm `i32` it stands for (see
    /// `pending_flag`).
    fn push_flag(&mut self, flag: IrValue) {
        self.stack.push(flag);
        self.pending_flag = Some(flag);
    }

    /// Emit the pending comparison's `i32` extension in its place on the stack.
    fn materialize_flag(&mut self) -> Res {
        let Some(flag) = self.pending_flag.take() else {
            return Ok(());
        };
        let wide = self
            .b
            .ins()
            .uextend(Type::I32, flag)
            .map_err(|e| self.err(e))?;
        let top = self
            .stack
            .last_mut()
            .expect("a pending flag is on the stack");
        debug_assert_eq!(*top, flag, "the pending flag is the stack's top");
        *top = wide;
        Ok(())
    }

    fn pop2(&mut self) -> (IrValue, IrValue) {
        let y = self.pop();
        let x = self.pop();
        (x, y)
    }

    fn peek_n(&self, n: usize) -> &[IrValue] {
        &self.stack[self.stack.len() - n..]
    }

    fn translate(
        &mut self,
        body: &FunctionBody,
        decoded: Option<&mut crate::features::DecodedOps<'_>>,
    ) -> Res {
        self.prologue(body)?;
        if let Some(ops) = decoded {
            for (op, offset) in ops.drain(..) {
                self.translate_at(op, offset)?;
            }
            return Ok(());
        }
        let mut ops = body
            .get_operators_reader()
            .map_err(WasmError::from_parser)?;
        while !ops.eof() {
            let (op, offset) = ops.read_with_offset().map_err(WasmError::from_parser)?;
            self.translate_at(op, offset)?;
        }
        Ok(())
    }

    /// Translate operator `op`, found at byte `offset` of the module.
    fn translate_at(&mut self, op: Operator, offset: usize) -> Res {
        self.offset = offset;
        // The operator's byte offset in the module is the source location of what it
        // becomes: a trap reports it, and debug info shows it.
        self.b.set_srcloc(u32::try_from(offset).ok());
        if !self.reachable {
            return self.skip_op(&op);
        }
        if !matches!(
            op,
            Operator::BrIf { .. }
                | Operator::If { .. }
                | Operator::Select
                | Operator::TypedSelect { .. }
        ) {
            self.materialize_flag()?;
        }
        self.translate_op(op)
    }

    /// Entry block: `vmctx` and parameters, locals zeroed, the stack limit, the function
    /// frame.
    fn prologue(&mut self, body: &FunctionBody) -> Res {
        let entry = self.b.create_block();
        self.b.switch_to_block(entry).map_err(|e| self.err(e))?;
        self.b.seal_block(entry).map_err(|e| self.err(e))?;
        let params = self
            .b
            .append_block_params_for_function_params(entry)
            .map_err(|e| self.err(e))?;
        self.vmctx = params[0];
        for &p in &params[1..] {
            let ty = self.b.func().dfg.value_type(p);
            let var = self.b.declare_var(ty);
            self.b.def_var(var, p).map_err(|e| self.err(e))?;
            let fixed = self.never_written(self.locals.len()).then_some(p);
            self.locals.push(var);
            self.fixed_locals.push(fixed);
        }
        let mut locals = body.get_locals_reader().map_err(WasmError::from_parser)?;
        for _ in 0..locals.get_count() {
            let offset = locals.original_position();
            let (count, ty) = locals.read().map_err(WasmError::from_parser)?;
            let ty = sig::ir_type(ty, offset)?;
            let zero = self.zero(ty)?;
            for _ in 0..count {
                let var = self.b.declare_var(ty);
                self.b.def_var(var, zero).map_err(|e| self.err(e))?;
                let fixed = self.never_written(self.locals.len()).then_some(zero);
                self.locals.push(var);
                self.fixed_locals.push(fixed);
            }
        }
        self.declare_stack_limit();
        let results = self.info.func_type(self.index).results().to_vec();
        self.push_function_frame(&results)
    }

    /// `stack_limit = load(load(vmctx + LIMITS) + STACK_LIMIT)`: the prologue traps with
    /// `stk_ovf` before the frame would pass the store's limit.
    fn declare_stack_limit(&mut self) {
        let flags = trusted_readonly();
        let vmctx = self.b.create_global_value(GlobalValueData::VMContext);
        let limits = self.b.create_global_value(GlobalValueData::Load {
            base: vmctx,
            offset: offsets::LIMITS,
            global_type: Type::I64,
            flags,
        });
        let limit = self.b.create_global_value(GlobalValueData::Load {
            base: limits,
            offset: offsets::STACK_LIMIT,
            global_type: Type::I64,
            flags: MemFlags::trusted(),
        });
        self.stack_limit = Some(limit);
    }

    /// Whether local `k` is known never to be assigned by the body.
    fn never_written(&self, k: usize) -> bool {
        self.facts
            .as_ref()
            .is_some_and(|f| !f.written.get(k).copied().unwrap_or(false))
    }

    fn zero(&mut self, ty: Type) -> Res<IrValue> {
        let v = match ty {
            Type::F32 => self.b.ins().f32const(0.0),
            Type::F64 => self.b.ins().f64const(0.0),
            _ => self.b.ins().iconst(ty, 0),
        };
        v.map_err(|e| self.err(e))
    }

    /// While unreachable: track nesting, and resume at the `else` or `end` of the frame the
    /// unreachable code is in.
    fn skip_op(&mut self, op: &Operator) -> Res {
        match op {
            Operator::Block { .. } | Operator::Loop { .. } | Operator::If { .. } => {
                if let Operator::Loop { .. } = op {
                    self.loops_seen += 1;
                }
                self.skipped_depth += 1;
            }
            Operator::Else if self.skipped_depth == 0 => self.op_else()?,
            Operator::End if self.skipped_depth == 0 => self.op_end()?,
            Operator::End => self.skipped_depth -= 1,
            _ => {}
        }
        Ok(())
    }

    fn translate_op(&mut self, op: Operator) -> Res {
        use Operator as O;
        match op {
            O::Nop => {}
            O::Unreachable => {
                self.b
                    .ins()
                    .trap(crate::trap::UNREACHABLE)
                    .map_err(|e| self.err(e))?;
                self.reachable = false;
            }
            O::Block { blockty } => self.op_block(blockty)?,
            O::Loop { blockty } => self.op_loop(blockty)?,
            O::If { blockty } => self.op_if(blockty)?,
            O::Else => self.op_else()?,
            O::End => self.op_end()?,
            O::Br { relative_depth } => self.op_br(relative_depth)?,
            O::BrIf { relative_depth } => self.op_br_if(relative_depth)?,
            O::BrTable { targets } => self.op_br_table(&targets)?,
            O::Return => self.op_return()?,
            O::Drop => {
                self.pop();
            }
            O::Select | O::TypedSelect { .. } => {
                let cond = self.pop_condition();
                let (x, y) = self.pop2();
                let v = self.b.ins().select(cond, x, y).map_err(|e| self.err(e))?;
                self.stack.push(v);
            }
            O::LocalGet { local_index } => {
                let v = match self.fixed_locals[local_index as usize] {
                    Some(v) => v,
                    None => {
                        let var = self.locals[local_index as usize];
                        self.b.use_var(var).map_err(|e| self.err(e))?
                    }
                };
                self.stack.push(v);
            }
            O::LocalSet { local_index } => {
                let v = self.pop();
                let var = self.locals[local_index as usize];
                self.b.def_var(var, v).map_err(|e| self.err(e))?;
            }
            O::LocalTee { local_index } => {
                let v = *self.stack.last().expect("validated: local.tee operand");
                let var = self.locals[local_index as usize];
                self.b.def_var(var, v).map_err(|e| self.err(e))?;
            }
            O::GlobalGet { global_index } => self.op_global_get(global_index)?,
            O::GlobalSet { global_index } => self.op_global_set(global_index)?,
            O::Call { function_index } => self.op_call(function_index, false)?,
            O::CallIndirect {
                type_index,
                table_index,
            } => self.op_call_indirect(type_index, table_index, false)?,
            O::ReturnCall { function_index } => self.op_call(function_index, true)?,
            O::ReturnCallIndirect {
                type_index,
                table_index,
            } => self.op_call_indirect(type_index, table_index, true)?,
            O::MemorySize { mem } => self.op_memory_size(mem)?,
            O::MemoryGrow { mem } => self.op_memory_grow(mem)?,
            op => {
                if !self.translate_memory_access(&op)?
                    && !self.translate_numeric(&op)?
                    && !self.translate_reference(&op)?
                    && !self.translate_bulk_memory(&op)?
                {
                    return Err(self.unsupported(format!("operator {op:?}")));
                }
            }
        }
        Ok(())
    }
}

/// Flags for loads of runtime structures that never change while code runs but are valid
/// only where the code checked them (a `funcref`'s fields after its null check).
fn trusted_readonly() -> MemFlags {
    let mut f = MemFlags::trusted();
    f.readonly = true;
    f
}

/// Flags for fields reached from the vmctx through fixed pointers (memory and table
/// definitions, global cells, imported functions, a guard-page memory's base): present
/// wherever the function runs and unchanged while it runs, so loads of them may be merged
/// across calls and hoisted out of loops.
fn fixed_field() -> MemFlags {
    let mut f = trusted_readonly();
    f.can_move = true;
    f
}

/// Flags for runtime fields that code or libcalls change (memory size and an
/// explicitly-checked memory's base, table lengths and bases, mutable globals): the `vmctx`
/// region, apart from linear memory (`heap`) and table entries (`table`).
fn mutable_field() -> MemFlags {
    let mut f = MemFlags::trusted();
    f.alias_region = Some(AliasRegion::Vmctx);
    f
}

/// Flags for a table entry's accesses: the `table` region.
fn table_entry() -> MemFlags {
    let mut f = MemFlags::trusted();
    f.alias_region = Some(AliasRegion::Table);
    f
}

/// The trap code `call_indirect`'s checks and `unreachable` use are defined in
/// [`crate::trap`]; this one is the IR's own.
const HEAP_OOB: TrapCode = TrapCode::HEAP_OUT_OF_BOUNDS;
