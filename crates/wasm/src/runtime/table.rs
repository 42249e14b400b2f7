//! Tables of function references, described to translated code by a [`TableDef`].
//!
//! Contract. Like [`super::memory::MemoryBox`]: the `TableDef` is reached through the vmctx
//! and `call_indirect` bounds-checks against its `len`. MVP tables do not grow, so `base`
//! never moves after creation. A table keeps alive the owners of the functions stored in it
//! (their code and instances); a table holding its own instance's functions forms a
//! reference cycle that is not freed (a known limitation until instances live in a store).
//!
//! Invariant: `def.base == elems.as_mut_ptr()` and `def.len == elems.len()`.

use std::any::Any;
use std::cell::{RefCell, UnsafeCell};
use std::rc::Rc;

use super::vmctx::{FuncRef, TableDef};

/// A table; see the module docs.
#[repr(C)]
pub struct TableBox {
    def: UnsafeCell<TableDef>,
    elems: UnsafeCell<Vec<FuncRef>>,
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
    /// A table of `min` null entries.
    pub fn new(min: u64, max: Option<u64>) -> Result<TableBox, String> {
        if min > 10_000_000 {
            return Err(format!("table of {min} entries exceeds the limit"));
        }
        let mut elems = vec![FuncRef::NULL; min as usize];
        Ok(TableBox {
            def: UnsafeCell::new(TableDef {
                base: elems.as_mut_ptr(),
                len: min,
            }),
            elems: UnsafeCell::new(elems),
            declared_max: max,
            keep_alive: RefCell::new(Vec::new()),
        })
    }

    /// The pointer translated code holds.
    pub fn def_ptr(&self) -> *mut TableDef {
        self.def.get()
    }

    pub fn len(&self) -> u64 {
        // SAFETY: plain read; the def is only written at creation.
        unsafe { (*self.def.get()).len }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn declared_max(&self) -> Option<u64> {
        self.declared_max
    }

    /// Store `f` at `index` (false if out of bounds), keeping `owner` alive with the table.
    pub fn set(&self, index: u64, f: FuncRef, owner: Option<Rc<dyn Any>>) -> bool {
        // SAFETY: no Wasm code runs while the host writes (single thread, no reentrancy
        // here); writing an element does not move the buffer.
        let elems = unsafe { &mut *self.elems.get() };
        match elems.get_mut(index as usize) {
            Some(slot) => {
                *slot = f;
                if let Some(o) = owner {
                    // Owners are few (one per instance or host function): a scan is cheap.
                    let mut kept = self.keep_alive.borrow_mut();
                    if !kept.iter().any(|k| Rc::ptr_eq(k, &o)) {
                        kept.push(o);
                    }
                }
                true
            }
            None => false,
        }
    }

    /// The entry at `index`, if in bounds.
    pub fn get(&self, index: u64) -> Option<FuncRef> {
        // SAFETY: as in `set`.
        let elems = unsafe { &*self.elems.get() };
        elems.get(index as usize).copied()
    }
}
