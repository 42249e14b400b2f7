//! Multiplication and division: one-operand `mul`/`imul`/`div`/`idiv` through `rdx:rax`, the
//! two- and three-operand `imul`, and the accumulator sign extensions (`cwd`/`cdq`/`cqo`,
//! `cbw`/`cwde`/`cdqe`) that set up a signed dividend.
//!
//! # Contract
//!
//! - [`mul_div_rm`]: every size. Implicit operands are fixed registers: for 8 bits `ax` (product
//!   or dividend; quotient in `al`, remainder in `ah`), otherwise `rdx:rax` at the operand width.
//!   The register allocator must honour them. `div`/`idiv` fault (#DE) on a zero divisor or an
//!   overflowing quotient; the lowering must check first if that is not the wanted trap.
//! - [`imul_r_rm`] and [`imul_r_rm_imm`] exist for 16/32/64 bits only (`debug_assert!`); the
//!   immediate is an `i32` sign-extended to 64 bits (it must fit 16 bits for the 16-bit form),
//!   and the `ib` form is used when it fits a signed byte.
//! - [`sign_extend_rdx`] and [`sign_extend_rax`] take 16/32/64 bits (`debug_assert!`).
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_plain, emit_rm, imm_fits, put_imm, Enc, Map};
use super::operands::GprMem;
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// One-operand multiply/divide, numbered as their ModRM opcode extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulDivOp {
    /// Unsigned widening multiply.
    Mul = 4,
    /// Signed widening multiply.
    Imul = 5,
    /// Unsigned divide.
    Div = 6,
    /// Signed divide.
    Idiv = 7,
}

impl MulDivOp {
    /// All operations.
    pub const ALL: [MulDivOp; 4] = [MulDivOp::Mul, MulDivOp::Imul, MulDivOp::Div, MulDivOp::Idiv];
}

/// `mul/imul/div/idiv src` (`F6`/`F7 /op`).
pub fn mul_div_rm(
    sink: &mut impl CodeSink,
    op: MulDivOp,
    size: Size,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::sized_ext(size, Map::Legacy, 0xF6, 0xF7),
        op as u8,
        src.into(),
        0,
    )
}

/// `imul dst, src` (`0F AF`): `dst *= src`, truncated.
pub fn imul_r_rm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    debug_assert_ne!(size, Size::S8, "two-operand imul has no 8-bit form");
    emit_rm(
        sink,
        &Enc::new(Map::M0F, 0xAF).size(size),
        dst.enc(),
        src.into(),
        0,
    )
}

/// `imul dst, src, imm` (`6B ib` or `69 iw/id`): `dst = src * imm`, truncated.
pub fn imul_r_rm_imm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Gpr,
    src: &GprMem,
    imm: i32,
) -> Option<Rel32Fixup> {
    debug_assert_ne!(size, Size::S8, "three-operand imul has no 8-bit form");
    debug_assert!(
        imm_fits(size, imm.into()),
        "immediate {imm} does not fit {size:?}"
    );
    let v = if size == Size::S16 {
        i32::from(imm as i16)
    } else {
        imm
    };
    let (op, len) = if i8::try_from(v).is_ok() {
        (0x6B, 1)
    } else if size == Size::S16 {
        (0x69, 2)
    } else {
        (0x69, 4)
    };
    let fixup = emit_rm(
        sink,
        &Enc::new(Map::Legacy, op).size(size),
        dst.enc(),
        src.into(),
        len,
    );
    put_imm(sink, v.into(), len);
    fixup
}

/// Sign-extends the accumulator into `rdx` at `size`: `cwd` (16), `cdq` (32), `cqo` (64).
pub fn sign_extend_rdx(sink: &mut impl CodeSink, size: Size) {
    emit_plain(sink, &Enc::new(Map::Legacy, 0x99).size(size));
}

/// Sign-extends the lower half of the accumulator into all of it: `cbw` (`al` → `ax`, size 16),
/// `cwde` (`ax` → `eax`, 32), `cdqe` (`eax` → `rax`, 64).
pub fn sign_extend_rax(sink: &mut impl CodeSink, size: Size) {
    emit_plain(sink, &Enc::new(Map::Legacy, 0x98).size(size));
}
