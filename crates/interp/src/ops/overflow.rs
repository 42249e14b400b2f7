//! Arithmetic with an overflow flag: `{u,s}{add,sub,mul}_overflow`, the carry/borrow-in forms
//! `{u,s}add_overflow_cin` and `{u,s}sub_overflow_bin`, and `uadd_overflow_trap`.
//!
//! Each returns `(wrapped result, flag)` where the flag is an `i8` slot (1 = overflowed), and
//! the carry or borrow input counts as 1 when nonzero. Below 128 bits the exact result is
//! computed in 128-bit arithmetic and range-checked; at 128 bits the flags come from Rust's
//! overflowing operations.

use super::{fits_signed, from_signed, mask, to_signed, truncate};

#[inline]
fn flag(b: bool) -> u128 {
    b as u128
}

#[inline]
pub fn uadd_overflow(x: u128, y: u128, width: u32) -> (u128, u128) {
    let (sum, carried) = x.overflowing_add(y);
    (truncate(sum, width), flag(carried || sum > mask(width)))
}

#[inline]
pub fn sadd_overflow(x: u128, y: u128, width: u32) -> (u128, u128) {
    let (sum, overflowed) = to_signed(x, width).overflowing_add(to_signed(y, width));
    (
        from_signed(sum, width),
        flag(overflowed || !fits_signed(sum, width)),
    )
}

#[inline]
pub fn usub_overflow(x: u128, y: u128, width: u32) -> (u128, u128) {
    (truncate(x.wrapping_sub(y), width), flag(x < y))
}

#[inline]
pub fn ssub_overflow(x: u128, y: u128, width: u32) -> (u128, u128) {
    let (diff, overflowed) = to_signed(x, width).overflowing_sub(to_signed(y, width));
    (
        from_signed(diff, width),
        flag(overflowed || !fits_signed(diff, width)),
    )
}

#[inline]
pub fn umul_overflow(x: u128, y: u128, width: u32) -> (u128, u128) {
    let (product, overflowed) = x.overflowing_mul(y);
    (
        truncate(product, width),
        flag(overflowed || product > mask(width)),
    )
}

#[inline]
pub fn smul_overflow(x: u128, y: u128, width: u32) -> (u128, u128) {
    let (product, overflowed) = to_signed(x, width).overflowing_mul(to_signed(y, width));
    (
        from_signed(product, width),
        flag(overflowed || !fits_signed(product, width)),
    )
}

/// `x + y + (carry_in != 0)`, flagging a sum of 2^width or more.
#[inline]
pub fn uadd_overflow_cin(x: u128, y: u128, carry_in: u128, width: u32) -> (u128, u128) {
    let (partial, carry1) = x.overflowing_add(y);
    let (sum, carry2) = partial.overflowing_add((carry_in != 0) as u128);
    (
        truncate(sum, width),
        flag(carry1 || carry2 || sum > mask(width)),
    )
}

/// `x + y + (carry_in != 0)` on signed values, flagging a sum outside the signed range.
#[inline]
pub fn sadd_overflow_cin(x: u128, y: u128, carry_in: u128, width: u32) -> (u128, u128) {
    let (partial, over1) = to_signed(x, width).overflowing_add(to_signed(y, width));
    let (sum, over2) = partial.overflowing_add((carry_in != 0) as i128);
    // At 128 bits adding 1 can undo a negative wrap, hence xor; below, neither can wrap.
    (
        from_signed(sum, width),
        flag((over1 ^ over2) || !fits_signed(sum, width)),
    )
}

/// `x - (y + (borrow_in != 0))`, flagging a negative result.
#[inline]
pub fn usub_overflow_bin(x: u128, y: u128, borrow_in: u128, width: u32) -> (u128, u128) {
    let (partial, borrow1) = x.overflowing_sub(y);
    let (diff, borrow2) = partial.overflowing_sub((borrow_in != 0) as u128);
    (truncate(diff, width), flag(borrow1 || borrow2))
}

/// `x - (y + (borrow_in != 0))` on signed values, flagging a result outside the signed range.
#[inline]
pub fn ssub_overflow_bin(x: u128, y: u128, borrow_in: u128, width: u32) -> (u128, u128) {
    let (partial, over1) = to_signed(x, width).overflowing_sub(to_signed(y, width));
    let (diff, over2) = partial.overflowing_sub((borrow_in != 0) as i128);
    (
        from_signed(diff, width),
        flag((over1 ^ over2) || !fits_signed(diff, width)),
    )
}

