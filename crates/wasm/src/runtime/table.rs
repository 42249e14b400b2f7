//! Tables of references, described to translated code by a [`TableDef`].
//!
//! Contract. Like [`super::memory::MemoryBox`]: the `TableDef` is reached through the vmctx,
//! and translated code bounds-checks against its `len` and reloads `base` at each access
//! (`table.grow` may move it). Entries are 8-byte words (see `vmctx.rs`): a funcref is the
//! address of a [`FuncRef`](super::vmctx::FuncRef) record, an externref the host's value plus
//! one, 0 is null. A table can keep owners alive ([`TableBox::keep`]): the instances that
//! import it, whose code may store references to their functions in it (see `instance.rs`
//! for the whole lifetime rule).
//!
//! Invariant: `def.base == elems.as_mut_ptr()` and `def.len == elems.len()` after every
//! mutation.
//!
//! Cost: `grow` is O(new length); `fill`, `copy` and `init` are O(entries written).

use std::any::Any;
use std::cell::{RefCell, UnsafeCell};
use std::rc::Rc;

use wasmparser::RefType;

use super::vmctx::TableDef;

/// Entries a table may reach, whatever its declared maximum (growing beyond fails).
pub const MAX_ENTRIES: u64 = 10_000_000;

/// A table; see the module docs.
#[repr(C)]
pub struct TableBox {
    def: UnsafeCell<TableDef>,
    elems: UnsafeCell<Vec<u64>>,
    pub(crate) element: RefType,
    declared_max: Option<u64>,
    keep_alive: RefCell<Vec<Rc<dyn Any>>>,
}

impl std::fmt::Debug for TableBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBox")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl TableBox {
    /// A table of `min` entries holding `init`.
    pub fn new(
        element: RefType,
        min: u64,
        max: Option<u64>,
        init: u64,
    ) -> Result<TableBox, String> {
        if min > MAX_ENTRIES {
            return Err(format!(
                "table of {min} entries exceeds the limit of {MAX_ENTRIES}"
            ));
        }
        let mut elems = vec![init; min as usize];
        Ok(TableBox {
            def: UnsafeCell::new(TableDef {
                base: elems.as_mut_ptr(),
                len: min,
            }),
            elems: UnsafeCell::new(elems),
            element,
            declared_max: max,
            keep_alive: RefCell::new(Vec::new()),
        })
    }

    /// The pointer translated code holds.
    pub fn def_ptr(&self) -> *mut TableDef {
        self.def.get()
    }

    pub fn len(&self) -> u64 {
        // SAFETY: plain read; no `&mut` to the def outlives a method of this type.
        unsafe { (*self.def.get()).len }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn declared_max(&self) -> Option<u64> {
        self.declared_max
    }

    /// The entries, for a mutation; the caller restores the invariant with `sync`.
    ///
    /// # Safety
    /// No other reference to the entries may be live (single thread; translated code does
    /// not run during a host call into this type except the libcall that called it).
    #[allow(clippy::mut_from_ref)] // interior mutability through UnsafeCell, as documented
    unsafe fn elems(&self) -> &mut Vec<u64> {
        // SAFETY: by the contract.
        unsafe { &mut *self.elems.get() }
    }

    /// Post-invariant of every mutation: the def describes the entries.
    fn sync(&self) {
        // SAFETY: as in `elems`.
        unsafe {
            let elems = self.elems();
            *self.def.get() = TableDef {
                base: elems.as_mut_ptr(),
                len: elems.len() as u64,
            };
        }
    }

    /// Keep `owner` alive as long as the table. Owners are few (one per instance or host
    /// function): a scan is cheap.
    pub fn keep(&self, owner: Rc<dyn Any>) {
        let mut kept = self.keep_alive.borrow_mut();
        if !kept.iter().any(|k| Rc::ptr_eq(k, &owner)) {
            kept.push(owner);
        }
    }

    /// The entry at `index`, if in bounds.
    pub fn get(&self, index: u64) -> Option<u64> {
        // SAFETY: as in `elems`.
        unsafe { self.elems() }.get(index as usize).copied()
    }

    /// Store `value` at `index`; false if out of bounds.
    pub fn set(&self, index: u64, value: u64) -> bool {
        // SAFETY: as in `elems`; the length does not change.
        match unsafe { self.elems() }.get_mut(index as usize) {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        }
    }

    /// Grow by `delta` entries holding `init`; the old length, or `None` (unchanged).
    pub fn grow(&self, delta: u64, init: u64) -> Option<u64> {
        let old = self.len();
        let new = old.checked_add(delta)?;
        if new > self.declared_max.unwrap_or(u64::MAX).min(MAX_ENTRIES) {
            return None;
        }
        // SAFETY: as in `elems`.
        let elems = unsafe { self.elems() };
        elems.try_reserve_exact(delta as usize).ok()?;
        elems.resize(new as usize, init);
        self.sync();
        Some(old)
    }

    /// Write `value` to entries `dst..dst + n`; false (nothing written) if out of bounds.
    pub fn fill(&self, dst: u64, value: u64, n: u64) -> bool {
        // SAFETY: as in `elems`.
        let elems = unsafe { self.elems() };
        match elems.get_mut(dst as usize..(dst + n) as usize) {
            Some(range) => {
                range.fill(value);
                true
            }
            None => false,
        }
    }

    /// Copy `values` to `dst..`; false (nothing written) if out of bounds.
    pub fn write(&self, dst: u64, values: &[u64]) -> bool {
        // SAFETY: as in `elems`.
        let elems = unsafe { self.elems() };
        match elems.get_mut(dst as usize..dst as usize + values.len()) {
            Some(range) => {
                range.copy_from_slice(values);
                true
            }
            None => false,
        }
    }

    /// `n` entries from `src`, if in bounds.
    pub fn read(&self, src: u64, n: u64) -> Option<Vec<u64>> {
        // SAFETY: as in `elems`.
        let elems = unsafe { self.elems() };
        elems
            .get(src as usize..(src + n) as usize)
            .map(<[u64]>::to_vec)
    }
}
