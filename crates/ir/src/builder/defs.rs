//! The SSA construction's memo: the value each variable holds at the end of each block
//! where it is known (the paper's `currentDef`).
//!
//! One hash table per variable, keyed by block: a read walks one variable through many
//! blocks, so its lookups and insertions stay in that variable's (smaller, hotter) table.
//! Sized by the definitions recorded (plus one empty table per declared variable), never
//! variables × blocks. Emptying costs what the last function used.

use rustc_hash::FxHashMap;

use super::Variable;
use crate::entity::{Block, EntityRef, Value};

#[derive(Default)]
pub(super) struct Defs {
    by_var: Vec<FxHashMap<Block, Value>>,
}

impl Defs {
    /// The recorded value of `var` at the end of `block`.
    #[inline]
    pub fn get(&self, var: Variable, block: Block) -> Option<Value> {
        self.by_var.get(var.index())?.get(&block).copied()
    }

    /// Record `value` as `var`'s value at the end of `block`.
    #[inline]
    pub fn insert(&mut self, var: Variable, block: Block, value: Value) {
        let k = var.index();
        if k >= self.by_var.len() {
            self.by_var.resize_with(k + 1, FxHashMap::default);
        }
        self.by_var[k].insert(block, value);
    }

    /// Forget every record of a function that declared `vars` variables (only those have
    /// records), keeping memory sized for what it used: the tables of variables it did not
    /// have go, so the cost is linear in that function, not in the largest one so far.
    pub fn clear(&mut self, vars: usize) {
        self.by_var.truncate(vars);
        for table in &mut self.by_var {
            crate::scratch::empty_map(table);
        }
    }
}
