//! The compile driver: one function from IR to machine code.
//!
//! # Contract
//!
//! Requires a function the verifier accepts. Reads as the pipeline:
//! block order → lower → register allocation (with the checker when asked) → frame layout →
//! emission (prologue, each instruction with the allocator's edits around it) →
//! `MachBuffer::finish`. Returns the code with its relocations and trap sites, or the first
//! error: an unsupported feature, an allocation failure, a buffer failure (with
//! `validate_buffer`, also a violated buffer invariant). Never panics on a verified
//! function; a panic is a backend bug.
//!
//! Cost: the sum of the phases' costs, each linear in the function (see each module's contract);
//! [`compile_timed`] reads the clock only between phases. A [`CompileContext`] kept across
//! compilations ([`compile_in`]) saves the allocator's buffers from one function to the
//! next: for small functions, allocating memory is a large share of the time.
//!
//! The [`Chaos`] control reaches every optional choice: the block order, each merge in
//! lowering, the allocator (through one seed from [`Chaos::derive_seed`]) and the buffer's
//! peepholes. With a disabled control the output is the optimizing pipeline's, exactly.

use std::any::Any;
use std::time::{Duration, Instant};

use kestrel_ir::{Function, Type};
use kestrel_regalloc::{Function as _, MachineEnv, Output, ProgPoint};

use super::blockorder::{BlockLoweringOrder, OrderScratch};
use super::buffer::{Label, MachBuffer, MachBufferFinalized};
use super::lower::{lower_reusing, LowerBackend, LowerScratch, RulesFired};
use super::vcode::{CodeMemory, VCode};
use super::{CodegenError, CompiledCode, EmitCtx, MachInst};
use crate::chaos::Chaos;
use crate::isa::CompileInput;
use crate::settings::Flags;

/// What the driver needs from an ISA beyond lowering.
pub trait Backend: LowerBackend {
    /// The ISA's name in messages (`x86_64`, `aarch64`).
    const ISA_NAME: &'static str;

    /// The registers the allocator may use.
    fn machine_env(&self) -> &MachineEnv;
    /// The frame of `f` once allocation is known (spill slots, callee-saved registers);
    /// `types` is what [`check_lowerable_types`] found in `f`.
    fn compute_frame(
        &self,
        f: &Function,
        vcode: &VCode<Self::MInst>,
        ra: &Output,
        types: ValueTypes,
    ) -> <Self::MInst as MachInst>::Frame;
}

/// The most bytes a function's stack slots may take together. Frames are addressed with
/// signed 32-bit displacements (x86-64) and sized by 32-bit arithmetic on both ISAs; 1 GiB
/// leaves room for spill slots, saved registers and outgoing arguments.
pub const MAX_STACK_SLOT_BYTES: u64 = 1 << 30;

/// What [`check_lowerable_types`] learns of a function's value types in its one pass, for
/// the stages after it (so none of them scans the values again).
#[derive(Clone, Copy, Debug, Default)]
pub struct ValueTypes {
    /// Some value has a vector type (spill slots are then 16 bytes).
    pub has_vectors: bool,
}

/// Refuse a function that uses a type the ISA does not lower (`f16`, `f128`, and the vectors
/// its `value_regs` does not place: all of them on an ISA without vector lowering), naming
/// the type, the function and the ISA, before any stage sees it; otherwise say what the
/// types hold ([`ValueTypes`]). Cost: O(values + signature entries).
pub fn check_lowerable_types(
    f: &Function,
    isa: &str,
    value_regs: impl Fn(Type) -> Option<(kestrel_regalloc::RegClass, usize)>,
) -> Result<ValueTypes, CodegenError> {
    let lowerable = |ty: Type| !ty.is_interpreter_only() || value_regs(ty).is_some();
    let refuse = |ty: Type| {
        let kind = if ty.is_vector() { "vector" } else { "f16/f128" };
        Err(CodegenError::Unsupported {
            opcode: None,
            // The message names the type already.
            ty: None,
            what: format!(
                "type {ty} in function {} ({kind} lowering not implemented on {isa})",
                f.name
            ),
        })
    };
    let signatures = std::iter::once(&f.signature).chain(f.signatures.values());
    for sig in signatures {
        for p in sig.params.iter().chain(&sig.returns) {
            if !lowerable(p.value_type) {
                return refuse(p.value_type);
            }
        }
    }
    let mut types = ValueTypes::default();
    for v in 0..f.dfg.num_values() {
        let v = kestrel_ir::Value::from_u32(v as u32);
        if !f.dfg.value_is_valid(v) {
            continue;
        }
        let ty = f.dfg.value_type(v);
        if !lowerable(ty) {
            return refuse(ty);
        }
        types.has_vectors |= ty.is_vector();
    }
    Ok(types)
}

