//! PC-relative fields: their kinds ([`LabelUse`]), checked offsets ([`PcOffset`]) and where an
//! instruction wrote one ([`Fixup`]).
//!
//! # Contract
//!
//! - An offset is measured in bytes from the address of the instruction that holds the field
//!   to the target (AArch64 has no "end of instruction" bias), except for [`LabelUse::Adrp21`],
//!   whose offset is the distance between the 4 KiB pages of the instruction and the target
//!   (`(target & !0xFFF) - (pc & !0xFFF)`): the caller must know both addresses modulo 4 KiB.
//! - A use of kind `k` reaches offsets in `-k.max_neg_range() ..= k.max_pos_range()` that are
//!   multiples of its scale (4 for branches and literal loads, 1 for `adr`, 4096 for `adrp`).
//! - [`LabelUse::patch`] rewrites only the field of an existing instruction word and returns
//!   `None` for an offset out of range or misaligned; a `MachBuffer` uses it to resolve labels
//!   and to decide where islands and veneers are needed.

use super::WordSink;

/// The kind of a PC-relative field in an instruction word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LabelUse {
    /// `b`, `bl`: imm26 in bits 0–25, in words (±128 MiB).
    Branch26,
    /// `b.cond`, `cbz`, `cbnz`: imm19 in bits 5–23, in words (±1 MiB).
    Branch19,
    /// `tbz`, `tbnz`: imm14 in bits 5–18, in words (±32 KiB).
    Branch14,
    /// `adr`: immhi:immlo (bits 5–23 and 29–30), in bytes (±1 MiB).
    Adr21,
    /// `adrp`: immhi:immlo, in 4 KiB pages (±4 GiB).
    Adrp21,
    /// `ldr` (literal): imm19 in bits 5–23, in words (±1 MiB).
    Literal19,
}

impl LabelUse {
    /// All kinds.
    pub const ALL: [LabelUse; 6] = [
        LabelUse::Branch26,
        LabelUse::Branch19,
        LabelUse::Branch14,
        LabelUse::Adr21,
        LabelUse::Adrp21,
        LabelUse::Literal19,
    ];

    /// Width of the field in bits and log2 of the unit it counts in.
    const fn field(self) -> (u32, u32) {
        match self {
            LabelUse::Branch26 => (26, 2),
            LabelUse::Branch19 | LabelUse::Literal19 => (19, 2),
            LabelUse::Branch14 => (14, 2),
            LabelUse::Adr21 => (21, 0),
            LabelUse::Adrp21 => (21, 12),
        }
    }

    /// The largest forward offset in bytes.
    pub const fn max_pos_range(self) -> u64 {
        let (bits, scale) = self.field();
        ((1u64 << (bits - 1)) - 1) << scale
    }

    /// The largest backward offset in bytes (as a positive number).
    pub const fn max_neg_range(self) -> u64 {
        let (bits, scale) = self.field();
        (1u64 << (bits - 1)) << scale
    }

    /// The field value for `offset`, or `None` if it is misaligned or out of range.
    const fn field_value(self, offset: i64) -> Option<u32> {
        let (bits, scale) = self.field();
        let units = offset >> scale;
        let half = 1i64 << (bits - 1);
        if offset & ((1 << scale) - 1) != 0 || units < -half || units >= half {
            return None;
        }
        Some((units as u32) & ((1 << bits) - 1))
    }

    /// Bits of the word that hold the field.
    const fn mask(self) -> u32 {
        match self {
            LabelUse::Branch26 => 0x03FF_FFFF,
            LabelUse::Branch19 | LabelUse::Literal19 => 0x7_FFFF << 5,
            LabelUse::Branch14 => 0x3FFF << 5,
            LabelUse::Adr21 | LabelUse::Adrp21 => (0x7_FFFF << 5) | (3 << 29),
        }
    }

    /// Places a field value in its bits.
    const fn place(self, value: u32) -> u32 {
        match self {
            LabelUse::Branch26 => value,
            LabelUse::Branch19 | LabelUse::Literal19 | LabelUse::Branch14 => value << 5,
            LabelUse::Adr21 | LabelUse::Adrp21 => ((value & 3) << 29) | ((value >> 2) << 5),
        }
    }

