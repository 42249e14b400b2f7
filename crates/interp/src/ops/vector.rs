//! Vector semantics: a vector of `n` lanes of `w` bits lives in one slot, lane `i` in bits
//! `i*w .. (i+1)*w` (CLIF's lane order, which is also its little-endian memory order), and
//! the bits above the vector's width are zero.
//!
//! Contract. [`eval_vector`] covers the pure instructions whose result or first operand is a
//! vector. Lane-wise opcodes run the scalar semantics ([`eval_pure`]) on each lane with the
//! lane types, so a lane behaves exactly as the scalar of its type (NaN policy included);
//! shifts and rotates take one scalar amount for all lanes; `icmp`/`fcmp` produce lane masks
//! (all ones for true). The vector-only opcodes (lane access, shuffles, widening, narrowing,
//! saturating arithmetic, …) are here. `shuffle` and `vconst` read the function's pools, so
//! the interpreter runs them with [`shuffle`] and the constant's bits. Requires operands that
//! pass the verifier (lane indices in range). Cost: O(lanes), no allocation.

use kestrel_ir::{InstructionData as D, Opcode, Type};

use super::{eval_pure, mask, to_signed, Evaluated, Trap};

/// Lane `i` of `x`, `w` bits wide.
#[inline]
pub fn lane(x: u128, i: u32, w: u32) -> u128 {
    (x >> (i * w)) & mask(w)
}

/// `x` with lane `i` replaced by `v` (already `w` bits).
#[inline]
pub fn with_lane(x: u128, i: u32, w: u32, v: u128) -> u128 {
    let m = mask(w) << (i * w);
    (x & !m) | (v << (i * w))
}

/// Build a vector of `n` lanes of `w` bits from `f(i)`.
#[inline]
fn build(n: u32, w: u32, mut f: impl FnMut(u32) -> u128) -> u128 {
    (0..n).fold(0, |acc, i| acc | ((f(i) & mask(w)) << (i * w)))
}

/// `shuffle a, b, mask`: lane `i` of the result is lane `mask[i]` of the 32 lanes of `a`
/// then `b` (indices are in range after verification; larger ones give 0).
pub fn shuffle(a: u128, b: u128, lanes: u128) -> u128 {
    build(16, 8, |i| {
        let m = lane(lanes, i, 8) as u32;
        match m {
            0..=15 => lane(a, m, 8),
            16..=31 => lane(b, m - 16, 8),
            _ => 0,
        }
    })
}

/// `bitcast` between types of the same width. With big-endian lane order, lane 0 is the most
/// significant, so the lanes are reversed on both sides of the reinterpretation.
pub fn bitcast_lanes(x: u128, from: Type, to: Type, big: bool) -> u128 {
    if !big {
        return x;
    }
    let reverse = |v: u128, ty: Type| {
        let (n, w) = (ty.lane_count(), ty.lane_bits());
        build(n, w, |i| lane(v, n - 1 - i, w))
    };
    reverse(reverse(x, from), to)
}

fn signed_clamp(v: i128, w: u32) -> u128 {
    let max = (mask(w) >> 1) as i128;
    (v.clamp(-max - 1, max) as u128) & mask(w)
}

fn unsigned_clamp(v: i128, w: u32) -> u128 {
    v.clamp(0, mask(w) as i128) as u128
}

