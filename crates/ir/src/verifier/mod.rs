//! The IR verifier: checks that a [`Function`] is well-formed SSA that later stages may trust.
//!
//! Contract. Requires nothing: any `Function` a parser or builder could produce is accepted,
//! including one with dangling entity references, alias cycles or a non-compact layout; the
//! verifier never panics on it. Every range is checked before anything is indexed. Guarantees
//! on `Ok(())`:
//! - layout (`structure.rs`): the layout is compact (a non-compact one is one error and ends
//!   verification — call [`Function::compact`] first); blocks in the layout exist and appear
//!   once; every placed instruction exists and is placed once;
//! - entities (`entities.rs`): every value, block, jump table, stack slot, function reference,
//!   signature and global value an instruction or preamble entity names exists; every used
//!   value is defined (through a finite alias chain);
//! - definitions (`structure.rs`): every value's definition agrees with the result or
//!   parameter list that holds it (so no value is defined twice); alias chains end at a
//!   defined value of the same type;
//! - terminators (`structure.rs`): every block in the layout ends with exactly one terminator
//!   and has no other; the entry block's parameters match the signature's parameters;
//! - SSA (`ssa.rs`): each use is dominated by its definition (a result by an earlier
//!   instruction, a block parameter by its block). As in Cranelift, uses in blocks unreachable
//!   from the entry are not checked for dominance, only for definedness;
//! - types (`types.rs`): controlling types, result types and operand types per opcode, call
//!   arguments and results against the callee signature, `return` values against the
//!   function's signature, branch arguments against the destination's parameters; no branch targets the entry block.
//!
//! Later checks only look at instructions whose references passed `entities.rs`, so one bad
//! reference yields one error rather than a cascade. All errors are collected and returned
//! sorted by position in the source (when the function has a source map) or in the layout.
//!
//! Cost: O(blocks + instructions + values + edges) for the checks, plus the dominator tree
//! (Semi-NCA, O(edges · log blocks)) whose queries are O(1); errors are formatted only when
//! found.

mod entities;
mod ssa;
mod structure;
pub(crate) mod types;

#[cfg(test)]
mod tests;

use std::fmt;

use crate::cfg::ControlFlowGraph;
use crate::domtree::DominatorTree;
use crate::entity::{Block, EntityRef, Inst, Value};
use crate::function::{Function, TextPos};
use crate::opcode::Opcode;

/// Where a verifier error is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The function's name as written in text (`%f`, `u0:1`).
    pub function: String,
    pub block: Option<Block>,
    pub inst: Option<Inst>,
    pub opcode: Option<Opcode>,
    /// Line and column in the source text, when the function was parsed.
    pub pos: Option<TextPos>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(p) = self.pos {
            write!(f, "{}:{}: ", p.line, p.col)?;
        }
        write!(f, "{}", self.function)?;
        if let Some(b) = self.block {
            write!(f, ", {b}")?;
        }
        if let Some(i) = self.inst {
            write!(f, ", {i}")?;
            if let Some(op) = self.opcode {
                write!(f, " ({op})")?;
            }
        }
        Ok(())
    }
}

/// One problem found by the verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifierError {
    pub location: Location,
    pub message: String,
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Every problem found in a function, in source (or layout) order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifierErrors(pub Vec<VerifierError>);

impl VerifierErrors {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, VerifierError> {
        self.0.iter()
    }
}

impl fmt::Display for VerifierErrors {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for e in &self.0 {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifierErrors {}

/// Check `func` (see the module contract). Returns every error found.
pub fn verify_function(func: &Function) -> Result<(), VerifierErrors> {
    let mut v = Verifier::new(func);
    if v.check_layout() {
        v.check_preamble();
        let refs_ok = v.check_entities();
        v.check_value_defs();
        v.check_terminators();
        v.check_entry_params();
        let cfg = ControlFlowGraph::compute(func);
        let domtree = DominatorTree::compute(func, &cfg);
        for &b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                if refs_ok[inst.index()] {
                    v.check_dominance(inst, b, &domtree);
                    v.check_types(inst);
                    v.check_branch_args(inst);
                }
            }
        }
    }
    v.finish()
}

