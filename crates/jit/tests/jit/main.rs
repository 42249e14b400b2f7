//! Integration tests of the JIT on hand-assembled x86-64 code (one binary, shared helpers).
//! x86-64 hosts only: the bytes are x86-64 instructions (`aarch64_code.rs` has the AArch64
//! counterparts).
#![cfg(target_arch = "x86_64")]

mod calls;
mod common;
mod linking;
mod traps;