/// Evaluate a pure instruction with a vector result or a vector first operand. `ty` is the
/// result type, `in_ty` the first operand's. `None` when not covered.
pub fn eval_vector(data: &D, ty: Type, in_ty: Type, x: &[u128]) -> Option<Result<Evaluated, Trap>> {
    use Evaluated::One;
    let op = data.opcode();
    let one = |r: u128| Some(Ok(One(r)));
    let (n, w) = (ty.lane_count(), ty.lane_bits());
    let (in_n, in_w) = (in_ty.lane_count(), in_ty.lane_bits());
    match *data {
        D::LoadNoOffset { flags, .. } if op == Opcode::Bitcast => {
            let big = flags.endianness == Some(kestrel_ir::immediates::Endianness::Big);
            return one(bitcast_lanes(x[0], in_ty, ty, big));
        }
        D::BinaryImm8 { imm, .. } => return one(lane(x[0], imm.into(), in_w)),
        D::TernaryImm8 { imm, .. } => return one(with_lane(x[0], imm.into(), w, x[1])),
        _ => {}
    }
    match op {
        Opcode::Splat => one(build(n, w, |_| x[0])),
        Opcode::ScalarToVector => one(x[0] & mask(w)),
        Opcode::VanyTrue => one(u128::from((0..in_n).any(|i| lane(x[0], i, in_w) != 0))),
        Opcode::VallTrue => one(u128::from((0..in_n).all(|i| lane(x[0], i, in_w) != 0))),
        Opcode::VhighBits => {
            let bits = (0..in_n).fold(0u128, |acc, i| {
                acc | ((lane(x[0], i, in_w) >> (in_w - 1)) << i)
            });
            one(bits & mask(ty.bits().max(8)))
        }
        Opcode::Select | Opcode::SelectSpectreGuard => one(if x[0] != 0 { x[1] } else { x[2] }),
        Opcode::Bitselect => one((x[0] & x[1]) | (!x[0] & x[2] & mask(ty.bits()))),
        Opcode::Band | Opcode::Bor | Opcode::Bxor | Opcode::BandNot => lanewise(data, ty, in_ty, x),
        Opcode::Swizzle => one(build(16, 8, |i| {
            let m = lane(x[1], i, 8) as u32;
            if m < 16 {
                lane(x[0], m, 8)
            } else {
                0
            }
        })),
        Opcode::SwidenLow | Opcode::SwidenHigh | Opcode::UwidenLow | Opcode::UwidenHigh => {
            let from = if matches!(op, Opcode::SwidenHigh | Opcode::UwidenHigh) {
                n
            } else {
                0
            };
            let signed = matches!(op, Opcode::SwidenLow | Opcode::SwidenHigh);
            one(build(n, w, |i| {
                let v = lane(x[0], from + i, in_w);
                if signed {
                    to_signed(v, in_w) as u128
                } else {
                    v
                }
            }))
        }
        Opcode::Snarrow | Opcode::Unarrow | Opcode::Uunarrow => {
            let half = in_n;
            one(build(n, w, |i| {
                let src = if i < half { x[0] } else { x[1] };
                let v = lane(src, i % half, in_w);
                match op {
                    Opcode::Snarrow => signed_clamp(to_signed(v, in_w), w),
                    Opcode::Unarrow => unsigned_clamp(to_signed(v, in_w), w),
                    _ => v.min(mask(w)),
                }
            }))
        }
        Opcode::IaddPairwise => {
            let half = n / 2;
            one(build(n, w, |i| {
                let src = if i < half { x[0] } else { x[1] };
                let j = 2 * (i % half);
                lane(src, j, w).wrapping_add(lane(src, j + 1, w))
            }))
        }
        Opcode::FvpromoteLow => one(build(2, 64, |i| super::fpromote(lane(x[0], i, 32)))),
        Opcode::Fvdemote => one(build(4, 32, |i| {
            if i < 2 {
                super::fdemote(lane(x[0], i, 64))
            } else {
                0
            }
        })),
        Opcode::UaddSat | Opcode::SaddSat | Opcode::UsubSat | Opcode::SsubSat => {
            one(build(n, w, |i| {
                let (a, b) = (lane(x[0], i, w), lane(x[1], i, w));
                let (sa, sb) = (to_signed(a, w), to_signed(b, w));
                match op {
                    Opcode::UaddSat => unsigned_clamp(a as i128 + b as i128, w),
                    Opcode::UsubSat => unsigned_clamp(a as i128 - b as i128, w),
                    Opcode::SaddSat => signed_clamp(sa + sb, w),
                    _ => signed_clamp(sa - sb, w),
                }
            }))
        }
        Opcode::AvgRound => one(build(n, w, |i| {
            (lane(x[0], i, w) + lane(x[1], i, w) + 1) >> 1
        })),
        Opcode::SqmulRoundSat => one(build(n, w, |i| {
            let (a, b) = (
                to_signed(lane(x[0], i, w), w),
                to_signed(lane(x[1], i, w), w),
            );
            signed_clamp((a * b + (1 << (w - 2))) >> (w - 1), w)
        })),
        Opcode::Icmp | Opcode::Fcmp => {
            let r = lanewise(data, ty, in_ty, x)?;
            let Ok(One(bits)) = r else { return Some(r) };
            // Scalar predicates are 0 or 1 per lane; a lane mask is all ones.
            one(build(
                n,
                w,
                |i| {
                    if lane(bits, i, w) != 0 {
                        mask(w)
                    } else {
                        0
                    }
                },
            ))
        }
        _ => lanewise(data, ty, in_ty, x),
    }
}

