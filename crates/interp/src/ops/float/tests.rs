use super::*;
use FloatKind::{F32, F64};

fn s32(v: f32) -> u128 {
    v.to_bits() as u128
}

fn s64(v: f64) -> u128 {
    v.to_bits() as u128
}

const SNAN_F32: u128 = 0xff80_0001;
const QNAN_PAYLOAD_F32: u128 = 0x7fd0_0001;
const SNAN_F64: u128 = 0x7ff4_0000_0000_0001;

#[test]
fn arithmetic_basics_and_signed_zeros() {
    assert_eq!(fadd(F32, s32(1.5), s32(2.25)), s32(3.75));
    assert_eq!(fsub(F64, s64(1.0), s64(3.0)), s64(-2.0));
    assert_eq!(fmul(F32, s32(-0.0), s32(5.0)), s32(-0.0));
    assert_eq!(fdiv(F64, s64(1.0), s64(-0.0)), s64(f64::NEG_INFINITY));
    assert_eq!(fadd(F32, s32(-0.0), s32(-0.0)), s32(-0.0));
    assert_eq!(fadd(F32, s32(0.0), s32(-0.0)), s32(0.0));
    assert_eq!(fsub(F64, s64(0.0), s64(0.0)), s64(0.0));
    assert_eq!(fmul(F32, s32(f32::MAX), s32(2.0)), s32(f32::INFINITY));
    // Subnormal results are kept, not flushed.
    let tiny = f32::from_bits(1);
    assert_eq!(
        fdiv(F32, s32(f32::MIN_POSITIVE), s32(2.0f32.powi(23))),
        s32(tiny)
    );
    assert_eq!(fadd(F32, s32(tiny), s32(tiny)), 2);
    // Upper slot bits never leak: results are canonical.
    assert_eq!(fadd(F32, s32(-1.0), s32(0.5)) >> 32, 0);
}

#[test]
fn nan_results_are_canonical() {
    let inf32 = s32(f32::INFINITY);
    assert_eq!(fsub(F32, inf32, inf32), CANONICAL_NAN_F32);
    assert_eq!(fmul(F32, s32(0.0), inf32), CANONICAL_NAN_F32);
    assert_eq!(fdiv(F64, s64(0.0), s64(0.0)), CANONICAL_NAN_F64);
    assert_eq!(fadd(F32, SNAN_F32, s32(1.0)), CANONICAL_NAN_F32);
    assert_eq!(fadd(F32, s32(1.0), QNAN_PAYLOAD_F32), CANONICAL_NAN_F32);
    assert_eq!(fmul(F64, SNAN_F64, s64(2.0)), CANONICAL_NAN_F64);
    assert_eq!(sqrt(F32, s32(-1.0)), CANONICAL_NAN_F32);
    assert_eq!(sqrt(F64, SNAN_F64), CANONICAL_NAN_F64);
    assert_eq!(
        fma(F32, s32(f32::INFINITY), s32(0.0), s32(1.0)),
        CANONICAL_NAN_F32
    );
    for op in [ceil, floor, trunc, nearest] {
        assert_eq!(op(F32, SNAN_F32), CANONICAL_NAN_F32);
        assert_eq!(op(F64, SNAN_F64), CANONICAL_NAN_F64);
    }
}

#[test]
fn sqrt_edges() {
    assert_eq!(sqrt(F32, s32(-0.0)), s32(-0.0));
    assert_eq!(sqrt(F64, s64(2.0)), s64(std::f64::consts::SQRT_2));
    assert_eq!(sqrt(F32, s32(f32::INFINITY)), s32(f32::INFINITY));
    assert_eq!(sqrt(F64, s64(f64::from_bits(4))), s64(2.0f64.powi(-536)));
}

#[test]
fn fma_is_fused_and_correctly_rounded() {
    // f64: (1 + 2^-27)^2 - (1 + 2^-26) = 2^-54 exactly; unfused gives 0.
    let a = 1.0 + 2.0f64.powi(-27);
    let want = 2.0f64.powi(-54);
    assert_eq!(
        fma(F64, s64(a), s64(a), s64(-(1.0 + 2.0f64.powi(-26)))),
        s64(want)
    );
    // f32: x*y = 1 + 2^-11 + 2^-24 lies exactly halfway between two f32s; adding 2^-80 must
    // round up. Rounding through f64 first would land on the tie and round to even (down).
    let x = 1.0 + 2.0f32.powi(-12);
    let up = 1.0 + 2.0f32.powi(-11) + 2.0f32.powi(-23);
    let down = 1.0 + 2.0f32.powi(-11);
    assert_eq!(fma(F32, s32(x), s32(x), s32(2.0f32.powi(-80))), s32(up));
    assert_eq!(
        fma(F32, s32(x), s32(x), s32(-(2.0f32.powi(-80)))),
        s32(down)
    );
    assert_eq!(fma(F32, s32(x), s32(x), s32(0.0)), s32(down)); // the tie itself: to even
                                                               // Signed zero: (-0 * 1) + -0 = -0; (1 * -1) + 1 = +0.
    assert_eq!(fma(F64, s64(-0.0), s64(1.0), s64(-0.0)), s64(-0.0));
    assert_eq!(fma(F64, s64(1.0), s64(-1.0), s64(1.0)), s64(0.0));
}

