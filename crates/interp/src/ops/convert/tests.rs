use super::*;
use FloatKind::{F32, F64};

fn s32(v: f32) -> u128 {
    v.to_bits() as u128
}

fn s64(v: f64) -> u128 {
    v.to_bits() as u128
}

const SNAN_F32: u128 = 0xff80_0001;
const CANONICAL_NAN_F32: u128 = 0x7fc0_0000;
const CANONICAL_NAN_F64: u128 = 0x7ff8_0000_0000_0000;

#[test]
fn promote_and_demote() {
    assert_eq!(fpromote(s32(1.5)), s64(1.5));
    assert_eq!(fpromote(s32(-0.0)), s64(-0.0));
    assert_eq!(fpromote(1), s64(f32::from_bits(1) as f64)); // subnormal becomes normal
    assert_eq!(fpromote(SNAN_F32), CANONICAL_NAN_F64);
    assert_eq!(fdemote(s64(1.0 + 2.0f64.powi(-24))), s32(1.0)); // tie to even
    assert_eq!(
        fdemote(s64(1.0 + 3.0 * 2.0f64.powi(-24))),
        s32(1.0 + 2.0f32.powi(-22))
    );
    assert_eq!(fdemote(s64(f64::MAX)), s32(f32::INFINITY));
    assert_eq!(fdemote(s64(-1e-300)), s32(-0.0));
    assert_eq!(fdemote(s64(2.0f64.powi(-149))), 1);
    assert_eq!(fdemote(s64(2.0f64.powi(-150))), 0); // tie between 0 and the least subnormal
    assert_eq!(fdemote(0x7ff0_0000_0000_0001), CANONICAL_NAN_F32);
}

#[test]
fn trapping_float_to_int() {
    for kind in [F32, F64] {
        let nan = if kind == F32 {
            CANONICAL_NAN_F32
        } else {
            CANONICAL_NAN_F64
        };
        let v = |x: f64| if kind == F32 { s32(x as f32) } else { s64(x) };
        for w in [8, 16, 32, 64, 128] {
            assert_eq!(
                fcvt_to_uint(kind, nan, w),
                Err(Trap::BadConversionToInteger)
            );
            assert_eq!(
                fcvt_to_sint(kind, nan, w),
                Err(Trap::BadConversionToInteger)
            );
            let inf = v(f64::INFINITY);
            assert_eq!(fcvt_to_uint(kind, inf, w), Err(Trap::IntegerOverflow));
            assert_eq!(
                fcvt_to_sint(kind, v(f64::NEG_INFINITY), w),
                Err(Trap::IntegerOverflow)
            );
            assert_eq!(fcvt_to_uint(kind, v(-1.0), w), Err(Trap::IntegerOverflow));
            assert_eq!(fcvt_to_uint(kind, v(-0.99), w), Ok(0));
            assert_eq!(fcvt_to_uint(kind, v(-0.0), w), Ok(0));
            let two_w = 2.0f64.powi(w as i32);
            assert_eq!(fcvt_to_uint(kind, v(two_w), w), Err(Trap::IntegerOverflow));
            assert_eq!(
                fcvt_to_sint(kind, v(two_w / 2.0), w),
                Err(Trap::IntegerOverflow)
            );
            assert_eq!(fcvt_to_sint(kind, v(-two_w / 2.0), w), Ok(1 << (w - 1)));
            assert_eq!(fcvt_to_sint(kind, v(-1.75), w), Ok(mask(w)));
            assert_eq!(fcvt_to_uint(kind, v(200.9), w).map(|r| r & 0xff), Ok(200));
        }
    }
    assert_eq!(fcvt_to_sint(F64, s64(127.9), 8), Ok(127));
    assert_eq!(fcvt_to_sint(F64, s64(-128.9), 8), Ok(0x80));
    assert_eq!(
        fcvt_to_sint(F64, s64(-129.0), 8),
        Err(Trap::IntegerOverflow)
    );
    assert_eq!(fcvt_to_uint(F64, s64(255.99), 8), Ok(255));
    assert_eq!(fcvt_to_uint(F64, s64(4294967295.0), 32), Ok(0xffff_ffff));
    assert_eq!(fcvt_to_sint(F64, s64(-2147483648.9), 32), Ok(0x8000_0000));
    assert_eq!(
        fcvt_to_sint(F64, s64(-2147483649.0), 32),
        Err(Trap::IntegerOverflow)
    );
    assert_eq!(fcvt_to_uint(F32, s32(4294967040.0), 32), Ok(0xffff_ff00));
    assert_eq!(
        fcvt_to_uint(F64, s64(f64::MAX), 128),
        Err(Trap::IntegerOverflow)
    );
    let largest_below_2_128 = f64::from_bits(s64(2.0f64.powi(128)) as u64 - 1);
    assert_eq!(
        fcvt_to_uint(F64, s64(largest_below_2_128), 128),
        Ok(largest_below_2_128 as u128)
    );
    assert_eq!(fcvt_to_uint(F32, s32(f32::MAX), 128), Ok(f32::MAX as u128));
}

