//! Scalar semantics of the CLIF opcodes, as pure functions over value slots.
//!
//! # Representation contract
//!
//! The interpreter keeps one `u128` slot per SSA value. Every function here takes and returns
//! slots in this canonical form:
//!
//! - an integer of width `W ∈ {8, 16, 32, 64, 128}` holds its bits **zero-extended**: bits at
//!   and above `W` are 0, whatever the value's sign;
//! - an `f32` holds its IEEE-754 bits in the low 32 bits, an `f64` in the low 64 (so `bitcast`
//!   between an integer and a float of the same size is the identity on slots);
//! - predicates (`icmp`, `fcmp`, overflow flags) return an `i8` slot: 1 for true, 0 for false.
//!
//! Widths are bit counts (`u32`, one of 8, 16, 32, 64, 128); passing another width is a caller
//! bug, checked by `debug_assert!`. Inputs that are not canonical are a caller bug as well.
//! Functions that can trap return `Result<_, Trap>`; nothing here allocates or panics.
//!
//! # NaN policy
//!
//! Cranelift documents the NaN *results* of float arithmetic only loosely ("a NaN"; for
//! `fmin`/`fmax`: quiet, canonical when every NaN input is canonical, sign unspecified), and its
//! run tests check such results only with `fcmp uno`. To be deterministic and independent of the
//! host FPU, every arithmetic operation whose result is NaN (`fadd fsub fmul fdiv sqrt fma fmin
//! fmax ceil floor trunc nearest fpromote fdemote`) returns the positive canonical quiet NaN
//! (`0x7fc00000`, `0x7ff8000000000000`). The bitwise operations (`fneg fabs fcopysign`,
//! `bitcast`, loads, stores, `select`) never look at NaNs and keep payloads and signs exactly,
//! as the run tests require.

mod bits;
mod compare;
mod convert;
mod eval;
pub mod f128;
mod float;
mod int;
mod overflow;
mod resize;
mod vector;

pub use bits::*;
pub use compare::*;
pub use convert::*;
pub use eval::*;
pub use float::*;
pub use int::*;
pub use overflow::*;
pub use resize::*;
pub use vector::*;

/// Why an operation trapped. The interpreter maps these to the matching reserved trap codes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Trap {
    /// `udiv`, `sdiv`, `urem` or `srem` by zero.
    IntegerDivisionByZero,
    /// `sdiv` of MIN by -1, or `fcvt_to_{u,s}int` of a value outside the result type's range.
    IntegerOverflow,
    /// `fcvt_to_{u,s}int` of a NaN.
    BadConversionToInteger,
}

/// The scalar float formats.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatKind {
    F32,
    F64,
    F16,
    /// `f128` arithmetic is in software ([`f128`]); [`eval_pure`] refuses `fma` of `f128`.
    F128,
}

impl FloatKind {
    /// The IEEE-754 format (field widths) of this kind.
    pub fn format(self) -> kestrel_ir::ieee::Format {
        use kestrel_ir::ieee::{BINARY128, BINARY16, BINARY32, BINARY64};
        match self {
            FloatKind::F16 => BINARY16,
            FloatKind::F32 => BINARY32,
            FloatKind::F64 => BINARY64,
            FloatKind::F128 => BINARY128,
        }
    }
}

/// All ones in the low `width` bits: the largest canonical value of that width.
#[inline]
pub fn mask(width: u32) -> u128 {
    debug_assert!(matches!(width, 8 | 16 | 32 | 64 | 128), "bad width {width}");
    u128::MAX >> (128 - width)
}

/// Drop the bits at and above `width` (wrapping to the width).
#[inline]
pub fn truncate(x: u128, width: u32) -> u128 {
    x & mask(width)
}

/// The signed value of a canonical slot of `width` bits.
#[inline]
pub fn to_signed(x: u128, width: u32) -> i128 {
    let unused = 128 - width;
    ((x << unused) as i128) >> unused
}

/// The canonical slot of `width` bits holding `v` modulo 2^width.
#[inline]
pub fn from_signed(v: i128, width: u32) -> u128 {
    truncate(v as u128, width)
}

/// The smallest signed value of `width` bits, as a canonical slot.
#[inline]
fn signed_min(width: u32) -> u128 {
    1u128 << (width - 1)
}

/// Whether `v` is representable as a signed integer of `width` bits.
#[inline]
fn fits_signed(v: i128, width: u32) -> bool {
    to_signed(from_signed(v, width), width) == v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_helpers() {
        assert_eq!(mask(8), 0xff);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(to_signed(0x80, 8), -128);
        assert_eq!(to_signed(0x7f, 8), 127);
        assert_eq!(to_signed(u128::MAX, 128), -1);
        assert_eq!(from_signed(-1, 16), 0xffff);
        assert_eq!(from_signed(i128::MIN, 128), 1 << 127);
        assert!(fits_signed(-128, 8) && !fits_signed(128, 8) && !fits_signed(-129, 8));
        assert_eq!(signed_min(32), 0x8000_0000);
    }
}
