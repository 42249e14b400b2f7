//! Two-operand integer ALU instructions (`add`, `or`, `adc`, `sbb`, `and`, `sub`, `xor`, `cmp`),
//! `test`, and the one-operand `inc`/`dec`/`not`/`neg`.
//!
//! # Contract
//!
//! - Every size is legal. 8-bit register operands are the low bytes (`sil`, `r8b`, …).
//! - Immediates are `i32`. For a 64-bit operation the CPU sign-extends them to 64 bits, so a
//!   constant outside `i32` must be materialised in a register first. For 8- and 16-bit
//!   operations the immediate must fit the width, read as signed or unsigned (checked by a
//!   `debug_assert!`); it is truncated to that width.
//! - [`alu_rm_imm`] uses the sign-extended imm8 form (`83 /op ib`) whenever the value fits, the
//!   full-width form otherwise; the short `al`/`eax` forms are not used.
//! - `lock` forms ([`lock_alu_m_r`]) take a memory destination only, as the CPU requires.
//!
//! All functions that accept a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_rm, imm_fits, put_imm, Enc, Map};
use super::operands::{Amode, GprMem};
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// The eight classic ALU operations, numbered as their ModRM opcode extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add = 0,
    Or = 1,
    Adc = 2,
    Sbb = 3,
    And = 4,
    Sub = 5,
    Xor = 6,
    Cmp = 7,
}

impl AluOp {
    /// All operations.
    pub const ALL: [AluOp; 8] = [
        AluOp::Add,
        AluOp::Or,
        AluOp::Adc,
        AluOp::Sbb,
        AluOp::And,
        AluOp::Sub,
        AluOp::Xor,
        AluOp::Cmp,
    ];

    fn digit(self) -> u8 {
        self as u8
    }
}

/// `op dst, src` with `dst` a register or memory: opcode `op*8 + {0,1}`.
pub fn alu_rm_r(
    sink: &mut impl CodeSink,
    op: AluOp,
    size: Size,
    dst: &GprMem,
    src: Gpr,
) -> Option<Rel32Fixup> {
    let base = op.digit() << 3;
    emit_rm(
        sink,
        &Enc::sized(size, Map::Legacy, base, base + 1),
        src.enc(),
        dst.into(),
        0,
    )
}

/// `op dst, src` with `src` a register or memory: opcode `op*8 + {2,3}`.
pub fn alu_r_rm(
    sink: &mut impl CodeSink,
    op: AluOp,
    size: Size,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    let base = op.digit() << 3;
    emit_rm(
        sink,
        &Enc::sized(size, Map::Legacy, base + 2, base + 3),
        dst.enc(),
        src.into(),
        0,
    )
}

/// `lock op [mem], src` (atomic read-modify-write; `cmp` is not lockable and is rejected).
pub fn lock_alu_m_r(
    sink: &mut impl CodeSink,
    op: AluOp,
    size: Size,
    dst: &Amode,
    src: Gpr,
) -> Option<Rel32Fixup> {
    debug_assert_ne!(op, AluOp::Cmp, "cmp cannot take a lock prefix");
    let base = op.digit() << 3;
    let enc = Enc::sized(size, Map::Legacy, base, base + 1).lock();
    emit_rm(sink, &enc, src.enc(), (&GprMem::Mem(*dst)).into(), 0)
}

/// Sign-extends `imm` from the operand width, for choosing between imm8 and full-width forms.
fn at_width(size: Size, imm: i32) -> i32 {
    match size {
        Size::S8 => i32::from(imm as i8),
        Size::S16 => i32::from(imm as i16),
        Size::S32 | Size::S64 => imm,
    }
}

/// Writes `opcode /digit` with an immediate: `op8` for 8 bits, `imm8_op` when the value fits in
/// a sign-extended byte, `full_op` with an imm16/imm32 otherwise (`None`: no imm8 form).
fn rm_imm(
    sink: &mut impl CodeSink,
    size: Size,
    (op8, imm8_op, full_op): (u8, Option<u8>, u8),
    digit: u8,
    dst: &GprMem,
    imm: i32,
) -> Option<Rel32Fixup> {
    debug_assert!(
        imm_fits(size, imm.into()),
        "immediate {imm} does not fit {size:?}"
    );
    let v = at_width(size, imm);
    let (enc, len) = match (size, imm8_op) {
        (Size::S8, _) => (Enc::new(Map::Legacy, op8).byte_rm(), 1),
        (_, Some(op)) if i8::try_from(v).is_ok() => (Enc::new(Map::Legacy, op).size(size), 1),
        (Size::S16, _) => (Enc::new(Map::Legacy, full_op).size(size), 2),
        _ => (Enc::new(Map::Legacy, full_op).size(size), 4),
    };
    let fixup = emit_rm(sink, &enc, digit, dst.into(), len);
    put_imm(sink, v.into(), len);
    fixup
}

/// `op dst, imm` (`80 /op ib`, `83 /op ib` or `81 /op iw/id`).
pub fn alu_rm_imm(
    sink: &mut impl CodeSink,
    op: AluOp,
    size: Size,
    dst: &GprMem,
    imm: i32,
) -> Option<Rel32Fixup> {
    rm_imm(sink, size, (0x80, Some(0x83), 0x81), op.digit(), dst, imm)
}

/// `test dst, src` (`84`/`85`).
pub fn test_rm_r(
    sink: &mut impl CodeSink,
    size: Size,
    dst: &GprMem,
    src: Gpr,
) -> Option<Rel32Fixup> {
    emit_rm(
        sink,
        &Enc::sized(size, Map::Legacy, 0x84, 0x85),
        src.enc(),
        dst.into(),
        0,
    )
}

/// `test dst, imm` (`F6 /0 ib` or `F7 /0 iw/id`; there is no imm8 form for wider sizes).
pub fn test_rm_imm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: &GprMem,
    imm: i32,
) -> Option<Rel32Fixup> {
    rm_imm(sink, size, (0xF6, None, 0xF7), 0, dst, imm)
}

/// One-operand read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `inc` (`FE`/`FF /0`).
    Inc,
    /// `dec` (`FE`/`FF /1`).
    Dec,
    /// `not` (`F6`/`F7 /2`).
    Not,
    /// `neg` (`F6`/`F7 /3`).
    Neg,
}

impl UnaryOp {
    /// All operations.
    pub const ALL: [UnaryOp; 4] = [UnaryOp::Inc, UnaryOp::Dec, UnaryOp::Not, UnaryOp::Neg];
}

/// `op dst` for [`UnaryOp`].
pub fn unary_rm(
    sink: &mut impl CodeSink,
    op: UnaryOp,
    size: Size,
    dst: &GprMem,
) -> Option<Rel32Fixup> {
    let (op8, op_full, digit) = match op {
        UnaryOp::Inc => (0xFE, 0xFF, 0),
        UnaryOp::Dec => (0xFE, 0xFF, 1),
        UnaryOp::Not => (0xF6, 0xF7, 2),
        UnaryOp::Neg => (0xF6, 0xF7, 3),
    };
    emit_rm(
        sink,
        &Enc::sized_ext(size, Map::Legacy, op8, op_full),
        digit,
        dst.into(),
        0,
    )
}
