//! The IR as the x86-64 rules see it: the shared [`Op`] view (`machinst::ir_ops`).

pub use crate::machinst::ir_ops::{op_of, Op};
