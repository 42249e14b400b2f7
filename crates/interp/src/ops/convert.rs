//! Conversions between float formats, between floats and integers, and `bitcast`.
//!
//! Float → integer conversions truncate toward zero. The trapping forms trap with
//! `BadConversionToInteger` on NaN and `IntegerOverflow` when the truncated value does not fit
//! the result type (as Cranelift's documentation and interpreter specify); the saturating forms
//! map NaN to 0 and clamp. Integer → float conversions round to nearest, ties to even, from
//! every width including 128 bits (Rust's `as` casts are specified to do exactly this).

use super::float::{load_f16, load_f32, load_f64, store_f32, store_f64};
use super::{from_signed, mask, to_signed, FloatKind, Trap};

/// `f32` → `f64`; exact except that a NaN becomes the canonical NaN.
#[inline]
pub fn fpromote(x: u128) -> u128 {
    store_f64(load_f32(x) as f64)
}

/// `f64` → `f32`, rounding to nearest even; NaN becomes the canonical NaN.
#[inline]
pub fn fdemote(x: u128) -> u128 {
    store_f32(load_f64(x) as f32)
}

/// Convert between float formats (`fpromote`, `fdemote` of any float types): exact when
/// widening, rounded to nearest even when narrowing; a NaN becomes the canonical NaN.
#[inline]
pub fn fconvert(from: FloatKind, to: FloatKind, x: u128) -> u128 {
    match (from, to) {
        (FloatKind::F32, FloatKind::F64) => fpromote(x),
        (FloatKind::F64, FloatKind::F32) => fdemote(x),
        _ => kestrel_ir::ieee::convert(from.format(), to.format(), x),
    }
}

/// The float operand as an `f64` (exact for `f16` and `f32`, so all range checks happen in
/// `f64`; `eval_pure` does not convert `f128` to integers).
#[inline]
fn widen(kind: FloatKind, x: u128) -> f64 {
    match kind {
        FloatKind::F32 => load_f32(x) as f64,
        FloatKind::F64 => load_f64(x),
        FloatKind::F16 => load_f16(x),
        FloatKind::F128 => load_f64(fconvert(FloatKind::F128, FloatKind::F64, x)),
    }
}

/// 2^n as an `f64` (exact for 0 <= n <= 128).
#[inline]
fn two_to(n: u32) -> f64 {
    f64::from_bits(((1023 + n) as u64) << 52)
}

#[inline]
pub fn fcvt_to_uint(kind: FloatKind, x: u128, to_width: u32) -> Result<u128, Trap> {
    let v = widen(kind, x);
    if v.is_nan() {
        return Err(Trap::BadConversionToInteger);
    }
    let t = v.trunc();
    if t < 0.0 || t >= two_to(to_width) {
        return Err(Trap::IntegerOverflow);
    }
    Ok(t as u128)
}

#[inline]
pub fn fcvt_to_sint(kind: FloatKind, x: u128, to_width: u32) -> Result<u128, Trap> {
    let v = widen(kind, x);
    if v.is_nan() {
        return Err(Trap::BadConversionToInteger);
    }
    let t = v.trunc();
    let limit = two_to(to_width - 1);
    if t < -limit || t >= limit {
        return Err(Trap::IntegerOverflow);
    }
    Ok(from_signed(t as i128, to_width))
}

/// NaN → 0, negative → 0, too large → the unsigned maximum.
#[inline]
pub fn fcvt_to_uint_sat(kind: FloatKind, x: u128, to_width: u32) -> u128 {
    // `as u128` maps NaN and negatives to 0 and saturates at u128::MAX.
    (widen(kind, x) as u128).min(mask(to_width))
}

/// NaN → 0, otherwise clamped to the signed range.
#[inline]
pub fn fcvt_to_sint_sat(kind: FloatKind, x: u128, to_width: u32) -> u128 {
    let max = (mask(to_width) >> 1) as i128;
    // `as i128` maps NaN to 0 and saturates at the i128 limits.
    let clamped = (widen(kind, x) as i128).clamp(-max - 1, max);
    from_signed(clamped, to_width)
}

/// Unsigned integer (any width; the slot is zero-extended) → float.
#[inline]
pub fn fcvt_from_uint(kind: FloatKind, x: u128) -> u128 {
    match kind {
        FloatKind::F32 => (x as f32).to_bits() as u128,
        FloatKind::F64 => (x as f64).to_bits() as u128,
        _ => kind.format().round_pack(false, 0, x, false),
    }
}

/// Signed integer of `from_width` bits → float.
#[inline]
pub fn fcvt_from_sint(kind: FloatKind, x: u128, from_width: u32) -> u128 {
    let v = to_signed(x, from_width);
    match kind {
        FloatKind::F32 => (v as f32).to_bits() as u128,
        FloatKind::F64 => (v as f64).to_bits() as u128,
        _ => kind.format().round_pack(v < 0, 0, v.unsigned_abs(), false),
    }
}

/// Reinterpret the bits as another type of the same size: the identity on slots.
#[inline]
pub fn bitcast(x: u128) -> u128 {
    x
}

#[cfg(test)]
mod tests;