/// Refuse a function whose stack slots, each rounded up to its alignment, pass
/// [`MAX_STACK_SLOT_BYTES`] (instead of a frame size that wraps). O(stack slots).
fn check_stack_slots(f: &Function) -> Result<(), CodegenError> {
    let total: u64 = f
        .stack_slots
        .values()
        .map(|s| u64::from(s.size).next_multiple_of(1u64 << s.align_shift.min(63)))
        .sum();
    if total > MAX_STACK_SLOT_BYTES {
        return Err(CodegenError::unsupported(format!(
            "stack slots of {total} bytes in all (at most {MAX_STACK_SLOT_BYTES} bytes per function)"
        )));
    }
    Ok(())
}

/// Knobs of one compilation.
#[derive(Clone, Copy, Debug, Default)]
pub struct CompileOptions {
    /// Run the register-allocation checker (an allocator bug becomes an error).
    pub check_regalloc: bool,
    /// Also print the VCode before and after allocation into the result.
    pub keep_text: bool,
    /// Run the `MachBuffer` validator after every bind and island (in any build); a
    /// violation becomes [`super::buffer::BufferError::Invariant`].
    pub validate_buffer: bool,
    /// Report the selection rules that fired in [`CompiledCode::rules_fired`].
    pub coverage: bool,
    /// Lowering choices that cost compile time for better code, on at opt level `speed`:
    /// a block's branch condition read ahead of the other pure instructions at its end
    /// (`machinst/tail_order.rs`), and the selection rules that ask `Lower::for_speed` (on
    /// x86-64: `lea` for sums and small multiplies, loads kept apart from live operands).
    pub lower_for_speed: bool,
    /// `get_pinned_reg`/`set_pinned_reg` may be lowered (`Flags::enable_pinned_reg`; the
    /// backend then keeps the pinned register out of allocation).
    pub pinned_reg: bool,
}

/// Wall-clock time spent in each phase, accumulated over the compilations it is passed to.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseTimes {
    /// The IR verifier (only through `TargetIsa::compile` and its shorthands;
    /// `compile_timed` starts after it).
    pub verify: Duration,
    /// The mid-end (only at `OptLevel::Speed`).
    pub mid_end: Duration,
    /// Block order (critical-edge splitting, layout).
    pub block_order: Duration,
    /// Lowering to VCode.
    pub lower: Duration,
    /// Register allocation, phase by phase (the checker included when it is on).
    pub regalloc: kestrel_regalloc::PhaseTimes,
    /// Frame layout, emission and `MachBuffer::finish`.
    pub emit: Duration,
    /// The most vregs live at once in any function compiled (register pressure).
    pub max_live: usize,
    /// The allocator's counted work, phase by phase (machine-independent, unlike the
    /// times: what scaling checks compare).
    pub regalloc_work: kestrel_regalloc::Work,
    /// The other phases' counted work.
    pub work: CountedWork,
}

/// Counted work of the phases around the allocator (a few additions per block or
/// instruction, summed where each loop ends), for the same checks as
/// [`kestrel_regalloc::Work`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountedWork {
    /// Block order: see [`crate::machinst::blockorder::BlockLoweringOrder::work`].
    pub block_order: u64,
    /// Lowering: instructions and values, lowered blocks and their successors, instructions
    /// read and their results, arguments copied, and the finished code's instructions and
    /// vregs.
    pub lower: u64,
    /// Emission: blocks, instructions and allocator edits emitted, and the buffer's branch
    /// peephole trips and label uses resolved ([`MachBuffer::steps`]).
    pub emit: u64,
}

impl std::ops::AddAssign for CountedWork {
    fn add_assign(&mut self, o: CountedWork) {
        self.block_order += o.block_order;
        self.lower += o.lower;
        self.emit += o.emit;
    }
}

