//! Linear memory: bytes described to translated code by a [`MemoryDef`], in one of two
//! layouts chosen by [`BoundsChecks`].
//!
//! - **Guard** ([`BoundsChecks::Guard`]): a [`Reservation`] of [`RESERVED_BYTES`] — the whole
//!   32-bit address range plus a [`GUARD_BYTES`] guard — of which only the current size is
//!   accessible. `base` never moves; growing commits pages. Any access `base + a + o` with
//!   `a < 2^32` and `o + size <= GUARD_BYTES` lands inside the reservation, and past the
//!   current size it faults: translated code needs no check for it (`translate/memory.rs`).
//! - **Explicit** ([`BoundsChecks::Explicit`]): a plain zeroed allocation, checked in code.
//!   Growing past the allocation's capacity reallocates to at least twice the capacity
//!   (capped at `max_pages`) and copies, so `base` may move: translated code reloads it.
//!
//! Contract. The `MemoryDef` is the first field of a `#[repr(C)]` [`MemoryBox`], so the
//! runtime can go from the pointer translated code holds (in the vmctx) back to the box
//! (`memory.grow`'s libcall does). Invariants: after every mutation `def.base` is the
//! start of the backing and `def.size` its accessible length, a whole number of pages, at
//! most `max_pages` pages (at most 65536: 4 GiB, so a guard memory never outgrows its
//! reservation).
//!
//! Cost: creating a guard memory is two system calls; growing one is an `mprotect` of the
//! new pages. Growing an explicit memory is O(delta) for zeroing the new pages plus,
//! when it reallocates, O(old size) for the copy; capacity doubles at each reallocation,
//! so `n` one-page grows copy O(final size) bytes in all (amortized constant per page).

use std::cell::UnsafeCell;
use std::sync::OnceLock;

use super::reservation::Reservation;
use super::vmctx::MemoryDef;
use crate::config::BoundsChecks;

/// The Wasm page size.
pub const PAGE_SIZE: u64 = 65536;

/// Pages an explicit memory may reach by default (1 GiB; Wasm allows 65536 pages, 4 GiB):
/// growing beyond fails like a failed allocation (`memory.grow` returns -1). Guard memories
/// may reach 4 GiB: their address space is reserved anyway.
pub const DEFAULT_MAX_PAGES: u64 = 16384;

/// Pages of a 32-bit memory at most (4 GiB).
const WASM32_MAX_PAGES: u64 = 65536;

/// Inaccessible bytes a guard memory keeps past 4 GiB: accesses whose static offset plus
/// size is at most this need no check in code.
pub const GUARD_BYTES: u64 = 2 << 30;

/// Address space one guard memory reserves.
pub const RESERVED_BYTES: u64 = (WASM32_MAX_PAGES * PAGE_SIZE) + GUARD_BYTES;

/// Whether this process can reserve a guard memory (tried once, then remembered). Asked
/// only where guard pages are wanted, so when the reservation fails the fallback to
/// explicit checks is said once on stderr (and [`crate::Module::bounds_checks`] reports
/// the mode in force).
pub fn guard_pages_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| match Reservation::new(RESERVED_BYTES as usize) {
        Ok(_) => true,
        Err(e) => {
            eprintln!(
                "kestrel-wasm: cannot reserve {} GiB of address space for a guard-page memory \
                 ({e}; is `ulimit -v` set?): using explicit bounds checks, which are slower",
                RESERVED_BYTES >> 30
            );
            false
        }
    })
}

enum Backing {
    Heap(Vec<u8>),
    Reserved(Reservation),
}

/// A linear memory; see the module docs.
#[repr(C)]
pub struct MemoryBox {
    def: UnsafeCell<MemoryDef>,
    backing: UnsafeCell<Backing>,
    /// The declared maximum (or the layout's cap), in pages.
    max_pages: u64,
    /// The declared maximum, for import type checks.
    declared_max: Option<u64>,
}

impl std::fmt::Debug for MemoryBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBox")
            .field("pages", &self.pages())
            .field("max_pages", &self.max_pages)
            .field("bounds_checks", &self.bounds_checks())
            .finish()
    }
}

