//! Integer arithmetic: add, subtract, negate, multiply (low and high halves), divide,
//! remainder, absolute value, minimum and maximum. All wrap modulo 2^width except where noted.

use super::{from_signed, mask, signed_min, to_signed, truncate, Trap};

#[inline]
pub fn iadd(x: u128, y: u128, width: u32) -> u128 {
    truncate(x.wrapping_add(y), width)
}

#[inline]
pub fn isub(x: u128, y: u128, width: u32) -> u128 {
    truncate(x.wrapping_sub(y), width)
}

#[inline]
pub fn ineg(x: u128, width: u32) -> u128 {
    truncate(x.wrapping_neg(), width)
}

#[inline]
pub fn imul(x: u128, y: u128, width: u32) -> u128 {
    truncate(x.wrapping_mul(y), width)
}

/// High `width` bits of the unsigned `2 * width`-bit product.
#[inline]
pub fn umulhi(x: u128, y: u128, width: u32) -> u128 {
    if width == 128 {
        wide_mul_u128(x, y).1
    } else {
        // Both factors are below 2^64, so the full product fits.
        (x * y) >> width
    }
}

/// High `width` bits of the signed `2 * width`-bit product.
#[inline]
pub fn smulhi(x: u128, y: u128, width: u32) -> u128 {
    if width == 128 {
        // Signed high half = unsigned high half minus the corrections for negative factors
        // (x_signed = x - 2^128 when x's top bit is set), modulo 2^128.
        let mut high = wide_mul_u128(x, y).1;
        if (x as i128) < 0 {
            high = high.wrapping_sub(y);
        }
        if (y as i128) < 0 {
            high = high.wrapping_sub(x);
        }
        high
    } else {
        // Both factors are within ±2^63, so the full product fits in an i128.
        let product = to_signed(x, width) * to_signed(y, width);
        from_signed(product >> width, width)
    }
}

/// The full 256-bit product of two `u128`s, as (low, high).
#[inline]
fn wide_mul_u128(x: u128, y: u128) -> (u128, u128) {
    let half = |v: u128| (v & u64::MAX as u128, v >> 64);
    let (x_lo, x_hi) = half(x);
    let (y_lo, y_hi) = half(y);
    let lo_lo = x_lo * y_lo;
    let lo_hi = x_lo * y_hi;
    let hi_lo = x_hi * y_lo;
    let hi_hi = x_hi * y_hi;
    // Sum of the middle column; each term is below 2^64, so three of them cannot overflow.
    let middle = (lo_lo >> 64) + (lo_hi & u64::MAX as u128) + (hi_lo & u64::MAX as u128);
    let low = (middle << 64) | (lo_lo & u64::MAX as u128);
    let high = hi_hi + (lo_hi >> 64) + (hi_lo >> 64) + (middle >> 64);
    (low, high)
}

/// Unsigned division; traps on a zero divisor.
#[inline]
pub fn udiv(x: u128, y: u128) -> Result<u128, Trap> {
    x.checked_div(y).ok_or(Trap::IntegerDivisionByZero)
}

/// Unsigned remainder; traps on a zero divisor.
#[inline]
pub fn urem(x: u128, y: u128) -> Result<u128, Trap> {
    x.checked_rem(y).ok_or(Trap::IntegerDivisionByZero)
}

/// Signed division rounding toward zero; traps on a zero divisor and on MIN / -1.
#[inline]
pub fn sdiv(x: u128, y: u128, width: u32) -> Result<u128, Trap> {
    if y == 0 {
        return Err(Trap::IntegerDivisionByZero);
    }
    if x == signed_min(width) && y == mask(width) {
        return Err(Trap::IntegerOverflow);
    }
    Ok(from_signed(
        to_signed(x, width) / to_signed(y, width),
        width,
    ))
}

/// Signed remainder with the dividend's sign; traps on a zero divisor. MIN % -1 is 0.
#[inline]
pub fn srem(x: u128, y: u128, width: u32) -> Result<u128, Trap> {
    if y == 0 {
        return Err(Trap::IntegerDivisionByZero);
    }
    let remainder = to_signed(x, width).wrapping_rem(to_signed(y, width));
    Ok(from_signed(remainder, width))
}

/// Absolute value; MIN stays MIN.
#[inline]
pub fn iabs(x: u128, width: u32) -> u128 {
    from_signed(to_signed(x, width).wrapping_abs(), width)
}

#[inline]
pub fn umin(x: u128, y: u128) -> u128 {
    x.min(y)
}

#[inline]
pub fn umax(x: u128, y: u128) -> u128 {
    x.max(y)
}

#[inline]
pub fn smin(x: u128, y: u128, width: u32) -> u128 {
    if to_signed(x, width) <= to_signed(y, width) {
        x
    } else {
        y
    }
}

