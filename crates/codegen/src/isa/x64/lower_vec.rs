//! The externs of the vector rules (`lower_vec.rules`): what they read of vector types,
//! constants and CPU features, the constants they compute (lane splats, sign masks,
//! `pshufb` controls), and the two failing constructors that record why (`lacks`,
//! `refuse`).
//!
//! # Contract
//!
//! `vec_externs!()` expands inside the x86-64 `impl generated::Context for IselCtx`. The
//! extractors only read (a 128-bit vector type or value by its lanes, the features); the
//! constant constructors are pure arithmetic on their arguments; `lacks` and `refuse` store
//! a typed error in `IselCtx::error` (which the driver returns instead of "unsupported")
//! and fail. Nothing here merges a producer or emits an instruction. Cost: O(1) per call
//! (a 16-lane loop at most).

use kestrel_ir::Type;

use super::inst::V128;
use super::lower::generated::VecLanes;

/// The lanes of a 128-bit vector type; a 64-bit vector type (which lives in the low half of
/// a register) answers as the 128-bit type of its lanes.
pub(super) fn lanes_of(ty: Type) -> Option<VecLanes> {
    if !ty.is_vector() || !matches!(ty.bits(), 64 | 128) {
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
pub(super) fn inst_type(f: &kestrel_ir::Function, i: kestrel_ir::Inst) -> Type {
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
pub(super) fn lane_bits(l: VecLanes) -> u32 {
    match l {
        VecLanes::I8x16 => 8,
        VecLanes::I16x8 => 16,
        VecLanes::I32x4 | VecLanes::F32x4 => 32,
        VecLanes::I64x2 | VecLanes::F64x2 => 64,
    }
}

/// Every lane of `l` set to the low lane bits of `x`.
pub(super) fn splat(l: VecLanes, x: u64) -> V128 {
    let bits = lane_bits(l);
    let lane = u128::from(x) & ((1u128 << bits) - 1);
    let v = (0..128 / bits).fold(0u128, |acc, i| acc | lane << (i * bits));
    V128::new(v)
}

/// The `pshufb` control taking byte `m` of the shuffle mask from the operand whose bytes
/// are `base..base + 16` (index `m - base`), zero (bit 7) elsewhere.
pub(super) fn pick(mask: V128, base: u8) -> V128 {
    let bytes = mask.bits().to_le_bytes();
    let control = bytes.map(|m| {
        if (base..base + 16).contains(&m) {
            m - base
        } else {
            0x80
        }
    });
    V128::new(u128::from_le_bytes(control))
}

/// The vector externs (see the module contract).
macro_rules! vec_externs {
    () => {
        // Every opcode with a vector rule asks these before its scalar rules (the vector
        // rules outrank them), so a scalar type is answered inline; only a vector goes on
        // to `lanes_of`.
        #[inline]
        fn vec_ty(&mut self, ty: Type) -> Option<generated::VecLanes> {
            if !ty.is_vector() {
                return None;
            }
            super::lower_vec::lanes_of(ty)
        }

        #[inline]
        fn vec_value(&mut self, v: Value) -> Option<generated::VecLanes> {
            self.vec_ty(self.lower.value_type(v))
        }

        fn vec64_ty(&mut self, ty: Type) -> Option<generated::VecLanes> {
            (ty.bits() == 64).then(|| self.vec_ty(ty)).flatten()
        }

        fn lane_of(&mut self, ty: Type) -> Type {
            ty.lane_type()
        }

        fn has_ssse3(&mut self, _: IrInst) -> Option<()> {
            self.features.ssse3.then_some(())
        }

        fn has_sse41(&mut self, _: IrInst) -> Option<()> {
            self.features.sse41.then_some(())
        }

        fn has_fma(&mut self, _: IrInst) -> Option<()> {
            self.features.fma.then_some(())
        }

        fn lane_fma(&mut self, ty: Type, a: VReg, b: VReg, c: VReg) -> Option<VReg> {
            let name = if ty == Type::F32 { "FmaF32" } else { "FmaF64" };
            let sig = super::abi::libcall_signature(&[ty; 3], &[ty]);
            let dest = CallDest::Direct(std::sync::Arc::new(kestrel_ir::FunctionName::Named(
                name.into(),
            )));
            match super::abi::gen_call_regs(self.lower, dest, &sig, &[a, b, c]) {
                Ok(regs) => Some(regs[0]),
                Err(e) => {
                    self.error = Some(e);
                    None
                }
            }
        }

        fn lacks(&mut self, i: IrInst, what: generated::VecFeature) -> Option<Out> {
            let name = match what {
                generated::VecFeature::Ssse3 => "SSSE3",
                generated::VecFeature::Sse41 => "SSE4.1",
            };
            let ty = super::lower_vec::inst_type(self.lower.f, i);
            self.error = Some(self.missing_feature(i, ty, name));
            None
        }

        fn refuse(&mut self, i: IrInst) -> Option<Out> {
            let f = self.lower.f;
            let ty = super::lower_vec::inst_type(f, i);
            self.error = Some(crate::machinst::CodegenError::Unsupported {
                opcode: Some(f.dfg.inst(i).opcode()),
                ty: Some(ty),
                what: format!(
                    "{i} in {}: only bit casts in little-endian lane order between vector types of one width, or between a 64-bit vector and a 64-bit scalar, are lowered:",
                    f.name
                ),
            });
            None
        }

        fn constant_bits(&mut self, c: kestrel_ir::Constant) -> V128 {
            V128::new(self.lower.f.dfg.constants[c].bits)
        }

        fn immediate_bits(&mut self, k: kestrel_ir::Immediate) -> V128 {
            V128::new(self.lower.f.dfg.immediates[k])
        }

        fn splat_bits(&mut self, l: generated::VecLanes, x: u64) -> V128 {
            super::lower_vec::splat(l, x)
        }

        fn sign_bits(&mut self, l: generated::VecLanes) -> V128 {
            let bits = super::lower_vec::lane_bits(l);
            super::lower_vec::splat(l, 1 << (bits - 1))
        }

        fn lane_mask(&mut self, l: generated::VecLanes, lane: u64) -> V128 {
            let bits = super::lower_vec::lane_bits(l);
            let ones = (1u128 << bits) - 1;
            V128::new(ones << (bits * (lane as u32 % (128 / bits))))
        }

        fn nibble_counts(&mut self) -> V128 {
            let counts: [u8; 16] = std::array::from_fn(|i| (i as u8).count_ones() as u8);
            V128::new(u128::from_le_bytes(counts))
        }

        fn pick_a(&mut self, mask: V128) -> V128 {
            super::lower_vec::pick(mask, 0)
        }

        fn pick_b(&mut self, mask: V128) -> V128 {
            super::lower_vec::pick(mask, 16)
        }

        fn lane_imm(&mut self, lane: u64) -> u8 {
            // The verifier keeps lanes below the lane count (at most 16).
            lane as u8
        }

        fn half_lane(&mut self, lane: u64) -> u8 {
            (lane / 2) as u8
        }

        fn odd_lane_shift(&mut self, lane: u64) -> u8 {
            8 * (lane & 1) as u8
        }

        fn quad_shuf(&mut self, lane: u64) -> u8 {
            if lane == 0 {
                0x44
            } else {
                0xee
            }
        }

        fn count_mask(&mut self, l: generated::VecLanes) -> i64 {
            i64::from(super::lower_vec::lane_bits(l) - 1)
        }

        fn vec_inst(&mut self, i: VecInst) -> Inst {
            i.into()
        }
    };
}
pub(super) use vec_externs;

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
    fn pshufb_controls_split_a_shuffle_mask() {
        let mask: [u8; 16] = [0, 17, 15, 16, 31, 32, 255, 3, 1, 2, 3, 4, 5, 6, 7, 8];
        let m = V128::new(u128::from_le_bytes(mask));
        let a = pick(m, 0).bits().to_le_bytes();
        let b = pick(m, 16).bits().to_le_bytes();
        assert_eq!(a[..8], [0, 0x80, 15, 0x80, 0x80, 0x80, 0x80, 3]);
        assert_eq!(b[..8], [0x80, 1, 0x80, 0, 15, 0x80, 0x80, 0x80]);
    }
}
