//! An address-space reservation for a guard-page memory: one private anonymous mapping,
//! inaccessible (`PROT_NONE`) except for a prefix that is made readable and writable as the
//! memory grows.
//!
//! Contract. [`Reservation::new`] maps `len` bytes with `MAP_NORESERVE`, so only the
//! committed prefix counts against memory and only touched pages use it; the mapping never
//! moves and is unmapped on drop. [`Reservation::commit`] makes `[0, end)` accessible;
//! freshly committed pages read as zero because they were never accessible before (the
//! accessible prefix only grows). Everything past the prefix faults on access, which is
//! what lets translated code skip bounds checks (see `translate/memory.rs`).
//!
//! Cost: `new` and drop are one system call each; `commit` is one `mprotect` over the new
//! pages (the kernel's cost is proportional to the pages whose protection changes).

use std::io;

/// A reserved range; see the module docs.
#[derive(Debug)]
pub(crate) struct Reservation {
    base: *mut u8,
    len: usize,
    /// The accessible prefix, in bytes.
    committed: usize,
}

impl Reservation {
    /// Reserve `len` bytes of inaccessible address space.
    pub fn new(len: usize) -> io::Result<Reservation> {
        // SAFETY: a fresh private anonymous mapping at an address the kernel picks; it
        // aliases nothing.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
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
        Ok(Reservation {
            base: base.cast(),
            len,
            committed: 0,
        })
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Make `[0, end)` readable and writable. `end` must be a multiple of the OS page size
    /// (Wasm pages are) and within the reservation; a smaller `end` than before is a no-op.
    pub fn commit(&mut self, end: usize) -> io::Result<()> {
        assert!(end <= self.len, "commit past the reservation");
        if end <= self.committed {
            return Ok(());
        }
        // SAFETY: `[committed, end)` lies inside the mapping made in `new`, page-aligned
        // (the base is page-aligned and both bounds are multiples of the Wasm page size);
        // changing its protection affects no other allocation.
        let rc = unsafe {
            libc::mprotect(
                self.base.add(self.committed).cast(),
                end - self.committed,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // Post-invariant: `[0, end)` is accessible, the rest still faults.
        self.committed = end;
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; the owning memory is gone, and
        // no translated code runs on it any more (instances keep their memories alive).
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_prefix_is_zeroed_and_writable() {
        let mut r = Reservation::new(1 << 30).unwrap();
        r.commit(65536).unwrap();
        // SAFETY: the first 64 KiB were just committed.
        let bytes = unsafe { std::slice::from_raw_parts_mut(r.base(), 65536) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[65535] = 7;
        r.commit(2 * 65536).unwrap();
        // SAFETY: now 128 KiB are committed.
        let bytes = unsafe { std::slice::from_raw_parts(r.base(), 2 * 65536) };
        assert_eq!(bytes[65535], 7);
        assert_eq!(bytes[65536], 0);
    }
}
