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
    /// The [`SLOWEST_KEPT`] functions that took longest (validation, translation and
    /// backend together), slowest first, by function index: in a small module the
    /// slowest one bounds the wall clock, since one function is compiled by one thread.
    pub slowest: Vec<(u32, Duration)>,
}

/// How many of the slowest functions [`CompileTimes::slowest`] keeps.
pub const SLOWEST_KEPT: usize = 5;

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
    /// This worker's slowest functions, slowest first (at most [`SLOWEST_KEPT`]).
    pub slowest: Vec<(u32, Duration)>,
}

impl WorkerTimes {
    /// Records that function `index` took `time` in all. O(SLOWEST_KEPT).
    pub fn function_took(&mut self, index: u32, time: Duration) {
        keep_slowest(&mut self.slowest, (index, time));
    }
}

/// Inserts `entry` into `list` (slowest first) if it is among the [`SLOWEST_KEPT`] slowest.
fn keep_slowest(list: &mut Vec<(u32, Duration)>, entry: (u32, Duration)) {
    let at = list.partition_point(|&(_, t)| t >= entry.1);
    if at < SLOWEST_KEPT {
        list.insert(at, entry);
        list.truncate(SLOWEST_KEPT);
    }
}

impl CompileTimes {
    pub(crate) fn absorb(&mut self, w: &WorkerTimes) {
        self.validate_bodies += w.validate_bodies;
        self.translate += w.translate;
        self.backend += &w.backend;
        self.threads += 1;
        for &entry in &w.slowest {
            keep_slowest(&mut self.slowest, entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_functions_are_kept_in_order() {
        let mut w = WorkerTimes::default();
        for (index, ms) in [(0, 3), (1, 9), (2, 1), (3, 7), (4, 5), (5, 8), (6, 2)] {
            w.function_took(index, Duration::from_millis(ms));
        }
        let kept: Vec<u32> = w.slowest.iter().map(|&(i, _)| i).collect();
        assert_eq!(kept, [1, 5, 3, 4, 0]);
        let mut other = WorkerTimes::default();
        other.function_took(9, Duration::from_millis(6));
        let mut all = CompileTimes::default();
        all.absorb(&w);
        all.absorb(&other);
        let kept: Vec<u32> = all.slowest.iter().map(|&(i, _)| i).collect();
        assert_eq!(kept, [1, 5, 3, 9, 4]);
        assert_eq!(all.threads, 2);
    }
}
