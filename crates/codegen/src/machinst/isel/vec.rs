//! What every ISA's vector selection shares: the lanes of a 128-bit vector type
//! ([`VecLanes`]), 128-bit constants ([`V128`]), the lane arithmetic of constants (splats,
//! one-lane masks), and the Rust bodies of the vector externs declared in
//! `prelude_vec.rules` ([`isel_vec_externs`]).
//!
//! # Contract
//!
//! The extractors only read (a 128-bit vector type or value by its lanes); the constant
//! constructors are pure arithmetic on their arguments; `refuse` stores a typed error in
//! `IselCtx::error` (which the driver returns instead of "unsupported") and fails. Nothing
//! here merges a producer or emits an instruction. Cost: O(1) per call (a 16-lane loop at
//! most).

use kestrel_ir::Type;

/// The lanes of a 128-bit vector type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VecLanes {
    I8x16,
    I16x8,
    I32x4,
    I64x2,
    F32x4,
    F64x2,
}

/// 128 bits, lane 0 in the low bits of `lo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V128 {
    pub lo: u64,
    pub hi: u64,
}

impl V128 {
    /// The 128 bits `bits`.
    pub fn new(bits: u128) -> V128 {
        V128 {
            lo: bits as u64,
            hi: (bits >> 64) as u64,
        }
    }

    /// The 128 bits.
    pub fn bits(self) -> u128 {
        u128::from(self.lo) | u128::from(self.hi) << 64
    }
}

/// The lanes of a 128-bit vector type (`None` for any other type).
pub fn lanes_of(ty: Type) -> Option<VecLanes> {
    (ty.bits() == 128).then(|| lanes_by_lane_type(ty)).flatten()
}

/// The lanes of the 128-bit vector type with the lanes of vector type `ty`, whatever its
/// width (`None` for a scalar or an `f16`/`f128` lane).
pub fn lanes_by_lane_type(ty: Type) -> Option<VecLanes> {
    if !ty.is_vector() {
        return None;
    }
    Some(match ty.lane_type() {
        Type::I8 => VecLanes::I8x16,
        Type::I16 => VecLanes::I16x8,
        Type::I32 => VecLanes::I32x4,
        Type::I64 => VecLanes::I64x2,
        Type::F32 => VecLanes::F32x4,
        Type::F64 => VecLanes::F64x2,
        _ => return None,
    })
}

/// The type an error about `i` names: its first argument's, if a vector, else its result's.
pub fn inst_type(f: &kestrel_ir::Function, i: kestrel_ir::Inst) -> Type {
    let arg = f.dfg.inst_args(i).next().map(|v| f.dfg.value_type(v));
    match arg {
        Some(ty) if ty.is_vector() => ty,
        _ => f
            .dfg
            .first_result(i)
            .map_or(Type::INVALID, |v| f.dfg.value_type(v)),
    }
}

/// Bits per lane.
pub fn lane_bits(l: VecLanes) -> u32 {
    match l {
        VecLanes::I8x16 => 8,
        VecLanes::I16x8 => 16,
        VecLanes::I32x4 | VecLanes::F32x4 => 32,
        VecLanes::I64x2 | VecLanes::F64x2 => 64,
    }
}

/// Every lane of `l` set to the low lane bits of `x`.
pub fn splat(l: VecLanes, x: u64) -> V128 {
    let bits = lane_bits(l);
    let lane = u128::from(x) & ((1u128 << bits) - 1);
    let v = (0..128 / bits).fold(0u128, |acc, i| acc | lane << (i * bits));
    V128::new(v)
}

/// All ones in lane `lane` (modulo the lane count) of `l`, zeros elsewhere.
pub fn lane_mask(l: VecLanes, lane: u64) -> V128 {
    let bits = lane_bits(l);
    let ones = (1u128 << bits) - 1;
    V128::new(ones << (bits * (lane as u32 % (128 / bits))))
}

