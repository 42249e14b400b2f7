//! Unwind info for JIT code: each finalized function gets its own `.eh_frame` section
//! (absolute addresses, built by `kestrel_module::eh_frame`), registered with the process's
//! unwinder through libgcc's `__register_frame` and deregistered when the function is freed
//! (or its module dropped), so freeing one function touches only its own records.
//! With it, `_Unwind_Backtrace` (Rust backtraces, C++ exceptions, Rust panics unwinding
//! through Kestrel frames) walks from a host function called by JIT code, through the JIT
//! frames, to the host code that called them.
//!
//! libgcc reads the whole section from the pointer given, up to its zero terminator, and
//! keeps the pointer: the bytes live in the registration until it is dropped.
//!
//! Cost: O(unwind records) per function; the unwinder's own lookup is its business (one
//! registered object per live function).

use kestrel_codegen::isa::x64::unwind::CIE;
use kestrel_module::eh_frame::EhFrameBuilder;

use crate::CompiledFunction;

extern "C" {
    fn __register_frame(begin: *const u8);
    fn __deregister_frame(begin: *const u8);
}

/// A registered `.eh_frame` section; deregistered on drop.
pub(crate) struct FrameRegistration {
    section: Box<[u8]>,
}

impl FrameRegistration {
    /// Describe and register the functions placed at these addresses (`None` for none).
    pub(crate) fn register(placed: &[(usize, &CompiledFunction)]) -> Option<FrameRegistration> {
        if placed.is_empty() {
            return None;
        }
        let mut builder = EhFrameBuilder::absolute(&CIE);
        for &(addr, f) in placed {
            builder.add_function(addr as u64, f.code.len() as u32, &f.unwind);
        }
        let section = builder.finish().0.into_boxed_slice();
        // SAFETY: a well-formed, zero-terminated `.eh_frame` section describing code that
        // stays mapped until this registration is dropped; the bytes are owned by it.
        unsafe { __register_frame(section.as_ptr()) };
        Some(FrameRegistration { section })
    }
}

impl Drop for FrameRegistration {
    fn drop(&mut self) {
        // SAFETY: the same pointer was registered by `register` and not deregistered since.
        unsafe { __deregister_frame(self.section.as_ptr()) };
    }
}

// SAFETY: the section is plain bytes owned by the registration; libgcc's registry is
// internally locked, so registering and deregistering from any thread is allowed.
unsafe impl Send for FrameRegistration {}
unsafe impl Sync for FrameRegistration {}
