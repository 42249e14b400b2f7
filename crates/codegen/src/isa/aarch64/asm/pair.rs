//! Load and store pair: `ldp`/`stp` (and `ldpsw`) of integer and FP/SIMD registers with a
//! signed scaled 7-bit offset, pre-index or post-index ([`PairAmode`]).
//!
//! # Contract
//!
//! Offsets are an index in units of the access size of one register, as the field holds
//! them ([`pair_index`] converts a byte offset). Loading one register twice, and a writeback
//! base equal to an integer transfer register, are CONSTRAINED UNPREDICTABLE and caught by
//! `debug_assert!`s.

use super::operands::SImm7;
use super::regs::{GprSp, GprZr, SdqSize, Size, Vreg};
use super::{ra_field, rd_field, rn_field, WordSink};

/// An addressing mode of a load/store pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairAmode {
    /// `[rn, #index * size]`.
    Offset { rn: GprSp, index: SImm7 },
    /// `[rn, #index * size]!`: `rn` is updated first.
    PreIndex { rn: GprSp, index: SImm7 },
    /// `[rn], #index * size`: `rn` is updated after the access.
    PostIndex { rn: GprSp, index: SImm7 },
}

impl PairAmode {
    /// The base register.
    pub const fn rn(self) -> GprSp {
        match self {
            PairAmode::Offset { rn, .. }
            | PairAmode::PreIndex { rn, .. }
            | PairAmode::PostIndex { rn, .. } => rn,
        }
    }

    /// Whether the base register is written back.
    pub const fn writes_back(self) -> bool {
        !matches!(self, PairAmode::Offset { .. })
    }

    /// The `mode`, `imm7` and `Rn` fields.
    fn fields(self) -> u32 {
        let (mode, index) = match self {
            PairAmode::PostIndex { index, .. } => (1, index),
            PairAmode::Offset { index, .. } => (2, index),
            PairAmode::PreIndex { index, .. } => (3, index),
        };
        (mode << 23) | (index.bits() << 15) | rn_field(self.rn().enc())
    }
}

/// The pair index for a byte `offset` with registers of `bytes` bytes, or `None` if it is
/// misaligned or out of range.
pub fn pair_index(offset: i64, bytes: u32) -> Option<SImm7> {
    let bytes = i64::from(bytes);
    if offset % bytes != 0 {
        return None;
    }
    SImm7::new(i32::try_from(offset / bytes).ok()?)
}

/// An integer load/store pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntPair {
    StpW,
    StpX,
    LdpW,
    LdpX,
    /// Loads two 32-bit words sign-extended into `x` registers.
    Ldpsw,
}

impl IntPair {
    /// All operations.
    pub const ALL: [IntPair; 5] = [
        IntPair::StpW,
        IntPair::StpX,
        IntPair::LdpW,
        IntPair::LdpX,
        IntPair::Ldpsw,
    ];

    /// `opc` and `L`.
    const fn fields(self) -> (u32, u32) {
        match self {
            IntPair::StpW => (0, 0),
            IntPair::StpX => (2, 0),
            IntPair::LdpW => (0, 1),
            IntPair::LdpX => (2, 1),
            IntPair::Ldpsw => (1, 1),
        }
    }

    /// Whether it loads.
    pub const fn is_load(self) -> bool {
        self.fields().1 == 1
    }

    /// Bytes accessed per register (the offset unit).
    pub const fn bytes(self) -> u32 {
        match self {
            IntPair::StpX | IntPair::LdpX => 8,
            _ => 4,
        }
    }

    /// Width of the transfer registers.
    pub const fn reg_size(self) -> Size {
        match self {
            IntPair::StpW | IntPair::LdpW => Size::S32,
            _ => Size::S64,
        }
    }
}

/// An FP/SIMD load/store pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpPair {
    Stp(SdqSize),
    Ldp(SdqSize),
}

impl FpPair {
    /// The register width (the offset unit).
    pub const fn size(self) -> SdqSize {
        match self {
            FpPair::Stp(size) | FpPair::Ldp(size) => size,
        }
    }
}

const PAIR: u32 = 0x2800_0000;

/// `ldp`/`stp`/`ldpsw rt, rt2, amode`.
pub fn ld_st_pair(sink: &mut impl WordSink, op: IntPair, rt: GprZr, rt2: GprZr, amode: PairAmode) {
    let (opc, l) = op.fields();
    debug_assert!(l == 0 || rt != rt2, "ldp of {rt:?} twice is unpredictable");
    debug_assert!(
        !(amode.writes_back()
            && amode.rn().gpr().is_some()
            && (amode.rn().enc() == rt.enc() || amode.rn().enc() == rt2.enc())),
        "writeback to a transfer register is unpredictable"
    );
    let word = PAIR | (opc << 30) | (l << 22) | amode.fields();
    sink.put_word(word | ra_field(rt2.enc()) | rd_field(rt.enc()));
}

/// `ldp`/`stp st/dt/qt, rt2, amode`.
pub fn ld_st_pair_fp(sink: &mut impl WordSink, op: FpPair, rt: Vreg, rt2: Vreg, amode: PairAmode) {
    let l = match op {
        FpPair::Stp(_) => 0,
        FpPair::Ldp(_) => 1,
    };
    debug_assert!(l == 0 || rt != rt2, "ldp of {rt:?} twice is unpredictable");
    let word = PAIR | (op.size().opc() << 30) | (1 << 26) | (l << 22) | amode.fields();
    sink.put_word(word | ra_field(rt2.enc()) | rd_field(rt.enc()));
}
