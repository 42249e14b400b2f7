//! Unwind info for JIT code: `.eh_frame` sections (absolute addresses, built by
//! `kestrel_module::eh_frame`) registered with the process's unwinder through libgcc's
//! `__register_frame`, deregistered when their code is freed. With them, `_Unwind_Backtrace`
//! (Rust backtraces, C++ exceptions, Rust panics unwinding through Kestrel frames) walks
//! from a host function called by JIT code, through the JIT frames, to the host code that
//! called them.
//!
//! A finalized batch's functions are registered in groups of at most [`GROUP`], one
//! section per group: freeing a function re-registers its group without it (the new
//! section first, then the old one goes), so a free costs O(`GROUP` functions' records),
//! while the unwinder sees one object per group rather than per function (libgcc before
//! GCC 13 walks its registered objects linearly, when unwinding and when deregistering).
//!
//! libgcc reads the whole section from the pointer given, up to its zero terminator, and
//! keeps the pointer: the bytes live in the registration until it is dropped.
//!
//! Cost: O(functions + unwind records) per batch; the unwinder's own lookup is its business.

use crate::arch::host::CIE;
use kestrel_codegen::machinst::unwind::UnwindOp;
use kestrel_module::eh_frame::EhFrameBuilder;

extern "C" {
    fn __register_frame(begin: *const u8);
    fn __deregister_frame(begin: *const u8);
}

/// Functions per registered section at most.
pub(crate) const GROUP: usize = 32;

/// One function as the unwinder sees it: `key` (its declaration index), address, code
/// length and call-frame rule changes.
pub(crate) struct FrameMember {
    pub key: usize,
    pub addr: usize,
    pub len: u32,
    pub unwind: Vec<(u32, UnwindOp)>,
}

/// Live functions of one group and the section registered for them (`None` when empty).
pub(crate) struct FrameGroup {
    members: Vec<FrameMember>,
    registration: Option<FrameRegistration>,
}

impl FrameGroup {
    /// Register `members` (at most [`GROUP`]) as one section.
    pub(crate) fn new(members: Vec<FrameMember>) -> FrameGroup {
        debug_assert!(members.len() <= GROUP);
        let registration = FrameRegistration::register(&members);
        FrameGroup {
            members,
            registration,
        }
    }

    /// Stop describing function `key`: the others are registered anew, then the old
    /// section is deregistered. O(the group's records).
    pub(crate) fn remove(&mut self, key: usize) {
        let Some(i) = self.members.iter().position(|m| m.key == key) else {
            return;
        };
        self.members.swap_remove(i);
        let fresh = FrameRegistration::register(&self.members);
        // Dropping the old registration deregisters it, after the fresh one is in.
        self.registration = fresh;
    }
}

/// A registered `.eh_frame` section; deregistered on drop.
struct FrameRegistration {
    section: Box<[u8]>,
}

impl FrameRegistration {
    /// Describe and register these functions (`None` for none).
    fn register(members: &[FrameMember]) -> Option<FrameRegistration> {
        if members.is_empty() {
            return None;
        }
        let mut builder = EhFrameBuilder::absolute(&CIE);
        for m in members {
            builder.add_function(m.addr as u64, m.len, &m.unwind);
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