impl std::ops::AddAssign<&PhaseTimes> for PhaseTimes {
    fn add_assign(&mut self, t: &PhaseTimes) {
        self.verify += t.verify;
        self.mid_end += t.mid_end;
        self.block_order += t.block_order;
        self.lower += t.lower;
        self.regalloc += t.regalloc;
        self.emit += t.emit;
        self.max_live = self.max_live.max(t.max_live);
        self.regalloc_work += t.regalloc_work;
        self.work += t.work;
    }
}

impl PhaseTimes {
    /// Block order and lowering together (everything before allocation).
    pub fn front(&self) -> Duration {
        self.block_order + self.lower
    }

    /// Every phase.
    pub fn total(&self) -> Duration {
        self.verify + self.mid_end + self.front() + self.regalloc.total() + self.emit
    }
}

/// Memory kept between compilations: a client compiling many functions keeps one per
/// thread and passes it to every compile ([`compile_in`], `TargetIsa::compile_function_in`).
/// Only capacity carries over from one function to the next, never content: the result
/// of a compile does not depend on what the context compiled before.
#[derive(Default)]
pub struct CompileContext {
    order: BlockLoweringOrder,
    order_scratch: OrderScratch,
    lower: LowerScratch,
    /// The [`CodeMemory`] of the ISA that compiled last (its last VCode and the builder's
    /// buffers), which the next compile for the same ISA builds in.
    code_memory: Option<Box<dyn Any + Send + Sync>>,
    regalloc: kestrel_regalloc::Context,
    opt: kestrel_opt::OptContext,
    /// The mid-end's copy of the last function it optimized (see [`CompileContext::give_back`]).
    optimized: Function,
    /// The result of the last [`compile_in_place`], kept for the caller to read.
    output: CompiledCode,
    /// Vectors of a result the caller is done with, which the next compile's buffer fills
    /// instead of allocating its own.
    recycled: MachBufferFinalized,
}

impl CompileContext {
    /// An empty context; its buffers grow with the first functions compiled in it.
    pub fn new() -> CompileContext {
        CompileContext::default()
    }

    /// Lends the vectors of the result kept by the last compile in place to the next
    /// compile (the caller is done with that result).
    fn recycle_last_output(&mut self) {
        let last = std::mem::take(&mut self.output);
        self.recycled = MachBufferFinalized {
            data: last.code,
            relocs: last.relocs,
            traps: last.traps,
            unwind: last.unwind,
            srclocs: last.srclocs,
            label_offsets: Vec::new(),
        };
    }

    /// Keeps the memory of an optimized copy from [`run_mid_end`] once it was compiled, for
    /// the next function's copy.
    pub fn give_back(&mut self, f: std::borrow::Cow<'_, Function>) {
        if let std::borrow::Cow::Owned(func) = f {
            self.optimized = func;
        }
    }
}

/// What [`compile_function`] does before the shared pipeline: verify `f` (unless the caller has,
/// `verified`), then run the mid-end at `level`, adding each step's time to `times`.
pub fn verify_and_optimize<'f>(
    ctx: &mut CompileContext,
    f: &'f Function,
    verified: bool,
    level: kestrel_opt::OptLevel,
    check: bool,
    mut times: Option<&mut PhaseTimes>,
) -> Result<std::borrow::Cow<'f, Function>, CodegenError> {
    verify_timed(f, verified, times.as_deref_mut())?;
    // At opt level none the mid-end does not run, and its time stays zero.
    let mid_end = level != kestrel_opt::OptLevel::None;
    let start = (times.is_some() && mid_end).then(Instant::now);
    let optimized = run_mid_end(ctx, f, level, check)?;
    if let (Some(t), Some(start)) = (times, start) {
        t.mid_end += start.elapsed();
    }
    Ok(optimized)
}

/// Run the IR verifier on `f` unless the caller has (`verified`), adding its time to `times`.
fn verify_timed(
    f: &Function,
    verified: bool,
    times: Option<&mut PhaseTimes>,
) -> Result<(), CodegenError> {
    let start = times.is_some().then(Instant::now);
    if !verified {
        if let Err(errors) = kestrel_ir::verify_function(f) {
            return Err(CodegenError::Verifier(errors.to_string()));
        }
    }
    if let (Some(t), Some(start)) = (times, start) {
        t.verify += start.elapsed();
    }
    Ok(())
}

