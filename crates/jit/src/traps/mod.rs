//! Catching native traps in JIT code.
//!
//! - `registry`: the process-wide, lock-free-for-readers table of code regions and trap sites.
//! - `handler`: the signal handler that finds a faulting PC there and resumes the trampoline.
//! - `altstack`: a per-thread alternate stack for the handler.
//! - `stack`: the per-thread stack guard region, which tells a stack overflow apart.

mod altstack;
mod handler;
pub(crate) mod registry;
mod stack;

/// Make trap handling work for a call on the current thread: the handler is installed (once
/// per process), the thread has an alternate signal stack, and its stack guard region is
/// known.
pub(crate) fn prepare_thread() -> std::io::Result<()> {
    handler::install();
    stack::ensure();
    altstack::ensure()
}