    /// Whether `word` is an instruction that holds a field of this kind.
    pub const fn matches(self, word: u32) -> bool {
        match self {
            // b, bl
            LabelUse::Branch26 => word & 0x7C00_0000 == 0x1400_0000,
            // b.cond (o0 = 0), cbz/cbnz
            LabelUse::Branch19 => {
                word & 0xFF00_0010 == 0x5400_0000 || word & 0x7E00_0000 == 0x3400_0000
            }
            // tbz/tbnz
            LabelUse::Branch14 => word & 0x7E00_0000 == 0x3600_0000,
            LabelUse::Adr21 => word & 0x9F00_0000 == 0x1000_0000,
            LabelUse::Adrp21 => word & 0x9F00_0000 == 0x9000_0000,
            // ldr (literal), integer and FP/SIMD
            LabelUse::Literal19 => word & 0x3B00_0000 == 0x1800_0000,
        }
    }

    /// `word` with its field rewritten to reach `offset`, or `None` if the offset is out of
    /// range or misaligned for this kind. `word` must be an instruction of this kind.
    pub fn patch(self, word: u32, offset: i64) -> Option<u32> {
        debug_assert!(self.matches(word), "{word:#010x} has no {self:?} field");
        let value = self.field_value(offset)?;
        Some((word & !self.mask()) | self.place(value))
    }

    /// Writes `word` with its field set to `offset`, which the caller's [`PcOffset`] type has
    /// checked for this kind.
    pub(crate) fn put(self, sink: &mut impl WordSink, word: u32, offset: i64) -> Fixup {
        let at = sink.current_offset();
        let word = self
            .patch(word, offset)
            .expect("PcOffset was checked for this field");
        sink.put_word(word);
        Fixup { at, kind: self }
    }

    /// The offset the field of `word` currently holds (the inverse of [`LabelUse::patch`]).
    pub fn offset(self, word: u32) -> i64 {
        let (bits, scale) = self.field();
        let raw = match self {
            LabelUse::Branch26 => word & 0x03FF_FFFF,
            LabelUse::Branch19 | LabelUse::Literal19 | LabelUse::Branch14 => {
                (word >> 5) & ((1 << bits) - 1)
            }
            LabelUse::Adr21 | LabelUse::Adrp21 => {
                ((word >> 29) & 3) | (((word >> 5) & 0x7_FFFF) << 2)
            }
        };
        // Sign-extend from `bits`, then scale.
        let shift = 64 - bits;
        (((raw as i64) << shift) >> shift) << scale
    }
}

/// A byte offset checked to fit a PC-relative field of `BITS` bits counting in units of
/// `2^SCALE` bytes. The aliases below name the one for each [`LabelUse`] kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PcOffset<const BITS: u32, const SCALE: u32>(i64);

/// Offset of `b`/`bl` ([`LabelUse::Branch26`]).
pub type Branch26Offset = PcOffset<26, 2>;
/// Offset of `b.cond`/`cbz`/`cbnz` ([`LabelUse::Branch19`]).
pub type Branch19Offset = PcOffset<19, 2>;
/// Offset of `ldr` literal ([`LabelUse::Literal19`]); the same type as [`Branch19Offset`].
pub type Literal19Offset = PcOffset<19, 2>;
/// Offset of `tbz`/`tbnz` ([`LabelUse::Branch14`]).
pub type Branch14Offset = PcOffset<14, 2>;
/// Offset of `adr` ([`LabelUse::Adr21`]).
pub type AdrOffset = PcOffset<21, 0>;
/// Page offset of `adrp` ([`LabelUse::Adrp21`]).
pub type AdrpOffset = PcOffset<21, 12>;

impl<const BITS: u32, const SCALE: u32> PcOffset<BITS, SCALE> {
    /// Offset zero: the usual placeholder for a label use patched later.
    pub const ZERO: Self = PcOffset(0);

