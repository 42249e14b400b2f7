//! The current thread's stack guard region, for telling a stack overflow from other faults.
//!
//! Contract: [`ensure`] (ordinary code, called before each host call into JIT code) finds
//! the calling thread's stack bounds once and caches its guard region in a const
//! thread-local; [`in_guard`] (async-signal-safe: one const thread-local read) says whether
//! a fault address lies in that region. The region is:
//! - for a thread other than the main one, the guard below its stack
//!   (`pthread_attr_getstack`, `pthread_attr_getguardsize`; at least one page), plus the
//!   lowest page of the stack itself;
//! - for the main thread, whose stack grows on demand up to `RLIMIT_STACK`, `MAIN_GAP` bytes
//!   either side of the lowest address that limit allows (glibc reports that bound;
//!   the kernel refuses to grow the stack within its guard gap of the mapping below, which
//!   may lie above the bound).
//!
//! A thread whose bounds cannot be found has an empty region: its overflows are not
//! recognised (they keep the behaviour of the handler installed before ours).
//!
//! Cost: O(1) per call after the first on a thread (the first reads the thread's
//! attributes; on the main thread glibc reads `/proc/self/maps`).

use std::cell::Cell;

/// The main thread's region extends this far either side of its lowest allowed address
/// (the kernel's default stack guard gap, 256 pages of 4 KiB).
const MAIN_GAP: usize = 1 << 20;

thread_local! {
    /// `[lo, hi)` of this thread's guard region; `(0, 0)` before [`ensure`] or when the
    /// bounds are unknown. Const-initialised without a destructor: readable from a handler.
    static GUARD: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    static KNOWN: Cell<bool> = const { Cell::new(false) };
}

/// Find and cache the calling thread's guard region, once per thread.
pub(crate) fn ensure() {
    if KNOWN.get() {
        return;
    }
    KNOWN.set(true);
    if let Some(region) = guard_region() {
        GUARD.set(region);
    }
}

/// Whether `addr` lies in the calling thread's guard region. Async-signal-safe.
pub(crate) fn in_guard(addr: usize) -> bool {
    let (lo, hi) = GUARD.get();
    lo <= addr && addr < hi
}

fn guard_region() -> Option<(usize, usize)> {
    let page = crate::memory::page_size();
    // SAFETY: a zeroed pthread_attr_t is a valid out-parameter for pthread_getattr_np, which
    // initialises it; it is destroyed below on every path after a successful call.
    let (low, guard) = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let mut guard: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0
            && libc::pthread_attr_getguardsize(&attr, &mut guard) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if !ok || addr.is_null() {
            return None;
        }
        (addr as usize, guard)
    };
    // SAFETY: getpid and gettid have no preconditions.
    let main = unsafe { libc::getpid() == libc::gettid() };
    Some(if main {
        (low.saturating_sub(MAIN_GAP), low.saturating_add(MAIN_GAP))
    } else {
        (
            low.saturating_sub(guard.max(page)),
            low.saturating_add(page),
        )
    })
}
