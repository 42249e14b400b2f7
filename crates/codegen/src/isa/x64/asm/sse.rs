//! Scalar SSE/SSE2/SSE4.1 instructions: moves between XMM registers, memory and GPRs, scalar
//! arithmetic, bitwise logic, comparisons, conversions and rounding.
//!
//! # Contract
//!
//! - [`sse_r_rm`] covers every `xmm, xmm/m` form in [`SseOp`]; [`SseOp::mem_bytes`] is the width
//!   of the memory access it makes (4/8 for scalar ops, 16 for packed/full-register ones, which
//!   need 16-byte alignment for the non-`u` packed forms except where noted by the SDM).
//! - Stores go through [`sse_store`] with a memory destination only.
//! - GPR↔XMM transfers and conversions take the integer width as a [`Size`] that must be 32 or
//!   64 bits (`debug_assert!`); the float width is a [`FloatSize`].
//! - Scalar ops write only the low lane of `dst` and keep the rest (the lowering treats the
//!   upper lanes as undefined); `movss`/`movsd` from memory zero the upper lanes.
//! - `roundss`/`roundsd` need SSE4.1; the caller checks the CPU feature.
//!
//! Functions with a memory operand return its RIP-relative fixup, if any.

use super::encoding::{emit_rm, Enc, Map};
use super::operands::{Amode, GprMem, XmmMem};
use super::regs::{Gpr, Size, Xmm};
use super::{CodeSink, Rel32Fixup};

/// Scalar float width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatSize {
    F32,
    F64,
}

impl FloatSize {
    /// Both widths.
    pub const ALL: [FloatSize; 2] = [FloatSize::F32, FloatSize::F64];

    /// The scalar-single/double mandatory prefix.
    fn scalar_prefix(self) -> u8 {
        match self {
            FloatSize::F32 => 0xF3,
            FloatSize::F64 => 0xF2,
        }
    }

    /// Width in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            FloatSize::F32 => 4,
            FloatSize::F64 => 8,
        }
    }
}

/// SSE instructions of the shape `op xmm, xmm/m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SseOp {
    Movss,
    Movsd,
    Movaps,
    Movapd,
    Movups,
    Movupd,
    Movdqa,
    Movdqu,
    /// `movq xmm, xmm/m64` (`F3 0F 7E`): zero-extends the low 64 bits.
    Movq,
    Addss,
    Addsd,
    Subss,
    Subsd,
    Mulss,
    Mulsd,
    Divss,
    Divsd,
    Minss,
    Minsd,
    Maxss,
    Maxsd,
    Sqrtss,
    Sqrtsd,
    Andps,
    Andpd,
    Andnps,
    Andnpd,
    Orps,
    Orpd,
    Xorps,
    Xorpd,
    Pand,
    Pandn,
    Por,
    Pxor,
    Ucomiss,
    Ucomisd,
    Comiss,
    Comisd,
    Cvtss2sd,
    Cvtsd2ss,
}

impl SseOp {
    /// Every operation.
    pub const ALL: [SseOp; 41] = [
        SseOp::Movss,
        SseOp::Movsd,
        SseOp::Movaps,
        SseOp::Movapd,
        SseOp::Movups,
        SseOp::Movupd,
        SseOp::Movdqa,
        SseOp::Movdqu,
        SseOp::Movq,
        SseOp::Addss,
        SseOp::Addsd,
        SseOp::Subss,
        SseOp::Subsd,
        SseOp::Mulss,
        SseOp::Mulsd,
        SseOp::Divss,
        SseOp::Divsd,
        SseOp::Minss,
        SseOp::Minsd,
        SseOp::Maxss,
        SseOp::Maxsd,
        SseOp::Sqrtss,
        SseOp::Sqrtsd,
        SseOp::Andps,
        SseOp::Andpd,
        SseOp::Andnps,
        SseOp::Andnpd,
        SseOp::Orps,
        SseOp::Orpd,
        SseOp::Xorps,
        SseOp::Xorpd,
        SseOp::Pand,
        SseOp::Pandn,
        SseOp::Por,
        SseOp::Pxor,
        SseOp::Ucomiss,
        SseOp::Ucomisd,
        SseOp::Comiss,
        SseOp::Comisd,
        SseOp::Cvtss2sd,
        SseOp::Cvtsd2ss,
    ];

