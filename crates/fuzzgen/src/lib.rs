//! Random valid test cases for differential fuzzing: a small module of functions plus
//! argument sets for its entry function, drawn from fuzzer bytes.
//!
//! Contract. Requires nothing of the bytes: any input (even an empty one) gives a test case;
//! [`generate`] fails only when [`GenConfig::allow`] refuses a core opcode (`jump`, `return`,
//! `iconst.i32`). Guarantees, for every case:
//! - every function passes [`kestrel_ir::verify_function`] and never uses an opcode and
//!   controlling type that `allow` refuses;
//! - function `i` calls only functions `j > i` (no recursion), so every call terminates;
//! - every run terminates: branches go forward except the counted back edges of loops, and
//!   the estimated dynamic instruction count of one call of the entry stays under
//!   [`DYNAMIC_BUDGET`] (callees included);
//! - the observable results are defined identically on every correct backend (see the rules);
//! - the same bytes and configuration give the same case.
//!
//! # Generator rules
//!
//! Named so the fuzzer's reports and the code can refer to them.
//! - **nan-canon**: float arithmetic leaves the NaN payload unspecified (the interpreter returns
//!   the canonical quiet NaN, x86 propagates an input's payload). After every `fadd fsub fmul
//!   fdiv sqrt fma fmin fmax ceil floor trunc nearest fpromote fdemote` the generator emits
//!   `c = fcmp uno r, r; r2 = select c, CANON, r` (CANON = `0x7fc00000` / `0x7ff8000000000000`)
//!   and uses `r2` only. Bitwise float ops (`fneg fabs fcopysign bitcast select`, loads,
//!   stores) keep payloads and are not canonicalized.
//! - **div-guard**: most `udiv urem` get the divisor `bor d, 1`; most `sdiv srem` also replace a
//!   divisor of -1 by 1 (`select (icmp eq d, -1), 1, d`), so MIN / -1 cannot happen. About one
//!   division in ten is left unguarded and may trap.
//! - **cvt-guard**: most `fcvt_to_uint`/`fcvt_to_sint` get an input that fits: the input is
//!   replaced by 0.0 unless `|x| < 2^(bits-1)` (unsigned: the input is `fabs x` and the bound
//!   is `2^bits`). NaN fails the comparison, so it becomes 0.0 too. Some stay unguarded.
//! - **add-trap-guard**: most `uadd_overflow_trap` operands are halved first (`ushr x, 1`), so
//!   the sum cannot overflow.
//! - **rare-traps**: `trapz`/`trapnz` test an equality with a random constant, and a `trap`
//!   terminator sits behind such a test, so traps happen but do not dominate the runs.
//! - **carry-bool**: the carry/borrow input of `*_overflow_cin`/`*_overflow_bin` is a fresh
//!   comparison or overflow flag (0 or 1).
//! - **slot-init**: every byte of every stack slot is stored in the entry block before any
//!   other instruction reads memory (native stack memory is not zeroed).
//! - **mem-in-bounds**: every access lies inside one slot; `aligned` is set only when the
//!   slot's declared alignment and the offset make it true; atomics are naturally aligned.
//! - **addr-opaque**: address values never become data: `stack_addr` feeds only addresses,
//!   `func_addr` only `call_indirect`, and `get_frame_pointer`/`get_stack_pointer`/
//!   `get_return_address` only `icmp ne x, 0` (1 on every backend).
//! - **counted-loops**: a loop is a header with a counter parameter, a body and a latch
//!   `brif (icmp ult i+1, N), header(i+1), exit` with `N` in 1..=8; nesting multiplies the
//!   dynamic cost, which is budgeted (calls count their callee's cost).
//! - **no-debugtrap**: `debugtrap` and `global_value` are never generated.

mod draw;
mod func;
mod module;
mod ops;
mod testfile;
mod values;

pub use arbitrary::{Error as ArbError, Unstructured};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, FunctionName, Opcode, TrapCode, Type};
pub use ops::{interpreter_only, needs_setting};

/// Estimated dynamic instructions of one call of the entry function, callees included.
pub const DYNAMIC_BUDGET: u64 = 4000;

/// Knobs. `Default` gives the campaign settings.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Functions in the module: the entry plus up to `max_functions - 1` callees.
    pub max_functions: usize,
    /// Aim for about this many IR instructions per case, over all functions.
    pub target_insts: usize,
    /// Argument sets for the entry function.
    pub arg_sets: usize,
    /// Opcodes/controlling types the generator must not produce (None = everything allowed).
    /// Non-polymorphic opcodes are asked with `Type::INVALID`. A type is used at all only if
    /// its constants can be made (`iconst`, `f32const`, `f64const`; for i128, `iadd.i128`
    /// and one of `iconcat.i64`, `uextend.i128`, `sextend.i128` must be allowed), so refusing
    /// those keeps the type out of signatures, block parameters and memory too.
    pub allow: Option<fn(Opcode, Type) -> bool>,
    /// Percent of divisions and conversions left without their guard (rules div-guard,
    /// cvt-guard, add-trap-guard).
    pub unguarded_percent: u32,
    /// Percent chance that a statement opens a control-flow shape (diamond, loop, …) rather
    /// than emitting straight-line code.
    pub shape_percent: u32,
    /// Deepest nesting of control-flow shapes.
    pub max_depth: u32,
    /// Callees may use the `cold` calling convention (Cranelift 0.135 no longer parses it).
    pub cold_convention: bool,
    /// A memory access may split its offset between `stack_addr` and the access, making the
    /// access's own offset negative (Cranelift 0.135's interpreter cannot run that).
    pub negative_offsets: bool,
    /// Memory accesses may carry the `aligned` flag where the slot's declared alignment makes
    /// it true (Cranelift 0.135's interpreter does not lay slots out aligned).
    pub aligned_flags: bool,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            max_functions: 3,
            target_insts: 60,
            arg_sets: 4,
            allow: None,
            unguarded_percent: 10,
            shape_percent: 14,
            max_depth: 3,
            cold_convention: true,
            negative_offsets: true,
            aligned_flags: true,
        }
    }
}

/// A generated module and the argument sets for its entry function.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// The module; `functions[0]` is the entry the oracles call. Function i may call only
    /// functions j > i (no recursion), directly (`call`) or through `func_addr` + `call_indirect`.
    pub functions: Vec<Function>,
    /// Argument sets for the entry function (each matches its signature).
    pub args: Vec<Vec<DataValue>>,
}

/// What one run of the entry function did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Returned(Vec<DataValue>),
    Trapped(TrapCode),
}

/// Draw a test case from `u`.
pub fn generate(u: &mut Unstructured, cfg: &GenConfig) -> arbitrary::Result<TestCase> {
    let ctx = ops::Ctx::new(cfg)?;
    module::generate_module(u, cfg, &ctx)
}

impl TestCase {
    /// The entry function's name without '%'.
    pub fn entry_name(&self) -> String {
        match &self.functions[0].name {
            FunctionName::Named(n) => n.clone(),
            other => other.to_string(),
        }
    }

    /// IR instructions over all functions.
    pub fn inst_count(&self) -> usize {
        self.functions.iter().map(|f| f.num_placed_insts()).sum()
    }

    /// A ready-to-commit test file: header, every function, and after the entry function one
    /// `; run:` or `; trap:` directive per argument set and outcome (paired in order).
    pub fn to_test_file(&self, outcomes: &[Outcome]) -> String {
        testfile::write(self, outcomes)
    }
}
