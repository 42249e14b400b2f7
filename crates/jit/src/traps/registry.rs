//! The process-wide table of finalized code regions and their trap sites, read by the signal
//! handler.
//!
//! Contract: [`locate`] is async-signal-safe — it takes no lock, allocates nothing and only
//! reads memory that cannot be freed while it runs. [`register`] and dropping a
//! [`Registration`] are ordinary code, serialised by a mutex the handler never touches.
//!
//! Invariants:
//! - `SLOTS[i]` is null or points to a live, immutable `RegionInfo` owned by the registry;
//!   only writers (holding `WRITER`) change a slot, and only from or to null.
//! - A `RegionInfo` is freed only after its slot was cleared *and* `READERS` was seen at zero
//!   afterwards. With sequentially consistent operations, any reader that incremented
//!   `READERS` before that zero was observed has already decremented it, and any reader that
//!   increments later loads the cleared slot; so no reader can hold a pointer to freed memory.
//! - `HIGH` bounds the slots ever used, so lookups scan only that prefix.
//! - A retired trap site or function (the function was freed) is never reported again. Its
//!   region's range may then overlap a later region placed on the freed pages, so a lookup
//!   goes on to the next region when the one holding `pc` has no live site or function there.

use std::ops::Range;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

use kestrel_ir::TrapCode;

/// Live regions at most; each `finalize_definitions` with new code uses one.
pub(crate) const MAX_REGIONS: usize = 4096;

static SLOTS: [AtomicPtr<RegionInfo>; MAX_REGIONS] =
    [const { AtomicPtr::new(ptr::null_mut()) }; MAX_REGIONS];
static HIGH: AtomicUsize = AtomicUsize::new(0);
static READERS: AtomicUsize = AtomicUsize::new(0);
static WRITER: Mutex<()> = Mutex::new(());

/// One trap site, by its offset in the region.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TrapEntry {
    pub region_offset: u32,
    pub func: u32,
    pub func_offset: u32,
    pub code: TrapCode,
    /// The source location of the trapping instruction (0: none), from the function's
    /// source ranges.
    pub srcloc: u32,
}

/// One function of a region: where its code lies and its name (for fatal-fault messages).
pub(crate) struct FuncEntry {
    pub region_offset: u32,
    pub len: u32,
    pub func: u32,
    pub name: Box<str>,
}

/// A finalized code region: `[start, start + len)`, its trap sites sorted by offset, and its
/// functions sorted by offset (not overlapping).
pub(crate) struct RegionInfo {
    pub start: usize,
    pub len: usize,
    pub traps: Box<[TrapEntry]>,
    pub funcs: Box<[FuncEntry]>,
    /// Per trap site: false once retired.
    live: Box<[AtomicBool]>,
    /// Per function: false once retired.
    func_live: Box<[AtomicBool]>,
}

impl RegionInfo {
    pub(crate) fn new(
        start: usize,
        len: usize,
        traps: Box<[TrapEntry]>,
        funcs: Box<[FuncEntry]>,
    ) -> RegionInfo {
        let flags = |n: usize| (0..n).map(|_| AtomicBool::new(true)).collect();
        RegionInfo {
            start,
            len,
            live: flags(traps.len()),
            func_live: flags(funcs.len()),
            traps,
            funcs,
        }
    }
}

/// Bytes of a function's name a [`Located`] keeps.
pub(crate) const NAME_BYTES: usize = 96;

/// Where a PC in JIT code is: its function (if the PC lies in one rather than in a stub or
/// padding), the offset there, the start of its name (`name_len` bytes of `name`, cut at
/// [`NAME_BYTES`]), and the trap site at the PC if there is one.
#[derive(Copy, Clone)]
pub(crate) struct Located {
    pub func: Option<(u32, u32)>,
    pub name: [u8; NAME_BYTES],
    pub name_len: usize,
    pub trap: Option<TrapEntry>,
}

/// Keeps a region in the registry; dropping it removes the region (before its code is
/// unmapped, by field order in the owner).
pub(crate) struct Registration {
    slot: usize,
}

