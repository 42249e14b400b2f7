//! Target instruction sets.

pub mod x64;
