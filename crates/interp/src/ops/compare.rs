//! `icmp` and `fcmp`: a condition code applied to two slots, giving an `i8` slot (1 or 0).

use kestrel_ir::immediates::{FloatCC, IntCC};

use super::float::{load_f16, load_f32, load_f64};
use super::{to_signed, FloatKind};

/// Integer comparison of two canonical slots of `width` bits.
#[inline]
pub fn icmp(cc: IntCC, x: u128, y: u128, width: u32) -> u128 {
    let (sx, sy) = (to_signed(x, width), to_signed(y, width));
    let holds = match cc {
        IntCC::Equal => x == y,
        IntCC::NotEqual => x != y,
        IntCC::SignedLessThan => sx < sy,
        IntCC::SignedGreaterThanOrEqual => sx >= sy,
        IntCC::SignedGreaterThan => sx > sy,
        IntCC::SignedLessThanOrEqual => sx <= sy,
        IntCC::UnsignedLessThan => x < y,
        IntCC::UnsignedGreaterThanOrEqual => x >= y,
        IntCC::UnsignedGreaterThan => x > y,
        IntCC::UnsignedLessThanOrEqual => x <= y,
    };
    holds as u128
}

/// Float comparison; "unordered" means at least one operand is NaN. -0.0 equals +0.0.
#[inline]
pub fn fcmp(cc: FloatCC, kind: FloatKind, x: u128, y: u128) -> u128 {
    let order = match kind {
        FloatKind::F32 => load_f32(x).partial_cmp(&load_f32(y)),
        FloatKind::F64 => load_f64(x).partial_cmp(&load_f64(y)),
        FloatKind::F16 => load_f16(x).partial_cmp(&load_f16(y)),
        FloatKind::F128 => f128_partial_cmp(x, y),
    };
    float_condition_holds(cc, order) as u128
}

/// Whether `cc` holds for operands related by `order` (`None` = unordered).
/// IEEE order of two `f128`s: `None` if either is a NaN, and -0 = +0.
pub(super) fn f128_partial_cmp(x: u128, y: u128) -> Option<std::cmp::Ordering> {
    let format = FloatKind::F128.format();
    if format.is_nan(x) || format.is_nan(y) {
        return None;
    }
    let magnitude = |v: u128| v & !(1 << 127);
    // Sign-magnitude to a signed key that orders like the values (both zeros map to 0).
    let key = |v: u128| {
        let m = magnitude(v) as i128;
        if v >> 127 == 1 {
            -m
        } else {
            m
        }
    };
    Some(key(x).cmp(&key(y)))
}

