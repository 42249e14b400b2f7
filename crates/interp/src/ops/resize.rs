//! Width changes of integers: `uextend`, `sextend`, `ireduce`, `iconcat`, `isplit`.

use super::{from_signed, to_signed, truncate};

/// Zero-extension is the identity on canonical slots; kept for symmetry and clarity.
#[inline]
pub fn uextend(x: u128) -> u128 {
    x
}

#[inline]
pub fn sextend(x: u128, from_width: u32, to_width: u32) -> u128 {
    from_signed(to_signed(x, from_width), to_width)
}

#[inline]
pub fn ireduce(x: u128, to_width: u32) -> u128 {
    truncate(x, to_width)
}

/// The integer of `2 * half_width` bits whose low half is `lo` and high half is `hi`.
#[inline]
pub fn iconcat(lo: u128, hi: u128, half_width: u32) -> u128 {
    lo | (hi << half_width)
}

/// The (low, high) halves of `x`, each of `half_width` bits.
#[inline]
pub fn isplit(x: u128, half_width: u32) -> (u128, u128) {
    (truncate(x, half_width), x >> half_width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_and_reduce() {
        assert_eq!(uextend(0xff), 0xff);
        assert_eq!(sextend(0xff, 8, 16), 0xffff);
        assert_eq!(sextend(0x7f, 8, 128), 0x7f);
        assert_eq!(sextend(0x80, 8, 128), !0x7fu128);
        assert_eq!(sextend(0x8000_0000_0000_0000, 64, 128), !0u128 << 63);
        assert_eq!(ireduce(0x1234_5678, 8), 0x78);
        assert_eq!(ireduce(u128::MAX, 64), u64::MAX as u128);
    }

    #[test]
    fn concat_and_split() {
        let lo = 0x0123_4567_89ab_cdef;
        let hi = 0xfedc_ba98_7654_3210;
        let joined = iconcat(lo, hi, 64);
        assert_eq!(joined, 0xfedc_ba98_7654_3210_0123_4567_89ab_cdef);
        assert_eq!(isplit(joined, 64), (lo, hi));
        assert_eq!(iconcat(0xff, 0x01, 8), 0x01ff);
        assert_eq!(isplit(0xabcd, 8), (0xcd, 0xab));
        assert_eq!(isplit(0xdead_beef, 16), (0xbeef, 0xdead));
    }
}
