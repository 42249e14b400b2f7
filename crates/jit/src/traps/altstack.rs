//! A per-thread alternate signal stack, so the handler can run even when the fault is a stack
//! overflow in JIT code.
//!
//! Contract: after [`ensure`], the calling thread has an alternate stack of at least
//! `MIN_EXISTING` bytes: its own if it had one that large (Rust's runtime gives its threads
//! one), else one mapped here with a guard page below it, which is disabled and unmapped when
//! the thread exits.

use std::cell::RefCell;
use std::io;
use std::ptr;

/// An existing alternate stack at least this large is kept.
const MIN_EXISTING: usize = 16 * 1024;
/// Size of the stacks mapped here, not counting the guard page.
const SIZE: usize = 64 * 1024;

struct AltStack {
    /// The whole mapping: guard page, then the stack.
    base: usize,
    len: usize,
    /// What was installed before (disabled or too small), restored on thread exit.
    previous: libc::stack_t,
}

thread_local! {
    /// `Some` once this thread was checked; holds the stack if one was mapped here.
    static STACK: RefCell<Option<Option<AltStack>>> = const { RefCell::new(None) };
}

/// Give the calling thread a usable alternate signal stack if it has none.
pub(crate) fn ensure() -> io::Result<()> {
    STACK.with(|cell| {
        let mut state = cell.borrow_mut();
        if state.is_none() {
            *state = Some(install()?);
        }
        Ok(())
    })
}

fn install() -> io::Result<Option<AltStack>> {
    // SAFETY: a zeroed stack_t is a valid out-parameter; sigaltstack only writes it.
    let mut previous: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: querying with a null new stack changes nothing.
    if unsafe { libc::sigaltstack(ptr::null(), &mut previous) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if previous.ss_flags & libc::SS_DISABLE == 0 && previous.ss_size >= MIN_EXISTING {
        return Ok(None);
    }
    let page = crate::memory::page_size();
    let len = page + SIZE;
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
    let stack = AltStack {
        base: base as usize,
        len,
        previous,
    };
    // SAFETY: the first page belongs to the mapping just made.
    if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let new = libc::stack_t {
        ss_sp: (stack.base + page) as *mut libc::c_void,
        ss_flags: 0,
        ss_size: SIZE,
    };
    // SAFETY: `new` describes writable memory owned by `stack`, which stays mapped until
    // the stack is uninstalled in `Drop`.
    if unsafe { libc::sigaltstack(&new, ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(stack))
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: runs at thread exit, when no handler is running on this stack; the
        // previous stack is put back before the memory is unmapped.
        unsafe {
            libc::sigaltstack(&self.previous, ptr::null_mut());
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}
