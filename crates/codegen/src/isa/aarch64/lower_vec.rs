//! The AArch64 externs of the vector rules (`lower_vec.rules`; the shared ones are
//! `machinst::isel::vec`'s): the constants they compute (a shuffle's second table, lane
//! indices) and the vector family's constructor.
//!
//! # Contract
//!
//! `vec_externs!()` expands inside the AArch64 `impl generated::Context for IselCtx`. The
//! constant constructors are pure arithmetic on their arguments; nothing here merges a
//! producer or emits an instruction. Cost: O(1) per call (a 16-lane loop at most).

use crate::machinst::isel::vec::{lane_bits, VecLanes, V128};

/// The shuffle mask `mask` with 16 taken from each byte (wrapping): indices into the
/// second operand become 0–15, the first operand's 240–255 (out of a `tbl`'s range).
pub(super) fn shuffle_hi(mask: V128) -> V128 {
    let bytes = mask.bits().to_le_bytes().map(|m| m.wrapping_sub(16));
    V128::new(u128::from_le_bytes(bytes))
}

/// Lane `i` of `l` holding `i`, modulo 8 for byte lanes (each half of a byte vector is
/// summed on its own).
pub(super) fn lane_indices(l: VecLanes) -> V128 {
    let bits = lane_bits(l);
    let lanes = 128 / bits;
    let v = (0..lanes).fold(0u128, |acc, i| acc | u128::from(i % 8) << (i * bits));
    V128::new(v)
}

/// The vector externs (see the module contract).
macro_rules! vec_externs {
    () => {
        crate::machinst::isel::vec::isel_vec_externs!(crate::machinst::isel::vec::lanes_of);

        fn shuffle_hi(&mut self, mask: V128) -> V128 {
            super::lower_vec::shuffle_hi(mask)
        }

        fn lane_indices(&mut self, l: VecLanes) -> V128 {
            super::lower_vec::lane_indices(l)
        }

        fn lane_width_imm(&mut self, l: VecLanes) -> AddSubImm {
            let bits = crate::machinst::isel::vec::lane_bits(l);
            AddSubImm::new(u64::from(bits)).expect("a lane width is an add immediate")
        }
    };
}
pub(super) use vec_externs;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_table_takes_indices_16_to_31() {
        let mask: [u8; 16] = [0, 16, 31, 15, 32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17];
        let hi = shuffle_hi(V128::new(u128::from_le_bytes(mask)))
            .bits()
            .to_le_bytes();
        assert_eq!(hi[..5], [240, 0, 15, 255, 16]);
    }

    #[test]
    fn lane_indices_count_up() {
        assert_eq!(
            lane_indices(VecLanes::I32x4).bits(),
            3 << 96 | 2 << 64 | 1 << 32
        );
        assert_eq!(lane_indices(VecLanes::I8x16).bits().to_le_bytes()[9], 1);
    }
}
