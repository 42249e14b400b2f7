//! CLIF numeric literals: parsing and printing of integer and float immediates.
//!
//! Accepted forms, as Cranelift's reader accepts them (the lexer hands over one token's text):
//!
//! - integers: decimal `42`, `-7`, `+5`; hexadecimal `0xff`, `-0x80`; `_` may separate digits
//!   (`0xffff_0000`, `1_000`). [`parse_int`] reads any value in `-2^127 ..= 2^128 - 1`;
//!   [`parse_int_bits`] then accepts a value for a type of `W` bits when it fits either the
//!   signed or the unsigned range of `W` bits, and returns it as zero-extended `W`-bit bits.
//! - floats (`f32`/`f64`, returned as raw bits), each with an optional `+`/`-` sign:
//!   hexadecimal `0x1.8p3`, `0x0.5`, `0x1.p0`, `0x1p-3` (exponent is a power of two, in
//!   decimal; the value must be representable exactly, as in Cranelift); `0.0`; `Inf`; `NaN`
//!   (the canonical quiet NaN); `NaN:0x…` (quiet NaN with that payload below the quiet bit);
//!   `sNaN:0x…` (signalling NaN, nonzero payload). As an extension over Cranelift, decimal
//!   floats `1.5`, `1e10`, `-1.5e-3` are accepted and correctly rounded to the target format.
//!
//! The printers produce Cranelift's output form, which the parsers read back bit-exactly:
//! [`format_f32`]/[`format_f64`] (`0x1.800000p3`, `0.0`, `-0x0.000002p-126`, `+Inf`,
//! `-NaN:0x1`, `+sNaN:0x1`) and [`format_imm64`]/[`format_uimm64`] (decimal below 10000, else
//! hex in groups of four digits).
//!
//! No input makes these functions panic; bad literals give a [`LiteralError`].

use thiserror::Error;

use crate::ieee::{Format, BINARY128, BINARY16, BINARY32, BINARY64};
use crate::types::Type;

/// What is wrong with a numeric literal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LiteralError {
    #[error("number has no digits")]
    NoDigits,
    #[error("invalid character {0:?} in number")]
    InvalidCharacter(char),
    #[error("integer literal is larger than 2^128 - 1")]
    IntegerTooLarge,
    #[error("negative integer literal is smaller than -2^127")]
    NegativeTooSmall,
    #[error("integer literal does not fit in {width} bits (signed or unsigned)")]
    OutOfRange { width: u32 },
    #[error("float literal has more than 32 hexadecimal digits")]
    TooManyDigits,
    #[error("float literal has more than one radix point")]
    MultipleRadixPoints,
    #[error("bad exponent in float literal (expected a decimal power of two after 'p')")]
    BadExponent,
    #[error("float literal has more significant bits than f{bits} can hold exactly")]
    Inexact { bits: u32 },
    #[error("float literal is too large for f{bits}")]
    MagnitudeTooLarge { bits: u32 },
    #[error("float literal is too small for f{bits}")]
    MagnitudeTooSmall { bits: u32 },
    #[error("invalid NaN payload (expected hexadecimal digits below the quiet bit)")]
    BadNanPayload,
    #[error("invalid sNaN payload (expected nonzero hexadecimal digits below the quiet bit)")]
    BadSignalingNanPayload,
    #[error("not a float literal (expected e.g. 0x1.8p3, 1.5, Inf, NaN or NaN:0x1)")]
    NotAFloat,
}

// ---------------------------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------------------------

/// A parsed integer literal: its sign and magnitude, before it is fitted to a type.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct IntLiteral {
    pub negative: bool,
    /// At most 2^127 when `negative`.
    pub magnitude: u128,
}

impl IntLiteral {
    /// The value as two's-complement bits modulo 2^128.
    pub fn wrapping_bits(self) -> u128 {
        if self.negative {
            self.magnitude.wrapping_neg()
        } else {
            self.magnitude
        }
    }

    /// The value as zero-extended `width`-bit bits, if it fits the signed or unsigned range.
    pub fn to_bits(self, width: u32) -> Result<u128, LiteralError> {
        let width_mask = if width >= 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        let fits = if self.negative {
            self.magnitude <= 1u128 << (width.clamp(1, 128) - 1)
        } else {
            self.magnitude <= width_mask
        };
        if fits {
            Ok(self.wrapping_bits() & width_mask)
        } else {
            Err(LiteralError::OutOfRange { width })
        }
    }
}

