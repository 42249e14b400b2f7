//! The bitmask ("logical") immediate encoder: the immediates of `and`/`orr`/`eor`/`ands`.
//!
//! A bitmask immediate is an element of 2, 4, 8, 16, 32 or 64 bits holding one run of ones
//! (not zero, not all ones), rotated right within the element and replicated to fill the
//! register. It is encoded in 13 bits `N:immr:imms`: `N` is set for 64-bit elements; `imms`
//! holds the element size in its high bits (`0xxxxx` for 32, `10xxxx` for 16, …, `11110x`
//! for 2) and the run length minus one in the rest; `immr` is the right rotation.
//!
//! Each encodable value has exactly one encoding with `immr` below the element size, which is
//! the one [`logical_imm`] returns. 32-bit operations take 32-bit values and never set `N`.

use super::regs::Size;

/// A bitmask immediate for an operation of the size it was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LogicalImm {
    value: u64,
    size: Size,
    /// `N:immr:imms`, as returned by [`logical_imm`].
    enc: u16,
}

impl LogicalImm {
    /// `value` as an immediate of a `size` operation, or `None` if it is not a bitmask
    /// immediate of that size (for 32 bits, `value` must fit in 32 bits).
    pub fn new(value: u64, size: Size) -> Option<LogicalImm> {
        let enc = logical_imm(value, size)?;
        Some(LogicalImm { value, size, enc })
    }

    /// The value.
    pub const fn value(self) -> u64 {
        self.value
    }

    /// The operation size.
    pub const fn size(self) -> Size {
        self.size
    }

    /// `N`, `immr` and `imms` in their instruction positions (bits 22, 16–21, 10–15).
    pub(crate) const fn fields(self) -> u32 {
        let enc = self.enc as u32;
        ((enc >> 12) << 22) | (((enc >> 6) & 0x3F) << 16) | ((enc & 0x3F) << 10)
    }
}

