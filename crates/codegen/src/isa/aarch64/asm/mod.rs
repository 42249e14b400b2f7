//! The AArch64 assembler layer: one function per instruction form, writing 32-bit instruction
//! words into a [`WordSink`].
//!
//! # Contract
//!
//! - **Input:** hardware registers ([`Gpr`], [`GprZr`], [`GprSp`], [`Vreg`]), sizes
//!   ([`Size`], [`MemSize`], [`FpSize`], [`FpMemSize`], [`SdqSize`]), checked immediates and
//!   addressing modes ([`Amode`], [`PairAmode`]). Nothing here knows about virtual registers,
//!   labels or relocations; the backend's `Inst` enum and its emitter are built on top of
//!   this layer.
//! - **Output:** exactly one 32-bit instruction word per call, written little-endian. Each
//!   function's doc names the instruction; where the Arm assembler has a preferred alias
//!   (`mov`, `cmp`, `lsl`, `mul`, `cset`, …) the function emitting the underlying encoding
//!   says so, and [`bitfield::Bitfield`] has constructors for the bitfield aliases.
//! - **Fixups:** every form with a PC-relative field (`b`, `bl`, `b.cond`, `cbz`/`cbnz`,
//!   `tbz`/`tbnz`, `adr`, `adrp`, `ldr` literal) takes its offset as a checked [`PcOffset`]
//!   (usually [`PcOffset::ZERO`] for a label use) and returns a [`Fixup`]: where the word is
//!   and which [`LabelUse`] kind of field it holds, so a `MachBuffer` can patch it with
//!   [`LabelUse::patch`] once the target is known. Other forms return nothing.
//! - **Illegal combinations are not representable or are rejected when an operand is
//!   built.** Register slots that mean SP cannot take ZR and vice versa (see [`regs`]);
//!   shift kinds that a form does not have are not in its enum; immediates and offsets are
//!   newtypes whose constructors return `None` when the value does not fit the field. Where
//!   legality depends on the operation size (shift amounts, bitfield positions, logical
//!   immediates, `movz` shifts) the operand is built for a size, carries it, and the form
//!   takes its size from the operand, so the two cannot disagree. No function silently
//!   produces a different instruction than the one asked for.
//! - Encodable forms that the architecture calls CONSTRAINED UNPREDICTABLE (a writeback
//!   base equal to the transfer register, `ldp` of one register twice, a `stxr` status
//!   register equal to the data or base) are the caller's responsibility and are caught by
//!   `debug_assert!`s.
//!
//! # Layout
//!
//! - [`regs`]: registers and sizes, with hardware numbers and names.
//! - [`operands`]: checked immediates, shift amounts, shifted and extended registers.
//! - [`logical_imm`] and [`fp_imm`]: the bitmask-immediate and 8-bit FP-immediate encoders.
//! - [`label_use`]: PC-relative field kinds, offsets and fixups.
//! - One file per family: [`add_sub`], [`logical`], [`moves`], [`shift`], [`bitfield`],
//!   [`mul_div`], [`bits`], [`cond`], [`mem`], [`pair`], [`branch`], [`fp`], [`atomic`],
//!   [`misc`], [`simd`].
//!
//! Every form is cross-checked against `aarch64-linux-gnu-objdump` in the `tests` module.
//!
//! # Example
//!
//! ```
//! use kestrel_codegen::isa::aarch64::asm::add_sub::{add_sub_imm, AddSub, AddSubImm};
//! use kestrel_codegen::isa::aarch64::asm::branch::b_cond;
//! use kestrel_codegen::isa::aarch64::asm::cond::Cond;
//! use kestrel_codegen::isa::aarch64::asm::logical::{logical_reg, LogicalOp};
//! use kestrel_codegen::isa::aarch64::asm::{Gpr, GprSp, GprZr, LabelUse, PcOffset, Size};
//!
//! let mut code: Vec<u8> = Vec::new();
//! // sub sp, sp, #16
//! let sixteen = AddSubImm::new(16).unwrap();
//! add_sub_imm(&mut code, AddSub::Sub, Size::S64, GprSp::SP, GprSp::SP, sixteen);
//! // mov x0, x1 (orr x0, xzr, x1)
//! logical_reg(&mut code, LogicalOp::Orr, Size::S64, Gpr::X0.into(), GprZr::ZR, Gpr::X1.into());
//! // b.ne <label>, patched later
//! let fixup = b_cond(&mut code, Cond::Ne, PcOffset::ZERO);
//! assert_eq!(code[..4], 0xD100_43FFu32.to_le_bytes());
//! assert_eq!(code[4..8], 0xAA01_03E0u32.to_le_bytes());
//! assert_eq!((fixup.at, fixup.kind), (8, LabelUse::Branch19));
//! // The label turns out to be 12 bytes before the branch.
//! let word = u32::from_le_bytes(code[8..12].try_into().unwrap());
//! assert_eq!(fixup.kind.patch(word, -12), Some(0x54FF_FFA1));
//! ```

pub mod add_sub;
pub mod atomic;
pub mod bitfield;
pub mod bits;
pub mod branch;
pub mod cond;
pub mod fp;
pub mod fp_imm;
pub mod label_use;
pub mod logical;
pub mod logical_imm;
pub mod mem;
pub mod misc;
pub mod moves;
pub mod mul_div;
pub mod operands;
pub mod pair;
pub mod regs;
pub mod shift;
pub mod simd;

#[cfg(test)]
pub(crate) mod tests;

pub use label_use::{Fixup, LabelUse, PcOffset};
pub use mem::Amode;
pub use pair::PairAmode;
pub use regs::{FpMemSize, FpSize, Gpr, GprSp, GprZr, MemSize, SdqSize, Size, Vreg};

/// A sink that instruction words are written into, little-endian.
///
/// `MachBuffer` will implement it for real emission; `Vec<u8>` implements it for tests and
/// tools.
pub trait WordSink {
    /// Appends one instruction word.
    fn put_word(&mut self, word: u32);

    /// The byte offset at which the next word will be written.
    fn current_offset(&self) -> u32;
}

impl WordSink for Vec<u8> {
    fn put_word(&mut self, word: u32) {
        self.extend_from_slice(&word.to_le_bytes());
    }

    fn current_offset(&self) -> u32 {
        u32::try_from(self.len()).expect("code buffer exceeds 4 GiB")
    }
}

/// Register fields: `Rd`/`Rt` at bit 0, `Rn` at 5, `Rt2`/`Ra` at 10, `Rm`/`Rs` at 16.
pub(crate) const fn rd_field(enc: u8) -> u32 {
    enc as u32
}

pub(crate) const fn rn_field(enc: u8) -> u32 {
    (enc as u32) << 5
}

pub(crate) const fn ra_field(enc: u8) -> u32 {
    (enc as u32) << 10
}

pub(crate) const fn rm_field(enc: u8) -> u32 {
    (enc as u32) << 16
}