    /// (mandatory prefix, opcode in the `0F` map).
    fn encoding(self) -> (Option<u8>, u8) {
        use SseOp::*;
        const SS: Option<u8> = Some(0xF3);
        const SD: Option<u8> = Some(0xF2);
        const PD: Option<u8> = Some(0x66);
        match self {
            Movss => (SS, 0x10),
            Movsd => (SD, 0x10),
            Movaps => (None, 0x28),
            Movapd => (PD, 0x28),
            Movups => (None, 0x10),
            Movupd => (PD, 0x10),
            Movdqa => (PD, 0x6F),
            Movdqu => (SS, 0x6F),
            Movq => (SS, 0x7E),
            Addss => (SS, 0x58),
            Addsd => (SD, 0x58),
            Mulss => (SS, 0x59),
            Mulsd => (SD, 0x59),
            Subss => (SS, 0x5C),
            Subsd => (SD, 0x5C),
            Minss => (SS, 0x5D),
            Minsd => (SD, 0x5D),
            Divss => (SS, 0x5E),
            Divsd => (SD, 0x5E),
            Maxss => (SS, 0x5F),
            Maxsd => (SD, 0x5F),
            Sqrtss => (SS, 0x51),
            Sqrtsd => (SD, 0x51),
            Andps => (None, 0x54),
            Andpd => (PD, 0x54),
            Andnps => (None, 0x55),
            Andnpd => (PD, 0x55),
            Orps => (None, 0x56),
            Orpd => (PD, 0x56),
            Xorps => (None, 0x57),
            Xorpd => (PD, 0x57),
            Pand => (PD, 0xDB),
            Pandn => (PD, 0xDF),
            Por => (PD, 0xEB),
            Pxor => (PD, 0xEF),
            Ucomiss => (None, 0x2E),
            Ucomisd => (PD, 0x2E),
            Comiss => (None, 0x2F),
            Comisd => (PD, 0x2F),
            Cvtss2sd => (SS, 0x5A),
            Cvtsd2ss => (SD, 0x5A),
        }
    }

    /// Bytes read from a memory source.
    pub fn mem_bytes(self) -> u32 {
        use SseOp::*;
        match self {
            Movss | Addss | Subss | Mulss | Divss | Minss | Maxss | Sqrtss | Ucomiss | Comiss
            | Cvtss2sd => 4,
            Movsd | Addsd | Subsd | Mulsd | Divsd | Minsd | Maxsd | Sqrtsd | Ucomisd | Comisd
            | Cvtsd2ss | Movq => 8,
            Movaps | Movapd | Movups | Movupd | Movdqa | Movdqu | Andps | Andpd | Andnps
            | Andnpd | Orps | Orpd | Xorps | Xorpd | Pand | Pandn | Por | Pxor => 16,
        }
    }
}

fn sse_enc(prefix: Option<u8>, map: Map, opcode: u8) -> Enc {
    let enc = Enc::new(map, opcode);
    match prefix {
        Some(p) => enc.prefix(p),
        None => enc,
    }
}

/// `op dst, src` for an [`SseOp`].
pub fn sse_r_rm(sink: &mut impl CodeSink, op: SseOp, dst: Xmm, src: &XmmMem) -> Option<Rel32Fixup> {
    let (prefix, opcode) = op.encoding();
    emit_rm(
        sink,
        &sse_enc(prefix, Map::M0F, opcode),
        dst.enc(),
        src.into(),
        0,
    )
}

/// SSE stores `op m, xmm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SseStore {
    Movss,
    Movsd,
    Movaps,
    Movapd,
    Movups,
    Movupd,
    Movdqa,
    Movdqu,
    /// `movq m64, xmm` (`66 0F D6`).
    Movq,
}

impl SseStore {
    /// Every store.
    pub const ALL: [SseStore; 9] = [
        SseStore::Movss,
        SseStore::Movsd,
        SseStore::Movaps,
        SseStore::Movapd,
        SseStore::Movups,
        SseStore::Movupd,
        SseStore::Movdqa,
        SseStore::Movdqu,
        SseStore::Movq,
    ];

    fn encoding(self) -> (Option<u8>, u8) {
        match self {
            SseStore::Movss => (Some(0xF3), 0x11),
            SseStore::Movsd => (Some(0xF2), 0x11),
            SseStore::Movaps => (None, 0x29),
            SseStore::Movapd => (Some(0x66), 0x29),
            SseStore::Movups => (None, 0x11),
            SseStore::Movupd => (Some(0x66), 0x11),
            SseStore::Movdqa => (Some(0x66), 0x7F),
            SseStore::Movdqu => (Some(0xF3), 0x7F),
            SseStore::Movq => (Some(0x66), 0xD6),
        }
    }

    /// Bytes written.
    pub fn mem_bytes(self) -> u32 {
        match self {
            SseStore::Movss => 4,
            SseStore::Movsd | SseStore::Movq => 8,
            _ => 16,
        }
    }
}

/// `op dst, src` for an [`SseStore`].
pub fn sse_store(
    sink: &mut impl CodeSink,
    op: SseStore,
    dst: &Amode,
    src: Xmm,
) -> Option<Rel32Fixup> {
    let (prefix, opcode) = op.encoding();
    emit_rm(
        sink,
        &sse_enc(prefix, Map::M0F, opcode),
        src.enc(),
        (&XmmMem::Mem(*dst)).into(),
        0,
    )
}

fn int_size_w(size: Size) -> bool {
    debug_assert!(
        matches!(size, Size::S32 | Size::S64),
        "GPR side must be 32 or 64 bits"
    );
    size == Size::S64
}

