//! `f128` arithmetic in software: `+ - * /`, `sqrt`, `fmin`/`fmax` and rounding to
//! integral, each correctly rounded (to nearest, ties to even) from the exact result, with
//! the interpreter's NaN policy (a NaN result is the canonical quiet NaN).
//!
//! Method. Operands are taken apart into `±significand * 2^exponent` (significand below
//! 2^113); the exact result is formed in integers with at least two bits below the last kept
//! one, and bits lost on the way are ORed into the lowest bit ("sticky"), which is enough to
//! round once correctly ([`Format::round_pack`]). Cost: O(1) (`/` and `sqrt` loop over the
//! ~116 result bits).

use kestrel_ir::ieee::{Format, Unpacked, BINARY128};

const F: Format = BINARY128;
const SIGN: u128 = 1 << 127;

fn nan() -> u128 {
    F.canonical_nan()
}

fn inf(negative: bool) -> u128 {
    F.infinity() | if negative { SIGN } else { 0 }
}

fn zero(negative: bool) -> u128 {
    if negative {
        SIGN
    } else {
        0
    }
}

/// `significand >> shift`, any set bit shifted out ORed into the lowest bit.
fn shift_right_sticky(significand: u128, shift: u32) -> u128 {
    if shift == 0 {
        significand
    } else if shift >= 128 {
        u128::from(significand != 0)
    } else {
        (significand >> shift) | u128::from(significand & ((1 << shift) - 1) != 0)
    }
}

/// `x + y`.
pub fn add(x: u128, y: u128) -> u128 {
    use Unpacked::*;
    match (F.unpack(x), F.unpack(y)) {
        (NaN, _) | (_, NaN) => nan(),
        (Inf { negative: a }, Inf { negative: b }) if a != b => nan(),
        (Inf { negative }, _) | (_, Inf { negative }) => inf(negative),
        (Zero { negative: a }, Zero { negative: b }) => zero(a && b),
        (Zero { .. }, _) => y,
        (_, Zero { .. }) => x,
        (
            Finite {
                negative: na,
                exponent: ea,
                significand: sa,
            },
            Finite {
                negative: nb,
                exponent: eb,
                significand: sb,
            },
        ) => {
            // Ten guard bits: significands below 2^123, sums below 2^124.
            let (mut a, mut b) = ((na, ea - 10, sa << 10), (nb, eb - 10, sb << 10));
            if a.1 < b.1 {
                std::mem::swap(&mut a, &mut b);
            }
            // Align `b` to `a`'s exponent; only a shift past the guard bits loses bits,
            // and then `b` is too small for the difference to lose more than one bit.
            let d = (a.1 - b.1) as u32;
            let (mut sa, sb) = (a.2, shift_right_sticky(b.2, d));
            let mut negative = a.0;
            if a.0 == b.0 {
                sa += sb;
            } else if sa >= sb {
                sa -= sb;
            } else {
                sa = sb - sa;
                negative = b.0;
            }
            if sa == 0 {
                return zero(false);
            }
            F.round_pack(negative, a.1, sa, false)
        }
    }
}

/// `x - y`.
pub fn sub(x: u128, y: u128) -> u128 {
    add(x, y ^ SIGN)
}

/// The 256-bit product of two values below 2^113, as (high, low) halves.
fn wide_mul(a: u128, b: u128) -> (u128, u128) {
    let (ah, al) = (a >> 64, a & u128::from(u64::MAX));
    let (bh, bl) = (b >> 64, b & u128::from(u64::MAX));
    let ll = al * bl;
    let mid = al * bh + ah * bl; // below 2^(64+49+1): no overflow
    let hh = ah * bh;
    let (lo, carry) = ll.overflowing_add(mid << 64);
    let hi = hh + (mid >> 64) + u128::from(carry);
    (hi, lo)
}

