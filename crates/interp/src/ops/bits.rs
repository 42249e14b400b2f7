//! Bitwise logic, shifts and rotates, bit counts, byte and bit reversal, `bmask`, `select`
//! and `bitselect`.
//!
//! Shift and rotate amounts are taken modulo the width of the shifted value; the amount may be
//! an integer of any width (only its low bits matter, and a canonical slot keeps them).

use super::{mask, to_signed, truncate};

#[inline]
pub fn band(x: u128, y: u128) -> u128 {
    x & y
}

#[inline]
pub fn bor(x: u128, y: u128) -> u128 {
    x | y
}

#[inline]
pub fn bxor(x: u128, y: u128) -> u128 {
    x ^ y
}

#[inline]
pub fn bnot(x: u128, width: u32) -> u128 {
    truncate(!x, width)
}

/// `x & !y`.
#[inline]
pub fn band_not(x: u128, y: u128) -> u128 {
    x & !y
}

/// `x | !y`.
#[inline]
pub fn bor_not(x: u128, y: u128, width: u32) -> u128 {
    truncate(x | !y, width)
}

/// `x ^ !y`.
#[inline]
pub fn bxor_not(x: u128, y: u128, width: u32) -> u128 {
    truncate(x ^ !y, width)
}

/// The shift amount reduced modulo `width`.
#[inline]
fn amount(shift: u128, width: u32) -> u32 {
    (shift as u32) & (width - 1)
}

#[inline]
pub fn ishl(x: u128, shift: u128, width: u32) -> u128 {
    truncate(x << amount(shift, width), width)
}

#[inline]
pub fn ushr(x: u128, shift: u128, width: u32) -> u128 {
    x >> amount(shift, width)
}

#[inline]
pub fn sshr(x: u128, shift: u128, width: u32) -> u128 {
    truncate((to_signed(x, width) >> amount(shift, width)) as u128, width)
}

#[inline]
pub fn rotl(x: u128, shift: u128, width: u32) -> u128 {
    let n = amount(shift, width);
    if n == 0 {
        x
    } else {
        truncate((x << n) | (x >> (width - n)), width)
    }
}

#[inline]
pub fn rotr(x: u128, shift: u128, width: u32) -> u128 {
    let n = amount(shift, width);
    if n == 0 {
        x
    } else {
        truncate((x >> n) | (x << (width - n)), width)
    }
}

/// Count of leading zero bits within `width` (`width` for zero).
#[inline]
pub fn clz(x: u128, width: u32) -> u128 {
    (x.leading_zeros() - (128 - width)) as u128
}

/// Count of leading bits equal to the sign bit, not counting the sign bit itself.
#[inline]
pub fn cls(x: u128, width: u32) -> u128 {
    let v = to_signed(x, width);
    let same_as_sign = if v < 0 {
        (!v).leading_zeros()
    } else {
        v.leading_zeros()
    };
    (same_as_sign - (128 - width) - 1) as u128
}

/// Count of trailing zero bits (`width` for zero).
#[inline]
pub fn ctz(x: u128, width: u32) -> u128 {
    x.trailing_zeros().min(width) as u128
}

#[inline]
pub fn popcnt(x: u128) -> u128 {
    x.count_ones() as u128
}

#[inline]
pub fn bitrev(x: u128, width: u32) -> u128 {
    x.reverse_bits() >> (128 - width)
}

/// Reverse the byte order within `width` (the identity for 8 bits).
#[inline]
pub fn bswap(x: u128, width: u32) -> u128 {
    x.swap_bytes() >> (128 - width)
}

/// All ones of the result width when `x` is nonzero, else zero.
#[inline]
pub fn bmask(x: u128, result_width: u32) -> u128 {
    if x != 0 {
        mask(result_width)
    } else {
        0
    }
}

/// `if c != 0 { x } else { y }`; also `select_spectre_guard`.
#[inline]
pub fn select(c: u128, x: u128, y: u128) -> u128 {
    if c != 0 {
        x
    } else {
        y
    }
}

