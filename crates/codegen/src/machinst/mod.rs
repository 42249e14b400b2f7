//! Target-independent machine-code machinery.

pub mod buffer;
