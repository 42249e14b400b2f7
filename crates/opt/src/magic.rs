//! Magic numbers for division by a constant (Granlund and Montgomery, "Division by
//! invariant integers using multiplication", 1994; Warren, "Hacker's Delight", ch. 10):
//! the multiplier and shift that `simplify.rules` turns `udiv`/`sdiv` by a constant into.
//!
//! Contract. Requires a width of 8 to 64 bits and a divisor given at that width. Guarantees,
//! for every dividend `x` of that width:
//! - unsigned, [`unsigned_magic`] without `add`: `x / d == umulhi(x, m) >> shift`; with
//!   `add`: `t = umulhi(x, m)`, `x / d == (t + ((x - t) >> 1)) >> shift`;
//! - signed, [`signed_magic`] for `d > 1`: with `q = smulhi(x, m)` (plus `x` when the
//!   multiplier's top bit is set), `x / d` rounded toward zero `== (q >> shift) + (x >>> (W-1))`
//!   (arithmetic, then logical shift).
//!
//! The unit tests check both exhaustively at 8 bits and on samples at wider widths.
//! Cost: O(width) per divisor.

/// How to divide by an unsigned constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsignedMagic {
    /// The multiplier, at the division's width.
    pub multiplier: u64,
    /// Whether the multiplier is one bit wider than the width (its top bit added back).
    pub add: bool,
    pub shift: u32,
}

/// The magic for `x / d` at `width` bits; `None` when `d` is a power of two (a shift does
/// better), below 3, or has its top bit set (the quotient is 0 or 1; the division stays).
pub fn unsigned_magic(width: u32, d: u64) -> Option<UnsignedMagic> {
    let top = 1u128 << width;
    let d = u128::from(d);
    if d < 3 || d.is_power_of_two() || d >= top >> 1 {
        return None;
    }
    // `ceil_log2` is at least 2 and at most width - 1, so `width + s` stays below 128.
    let ceil_log2 = 128 - (d - 1).leading_zeros();
    for s in 0..=ceil_log2 {
        let p = 1u128 << (width + s);
        let m = p.div_ceil(d);
        // The error `m·d − 2^(W+s)` at most `2^s` keeps `floor(x·m / 2^(W+s))` exact for
        // every `x < 2^W`.
        if m * d - p <= 1u128 << s && m < top {
            return Some(UnsignedMagic {
                multiplier: m as u64,
                add: false,
                shift: s,
            });
        }
    }
    // At `s = ceil_log2` the error bound holds and `2^W <= m < 2^(W+1)`: multiply by the
    // low `W` bits and add `x` back, halving first so nothing overflows.
    let m = (1u128 << (width + ceil_log2)).div_ceil(d);
    Some(UnsignedMagic {
        multiplier: (m - top) as u64,
        add: true,
        shift: ceil_log2 - 1,
    })
}

/// How to divide by a positive signed constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignedMagic {
    /// The multiplier's bits at the division's width (read as signed by `smulhi`).
    pub multiplier: u64,
    /// Whether the multiplier's top bit is set, so `smulhi` saw it as `m − 2^W` and `x` must
    /// be added back.
    pub add: bool,
    pub shift: u32,
}

