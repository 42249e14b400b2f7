//! The x86-64 externs of the vector rules (`lower_vec.rules`; the shared ones are
//! `machinst::isel::vec`'s): what they read of CPU features, the constants they compute
//! (`pshufb` controls, nibble counts, lane shuffles), and the failing constructor that
//! records a missing feature (`lacks`).
//!
//! # Contract
//!
//! `vec_externs!()` expands inside the x86-64 `impl generated::Context for IselCtx`. The
//! extractors only read (the features); the constant constructors are pure arithmetic on
//! their arguments; `lacks` stores a typed error in `IselCtx::error` (which the driver
//! returns instead of "unsupported") and fails. Nothing here merges a producer or emits an
//! instruction. Cost: O(1) per call (a 16-lane loop at most).

use kestrel_ir::Type;

use crate::machinst::isel::vec::{lanes_by_lane_type, VecLanes, V128};

/// The lanes of a vector type one XMM register holds: a 128-bit type, or a 64-bit one (in
/// the register's low half), which answers as the 128-bit type of its lanes.
pub(super) fn lanes_of(ty: Type) -> Option<VecLanes> {
    matches!(ty.bits(), 64 | 128)
        .then(|| lanes_by_lane_type(ty))
        .flatten()
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
        crate::machinst::isel::vec::isel_vec_externs!(super::lower_vec::lanes_of);

        fn vec64_ty(&mut self, ty: Type) -> Option<VecLanes> {
            (ty.bits() == 64).then(|| self.vec_ty(ty)).flatten()
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
            let ty = crate::machinst::isel::vec::inst_type(self.lower.f, i);
            self.error = Some(self.missing_feature(i, ty, name));
            None
        }

        fn splat_bits(&mut self, l: VecLanes, x: u64) -> V128 {
            crate::machinst::isel::vec::splat(l, x)
        }

        fn lane_mask(&mut self, l: VecLanes, lane: u64) -> V128 {
            crate::machinst::isel::vec::lane_mask(l, lane)
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
    };
}
pub(super) use vec_externs;

#[cfg(test)]
mod tests {
    use super::*;

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
