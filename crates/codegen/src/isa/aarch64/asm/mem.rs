//! Single-register loads and stores, integer and FP/SIMD, in every addressing mode
//! ([`Amode`]), and PC-relative literal loads.
//!
//! # Contract
//!
//! - The operation says the direction, access size and (for integer loads) the extension;
//!   the [`Amode`] says the addressing form, which picks the instruction: `ldr`/`str` for
//!   scaled, register-offset, pre- and post-index addresses, `ldur`/`stur` for unscaled ones.
//! - Offsets in the scaled form are an index in units of the access size, as the field
//!   holds them ([`Amode::scaled`] converts a byte offset); the register-offset form's
//!   `scaled` flag shifts the index by log2 of the access size. Both therefore mean different
//!   byte offsets for different access sizes, by the architecture's definition.
//! - The base is SP-capable; the index register and the integer transfer register are
//!   ZR-numbered. A writeback base equal to the integer transfer register is CONSTRAINED
//!   UNPREDICTABLE and caught by a `debug_assert!`.

use super::label_use::{Fixup, LabelUse, Literal19Offset};
use super::operands::{SImm9, UImm12};
use super::regs::{FpMemSize, GprSp, GprZr, MemSize, SdqSize, Size, Vreg};
use super::{rd_field, rm_field, rn_field, WordSink};

/// How the index register of a register-offset address is extended (the `option` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexExtend {
    /// A `w` index, zero-extended.
    Uxtw = 2,
    /// An `x` index, unchanged (`lsl`).
    Lsl = 3,
    /// A `w` index, sign-extended.
    Sxtw = 6,
    /// An `x` index, unchanged (`sxtx`; same as `lsl`).
    Sxtx = 7,
}

impl IndexExtend {
    /// All extensions.
    pub const ALL: [IndexExtend; 4] = [
        IndexExtend::Uxtw,
        IndexExtend::Lsl,
        IndexExtend::Sxtw,
        IndexExtend::Sxtx,
    ];

    /// Width of the index register.
    pub const fn reg_size(self) -> Size {
        match self {
            IndexExtend::Uxtw | IndexExtend::Sxtw => Size::S32,
            IndexExtend::Lsl | IndexExtend::Sxtx => Size::S64,
        }
    }
}

/// An addressing mode of a single-register load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Amode {
    /// `[rn, #index * access size]`: unsigned scaled offset.
    Scaled { rn: GprSp, index: UImm12 },
    /// `[rn, #offset]`: signed byte offset, unscaled (`ldur`/`stur`).
    Unscaled { rn: GprSp, offset: SImm9 },
    /// `[rn, #offset]!`: `rn += offset`, then access at `rn`.
    PreIndex { rn: GprSp, offset: SImm9 },
    /// `[rn], #offset`: access at `rn`, then `rn += offset`.
    PostIndex { rn: GprSp, offset: SImm9 },
    /// `[rn, rm{, extend {#amount}}]`: `rn + extend(rm) << (scaled ? log2(size) : 0)`.
    RegOffset {
        rn: GprSp,
        rm: GprZr,
        extend: IndexExtend,
        scaled: bool,
    },
}

impl Amode {
    /// `[rn]`.
    pub const fn base(rn: GprSp) -> Amode {
        Amode::Scaled {
            rn,
            index: UImm12::new(0).expect("0 fits"),
        }
    }

    /// `[rn, #offset]` in the scaled form for an access of `bytes` bytes, or `None` if
    /// `offset` is negative, misaligned or too large.
    pub fn scaled(rn: GprSp, offset: i64, bytes: u32) -> Option<Amode> {
        let bytes = i64::from(bytes);
        if offset < 0 || offset % bytes != 0 {
            return None;
        }
        let index = UImm12::new(u32::try_from(offset / bytes).ok()?)?;
        Some(Amode::Scaled { rn, index })
    }

    /// `[rn, #offset]` in the scaled form if it fits, else the unscaled form, else `None`.
    pub fn offset(rn: GprSp, offset: i64, bytes: u32) -> Option<Amode> {
        Amode::scaled(rn, offset, bytes).or_else(|| {
            let offset = SImm9::new(i32::try_from(offset).ok()?)?;
            Some(Amode::Unscaled { rn, offset })
        })
    }

    /// The base register.
    pub const fn rn(self) -> GprSp {
        match self {
            Amode::Scaled { rn, .. }
            | Amode::Unscaled { rn, .. }
            | Amode::PreIndex { rn, .. }
            | Amode::PostIndex { rn, .. }
            | Amode::RegOffset { rn, .. } => rn,
        }
    }

    /// Whether the base register is written back.
    pub const fn writes_back(self) -> bool {
        matches!(self, Amode::PreIndex { .. } | Amode::PostIndex { .. })
    }

    /// The addressing-mode bits of a load/store with the given `size`, `V` and `opc` fields.
    fn word(self, size: u32, v: u32, opc: u32) -> u32 {
        let common = (size << 30) | (v << 26) | (opc << 22) | rn_field(self.rn().enc());
        common
            | match self {
                Amode::Scaled { index, .. } => 0x3900_0000 | (index.get() << 10),
                Amode::Unscaled { offset, .. } => 0x3800_0000 | (offset.bits() << 12),
                Amode::PostIndex { offset, .. } => 0x3800_0400 | (offset.bits() << 12),
                Amode::PreIndex { offset, .. } => 0x3800_0C00 | (offset.bits() << 12),
                Amode::RegOffset {
                    rm, extend, scaled, ..
                } => {
                    let s = u32::from(scaled) << 12;
                    0x3820_0800 | rm_field(rm.enc()) | ((extend as u32) << 13) | s
                }
            }
    }
}

