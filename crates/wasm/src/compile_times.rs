//! Where a module's compile time goes: [`CompileTimes`], filled by
//! [`crate::Module::with_config_timed`] and printed by `kestrel wasm compile --timing`.
//!
//! Contract. The serial steps (declarations validated and decoded, then linking into the
//! JIT) are wall-clock times. The per-function steps run on several threads at once, so
//! they are *summed over the threads*: their total can exceed the wall clock, and the
//! parallel speedup is that total over the wall time of the parallel part. Per function, the
//! clock is read only when timing is asked for (an untimed compile reads it a few times per
//! module, not per function).

use std::time::Duration;

use kestrel_codegen::machinst::compile::PhaseTimes;

/// The time of each step of one module's compile.
#[derive(Clone, Debug, Default)]
pub struct CompileTimes {
    /// Serial, before the parallel part: the module's sections validated (function bodies
    /// apart) and decoded, its functions declared in the JIT.
    pub decode: Duration,
    /// Summed over threads: function bodies validated.
    pub validate_bodies: Duration,
    /// Summed over threads: Wasm operators translated to Kestrel IR.
    pub translate: Duration,
    /// Summed over threads: the backend, phase by phase (verifier and mid-end included).
    pub backend: PhaseTimes,
    /// Wall clock of the parallel part (validating, translating and compiling bodies).
    pub parallel_wall: Duration,
    /// Serial, after the parallel part: the functions' code defined in the JIT, relocated
    /// and made executable.
    pub link: Duration,
    /// Wall clock of the whole compile.
    pub wall: Duration,
    /// The threads that compiled functions.
    pub threads: usize,
    /// Defined functions compiled.
    pub functions: usize,
}

impl CompileTimes {
    /// The per-function steps summed over threads (validation, translation, backend).
    pub fn per_function_total(&self) -> Duration {
        self.validate_bodies + self.translate + self.backend.total()
    }
}

/// One worker's share of the per-function steps, merged into [`CompileTimes`] when the
/// worker finishes.
#[derive(Default)]
pub(crate) struct WorkerTimes {
    pub validate_bodies: Duration,
    pub translate: Duration,
    pub backend: PhaseTimes,
}

impl CompileTimes {
    pub(crate) fn absorb(&mut self, w: &WorkerTimes) {
        self.validate_bodies += w.validate_bodies;
        self.translate += w.translate;
        self.backend += &w.backend;
        self.threads += 1;
    }
}
