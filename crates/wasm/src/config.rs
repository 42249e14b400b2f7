//! How a module is compiled: the choices that change the generated code.
//!
//! Contract. A [`Config`] is fixed when a [`crate::Module`] is compiled and recorded in it;
//! every instance of the module runs the code that configuration produced. The choice of
//! [`BoundsChecks`] decides how linear memories are laid out (see `runtime/memory.rs`) and
//! which memories the module may import (a module compiled for guard pages imports only
//! memories that have them). Cost: none at run time beyond the checks it selects.

use std::fmt;
use std::str::FromStr;

pub use kestrel_codegen::settings::OptLevel;

/// How a memory access is kept inside its memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BoundsChecks {
    /// Each memory reserves 4 GiB of address space plus a guard region
    /// ([`crate::runtime::memory::GUARD_BYTES`]), inaccessible past the current size: an
    /// access whose static offset fits in the guard needs no check in code, and an
    /// out-of-bounds one faults and is reported as the out-of-bounds trap. Accesses with
    /// larger offsets are checked in code.
    Guard,
    /// Every access is compared with the memory's size in code; memories are ordinary
    /// allocations. For when address space cannot be reserved, or is not wanted.
    Explicit,
}

impl fmt::Display for BoundsChecks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BoundsChecks::Guard => "guard",
            BoundsChecks::Explicit => "explicit",
        })
    }
}

impl FromStr for BoundsChecks {
    type Err = String;

    fn from_str(s: &str) -> Result<BoundsChecks, String> {
        match s {
            "guard" => Ok(BoundsChecks::Guard),
            "explicit" => Ok(BoundsChecks::Explicit),
            other => Err(format!(
                "unknown bounds-check mode `{other}`: expected `guard` or `explicit`"
            )),
        }
    }
}

/// Compilation settings; `Config::default()` is guard pages, the mid-end at `speed`, and the
/// IR verifier in debug builds only.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Requested mode. [`BoundsChecks::Guard`] falls back to explicit checks when this
    /// process cannot reserve a guard-page memory (see [`crate::Module::bounds_checks`]).
    pub bounds_checks: BoundsChecks,
    /// How much Kestrel's mid-end optimizes each function (`speed` by default, as Wasmtime
    /// runs Cranelift).
    pub opt_level: OptLevel,
    /// Run the IR verifier on each translated function before compiling it, so that a
    /// translator bug is an error instead of code (on by default in debug builds; off in
    /// release builds, as Wasmtime leaves Cranelift's verifier off). The builder's
    /// per-instruction type checks go with it; debug builds type-check each instruction
    /// as the translator emits it, and verify the mid-end's output, either way.
    pub verify: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            bounds_checks: BoundsChecks::Guard,
            opt_level: OptLevel::Speed,
            verify: cfg!(debug_assertions),
        }
    }
}

impl Config {
    /// The default configuration with `bounds_checks` selected.
    pub fn with_bounds_checks(bounds_checks: BoundsChecks) -> Config {
        Config {
            bounds_checks,
            ..Config::default()
        }
    }
}
