//! IEEE-754 binary formats as bit patterns: unpacking, correctly rounded packing, and the
//! conversions between `f16`, `f32`, `f64` and `f128` that neither Rust's stable float types
//! nor the host provide.
//!
//! Contract. Every function is total on bit patterns (any `u128`, only the format's low bits
//! read), rounds to nearest with ties to even, and returns the positive canonical quiet NaN for
//! a NaN result (the interpreter's NaN policy, see `kestrel-interp`'s `ops`). Cost: O(1).

/// An IEEE-754 binary format: exponent field width and trailing significand width.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Format {
    pub exponent_bits: u32,
    pub trailing_bits: u32,
}

pub const BINARY16: Format = Format {
    exponent_bits: 5,
    trailing_bits: 10,
};
pub const BINARY32: Format = Format {
    exponent_bits: 8,
    trailing_bits: 23,
};
pub const BINARY64: Format = Format {
    exponent_bits: 11,
    trailing_bits: 52,
};
pub const BINARY128: Format = Format {
    exponent_bits: 15,
    trailing_bits: 112,
};

/// A value taken apart.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Unpacked {
    Zero {
        negative: bool,
    },
    Inf {
        negative: bool,
    },
    NaN,
    /// `significand * 2^exponent`, `significand` nonzero.
    Finite {
        negative: bool,
        exponent: i32,
        significand: u128,
    },
}

impl Format {
    pub fn total_bits(self) -> u32 {
        1 + self.exponent_bits + self.trailing_bits
    }
    pub fn sign_bit(self) -> u128 {
        1 << (self.exponent_bits + self.trailing_bits)
    }
    pub fn max_exponent_field(self) -> u128 {
        (1 << self.exponent_bits) - 1
    }
    pub fn quiet_bit(self) -> u128 {
        1 << (self.trailing_bits - 1)
    }
    pub fn trailing_mask(self) -> u128 {
        (1 << self.trailing_bits) - 1
    }
    pub fn bias(self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }
    pub fn infinity(self) -> u128 {
        self.max_exponent_field() << self.trailing_bits
    }
    /// The positive canonical quiet NaN.
    pub fn canonical_nan(self) -> u128 {
        self.infinity() | self.quiet_bit()
    }

    pub fn is_nan(self, bits: u128) -> bool {
        let magnitude = bits & (self.sign_bit() - 1);
        magnitude > self.infinity()
    }

    /// Take `bits` apart.
    pub fn unpack(self, bits: u128) -> Unpacked {
        let negative = bits & self.sign_bit() != 0;
        let field = (bits >> self.trailing_bits) & self.max_exponent_field();
        let trailing = bits & self.trailing_mask();
        if field == self.max_exponent_field() {
            return if trailing == 0 {
                Unpacked::Inf { negative }
            } else {
                Unpacked::NaN
            };
        }
        if field == 0 && trailing == 0 {
            return Unpacked::Zero { negative };
        }
        let (significand, biased) = if field == 0 {
            (trailing, 1)
        } else {
            (trailing | (1 << self.trailing_bits), field as i32)
        };
        Unpacked::Finite {
            negative,
            exponent: biased - self.bias() - self.trailing_bits as i32,
            significand,
        }
    }