/// Publish `info` so faults inside it are recognised. Returns `None` when every slot is taken.
pub(crate) fn register(info: RegionInfo) -> Option<Registration> {
    debug_assert!(info
        .traps
        .windows(2)
        .all(|w| w[0].region_offset < w[1].region_offset));
    debug_assert!(info
        .funcs
        .windows(2)
        .all(|w| w[0].region_offset + w[0].len <= w[1].region_offset));
    let _guard = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    let slot = SLOTS.iter().position(|s| s.load(SeqCst).is_null())?;
    // Publish the bound first, so a reader that sees the slot also scans it.
    HIGH.fetch_max(slot + 1, SeqCst);
    SLOTS[slot].store(Box::into_raw(Box::new(info)), SeqCst);
    Some(Registration { slot })
}

impl Registration {
    /// Stop reporting the trap sites at these indices of the region's list and the function
    /// at index `func` of its functions (a freed function's). O(sites retired).
    pub(crate) fn retire(&self, sites: Range<usize>, func: usize) {
        // SAFETY: the slot holds this registration's `RegionInfo` until it is dropped, and
        // only `drop` frees it; the flags are atomics, so sharing them with readers is fine.
        let info = unsafe { &*SLOTS[self.slot].load(SeqCst) };
        for flag in &info.live[sites] {
            flag.store(false, SeqCst);
        }
        info.func_live[func].store(false, SeqCst);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _guard = WRITER.lock().unwrap_or_else(|e| e.into_inner());
        let info = SLOTS[self.slot].swap(ptr::null_mut(), SeqCst);
        // Wait out readers that may have loaded the pointer before the swap. Readers never
        // block, so this ends; a handler interrupting this very thread finishes first.
        while READERS.load(SeqCst) != 0 {
            std::thread::yield_now();
        }
        debug_assert!(!info.is_null());
        // SAFETY: `info` came from `Box::into_raw` in `register`, was removed from its slot
        // above, and no reader still holds it (see the module invariants).
        drop(unsafe { Box::from_raw(info) });
    }
}

/// Where `pc` is, if it lies in a registered region (see [`Located`]). Async-signal-safe.
pub(crate) fn locate(pc: usize) -> Option<Located> {
    READERS.fetch_add(1, SeqCst);
    let mut found = None;
    let high = HIGH.load(SeqCst);
    for slot in &SLOTS[..high] {
        let info = slot.load(SeqCst);
        if info.is_null() {
            continue;
        }
        // SAFETY: non-null slots point to live `RegionInfo`s, which stay alive while
        // `READERS` is non-zero (module invariants).
        let info = unsafe { &*info };
        if pc < info.start || pc - info.start >= info.len {
            continue;
        }
        // A region whose live code does not hold `pc` (its function was freed and a later
        // region reuses the pages) is passed over.
        if let Some(located) = locate_in(info, pc - info.start) {
            found = Some(located);
            break;
        }
    }
    READERS.fetch_sub(1, SeqCst);
    found
}

/// [`locate`] within one region, at `offset` from its start. Allocates nothing.
fn locate_in(info: &RegionInfo, offset: usize) -> Option<Located> {
    let trap = info
        .traps
        .binary_search_by(|t| (t.region_offset as usize).cmp(&offset))
        .ok()
        .filter(|&i| info.live[i].load(SeqCst))
        .map(|i| info.traps[i]);
    // The last function starting at or before `offset`, if `offset` lies inside it and it
    // was not freed.
    let after = info
        .funcs
        .partition_point(|f| f.region_offset as usize <= offset);
    let func = after
        .checked_sub(1)
        .filter(|&i| info.func_live[i].load(SeqCst))
        .map(|i| &info.funcs[i])
        .filter(|f| offset - (f.region_offset as usize) < f.len as usize);
    if trap.is_none() && func.is_none() {
        return None;
    }
    let mut name = [0u8; NAME_BYTES];
    let mut name_len = 0;
    if let Some(f) = func {
        let bytes = f.name.as_bytes();
        name_len = bytes.len().min(NAME_BYTES);
        name[..name_len].copy_from_slice(&bytes[..name_len]);
    }
    Some(Located {
        func: func.map(|f| (f.func, (offset - f.region_offset as usize) as u32)),
        name,
        name_len,
        trap,
    })
}