/// Parse a decimal or `0x` hexadecimal integer with optional sign and `_` separators.
pub fn parse_int(text: &str) -> Result<IntLiteral, LiteralError> {
    let (negative, unsigned) = split_sign(text);
    let (radix, digits) = match unsigned.strip_prefix("0x") {
        Some(hex) => (16, hex),
        None => (10, unsigned),
    };
    let mut magnitude: u128 = 0;
    let mut seen_digit = false;
    for ch in digits.chars() {
        if ch == '_' {
            continue;
        }
        let digit = ch
            .to_digit(radix)
            .ok_or(LiteralError::InvalidCharacter(ch))?;
        magnitude = magnitude
            .checked_mul(radix as u128)
            .and_then(|m| m.checked_add(digit as u128))
            .ok_or(LiteralError::IntegerTooLarge)?;
        seen_digit = true;
    }
    if !seen_digit {
        return Err(LiteralError::NoDigits);
    }
    if negative && magnitude > 1u128 << 127 {
        return Err(LiteralError::NegativeTooSmall);
    }
    Ok(IntLiteral {
        negative,
        magnitude,
    })
}

/// Parse an integer for a type of `width` bits (8..=128), giving its zero-extended bits.
pub fn parse_int_bits(text: &str, width: u32) -> Result<u128, LiteralError> {
    parse_int(text)?.to_bits(width)
}

/// Cranelift's `Imm64` form: decimal when below 10000 (so all negatives), else grouped hex.
pub fn format_imm64(value: i64) -> String {
    if value < 10_000 {
        value.to_string()
    } else {
        grouped_hex(value as u64)
    }
}

/// Cranelift's `Uimm64` form: decimal when below 10000, else grouped hex.
pub fn format_uimm64(value: u64) -> String {
    if value < 10_000 {
        value.to_string()
    } else {
        grouped_hex(value)
    }
}

/// `0x` then groups of four hex digits separated by `_`, e.g. `0x0001_ffff`.
fn grouped_hex(value: u64) -> String {
    let digits = format!("{value:x}");
    let padded = format!("{}{digits}", "0".repeat((4 - digits.len() % 4) % 4));
    let groups: Vec<&str> = padded
        .as_bytes()
        .chunks(4)
        .map(|chunk| std::str::from_utf8(chunk).unwrap_or_default())
        .collect();
    format!("0x{}", groups.join("_"))
}

fn split_sign(text: &str) -> (bool, &str) {
    if let Some(rest) = text.strip_prefix('-') {
        (true, rest)
    } else {
        (false, text.strip_prefix('+').unwrap_or(text))
    }
}

// ---------------------------------------------------------------------------------------------
// Floats
// ---------------------------------------------------------------------------------------------

/// Parse an `f16` literal into its IEEE bits. A decimal literal is read as an `f64` and
/// rounded to `f16` (hex literals are exact).
pub fn parse_f16(text: &str) -> Result<u16, LiteralError> {
    let parse_decimal = |s: &str| {
        let v = s.parse::<f64>().ok()?;
        Some(crate::ieee::f64_to_f16(v) as u128)
    };
    parse_float(text, BINARY16, parse_decimal).map(|bits| bits as u16)
}

/// Parse an `f32` literal into its IEEE bits.
pub fn parse_f32(text: &str) -> Result<u32, LiteralError> {
    let parse_decimal = |s: &str| s.parse::<f32>().ok().map(|v| v.to_bits() as u128);
    parse_float(text, BINARY32, parse_decimal).map(|bits| bits as u32)
}

/// Parse an `f64` literal into its IEEE bits.
pub fn parse_f64(text: &str) -> Result<u64, LiteralError> {
    parse_float(text, BINARY64, |s: &str| {
        s.parse::<f64>().ok().map(|v| v.to_bits() as u128)
    })
    .map(|bits| bits as u64)
}

/// Parse an `f128` literal into its IEEE bits. A decimal literal is read as an `f64` and
/// widened, so only decimals an `f64` holds exactly are exact (hex literals always are).
pub fn parse_f128(text: &str) -> Result<u128, LiteralError> {
    parse_float(text, BINARY128, |s: &str| {
        s.parse::<f64>()
            .ok()
            .map(|v| crate::ieee::convert(BINARY64, BINARY128, v.to_bits() as u128))
    })
}