    /// The value `±significand * 2^exponent` (plus less than one unit of `significand` when
    /// `sticky`), rounded to this format.
    pub fn round_pack(
        self,
        negative: bool,
        exponent: i32,
        significand: u128,
        sticky: bool,
    ) -> u128 {
        let sign = if negative { self.sign_bit() } else { 0 };
        if significand == 0 {
            // Only a sticky remainder below: rounds to zero in every format used here.
            return sign;
        }
        // Normalize: the top bit at position 127.
        let lz = significand.leading_zeros();
        let sig = significand << lz;
        // The value's unbiased exponent (of its leading bit).
        let e = exponent as i64 + 127 - lz as i64;
        let precision = self.trailing_bits + 1;
        let biased = e + self.bias() as i64;
        let shift = if biased >= 1 {
            (128 - precision) as i64
        } else {
            (128 - precision) as i64 + (1 - biased)
        };
        if shift > 128 {
            return sign; // below half the smallest subnormal
        }
        let (kept, rem, half) = if shift == 128 {
            (0u128, sig, 1u128 << 127)
        } else {
            let shift = shift as u32;
            (
                sig >> shift,
                sig & ((1u128 << shift) - 1),
                1u128 << (shift - 1),
            )
        };
        let round_up = rem > half || (rem == half && (sticky || kept & 1 == 1));
        let mut m = kept + u128::from(round_up);
        if biased < 1 {
            // Subnormal; a carry into bit `trailing_bits` makes the smallest normal, which
            // the same encoding expresses.
            return sign | m;
        }
        let mut biased = biased as u128;
        if m == 1 << precision {
            m >>= 1;
            biased += 1;
        }
        if biased >= self.max_exponent_field() {
            return sign | self.infinity();
        }
        sign | (biased << self.trailing_bits) | (m & self.trailing_mask())
    }

    /// Pack an unpacked value (NaN: the canonical NaN).
    pub fn pack(self, value: Unpacked) -> u128 {
        let sign = |negative: bool| if negative { self.sign_bit() } else { 0 };
        match value {
            Unpacked::Zero { negative } => sign(negative),
            Unpacked::Inf { negative } => sign(negative) | self.infinity(),
            Unpacked::NaN => self.canonical_nan(),
            Unpacked::Finite {
                negative,
                exponent,
                significand,
            } => self.round_pack(negative, exponent, significand, false),
        }
    }
}

/// Convert `bits` of format `from` to format `to`, rounding (a NaN becomes the canonical NaN).
pub fn convert(from: Format, to: Format, bits: u128) -> u128 {
    to.pack(from.unpack(bits))
}

/// The `f64` holding an `f16` exactly.
pub fn f16_to_f64(bits: u16) -> f64 {
    f64::from_bits(convert(BINARY16, BINARY64, bits as u128) as u64)
}

/// The `f16` nearest an `f64`.
pub fn f64_to_f16(v: f64) -> u16 {
    convert(BINARY64, BINARY16, v.to_bits() as u128) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversions_round_to_nearest_even() {
        assert_eq!(f64_to_f16(1.0), 0x3c00);
        assert_eq!(f64_to_f16(-2.0), 0xc000);
        assert_eq!(f64_to_f16(65504.0), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00, "rounds up to infinity");
        assert_eq!(f64_to_f16(2f64.powi(-24)), 0x0001, "smallest subnormal");
        assert_eq!(
            f64_to_f16(2f64.powi(-25)),
            0x0000,
            "a tie rounds to even (zero)"
        );
        assert_eq!(f64_to_f16(1.5 * 2f64.powi(-25)), 0x0001);
        // 1 + 2^-11 is halfway between 1 and the next f16: ties to even.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(f64_to_f16(f64::NAN), 0x7e00);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0xfc00), f64::NEG_INFINITY);
        for bits in [0x3c00u16, 0x0001, 0x03ff, 0x7bff, 0x8000, 0x1234] {
            assert_eq!(f64_to_f16(f16_to_f64(bits)), bits);
        }
    }

    #[test]
    fn f128_conversions() {
        let one = 0x3fff_u128 << 112;
        assert_eq!(convert(BINARY64, BINARY128, 1f64.to_bits() as u128), one);
        assert_eq!(convert(BINARY128, BINARY64, one), 1f64.to_bits() as u128);
        // The smallest f64 subnormal is a normal f128.
        let tiny = convert(BINARY64, BINARY128, 1);
        assert_eq!(convert(BINARY128, BINARY64, tiny), 1);
        // 1 + 2^-60 rounds to 1 in f64.
        assert_eq!(
            convert(BINARY128, BINARY64, one | (1 << 52)),
            1f64.to_bits() as u128
        );
        assert!(BINARY128.is_nan(BINARY128.canonical_nan()));
    }
}
