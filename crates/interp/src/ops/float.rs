//! Float arithmetic, rounding to integral, `fmin`/`fmax`, and the sign-bit operations.
//!
//! Arithmetic follows IEEE-754 with round-to-nearest-even (Rust's `f32`/`f64` operators,
//! `sqrt` and `mul_add` are correctly rounded; `fma` is fused). `f16` arithmetic is done in
//! `f64` and rounded once to `f16`, which is exact for `+ - * /`, `sqrt` and rounding to
//! integral (`f64` has more than twice `f16`'s precision plus two bits); `f16` `fma` is exact
//! in integers (see [`fma_f16`]). A NaN result is always the
//! canonical quiet NaN (see the module contract in `ops`). `fneg`, `fabs` and `fcopysign` are
//! pure bit operations and keep NaN payloads.

use super::FloatKind;

/// Bits of the positive canonical quiet NaN of each format.
pub const CANONICAL_NAN_F32: u128 = 0x7fc0_0000;
pub const CANONICAL_NAN_F64: u128 = 0x7ff8_0000_0000_0000;

/// The value's slot, with any NaN replaced by the canonical one.
#[inline]
pub(super) fn store_f32(v: f32) -> u128 {
    if v.is_nan() {
        CANONICAL_NAN_F32
    } else {
        v.to_bits() as u128
    }
}

#[inline]
pub(super) fn store_f64(v: f64) -> u128 {
    if v.is_nan() {
        CANONICAL_NAN_F64
    } else {
        v.to_bits() as u128
    }
}

/// An `f64` result rounded to `f16`, any NaN replaced by the canonical one.
#[inline]
pub(super) fn store_f16(v: f64) -> u128 {
    kestrel_ir::ieee::f64_to_f16(v) as u128
}

#[inline]
pub(super) fn load_f16(slot: u128) -> f64 {
    kestrel_ir::ieee::f16_to_f64(slot as u16)
}

/// The canonical NaN of a kind.
#[inline]
pub fn canonical_nan(kind: FloatKind) -> u128 {
    kind.format().canonical_nan()
}

#[inline]
pub(super) fn load_f32(slot: u128) -> f32 {
    f32::from_bits(slot as u32)
}

#[inline]
pub(super) fn load_f64(slot: u128) -> f64 {
    f64::from_bits(slot as u64)
}

/// Evaluate `$body` with each named slot loaded as the kind's float, store the result.
macro_rules! arith {
    ($kind:expr, |$($arg:ident),+| $body:expr) => {
        match $kind {
            FloatKind::F32 => {
                $(let $arg = load_f32($arg);)+
                store_f32($body)
            }
            FloatKind::F64 => {
                $(let $arg = load_f64($arg);)+
                store_f64($body)
            }
            FloatKind::F16 => {
                $(let $arg = load_f16($arg);)+
                store_f16($body)
            }
            // `eval_pure` runs `f128` arithmetic in software (`f128_arith`), never here.
            FloatKind::F128 => {
                $(let _ = $arg;)+
                canonical_nan(FloatKind::F128)
            }
        }
    };
}

#[inline]
pub fn fadd(kind: FloatKind, x: u128, y: u128) -> u128 {
    arith!(kind, |x, y| x + y)
}

#[inline]
pub fn fsub(kind: FloatKind, x: u128, y: u128) -> u128 {
    arith!(kind, |x, y| x - y)
}

#[inline]
pub fn fmul(kind: FloatKind, x: u128, y: u128) -> u128 {
    arith!(kind, |x, y| x * y)
}

#[inline]
pub fn fdiv(kind: FloatKind, x: u128, y: u128) -> u128 {
    arith!(kind, |x, y| x / y)
}

#[inline]
pub fn sqrt(kind: FloatKind, x: u128) -> u128 {
    arith!(kind, |x| x.sqrt())
}

/// `x * y + z` with a single rounding.
#[inline]
pub fn fma(kind: FloatKind, x: u128, y: u128, z: u128) -> u128 {
    if kind == FloatKind::F16 {
        return fma_f16(x, y, z);
    }
    arith!(kind, |x, y, z| x.mul_add(y, z))
}

/// `f16` `x * y + z` rounded once: every finite `f16` is an integer times 2^-24, so the
/// product is an integer times 2^-48 below 2^80 and the sum is exact in an `i128`.
fn fma_f16(x: u128, y: u128, z: u128) -> u128 {
    let (a, b, c) = (load_f16(x), load_f16(y), load_f16(z));
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        // Infinities and NaNs: the f64 result is exact.
        return store_f16(a.mul_add(b, c));
    }
    let scaled = |v: f64| (v * 2f64.powi(24)) as i128; // exact: an integer below 2^40
    let sum = scaled(a) * scaled(b) + (scaled(c) << 24);
    if sum == 0 {
        // The sign of an exact zero: -0 only when both addends are -0 (round to nearest).
        let product_negative = (a * b).is_sign_negative();
        let negative = product_negative && c.is_sign_negative();
        return if negative { 0x8000 } else { 0 };
    }
    let format = FloatKind::F16.format();
    format.round_pack(sum < 0, -48, sum.unsigned_abs(), false)
}

#[inline]
pub fn ceil(kind: FloatKind, x: u128) -> u128 {
    arith!(kind, |x| x.ceil())
}

#[inline]
pub fn floor(kind: FloatKind, x: u128) -> u128 {
    arith!(kind, |x| x.floor())
}

#[inline]
pub fn trunc(kind: FloatKind, x: u128) -> u128 {
    arith!(kind, |x| x.trunc())
}

/// Round to the nearest integral value, ties to even.
#[inline]
pub fn nearest(kind: FloatKind, x: u128) -> u128 {
    arith!(kind, |x| x.round_ties_even())
}

/// Minimum with NaN propagation (canonical NaN) and -0.0 < +0.0.
#[inline]
pub fn fmin(kind: FloatKind, x: u128, y: u128) -> u128 {
    arith!(kind, |x, y| {
        if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            // Equal values differ at most in the sign of zero; the negative one is smaller.
            if x.is_sign_negative() {
                x
            } else {
                y
            }
        } else if x < y {
            x
        } else {
            y
        }
    })
}

/// Maximum with NaN propagation (canonical NaN) and +0.0 > -0.0.
#[inline]
pub fn fmax(kind: FloatKind, x: u128, y: u128) -> u128 {
    arith!(kind, |x, y| {
        if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            if x.is_sign_negative() {
                y
            } else {
                x
            }
        } else if x > y {
            x
        } else {
            y
        }
    })
}

#[inline]
fn sign_bit(kind: FloatKind) -> u128 {
    match kind {
        FloatKind::F32 => 1 << 31,
        FloatKind::F64 => 1 << 63,
        FloatKind::F16 => 1 << 15,
        FloatKind::F128 => 1 << 127,
    }
}

/// Flip the sign bit.
#[inline]
pub fn fneg(kind: FloatKind, x: u128) -> u128 {
    x ^ sign_bit(kind)
}

/// Clear the sign bit.
#[inline]
pub fn fabs(kind: FloatKind, x: u128) -> u128 {
    x & !sign_bit(kind)
}

/// `x` with the sign bit of `y`.
#[inline]
pub fn fcopysign(kind: FloatKind, x: u128, y: u128) -> u128 {
    let sign = sign_bit(kind);
    (x & !sign) | (y & sign)
}

#[cfg(test)]
mod tests;
