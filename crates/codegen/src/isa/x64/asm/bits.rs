//! Bit manipulation: `bsf`/`bsr`, `lzcnt`/`tzcnt`/`popcnt`, `bswap`, `bt`, and the VEX-encoded
//! BMI1 (`andn`, `bextr`, `blsi`, `blsmsk`, `blsr`) and BMI2 (`bzhi`, `shlx`, `sarx`, `shrx`)
//! instructions.
//!
//! # Contract
//!
//! - [`bit_count`] and [`bt_rm_r`]/[`bt_rm_imm`] take 16/32/64 bits, [`bswap`] 32/64 bits, the
//!   VEX forms 32/64 bits (`debug_assert!` each).
//! - `lzcnt`, `tzcnt` and `popcnt` need their CPU features (LZCNT/BMI1/POPCNT); on older CPUs the
//!   first two silently decode as `bsr`/`bsf`, so the caller must check the feature before using
//!   them. `bsf`/`bsr` leave the destination undefined for a zero source.
//! - The VEX forms need BMI1/BMI2; their operands are all GPRs, the `vvvv` operand is always a
//!   register, and the shift count of `shlx`/`sarx`/`shrx` is masked by the CPU like other shifts.
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_opcode_reg, emit_rm, emit_vex_rm, Enc, Map, Vex, VexPp};
use super::operands::GprMem;
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// Bit scans and counts of the shape `op r, r/m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitCount {
    /// Index of the lowest set bit (`0F BC`).
    Bsf,
    /// Index of the highest set bit (`0F BD`).
    Bsr,
    /// Trailing zero count (BMI1, `F3 0F BC`).
    Tzcnt,
    /// Leading zero count (LZCNT, `F3 0F BD`).
    Lzcnt,
    /// Population count (POPCNT, `F3 0F B8`).
    Popcnt,
}

impl BitCount {
    /// Every operation.
    pub const ALL: [BitCount; 5] = [
        BitCount::Bsf,
        BitCount::Bsr,
        BitCount::Tzcnt,
        BitCount::Lzcnt,
        BitCount::Popcnt,
    ];
}

fn no_byte(size: Size, what: &str) {
    debug_assert_ne!(size, Size::S8, "{what} has no 8-bit form");
}

/// `op dst, src` for a [`BitCount`].
pub fn bit_count(
    sink: &mut impl CodeSink,
    op: BitCount,
    size: Size,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    no_byte(size, "bit counting");
    let enc = match op {
        BitCount::Bsf => Enc::new(Map::M0F, 0xBC),
        BitCount::Bsr => Enc::new(Map::M0F, 0xBD),
        BitCount::Tzcnt => Enc::new(Map::M0F, 0xBC).prefix(0xF3),
        BitCount::Lzcnt => Enc::new(Map::M0F, 0xBD).prefix(0xF3),
        BitCount::Popcnt => Enc::new(Map::M0F, 0xB8).prefix(0xF3),
    };
    emit_rm(sink, &enc.size(size), dst.enc(), src.into(), 0)
}

/// `bswap reg` (`0F C8+r`).
pub fn bswap(sink: &mut impl CodeSink, size: Size, reg: Gpr) {
    debug_assert!(
        matches!(size, Size::S32 | Size::S64),
        "bswap is 32 or 64 bits"
    );
    emit_opcode_reg(sink, &Enc::new(Map::M0F, 0xC8).size(size), reg, false);
}

/// `bt base, bit` (`0F A3`): CF = the selected bit. With a memory operand the bit offset may
/// address beyond the operand.
pub fn bt_rm_r(
    sink: &mut impl CodeSink,
    size: Size,
    base: &GprMem,
    bit: Gpr,
) -> Option<Rel32Fixup> {
    no_byte(size, "bt");
    emit_rm(
        sink,
        &Enc::new(Map::M0F, 0xA3).size(size),
        bit.enc(),
        base.into(),
        0,
    )
}