/// `x * y`.
pub fn mul(x: u128, y: u128) -> u128 {
    use Unpacked::*;
    let negative = (x ^ y) & SIGN != 0;
    match (F.unpack(x), F.unpack(y)) {
        (NaN, _) | (_, NaN) => nan(),
        (Inf { .. }, Zero { .. }) | (Zero { .. }, Inf { .. }) => nan(),
        (Inf { .. }, _) | (_, Inf { .. }) => inf(negative),
        (Zero { .. }, _) | (_, Zero { .. }) => zero(negative),
        (
            Finite {
                exponent: ea,
                significand: sa,
                ..
            },
            Finite {
                exponent: eb,
                significand: sb,
                ..
            },
        ) => {
            let (hi, lo) = wide_mul(sa, sb);
            // Keep the top 126 bits of the product, the rest as a sticky bit.
            let bits = if hi == 0 {
                128 - lo.leading_zeros()
            } else {
                256 - hi.leading_zeros()
            };
            let shift = bits.saturating_sub(126);
            let kept = if shift == 0 {
                lo
            } else if shift >= 128 {
                shift_right_sticky(hi, shift - 128) | u128::from(lo != 0)
            } else {
                (hi << (128 - shift)) | shift_right_sticky(lo, shift)
            };
            F.round_pack(negative, ea + eb + shift as i32, kept, false)
        }
    }
}

/// Normalize a significand to have its leading bit at position 112 (adjusting the exponent).
fn normalize(exponent: i32, significand: u128) -> (i32, u128) {
    let lz = significand.leading_zeros() as i32 - 15;
    (exponent - lz, significand << lz)
}

/// `x / y`.
pub fn div(x: u128, y: u128) -> u128 {
    use Unpacked::*;
    let negative = (x ^ y) & SIGN != 0;
    match (F.unpack(x), F.unpack(y)) {
        (NaN, _) | (_, NaN) => nan(),
        (Inf { .. }, Inf { .. }) | (Zero { .. }, Zero { .. }) => nan(),
        (Inf { .. }, _) | (_, Zero { .. }) => inf(negative),
        (Zero { .. }, _) | (_, Inf { .. }) => zero(negative),
        (
            Finite {
                exponent: ea,
                significand: sa,
                ..
            },
            Finite {
                exponent: eb,
                significand: sb,
                ..
            },
        ) => {
            let (ea, a) = normalize(ea, sa);
            let (eb, b) = normalize(eb, sb);
            // Long division: 116 quotient bits of a / b (a, b in [2^112, 2^113)).
            let (mut q, mut r) = (0u128, a);
            for _ in 0..116 {
                q <<= 1;
                if r >= b {
                    r -= b;
                    q |= 1;
                }
                r <<= 1;
            }
            let q = q | u128::from(r != 0);
            F.round_pack(negative, ea - eb - 115, q, false)
        }
    }
}

/// `sqrt(x)`.
pub fn sqrt(x: u128) -> u128 {
    use Unpacked::*;
    match F.unpack(x) {
        NaN => nan(),
        Zero { negative } => zero(negative),
        Inf { negative: false } => x,
        Inf { negative: true } | Finite { negative: true, .. } => nan(),
        Finite {
            exponent,
            significand,
            ..
        } => {
            let (mut e, mut m) = normalize(exponent, significand);
            if e % 2 != 0 {
                m <<= 1;
                e -= 1;
            }
            // sqrt(m * 2^e) = sqrt(m * 2^(2k)) * 2^((e - 2k) / 2) with m * 2^(2k) about
            // 2^232, whose integer square root has 116 bits; digit by digit, two bits of
            // the radicand at a time (bit j of the radicand is bit j - 2k of m).
            let k = 59;
            let top = 128 - m.leading_zeros() + 2 * k; // radicand bits
            let pairs = top.div_ceil(2);
            let (mut root, mut rem) = (0u128, 0u128);
            for p in (0..pairs).rev() {
                let bit = |j: u32| -> u128 {
                    if j < 2 * k || j - 2 * k >= 128 {
                        0
                    } else {
                        (m >> (j - 2 * k)) & 1
                    }
                };
                let pair = (bit(2 * p + 1) << 1) | bit(2 * p);
                rem = (rem << 2) | pair;
                let trial = (root << 2) | 1;
                if rem >= trial {
                    rem -= trial;
                    root = (root << 1) | 1;
                } else {
                    root <<= 1;
                }
            }
            let root = root | u128::from(rem != 0);
            F.round_pack(false, (e - 2 * k as i32) / 2, root, false)
        }
    }
}

/// Round to an integral value: `mode` picks toward -inf (`floor`), +inf (`ceil`), zero
/// (`trunc`) or the nearest, ties to even (`nearest`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Rounding {
    Floor,
    Ceil,
    Trunc,
    Nearest,
}

