//! The built-in oracles: Kestrel's interpreter (the reference) and Kestrel's native code,
//! with the chaos control off or on.
//!
//! Contract: [`Oracle::run`] returns one outcome per argument set of the case, in order, or
//! an error when the case could not be run at all (a compile error, a register-allocation
//! checker or MachBuffer validator failure, an interpreter limit). An error is always a
//! finding: the generator promises valid, terminating programs.

use std::cell::Cell;

use kestrel_codegen::chaos::Chaos;
use std::sync::Arc;

use kestrel_codegen::isa::TargetIsa;
use kestrel_filetests::native::{Flags, NativeError, NativeModule};
use kestrel_fuzzgen::{Outcome, TestCase};
use kestrel_interp::Interpreter;

use crate::coverage::Coverage;

/// One way of running a case.
pub trait Oracle {
    /// A stable name for reports.
    fn name(&self) -> &'static str;
    /// The oracle whose outcomes this one must equal; `None` for the reference.
    fn baseline(&self) -> Option<&'static str>;
    /// Run the entry function on every argument set. `seed` is the case's own seed (for
    /// oracles with deterministic choices of their own); `coverage` collects what ran.
    fn run(
        &mut self,
        case: &TestCase,
        seed: u64,
        coverage: &mut Coverage,
    ) -> Result<Vec<Outcome>, String>;
    /// The next cases to be run, before they are: an oracle with a high fixed cost per run
    /// (the object oracle links an executable) may run them all at once and answer [`run`]
    /// from the batch. The outcomes must be those `run` would give each case alone.
    ///
    /// [`run`]: Oracle::run
    fn prefetch(&mut self, _cases: &[&TestCase]) {}
    /// Whether this oracle may decline cases at all (see [`declines`]); campaigns report a
    /// count of declined cases for each oracle that may.
    ///
    /// [`declines`]: Oracle::declines
    fn may_decline(&self) -> bool {
        false
    }
    /// Why this oracle cannot run `case` (its backend reports the case as unsupported), or
    /// `None`. A declined case is neither run nor compared by this oracle, and is counted,
    /// never passed silently. Only a backend's `CodegenError::Unsupported` may decline: any
    /// other error is a finding, reported by [`run`].
    ///
    /// [`run`]: Oracle::run
    fn declines(&mut self, _case: &TestCase) -> Option<String> {
        None
    }
}

/// Instructions one call may execute in the interpreter before it is declared runaway. The
/// generator keeps calls far below this (a few thousand instructions).
pub const INTERPRETER_FUEL: u64 = 1_000_000;

/// Kestrel's interpreter: the reference semantics.
#[derive(Default)]
pub struct InterpreterOracle;

impl Oracle for InterpreterOracle {
    fn name(&self) -> &'static str {
        "interpreter"
    }

    fn baseline(&self) -> Option<&'static str> {
        None
    }

    fn run(&mut self, case: &TestCase, _: u64, _: &mut Coverage) -> Result<Vec<Outcome>, String> {
        let entry = case.entry_name();
        let mut interp = Interpreter::new(&case.functions).with_fuel(Some(INTERPRETER_FUEL));
        case.args
            .iter()
            .map(|args| match interp.call(&entry, args) {
                Ok(values) => Ok(Outcome::Returned(values)),
                Err(e) => match e.trap_code() {
                    Some(code) => Ok(Outcome::Trapped(code)),
                    None => Err(format!("interpreter: {e}")),
                },
            })
            .collect()
    }
}

/// Kestrel's x86-64 code, compiled with the register-allocation checker and the MachBuffer
/// validator on (and lowering-rule coverage recorded), and run in process through the JIT. With `chaos`, every optional transformation is decided by a
/// control seeded from the case, and the baseline is the chaos-free native run.
pub struct NativeOracle {
    chaos: bool,
    /// The host's ISA with its CPU's features.
    isa: Arc<dyn TargetIsa>,
    flags: Flags,
}

impl NativeOracle {
    /// Native code for the host CPU compiled at `opt_level` (chaos off).
    pub fn with_opt_level(opt_level: kestrel_filetests::native::OptLevel) -> Self {
        let mut oracle = NativeOracle::new(false);
        oracle.flags.opt_level = opt_level;
        oracle
    }

    /// Native code for the host CPU; `chaos` selects oracle 2 (chaos on, compared with off).
    pub fn new(chaos: bool) -> Self {
        NativeOracle {
            chaos,
            isa: kestrel_filetests::native_isa(None).expect("a host ISA Kestrel compiles for"),
            flags: Flags {
                check_regalloc: true,
                validate: true,
                coverage: true,
                ..Flags::default()
            },
        }
    }
}

impl Oracle for NativeOracle {
    fn name(&self) -> &'static str {
        if self.chaos {
            "native-chaos"
        } else {
            "native"
        }
    }

    fn baseline(&self) -> Option<&'static str> {
        Some(if self.chaos { "native" } else { "interpreter" })
    }

    fn run(
        &mut self,
        case: &TestCase,
        seed: u64,
        coverage: &mut Coverage,
    ) -> Result<Vec<Outcome>, String> {
        // Each function gets its own decision stream, all derived from the case seed.
        let next_seed = Cell::new(seed ^ 0xC4A0_5C4A_05C4_A05C);
        let chaos_on = self.chaos;
        let chaos = || {
            if !chaos_on {
                return Chaos::disabled();
            }
            let s = next_seed.get();
            next_seed.set(s.wrapping_add(0x9E37_79B9_7F4A_7C15));
            Chaos::from_seed(s)
        };
        let module = NativeModule::build(
            &self.isa,
            &case.functions,
            &self.flags,
            &chaos,
            &mut |code| coverage.record_compiled(code),
        )
        .map_err(|errors| format!("{}: {}", self.name(), errors.join("; ")))?;
        let entry = case.entry_name();
        case.args
            .iter()
            .map(|args| match module.call_raw(&entry, args) {
                Ok(values) => Ok(Outcome::Returned(values)),
                Err(NativeError::Trap(t)) => Ok(Outcome::Trapped(t.code)),
                Err(NativeError::Other(e)) => Err(format!("{}: {e}", self.name())),
            })
            .collect()
    }
}