/// [`verify_and_optimize`] for a caller that no longer needs `f` as it was: the mid-end
/// works on `f` itself instead of a copy (so a front end that hands over each function it
/// built pays for no copy), leaving it optimized.
pub fn verify_and_optimize_in_place(
    ctx: &mut CompileContext,
    f: &mut Function,
    verified: bool,
    level: kestrel_opt::OptLevel,
    check: bool,
    mut times: Option<&mut PhaseTimes>,
) -> Result<(), CodegenError> {
    verify_timed(f, verified, times.as_deref_mut())?;
    if level == kestrel_opt::OptLevel::None {
        return Ok(());
    }
    let start = times.is_some().then(Instant::now);
    kestrel_opt::optimize_in(&mut ctx.opt, f, level, check || cfg!(debug_assertions))?;
    if let (Some(t), Some(start)) = (times, start) {
        t.mid_end += start.elapsed();
    }
    Ok(())
}

/// The function to lower: `f` itself at `OptLevel::None`, else an optimized copy (verified
/// again when `check`, or in debug builds, so a mid-end bug is an error, not wrong code).
/// The mid-end works in `ctx`'s memory.
pub fn run_mid_end<'f>(
    ctx: &mut CompileContext,
    f: &'f Function,
    level: kestrel_opt::OptLevel,
    check: bool,
) -> Result<std::borrow::Cow<'f, Function>, CodegenError> {
    if level == kestrel_opt::OptLevel::None {
        return Ok(std::borrow::Cow::Borrowed(f));
    }
    // Copied into the last copy's memory (handed back through `give_back`).
    let mut func = std::mem::take(&mut ctx.optimized);
    func.clone_from(f);
    kestrel_opt::optimize_in(
        &mut ctx.opt,
        &mut func,
        level,
        check || cfg!(debug_assertions),
    )?;
    Ok(std::borrow::Cow::Owned(func))
}

/// The compile every ISA's `TargetIsa::compile` runs once it has built its backend from
/// the flags: verify `f` (unless `flags.verified`), run the mid-end at `flags.opt_level`
/// (on a copy of a borrowed function, on a consumed one itself), then the pipeline
/// ([`compile_in`]), all in `ctx`'s memory.
pub fn compile_function<B: Backend>(
    ctx: &mut CompileContext,
    backend: &B,
    f: CompileInput<'_>,
    flags: &Flags,
    chaos: &mut Chaos,
    mut times: Option<&mut PhaseTimes>,
) -> Result<CompiledCode, CodegenError> {
    let options = CompileOptions::from(flags);
    let (verified, level, check) = (flags.verified, flags.opt_level, flags.check_regalloc);
    if level != kestrel_opt::OptLevel::None {
        // Before the mid-end sees the function (`compile_in` checks again for its own callers).
        let func: &Function = match &f {
            CompileInput::Borrowed(f) => f,
            CompileInput::Consumed(f) => f,
        };
        check_lowerable_types(func, B::ISA_NAME, |ty| backend.value_regs(ty))?;
    }
    let timed = times.as_deref_mut();
    match f {
        CompileInput::Borrowed(f) => {
            let f = verify_and_optimize(ctx, f, verified, level, check, timed)?;
            let compiled = compile_in(ctx, backend, &f, options, chaos, times);
            ctx.give_back(f);
            compiled
        }
        CompileInput::Consumed(f) => {
            verify_and_optimize_in_place(ctx, f, verified, level, check, timed)?;
            compile_in(ctx, backend, f, options, chaos, times)
        }
    }
}

impl From<&Flags> for CompileOptions {
    /// The pipeline's share of the shared settings.
    fn from(flags: &Flags) -> CompileOptions {
        CompileOptions {
            check_regalloc: flags.check_regalloc,
            keep_text: flags.keep_text,
            validate_buffer: flags.validate,
            coverage: flags.coverage,
            lower_for_speed: flags.opt_level == kestrel_opt::OptLevel::Speed,
            pinned_reg: flags.enable_pinned_reg,
        }
    }
}

/// Compile `f` with `backend`.
pub fn compile<B: Backend>(
    backend: &B,
    f: &Function,
    options: CompileOptions,
    chaos: &mut Chaos,
) -> Result<CompiledCode, CodegenError> {
    compile_timed(backend, f, options, chaos, None)
}

/// [`compile`], adding each phase's time to `times` when given (the clock is read only then).
pub fn compile_timed<B: Backend>(
    backend: &B,
    f: &Function,
    options: CompileOptions,
    chaos: &mut Chaos,
    times: Option<&mut PhaseTimes>,
) -> Result<CompiledCode, CodegenError> {
    compile_in(
        &mut CompileContext::new(),
        backend,
        f,
        options,
        chaos,
        times,
    )
}

