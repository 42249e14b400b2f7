//! Target instruction sets.

pub mod aarch64;
pub mod x64;