/// Encodes `value` as a bitmask immediate for a `size` operation: `N:immr:imms` in the low
/// 13 bits (`N` at bit 12, `immr` at 6–11, `imms` at 0–5), or `None` if it is not one.
pub fn logical_imm(value: u64, size: Size) -> Option<u16> {
    let value = match size {
        Size::S64 => value,
        Size::S32 => {
            let low = u32::try_from(value).ok()?;
            u64::from(low) | (u64::from(low) << 32)
        }
    };
    if value == 0 || value == u64::MAX {
        return None;
    }
    // The element size: the smallest power of two the value repeats with.
    let mut esize = 64u32;
    while esize > 2 && value.rotate_right(esize / 2) == value {
        esize /= 2;
    }
    let mask = if esize == 64 {
        u64::MAX
    } else {
        (1 << esize) - 1
    };
    let elem = value & mask;
    // Rotate left by one within the element; a run starts where a one follows a zero.
    let rotl1 = ((elem << 1) | (elem >> (esize - 1))) & mask;
    let starts = elem & !rotl1;
    if starts.count_ones() != 1 {
        return None;
    }
    let start = starts.trailing_zeros();
    let ones = elem.count_ones();
    // Rotating the element right by `start` must leave `ones` ones at the bottom; the
    // single-start check guarantees it, and the decoder rotates back by `immr`.
    let immr = (esize - start) % esize;
    let n = u32::from(esize == 64);
    let imms = ((!(esize - 1) << 1) & 0x3F) | (ones - 1);
    Some(((n << 12) | (immr << 6) | imms) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Decodes `N:immr:imms` the way the Arm ARM's `DecodeBitMasks` does, written
    /// independently of the encoder; `None` for reserved encodings.
    fn decode(n: u32, immr: u32, imms: u32, size: Size) -> Option<u64> {
        if size == Size::S32 && n != 0 {
            return None;
        }
        let combined = (n << 6) | (!imms & 0x3F);
        if combined == 0 {
            return None;
        }
        let len = 31 - combined.leading_zeros();
        if len < 1 {
            return None;
        }
        let esize = 1u32 << len;
        let levels = esize - 1;
        let s = imms & levels;
        let r = immr & levels;
        if s == levels {
            return None;
        }
        let mut elem: u64 = (1u64 << (s + 1)) - 1;
        for _ in 0..r {
            elem = ((elem & 1) << (esize - 1)) | (elem >> 1);
        }
        let mut value = 0u64;
        let mut at = 0;
        while at < size.bits() {
            value |= elem << at;
            at += esize;
        }
        Some(value)
    }

    /// Every valid canonical encoding (immr below the element size) and its value.
    fn all_encodings(size: Size) -> HashMap<u64, u16> {
        let mut map = HashMap::new();
        for n in 0..2 {
            for immr in 0..64 {
                for imms in 0..64 {
                    let Some(value) = decode(n, immr, imms, size) else {
                        continue;
                    };
                    let esize = if n == 1 {
                        64
                    } else {
                        1 << (31 - ((!imms & 0x3F).leading_zeros()))
                    };
                    if immr >= esize {
                        continue;
                    }
                    let enc = ((n << 12) | (immr << 6) | imms) as u16;
                    assert!(map.insert(value, enc).is_none(), "{value:#x} twice");
                }
            }
        }
        map
    }

    fn check(value: u64, size: Size, all: &HashMap<u64, u16>) {
        assert_eq!(
            logical_imm(value, size),
            all.get(&value).copied(),
            "{value:#x} at {size:?}"
        );
    }

    #[test]
    fn counts_and_every_valid_value() {
        for (size, count) in [(Size::S32, 1302), (Size::S64, 5334)] {
            let all = all_encodings(size);
            assert_eq!(all.len(), count);
            for &value in all.keys() {
                check(value, size, &all);
            }
        }
    }

    /// Every 32-bit value in families dense in bitmask immediates: each 16-bit half pattern
    /// replicated, every value with its ones in the low or high 20 bits, every rotation of
    /// every run and of every run pair, and the complements of all of those.
    #[test]
    fn exhaustive_32_bit_patterns() {
        let all = all_encodings(Size::S32);
        let mut values: Vec<u32> = Vec::new();
        for half in 0..=u16::MAX {
            values.push(u32::from(half) * 0x1_0001);
        }
        for low in 0..(1u32 << 20) {
            values.push(low);
            values.push(low << 12);
        }
        for start in 0..32 {
            for len in 1..=32u32 {
                let run = if len == 32 { u32::MAX } else { (1 << len) - 1 };
                values.push(run.rotate_left(start));
                for start2 in 0..32 {
                    for len2 in 1..8u32 {
                        values.push(
                            run.rotate_left(start) | ((1 << len2) - 1u32).rotate_left(start2),
                        );
                    }
                }
            }
        }
        for v in values {
            check(u64::from(v), Size::S32, &all);
            check(u64::from(!v), Size::S32, &all);
        }
        // A 32-bit operation rejects values that need more than 32 bits.
        assert_eq!(logical_imm(0x1_0000_00FF, Size::S32), None);
        assert_eq!(logical_imm(0xFF, Size::S32), Some(0b0_000000_000111));
    }

    /// Random 64-bit values (mostly not encodable) and valid values with one bit flipped
    /// (mostly not encodable, found near the valid ones).
    #[test]
    fn random_64_bit_values() {
        let all = all_encodings(Size::S64);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let v = next();
            check(v, Size::S64, &all);
            // Sparse and dense values are where the valid ones are.
            check(v & next() & next(), Size::S64, &all);
            check(v | next() | next(), Size::S64, &all);
        }
        for &value in all.keys() {
            check(value ^ (1 << (next() % 64)), Size::S64, &all);
        }
        assert_eq!(
            logical_imm(0x5555_5555_5555_5555, Size::S64),
            Some(0b0_000000_111100)
        );
        assert_eq!(
            logical_imm(0xFFFF_FFFF_0000_0000, Size::S64),
            Some(0b1_100000_011111)
        );
        assert_eq!(logical_imm(u64::MAX, Size::S64), None);
        assert_eq!(logical_imm(0, Size::S64), None);
    }
}
