//! Kestrel's reference interpreter: the semantics oracle.
//!
//! Runs functions of a module (the functions of one `.clif` file) on [`DataValue`]
//! arguments and returns their results or a trap with its code and instruction. Semantics
//! are exact (see [`ops`] for the value representation and NaN policy); every other Kestrel
//! component is tested against this crate.
//!
//! Contract. Requires: verified functions with a compact layout (what the parser and
//! `FunctionBuilder::finalize` produce); a violation the interpreter can detect is an
//! [`InterpError`], never a panic. Guarantees: no heap allocation per executed instruction or
//! per call once buffers have grown; runaway programs stop when their fuel runs out.
//!
//! ```
//! let text = "function %add(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = iadd v0, v1\n    return v2\n}\n";
//! let funcs = kestrel_ir::parse_functions(text, "add.clif").unwrap();
//! let mut interp = kestrel_interp::Interpreter::new(&funcs);
//! let out = interp.call("add", &[kestrel_interp::DataValue::I32(2), kestrel_interp::DataValue::I32(40)]);
//! assert_eq!(out.unwrap(), vec![kestrel_interp::DataValue::I32(42)]);
//! ```

mod exec;
mod libcall;
pub mod memory;
pub mod ops;
mod value;

use std::collections::HashMap;

use kestrel_ir::{Function, Inst, TrapCode, Type};

pub use value::DataValue;

/// Why a run did not produce results.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    /// The program trapped: part of its semantics, not an interpreter failure.
    #[error("trap {code} at {inst} in %{function}")]
    Trap { code: TrapCode, function: String, inst: Inst },
    #[error("out of fuel after {limit} instructions (a runaway loop?)")]
    OutOfFuel { limit: u64 },
    #[error("no function named %{0} in this module")]
    UnknownFunction(String),
    #[error("%{function} takes ({expected}) but was called with ({got})")]
    BadArguments { function: String, expected: String, got: String },
    #[error("%{function} has queued edits; compact it before running it")]
    NotCompact { function: String },
    #[error("%{function}: {inst}: {message}")]
    Invalid { function: String, inst: Inst, message: String },
    /// An exception thrown by `%__cranelift_throw` on its way to a handler; seen by the
    /// caller of the interpreter, nothing caught it.
    #[error("uncaught exception with tag {tag}")]
    Exception { tag: u32, payloads: [u128; 2], entry_fp: u64 },
}