#[test]
fn saturating_float_to_int() {
    for w in [8, 16, 32, 64, 128] {
        let smax = mask(w) >> 1;
        let smin = 1 << (w - 1);
        for kind in [F32, F64] {
            let v = |x: f64| if kind == F32 { s32(x as f32) } else { s64(x) };
            assert_eq!(fcvt_to_uint_sat(kind, v(f64::NAN), w), 0);
            assert_eq!(fcvt_to_sint_sat(kind, v(f64::NAN), w), 0);
            assert_eq!(fcvt_to_uint_sat(kind, v(f64::INFINITY), w), mask(w));
            assert_eq!(fcvt_to_uint_sat(kind, v(f64::NEG_INFINITY), w), 0);
            assert_eq!(fcvt_to_sint_sat(kind, v(f64::INFINITY), w), smax);
            assert_eq!(fcvt_to_sint_sat(kind, v(f64::NEG_INFINITY), w), smin);
            assert_eq!(fcvt_to_uint_sat(kind, v(-5.5), w), 0);
            assert_eq!(fcvt_to_sint_sat(kind, v(-5.5), w), from_signed(-5, w));
            assert_eq!(fcvt_to_uint_sat(kind, v(5.9), w), 5);
        }
        assert_eq!(fcvt_to_uint_sat(F32, SNAN_F32, w), 0);
    }
    assert_eq!(fcvt_to_sint_sat(F64, s64(300.0), 8), 0x7f);
    assert_eq!(fcvt_to_sint_sat(F64, s64(-300.0), 8), 0x80);
    assert_eq!(fcvt_to_uint_sat(F64, s64(300.0), 8), 0xff);
    assert_eq!(fcvt_to_uint_sat(F64, s64(1e40), 128), u128::MAX);
}

#[test]
fn int_to_float_rounds_to_nearest_even() {
    assert_eq!(fcvt_from_uint(F32, (1 << 24) + 1), s32(16777216.0));
    assert_eq!(fcvt_from_uint(F32, (1 << 24) + 3), s32(16777220.0));
    assert_eq!(fcvt_from_uint(F64, (1 << 53) + 1), s64(9007199254740992.0));
    assert_eq!(
        fcvt_from_uint(F32, u64::MAX as u128),
        s32(18446744073709551616.0)
    );
    assert_eq!(fcvt_from_uint(F64, u128::MAX), s64(2.0f64.powi(128)));
    assert_eq!(fcvt_from_uint(F32, u128::MAX), s32(f32::INFINITY)); // rounds past f32::MAX
                                                                    // 2^127 + 2^103 is exactly halfway between two f32s: ties to even (down).
    assert_eq!(
        fcvt_from_uint(F32, (1 << 127) + (1 << 103)),
        s32(2.0f32.powi(127))
    );
    assert_eq!(
        fcvt_from_uint(F32, (1 << 127) + (1 << 103) + 1),
        s32(2.0f32.powi(127) * (1.0 + 2.0f32.powi(-23)))
    );
    assert_eq!(fcvt_from_sint(F32, 0xff, 8), s32(-1.0));
    assert_eq!(fcvt_from_sint(F64, 0x80, 8), s64(-128.0));
    assert_eq!(fcvt_from_sint(F64, 1 << 127, 128), s64(-(2.0f64.powi(127))));
    assert_eq!(fcvt_from_sint(F32, u128::MAX, 128), s32(-1.0));
    assert_eq!(
        fcvt_from_sint(F64, 0x8000_0000_0000_0001, 64),
        s64(-9223372036854775807.0)
    );
    assert_eq!(fcvt_from_uint(F64, 0), s64(0.0));
}

#[test]
fn bitcast_is_identity() {
    assert_eq!(bitcast(SNAN_F32), SNAN_F32);
    assert_eq!(bitcast(u64::MAX as u128), u64::MAX as u128);
}
