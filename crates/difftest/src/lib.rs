//! Differential testing: run generated cases through several oracles and compare.
//!
//! A *case* (from `kestrel-fuzzgen`) is a small module plus argument sets for its entry
//! function. An [`Oracle`] runs the entry function on every argument set and reports one
//! [`Outcome`] each (results or a trap). Every oracle but the reference names a *baseline*
//! whose outcomes it must reproduce exactly:
//!
//! | oracle | baseline | what a disagreement means |
//! |---|---|---|
//! | `interpreter` | — (reference) | nothing to compare; an error here is a generator bug |
//! | `native` | `interpreter` | a backend (or interpreter) bug |
//! | `native-chaos` | `native` | an optional transformation is not actually optional |
//! | `interpreter-speed` | `interpreter` | a mid-end bug: the optimized IR, interpreted, computes something else (see `opt_oracle`) |
//! | `native-speed` | `interpreter` | a mid-end bug, or a backend bug on the mid-end's output |
//! | `object` | `interpreter` | a bug in objects, relocations or linking (batched: see `object_oracle`) |
//! | `aarch64` | `interpreter` | an AArch64 backend bug (objects run under `qemu-aarch64`, batched; cases the backend reports unsupported are declined and counted) |
//! | external (e.g. Cranelift) | `interpreter` | a shared misreading of the semantics |
//!
//! Results are compared bit for bit. The generator canonicalizes NaNs right after the float
//! operations whose NaN payload the semantics leave open, so no comparison needs slack.
//!
//! [`check::check_case`] finds the first disagreement, [`minimize::minimize`] shrinks a
//! failing case while it keeps failing the same way, and [`campaign::run`] drives seeded
//! campaigns with progress, coverage and ready-to-commit failure files.
//!
//! WebAssembly: [`wasm_gen`] makes seeded `wasm-smith` modules and arguments, and
//! [`wasm_oracle`] runs them through `kestrel-wasm` and compares observations (its two
//! bounds-check modes here; against Wasmtime in the bench workspace's `wasm-fuzz`).

pub mod aarch64_support;
pub mod campaign;
pub mod cfg_shapes;
pub mod check;
pub mod coverage;
pub mod fuzzing;
pub mod minimize;
pub mod object_oracle;
pub mod opt_oracle;
pub mod oracle;
pub mod panics;
pub mod wasm_gen;
pub mod wasm_oracle;

pub use check::{check_case, Checked, Finding, FindingKind};
pub use kestrel_fuzzgen::{generate, GenConfig, Outcome, TestCase};
pub use object_oracle::ObjectOracle;
pub use opt_oracle::{OptInterpreterOracle, OptNativeOracle};
pub use oracle::{InterpreterOracle, NativeOracle, Oracle};
