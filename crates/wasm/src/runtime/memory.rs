//! Linear memory: a heap buffer described to translated code by a [`MemoryDef`].
//!
//! Contract. The `MemoryDef` is the first field of a `#[repr(C)]` [`MemoryBox`], so the
//! runtime can go from the pointer translated code holds (in the vmctx) back to the box
//! (`memory.grow`'s libcall does). The buffer is a plain zero-initialized allocation and
//! accesses are bounds-checked by the translated code; there are no guard pages yet
//! (guard-page mode, with the checks elided, is later work). Growing allocates a new zeroed
//! buffer and copies the old contents, so `base` may move: translated code reloads it.
//!
//! Invariants: `def.size == buffer.len()` and `def.base == buffer.as_mut_ptr()` after every
//! mutation; `size` is a whole number of pages, at most `max_pages` pages.
//!
//! Cost: growing is O(new size) (allocation of zeroed pages is lazy in the OS) plus
//! O(old size) for the copy.

use std::cell::UnsafeCell;

use super::vmctx::MemoryDef;

/// The Wasm page size.
pub const PAGE_SIZE: u64 = 65536;

/// Pages a memory may reach by default (1 GiB; Wasm allows 65536 pages, 4 GiB): growing
/// beyond fails like a failed allocation (`memory.grow` returns -1).
pub const DEFAULT_MAX_PAGES: u64 = 16384;

/// A linear memory; see the module docs.
#[repr(C)]
pub struct MemoryBox {
    def: UnsafeCell<MemoryDef>,
    buffer: UnsafeCell<Vec<u8>>,
    /// The declared maximum (or the default cap), in pages.
    max_pages: u64,
    /// The declared maximum, for import type checks.
    declared_max: Option<u64>,
}

impl std::fmt::Debug for MemoryBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBox")
            .field("pages", &self.pages())
            .field("max_pages", &self.max_pages)
            .finish()
    }
}

impl MemoryBox {
    /// A memory of `min` zeroed pages that may grow to `max` pages (or the default cap).
    pub fn new(min: u64, max: Option<u64>) -> Result<MemoryBox, String> {
        let max_pages = max.unwrap_or(DEFAULT_MAX_PAGES).min(DEFAULT_MAX_PAGES);
        if min > max_pages {
            return Err(format!(
                "memory of {min} pages exceeds the limit of {max_pages} pages"
            ));
        }
        let mut buffer = vec![0u8; (min * PAGE_SIZE) as usize];
        let def = MemoryDef {
            base: buffer.as_mut_ptr(),
            size: buffer.len() as u64,
        };
        Ok(MemoryBox {
            def: UnsafeCell::new(def),
            buffer: UnsafeCell::new(buffer),
            max_pages,
            declared_max: max,
        })
    }

    /// The pointer translated code holds.
    pub fn def_ptr(&self) -> *mut MemoryDef {
        self.def.get()
    }

    /// Current size in pages.
    pub fn pages(&self) -> u64 {
        // SAFETY: reading the size; no `&mut` to the def lives across calls into this type.
        unsafe { (*self.def.get()).size / PAGE_SIZE }
    }

    pub fn declared_max(&self) -> Option<u64> {
        self.declared_max
    }

    /// Grow by `delta` pages; the old size in pages, or `None` (memory unchanged) if the
    /// result would pass the maximum or cannot be allocated.
    pub fn grow(&self, delta: u64) -> Option<u64> {
        let old = self.pages();
        let new = old.checked_add(delta)?;
        if new > self.max_pages {
            return None;
        }
        if delta == 0 {
            return Some(old);
        }
        // SAFETY: no Wasm code runs during this call on this thread other than the caller
        // waiting for it, and translated code holds no pointer into the buffer across a
        // call (it reloads `base`); the memory is not shared across threads.
        let buffer = unsafe { &mut *self.buffer.get() };
        let mut grown = Vec::new();
        grown.try_reserve_exact((new * PAGE_SIZE) as usize).ok()?;
        grown.extend_from_slice(buffer);
        grown.resize((new * PAGE_SIZE) as usize, 0);
        *buffer = grown;
        // Post-invariant: base and size describe the new buffer.
        // SAFETY: as above.
        unsafe {
            *self.def.get() = MemoryDef {
                base: buffer.as_mut_ptr(),
                size: buffer.len() as u64,
            };
        }
        Some(old)
    }

    /// Copy `bytes` into memory at `offset`; `false` (nothing written) if out of bounds.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> bool {
        // SAFETY: as in `grow`: no Wasm code runs concurrently with the host's access.
        let buffer = unsafe { &mut *self.buffer.get() };
        let Some(end) = offset.checked_add(bytes.len() as u64) else {
            return false;
        };
        if end > buffer.len() as u64 {
            return false;
        }
        buffer[offset as usize..end as usize].copy_from_slice(bytes);
        true
    }

    /// `memory.copy`: move `len` bytes from `src` to `dst` (overlap allowed); false
    /// (nothing written) if either range is out of bounds.
    pub fn copy_within(&self, dst: u64, src: u64, len: u64) -> bool {
        // SAFETY: as in `write`.
        let buffer = unsafe { &mut *self.buffer.get() };
        let size = buffer.len() as u64;
        if src + len > size || dst + len > size {
            return false;
        }
        buffer.copy_within(src as usize..(src + len) as usize, dst as usize);
        true
    }

    /// `memory.fill`: set `len` bytes at `dst` to `byte`; false if out of bounds.
    pub fn fill(&self, dst: u64, byte: u8, len: u64) -> bool {
        // SAFETY: as in `write`.
        let buffer = unsafe { &mut *self.buffer.get() };
        match buffer.get_mut(dst as usize..(dst + len) as usize) {
            Some(range) => {
                range.fill(byte);
                true
            }
            None => false,
        }
    }

    /// Copy `len` bytes at `offset` out of memory, if in bounds.
    pub fn read(&self, offset: u64, len: usize) -> Option<Vec<u8>> {
        // SAFETY: as in `write`.
        let buffer = unsafe { &*self.buffer.get() };
        let end = offset.checked_add(len as u64)?;
        buffer
            .get(offset as usize..end as usize)
            .map(<[u8]>::to_vec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grow_keeps_contents_and_updates_the_def() {
        let m = MemoryBox::new(1, Some(3)).unwrap();
        assert!(m.write(65535, &[7]));
        assert!(!m.write(65535, &[7, 8]));
        assert_eq!(m.grow(1), Some(1));
        assert_eq!(m.read(65535, 2), Some(vec![7, 0]));
        assert_eq!(unsafe { (*m.def_ptr()).size }, 2 * PAGE_SIZE);
        assert_eq!(m.grow(2), None);
        assert_eq!(m.pages(), 2);
        assert_eq!(m.grow(0), Some(2));
    }
}
