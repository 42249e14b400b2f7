//! Checks on the analyzed program: overlapping rules, shadowed rules, and recursion
//! that was not declared `rec`.
//!
//! Contract: requires a [`Program`] from semantic analysis; reads it only and reports
//! problems. After these checks pass, at most one rule of any single-result term can
//! match an input at its priority, every rule can fire for some input (as far as the
//! per-binding reasoning can tell), and every call cycle is declared.

mod overlap;
mod recursion;

use crate::diagnostics::Diagnostics;
use crate::program::Program;

/// Runs every check on `program`.
pub fn run(program: &Program, diags: &mut Diagnostics) {
    overlap::check(program, diags);
    recursion::check(program, diags);
}