/// [`compile_timed`] in `ctx`'s memory.
pub fn compile_in<B: Backend>(
    ctx: &mut CompileContext,
    backend: &B,
    f: &Function,
    options: CompileOptions,
    chaos: &mut Chaos,
    mut times: Option<&mut PhaseTimes>,
) -> Result<CompiledCode, CodegenError> {
    let mut clock = times.as_ref().map(|_| Instant::now());
    let types = check_lowerable_types(f, B::ISA_NAME, |ty| backend.value_regs(ty))?;
    check_stack_slots(f)?;
    ctx.order.rebuild(f, chaos, &mut ctx.order_scratch);
    lap(&mut times, &mut clock, |t| &mut t.block_order);
    if let Some(t) = times.as_deref_mut() {
        t.work.block_order += ctx.order.work();
    }
    let mut rules_fired = options.coverage.then(RulesFired::default);
    // The code memory is kept type-erased (one context serves any ISA); a context last
    // used for another ISA starts afresh.
    let kept = ctx
        .code_memory
        .take()
        .and_then(|memory| memory.downcast::<CodeMemory<B::MInst>>().ok());
    let mut code_memory = kept.unwrap_or_default();
    ctx.lower.for_speed = options.lower_for_speed;
    ctx.lower.pinned_reg = options.pinned_reg;
    let lowered = lower_reusing(
        backend,
        f,
        &ctx.order,
        chaos,
        rules_fired.as_mut(),
        &mut ctx.lower,
        &mut code_memory,
    );
    if let Err(e) = lowered {
        ctx.code_memory = Some(code_memory);
        return Err(e);
    }
    if types.has_vectors {
        code_memory
            .code
            .set_extra_call_clobbers(B::MInst::vector_call_clobbers());
    }
    // The code stays in the kept memory (it is large to move); the memory's other fields
    // serve emission beside it.
    let vcode = &code_memory.code;
    lap(&mut times, &mut clock, |t| &mut t.lower);
    if let Some(t) = times.as_deref_mut() {
        t.work.lower += ctx.lower.work;
    }
    let ra_options = kestrel_regalloc::Options {
        check: options.check_regalloc,
        perturb: chaos.derive_seed(),
        timing: times.is_some(),
        // Lowering's output meets the allocator's contract (debug builds and checked
        // compiles validate it, and the tests and fuzzers run those), so a release compile
        // without the checker computes only the block facts.
        trust_input: !options.check_regalloc && !cfg!(debug_assertions),
    };
    let ra =
        kestrel_regalloc::allocate_in(&mut ctx.regalloc, vcode, backend.machine_env(), ra_options)?;
    if let Some(t) = times.as_deref_mut() {
        t.regalloc += ra.times;
        t.max_live = t.max_live.max(ra.stats.max_live);
        t.regalloc_work += ra.stats.work;
    }
    // The allocator timed itself; restart the clock for emission.
    clock = times.as_ref().map(|_| Instant::now());
    let frame = backend.compute_frame(f, vcode, ra, types);
    code_memory
        .buffer
        .recycle(std::mem::take(&mut ctx.recycled));
    // About 4 bytes per instruction on the targets here, plus the prologue and epilogues.
    let mut buf = MachBuffer::reusing(
        std::mem::take(&mut code_memory.buffer),
        4 * vcode.insts().len() + 64,
        vcode.num_blocks(),
    );
    buf.set_validate(options.validate_buffer);
    emit(
        vcode,
        ra,
        &frame,
        chaos,
        &mut buf,
        &mut code_memory.block_labels,
    );
    let code_size_without_constants = buf.cur_offset();
    let (vcode_text, regalloc_text) = if options.keep_text {
        (vcode.pretty(None), vcode.pretty(Some(ra)))
    } else {
        (String::new(), String::new())
    };
    let done = buf.finish_into(chaos, &mut code_memory.buffer)?;
    lap(&mut times, &mut clock, |t| &mut t.emit);
    if let Some(t) = times {
        let code = &code_memory.code;
        t.work.emit +=
            (code.num_blocks() + code.insts().len() + ra.edits.len()) as u64 + buf.steps();
    }
    ctx.code_memory = Some(code_memory);
    Ok(CompiledCode {
        code: done.data,
        relocs: done.relocs,
        traps: done.traps,
        unwind: done.unwind,
        srclocs: done.srclocs,
        vcode_text,
        regalloc_text,
        code_size_without_constants,
        // At most `u16::MAX` rules: each ISA asserts its rule list fits.
        rules_fired: rules_fired.map_or_else(Vec::new, |r| r.iter().map(|k| k as u16).collect()),
    })
}