#[inline]
fn float_condition_holds(cc: FloatCC, order: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let unordered = order.is_none();
    match cc {
        FloatCC::Ordered => !unordered,
        FloatCC::Unordered => unordered,
        FloatCC::Equal => order == Some(Equal),
        FloatCC::NotEqual => order != Some(Equal),
        FloatCC::OrderedNotEqual => matches!(order, Some(Less | Greater)),
        FloatCC::UnorderedOrEqual => matches!(order, None | Some(Equal)),
        FloatCC::LessThan => order == Some(Less),
        FloatCC::LessThanOrEqual => matches!(order, Some(Less | Equal)),
        FloatCC::GreaterThan => order == Some(Greater),
        FloatCC::GreaterThanOrEqual => matches!(order, Some(Greater | Equal)),
        FloatCC::UnorderedOrLessThan => matches!(order, None | Some(Less)),
        FloatCC::UnorderedOrLessThanOrEqual => order != Some(Greater),
        FloatCC::UnorderedOrGreaterThan => matches!(order, None | Some(Greater)),
        FloatCC::UnorderedOrGreaterThanOrEqual => order != Some(Less),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::mask;

    #[test]
    fn integer_conditions_at_the_sign_boundary() {
        for w in [8, 16, 32, 64, 128] {
            let min = 1u128 << (w - 1); // signed MIN, unsigned large
            let one = 1;
            let expect = [
                (IntCC::Equal, 0),
                (IntCC::NotEqual, 1),
                (IntCC::SignedLessThan, 1),
                (IntCC::SignedGreaterThanOrEqual, 0),
                (IntCC::SignedGreaterThan, 0),
                (IntCC::SignedLessThanOrEqual, 1),
                (IntCC::UnsignedLessThan, 0),
                (IntCC::UnsignedGreaterThanOrEqual, 1),
                (IntCC::UnsignedGreaterThan, 1),
                (IntCC::UnsignedLessThanOrEqual, 0),
            ];
            for (cc, want) in expect {
                assert_eq!(icmp(cc, min, one, w), want, "{cc} i{w}");
                assert_eq!(icmp(cc.swap_args(), one, min, w), want, "{cc} swapped i{w}");
                assert_eq!(
                    icmp(cc.inverse(), min, one, w),
                    1 - want,
                    "{cc} inverse i{w}"
                );
            }
            for &cc in IntCC::ALL {
                let reflexive = matches!(
                    cc,
                    IntCC::Equal
                        | IntCC::SignedGreaterThanOrEqual
                        | IntCC::SignedLessThanOrEqual
                        | IntCC::UnsignedGreaterThanOrEqual
                        | IntCC::UnsignedLessThanOrEqual
                );
                assert_eq!(icmp(cc, mask(w), mask(w), w), reflexive as u128);
            }
        }
    }

    #[test]
    fn float_conditions_with_nan_and_zeros() {
        use FloatCC::*;
        let nan = 0x7fc0_0000;
        let (neg_zero, pos_zero, one) = (0x8000_0000, 0, 0x3f80_0000);
        // (cc, 0 vs 1, 1 vs 0, 0 vs -0, x vs NaN)
        let table = [
            (Ordered, 1, 1, 1, 0),
            (Unordered, 0, 0, 0, 1),
            (Equal, 0, 0, 1, 0),
            (NotEqual, 1, 1, 0, 1),
            (OrderedNotEqual, 1, 1, 0, 0),
            (UnorderedOrEqual, 0, 0, 1, 1),
            (LessThan, 1, 0, 0, 0),
            (LessThanOrEqual, 1, 0, 1, 0),
            (GreaterThan, 0, 1, 0, 0),
            (GreaterThanOrEqual, 0, 1, 1, 0),
            (UnorderedOrLessThan, 1, 0, 0, 1),
            (UnorderedOrLessThanOrEqual, 1, 0, 1, 1),
            (UnorderedOrGreaterThan, 0, 1, 0, 1),
            (UnorderedOrGreaterThanOrEqual, 0, 1, 1, 1),
        ];
        assert_eq!(table.len(), FloatCC::ALL.len());
        for (cc, lt, gt, zeros, with_nan) in table {
            let f32_case = |x, y| fcmp(cc, FloatKind::F32, x, y);
            assert_eq!(f32_case(pos_zero, one), lt, "{cc} lt");
            assert_eq!(f32_case(one, pos_zero), gt, "{cc} gt");
            assert_eq!(f32_case(pos_zero, neg_zero), zeros, "{cc} zeros");
            assert_eq!(f32_case(one, nan), with_nan, "{cc} nan");
            assert_eq!(f32_case(nan, nan), with_nan, "{cc} nan nan");
            let wide = |bits: u128| (f32::from_bits(bits as u32) as f64).to_bits() as u128;
            let f64_case = |x, y| fcmp(cc, FloatKind::F64, wide(x), wide(y));
            assert_eq!(f64_case(pos_zero, one), lt, "{cc} f64 lt");
            assert_eq!(f64_case(pos_zero, neg_zero), zeros, "{cc} f64 zeros");
            assert_eq!(f64_case(nan, one), with_nan, "{cc} f64 nan");
        }
    }
}
