//! Shifts and rotates: by `cl`, by an immediate, and the double-width `shld`/`shrd`.
//!
//! # Contract
//!
//! - [`shift_rm_cl`] and [`shift_rm_imm`] accept every size. The CPU masks the count to 5 bits
//!   (6 bits for 64-bit operands), so an immediate must be below 64 (`debug_assert!`) and larger
//!   counts than the width behave as the hardware defines, which the lowering must account for.
//! - The count register of the `cl` forms is fixed; the register allocator must put the count in
//!   `rcx`.
//! - [`double_shift_cl`] and [`double_shift_imm`] (`shld`/`shrd`) exist for 16/32/64 bits only
//!   (`debug_assert!`).
//! - BMI2's `shlx`/`sarx`/`shrx` (any count register) live in [`super::bits`].
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_rm, Enc, Map};
use super::operands::GprMem;
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// Shift and rotate operations, numbered as their ModRM opcode extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftOp {
    Rol = 0,
    Ror = 1,
    Rcl = 2,
    Rcr = 3,
    Shl = 4,
    Shr = 5,
    Sar = 7,
}

impl ShiftOp {
    /// All operations.
    pub const ALL: [ShiftOp; 7] = [
        ShiftOp::Rol,
        ShiftOp::Ror,
        ShiftOp::Rcl,
        ShiftOp::Rcr,
        ShiftOp::Shl,
        ShiftOp::Shr,
        ShiftOp::Sar,
    ];
}

/// `op dst, cl` (`D2`/`D3 /op`).
pub fn shift_rm_cl(
    sink: &mut impl CodeSink,
    op: ShiftOp,
    size: Size,
    dst: &GprMem,
) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::sized_ext(size, Map::Legacy, 0xD2, 0xD3),
        op as u8,
        dst.into(),
        0,
    )
}

/// `op dst, imm8` (`C0`/`C1 /op ib`).
pub fn shift_rm_imm(
    sink: &mut impl CodeSink,
    op: ShiftOp,
    size: Size,
    dst: &GprMem,
    imm: u8,
) -> Option<Rel32Fixup> {
    debug_assert!(imm < 64, "shift count {imm} out of range");
    let fixup = emit_rm(
        sink,
        &Enc::sized_ext(size, Map::Legacy, 0xC0, 0xC1),
        op as u8,
        dst.into(),
        1,
    );
    sink.put1(imm);
    fixup
}

/// Double-width shifts: `shld` shifts `dst` left filling from the top of `src`, `shrd` shifts
/// right filling from the bottom of `src`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DoubleShift {
    Shld,
    Shrd,
}

impl DoubleShift {
    fn opcode(self) -> u8 {
        match self {
            DoubleShift::Shld => 0xA4,
            DoubleShift::Shrd => 0xAC,
        }
    }
}

/// `shld/shrd dst, src, cl` (`0F A5`/`0F AD`).
pub fn double_shift_cl(
    sink: &mut impl CodeSink,
    op: DoubleShift,
    size: Size,
    dst: &GprMem,
    src: Gpr,
) -> Option<Rel32Fixup> {
    debug_assert_ne!(size, Size::S8, "shld/shrd have no 8-bit form");
    emit_rm(
        sink,
        &Enc::new(Map::M0F, op.opcode() + 1).size(size),
        src.enc(),
        dst.into(),
        0,
    )
}

/// `shld/shrd dst, src, imm8` (`0F A4`/`0F AC ib`).
pub fn double_shift_imm(
    sink: &mut impl CodeSink,
    op: DoubleShift,
    size: Size,
    dst: &GprMem,
    src: Gpr,
    imm: u8,
) -> Option<Rel32Fixup> {
    debug_assert_ne!(size, Size::S8, "shld/shrd have no 8-bit form");
    debug_assert!(imm < 64, "shift count {imm} out of range");
    let fixup = emit_rm(
        sink,
        &Enc::new(Map::M0F, op.opcode()).size(size),
        src.enc(),
        dst.into(),
        1,
    );
    sink.put1(imm);
    fixup
}
