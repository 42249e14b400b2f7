//! Code and data memory with W^X, released page by page.
//!
//! A module reserves large address ranges (arenas, inaccessible until used) and gives each
//! finalized batch one run of whole pages from them. The batch is written while its pages
//! are read-write (never executable), then sealed once: its code pages become read-execute,
//! its read-only data pages read-only, its writable data pages stay read-write. No page is
//! ever writable and executable at once, and nothing is mapped twice.
//!
//! Every object of a batch (a function with its call stubs and GOT slots, or a data object)
//! occupies a byte range of it; each page counts the live objects touching it. Freeing an
//! object decrements the counts of its pages, and the pages reaching zero are decommitted
//! (replaced by a fresh inaccessible mapping, which gives the memory back to the kernel) and
//! returned to their arena's free runs, where later batches reuse them. An arena is only
//! unmapped with the module.
//!
//! Keeping a batch in one arena keeps every rel32 inside it in reach; keeping a module's
//! batches in one arena (256 MiB, while they fit; a batch that does not fit gets a new arena
//! of at least its size) keeps rel32 references between batches in reach too. Across
//! arenas, calls go through stubs and a PC-relative data reference may be out of reach (a
//! typed error at finalize).
//!
//! Invariants: `users[p]` of a batch is the number of its live objects whose range touches
//! page `p` (`u32::MAX` once `p` is released); a page is in its arena's free runs exactly
//! when it is decommitted and no batch holds it; free runs never overlap or touch.
//!
//! Cost: allocating a batch is O(its pages + log free runs); freeing an object is
//! O(its pages + log free runs) plus one system call per run of pages released.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::ops::Range;
use std::ptr;

/// The system page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// Address space reserved per arena unless one batch needs more.
const ARENA_BYTES: usize = 256 << 20;

/// Bytes of the module's memory in use, by kind: pages of live batches that are committed
/// (accessible), so what a page-granular accountant would count as mapped.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Read-execute pages (code, call stubs, GOT slots) still used by a live function.
    pub code_bytes: usize,
    /// Read-only and read-write data pages still used by a live data object.
    pub data_bytes: usize,
    /// Address space reserved for code and data (committed or not).
    pub reserved_bytes: usize,
}

/// One reserved address range and its free page runs (by start and by size, the same runs).
struct Arena {
    base: usize,
    len: usize,
    by_start: BTreeMap<usize, usize>,
    by_size: BTreeSet<(usize, usize)>,
}

impl Arena {
    fn reserve(len: usize) -> io::Result<Arena> {
        // SAFETY: a fresh private anonymous mapping; it aliases nothing.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut arena = Arena {
            base: base as usize,
            len,
            by_start: BTreeMap::new(),
            by_size: BTreeSet::new(),
        };
        arena.insert_run(arena.base, len);
        Ok(arena)
    }

    /// The smallest free run of at least `len` bytes, cut to `len` (best fit).
    fn take(&mut self, len: usize) -> Option<usize> {
        let &(size, start) = self.by_size.range((len, 0)..).next()?;
        self.remove_run(start, size);
        if size > len {
            self.insert_run(start + len, size - len);
        }
        Some(start)
    }

    /// Return `[start, start + len)` (decommitted) to the free runs, merged with its
    /// neighbours. Invariant kept: free runs never touch or overlap.
    fn give_back(&mut self, mut start: usize, mut len: usize) {
        if let Some((&prev, &prev_len)) = self.by_start.range(..start).next_back() {
            debug_assert!(prev + prev_len <= start, "a page is given back twice");
            if prev + prev_len == start {
                self.remove_run(prev, prev_len);
                start = prev;
                len += prev_len;
            }
        }
        debug_assert!(
            self.by_start.range(start..start + len).next().is_none(),
            "a page is given back twice"
        );
        if let Some(&next_len) = self.by_start.get(&(start + len)) {
            self.remove_run(start + len, next_len);
            len += next_len;
        }
        self.insert_run(start, len);
    }

    fn insert_run(&mut self, start: usize, len: usize) {
        self.by_start.insert(start, len);
        self.by_size.insert((len, start));
    }

    fn remove_run(&mut self, start: usize, len: usize) {
        self.by_start.remove(&start);
        self.by_size.remove(&(len, start));
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: we own the reservation; the module drops every registration pointing into
        // it first, and its contract forbids running its code after it is dropped.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// The pages of one finalized batch: `[base, base + len)`, code in `[0, code_end)`,
/// read-only data in `[code_end, ro_end)`, writable data after (offsets from `base`, page
/// multiples). `users[p]` counts the live objects touching page `p`; a page at zero is
/// decommitted and back in its arena.
pub(crate) struct BatchPages {
    arena: usize,
    base: usize,
    len: usize,
    code_end: usize,
    ro_end: usize,
    sealed: bool,
    users: Vec<u32>,
}

impl BatchPages {
    /// Start address.
    pub(crate) fn base(&self) -> usize {
        self.base
    }

    /// The whole batch, for filling it. Only before it is sealed.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        assert!(!self.sealed, "batch memory written after it was sealed");
        // SAFETY: the pages are committed read-write until sealed, owned by this batch
        // alone, and the borrow of `self` keeps them so.
        unsafe { std::slice::from_raw_parts_mut(self.base as *mut u8, self.len) }
    }

    /// `range` of the batch (offsets), readable while an object using it is live.
    pub(crate) fn bytes(&self, range: Range<usize>) -> &[u8] {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: the caller reads the range of a live object, whose pages stay committed
        // and readable (read-write, read-execute or read-only) while the borrow lasts;
        // nothing writes them while shared (writing needs `&mut self`).
        unsafe { std::slice::from_raw_parts((self.base + range.start) as *const u8, range.len()) }
    }

    /// Count one more live object on the pages `range` (offsets, non-empty) touches.
    pub(crate) fn add_user(&mut self, range: Range<usize>) {
        for p in pages(&range) {
            self.users[p] += 1;
        }
    }
}

