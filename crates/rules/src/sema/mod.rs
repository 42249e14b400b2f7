//! Semantic analysis: resolves names, type-checks every rule, inserts implicit
//! conversions and lowers rules to bindings and tests ([`crate::program`]).
//!
//! Contract: requires the parsed definitions of all files (one program); reports every
//! unknown name, duplicate definition, arity or type mismatch, missing conversion and
//! unbound variable it finds, and returns a [`Program`] holding everything that
//! checked. A rule with an error is left out of the program, so later phases only see
//! well-typed rules.
//!
//! Runs in passes so that definition order never matters: types, then term
//! declarations, then externs, conversions and extractor macros, then rules.

mod env;
mod rules;

use crate::ast::Def;
use crate::diagnostics::Diagnostics;
use crate::program::Program;

/// Analyzes the definitions of all files as one program.
pub fn analyze(files: &[Vec<Def>], diags: &mut Diagnostics) -> Program {
    let defs: Vec<&Def> = files.iter().flatten().collect();
    let mut program = Program::default();
    let mut names = env::Names::default();
    env::declare_types(&defs, &mut program, &mut names, diags);
    env::declare_terms(&defs, &mut program, &mut names, diags);
    env::declare_externs(&defs, &mut program, &mut names, diags);
    rules::lower_rules(&defs, &mut program, &names, diags);
    program
}