/// Bits of `x` where `c` is 1, bits of `y` where it is 0.
#[inline]
pub fn bitselect(c: u128, x: u128, y: u128) -> u128 {
    (x & c) | (y & !c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDTHS: [u32; 5] = [8, 16, 32, 64, 128];

    #[test]
    fn logic_stays_canonical() {
        for w in WIDTHS {
            let m = mask(w);
            assert_eq!(bnot(0, w), m);
            assert_eq!(bnot(m, w), 0);
            assert_eq!(band_not(m, 1), m - 1);
            assert_eq!(bor_not(0, m, w), 0);
            assert_eq!(bor_not(0, 0, w), m);
            assert_eq!(bxor_not(m, m, w), m);
            assert_eq!(bxor_not(5, 0, w), m ^ 5);
        }
        assert_eq!(band(0xf0, 0x3c), 0x30);
        assert_eq!(bor(0xf0, 0x0f), 0xff);
        assert_eq!(bxor(0xff, 0x0f), 0xf0);
    }

    #[test]
    fn shifts_take_amount_modulo_width() {
        for w in WIDTHS {
            let m = mask(w);
            let top = 1u128 << (w - 1);
            assert_eq!(ishl(1, w as u128, w), 1);
            assert_eq!(ishl(1, w as u128 - 1, w), top);
            assert_eq!(ishl(m, 1, w), m - 1);
            assert_eq!(ushr(top, w as u128 + 1, w), top >> 1);
            assert_eq!(sshr(top, w as u128 - 1, w), m);
            assert_eq!(sshr(top >> 1, 1, w), top >> 2);
            assert_eq!(rotl(top | 1, 1, w), 0b11);
            assert_eq!(rotr(0b11, 1, w), top | 1);
            assert_eq!(rotl(0b10, w as u128, w), 0b10);
            assert_eq!(rotr(0b10, 2 * w as u128 + 1, w), 1);
            // An amount wider than the value: only its low bits count.
            assert_eq!(ishl(1, u128::MAX, w), top);
        }
        assert_eq!(ishl(1, 0x1_0000_0000_0000_0001, 64), 2);
        assert_eq!(sshr(0x80, 0xff, 8), 0xff);
    }

    #[test]
    fn counts() {
        for w in WIDTHS {
            let m = mask(w);
            let top = 1u128 << (w - 1);
            assert_eq!(clz(0, w), w as u128);
            assert_eq!(clz(m, w), 0);
            assert_eq!(clz(1, w), w as u128 - 1);
            assert_eq!(ctz(0, w), w as u128);
            assert_eq!(ctz(top, w), w as u128 - 1);
            assert_eq!(cls(0, w), w as u128 - 1);
            assert_eq!(cls(m, w), w as u128 - 1);
            assert_eq!(cls(top, w), 0);
            assert_eq!(cls(1, w), w as u128 - 2);
            assert_eq!(popcnt(m), w as u128);
            assert_eq!(popcnt(0), 0);
        }
        assert_eq!(cls(0xc0, 8), 1);
    }

    #[test]
    fn reversals() {
        assert_eq!(bitrev(1, 8), 0x80);
        assert_eq!(bitrev(0b1101, 16), 0xb000);
        assert_eq!(bitrev(1, 128), 1 << 127);
        assert_eq!(bswap(0xab, 8), 0xab);
        assert_eq!(bswap(0x1234, 16), 0x3412);
        assert_eq!(bswap(0x1234_5678, 32), 0x7856_3412);
        assert_eq!(bswap(0x0102_0304_0506_0708, 64), 0x0807_0605_0403_0201);
        assert_eq!(bswap(1, 128), 1 << 120);
    }

    #[test]
    fn masks_and_selects() {
        assert_eq!(bmask(0, 64), 0);
        assert_eq!(bmask(0x80, 16), 0xffff);
        assert_eq!(bmask(1 << 100, 8), 0xff);
        assert_eq!(bmask(1, 128), u128::MAX);
        assert_eq!(select(1, 7, 9), 7);
        assert_eq!(select(0, 7, 9), 9);
        assert_eq!(select(0x80, 7, 9), 7);
        assert_eq!(bitselect(0xf0, 0xab, 0xcd), 0xad);
        assert_eq!(bitselect(0, 0xab, 0xcd), 0xcd);
    }
}