/// The pages `range` touches (an empty range touches the page it starts on).
fn pages(range: &Range<usize>) -> Range<usize> {
    let page = page_size();
    range.start / page..range.end.max(range.start + 1).div_ceil(page)
}

/// A module's arenas and what is committed in them.
#[derive(Default)]
pub(crate) struct CodeMemory {
    arenas: Vec<Arena>,
    stats: MemoryStats,
}

impl CodeMemory {
    pub(crate) fn stats(&self) -> MemoryStats {
        self.stats
    }

    /// Commit a batch of `len` bytes (code `[0, code_end)`, read-only data to `ro_end`;
    /// page multiples except `code_end`, rounded up) read-write, with no users yet.
    pub(crate) fn allocate(
        &mut self,
        len: usize,
        code_end: usize,
        ro_end: usize,
    ) -> io::Result<BatchPages> {
        let page = page_size();
        let len = len.max(1).next_multiple_of(page);
        let code_end = code_end.next_multiple_of(page);
        debug_assert!(code_end <= ro_end && ro_end <= len && ro_end % page == 0);
        let found = self
            .arenas
            .iter_mut()
            .enumerate()
            .find_map(|(i, a)| a.take(len).map(|base| (i, base)));
        let (arena, base) = match found {
            Some(found) => found,
            None => {
                let mut a = Arena::reserve(len.max(ARENA_BYTES))?;
                self.stats.reserved_bytes += a.len;
                let base = a.take(len).expect("a fresh arena holds the batch");
                self.arenas.push(a);
                (self.arenas.len() - 1, base)
            }
        };
        if let Err(e) = protect(base, len, libc::PROT_READ | libc::PROT_WRITE) {
            self.arenas[arena].give_back(base, len);
            return Err(e);
        }
        self.stats.code_bytes += code_end;
        self.stats.data_bytes += len - code_end;
        Ok(BatchPages {
            arena,
            base,
            len,
            code_end,
            ro_end,
            sealed: false,
            users: vec![0; len / page],
        })
    }

    /// Switch the code pages to read-execute and the read-only data pages to read-only,
    /// once; then release the pages no object uses (alignment gaps). After this nothing
    /// writes the code or read-only pages again.
    pub(crate) fn seal(&mut self, b: &mut BatchPages) -> io::Result<()> {
        // The code is written: make instruction fetch see it before it becomes executable.
        crate::arch::host::sync_icache(b.base, b.code_end);
        protect(b.base, b.code_end, libc::PROT_READ | libc::PROT_EXEC)?;
        protect(b.base + b.code_end, b.ro_end - b.code_end, libc::PROT_READ)?;
        b.sealed = true;
        // A page that fails to decommit stays committed and counted, and is never reused.
        let _ = self.release_unused(b, 0..b.users.len());
        Ok(())
    }

    /// One object on `range` of `b` is gone: release the pages it was the last user of.
    pub(crate) fn drop_user(&mut self, b: &mut BatchPages, range: Range<usize>) -> io::Result<()> {
        let touched = pages(&range);
        for p in touched.clone() {
            // Invariant: the object was counted on each of its pages by `add_user`.
            b.users[p] -= 1;
        }
        self.release_unused(b, touched)
    }

    /// Release every page of `b` (a batch that failed to finalize).
    pub(crate) fn discard(&mut self, mut b: BatchPages) {
        for u in &mut b.users {
            if *u != u32::MAX {
                *u = 0;
            }
        }
        let all = 0..b.users.len();
        // A failure leaves the pages out of the free runs, so nothing reuses them.
        let _ = self.release_unused(&mut b, all);
    }

    /// Decommit and give back the maximal runs of unused pages among `pages` of `b`.
    fn release_unused(&mut self, b: &mut BatchPages, pages: Range<usize>) -> io::Result<()> {
        let mut result = Ok(());
        let mut p = pages.start;
        while p < pages.end {
            if b.users[p] != 0 {
                p += 1;
                continue;
            }
            let run = p;
            while p < pages.end && b.users[p] == 0 {
                p += 1;
            }
            if let Err(e) = self.release(b, run..p) {
                result = Err(e);
            }
        }
        result
    }

    fn release(&mut self, b: &mut BatchPages, pages: Range<usize>) -> io::Result<()> {
        let page = page_size();
        let (start, end) = (pages.start * page, pages.end * page);
        // Mark the pages released, so a later call never releases them twice.
        for u in &mut b.users[pages] {
            *u = u32::MAX;
        }
        let code = end.min(b.code_end).saturating_sub(start);
        decommit(b.base + start, end - start)?;
        self.stats.code_bytes -= code;
        self.stats.data_bytes -= end - start - code;
        self.arenas[b.arena].give_back(b.base + start, end - start);
        Ok(())
    }
}

fn protect(addr: usize, len: usize, prot: libc::c_int) -> io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    // SAFETY: the range is page-aligned and lies in a batch of ours; no reference into it
    // outlives the `bytes_mut` borrows that ended before.
    let rc = unsafe { libc::mprotect(addr as *mut libc::c_void, len, prot) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Replace `[addr, addr + len)` by a fresh inaccessible mapping: the kernel drops the pages
/// (resident memory and commit charge) and the range is ready for reuse.
fn decommit(addr: usize, len: usize) -> io::Result<()> {
    // SAFETY: the range is page-aligned inside one of our arenas, and no live object uses
    // it (the caller's page counts), so nothing refers to its contents.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