fn parse_float(
    text: &str,
    format: Format,
    parse_decimal: impl Fn(&str) -> Option<u128>,
) -> Result<u128, LiteralError> {
    let (negative, body) = split_sign(text);
    let sign = if negative { format.sign_bit() } else { 0 };
    if let Some(hex) = body.strip_prefix("0x") {
        return parse_hex_float(hex, format).map(|magnitude| sign | magnitude);
    }
    if body == "Inf" {
        return Ok(sign | format.infinity());
    }
    if body == "NaN" {
        return Ok(sign | format.infinity() | format.quiet_bit());
    }
    if let Some(payload) = body.strip_prefix("NaN:0x") {
        return match parse_hex_payload(payload) {
            Some(p) if p < format.quiet_bit() => {
                Ok(sign | format.infinity() | format.quiet_bit() | p)
            }
            _ => Err(LiteralError::BadNanPayload),
        };
    }
    if let Some(payload) = body.strip_prefix("sNaN:0x") {
        return match parse_hex_payload(payload) {
            Some(p) if p != 0 && p < format.quiet_bit() => Ok(sign | format.infinity() | p),
            _ => Err(LiteralError::BadSignalingNanPayload),
        };
    }
    if !is_decimal_float(body) {
        return Err(LiteralError::NotAFloat);
    }
    // Rust's parser is correctly rounded and keeps the sign of zero; the body was checked to
    // be plain digits, so it cannot read `inf`/`nan` spellings here.
    let bits = parse_decimal(body).ok_or(LiteralError::NotAFloat)?;
    if bits == format.infinity() {
        return Err(LiteralError::MagnitudeTooLarge {
            bits: format.total_bits(),
        });
    }
    Ok(sign | bits)
}

/// Hex digits only (no sign, no separators), as a value that fits in 64 bits.
fn parse_hex_payload(text: &str) -> Option<u128> {
    if text.is_empty() {
        return None;
    }
    text.chars().try_fold(0u128, |acc, ch| {
        let digit = ch.to_digit(16)?;
        acc.checked_mul(16)?.checked_add(digit as u128)
    })
}

/// `digits [ '.' digits* ] [ ('e'|'E') ['+'|'-'] digits ]`.
fn is_decimal_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    let digits_from = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let after_int = digits_from(i);
    if after_int == i {
        return false;
    }
    i = after_int;
    if i < bytes.len() && bytes[i] == b'.' {
        i = digits_from(i + 1);
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            i += 1;
        }
        let after_exp = digits_from(i);
        if after_exp == i {
            return false;
        }
        i = after_exp;
    }
    i == bytes.len()
}

/// The magnitude bits of a hex float `H*[.H*][p±D]` (text after `0x`), which must be exact.
fn parse_hex_float(text: &str, format: Format) -> Result<u128, LiteralError> {
    let bits = format.total_bits();
    let (mantissa_text, exponent_text) = match text.split_once('p') {
        Some((m, e)) => (m, Some(e)),
        None => (text, None),
    };
    let mut exponent: i32 = match exponent_text {
        Some(e) => e
            .parse::<i16>()
            .map_err(|_| LiteralError::BadExponent)?
            .into(),
        None => 0,
    };

    let mut significand: u128 = 0;
    let mut digits = 0u32;
    let mut fraction_digits: Option<u32> = None;
    for ch in mantissa_text.chars() {
        if ch == '.' {
            if fraction_digits.is_some() {
                return Err(LiteralError::MultipleRadixPoints);
            }
            fraction_digits = Some(0);
            continue;
        }
        let digit = ch.to_digit(16).ok_or(LiteralError::InvalidCharacter(ch))?;
        digits += 1;
        if digits > 32 {
            return Err(LiteralError::TooManyDigits);
        }
        significand = (significand << 4) | digit as u128;
        if let Some(n) = fraction_digits.as_mut() {
            *n += 1;
        }
    }
    if digits == 0 {
        return Err(LiteralError::NoDigits);
    }
    if significand == 0 {
        return Ok(0);
    }
    exponent -= 4 * fraction_digits.unwrap_or(0) as i32;

    // Now value = significand * 2^exponent. Normalize to exactly `trailing_bits + 1` bits.
    let precision = format.trailing_bits + 1;
    let width = 128 - significand.leading_zeros();
    if width > precision {
        let excess = width - precision;
        if significand & ((1u128 << excess) - 1) != 0 {
            return Err(LiteralError::Inexact { bits });
        }
        significand >>= excess;
        exponent += excess as i32;
    } else {
        let shortfall = precision - width;
        significand <<= shortfall;
        exponent -= shortfall as i32;
    }

    // Biased exponent of the value 1.f * 2^(exponent + trailing_bits).
    let biased = exponent + format.trailing_bits as i32 + format.bias();
    if biased >= format.max_exponent_field() as i32 {
        return Err(LiteralError::MagnitudeTooLarge { bits });
    }
    if biased > 0 {
        let trailing = significand & format.trailing_mask();
        return Ok(((biased as u128) << format.trailing_bits) | trailing);
    }
    // Subnormal: the significand shifts right to exponent field 1, losing no set bits.
    let shift = (1 - biased) as u32;
    if shift > format.trailing_bits {
        return Err(LiteralError::MagnitudeTooSmall { bits });
    }
    if significand & ((1u128 << shift) - 1) != 0 {
        return Err(LiteralError::Inexact { bits });
    }
    Ok(significand >> shift)
}

