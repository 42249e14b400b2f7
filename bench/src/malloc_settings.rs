//! Fixed glibc malloc thresholds for benchmarks that compile in fresh memory.
//!
//! glibc adapts its mmap and trim thresholds to the sizes freed so far: after one pattern
//! of allocations the heap top is trimmed at the end of every compile (and faulted in again
//! by the next), after another it is kept. Which one a compile meets then depends on what
//! the process allocated before — a shape run alone and the same shape run after others
//! differed by 60% in Kestrel's time and 25% in Cranelift's. Fixing both thresholds (the
//! same for both engines, which share the process) makes a measurement depend on the
//! compiler alone. No effect on other C libraries.

/// Pin the thresholds: blocks up to 32 MiB come from the heap, and a free heap top is
/// returned to the system only beyond 1 GiB.
pub fn pin_thresholds() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's `mallopt` parameters (malloc.h).
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: `mallopt` only sets allocator parameters; called before the measured
        // work, with values glibc documents as valid (the mmap threshold at most 32 MiB on
        // 64-bit systems).
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 32 << 20);
            mallopt(M_TRIM_THRESHOLD, 1 << 30);
        }
    }
}
