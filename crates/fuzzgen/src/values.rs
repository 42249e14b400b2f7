//! Interesting values: edge integers, special floats, NaNs with payloads, subnormals, and
//! random bits. Used for constants in the code and for the entry function's arguments.

use arbitrary::Unstructured;
use kestrel_interp::DataValue;
use kestrel_ir::Type;

use crate::draw::Draw;

/// The canonical quiet NaNs (rule nan-canon), as the interpreter produces them.
pub(crate) const CANON_NAN_F32: u32 = 0x7fc0_0000;
pub(crate) const CANON_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

fn mask(bits: u32) -> u128 {
    if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// An integer of `bits` bits (zero-extended).
pub(crate) fn int_bits(u: &mut Unstructured, bits: u32) -> u128 {
    let min = 1u128 << (bits - 1);
    let k = u.below(bits as usize) as u32;
    let random = (u.bits64() as u128) | ((u.bits64() as u128) << 64);
    let v = match u.below(12) {
        0 => 0,
        1 => 1,
        2 => u128::MAX,
        3 => min,
        4 => min - 1,
        5 => 1u128 << k,
        6 => (1u128 << k) - 1,
        7 => u.below(17) as u128,
        8 => (u.below(17) as u128).wrapping_neg(),
        9 => (1u128 << k).wrapping_neg(),
        _ => random,
    };
    v & mask(bits)
}

/// An `i64` immediate for `iconst` of `ty`, zero-extended from the type's width (the form
/// the parser produces, so printed text parses back to the same immediate).
pub(crate) fn iconst_imm(u: &mut Unstructured, ty: Type) -> i64 {
    int_bits(u, ty.bits()) as u64 as i64
}

/// Bits of a float with `exp_bits` exponent and `man_bits` mantissa bits.
fn float_bits(u: &mut Unstructured, exp_bits: u32, man_bits: u32) -> u64 {
    let total = 1 + exp_bits + man_bits;
    let sign = 1u64 << (total - 1);
    let exp_all = ((1u64 << exp_bits) - 1) << man_bits;
    let bias = (1u64 << (exp_bits - 1)) - 1;
    let man_mask = (1u64 << man_bits) - 1;
    let quiet = 1u64 << (man_bits - 1);
    let random = u.bits64();
    // A power of two 2^e as bits; e in the normal range.
    let pow2 = |e: i64| ((bias as i64 + e) as u64) << man_bits;
    let neg = if u.chance(40) { sign } else { 0 };
    let v = match u.below(16) {
        0 => 0,
        1 => pow2(0),
        2 => pow2(-1),
        3 => exp_all,
        4 => exp_all | quiet,
        5 => exp_all | quiet | (random & man_mask),
        6 => exp_all | ((random & man_mask) >> 1).max(1),
        7 => 1,
        8 => random & man_mask,
        9 => exp_all - 1,
        10 => pow2(1 - bias as i64),
        // Conversion limits: 2^(8,16,31,32,63,64,127).
        11 => pow2(
            u.pick(&[7, 8, 15, 16, 31, 32, 63, 64, 127][..])
                .min(bias as i64),
        ),
        12 => {
            // A small integer value.
            let n = u.range(1, 100) as u64;
            let e = 63 - n.leading_zeros() as u64;
            ((bias + e) << man_bits) | ((n << man_bits >> e) & man_mask)
        }
        13 => pow2(u.range(0, 2 * bias as usize) as i64 - bias as i64 + 1),
        _ => random,
    };
    (v | neg) & ((1u64 << (total - 1)) | ((1u64 << (total - 1)) - 1))
}

pub(crate) fn f32_bits(u: &mut Unstructured) -> u32 {
    float_bits(u, 8, 23) as u32
}

pub(crate) fn f64_bits(u: &mut Unstructured) -> u64 {
    float_bits(u, 11, 52)
}

/// An interesting value of `ty`.
pub(crate) fn data_value(u: &mut Unstructured, ty: Type) -> DataValue {
    match ty {
        Type::F32 => DataValue::F32(f32_bits(u)),
        Type::F64 => DataValue::F64(f64_bits(u)),
        _ => DataValue::from_slot(ty, int_bits(u, ty.bits())).expect("a scalar type"),
    }
}
