//! The 8-bit floating-point immediate of `fmov`: `±(16 + m)/16 × 2^e` with `m` in 0–15 and
//! `e` in −3–4 (so ±0.125 to ±31.0; zero is not representable).
//!
//! The byte is `a:b:cd:efgh`: sign `a`; exponent from `b` and `cd` (`b` = 1 for `e` in −3–0,
//! with `cd` = `e` + 3; `b` = 0 for `e` in 1–4, with `cd` = `e` − 1); fraction `efgh`. The
//! same byte means the same value for single and double precision.

/// An `fmov` immediate: any byte is a valid encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FpImm8(u8);

impl FpImm8 {
    /// `value` if it is representable, else `None`.
    pub fn new(value: f64) -> Option<FpImm8> {
        fp_imm8(value).map(FpImm8)
    }

    /// The immediate with encoding `bits`.
    pub const fn from_bits(bits: u8) -> FpImm8 {
        FpImm8(bits)
    }

    /// The encoding.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The value it stands for.
    pub fn value(self) -> f64 {
        let bits = u64::from(self.0);
        let sign = bits >> 7;
        let b = (bits >> 6) & 1;
        let cd = (bits >> 4) & 3;
        let exp = if b == 1 { 0x3FC | cd } else { 0x400 | cd };
        f64::from_bits((sign << 63) | (exp << 52) | ((bits & 0xF) << 48))
    }
}

/// Encodes `value` as an `fmov` immediate, or `None` if it is not representable.
pub fn fp_imm8(value: f64) -> Option<u8> {
    let bits = value.to_bits();
    let sign = (bits >> 63) as u8;
    let exp = (bits >> 52) & 0x7FF;
    let frac = bits & ((1 << 52) - 1);
    if frac & ((1 << 48) - 1) != 0 || !(0x3FC..=0x403).contains(&exp) {
        return None;
    }
    let b = u8::from(exp < 0x400);
    let cd = (exp & 3) as u8;
    Some((sign << 7) | (b << 6) | (cd << 4) | (frac >> 48) as u8)
}

/// [`fp_imm8`] for a single-precision value (every `f32` widens to `f64` exactly).
pub fn fp_imm8_f32(value: f32) -> Option<u8> {
    fp_imm8(f64::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 256 representable values by their definition, in the order of their encodings.
    fn by_definition() -> Vec<f64> {
        (0..=255u32)
            .map(|imm| {
                let sign = if imm & 0x80 != 0 { -1.0 } else { 1.0 };
                let b = (imm >> 6) & 1;
                let cd = ((imm >> 4) & 3) as i32;
                let e = if b == 1 { cd - 3 } else { cd + 1 };
                sign * f64::from(16 + (imm & 15)) / 16.0 * 2f64.powi(e)
            })
            .collect()
    }

    #[test]
    fn every_encoding_round_trips() {
        for (imm, &v) in by_definition().iter().enumerate() {
            let imm = imm as u8;
            assert_eq!(FpImm8::from_bits(imm).value(), v);
            assert_eq!(fp_imm8(v), Some(imm), "{v}");
            assert_eq!(fp_imm8_f32(v as f32), Some(imm), "{v}");
        }
        assert_eq!(fp_imm8(1.0), Some(0x70));
        assert_eq!(fp_imm8(-31.0), Some(0xBF));
        assert_eq!(fp_imm8(0.125), Some(0x40));
        assert_eq!(fp_imm8(2.0), Some(0x00));
    }

    /// Every double whose fraction has only its top four bits set (all others are rejected
    /// on the fraction alone), every such float, and random doubles.
    #[test]
    fn exactly_the_representable_values_encode() {
        let valid = by_definition();
        let expect = |v: f64| valid.iter().position(|&x| x == v).map(|i| i as u8);
        for top in 0..=u16::MAX {
            let v = f64::from_bits(u64::from(top) << 48);
            if !v.is_nan() {
                assert_eq!(fp_imm8(v), expect(v), "{v:e}");
            }
        }
        for top in 0..(1u32 << 13) {
            let v = f32::from_bits(top << 19);
            if !v.is_nan() {
                assert_eq!(fp_imm8_f32(v), expect(f64::from(v)), "{v:e}");
            }
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = f64::from_bits(state);
            if !v.is_nan() {
                assert_eq!(fp_imm8(v), expect(v), "{v:e}");
            }
        }
        assert_eq!(fp_imm8(0.0), None);
        assert_eq!(fp_imm8(32.0), None);
        assert_eq!(fp_imm8(0.0625), None);
        assert_eq!(fp_imm8(f64::INFINITY), None);
        assert_eq!(fp_imm8(f64::NAN), None);
    }
}