/// The scalar semantics on each lane. Shift and rotate amounts are one scalar for all lanes.
fn lanewise(data: &D, ty: Type, in_ty: Type, x: &[u128]) -> Option<Result<Evaluated, Trap>> {
    let op = data.opcode();
    let (n, w) = (ty.lane_count(), ty.lane_bits());
    let in_w = in_ty.lane_bits();
    if !ty.is_vector() || !in_ty.is_vector() || in_ty.lane_count() != n {
        return None;
    }
    let scalar_amount = matches!(
        op,
        Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr
    );
    let mut out = 0u128;
    for i in 0..n {
        let mut lanes = [0u128; 3];
        // Every other operand has the first operand's type (the verifier checked it).
        for (k, (slot, &v)) in lanes.iter_mut().zip(x).enumerate() {
            *slot = if k == 1 && scalar_amount {
                v
            } else {
                lane(v, i, in_w)
            };
        }
        match eval_pure(data, ty.lane_type(), in_ty.lane_type(), &lanes[..x.len()])? {
            Ok(Evaluated::One(r)) => out |= (r & mask(w)) << (i * w),
            Ok(Evaluated::Two(..)) => return None,
            Err(t) => return Some(Err(t)),
        }
    }
    Some(Ok(Evaluated::One(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_little_endian() {
        let v = build(4, 32, |i| i as u128 + 1);
        assert_eq!(v, 1 | (2 << 32) | (3 << 64) | (4 << 96));
        assert_eq!(lane(v, 2, 32), 3);
        assert_eq!(lane(with_lane(v, 2, 32, 9), 2, 32), 9);
    }

    #[test]
    fn shuffle_picks_from_both_operands() {
        let a = build(16, 8, |i| i as u128);
        let b = build(16, 8, |i| 0x10 + i as u128);
        let m = build(16, 8, |i| 31 - i as u128);
        assert_eq!(shuffle(a, b, m), build(16, 8, |i| 0x1f - i as u128));
    }

    #[test]
    fn big_endian_bitcast_reverses_lanes() {
        let v = build(4, 32, |i| i as u128);
        let i64x2 = Type::I64X2;
        let little = bitcast_lanes(v, Type::I32X4, i64x2, false);
        assert_eq!(lane(little, 0, 64), 1 << 32);
        let big = bitcast_lanes(v, Type::I32X4, i64x2, true);
        assert_eq!(
            lane(big, 0, 64),
            1,
            "lane 0 (0) is the high half of the first i64"
        );
        assert_eq!(bitcast_lanes(big, i64x2, Type::I32X4, true), v);
    }

    #[test]
    fn saturation_bounds() {
        assert_eq!(signed_clamp(200, 8), 0x7f);
        assert_eq!(signed_clamp(-200, 8), 0x80);
        assert_eq!(unsigned_clamp(-1, 8), 0);
        assert_eq!(unsigned_clamp(300, 8), 0xff);
    }
}
