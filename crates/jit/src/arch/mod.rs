//! Everything the JIT does differently per host instruction set, behind one module name,
//! `host`, selected by `cfg(target_arch)` here and nowhere else:
//!
//! - the backend that compiles for this machine ([`HostIsa`], [`host_isa`]);
//! - the calling convention as the trampoline sees it: argument and result registers, the
//!   backend's locations for a signature, where the return area's address goes;
//! - the trampoline and trap landing (hand-written assembly);
//! - the signal context: reading PC and SP, redirecting to the landing;
//! - code placement: the relocation kinds placed, call stubs, padding, instruction-cache
//!   maintenance;
//! - the unwind CIE and the ELF machine for debugger images.
//!
//! Each host file provides the same items (`x64.rs`, `aarch64.rs`); the rest of the crate
//! uses them through `host::`.

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
#[cfg(target_arch = "aarch64")]
mod aarch64_trampoline;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x64;
#[cfg(target_arch = "x86_64")]
mod x64_trampoline;

#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64 as host;
#[cfg(target_arch = "x86_64")]
pub(crate) use x64 as host;

pub use host::HostIsa;

/// The backend that compiles code for the machine this process runs on: the one place the
/// JIT (and the crates that JIT through it: `kestrel-wasm`, the test runners) picks an ISA.
pub fn host_isa() -> HostIsa {
    HostIsa
}