impl MemoryBox {
    /// A memory of `min` zeroed pages that may grow to `max` pages (or the layout's cap),
    /// laid out for `checks`.
    pub fn new(min: u64, max: Option<u64>, checks: BoundsChecks) -> Result<MemoryBox, String> {
        let cap = match checks {
            BoundsChecks::Guard => WASM32_MAX_PAGES,
            BoundsChecks::Explicit => DEFAULT_MAX_PAGES,
        };
        let max_pages = max.unwrap_or(cap).min(cap);
        if min > max_pages {
            return Err(format!(
                "memory of {min} pages exceeds the limit of {max_pages} pages"
            ));
        }
        let bytes = (min * PAGE_SIZE) as usize;
        let (backing, base) = match checks {
            BoundsChecks::Explicit => {
                let mut buffer = vec![0u8; bytes];
                let base = buffer.as_mut_ptr();
                (Backing::Heap(buffer), base)
            }
            BoundsChecks::Guard => {
                let reserve = |e: std::io::Error| {
                    format!(
                        "cannot reserve {} GiB of address space for a guard-page memory \
                         ({e}); use explicit bounds checks",
                        RESERVED_BYTES >> 30
                    )
                };
                let mut r = Reservation::new(RESERVED_BYTES as usize).map_err(reserve)?;
                r.commit(bytes)
                    .map_err(|e| format!("cannot commit {min} pages of memory: {e}"))?;
                let base = r.base();
                (Backing::Reserved(r), base)
            }
        };
        Ok(MemoryBox {
            def: UnsafeCell::new(MemoryDef {
                base,
                size: bytes as u64,
            }),
            backing: UnsafeCell::new(backing),
            max_pages,
            declared_max: max,
        })
    }

    /// The pointer translated code holds.
    pub fn def_ptr(&self) -> *mut MemoryDef {
        self.def.get()
    }

    /// The layout, and so the code that may access this memory.
    pub fn bounds_checks(&self) -> BoundsChecks {
        // SAFETY: reading the backing's tag; no `&mut` to it lives across calls.
        match unsafe { &*self.backing.get() } {
            Backing::Heap(_) => BoundsChecks::Explicit,
            Backing::Reserved(_) => BoundsChecks::Guard,
        }
    }

    /// Current size in pages.
    pub fn pages(&self) -> u64 {
        // SAFETY: reading the size; no `&mut` to the def lives across calls into this type.
        unsafe { (*self.def.get()).size / PAGE_SIZE }
    }

    pub fn declared_max(&self) -> Option<u64> {
        self.declared_max
    }