/// Cranelift's text form of an `f16`.
pub fn format_f16(bits: u16) -> String {
    format_float(bits as u128, BINARY16)
}

/// Cranelift's text form of an `f32`.
pub fn format_f32(bits: u32) -> String {
    format_float(bits as u128, BINARY32)
}

/// Cranelift's text form of an `f64`.
pub fn format_f64(bits: u64) -> String {
    format_float(bits as u128, BINARY64)
}

/// Cranelift's text form of an `f128`.
pub fn format_f128(bits: u128) -> String {
    format_float(bits, BINARY128)
}

/// Normal numbers as `0x1.<hex>p<e>`, subnormals as `0x0.<hex>p<emin>` (the trailing
/// significand left-aligned in whole hex digits), zeros as `0.0`, and `Inf`/`NaN` forms with an
/// explicit sign.
fn format_float(bits: u128, format: Format) -> String {
    let negative = bits & format.sign_bit() != 0;
    let exponent_field = (bits >> format.trailing_bits) & format.max_exponent_field();
    let trailing = bits & format.trailing_mask();
    let hex_digits = format.trailing_bits.div_ceil(4);
    let aligned = trailing << (4 * hex_digits - format.trailing_bits);
    let width = hex_digits as usize;
    let minus = if negative { "-" } else { "" };
    let plus_minus = if negative { "-" } else { "+" };

    if exponent_field == 0 {
        if trailing == 0 {
            return format!("{minus}0.0");
        }
        let emin = 1 - format.bias();
        return format!("{minus}0x0.{aligned:0width$x}p{emin}");
    }
    if exponent_field == format.max_exponent_field() {
        if trailing == 0 {
            return format!("{plus_minus}Inf");
        }
        let payload = trailing & (format.quiet_bit() - 1);
        return if trailing & format.quiet_bit() == 0 {
            format!("{plus_minus}sNaN:0x{payload:x}")
        } else if payload == 0 {
            format!("{plus_minus}NaN")
        } else {
            format!("{plus_minus}NaN:0x{payload:x}")
        };
    }
    let exponent = exponent_field as i32 - format.bias();
    format!("{minus}0x1.{aligned:0width$x}p{exponent}")
}

// ---------------------------------------------------------------------------------------------
// Lanes and vectors
// ---------------------------------------------------------------------------------------------

/// Parse one lane (or scalar) literal of type `lane` into its bits (zero-extended).
pub fn parse_lane(text: &str, lane: Type) -> Result<u128, LiteralError> {
    match lane {
        Type::F16 => parse_f16(text).map(u128::from),
        Type::F32 => parse_f32(text).map(u128::from),
        Type::F64 => parse_f64(text).map(u128::from),
        Type::F128 => parse_f128(text),
        t => parse_int_bits(text, t.lane_bits()),
    }
}

/// The bits of a vector of type `ty` written as its lanes, lane 0 first (`[1 2 3 4]` without
/// the brackets, already split into words).
pub fn parse_vector_lanes<'a>(
    words: impl IntoIterator<Item = &'a str>,
    ty: Type,
) -> Result<u128, String> {
    let lane = ty.lane_type();
    let width = lane.lane_bits();
    let mut bits = 0u128;
    let mut count = 0u32;
    for word in words {
        if count == ty.lane_count() {
            return Err(format!(
                "too many lanes for {ty} (it has {})",
                ty.lane_count()
            ));
        }
        let x = parse_lane(word, lane).map_err(|e| format!("lane {count} `{word}`: {e}"))?;
        bits |= x << (count * width);
        count += 1;
    }
    if count != ty.lane_count() {
        return Err(format!(
            "{ty} needs {} lanes, but {count} are written",
            ty.lane_count()
        ));
    }
    Ok(bits)
}

