//! Catching native traps in JIT code.
//!
//! - `registry`: the process-wide, lock-free-for-readers table of code regions and trap sites.
//! - `handler`: the signal handler that finds a faulting PC there and resumes the trampoline.
//! - `altstack`: a per-thread alternate stack for the handler.

mod altstack;
mod handler;
pub(crate) mod registry;

/// Make trap handling work for a call on the current thread: the handler is installed (once
/// per process) and the thread has an alternate signal stack.
pub(crate) fn prepare_thread() -> std::io::Result<()> {
    handler::install();
    altstack::ensure()
}
