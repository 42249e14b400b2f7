//! Target-independent machine-code machinery.

pub mod blockorder;
pub mod buffer;