    /// `offset` bytes, or `None` if it is misaligned or out of range.
    pub const fn new(offset: i64) -> Option<Self> {
        let half = 1i64 << (BITS - 1);
        let units = offset >> SCALE;
        if offset & ((1 << SCALE) - 1) != 0 || units < -half || units >= half {
            return None;
        }
        Some(PcOffset(offset))
    }

    /// The offset in bytes.
    pub const fn bytes(self) -> i64 {
        self.0
    }
}

/// Where an instruction with a PC-relative field was written, and the field's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fixup {
    /// Offset of the instruction word in the sink.
    pub at: u32,
    /// The kind of field; [`LabelUse::patch`] rewrites it.
    pub kind: LabelUse,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word of each kind with a zero field.
    fn word_of(kind: LabelUse) -> u32 {
        match kind {
            LabelUse::Branch26 => 0x1400_0000,
            LabelUse::Branch19 => 0x5400_0001,
            LabelUse::Branch14 => 0xB608_0003,
            LabelUse::Adr21 => 0x1000_0004,
            LabelUse::Adrp21 => 0x9000_0005,
            LabelUse::Literal19 => 0x5800_0006,
        }
    }

    #[test]
    fn patch_at_range_limits() {
        for kind in LabelUse::ALL {
            let word = word_of(kind);
            let (_, scale) = kind.field();
            let unit = 1i64 << scale;
            let max = kind.max_pos_range() as i64;
            let min = -(kind.max_neg_range() as i64);
            for offset in [0, unit, -unit, max, min, max - unit, min + unit] {
                let patched = kind.patch(word, offset).expect("in range");
                assert_eq!(kind.offset(patched), offset, "{kind:?} {offset}");
                assert_eq!(
                    patched & !kind.mask(),
                    word & !kind.mask(),
                    "{kind:?} other bits"
                );
                assert!(kind.matches(patched));
                // Patching again replaces the field rather than merging into it.
                assert_eq!(kind.patch(patched, 0), Some(word));
            }
            assert_eq!(
                kind.patch(word, max + unit),
                None,
                "{kind:?} past forward reach"
            );
            assert_eq!(
                kind.patch(word, min - unit),
                None,
                "{kind:?} past backward reach"
            );
            if unit > 1 {
                assert_eq!(kind.patch(word, unit / 2), None, "{kind:?} misaligned");
                assert_eq!(kind.patch(word, max - 1), None, "{kind:?} misaligned");
            }
        }
        assert_eq!(LabelUse::Branch26.max_pos_range(), (128 << 20) - 4);
        assert_eq!(LabelUse::Branch26.max_neg_range(), 128 << 20);
        assert_eq!(LabelUse::Branch19.max_neg_range(), 1 << 20);
        assert_eq!(LabelUse::Branch14.max_pos_range(), (32 << 10) - 4);
        assert_eq!(LabelUse::Adr21.max_pos_range(), (1 << 20) - 1);
        assert_eq!(LabelUse::Adrp21.max_neg_range(), 4 << 30);
        assert_eq!(LabelUse::Literal19.max_pos_range(), (1 << 20) - 4);
    }

    #[test]
    fn offsets_agree_with_kinds() {
        fn limits<const B: u32, const S: u32>(kind: LabelUse) {
            let max = kind.max_pos_range() as i64;
            let min = -(kind.max_neg_range() as i64);
            assert!(PcOffset::<B, S>::new(max).is_some(), "{kind:?}");
            assert!(PcOffset::<B, S>::new(min).is_some(), "{kind:?}");
            assert!(PcOffset::<B, S>::new(max + (1 << S)).is_none(), "{kind:?}");
            assert!(PcOffset::<B, S>::new(min - (1 << S)).is_none(), "{kind:?}");
            if S > 0 {
                assert!(PcOffset::<B, S>::new(1).is_none(), "{kind:?}");
            }
        }
        limits::<26, 2>(LabelUse::Branch26);
        limits::<19, 2>(LabelUse::Branch19);
        limits::<19, 2>(LabelUse::Literal19);
        limits::<14, 2>(LabelUse::Branch14);
        limits::<21, 0>(LabelUse::Adr21);
        limits::<21, 12>(LabelUse::Adrp21);
    }
}