    /// Run `f` on the accessible bytes. No Wasm code runs concurrently with the host, and
    /// the slice does not outlive the call, so it is the only reference into the memory.
    fn with_bytes<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        // SAFETY: by the invariants `base` is valid for `size` accessible bytes (for an
        // empty memory, a non-null aligned pointer, fine for length 0); exclusivity as above.
        let bytes = unsafe {
            let def = &*self.def.get();
            std::slice::from_raw_parts_mut(def.base, def.size as usize)
        };
        f(bytes)
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
        let new_bytes = (new * PAGE_SIZE) as usize;
        // SAFETY: no Wasm code runs during this call on this thread other than the caller
        // waiting for it, and translated code holds no pointer into an explicit memory's
        // buffer across a call (it reloads `base`); memories are not shared across threads.
        let backing = unsafe { &mut *self.backing.get() };
        let base = match backing {
            Backing::Heap(buffer) => {
                if new_bytes > buffer.capacity() {
                    // Geometric growth keeps a run of small grows linear in the final size.
                    let max_bytes = (self.max_pages * PAGE_SIZE) as usize;
                    let target = new_bytes.max(buffer.capacity().saturating_mul(2));
                    let target = target.min(max_bytes);
                    buffer.try_reserve_exact(target - buffer.len()).ok()?;
                }
                // Post-invariant: the bytes past the old size are zero, as Wasm requires.
                buffer.resize(new_bytes, 0);
                buffer.as_mut_ptr()
            }
            Backing::Reserved(r) => {
                // `new <= 65536` pages, inside the reservation; base does not move.
                r.commit(new_bytes).ok()?;
                r.base()
            }
        };
        // Post-invariant: base and size describe the grown backing.
        // SAFETY: as above.
        unsafe {
            *self.def.get() = MemoryDef {
                base,
                size: new_bytes as u64,
            };
        }
        Some(old)
    }

    /// Copy `bytes` into memory at `offset`; `false` (nothing written) if out of bounds.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> bool {
        let Some(end) = offset.checked_add(bytes.len() as u64) else {
            return false;
        };
        self.with_bytes(
            |memory| match memory.get_mut(offset as usize..end as usize) {
                Some(range) => {
                    range.copy_from_slice(bytes);
                    true
                }
                None => false,
            },
        )
    }

    /// `memory.copy`: move `len` bytes from `src` to `dst` (overlap allowed); false
    /// (nothing written) if either range is out of bounds.
    pub fn copy_within(&self, dst: u64, src: u64, len: u64) -> bool {
        self.with_bytes(|memory| {
            let size = memory.len() as u64;
            if src + len > size || dst + len > size {
                return false;
            }
            memory.copy_within(src as usize..(src + len) as usize, dst as usize);
            true
        })
    }

    /// `memory.fill`: set `len` bytes at `dst` to `byte`; false if out of bounds.
    pub fn fill(&self, dst: u64, byte: u8, len: u64) -> bool {
        let Some(end) = dst.checked_add(len) else {
            return false;
        };
        self.with_bytes(|memory| match memory.get_mut(dst as usize..end as usize) {
            Some(range) => {
                range.fill(byte);
                true
            }
            None => false,
        })
    }

    /// Copy `len` bytes at `offset` out of memory, if in bounds.
    pub fn read(&self, offset: u64, len: usize) -> Option<Vec<u8>> {
        let end = offset.checked_add(len as u64)?;
        self.with_bytes(|memory| {
            memory
                .get(offset as usize..end as usize)
                .map(<[u8]>::to_vec)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grow_keeps_contents_and_updates_the_def(checks: BoundsChecks) {
        let m = MemoryBox::new(1, Some(3), checks).unwrap();
        assert_eq!(m.bounds_checks(), checks);
        assert!(m.write(65535, &[7]));
        assert!(!m.write(65535, &[7, 8]));
        assert_eq!(m.grow(1), Some(1));
        assert_eq!(m.read(65535, 2), Some(vec![7, 0]));
        assert_eq!(unsafe { (*m.def_ptr()).size }, 2 * PAGE_SIZE);
        assert_eq!(m.grow(2), None);
        assert_eq!(m.pages(), 2);
        assert_eq!(m.grow(0), Some(2));
        assert!(m.fill(65536, 9, 65536));
        assert!(!m.fill(65537, 9, 65536));
        assert_eq!(m.read(2 * 65536 - 1, 1), Some(vec![9]));
    }

    #[test]
    fn explicit_memory_grows() {
        grow_keeps_contents_and_updates_the_def(BoundsChecks::Explicit);
    }

    #[test]
    fn one_page_grows_of_an_explicit_memory_reallocate_logarithmically_often() {
        // 4,095 grows of one page each: with capacity doubling the buffer moves (and is
        // copied) at most about log2(4096) times, not once per grow.
        let m = MemoryBox::new(1, Some(4096), BoundsChecks::Explicit).unwrap();
        let mut base = unsafe { (*m.def_ptr()).base };
        let mut moves = 0;
        for page in 1..4096u64 {
            assert_eq!(m.grow(1), Some(page));
            assert!(m.write(page * PAGE_SIZE - 1, &[page as u8]));
            let now = unsafe { (*m.def_ptr()).base };
            moves += usize::from(now != base);
            base = now;
        }
        assert_eq!(m.grow(1), None, "the declared maximum still holds");
        assert!(
            moves <= 13,
            "{moves} reallocations for 4,095 one-page grows"
        );
        for page in 1..4096u64 {
            let at = page * PAGE_SIZE;
            assert_eq!(m.read(at - 1, 2), Some(vec![page as u8, 0]), "page {page}");
        }
    }

    #[test]
    fn guard_memory_grows_in_place() {
        let m = MemoryBox::new(0, None, BoundsChecks::Guard).unwrap();
        let base = unsafe { (*m.def_ptr()).base };
        assert_eq!(m.grow(2), Some(0));
        assert_eq!(unsafe { (*m.def_ptr()).base }, base);
        assert_eq!(m.max_pages, WASM32_MAX_PAGES);
        grow_keeps_contents_and_updates_the_def(BoundsChecks::Guard);
    }
}