/// An integer load or store: direction, access size and extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntLdSt {
    Strb,
    Strh,
    StrW,
    StrX,
    /// Zero-extending loads.
    Ldrb,
    Ldrh,
    LdrW,
    LdrX,
    /// Sign-extending loads into a `w` or an `x` register.
    LdrsbW,
    LdrsbX,
    LdrshW,
    LdrshX,
    Ldrsw,
}

impl IntLdSt {
    /// All operations.
    pub const ALL: [IntLdSt; 13] = [
        IntLdSt::Strb,
        IntLdSt::Strh,
        IntLdSt::StrW,
        IntLdSt::StrX,
        IntLdSt::Ldrb,
        IntLdSt::Ldrh,
        IntLdSt::LdrW,
        IntLdSt::LdrX,
        IntLdSt::LdrsbW,
        IntLdSt::LdrsbX,
        IntLdSt::LdrshW,
        IntLdSt::LdrshX,
        IntLdSt::Ldrsw,
    ];

    /// The access size and the `opc` field.
    const fn fields(self) -> (MemSize, u32) {
        match self {
            IntLdSt::Strb => (MemSize::S8, 0),
            IntLdSt::Strh => (MemSize::S16, 0),
            IntLdSt::StrW => (MemSize::S32, 0),
            IntLdSt::StrX => (MemSize::S64, 0),
            IntLdSt::Ldrb => (MemSize::S8, 1),
            IntLdSt::Ldrh => (MemSize::S16, 1),
            IntLdSt::LdrW => (MemSize::S32, 1),
            IntLdSt::LdrX => (MemSize::S64, 1),
            IntLdSt::LdrsbX => (MemSize::S8, 2),
            IntLdSt::LdrsbW => (MemSize::S8, 3),
            IntLdSt::LdrshX => (MemSize::S16, 2),
            IntLdSt::LdrshW => (MemSize::S16, 3),
            IntLdSt::Ldrsw => (MemSize::S32, 2),
        }
    }

    /// The access size.
    pub const fn mem_size(self) -> MemSize {
        self.fields().0
    }

    /// Whether it loads.
    pub const fn is_load(self) -> bool {
        self.fields().1 != 0
    }

    /// Width of the transfer register.
    pub const fn reg_size(self) -> Size {
        match self {
            IntLdSt::StrX | IntLdSt::LdrX | IntLdSt::LdrsbX | IntLdSt::LdrshX | IntLdSt::Ldrsw => {
                Size::S64
            }
            _ => Size::S32,
        }
    }
}

/// An FP/SIMD register load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpLdSt {
    Str(FpMemSize),
    Ldr(FpMemSize),
}

impl FpLdSt {
    /// The access size.
    pub const fn mem_size(self) -> FpMemSize {
        match self {
            FpLdSt::Str(size) | FpLdSt::Ldr(size) => size,
        }
    }

    /// The `size` and `opc` fields (128 bits is size 0 with `opc<1>` set).
    const fn fields(self) -> (u32, u32) {
        let (size, load) = match self {
            FpLdSt::Str(size) => (size, 0),
            FpLdSt::Ldr(size) => (size, 1),
        };
        match size {
            FpMemSize::S128 => (0, 2 | load),
            _ => (size.log2_bytes(), load),
        }
    }
}

/// An integer load or store of `rt` at `amode`.
pub fn ld_st(sink: &mut impl WordSink, op: IntLdSt, rt: GprZr, amode: Amode) {
    debug_assert!(
        !(amode.writes_back() && amode.rn().gpr().is_some() && amode.rn().enc() == rt.enc()),
        "writeback to the transfer register {rt:?} is unpredictable"
    );
    let (size, opc) = op.fields();
    sink.put_word(amode.word(size.log2_bytes(), 0, opc) | rd_field(rt.enc()));
}

/// An FP/SIMD register load or store of `rt` at `amode`.
pub fn ld_st_fp(sink: &mut impl WordSink, op: FpLdSt, rt: Vreg, amode: Amode) {
    let (size, opc) = op.fields();
    sink.put_word(amode.word(size, 1, opc) | rd_field(rt.enc()));
}

/// Integer loads from a PC-relative literal (the `opc` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LiteralLoad {
    LdrW = 0,
    LdrX = 1,
    Ldrsw = 2,
}

impl LiteralLoad {
    /// All loads.
    pub const ALL: [LiteralLoad; 3] = [LiteralLoad::LdrW, LiteralLoad::LdrX, LiteralLoad::Ldrsw];

    /// Width of the destination register.
    pub const fn reg_size(self) -> Size {
        match self {
            LiteralLoad::LdrW => Size::S32,
            LiteralLoad::LdrX | LiteralLoad::Ldrsw => Size::S64,
        }
    }
}

/// `ldr`/`ldrsw rt, <pc + offset>`.
pub fn ldr_literal(
    sink: &mut impl WordSink,
    op: LiteralLoad,
    rt: GprZr,
    offset: Literal19Offset,
) -> Fixup {
    let word = ((op as u32) << 30) | 0x1800_0000 | rd_field(rt.enc());
    LabelUse::Literal19.put(sink, word, offset.bytes())
}

/// `ldr st/dt/qt, <pc + offset>`.
pub fn ldr_literal_fp(
    sink: &mut impl WordSink,
    size: SdqSize,
    rt: Vreg,
    offset: Literal19Offset,
) -> Fixup {
    let word = (size.opc() << 30) | 0x1C00_0000 | rd_field(rt.enc());
    LabelUse::Literal19.put(sink, word, offset.bytes())
}