/// The bits of a `0x…` literal holding `bytes` bytes (the most significant byte first, as
/// Cranelift writes constants).
pub fn parse_hex_bytes(text: &str, bytes: u32) -> Result<u128, String> {
    if !text.starts_with("0x") {
        return Err(format!("`{text}` is not a hex literal (0x…)"));
    }
    let value = parse_int(text).map_err(|e| format!("`{text}`: {e}"))?;
    if bytes < 16 && value.magnitude >> (8 * bytes) != 0 {
        return Err(format!("`{text}` does not fit in {bytes} bytes"));
    }
    Ok(value.magnitude)
}

/// The number of bytes a `0x…` literal spells (two hex digits a byte, rounded up).
pub fn hex_byte_len(text: &str) -> u32 {
    let digits = text
        .trim_start_matches("0x")
        .bytes()
        .filter(u8::is_ascii_hexdigit)
        .count() as u32;
    digits.div_ceil(2)
}

/// One lane (or scalar) of type `lane` in run-line syntax: integers in signed decimal, floats
/// as CLIF float literals.
pub fn format_lane(bits: u128, lane: Type) -> String {
    match lane {
        Type::F16 => format_f16(bits as u16),
        Type::F32 => format_f32(bits as u32),
        Type::F64 => format_f64(bits as u64),
        Type::F128 => format_f128(bits),
        t => {
            let width = t.lane_bits();
            let unused = 128 - width;
            (((bits << unused) as i128) >> unused).to_string()
        }
    }
}