/// `movd/movq dst, src`: GPR or memory into the low lane of an XMM register, zeroing the rest
/// (`66 [REX.W] 0F 6E`).
pub fn movd_to_xmm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: Xmm,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    let enc = Enc::new(Map::M0F, 0x6E).prefix(0x66).w(int_size_w(size));
    emit_rm(sink, &enc, dst.enc(), src.into(), 0)
}

/// `movd/movq dst, src`: the low 32/64 bits of an XMM register into a GPR or memory
/// (`66 [REX.W] 0F 7E`).
pub fn movd_from_xmm(
    sink: &mut impl CodeSink,
    size: Size,
    dst: &GprMem,
    src: Xmm,
) -> Option<Rel32Fixup> {
    let enc = Enc::new(Map::M0F, 0x7E).prefix(0x66).w(int_size_w(size));
    emit_rm(sink, &enc, src.enc(), dst.into(), 0)
}

/// `cvtsi2ss/cvtsi2sd dst, src`: signed 32/64-bit integer to float (`F3`/`F2 [REX.W] 0F 2A`).
pub fn cvt_int_to_float(
    sink: &mut impl CodeSink,
    fsize: FloatSize,
    isize: Size,
    dst: Xmm,
    src: &GprMem,
) -> Option<Rel32Fixup> {
    let enc = Enc::new(Map::M0F, 0x2A)
        .prefix(fsize.scalar_prefix())
        .w(int_size_w(isize));
    emit_rm(sink, &enc, dst.enc(), src.into(), 0)
}

/// `cvttss2si/cvttsd2si dst, src` (truncating, `0F 2C`) or, with `truncate == false`,
/// `cvtss2si/cvtsd2si` (current rounding mode, `0F 2D`). Out-of-range inputs and NaN produce
/// the "integer indefinite" value `1 << (bits - 1)`.
pub fn cvt_float_to_int(
    sink: &mut impl CodeSink,
    fsize: FloatSize,
    isize: Size,
    truncate: bool,
    dst: Gpr,
    src: &XmmMem,
) -> Option<Rel32Fixup> {
    let opcode = if truncate { 0x2C } else { 0x2D };
    let enc = Enc::new(Map::M0F, opcode)
        .prefix(fsize.scalar_prefix())
        .w(int_size_w(isize));
    emit_rm(sink, &enc, dst.enc(), src.into(), 0)
}

/// Rounding modes of `roundss`/`roundsd` (the immediate's low two bits; bit 2 clear selects
/// them over MXCSR, bit 3 clear keeps the precision exception, which is masked by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundMode {
    Nearest = 0,
    Down = 1,
    Up = 2,
    Zero = 3,
}

impl RoundMode {
    /// Every mode.
    pub const ALL: [RoundMode; 4] = [
        RoundMode::Nearest,
        RoundMode::Down,
        RoundMode::Up,
        RoundMode::Zero,
    ];
}

/// `roundss/roundsd dst, src, mode` (SSE4.1, `66 0F 3A 0A`/`0B ib`).
pub fn round(
    sink: &mut impl CodeSink,
    fsize: FloatSize,
    dst: Xmm,
    src: &XmmMem,
    mode: RoundMode,
) -> Option<Rel32Fixup> {
    let opcode = match fsize {
        FloatSize::F32 => 0x0A,
        FloatSize::F64 => 0x0B,
    };
    let fixup = emit_rm(
        sink,
        &Enc::new(Map::M0F3A, opcode).prefix(0x66),
        dst.enc(),
        src.into(),
        1,
    );
    sink.put1(mode as u8);
    fixup
}

/// Predicates of `cmpss`/`cmpsd` (the immediate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FcmpPred {
    Eq = 0,
    Lt = 1,
    Le = 2,
    Unord = 3,
    Neq = 4,
    Nlt = 5,
    Nle = 6,
    Ord = 7,
}

impl FcmpPred {
    /// Every predicate.
    pub const ALL: [FcmpPred; 8] = [
        FcmpPred::Eq,
        FcmpPred::Lt,
        FcmpPred::Le,
        FcmpPred::Unord,
        FcmpPred::Neq,
        FcmpPred::Nlt,
        FcmpPred::Nle,
        FcmpPred::Ord,
    ];
}

/// `cmpss/cmpsd dst, src, pred` (`F3`/`F2 0F C2 ib`): the low lane of `dst` becomes all ones
/// or all zeros.
pub fn cmp_scalar(
    sink: &mut impl CodeSink,
    fsize: FloatSize,
    dst: Xmm,
    src: &XmmMem,
    pred: FcmpPred,
) -> Option<Rel32Fixup> {
    let enc = Enc::new(Map::M0F, 0xC2).prefix(fsize.scalar_prefix());
    let fixup = emit_rm(sink, &enc, dst.enc(), src.into(), 1);
    sink.put1(pred as u8);
    fixup
}