#[test]
fn min_max_nan_and_zero_rules() {
    for (kind, nan, pos0, neg0, one) in [
        (F32, SNAN_F32, s32(0.0), s32(-0.0), s32(1.0)),
        (F64, SNAN_F64, s64(0.0), s64(-0.0), s64(1.0)),
    ] {
        let canonical = if kind == F32 {
            CANONICAL_NAN_F32
        } else {
            CANONICAL_NAN_F64
        };
        assert_eq!(fmin(kind, nan, one), canonical);
        assert_eq!(fmin(kind, one, nan), canonical);
        assert_eq!(fmax(kind, nan, one), canonical);
        assert_eq!(fmax(kind, one, nan), canonical);
        assert_eq!(fmin(kind, pos0, neg0), neg0);
        assert_eq!(fmin(kind, neg0, pos0), neg0);
        assert_eq!(fmax(kind, pos0, neg0), pos0);
        assert_eq!(fmax(kind, neg0, pos0), pos0);
        assert_eq!(fmin(kind, one, neg0), neg0);
        assert_eq!(fmax(kind, one, neg0), one);
        assert_eq!(fmin(kind, one, one), one);
    }
    assert_eq!(
        fmin(F32, s32(f32::NEG_INFINITY), s32(-1.0)),
        s32(f32::NEG_INFINITY)
    );
    assert_eq!(
        fmax(F64, s64(f64::INFINITY), s64(1e300)),
        s64(f64::INFINITY)
    );
}

#[test]
fn rounding_to_integral() {
    let cases32: [(f32, [f32; 4]); 10] = [
        // x, [ceil, floor, trunc, nearest]
        (0.5, [1.0, 0.0, 0.0, 0.0]),
        (1.5, [2.0, 1.0, 1.0, 2.0]),
        (2.5, [3.0, 2.0, 2.0, 2.0]),
        (-0.5, [-0.0, -1.0, -0.0, -0.0]),
        (-2.5, [-2.0, -3.0, -2.0, -2.0]),
        (-3.5, [-3.0, -4.0, -3.0, -4.0]),
        (8388609.0, [8388609.0, 8388609.0, 8388609.0, 8388609.0]),
        (f32::from_bits(1), [1.0, 0.0, 0.0, 0.0]),
        (-f32::from_bits(1), [-0.0, -1.0, -0.0, -0.0]),
        (f32::NEG_INFINITY, [f32::NEG_INFINITY; 4]),
    ];
    for (x, [c, f, t, n]) in cases32 {
        assert_eq!(ceil(F32, s32(x)), s32(c), "ceil {x}");
        assert_eq!(floor(F32, s32(x)), s32(f), "floor {x}");
        assert_eq!(trunc(F32, s32(x)), s32(t), "trunc {x}");
        assert_eq!(nearest(F32, s32(x)), s32(n), "nearest {x}");
        let (x, c, f, t, n) = (x as f64, c as f64, f as f64, t as f64, n as f64);
        assert_eq!(ceil(F64, s64(x)), s64(c), "ceil {x}");
        assert_eq!(floor(F64, s64(x)), s64(f), "floor {x}");
        assert_eq!(trunc(F64, s64(x)), s64(t), "trunc {x}");
        assert_eq!(nearest(F64, s64(x)), s64(n), "nearest {x}");
    }
    let big = 4503599627370497.0; // 2^52 + 1, already integral
    assert_eq!(nearest(F64, s64(big)), s64(big));
    assert_eq!(
        nearest(F64, s64(4503599627370495.5)),
        s64(4503599627370496.0)
    );
    assert_eq!(nearest(F64, s64(-0.0)), s64(-0.0));
}

#[test]
fn sign_operations_keep_nan_payloads() {
    assert_eq!(fneg(F32, SNAN_F32), 0x7f80_0001);
    assert_eq!(fneg(F32, s32(0.0)), s32(-0.0));
    assert_eq!(fabs(F32, SNAN_F32), 0x7f80_0001);
    assert_eq!(fabs(F64, SNAN_F64 | 1 << 63), SNAN_F64);
    assert_eq!(
        fcopysign(F32, QNAN_PAYLOAD_F32, s32(-1.0)),
        QNAN_PAYLOAD_F32 | 1 << 31
    );
    assert_eq!(fcopysign(F64, s64(-2.0), s64(0.0)), s64(2.0));
    assert_eq!(
        fcopysign(F64, SNAN_F64, CANONICAL_NAN_F64 | 1 << 63),
        SNAN_F64 | 1 << 63
    );
    assert_eq!(fneg(F64, s64(1.0)) >> 64, 0);
}
