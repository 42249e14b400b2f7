//! A global allocator that counts live heap bytes and their high-water mark, so a
//! benchmark can measure the peak memory of one compile in-process, for each engine alike.
//!
//! Counting is on only inside [`peak_during`] (one flag test per call otherwise), so the
//! timing benchmarks do not pay for the counters' atomic operations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn grew(by: usize) {
        if ON.load(Relaxed) {
            let now = LIVE.fetch_add(by, Relaxed) + by;
            PEAK.fetch_max(now, Relaxed);
        }
    }

    fn shrank(by: usize) {
        if ON.load(Relaxed) {
            // Blocks allocated before counting began may be freed inside it: saturate.
            let _ = LIVE.fetch_update(Relaxed, Relaxed, |live| Some(live.saturating_sub(by)));
        }
    }
}

// SAFETY: forwards every call to `System` unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Counting::grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Counting::grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        Counting::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                Counting::grew(new_size - layout.size());
            } else {
                Counting::shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// Runs `f` and returns its result with the most heap bytes it had allocated at once
/// (net of what it freed of blocks allocated before it started).
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ON.store(true, Relaxed);
    let out = f();
    ON.store(false, Relaxed);
    (out, PEAK.load(Relaxed))
}