/// The bodies of the externs `prelude_vec.rules` declares, expanded inside an ISA's
/// `impl generated::Context for IselCtx` (see the module contract).
/// `$lanes_of` is the ISA's answer to "which vector types does one register hold, with
/// which lanes" ([`lanes_of`] for 128-bit vectors only).
macro_rules! isel_vec_externs {
    ($lanes_of:path) => {
        // Every opcode with a vector rule asks these before its scalar rules (the vector
        // rules outrank them), so a scalar type is answered inline; only a vector goes on
        // to `$lanes_of`.
        #[inline]
        fn vec_ty(&mut self, ty: Type) -> Option<$crate::machinst::isel::vec::VecLanes> {
            if !ty.is_vector() {
                return None;
            }
            $lanes_of(ty)
        }

        #[inline]
        fn vec_value(&mut self, v: Value) -> Option<$crate::machinst::isel::vec::VecLanes> {
            self.vec_ty(self.lower.value_type(v))
        }

        fn lane_of(&mut self, ty: Type) -> Type {
            ty.lane_type()
        }

        fn refuse(&mut self, i: IrInst) -> Option<Out> {
            let f = self.lower.f;
            let ty = $crate::machinst::isel::vec::inst_type(f, i);
            self.error = Some($crate::machinst::CodegenError::Unsupported {
                opcode: Some(f.dfg.inst(i).opcode()),
                ty: Some(ty),
                what: format!(
                    "{i} in {}: this bit cast of a vector (its types or its lane order) is not lowered here:",
                    f.name
                ),
            });
            None
        }

        fn constant_bits(&mut self, c: kestrel_ir::Constant) -> $crate::machinst::isel::vec::V128 {
            $crate::machinst::isel::vec::V128::new(self.lower.f.dfg.constants[c].bits)
        }

        fn immediate_bits(&mut self, k: kestrel_ir::Immediate) -> $crate::machinst::isel::vec::V128 {
            $crate::machinst::isel::vec::V128::new(self.lower.f.dfg.immediates[k])
        }

        fn sign_bits(
            &mut self,
            l: $crate::machinst::isel::vec::VecLanes,
        ) -> $crate::machinst::isel::vec::V128 {
            let bits = $crate::machinst::isel::vec::lane_bits(l);
            $crate::machinst::isel::vec::splat(l, 1 << (bits - 1))
        }

        fn vec_inst(&mut self, i: VecInst) -> Inst {
            i.into()
        }

        fn lane_imm(&mut self, lane: u64) -> u8 {
            // The verifier keeps lanes below the lane count (at most 16).
            lane as u8
        }

        fn count_mask(&mut self, l: $crate::machinst::isel::vec::VecLanes) -> i64 {
            i64::from($crate::machinst::isel::vec::lane_bits(l) - 1)
        }
    };
}
pub(crate) use isel_vec_externs;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splats_repeat_the_lane_bits() {
        assert_eq!(
            splat(VecLanes::I8x16, 0x1ff).bits(),
            u128::from_le_bytes([0xff; 16])
        );
        assert_eq!(
            splat(VecLanes::I32x4, 0x8000_0000).bits(),
            0x8000_0000_8000_0000_8000_0000_8000_0000
        );
        assert_eq!(splat(VecLanes::F64x2, 7).bits(), 7 | 7 << 64);
    }

    #[test]
    fn lane_masks_cover_one_lane() {
        assert_eq!(lane_mask(VecLanes::I16x8, 1).bits(), 0xffff_0000);
        assert_eq!(
            lane_mask(VecLanes::F64x2, 1).bits(),
            u128::from(u64::MAX) << 64
        );
    }

    #[test]
    fn only_128_bit_vectors_have_lanes() {
        assert_eq!(lanes_of(Type::I32X4), Some(VecLanes::I32x4));
        assert_eq!(lanes_of(Type::I64), None);
    }
}