/// Sort key: source position if known, else layout rank; function-level errors first.
type Key = (u32, u32);

/// The state of one verification: the function and the errors so far.
pub(crate) struct Verifier<'a> {
    func: &'a Function,
    name: String,
    errors: Vec<(Key, VerifierError)>,
    /// Per block number: 1 + its rank in the layout (0 = not in the layout).
    block_rank: Vec<u32>,
    /// Per instruction number: 1 + its rank in the layout (0 = not placed).
    inst_rank: Vec<u32>,
}

impl<'a> Verifier<'a> {
    fn new(func: &'a Function) -> Self {
        Verifier {
            func,
            name: func.name.to_string(),
            errors: Vec::new(),
            block_rank: Vec::new(),
            inst_rank: Vec::new(),
        }
    }

    fn finish(self) -> Result<(), VerifierErrors> {
        if self.errors.is_empty() {
            return Ok(());
        }
        let mut errors = self.errors;
        // Stable: errors at one position stay in the order the checks found them.
        errors.sort_by_key(|(k, _)| *k);
        Err(VerifierErrors(errors.into_iter().map(|(_, e)| e).collect()))
    }

    fn push(&mut self, key: Key, location: Location, message: String) {
        self.errors.push((key, VerifierError { location, message }));
    }

    fn location(&self, block: Option<Block>, inst: Option<Inst>, pos: Option<TextPos>) -> Location {
        let opcode = inst
            .filter(|&i| self.func.dfg.inst_is_valid(i))
            .map(|i| self.func.dfg.inst(i).opcode());
        Location {
            function: self.name.clone(),
            block,
            inst,
            opcode,
            pos,
        }
    }

    /// An error about the function as a whole (signature, preamble, value table).
    fn report_func(&mut self, message: String) {
        let pos = self.func.source_map.as_ref().map(|sm| sm.function);
        let key = pos.map_or((0, 0), |p| (p.line, p.col));
        let loc = self.location(None, None, pos);
        self.push(key, loc, message);
    }

    /// An error about a block header.
    fn report_block(&mut self, b: Block, message: String) {
        let pos = self.func.block_pos(b);
        let rank = self.block_rank.get(b.index()).copied().unwrap_or(0);
        let key = match (self.func.source_map.is_some(), pos) {
            (true, Some(p)) => (p.line, p.col),
            (true, None) => (0, 0),
            (false, _) => (rank, 0),
        };
        let loc = self.location(Some(b), None, pos);
        self.push(key, loc, message);
    }

    /// An error about an instruction.
    fn report_inst(&mut self, inst: Inst, message: String) {
        let block = self.func.layout.inst_block(inst);
        let pos = self.func.inst_pos(inst);
        let key = match (self.func.source_map.is_some(), pos) {
            (true, Some(p)) => (p.line, p.col),
            (true, None) => (0, 0),
            (false, _) => {
                let brank = block
                    .and_then(|b| self.block_rank.get(b.index()).copied())
                    .unwrap_or(0);
                (
                    brank,
                    self.inst_rank.get(inst.index()).copied().unwrap_or(0),
                )
            }
        };
        let loc = self.location(block, Some(inst), pos);
        self.push(key, loc, message);
    }

    /// Follow aliases from `v` to a defined value; `None` if `v` or a link is out of range
    /// or the chain is cyclic. Bounded by the number of values, so it always terminates.
    fn resolve(&self, v: Value) -> Option<Value> {
        let dfg = &self.func.dfg;
        let mut cur = v;
        for _ in 0..=dfg.num_values() {
            if !dfg.value_is_valid(cur) {
                return None;
            }
            match dfg.value_def(cur) {
                crate::dfg::ValueDef::Alias(to) => cur = to,
                _ => return Some(cur),
            }
        }
        None
    }
}