/// The unsigned sum, or `None` when it overflows and the instruction must trap with its own
/// trap code (an immediate of the instruction, so the caller supplies it).
#[inline]
pub fn uadd_overflow_trap(x: u128, y: u128, width: u32) -> Option<u128> {
    match uadd_overflow(x, y, width) {
        (sum, 0) => Some(sum),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::signed_min;
    use super::*;

    const WIDTHS: [u32; 5] = [8, 16, 32, 64, 128];

    #[test]
    fn add_and_sub_flags() {
        for w in WIDTHS {
            let max = mask(w);
            let min = signed_min(w);
            let smax = min - 1;
            assert_eq!(uadd_overflow(max, 1, w), (0, 1));
            assert_eq!(uadd_overflow(max, 0, w), (max, 0));
            assert_eq!(uadd_overflow(max, max, w), (max - 1, 1));
            assert_eq!(sadd_overflow(smax, 1, w), (min, 1));
            assert_eq!(sadd_overflow(min, max, w), (smax, 1)); // MIN + -1
            assert_eq!(sadd_overflow(max, max, w), (max - 1, 0)); // -1 + -1
            assert_eq!(usub_overflow(0, 1, w), (max, 1));
            assert_eq!(usub_overflow(1, 1, w), (0, 0));
            assert_eq!(ssub_overflow(min, 1, w), (smax, 1));
            assert_eq!(ssub_overflow(0, min, w), (min, 1));
            assert_eq!(ssub_overflow(max, min, w), (smax, 0)); // -1 - MIN
        }
    }

    #[test]
    fn mul_flags() {
        for w in [8, 16, 32, 64, 128] {
            let max = mask(w);
            let min = signed_min(w);
            assert_eq!(umul_overflow(max, max, w), (1, 1));
            assert_eq!(umul_overflow(max, 1, w), (max, 0));
            assert_eq!(umul_overflow(1 << (w / 2), 1 << (w / 2), w), (0, 1));
            assert_eq!(smul_overflow(min, max, w), (min, 1)); // MIN * -1
            assert_eq!(smul_overflow(max, max, w), (1, 0)); // -1 * -1
            assert_eq!(smul_overflow(min, 1, w), (min, 0));
            assert_eq!(smul_overflow(1 << (w - 2), 2, w), (min, 1));
            assert_eq!(smul_overflow(1 << (w - 2), max - 1, w), (min, 0)); // 2^(w-2) * -2
        }
    }

    #[test]
    fn carry_and_borrow_chains() {
        for w in WIDTHS {
            let max = mask(w);
            let min = signed_min(w);
            let smax = min - 1;
            assert_eq!(uadd_overflow_cin(max, 0, 1, w), (0, 1));
            assert_eq!(uadd_overflow_cin(max, max, 1, w), (max, 1));
            assert_eq!(uadd_overflow_cin(max - 1, 0, 0x80, w), (max, 0));
            assert_eq!(sadd_overflow_cin(smax, 0, 1, w), (min, 1));
            assert_eq!(sadd_overflow_cin(smax - 1, 0, 1, w), (smax, 0));
            // MIN + -1 + 1 = MIN: the inner sum wraps but the final one fits.
            assert_eq!(sadd_overflow_cin(min, max, 1, w), (min, 0));
            assert_eq!(sadd_overflow_cin(min, max, 0, w), (smax, 1));
            assert_eq!(usub_overflow_bin(0, 0, 1, w), (max, 1));
            assert_eq!(usub_overflow_bin(1, 0, 1, w), (0, 0));
            assert_eq!(usub_overflow_bin(0, max, 0, w), (1, 1));
            assert_eq!(ssub_overflow_bin(min, 0, 1, w), (smax, 1));
            // smax - (-1) - 1 = smax: the inner difference wraps but the final one fits.
            assert_eq!(ssub_overflow_bin(smax, max, 1, w), (smax, 0));
            assert_eq!(ssub_overflow_bin(smax, max, 0, w), (min, 1));
        }
    }

    #[test]
    fn trapping_add() {
        assert_eq!(uadd_overflow_trap(u32::MAX as u128, 1, 32), None);
        assert_eq!(
            uadd_overflow_trap(u32::MAX as u128 - 1, 1, 32),
            Some(u32::MAX as u128)
        );
        assert_eq!(
            uadd_overflow_trap(u64::MAX as u128, u64::MAX as u128, 64),
            None
        );
        assert_eq!(uadd_overflow_trap(3, 4, 64), Some(7));
    }

    /// Random operands at 8 and 64 bits against Rust's own overflowing operations.
    #[test]
    fn agrees_with_native_overflowing_ops() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let (a, b) = (next(), next());
            let (x, y) = (a as u128, b as u128);
            let pair = |(r, f): (u64, bool)| (r as u128, f as u128);
            let spair = |(r, f): (i64, bool)| (r as u64 as u128, f as u128);
            assert_eq!(uadd_overflow(x, y, 64), pair(a.overflowing_add(b)));
            assert_eq!(usub_overflow(x, y, 64), pair(a.overflowing_sub(b)));
            assert_eq!(umul_overflow(x, y, 64), pair(a.overflowing_mul(b)));
            let (sa, sb) = (a as i64, b as i64);
            assert_eq!(sadd_overflow(x, y, 64), spair(sa.overflowing_add(sb)));
            assert_eq!(ssub_overflow(x, y, 64), spair(sa.overflowing_sub(sb)));
            assert_eq!(smul_overflow(x, y, 64), spair(sa.overflowing_mul(sb)));
            let (a8, b8) = (a as u8, b as u8);
            let (x8, y8) = (a8 as u128, b8 as u128);
            let (r, f) = a8.overflowing_add(b8);
            assert_eq!(uadd_overflow(x8, y8, 8), (r as u128, f as u128));
            let (r, f) = (a8 as i8).overflowing_mul(b8 as i8);
            assert_eq!(smul_overflow(x8, y8, 8), (r as u8 as u128, f as u128));
            let carry = (b >> 63) as u128;
            let wide = a8 as u32 + b8 as u32 + carry as u32;
            assert_eq!(
                uadd_overflow_cin(x8, y8, carry, 8),
                ((wide & 0xff) as u128, (wide > 0xff) as u128)
            );
            let exact = (a8 as i8) as i32 - ((b8 as i8) as i32 + carry as i32);
            let fits = (-128..=127).contains(&exact);
            assert_eq!(
                ssub_overflow_bin(x8, y8, carry, 8),
                ((exact as u8) as u128, !fits as u128)
            );
        }
    }
}
