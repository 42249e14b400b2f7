//! Code memory with W^X: a region is mapped read-write, filled, then its code part is switched
//! to read-execute (and its read-only data to read-only) once and for all. No page is ever
//! writable and executable at the same time, and nothing is mapped twice.

use std::io;
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

/// A private anonymous mapping that holds code, unmapped on drop.
///
/// States: writable (`executable == false`, `bytes_mut` allowed) → executable (read-execute,
/// immutable). The address is kept as an integer so the owner stays `Send + Sync`; the
/// mapping is only written through `&mut self` while writable.
pub(crate) struct CodeRegion {
    base: usize,
    len: usize,
    executable: bool,
}

impl CodeRegion {
    /// Map at least `size` bytes (rounded up to whole pages) read-write.
    pub(crate) fn new_writable(size: usize) -> io::Result<CodeRegion> {
        let page = page_size();
        let len = size.max(1).div_ceil(page) * page;
        // SAFETY: a fresh private anonymous mapping; it aliases nothing.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(CodeRegion {
            base: base as usize,
            len,
            executable: false,
        })
    }

    /// Start address.
    pub(crate) fn base(&self) -> usize {
        self.base
    }

    /// Mapped length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole region, for filling it. Only while it is still writable.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        assert!(
            !self.executable,
            "code region written after it became executable"
        );
        // SAFETY: the mapping is `len` bytes, readable and writable in this state, owned by
        // `self` alone, and the borrow of `self` keeps it mapped.
        unsafe { std::slice::from_raw_parts_mut(self.base as *mut u8, self.len) }
    }

    /// The first `len` bytes (at most the region), readable in every state.
    pub(crate) fn bytes(&self, len: usize) -> &[u8] {
        // SAFETY: the mapping is readable whatever its protection (read-write, read-execute
        // or read-only), and the borrow of `self` keeps it mapped; nothing writes it while
        // shared (writing needs `&mut self`).
        unsafe { std::slice::from_raw_parts(self.base as *const u8, len.min(self.len)) }
    }

    /// Switch `[0, code_end)` to read-execute and `[code_end, ro_end)` to read-only; the
    /// rest stays read-write (writable data). Both bounds are page multiples (or the
    /// region's end). After this, nothing writes the code or read-only parts again.
    pub(crate) fn seal(&mut self, code_end: usize, ro_end: usize) -> io::Result<()> {
        let page = page_size();
        let code_end = code_end.div_ceil(page) * page;
        debug_assert!(code_end <= ro_end && ro_end <= self.len && ro_end % page == 0);
        self.protect(0, code_end.min(self.len), libc::PROT_READ | libc::PROT_EXEC)?;
        self.protect(code_end, ro_end.saturating_sub(code_end), libc::PROT_READ)?;
        self.executable = true;
        Ok(())
    }

    fn protect(&mut self, start: usize, len: usize, prot: libc::c_int) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the range lies inside our mapping (page-aligned, checked by the caller);
        // no references into it outlive the `bytes_mut` borrows that ended before this
        // `&mut self` call.
        let rc = unsafe { libc::mprotect((self.base + start) as *mut libc::c_void, len, prot) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for CodeRegion {
    fn drop(&mut self) {
        // SAFETY: we own the mapping; the module unregisters its trap sites first, and its
        // contract forbids running its code after it is dropped.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}