impl InterpError {
    /// The trap code, when the run ended in a trap.
    pub fn trap_code(&self) -> Option<TrapCode> {
        match self {
            InterpError::Trap { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// How a call instruction's callee is reached.
#[derive(Copy, Clone, Debug)]
enum Callee {
    Local(usize),
    Libcall(libcall::Libcall),
    /// `%__cranelift_throw(entry_fp, exit_fp, exit_pc, tag, payload1, payload2)`, the test
    /// runner's throw routine: unwinds frames up to (not including) the one whose frame
    /// pointer is `entry_fp`, to the first `try_call` with a handler for `tag`.
    Throw,
    Unknown,
}

/// Per-function facts computed once.
#[derive(Debug)]
struct FuncInfo {
    /// Byte offset of each stack slot from the frame start.
    slot_offsets: Vec<u32>,
    frame_size: u32,
    frame_align: u32,
    /// Resolution of each `FuncRef`.
    callees: Vec<Callee>,
    /// Index of the `vmctx` parameter, if any.
    vmctx_param: Option<usize>,
}

/// An interpreter over one module of functions.
pub struct Interpreter<'f> {
    funcs: Vec<&'f Function>,
    info: Vec<FuncInfo>,
    by_name: HashMap<String, usize>,
    fuel_limit: Option<u64>,
    fuel_left: u64,
    depth: u32,
    memory: memory::Memory,
    /// Value slots of all active frames; each frame owns `num_values` slots from its base.
    regs: Vec<u128>,
    /// Branch arguments read before block parameters are written (parallel assignment).
    scratch: Vec<u128>,
    /// Arguments of the call being made.
    arg_buf: Vec<u128>,
    /// Results of the call that just returned.
    ret_buf: Vec<u128>,
    /// The pinned register (`get_pinned_reg`/`set_pinned_reg`): 0 when the interpreter is
    /// made, kept across calls as the machine register is.
    pinned_reg: u64,
}

/// Deepest call nesting before a call traps with `stk_ovf`.
pub const MAX_CALL_DEPTH: u32 = 1000;

impl<'f> Interpreter<'f> {
    /// An interpreter for `funcs`; calls between them resolve by name.
    pub fn new(funcs: &'f [Function]) -> Self {
        let funcs: Vec<&Function> = funcs.iter().collect();
        let mut by_name = HashMap::new();
        for (i, f) in funcs.iter().enumerate() {
            by_name.entry(name_key(&f.name)).or_insert(i);
        }
        let info = funcs.iter().map(|f| func_info(f, &by_name)).collect();
        Interpreter {
            funcs,
            info,
            by_name,
            fuel_limit: None,
            fuel_left: u64::MAX,
            depth: 0,
            memory: memory::Memory::default(),
            regs: Vec::new(),
            scratch: Vec::new(),
            arg_buf: Vec::new(),
            ret_buf: Vec::new(),
            pinned_reg: 0,
        }
    }

    /// Stop each call after `limit` executed instructions (`None`: no limit).
    pub fn with_fuel(mut self, limit: Option<u64>) -> Self {
        self.fuel_limit = limit;
        self
    }

    /// Instructions executed by the last call.
    pub fn fuel_used(&self) -> u64 {
        self.fuel_limit.unwrap_or(u64::MAX) - self.fuel_left
    }

    /// Call the function named `name` (with or without `%`).
    pub fn call(&mut self, name: &str, args: &[DataValue]) -> Result<Vec<DataValue>, InterpError> {
        let key = name.strip_prefix('%').unwrap_or(name);
        let index = *self
            .by_name
            .get(key)
            .ok_or_else(|| InterpError::UnknownFunction(key.to_string()))?;
        self.call_index(index, args)
    }

    /// Call the `index`-th function of the module.
    pub fn call_index(
        &mut self,
        index: usize,
        args: &[DataValue],
    ) -> Result<Vec<DataValue>, InterpError> {
        let func = self.funcs[index];
        let params: Vec<Type> = func.signature.params.iter().map(|p| p.value_type).collect();
        let got: Vec<Type> = args.iter().map(|a| a.ty()).collect();
        if params != got {
            return Err(InterpError::BadArguments {
                function: name_key(&func.name),
                expected: type_list(&params),
                got: type_list(&got),
            });
        }
        self.fuel_left = self.fuel_limit.unwrap_or(u64::MAX);
        self.depth = 0;
        self.regs.clear();
        self.memory.pop_to(0);
        let mut buf = std::mem::take(&mut self.arg_buf);
        buf.clear();
        buf.extend(args.iter().map(|a| a.to_slot()));
        self.invoke(index, buf)?;
        let returns = &func.signature.returns;
        Ok(returns
            .iter()
            .zip(&self.ret_buf)
            .map(|(p, &slot)| {
                DataValue::from_slot(p.value_type, slot)
                    .expect("verified signature types are valid")
            })
            .collect())
    }
}

fn name_key(name: &kestrel_ir::FunctionName) -> String {
    match name {
        kestrel_ir::FunctionName::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

fn type_list(types: &[Type]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn func_info(f: &Function, by_name: &HashMap<String, usize>) -> FuncInfo {
    let mut offset = 0u32;
    let mut frame_align = 16u32;
    let mut slot_offsets = Vec::with_capacity(f.stack_slots.len());
    for slot in f.stack_slots.values() {
        let align = 1u32 << slot.align_shift.min(12);
        frame_align = frame_align.max(align);
        offset = offset.next_multiple_of(align);
        slot_offsets.push(offset);
        offset = offset.saturating_add(slot.size);
    }
    let callees = f
        .ext_funcs
        .values()
        .map(|ext| {
            let key = name_key(&ext.name);
            match by_name.get(&key) {
                Some(&i) => Callee::Local(i),
                None if key == "__cranelift_throw" => Callee::Throw,
                None => libcall::Libcall::from_name(&key)
                    .map(Callee::Libcall)
                    .unwrap_or(Callee::Unknown),
            }
        })
        .collect();
    let vmctx_param = f
        .signature
        .params
        .iter()
        .position(|p| p.purpose == kestrel_ir::ArgumentPurpose::VMContext);
    FuncInfo {
        slot_offsets,
        frame_size: offset,
        frame_align,
        callees,
        vmctx_param,
    }
}