/// `bt base, imm8` (`0F BA /4 ib`).
pub fn bt_rm_imm(
    sink: &mut impl CodeSink,
    size: Size,
    base: &GprMem,
    bit: u8,
) -> Option<Rel32Fixup> {
    no_byte(size, "bt");
    let fixup = emit_rm(
        sink,
        &Enc::new(Map::M0F, 0xBA).size(size),
        4,
        base.into(),
        1,
    );
    sink.put1(bit);
    fixup
}

fn vex_w(size: Size) -> bool {
    debug_assert!(
        matches!(size, Size::S32 | Size::S64),
        "VEX integer ops are 32 or 64 bits"
    );
    size == Size::S64
}

fn vex38(pp: VexPp, size: Size, opcode: u8) -> Vex {
    Vex {
        pp,
        map: Map::M0F38,
        w: vex_w(size),
        opcode,
    }
}

/// `andn dst, a, b`: `dst = !a & b` (BMI1, `VEX.0F38 F2`).
pub fn andn(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Gpr,
    a: Gpr,
    b: &GprMem,
) -> Option<Rel32Fixup> {
    emit_vex_rm(
        sink,
        &vex38(VexPp::None, size, 0xF2),
        dst.enc(),
        a.enc(),
        b.into(),
        0,
    )
}

/// BMI1 operations on the lowest set bit (`VEX.0F38 F3 /n`, destination in `vvvv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LowestBit {
    /// `blsr`: clear it (`/1`).
    Blsr = 1,
    /// `blsmsk`: mask up to and including it (`/2`).
    Blsmsk = 2,
    /// `blsi`: isolate it (`/3`).
    Blsi = 3,
}

impl LowestBit {
    /// Every operation.
    pub const ALL: [LowestBit; 3] = [LowestBit::Blsr, LowestBit::Blsmsk, LowestBit::Blsi];
}

/// `blsr/blsmsk/blsi dst, src` (BMI1).
pub fn lowest_bit(
    sink: &mut impl CodeSink,
    op: LowestBit,
    size: Size,
    dst: Gpr,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    emit_vex_rm(
        sink,
        &vex38(VexPp::None, size, 0xF3),
        op as u8,
        dst.enc(),
        src.into(),
        0,
    )
}

/// `bextr dst, src, control` (BMI1, `VEX.0F38 F7`): bit field of `src` starting at
/// `control[7:0]`, `control[15:8]` bits long.
pub fn bextr(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Gpr,
    src: &GprMem,
    control: Gpr,
) -> Option<Rel32Fixup> {
    emit_vex_rm(
        sink,
        &vex38(VexPp::None, size, 0xF7),
        dst.enc(),
        control.enc(),
        src.into(),
        0,
    )
}

/// `bzhi dst, src, index` (BMI2, `VEX.0F38 F5`): `src` with bits from `index[7:0]` up cleared.
pub fn bzhi(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Gpr,
    src: &GprMem,
    index: Gpr,
) -> Option<Rel32Fixup> {
    emit_vex_rm(
        sink,
        &vex38(VexPp::None, size, 0xF5),
        dst.enc(),
        index.enc(),
        src.into(),
        0,
    )
}

/// BMI2 shifts with the count in any register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftX {
    /// `shlx` (`VEX.66.0F38 F7`).
    Shlx,
    /// `sarx` (`VEX.F3.0F38 F7`).
    Sarx,
    /// `shrx` (`VEX.F2.0F38 F7`).
    Shrx,
}

impl ShiftX {
    /// Every operation.
    pub const ALL: [ShiftX; 3] = [ShiftX::Shlx, ShiftX::Sarx, ShiftX::Shrx];
}

/// `shlx/sarx/shrx dst, src, count` (BMI2; flags unchanged).
pub fn shiftx(
    sink: &mut impl CodeSink,
    op: ShiftX,
    size: Size,
    dst: Gpr,
    src: &GprMem,
    count: Gpr,
) -> Option<Rel32Fixup> {
    let pp = match op {
        ShiftX::Shlx => VexPp::P66,
        ShiftX::Sarx => VexPp::PF3,
        ShiftX::Shrx => VexPp::PF2,
    };
    emit_vex_rm(
        sink,
        &vex38(pp, size, 0xF7),
        dst.enc(),
        count.enc(),
        src.into(),
        0,
    )
}