/// A vector of type `ty` as `[l0 l1 …]`.
pub fn format_vector(bits: u128, ty: Type) -> String {
    let width = ty.lane_bits();
    let mask = u128::MAX >> (128 - width);
    let lanes: Vec<String> = (0..ty.lane_count())
        .map(|i| format_lane((bits >> (i * width)) & mask, ty.lane_type()))
        .collect();
    format!("[{}]", lanes.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_and_lanes() {
        let ty = Type::I32X4;
        let bits = parse_vector_lanes("1 -1 0x10 0".split(' '), ty).unwrap();
        assert_eq!(bits, 1 | (0xffff_ffff << 32) | (0x10 << 64));
        assert_eq!(format_vector(bits, ty), "[1 -1 16 0]");
        assert!(parse_vector_lanes("1 2 3".split(' '), ty).is_err());
        assert!(parse_vector_lanes("1 2 3 4 5".split(' '), ty).is_err());
        let f = parse_vector_lanes(["0x1.0", "-0.0"], Type::F64X2).unwrap();
        assert_eq!(format_vector(f, Type::F64X2), "[0x1.0000000000000p0 -0.0]");
        assert_eq!(parse_hex_bytes("0x0102", 2), Ok(0x0102));
        assert!(parse_hex_bytes("0x010203", 2).is_err());
        assert_eq!(hex_byte_len("0x0000_0001"), 4);
        assert_eq!(parse_f16("0x1.554p-2"), Ok(0x3555));
        assert_eq!(format_f16(0x3c00), "0x1.000p0");
        assert_eq!(parse_f128("-0x1.p0"), Ok((0xbfff_u128) << 112));
        assert_eq!(
            format_f128(0x3fff_u128 << 112),
            "0x1.0000000000000000000000000000p0"
        );
    }

    #[test]
    fn integers_in_every_form() {
        let value = |t: &str| parse_int(t).map(IntLiteral::wrapping_bits);
        assert_eq!(value("0"), Ok(0));
        assert_eq!(value("-0"), Ok(0));
        assert_eq!(value("+5"), Ok(5));
        assert_eq!(value("1_000"), Ok(1000));
        assert_eq!(value("-1"), Ok(u128::MAX));
        assert_eq!(value("0xff_00"), Ok(0xff00));
        assert_eq!(value("0xABCdef"), Ok(0xabcdef));
        assert_eq!(value("-0x80"), Ok((-0x80i128) as u128));
        assert_eq!(
            value("0xffffffff_ffffffff_ffffffff_ffffffff"),
            Ok(u128::MAX)
        );
        assert_eq!(
            value("340282366920938463463374607431768211455"),
            Ok(u128::MAX)
        );
        assert_eq!(
            value("-170141183460469231731687303715884105728"),
            Ok(1 << 127)
        );
        assert_eq!(
            value("340282366920938463463374607431768211456"),
            Err(LiteralError::IntegerTooLarge)
        );
        assert_eq!(
            value("0x1_00000000_00000000_00000000_00000000"),
            Err(LiteralError::IntegerTooLarge)
        );
        assert_eq!(
            value("-170141183460469231731687303715884105729"),
            Err(LiteralError::NegativeTooSmall)
        );
        assert_eq!(value(""), Err(LiteralError::NoDigits));
        assert_eq!(value("-"), Err(LiteralError::NoDigits));
        assert_eq!(value("0x"), Err(LiteralError::NoDigits));
        assert_eq!(value("_"), Err(LiteralError::NoDigits));
        assert_eq!(value("12a"), Err(LiteralError::InvalidCharacter('a')));
        assert_eq!(value("0xfg"), Err(LiteralError::InvalidCharacter('g')));
        assert_eq!(value("--1"), Err(LiteralError::InvalidCharacter('-')));
        assert_eq!(value("1.0"), Err(LiteralError::InvalidCharacter('.')));
    }

    #[test]
    fn integers_fit_signed_or_unsigned_range() {
        assert_eq!(parse_int_bits("255", 8), Ok(0xff));
        assert_eq!(parse_int_bits("-1", 8), Ok(0xff));
        assert_eq!(parse_int_bits("-128", 8), Ok(0x80));
        assert_eq!(parse_int_bits("-0x80", 8), Ok(0x80));
        assert_eq!(
            parse_int_bits("256", 8),
            Err(LiteralError::OutOfRange { width: 8 })
        );
        assert_eq!(
            parse_int_bits("-129", 8),
            Err(LiteralError::OutOfRange { width: 8 })
        );
        assert_eq!(parse_int_bits("0xffff", 16), Ok(0xffff));
        assert_eq!(parse_int_bits("-2147483648", 32), Ok(0x8000_0000));
        assert_eq!(parse_int_bits("4294967295", 32), Ok(0xffff_ffff));
        assert_eq!(parse_int_bits("-1", 64), Ok(u64::MAX as u128));
        assert_eq!(
            parse_int_bits("18446744073709551616", 64),
            Err(LiteralError::OutOfRange { width: 64 })
        );
        assert_eq!(parse_int_bits("-1", 128), Ok(u128::MAX));
        assert_eq!(
            parse_int_bits("-0x8000_0000_0000_0000_0000_0000_0000_0000", 128),
            Ok(1 << 127)
        );
    }

    #[test]
    fn integer_printing_matches_cranelift() {
        assert_eq!(format_imm64(0), "0");
        assert_eq!(format_imm64(9999), "9999");
        assert_eq!(format_imm64(10000), "0x2710");
        assert_eq!(format_imm64(-10000), "-10000");
        assert_eq!(format_imm64(0xffff), "0xffff");
        assert_eq!(format_imm64(0x10000), "0x0001_0000");
        assert_eq!(format_uimm64(u64::MAX - 9998), "0xffff_ffff_ffff_d8f1");
        for v in [0u64, 9999, 10000, 0x1_0000, u64::MAX, 1 << 63] {
            assert_eq!(
                parse_int(&format_uimm64(v)).map(|l| l.wrapping_bits()),
                Ok(v as u128)
            );
        }
    }

    #[test]
    fn hex_floats() {
        assert_eq!(parse_f32("0x1.8p3"), Ok(12.0f32.to_bits()));
        assert_eq!(parse_f32("-0x1.0p-126"), Ok((-f32::MIN_POSITIVE).to_bits()));
        assert_eq!(parse_f32("0x0.5"), Ok(0.3125f32.to_bits()));
        assert_eq!(parse_f32("0x1.0"), Ok(1.0f32.to_bits()));
        assert_eq!(parse_f32("0x1.p0"), Ok(1.0f32.to_bits()));
        assert_eq!(parse_f32("0x1p-2"), Ok(0.25f32.to_bits()));
        assert_eq!(parse_f32("0x.8p1"), Ok(1.0f32.to_bits()));
        assert_eq!(parse_f32("0x1.fffffep127"), Ok(f32::MAX.to_bits()));
        assert_eq!(parse_f32("0x0.000002p-126"), Ok(1));
        assert_eq!(parse_f32("0x1.0p-149"), Ok(1));
        assert_eq!(parse_f64("0x1.0p-1074"), Ok(1));
        assert_eq!(parse_f64("0x1.fffffffffffffp1023"), Ok(f64::MAX.to_bits()));
        assert_eq!(parse_f64("-0x0.0"), Ok(1 << 63));
        assert_eq!(
            parse_f64("0x0000000000000000000000000000001.8p1"),
            Ok(3.0f64.to_bits())
        );
        let inexact32 = Err(LiteralError::Inexact { bits: 32 });
        assert_eq!(parse_f32("0x1.ffffff"), inexact32);
        assert_eq!(
            parse_f32("0x1.0p-150"),
            Err(LiteralError::MagnitudeTooSmall { bits: 32 })
        );
        assert_eq!(parse_f32("0x1.8p-149"), inexact32);
        assert_eq!(
            parse_f32("0x1.0p128"),
            Err(LiteralError::MagnitudeTooLarge { bits: 32 })
        );
        assert_eq!(
            parse_f64("0x1.0p1024"),
            Err(LiteralError::MagnitudeTooLarge { bits: 64 })
        );
        assert_eq!(
            parse_f64("0x3.fffffffffffff"),
            Err(LiteralError::Inexact { bits: 64 })
        );
        assert_eq!(parse_f32("0x1.0p"), Err(LiteralError::BadExponent));
        assert_eq!(parse_f32("0x1.0p40000"), Err(LiteralError::BadExponent));
        assert_eq!(parse_f32("0x1.0.0"), Err(LiteralError::MultipleRadixPoints));
        assert_eq!(parse_f32("0x."), Err(LiteralError::NoDigits));
        assert_eq!(parse_f32("0x1_0"), Err(LiteralError::InvalidCharacter('_')));
        let digits33 = format!("0x{}", "0".repeat(33));
        assert_eq!(parse_f64(&digits33), Err(LiteralError::TooManyDigits));
    }

    #[test]
    fn decimal_floats_are_correctly_rounded() {
        assert_eq!(parse_f32("1.5"), Ok(1.5f32.to_bits()));
        assert_eq!(parse_f32("-0.0"), Ok((-0.0f32).to_bits()));
        assert_eq!(parse_f32("0.0"), Ok(0));
        assert_eq!(parse_f64("1e10"), Ok(1e10f64.to_bits()));
        assert_eq!(parse_f64("-1.5e-3"), Ok((-1.5e-3f64).to_bits()));
        assert_eq!(parse_f64("2.5E+2"), Ok(250.0f64.to_bits()));
        assert_eq!(parse_f64("0.1"), Ok(0x3fb9_9999_9999_999a));
        // Parsed directly as f32: through f64 this literal would double-round to 1.0.
        assert_eq!(
            parse_f32("1.000000059604644775390625000001"),
            Ok(0x3f80_0001)
        );
        assert_eq!(parse_f32("1e-50"), Ok(0));
        assert_eq!(
            parse_f32("1e39"),
            Err(LiteralError::MagnitudeTooLarge { bits: 32 })
        );
        for bad in [
            "1.", ".5", "1e", "1e+", "inf", "nan", "infinity", "1.5f", "1_0.0", " 1.0", "",
        ] {
            let got = parse_f64(bad);
            if bad == "1." {
                assert_eq!(got, Ok(1.0f64.to_bits()));
            } else {
                assert_eq!(got, Err(LiteralError::NotAFloat), "{bad:?}");
            }
        }
    }

    #[test]
    fn special_values() {
        assert_eq!(parse_f32("Inf"), Ok(0x7f80_0000));
        assert_eq!(parse_f32("+Inf"), Ok(0x7f80_0000));
        assert_eq!(parse_f32("-Inf"), Ok(0xff80_0000));
        assert_eq!(parse_f32("NaN"), Ok(0x7fc0_0000));
        assert_eq!(parse_f32("+NaN"), Ok(0x7fc0_0000));
        assert_eq!(parse_f32("-NaN"), Ok(0xffc0_0000));
        assert_eq!(parse_f32("NaN:0x0"), Ok(0x7fc0_0000));
        assert_eq!(parse_f32("-NaN:0x3fffff"), Ok(0xffff_ffff));
        assert_eq!(parse_f32("+sNaN:0x1"), Ok(0x7f80_0001));
        assert_eq!(parse_f32("-sNaN:0x200001"), Ok(0xffa0_0001));
        assert_eq!(parse_f64("-NaN:0x7ffffffffffff"), Ok(u64::MAX));
        assert_eq!(parse_f64("sNaN:0x4000000000001"), Ok(0x7ff4_0000_0000_0001));
        assert_eq!(parse_f32("NaN:0x400000"), Err(LiteralError::BadNanPayload));
        assert_eq!(parse_f32("NaN:0x"), Err(LiteralError::BadNanPayload));
        assert_eq!(parse_f32("NaN:0x+1"), Err(LiteralError::BadNanPayload));
        assert_eq!(
            parse_f32("sNaN:0x0"),
            Err(LiteralError::BadSignalingNanPayload)
        );
        assert_eq!(
            parse_f64("sNaN:0x8000000000000"),
            Err(LiteralError::BadSignalingNanPayload)
        );
        assert_eq!(parse_f32("nan"), Err(LiteralError::NotAFloat));
        assert_eq!(parse_f32("Infinity"), Err(LiteralError::NotAFloat));
    }

    #[test]
    fn float_printing_matches_cranelift() {
        assert_eq!(format_f32(0), "0.0");
        assert_eq!(format_f32(0x8000_0000), "-0.0");
        assert_eq!(format_f32(12.0f32.to_bits()), "0x1.800000p3");
        assert_eq!(format_f32(1), "0x0.000002p-126");
        assert_eq!(format_f32(f32::MAX.to_bits()), "0x1.fffffep127");
        assert_eq!(format_f32(0x7f80_0000), "+Inf");
        assert_eq!(format_f32(0xff80_0000), "-Inf");
        assert_eq!(format_f32(0x7fc0_0000), "+NaN");
        assert_eq!(format_f32(0xffc0_0001), "-NaN:0x1");
        assert_eq!(format_f32(0x7f80_0001), "+sNaN:0x1");
        assert_eq!(format_f64(1.0f64.to_bits()), "0x1.0000000000000p0");
        assert_eq!(format_f64((-0.1f64).to_bits()), "-0x1.999999999999ap-4");
        assert_eq!(format_f64(1), "0x0.0000000000001p-1022");
        assert_eq!(format_f64(u64::MAX), "-NaN:0x7ffffffffffff");
    }

    /// A small deterministic generator (xorshift64*).
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn printed_floats_parse_back_to_the_same_bits() {
        let specials32 = [
            0,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7f80_0001,
            0x7fbf_ffff,
            0x7fc0_0000,
            0x7fff_ffff,
            0x3f80_0000,
        ];
        for bits in specials32 {
            for b in [bits, bits | 0x8000_0000] {
                assert_eq!(parse_f32(&format_f32(b)), Ok(b), "{}", format_f32(b));
            }
        }
        let specials64 = [
            0,
            1,
            0x000f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0x7ff0_0000_0000_0000,
            0x7ff0_0000_0000_0001,
            0x7ff8_0000_0000_0000,
            0x7fff_ffff_ffff_ffff,
        ];
        for bits in specials64 {
            for b in [bits, bits | 1 << 63] {
                assert_eq!(parse_f64(&format_f64(b)), Ok(b), "{}", format_f64(b));
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            let r = next(&mut state);
            let b32 = r as u32;
            assert_eq!(parse_f32(&format_f32(b32)), Ok(b32), "{}", format_f32(b32));
            assert_eq!(parse_f64(&format_f64(r)), Ok(r), "{}", format_f64(r));
        }
    }

    #[test]
    fn decimal_agrees_with_hex_for_exact_values() {
        let mut state = 0x1234_5678_9abc_def1;
        for _ in 0..10_000 {
            let v = f64::from_bits(next(&mut state));
            if v.is_finite() {
                let decimal = format!("{:e}", v.abs());
                let negated = if v.is_sign_negative() {
                    format!("-{decimal}")
                } else {
                    decimal
                };
                assert_eq!(parse_f64(&negated), Ok(v.to_bits()), "{negated}");
            }
        }
    }

    #[test]
    fn no_input_panics() {
        let alphabet: Vec<char> = "0123456789abcdefpxX.+-_:eENaIfsn \u{e9}\u{1F600}"
            .chars()
            .collect();
        let prefixes = ["", "0x", "-0x", "NaN:0x", "sNaN:0x", "+", "0x1.", "-NaN:0x"];
        let mut state = 0xdead_beef_cafe_f00d;
        for _ in 0..50_000 {
            let r = next(&mut state);
            let len = (r % 40) as usize;
            let mut text = prefixes[(r >> 8) as usize % prefixes.len()].to_string();
            for _ in 0..len {
                text.push(alphabet[next(&mut state) as usize % alphabet.len()]);
            }
            let _ = parse_f32(&text);
            let _ = parse_f64(&text);
            if let Ok(lit) = parse_int(&text) {
                for w in [0, 1, 8, 16, 32, 64, 128, 200] {
                    let _ = lit.to_bits(w);
                }
            }
        }
    }
}
