//! The SSA construction's memo: the value each variable holds at the end of each block
//! where it is known (the paper's `currentDef`).
//!
//! One table per variable, keyed by block: a read walks one variable through many blocks,
//! so its lookups and insertions stay in that variable's table. A table starts as a hash
//! table and becomes a plain array indexed by block once the variable is recorded in an
//! eighth of the function's blocks (Wasm code reads its busy locals at every merge, so
//! most lookups then cost one load instead of a hash probe).
//!
//! Cost: linear in the records made, never variables × blocks. An array is made only for
//! a variable with at least `blocks / 8` records, so its `blocks` slots cost at most
//! eight per record; it is grown only while it keeps at most [`SLOTS_PER_RECORD`] slots per
//! record, and goes back to a hash table otherwise (which, to become an array again, needs
//! its records to double first: each conversion is paid for by records made since the
//! last). Emptying costs what the last function used.

use rustc_hash::FxHashMap;

use super::Variable;
use crate::entity::{Block, EntityRef, Value};

/// A slot of an array table with no record (no function has 2^32 - 1 values).
const NONE: Value = Value::from_u32(u32::MAX - 1);

/// An array table may hold at most this many slots per record.
const SLOTS_PER_RECORD: usize = 16;

/// Functions with fewer blocks keep hash tables (an array would save little).
const MIN_BLOCKS_FOR_ARRAY: usize = 32;

#[derive(Default)]
struct VarDefs {
    /// The records while the table is a hash table.
    sparse: FxHashMap<Block, Value>,
    /// The records by block index while the table is an array (`NONE`: no record); empty
    /// otherwise (an array has a slot for at least the block it was made for).
    by_block: Vec<Value>,
    /// How many slots of `by_block` hold a record.
    records: usize,
}

impl VarDefs {
    /// Whether the table is an array.
    fn dense(&self) -> bool {
        !self.by_block.is_empty()
    }

    fn get(&self, block: Block) -> Option<Value> {
        if self.dense() {
            match self.by_block.get(block.index()) {
                Some(&NONE) | None => None,
                Some(&v) => Some(v),
            }
        } else {
            self.sparse.get(&block).copied()
        }
    }

    fn insert(&mut self, block: Block, value: Value, num_blocks: usize) {
        let i = block.index();
        if !self.dense() {
            self.sparse.insert(block, value);
            let n = self.sparse.len();
            if num_blocks >= MIN_BLOCKS_FOR_ARRAY && 8 * n >= num_blocks {
                self.make_array(num_blocks.max(i + 1));
            }
            return;
        }
        if i >= self.by_block.len() {
            let len = num_blocks.max(i + 1);
            if len > SLOTS_PER_RECORD * (self.records + 1) {
                // The function grew past what the records pay for: back to hashing.
                self.make_hash();
                self.sparse.insert(block, value);
                return;
            }
            // Post-invariant: at most `SLOTS_PER_RECORD` slots per record.
            self.by_block.resize(len, NONE);
        }
        let slot = &mut self.by_block[i];
        if *slot == NONE {
            self.records += 1;
        }
        *slot = value;
    }

    /// Moves the records into an array of `len` slots (`len >= num_blocks`, and at most
    /// eight slots per record when called from `insert`).
    fn make_array(&mut self, len: usize) {
        self.by_block.clear();
        self.by_block.resize(len, NONE);
        for (&b, &v) in &self.sparse {
            self.by_block[b.index()] = v;
        }
        self.records = self.sparse.len();
        self.sparse.clear();
    }

    /// Moves the records back into the hash table: O(slots) ≤ `SLOTS_PER_RECORD` × records.
    fn make_hash(&mut self) {
        self.sparse.clear();
        for (i, &v) in self.by_block.iter().enumerate() {
            if v != NONE {
                self.sparse.insert(Block::new(i), v);
            }
        }
        self.by_block.clear();
        self.records = 0;
    }

    fn clear(&mut self) {
        crate::scratch::empty_map(&mut self.sparse);
        // Only the slots used are rewritten when the next array is made.
        self.by_block.clear();
        self.records = 0;
    }
}

#[derive(Default)]
pub(super) struct Defs {
    by_var: Vec<VarDefs>,
}

impl Defs {
    /// The recorded value of `var` at the end of `block`.
    #[inline]
    pub fn get(&self, var: Variable, block: Block) -> Option<Value> {
        self.by_var.get(var.index())?.get(block)
    }

    /// Record `value` as `var`'s value at the end of `block`, in a function that has
    /// `num_blocks` blocks so far.
    #[inline]
    pub fn insert(&mut self, var: Variable, block: Block, value: Value, num_blocks: usize) {
        debug_assert!(value != NONE, "not a value the builder makes");
        let k = var.index();
        if k >= self.by_var.len() {
            self.by_var.resize_with(k + 1, VarDefs::default);
        }
        self.by_var[k].insert(block, value, num_blocks);
    }

    /// Forget every record of a function that declared `vars` variables (only those have
    /// records), keeping memory sized for what it used: the tables of variables it did not
    /// have go, so the cost is linear in that function, not in the largest one so far.
    pub fn clear(&mut self, vars: usize) {
        self.by_var.truncate(vars);
        for table in &mut self.by_var {
            table.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(n: usize) -> Variable {
        Variable::new(n)
    }

    #[test]
    fn records_survive_the_change_to_an_array_and_back() {
        let mut defs = Defs::default();
        let v = |n: u32| Value::from_u32(n);
        // 40 blocks: records in 4 of them keep a hash table, the fifth (an eighth of the
        // blocks) makes it an array.
        for b in 0..10 {
            defs.insert(var(0), Block::new(b * 4), v(b as u32), 40);
            assert_eq!(defs.by_var[0].dense(), b >= 4, "after {} records", b + 1);
        }
        for b in 0..40 {
            let want = (b % 4 == 0).then(|| v((b / 4) as u32));
            assert_eq!(defs.get(var(0), Block::new(b)), want, "block {b}");
        }
        // Overwriting a record does not count it twice.
        defs.insert(var(0), Block::new(0), v(100), 40);
        assert_eq!(defs.by_var[0].records, 10);
        // The function grows to 1,000 blocks: an array would cost more than 16 slots a
        // record, so the table goes back to hashing, keeping every record.
        defs.insert(var(0), Block::new(999), v(7), 1000);
        assert!(!defs.by_var[0].dense());
        assert_eq!(defs.get(var(0), Block::new(0)), Some(v(100)));
        assert_eq!(defs.get(var(0), Block::new(36)), Some(v(9)));
        assert_eq!(defs.get(var(0), Block::new(999)), Some(v(7)));
        assert_eq!(defs.get(var(0), Block::new(1)), None);
        // Other variables are untouched, and clearing forgets everything.
        assert_eq!(defs.get(var(1), Block::new(0)), None);
        defs.clear(1);
        assert_eq!(defs.get(var(0), Block::new(36)), None);
        assert!(!defs.by_var[0].dense());
    }

    #[test]
    fn small_functions_keep_hash_tables() {
        let mut defs = Defs::default();
        for b in 0..8 {
            defs.insert(var(0), Block::new(b), Value::from_u32(1), 8);
        }
        assert!(!defs.by_var[0].dense());
        assert_eq!(defs.get(var(0), Block::new(7)), Some(Value::from_u32(1)));
    }
}