/// [`compile_in`] for a caller that reads each result before the next compile (a JIT or a
/// runtime copying the code out, a benchmark): the result stays in `ctx`, and the next
/// compile in place writes its code and metadata into the same vectors, so compiling many
/// functions allocates nothing for results once they have grown. The code is the same as
/// [`compile_in`]'s.
pub fn compile_in_place<'c, B: Backend>(
    ctx: &'c mut CompileContext,
    backend: &B,
    f: &Function,
    options: CompileOptions,
    chaos: &mut Chaos,
    times: Option<&mut PhaseTimes>,
) -> Result<&'c CompiledCode, CodegenError> {
    in_place(ctx, |ctx| {
        compile_in(ctx, backend, f, options, chaos, times)
    })
}

/// Runs `compile`, a compile in `ctx`, in place: the last result kept in `ctx` lends its
/// vectors to it, and its own result is kept in `ctx` for the caller to read (see
/// [`compile_in_place`]).
pub(crate) fn in_place(
    ctx: &mut CompileContext,
    compile: impl FnOnce(&mut CompileContext) -> Result<CompiledCode, CodegenError>,
) -> Result<&CompiledCode, CodegenError> {
    ctx.recycle_last_output();
    let code = compile(ctx)?;
    ctx.output = code;
    Ok(&ctx.output)
}

/// Adds the time since the last lap to `slot` and starts the next lap (only when timing).
#[inline]
fn lap(
    times: &mut Option<&mut PhaseTimes>,
    clock: &mut Option<Instant>,
    slot: fn(&mut PhaseTimes) -> &mut Duration,
) {
    if let (Some(t), Some(start)) = (times.as_deref_mut(), clock.as_mut()) {
        let now = Instant::now();
        *slot(t) += now - *start;
        *start = now;
    }
}

/// Emit the prologue and every block in order, with the allocator's edits, into `buf`;
/// `labels` is refilled with each block's label.
///
/// Edits are sorted by program point (the allocator's guarantee), so one cursor walks them
/// alongside the instructions: those before instruction `i`, then `i`, then those after it.
/// Before each, the ISA may emit an island (`MachInst::emit_island_if_needed`).
fn emit<I: MachInst>(
    vcode: &VCode<I>,
    ra: &Output,
    frame: &I::Frame,
    chaos: &mut Chaos,
    buf: &mut MachBuffer<I::LabelUse>,
    labels: &mut Vec<Label>,
) {
    labels.clear();
    labels.extend((0..vcode.num_blocks()).map(|_| buf.get_label()));
    let labels = &labels[..];
    let mut ctx = EmitCtx {
        frame,
        block_labels: labels,
        chaos,
    };
    I::emit_prologue(&mut ctx, buf);
    let mut edits = ra.edits.iter().peekable();
    let mut open_loc = 0;
    for (b, &label) in labels.iter().enumerate() {
        buf.bind_label(label, ctx.chaos);
        let range = vcode.block_insns(kestrel_regalloc::Block(b as u32));
        for i in range.iter() {
            // A source range starts before the edits that prepare the instruction.
            let loc = vcode.srclocs()[i.index()];
            if loc != open_loc {
                buf.end_srcloc();
                if loc != 0 {
                    buf.start_srcloc(loc);
                }
                open_loc = loc;
            }
            while let Some((_, e)) = edits.next_if(|(pt, _)| *pt == ProgPoint::before(i)) {
                I::emit_island_if_needed(&mut ctx, buf);
                I::emit_edit(e, &mut ctx, buf);
            }
            I::emit_island_if_needed(&mut ctx, buf);
            vcode.insts()[i.index()].emit(ra.inst_allocs(i), &mut ctx, buf);
            while let Some((_, e)) = edits.next_if(|(pt, _)| *pt == ProgPoint::after(i)) {
                I::emit_island_if_needed(&mut ctx, buf);
                I::emit_edit(e, &mut ctx, buf);
            }
        }
    }
    buf.end_srcloc();
    debug_assert!(edits.next().is_none(), "edits past the last instruction");
}
