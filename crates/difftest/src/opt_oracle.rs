//! The mid-end's oracles: the optimized IR run in the interpreter, and native code compiled
//! at opt level `speed`, each against the interpreter on the original IR.
//!
//! Contract: as every [`Oracle`]; an error (the mid-end's output rejected by the verifier,
//! a compile error) is a finding. The interpreted oracle checks the mid-end's rewrites
//! alone, without the backend; the native one checks them with it. Both record which
//! simplification rules fired. Cost: one optimization per function per case, plus the run.

use kestrel_filetests::native::OptLevel;
use kestrel_fuzzgen::{Outcome, TestCase};
use kestrel_opt::optimize;

use crate::coverage::Coverage;
use crate::oracle::{InterpreterOracle, NativeOracle, Oracle};

/// The case with every function optimized at `speed` (verified), its rules noted.
fn optimized(case: &TestCase, coverage: &mut Coverage) -> Result<TestCase, String> {
    let mut case = case.clone();
    for f in &mut case.functions {
        let stats = optimize(f, OptLevel::Speed, true).map_err(|e| e.to_string())?;
        coverage.record_simplified(&stats.simplify.fired);
        coverage.record_if_converted(stats.if_converted);
    }
    Ok(case)
}

/// The interpreter on the optimized IR.
#[derive(Default)]
pub struct OptInterpreterOracle;

impl Oracle for OptInterpreterOracle {
    fn name(&self) -> &'static str {
        "interpreter-speed"
    }

    fn baseline(&self) -> Option<&'static str> {
        Some("interpreter")
    }

    fn run(
        &mut self,
        case: &TestCase,
        seed: u64,
        coverage: &mut Coverage,
    ) -> Result<Vec<Outcome>, String> {
        let case = optimized(case, coverage).map_err(|e| format!("{}: {e}", self.name()))?;
        InterpreterOracle
            .run(&case, seed, coverage)
            .map_err(|e| format!("{}: {e}", self.name()))
    }
}

/// Native code at opt level `speed` (checker and validator on, as in [`NativeOracle`]).
pub struct OptNativeOracle {
    inner: NativeOracle,
}

impl Default for OptNativeOracle {
    fn default() -> Self {
        OptNativeOracle {
            inner: NativeOracle::with_opt_level(OptLevel::Speed),
        }
    }
}

impl Oracle for OptNativeOracle {
    fn name(&self) -> &'static str {
        "native-speed"
    }

    fn baseline(&self) -> Option<&'static str> {
        Some("interpreter")
    }

    fn run(
        &mut self,
        case: &TestCase,
        seed: u64,
        coverage: &mut Coverage,
    ) -> Result<Vec<Outcome>, String> {
        self.inner
            .run(case, seed, coverage)
            .map_err(|e| e.replacen("native", self.name(), 1))
    }
}