/// The magic for `x / d` (signed, rounding toward zero) at `width` bits, for a positive
/// `d` that is not a power of two; `None` otherwise.
pub fn signed_magic(width: u32, d: u64) -> Option<SignedMagic> {
    let d = u128::from(d);
    if d < 3 || d.is_power_of_two() || d >= 1u128 << (width - 1) {
        return None;
    }
    let ceil_log2 = 128 - (d - 1).leading_zeros();
    for s in 0..ceil_log2 {
        let p = 1u128 << (width + s);
        let m = p.div_ceil(d);
        // `|x| <= 2^(W-1)`, so an error below `2^(s+1)` keeps `x·m / 2^(W+s)` within
        // `1/d` of `x / d`: floor for `x >= 0`, one below the truncation for `x < 0`
        // (`d` is no power of two, so the error is never zero).
        if m * d - p < 1u128 << (s + 1) {
            debug_assert!(m < 1u128 << width);
            return Some(SignedMagic {
                multiplier: m as u64,
                add: m >> (width - 1) != 0,
                shift: s,
            });
        }
    }
    // At `s = ceil_log2 - 1` the error, below `d < 2^ceil_log2`, always qualifies.
    unreachable!("a signed magic number exists for every d >= 3")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(width: u32) -> u128 {
        (1u128 << width) - 1
    }

    fn udiv_by_magic(width: u32, x: u64, g: UnsignedMagic) -> u64 {
        let x = u128::from(x);
        let t = (x * u128::from(g.multiplier)) >> width;
        let q = if g.add {
            (t + ((x - t) >> 1)) >> g.shift
        } else {
            t >> g.shift
        };
        (q & mask(width)) as u64
    }

    fn signed(width: u32, bits: u64) -> i128 {
        let v = i128::from(bits as i64);
        (v << (128 - width)) >> (128 - width)
    }

    fn sdiv_by_magic(width: u32, x: u64, g: SignedMagic) -> i128 {
        let xs = signed(width, x);
        let m = signed(width, g.multiplier);
        let mut q = (xs * m) >> width;
        if g.add {
            q += xs;
        }
        q = signed(width, q as u64) >> g.shift;
        q + i128::from(xs < 0)
    }

    fn check_unsigned(width: u32, d: u64, xs: impl Iterator<Item = u64>) {
        let Some(g) = unsigned_magic(width, d) else {
            return;
        };
        for x in xs {
            assert_eq!(
                udiv_by_magic(width, x, g),
                x / d,
                "u{width}: {x} / {d} ({g:?})"
            );
        }
    }

    fn check_signed(width: u32, d: u64, xs: impl Iterator<Item = u64>) {
        let Some(g) = signed_magic(width, d) else {
            return;
        };
        for x in xs {
            let want = signed(width, x) / i128::from(d);
            assert_eq!(
                sdiv_by_magic(width, x, g),
                want,
                "s{width}: {x} / {d} ({g:?})"
            );
        }
    }

    #[test]
    fn exhaustive_at_8_bits() {
        for d in 0..256 {
            check_unsigned(8, d, 0..256);
            check_signed(8, d, 0..256);
        }
    }

    #[test]
    fn sampled_at_16_32_64_bits() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for width in [16, 32, 64] {
            let m = mask(width) as u64;
            let edges = [0, 1, 2, m, m - 1, m >> 1, (m >> 1) + 1, (m >> 1) - 1];
            let random: Vec<u64> = (0..300)
                .map(|_| next() & m >> (next() % u64::from(width)))
                .collect();
            for d in (3..2000).chain(random) {
                let samples: Vec<u64> = (0..200).map(|_| next() & m).chain(edges).collect();
                let near: Vec<u64> = (0..40)
                    .map(|k| d.wrapping_mul(k + 1).wrapping_sub(k & 1) & m)
                    .collect();
                check_unsigned(width, d, samples.iter().chain(&near).copied());
                check_signed(width, d, samples.iter().chain(&near).copied());
            }
        }
    }

    #[test]
    fn the_known_constants() {
        let ten = unsigned_magic(64, 10).unwrap();
        assert_eq!(
            (ten.multiplier, ten.add, ten.shift),
            (0xcccc_cccc_cccc_cccd, false, 3)
        );
        let seven = unsigned_magic(32, 7).unwrap();
        assert_eq!(
            (seven.multiplier, seven.add, seven.shift),
            (0x2492_4925, true, 2)
        );
        let s7 = signed_magic(32, 7).unwrap();
        assert_eq!((s7.multiplier, s7.add, s7.shift), (0x9249_2493, true, 2));
        assert_eq!(unsigned_magic(32, 16), None);
        assert_eq!(signed_magic(32, 2), None);
    }
}
