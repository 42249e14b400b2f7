//! Structured regions: shortcuts for reading variables at the block after a region.
//!
//! A front end with structured control flow (Wasm's `block`, `if` and `loop`) knows that
//! the block after a construct is reached only through the construct, entered at one point.
//! A variable the construct never assigns holds, at that merge block, the value it held at
//! the entry point. Told so ([`FunctionBuilder::close_region`]), a read that reaches the
//! merge block goes straight to the entry block, as if it were the merge block's only
//! predecessor, instead of visiting every path through the construct (which Braun's reads
//! do once per variable read after it; on Wasm code, whose locals are read after every
//! construct, that walking was most of SSA construction).
//!
//! Whether a variable was assigned inside is answered from its definition history: every
//! `def_var` gets the next number, appended to its variable's list once the function has
//! taken a mark (a definition before the first mark is older than every mark's `since`,
//! so it is never asked about, and a builder without regions keeps no lists), so the
//! numbers of a list are increasing and "assigned between marks `since` and `until`" is
//! one binary search.
//!
//! Contract of [`FunctionBuilder::close_region`]`(merge, mark)`. Requires (checked in debug
//! builds): following predecessor edges backwards from `merge`, every path meets only
//! blocks created since `mark` was taken, each already filled, until it reaches the mark's
//! block. Then every path into `merge` last passes the mark's point in that block and from
//! there runs through code built since the mark, so a variable not defined since the mark
//! holds the value it had at the mark's block's end (no definition in that block follows
//! the mark, or it would be one made since). Guarantees: reads through `merge` give the
//! values Braun's algorithm gives; the phis of `merge` that the construct makes
//! unnecessary are never made.
//!
//! Cost: O(1) per definition; a read that takes a shortcut pays O(log d), d the variable's
//! definitions, instead of visiting the region's blocks; memory is linear in the
//! definitions. Emptying costs what the last function used.

use super::{BlockState, BuilderError, FunctionBuilder, Variable};
use crate::entity::{Block, EntityRef};

/// A point in the building of a function: the current block, and how many blocks and
/// variable definitions had been made. Taken by [`FunctionBuilder::region_mark`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegionMark {
    block: Block,
    blocks: u32,
    defs: u32,
}

/// A merge block's way around its region: reading a variable with no definition numbered in
/// `since + 1..=until` continues at the end of `entry`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Shortcut {
    pub entry: Block,
    since: u32,
    until: u32,
}

/// The definition history of every variable.
#[derive(Default)]
pub(super) struct DefHistory {
    /// Definitions made so far in this function; the last one's number.
    made: u32,
    /// A mark was taken in this function: from then on definitions are listed.
    listing: bool,
    /// By variable, the numbers of its definitions, increasing.
    numbers: Vec<Vec<u32>>,
}

impl DefHistory {
    /// Note a definition of `var`.
    #[inline]
    pub fn record(&mut self, var: Variable) {
        self.made += 1;
        if !self.listing {
            return;
        }
        let k = var.index();
        if k >= self.numbers.len() {
            self.numbers.resize_with(k + 1, Vec::new);
        }
        // Post-invariant: `made` only grows, so the list stays increasing.
        self.numbers[k].push(self.made);
    }

    /// Whether `var` has a definition numbered after `since` and at most `until`.
    fn defined_between(&self, var: Variable, since: u32, until: u32) -> bool {
        let Some(list) = self.numbers.get(var.index()) else {
            return false;
        };
        let first_after = list.partition_point(|&n| n <= since);
        list.get(first_after).is_some_and(|&n| n <= until)
    }

    /// Forget a function that declared `vars` variables, keeping the lists' memory.
    pub fn clear(&mut self, vars: usize) {
        self.made = 0;
        self.listing = false;
        self.numbers.truncate(vars);
        for list in &mut self.numbers {
            list.clear();
        }
    }
}

impl Shortcut {
    /// The block a read of `var` at the merge block continues from, if `var` was not
    /// defined inside the region.
    #[inline]
    pub fn entry_for(&self, var: Variable, history: &DefHistory) -> Option<Block> {
        (!history.defined_between(var, self.since, self.until)).then_some(self.entry)
    }
}

impl FunctionBuilder {
    /// The current point, for a later [`FunctionBuilder::close_region`]; `None` without a
    /// current block.
    pub fn region_mark(&mut self) -> Option<RegionMark> {
        let block = self.current?;
        // Post-invariant: every definition numbered after this mark is listed.
        self.history.listing = true;
        Some(RegionMark {
            block,
            blocks: self.func.dfg.num_blocks() as u32,
            defs: self.history.made,
        })
    }

    /// `mark` moved past the definitions made since it, for a caller whose definitions
    /// since the mark all gave their variable the value it held at the mark's block's end
    /// (as when a loop header re-defines the variables its loop never assigns).
    pub fn region_mark_past_definitions(&self, mark: RegionMark) -> RegionMark {
        RegionMark {
            defs: self.history.made,
            ..mark
        }
    }

    /// Declare that `merge` is reached only through the region that began at `mark` (see
    /// the module docs of `regions.rs` for the requirement): reads of variables the region
    /// did not define continue, at `merge`, from the mark's block.
    pub fn close_region(&mut self, merge: Block, mark: RegionMark) -> Result<(), BuilderError> {
        self.check_block(merge)?;
        self.check_block(mark.block)?;
        debug_assert!(
            self.region_is_closed(merge, mark),
            "{merge} is reached from outside the region begun in {}",
            mark.block
        );
        self.blocks[merge].shortcut = Some(Shortcut {
            entry: mark.block,
            since: mark.defs,
            until: self.history.made,
        });
        Ok(())
    }

    /// The requirement of `close_region`, checked by a backward walk (debug builds only:
    /// O(the region), so nested regions cost their depth times their size).
    fn region_is_closed(&self, merge: Block, mark: RegionMark) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![merge];
        while let Some(b) = work.pop() {
            for pred in &self.blocks[b].preds {
                let p = pred.block;
                if p == mark.block || !seen.insert(p) {
                    continue;
                }
                let st: &BlockState = &self.blocks[p];
                if p.index() < mark.blocks as usize || !st.filled {
                    return false;
                }
                work.push(p);
            }
        }
        true
    }
}
