//! Integration tests of the JIT on hand-assembled x86-64 code (one binary, shared helpers).

mod calls;
mod common;
mod linking;
mod traps;