pub fn round_integral(x: u128, mode: Rounding) -> u128 {
    match F.unpack(x) {
        Unpacked::NaN => nan(),
        Unpacked::Zero { .. } | Unpacked::Inf { .. } => x,
        Unpacked::Finite {
            negative,
            exponent,
            significand,
        } => {
            if exponent >= 0 {
                return x; // already an integer
            }
            let shift = (-exponent) as u32;
            let (int, frac_nonzero, half, above_half) = if shift >= 128 {
                (0u128, true, false, false)
            } else {
                let frac = significand & ((1u128 << shift) - 1);
                let half = 1u128 << (shift - 1);
                (significand >> shift, frac != 0, frac == half, frac > half)
            };
            let up = match mode {
                Rounding::Trunc => false,
                Rounding::Floor => negative && frac_nonzero,
                Rounding::Ceil => !negative && frac_nonzero,
                Rounding::Nearest => above_half || (half && int & 1 == 1),
            };
            let int = int + u128::from(up);
            if int == 0 {
                return zero(negative);
            }
            F.round_pack(negative, 0, int, false)
        }
    }
}

/// The integer part (toward zero) of `x` as a signed value, `None` for NaN and infinities or
/// beyond `i129` range (callers check the result type's range).
pub fn to_integer(x: u128) -> Option<(bool, u128)> {
    match F.unpack(x) {
        Unpacked::NaN | Unpacked::Inf { .. } => None,
        Unpacked::Zero { .. } => Some((false, 0)),
        Unpacked::Finite {
            negative,
            exponent,
            significand,
        } => {
            if exponent >= 0 {
                if exponent > 15 {
                    return None; // at least 2^128
                }
                let v = significand.checked_shl(exponent as u32)?;
                (v >> exponent == significand).then_some((negative, v))
            } else {
                let shift = (-exponent) as u32;
                Some((negative, significand.checked_shr(shift).unwrap_or(0)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_ir::ieee::{convert, BINARY64};

    fn q(v: f64) -> u128 {
        convert(BINARY64, BINARY128, v.to_bits() as u128)
    }

    #[test]
    fn arithmetic_matches_f64_on_exact_cases() {
        assert_eq!(add(q(1.5), q(2.25)), q(3.75));
        assert_eq!(sub(q(1.0), q(3.0)), q(-2.0));
        assert_eq!(sub(q(1.0), q(1.0)), q(0.0));
        assert_eq!(mul(q(-1.5), q(4.0)), q(-6.0));
        assert_eq!(div(q(1.0), q(4.0)), q(0.25));
        assert_eq!(sqrt(q(9.0)), q(3.0));
        assert_eq!(sqrt(q(2.25)), q(1.5));
        assert_eq!(
            add(q(f64::INFINITY), q(f64::NEG_INFINITY)),
            F.canonical_nan()
        );
        assert_eq!(div(q(1.0), q(0.0)), q(f64::INFINITY));
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        let one = q(1.0);
        let ulp = 1u128; // 2^-112 relative to 1
                         // 1 + 2^-113 (half an ulp) rounds to 1 (even); 1 + 3*2^-114 rounds up.
        assert_eq!(add(one, div(q(1.0), q(2f64.powi(113)))), one);
        assert_eq!(add(one, mul(q(3.0), q(2f64.powi(-114)))), one | ulp);
        // 1/3 to 113 bits: 0x1.5555…5p-2, the last digit rounded.
        let third = div(one, q(3.0));
        assert_eq!(third >> 112, 0x3ffd);
        assert_eq!(
            third & ((1 << 112) - 1),
            0x5555_5555_5555_5555_5555_5555_5555
        );
        assert_eq!(mul(third, q(3.0)), one);
        assert_eq!(sqrt(q(2.0)) >> 112, 0x3fff);
        let s = sqrt(q(2.0));
        let back = mul(s, s);
        assert!(back == q(2.0) || back == q(2.0) + 1 || back == q(2.0) - 1);
    }

    #[test]
    fn integral_rounding() {
        assert_eq!(round_integral(q(2.5), Rounding::Nearest), q(2.0));
        assert_eq!(round_integral(q(3.5), Rounding::Nearest), q(4.0));
        assert_eq!(round_integral(q(-2.5), Rounding::Floor), q(-3.0));
        assert_eq!(round_integral(q(-2.5), Rounding::Ceil), q(-2.0));
        assert_eq!(round_integral(q(-0.5), Rounding::Trunc), q(-0.0));
        assert_eq!(to_integer(q(-7.9)), Some((true, 7)));
        assert_eq!(to_integer(q(2f64.powi(130))), None);
    }
}