#[inline]
pub fn smax(x: u128, y: u128, width: u32) -> u128 {
    if to_signed(x, width) >= to_signed(y, width) {
        x
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDTHS: [u32; 5] = [8, 16, 32, 64, 128];

    #[test]
    fn add_sub_neg_mul_wrap() {
        for w in WIDTHS {
            let max = mask(w);
            let min = signed_min(w);
            assert_eq!(iadd(max, 1, w), 0);
            assert_eq!(iadd(max, max, w), max - 1);
            assert_eq!(isub(0, 1, w), max);
            assert_eq!(ineg(1, w), max);
            assert_eq!(ineg(min, w), min);
            assert_eq!(ineg(0, w), 0);
            assert_eq!(imul(max, max, w), 1);
            assert_eq!(imul(min, max, w), min);
            assert_eq!(imul(min, 2, w), 0);
        }
        assert_eq!(imul(0x10, 0x10, 8), 0);
        assert_eq!(iadd(0x7f, 1, 8), 0x80);
    }

    #[test]
    fn multiply_high() {
        assert_eq!(umulhi(0xff, 0xff, 8), 0xfe);
        assert_eq!(smulhi(0xff, 0xff, 8), 0); // -1 * -1 = 1
        assert_eq!(smulhi(0x80, 0x80, 8), 0x40); // -128 * -128 = 0x4000
        assert_eq!(smulhi(0x80, 0x7f, 8), 0xc0); // -128 * 127 = -0x3f80
        assert_eq!(
            umulhi(u64::MAX as u128, u64::MAX as u128, 64),
            u64::MAX as u128 - 1
        );
        assert_eq!(smulhi(u64::MAX as u128, 2, 64), u64::MAX as u128); // -2 >> 64 = -1
        let max = u128::MAX;
        assert_eq!(umulhi(max, max, 128), max - 1);
        assert_eq!(umulhi(1 << 127, 2, 128), 1);
        assert_eq!(umulhi(1 << 64, 1 << 64, 128), 1);
        assert_eq!(smulhi(max, max, 128), 0); // -1 * -1
        assert_eq!(smulhi(max, 5, 128), max); // -5 has high half -1
        assert_eq!(smulhi(1 << 127, 1 << 127, 128), 1 << 126); // MIN * MIN = 2^254
        assert_eq!(smulhi(1 << 127, 1, 128), max); // MIN * 1
        assert_eq!(
            smulhi(i128::MAX as u128, i128::MAX as u128, 128),
            (1 << 126) - 1
        );
    }

    #[test]
    fn wide_product_matches_small_cases() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..1000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let (x, y) = (seed as u128, (seed.rotate_left(21)) as u128);
            assert_eq!(wide_mul_u128(x, y), (x * y, 0));
            let (lo, hi) = wide_mul_u128(x << 64, y);
            assert_eq!((lo, hi), ((x * y) << 64, (x * y) >> 64));
        }
    }

    #[test]
    fn division_traps_and_rounding() {
        for w in WIDTHS {
            let max = mask(w);
            let min = signed_min(w);
            assert_eq!(udiv(5, 0), Err(Trap::IntegerDivisionByZero));
            assert_eq!(urem(5, 0), Err(Trap::IntegerDivisionByZero));
            assert_eq!(sdiv(5, 0, w), Err(Trap::IntegerDivisionByZero));
            assert_eq!(srem(5, 0, w), Err(Trap::IntegerDivisionByZero));
            assert_eq!(sdiv(min, max, w), Err(Trap::IntegerOverflow));
            assert_eq!(srem(min, max, w), Ok(0));
            assert_eq!(udiv(max, max), Ok(1));
            assert_eq!(sdiv(max, max, w), Ok(1));
            assert_eq!(sdiv(min, 1, w), Ok(min));
            // -7 / 2 = -3 rem -1 (toward zero, remainder has the dividend's sign).
            assert_eq!(sdiv(from_signed(-7, w), 2, w), Ok(from_signed(-3, w)));
            assert_eq!(srem(from_signed(-7, w), 2, w), Ok(from_signed(-1, w)));
            assert_eq!(srem(7, from_signed(-2, w), w), Ok(1));
            assert_eq!(udiv(max, 2), Ok(max >> 1));
            assert_eq!(urem(max, 10), Ok(max % 10));
        }
    }

    #[test]
    fn abs_min_max() {
        for w in WIDTHS {
            let max = mask(w);
            let min = signed_min(w);
            assert_eq!(iabs(min, w), min);
            assert_eq!(iabs(max, w), 1);
            assert_eq!(iabs(0, w), 0);
            assert_eq!(smin(min, min - 1, w), min);
            assert_eq!(smax(min, min - 1, w), min - 1);
            assert_eq!(smin(max, 0, w), max);
            assert_eq!(umin(max, 0), 0);
            assert_eq!(umax(max, 0), max);
        }
    }

    /// Random operands at 32 and 64 bits against Rust's native integer operations.
    #[test]
    fn agrees_with_native_integer_ops() {
        let mut seed = 0xfeed_face_dead_beefu64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let (a, b) = (next(), next() >> (next() % 64));
            let (x, y) = (a as u128, b as u128);
            let (sa, sb) = (a as i64, b as i64);
            assert_eq!(imul(x, y, 64), a.wrapping_mul(b) as u128);
            assert_eq!(umulhi(x, y, 64), ((x * y) >> 64));
            assert_eq!(
                smulhi(x, y, 64),
                (((sa as i128 * sb as i128) >> 64) as u64) as u128
            );
            assert_eq!(
                sdiv(x, y, 64).ok(),
                sa.checked_div(sb).map(|q| q as u64 as u128)
            );
            assert_eq!(
                srem(x, y, 64).ok(),
                sa.checked_rem(sb)
                    .map(|r| r as u64 as u128)
                    .or(if sb == -1 { Some(0) } else { None })
            );
            let (a32, b32) = (a as u32, b as u32);
            let (x32, y32) = (a32 as u128, b32 as u128);
            assert_eq!(isub(x32, y32, 32), a32.wrapping_sub(b32) as u128);
            assert_eq!(
                smin(x32, y32, 32),
                (a32 as i32).min(b32 as i32) as u32 as u128
            );
            assert_eq!(iabs(x32, 32), (a32 as i32).wrapping_abs() as u32 as u128);
            // At 128 bits, the high half of x * 2^k is x >> (128 - k).
            let k = (b % 127 + 1) as u32;
            let wide = x << 64 | y;
            assert_eq!(umulhi(wide, 1 << k, 128), wide >> (128 - k));
        }
    }
}
