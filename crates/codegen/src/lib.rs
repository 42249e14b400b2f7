//! Kestrel's code generator.
//!
//! `machinst` holds the target-independent machinery (block order, VCode, the MachBuffer);
//! `isa` holds the `TargetIsa` trait, `isa::lookup` and one directory per target with the
//! same file shape; `settings` the flags every target shares; `scaling` checks that
//! each phase's work grows linearly on generated CFG shapes.

pub mod chaos;
#[cfg(feature = "disasm")]
pub mod disasm;
pub mod isa;
pub mod machinst;
pub mod scaling;
pub mod settings;
