//! Bitfield moves: `sbfm`, `bfm`, `ubfm`, and through them the shifts by an immediate
//! (`lsl`, `lsr`, `asr`), extracts and inserts (`ubfx`, `sbfx`, `bfxil`, `ubfiz`, `sbfiz`,
//! `bfi`, `bfc`) and extensions (`uxtb`, `uxth`, `sxtb`, `sxth`, `sxtw`).
//!
//! # Contract
//!
//! A [`Bitfield`] holds the `immr`/`imms` pair for one operation size, both below the width;
//! its constructors check their arguments and return `None` for impossible fields. The
//! alias constructors compute the pair the Arm ARM defines for each alias; which alias a
//! disassembler prints also depends on the operation ([`BitfieldOp`]).

use super::regs::{GprZr, Size};
use super::{rd_field, rn_field, WordSink};

/// The three bitfield moves (the `opc` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitfieldOp {
    /// Signed: sign-extends the extracted field.
    Sbfm = 0,
    /// Inserts into the destination, keeping its other bits.
    Bfm = 1,
    /// Unsigned: zero-extends the extracted field.
    Ubfm = 2,
}

impl BitfieldOp {
    /// All operations.
    pub const ALL: [BitfieldOp; 3] = [BitfieldOp::Sbfm, BitfieldOp::Bfm, BitfieldOp::Ubfm];
}

/// The `immr`/`imms` fields of a bitfield move of a given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bitfield {
    size: Size,
    immr: u8,
    imms: u8,
}

impl Bitfield {
    /// The raw fields, or `None` unless both are below the width.
    pub const fn new(size: Size, immr: u32, imms: u32) -> Option<Bitfield> {
        if immr >= size.bits() || imms >= size.bits() {
            return None;
        }
        Some(Bitfield {
            size,
            immr: immr as u8,
            imms: imms as u8,
        })
    }

    /// `lsl #amount` (with [`BitfieldOp::Ubfm`]).
    pub const fn lsl(size: Size, amount: u32) -> Option<Bitfield> {
        let w = size.bits();
        if amount >= w {
            return None;
        }
        Bitfield::new(size, (w - amount) % w, w - 1 - amount)
    }

    /// `lsr #amount` (with `Ubfm`) or `asr #amount` (with `Sbfm`).
    pub const fn shift_right(size: Size, amount: u32) -> Option<Bitfield> {
        Bitfield::new(size, amount, size.bits() - 1)
    }

    /// The field of `width` bits at `lsb` moved to bit 0: `ubfx`, `sbfx`, `bfxil`.
    pub const fn extract(size: Size, lsb: u32, width: u32) -> Option<Bitfield> {
        if width == 0 || lsb >= size.bits() || width > size.bits() - lsb {
            return None;
        }
        Bitfield::new(size, lsb, lsb + width - 1)
    }

    /// The low `width` bits moved to bit `lsb`: `ubfiz`, `sbfiz`, `bfi` (and `bfc` when
    /// inserting from ZR).
    pub const fn insert(size: Size, lsb: u32, width: u32) -> Option<Bitfield> {
        let w = size.bits();
        if width == 0 || lsb >= w || width > w - lsb {
            return None;
        }
        Bitfield::new(size, (w - lsb) % w, width - 1)
    }

    /// Extension of the low `bits` bits (8, 16 or 32, below the width) to the full width:
    /// `uxtb`/`uxth` with `Ubfm` (32-bit), `sxtb`/`sxth`/`sxtw` with `Sbfm`.
    pub const fn extend(size: Size, bits: u32) -> Option<Bitfield> {
        if !matches!(bits, 8 | 16 | 32) || bits >= size.bits() {
            return None;
        }
        Bitfield::extract(size, 0, bits)
    }

    /// The operation size.
    pub const fn size(self) -> Size {
        self.size
    }

    /// `immr` and `imms`.
    pub const fn fields(self) -> (u32, u32) {
        (self.immr as u32, self.imms as u32)
    }
}

/// `sbfm`/`bfm`/`ubfm rd, rn, #immr, #imms` at the size of `field`.
pub fn bitfield(sink: &mut impl WordSink, op: BitfieldOp, rd: GprZr, rn: GprZr, field: Bitfield) {
    // N equals sf.
    let sf_n = match field.size {
        Size::S32 => 0,
        Size::S64 => (1 << 31) | (1 << 22),
    };
    let word = 0x1300_0000 | sf_n | ((op as u32) << 29);
    let word = word | (u32::from(field.immr) << 16) | (u32::from(field.imms) << 10);
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rd.enc()));
}
