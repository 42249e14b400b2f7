//! Everything the JIT does differently per host instruction set, behind one module name,
//! `host`, selected by `cfg(target_arch)` here and nowhere else. The compiler side (the
//! backend, its call locations, relocation kinds, unwind CIE and ELF machine) comes from the
//! module's `TargetIsa`; what is here is what runs in this process:
//!
//! - the host's name, checked against the module's ISA;
//! - the calling convention as the trampoline sees it: argument and result registers, where
//!   the return area's address goes;
//! - the trampoline and trap landing (hand-written assembly);
//! - the signal context: reading PC and SP, redirecting to the landing;
//! - code placement: call stubs, padding, instruction-cache maintenance.
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
