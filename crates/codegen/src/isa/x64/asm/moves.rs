//! Integer moves: `mov` register/memory/immediate (including `movabs`), and the zero/sign
//! extensions `movzx`, `movsx`, `movsxd`.
//!
//! # Contract
//!
//! - [`mov_rm_r`], [`mov_r_rm`], [`mov_rm_imm`], [`mov_r_imm`]: every size. A 32-bit write to a
//!   register zeroes bits 63..32; 8- and 16-bit writes keep them.
//! - [`mov_r_imm`] writes the immediate at full width (`B0+r ib`, `B8+r iw/id`, and for 64 bits
//!   the 10-byte `movabs`); the immediate must fit the width (`debug_assert!`).
//!   [`mov_rm_imm`] writes `C6`/`C7 /0` with at most an imm32, sign-extended for 64 bits.
//! - [`mov_r_imm64`] picks the shortest form that puts a 64-bit constant in a register:
//!   `mov r32, imm32` (zero-extends), `mov r/m64, simm32`, or `movabs`.
//! - Extensions are named by [`ExtMode`] (source and destination width), so only combinations
//!   the hardware has can be asked for. `movzx` from 32 to 64 bits is `mov r32, r/m32`, which
//!   zero-extends; `movsx` from 32 to 64 bits is `movsxd`.
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_opcode_reg, emit_rm, imm_fits, put_imm, Enc, Map};
use super::operands::GprMem;
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// `mov dst, src` with `dst` a register or memory (`88`/`89`).
pub fn mov_rm_r(
    sink: &mut impl CodeSink,
    size: Size,
    dst: &GprMem,
    src: Gpr,
) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::sized(size, Map::Legacy, 0x88, 0x89),
        src.enc(),
        dst.into(),
        0,
    )
}

/// `mov dst, src` with `src` a register or memory (`8A`/`8B`).
pub fn mov_r_rm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::sized(size, Map::Legacy, 0x8A, 0x8B),
        dst.enc(),
        src.into(),
        0,
    )
}

/// `mov dst, imm` with a full-width immediate (`B0+r`, `B8+r`; `movabs` for 64 bits).
pub fn mov_r_imm(sink: &mut impl CodeSink, size: Size, dst: Gpr, imm: i64) {
    debug_assert!(imm_fits(size, imm), "immediate {imm} does not fit {size:?}");
    let enc = if size == Size::S8 {
        Enc::new(Map::Legacy, 0xB0)
    } else {
        Enc::new(Map::Legacy, 0xB8).size(size)
    };
    emit_opcode_reg(sink, &enc, dst, size == Size::S8);
    put_imm(sink, imm, size.bytes());
}

/// `mov dst, imm` with `dst` a register or memory (`C6 /0 ib`, `C7 /0 iw/id`; for 64 bits the
/// imm32 is sign-extended).
pub fn mov_rm_imm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: &GprMem,
    imm: i32,
) -> Option<Rel32Fixup> {
    debug_assert!(
        imm_fits(size, imm.into()),
        "immediate {imm} does not fit {size:?}"
    );
    let len = size.bytes().min(4);
    let fixup = emit_rm(
        sink,
        &Enc::sized_ext(size, Map::Legacy, 0xC6, 0xC7),
        0,
        dst.into(),
        len,
    );
    put_imm(sink, imm.into(), len);
    fixup
}

/// Loads the 64-bit constant `value` into `dst` with the shortest encoding.
pub fn mov_r_imm64(sink: &mut impl CodeSink, dst: Gpr, value: u64) {
    if let Ok(v) = u32::try_from(value) {
        mov_r_imm(sink, Size::S32, dst, v.into());
    } else if let Ok(v) = i32::try_from(value as i64) {
        mov_rm_imm(sink, Size::S64, &GprMem::Reg(dst), v);
    } else {
        mov_r_imm(sink, Size::S64, dst, value as i64);
    }
}

/// Source and destination widths of an extension: `B`yte, `W`ord, `L`ong (32), `Q`uad (64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtMode {
    BW,
    BL,
    BQ,
    WL,
    WQ,
    LQ,
}

impl ExtMode {
    /// All modes.
    pub const ALL: [ExtMode; 6] = [
        ExtMode::BW,
        ExtMode::BL,
        ExtMode::BQ,
        ExtMode::WL,
        ExtMode::WQ,
        ExtMode::LQ,
    ];

    /// (source size, destination size).
    pub fn sizes(self) -> (Size, Size) {
        match self {
            ExtMode::BW => (Size::S8, Size::S16),
            ExtMode::BL => (Size::S8, Size::S32),
            ExtMode::BQ => (Size::S8, Size::S64),
            ExtMode::WL => (Size::S16, Size::S32),
            ExtMode::WQ => (Size::S16, Size::S64),
            ExtMode::LQ => (Size::S32, Size::S64),
        }
    }
}

/// Zero-extends `src` into `dst` (`0F B6`/`0F B7`; `mov r32, r/m32` for [`ExtMode::LQ`]).
pub fn movzx(
    sink: &mut impl CodeSink,
    mode: ExtMode,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    let (from, to) = mode.sizes();
    let enc = match from {
        Size::S8 => Enc::new(Map::M0F, 0xB6).size(to).byte_rm(),
        Size::S16 => Enc::new(Map::M0F, 0xB7).size(to),
        _ => Enc::new(Map::Legacy, 0x8B),
    };
    emit_rm(sink, &enc, dst.enc(), src.into(), 0)
}

/// Sign-extends `src` into `dst` (`0F BE`/`0F BF`; `movsxd` (`63`) for [`ExtMode::LQ`]).
pub fn movsx(
    sink: &mut impl CodeSink,
    mode: ExtMode,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    let (from, to) = mode.sizes();
    let enc = match from {
        Size::S8 => Enc::new(Map::M0F, 0xBE).size(to).byte_rm(),
        Size::S16 => Enc::new(Map::M0F, 0xBF).size(to),
        _ => Enc::new(Map::Legacy, 0x63).size(to),
    };
    emit_rm(sink, &enc, dst.enc(), src.into(), 0)
}
