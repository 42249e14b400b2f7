//! Packed (128-bit vector) SSE2/SSSE3/SSE4.1 instructions: integer and float lane
//! arithmetic, logic, comparisons, shifts, shuffles, lane insertion and extraction, and
//! sign-mask extraction.
//!
//! # Contract
//!
//! - [`vec_r_rm`] covers every `xmm, xmm/m128` form in [`VecOp`] (two-address
//!   `dst = dst op src`, or `dst = op src` for the unary ones, [`VecOp::is_unary`]); a memory
//!   source is 16 bytes and, for these legacy-SSE forms, must be 16-byte aligned (callers
//!   pass registers or pool constants, which the buffer aligns).
//! - [`vec_r_rm_imm`] covers the forms with an 8-bit immediate ([`VecImmOp`]).
//! - [`vec_shift_imm`] shifts lanes by an immediate (`66 0F 71/72/73 /digit ib`).
//! - [`pinsr`]/[`pextr`] move one lane between a GPR and an XMM register; the `b`, `d`
//!   and `q` lanes need SSE4.1, `w` is SSE2. [`movmsk`] gathers sign bits into a GPR.
//! - [`vfmadd213`] is FMA's fused multiply-add (VEX, 128 bits), which needs the FMA feature.
//! - Which forms need SSSE3 or SSE4.1 is [`VecOp::needs`]; the caller checks the CPU
//!   features (the selection rules do).
//!
//! Every form is cross-checked against iced-x86 in `asm/tests/vec.rs`. Functions with a
//! memory operand return its RIP-relative fixup, if any. Cost: O(1) per instruction.

use super::encoding::{emit_rm, emit_vex_rm, Enc, Map, Vex, VexPp};
use super::operands::{GprMem, XmmMem};
use super::regs::{Gpr, Xmm};
use super::{CodeSink, Rel32Fixup};

/// The instruction-set level a form needs beyond SSE2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    Sse2,
    Ssse3,
    Sse41,
}

/// Vector instructions of the shape `op xmm, xmm/m128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VecOp {
    Paddb,
    Paddw,
    Paddd,
    Paddq,
    Psubb,
    Psubw,
    Psubd,
    Psubq,
    Paddsb,
    Paddsw,
    Paddusb,
    Paddusw,
    Psubsb,
    Psubsw,
    Psubusb,
    Psubusw,
    Pmullw,
    Pmuludq,
    Pmulld,
    Pavgb,
    Pavgw,
    Pand,
    Pandn,
    Por,
    Pxor,
    Pcmpeqb,
    Pcmpeqw,
    Pcmpeqd,
    Pcmpeqq,
    Pcmpgtb,
    Pcmpgtw,
    Pcmpgtd,
    Pminub,
    Pmaxub,
    Pminsw,
    Pmaxsw,
    Pminsb,
    Pmaxsb,
    Pminuw,
    Pmaxuw,
    Pminsd,
    Pmaxsd,
    Pminud,
    Pmaxud,
    Pabsb,
    Pabsw,
    Pabsd,
    Pshufb,
    /// Shifts of every lane by the count in the low 64 bits of the source.
    Psllw,
    Pslld,
    Psllq,
    Psrlw,
    Psrld,
    Psrlq,
    Psraw,
    Psrad,
    Punpcklbw,
    Punpcklwd,
    Punpckldq,
    Punpcklqdq,
    Punpckhbw,
    Punpckhwd,
    Punpckhdq,
    Punpckhqdq,
    Packsswb,
    Packuswb,
    Packssdw,
    Addps,
    Addpd,
    Subps,
    Subpd,
    Mulps,
    Mulpd,
    Divps,
    Divpd,
    Minps,
    Minpd,
    Maxps,
    Maxpd,
    Sqrtps,
    Sqrtpd,
    Andps,
    Andnps,
    Orps,
    Xorps,
    Movaps,
    Movdqa,
    /// Signed dwords to f32 lanes.
    Cvtdq2ps,
    Packusdw,
    /// High halves of the signed / unsigned word products; SSSE3's rounded `(a*b + 2^14) >> 15`.
    Pmulhw,
    Pmulhuw,
    Pmulhrsw,
    /// Signed word products, adjacent pairs summed into dwords; SSSE3's unsigned-by-signed
    /// byte products, adjacent pairs summed into saturated words.
    Pmaddwd,
    Pmaddubsw,
    /// Sums of absolute byte differences, per quadword.
    Psadbw,
    /// Conversions: the low two f32 lanes to f64; f64 lanes to the low two f32 lanes (the
    /// rest zeroed); the low two signed dwords to f64; truncating f32/f64 lanes to signed
    /// dwords (`0x8000_0000` for NaN and out of range; f64 lanes into the low two dwords).
    Cvtps2pd,
    Cvtpd2ps,
    Cvtdq2pd,
    Cvttps2dq,
    Cvttpd2dq,
    Andpd,
    Andnpd,
    Orpd,
    /// SSE4.1 lane extensions of the low half (sign or zero).
    Pmovsxbw,
    Pmovsxwd,
    Pmovsxdq,
    Pmovzxbw,
    Pmovzxwd,
    Pmovzxdq,
}

impl VecOp {
    /// Every operation.
    pub const ALL: [VecOp; 109] = {
        use VecOp::*;
        [
            Paddb, Paddw, Paddd, Paddq, Psubb, Psubw, Psubd, Psubq, Paddsb, Paddsw, Paddusb,
            Paddusw, Psubsb, Psubsw, Psubusb, Psubusw, Pmullw, Pmuludq, Pmulld, Pavgb, Pavgw, Pand,
            Pandn, Por, Pxor, Pcmpeqb, Pcmpeqw, Pcmpeqd, Pcmpeqq, Pcmpgtb, Pcmpgtw, Pcmpgtd,
            Pminub, Pmaxub, Pminsw, Pmaxsw, Pminsb, Pmaxsb, Pminuw, Pmaxuw, Pminsd, Pmaxsd, Pminud,
            Pmaxud, Pabsb, Pabsw, Pabsd, Pshufb, Psllw, Pslld, Psllq, Psrlw, Psrld, Psrlq, Psraw,
            Psrad, Punpcklbw, Punpcklwd, Punpckldq, Punpcklqdq, Punpckhbw, Punpckhwd, Punpckhdq,
            Punpckhqdq, Packsswb, Packuswb, Packssdw, Addps, Addpd, Subps, Subpd, Mulps, Mulpd,
            Divps, Divpd, Minps, Minpd, Maxps, Maxpd, Sqrtps, Sqrtpd, Andps, Andnps, Orps, Xorps,
            Movaps, Movdqa, Cvtdq2ps, Packusdw, Pmulhw, Pmulhuw, Pmulhrsw, Pmaddwd, Pmaddubsw,
            Psadbw, Cvtps2pd, Cvtpd2ps, Cvtdq2pd, Cvttps2dq, Cvttpd2dq, Andpd, Andnpd, Orpd,
            Pmovsxbw, Pmovsxwd, Pmovsxdq, Pmovzxbw, Pmovzxwd, Pmovzxdq,
        ]
    };

    /// (mandatory prefix, opcode map, opcode).
    fn encoding(self) -> (Option<u8>, Map, u8) {
        use VecOp::*;
        const PD: Option<u8> = Some(0x66);
        let (m0f, m38) = (Map::M0F, Map::M0F38);
        match self {
            Paddb => (PD, m0f, 0xFC),
            Paddw => (PD, m0f, 0xFD),
            Paddd => (PD, m0f, 0xFE),
            Paddq => (PD, m0f, 0xD4),
            Psubb => (PD, m0f, 0xF8),
            Psubw => (PD, m0f, 0xF9),
            Psubd => (PD, m0f, 0xFA),
            Psubq => (PD, m0f, 0xFB),
            Paddsb => (PD, m0f, 0xEC),
            Paddsw => (PD, m0f, 0xED),
            Paddusb => (PD, m0f, 0xDC),
            Paddusw => (PD, m0f, 0xDD),
            Psubsb => (PD, m0f, 0xE8),
            Psubsw => (PD, m0f, 0xE9),
            Psubusb => (PD, m0f, 0xD8),
            Psubusw => (PD, m0f, 0xD9),
            Pmullw => (PD, m0f, 0xD5),
            Pmuludq => (PD, m0f, 0xF4),
            Pmulld => (PD, m38, 0x40),
            Pavgb => (PD, m0f, 0xE0),
            Pavgw => (PD, m0f, 0xE3),
            Pand => (PD, m0f, 0xDB),
            Pandn => (PD, m0f, 0xDF),
            Por => (PD, m0f, 0xEB),
            Pxor => (PD, m0f, 0xEF),
            Pcmpeqb => (PD, m0f, 0x74),
            Pcmpeqw => (PD, m0f, 0x75),
            Pcmpeqd => (PD, m0f, 0x76),
            Pcmpeqq => (PD, m38, 0x29),
            Pcmpgtb => (PD, m0f, 0x64),
            Pcmpgtw => (PD, m0f, 0x65),
            Pcmpgtd => (PD, m0f, 0x66),
            Pminub => (PD, m0f, 0xDA),
            Pmaxub => (PD, m0f, 0xDE),
            Pminsw => (PD, m0f, 0xEA),
            Pmaxsw => (PD, m0f, 0xEE),
            Pminsb => (PD, m38, 0x38),
            Pminsd => (PD, m38, 0x39),
            Pminuw => (PD, m38, 0x3A),
            Pminud => (PD, m38, 0x3B),
            Pmaxsb => (PD, m38, 0x3C),
            Pmaxsd => (PD, m38, 0x3D),
            Pmaxuw => (PD, m38, 0x3E),
            Pmaxud => (PD, m38, 0x3F),
            Pabsb => (PD, m38, 0x1C),
            Pabsw => (PD, m38, 0x1D),
            Pabsd => (PD, m38, 0x1E),
            Pshufb => (PD, m38, 0x00),
            Psllw => (PD, m0f, 0xF1),
            Pslld => (PD, m0f, 0xF2),
            Psllq => (PD, m0f, 0xF3),
            Psrlw => (PD, m0f, 0xD1),
            Psrld => (PD, m0f, 0xD2),
            Psrlq => (PD, m0f, 0xD3),
            Psraw => (PD, m0f, 0xE1),
            Psrad => (PD, m0f, 0xE2),
            Punpcklbw => (PD, m0f, 0x60),
            Punpcklwd => (PD, m0f, 0x61),
            Punpckldq => (PD, m0f, 0x62),
            Punpcklqdq => (PD, m0f, 0x6C),
            Punpckhbw => (PD, m0f, 0x68),
            Punpckhwd => (PD, m0f, 0x69),
            Punpckhdq => (PD, m0f, 0x6A),
            Punpckhqdq => (PD, m0f, 0x6D),
            Packsswb => (PD, m0f, 0x63),
            Packuswb => (PD, m0f, 0x67),
            Packssdw => (PD, m0f, 0x6B),
            Addps => (None, m0f, 0x58),
            Addpd => (PD, m0f, 0x58),
            Subps => (None, m0f, 0x5C),
            Subpd => (PD, m0f, 0x5C),
            Mulps => (None, m0f, 0x59),
            Mulpd => (PD, m0f, 0x59),
            Divps => (None, m0f, 0x5E),
            Divpd => (PD, m0f, 0x5E),
            Minps => (None, m0f, 0x5D),
            Minpd => (PD, m0f, 0x5D),
            Maxps => (None, m0f, 0x5F),
            Maxpd => (PD, m0f, 0x5F),
            Sqrtps => (None, m0f, 0x51),
            Sqrtpd => (PD, m0f, 0x51),
            Andps => (None, m0f, 0x54),
            Andnps => (None, m0f, 0x55),
            Orps => (None, m0f, 0x56),
            Xorps => (None, m0f, 0x57),
            Movaps => (None, m0f, 0x28),
            Movdqa => (PD, m0f, 0x6F),
            Cvtdq2ps => (None, m0f, 0x5B),
            Packusdw => (PD, m38, 0x2B),
            Pmulhw => (PD, m0f, 0xE5),
            Pmulhuw => (PD, m0f, 0xE4),
            Pmulhrsw => (PD, m38, 0x0B),
            Pmaddwd => (PD, m0f, 0xF5),
            Pmaddubsw => (PD, m38, 0x04),
            Psadbw => (PD, m0f, 0xF6),
            Cvtps2pd => (None, m0f, 0x5A),
            Cvtpd2ps => (PD, m0f, 0x5A),
            Cvtdq2pd => (Some(0xF3), m0f, 0xE6),
            Cvttps2dq => (Some(0xF3), m0f, 0x5B),
            Cvttpd2dq => (PD, m0f, 0xE6),
            Andpd => (PD, m0f, 0x54),
            Andnpd => (PD, m0f, 0x55),
            Orpd => (PD, m0f, 0x56),
            Pmovsxbw => (PD, m38, 0x20),
            Pmovsxwd => (PD, m38, 0x23),
            Pmovsxdq => (PD, m38, 0x25),
            Pmovzxbw => (PD, m38, 0x30),
            Pmovzxwd => (PD, m38, 0x33),
            Pmovzxdq => (PD, m38, 0x35),
        }
    }

    /// Whether the form computes `dst = op src` (ignoring `dst`'s old value).
    pub fn is_unary(self) -> bool {
        use VecOp::*;
        matches!(
            self,
            Pabsb
                | Pabsw
                | Pabsd
                | Sqrtps
                | Sqrtpd
                | Movaps
                | Movdqa
                | Cvtdq2ps
                | Cvtps2pd
                | Cvtpd2ps
                | Cvtdq2pd
                | Cvttps2dq
                | Cvttpd2dq
                | Pmovsxbw
                | Pmovsxwd
                | Pmovsxdq
                | Pmovzxbw
                | Pmovzxwd
                | Pmovzxdq
        )
    }

    /// Bytes read from a memory source (the low-half conversions and extensions read 8).
    pub fn mem_bytes(self) -> u32 {
        use VecOp::*;
        match self {
            Cvtps2pd | Cvtdq2pd | Pmovsxbw | Pmovsxwd | Pmovsxdq | Pmovzxbw | Pmovzxwd
            | Pmovzxdq => 8,
            _ => 16,
        }
    }

    /// The instruction-set level the form needs.
    pub fn needs(self) -> Level {
        use VecOp::*;
        match self {
            Pabsb | Pabsw | Pabsd | Pshufb | Pmulhrsw | Pmaddubsw => Level::Ssse3,
            Pmulld | Pcmpeqq | Pminsb | Pmaxsb | Pminuw | Pmaxuw | Pminsd | Pmaxsd | Pminud
            | Pmaxud | Packusdw | Pmovsxbw | Pmovsxwd | Pmovsxdq | Pmovzxbw | Pmovzxwd
            | Pmovzxdq => Level::Sse41,
            _ => Level::Sse2,
        }
    }
}

fn enc(prefix: Option<u8>, map: Map, opcode: u8) -> Enc {
    let e = Enc::new(map, opcode);
    match prefix {
        Some(p) => e.prefix(p),
        None => e,
    }
}

/// `op dst, src` for a [`VecOp`].
pub fn vec_r_rm(sink: &mut impl CodeSink, op: VecOp, dst: Xmm, src: &XmmMem) -> Option<Rel32Fixup> {
    let (prefix, map, opcode) = op.encoding();
    emit_rm(sink, &enc(prefix, map, opcode), dst.enc(), src.into(), 0)
}

/// Vector instructions of the shape `op xmm, xmm/m128, imm8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VecImmOp {
    /// `dst = the dwords of src picked by the immediate's 2-bit fields`.
    Pshufd,
    /// The same for the low four words (the high quadword copied).
    Pshuflw,
    /// The same for the high four words (the low quadword copied).
    Pshufhw,
    /// Low two dwords from `dst`, high two from `src`, picked by the immediate.
    Shufps,
    /// Float lane compares by the immediate's predicate ([`super::sse::FcmpPred`]).
    Cmpps,
    Cmppd,
    /// SSE4.1 lane rounding by the immediate's mode ([`super::sse::RoundMode`]).
    Roundps,
    Roundpd,
}

impl VecImmOp {
    /// Every operation.
    pub const ALL: [VecImmOp; 8] = [
        VecImmOp::Pshufd,
        VecImmOp::Pshuflw,
        VecImmOp::Pshufhw,
        VecImmOp::Shufps,
        VecImmOp::Cmpps,
        VecImmOp::Cmppd,
        VecImmOp::Roundps,
        VecImmOp::Roundpd,
    ];

    fn encoding(self) -> (Option<u8>, Map, u8) {
        match self {
            VecImmOp::Pshufd => (Some(0x66), Map::M0F, 0x70),
            VecImmOp::Pshuflw => (Some(0xF2), Map::M0F, 0x70),
            VecImmOp::Pshufhw => (Some(0xF3), Map::M0F, 0x70),
            VecImmOp::Shufps => (None, Map::M0F, 0xC6),
            VecImmOp::Cmpps => (None, Map::M0F, 0xC2),
            VecImmOp::Cmppd => (Some(0x66), Map::M0F, 0xC2),
            VecImmOp::Roundps => (Some(0x66), Map::M0F3A, 0x08),
            VecImmOp::Roundpd => (Some(0x66), Map::M0F3A, 0x09),
        }
    }

    /// Whether the form computes `dst` from `src` and the immediate alone.
    pub fn is_unary(self) -> bool {
        matches!(
            self,
            VecImmOp::Pshufd
                | VecImmOp::Pshuflw
                | VecImmOp::Pshufhw
                | VecImmOp::Roundps
                | VecImmOp::Roundpd
        )
    }
}

/// `op dst, src, imm` for a [`VecImmOp`].
pub fn vec_r_rm_imm(
    sink: &mut impl CodeSink,
    op: VecImmOp,
    dst: Xmm,
    src: &XmmMem,
    imm: u8,
) -> Option<Rel32Fixup> {
    let (prefix, map, opcode) = op.encoding();
    let fixup = emit_rm(sink, &enc(prefix, map, opcode), dst.enc(), src.into(), 1);
    sink.put1(imm);
    fixup
}

/// Lane shifts by an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VecShiftImm {
    Psllw,
    Pslld,
    Psllq,
    Psrlw,
    Psrld,
    Psrlq,
    Psraw,
    Psrad,
    /// Whole-register byte shifts.
    Psrldq,
    Pslldq,
}

impl VecShiftImm {
    /// Every shift.
    pub const ALL: [VecShiftImm; 10] = [
        VecShiftImm::Psllw,
        VecShiftImm::Pslld,
        VecShiftImm::Psllq,
        VecShiftImm::Psrlw,
        VecShiftImm::Psrld,
        VecShiftImm::Psrlq,
        VecShiftImm::Psraw,
        VecShiftImm::Psrad,
        VecShiftImm::Psrldq,
        VecShiftImm::Pslldq,
    ];

    /// (opcode in the `66 0F` map, `/digit`).
    fn encoding(self) -> (u8, u8) {
        match self {
            VecShiftImm::Psrlw => (0x71, 2),
            VecShiftImm::Psraw => (0x71, 4),
            VecShiftImm::Psllw => (0x71, 6),
            VecShiftImm::Psrld => (0x72, 2),
            VecShiftImm::Psrad => (0x72, 4),
            VecShiftImm::Pslld => (0x72, 6),
            VecShiftImm::Psrlq => (0x73, 2),
            VecShiftImm::Psrldq => (0x73, 3),
            VecShiftImm::Psllq => (0x73, 6),
            VecShiftImm::Pslldq => (0x73, 7),
        }
    }
}

/// `op dst, imm`: every lane of `dst` shifted by `imm`.
pub fn vec_shift_imm(sink: &mut impl CodeSink, op: VecShiftImm, dst: Xmm, imm: u8) {
    let (opcode, digit) = op.encoding();
    emit_rm(
        sink,
        &Enc::new(Map::M0F, opcode).prefix(0x66),
        digit,
        (&XmmMem::Reg(dst)).into(),
        1,
    );
    sink.put1(imm);
}

/// A lane width of [`pinsr`] and [`pextr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneSize {
    B,
    W,
    D,
    Q,
}

impl LaneSize {
    /// Every width.
    pub const ALL: [LaneSize; 4] = [LaneSize::B, LaneSize::W, LaneSize::D, LaneSize::Q];

    /// Whether the SSE4.1 form is the only one (all but `w`).
    pub fn needs_sse41(self) -> bool {
        self != LaneSize::W
    }
}

/// `pinsr{b,w,d,q} dst, src, lane`: lane `lane` of `dst` from the low bits of `src`.
pub fn pinsr(
    sink: &mut impl CodeSink,
    size: LaneSize,
    dst: Xmm,
    src: &GprMem,
    lane: u8,
) -> Option<Rel32Fixup> {
    let e = match size {
        LaneSize::B => Enc::new(Map::M0F3A, 0x20),
        LaneSize::W => Enc::new(Map::M0F, 0xC4),
        LaneSize::D => Enc::new(Map::M0F3A, 0x22),
        LaneSize::Q => Enc::new(Map::M0F3A, 0x22).w(true),
    }
    .prefix(0x66);
    let fixup = emit_rm(sink, &e, dst.enc(), src.into(), 1);
    sink.put1(lane);
    fixup
}

/// `pextr{b,w,d,q} dst, src, lane`: lane `lane` of `src`, zero-extended into `dst`.
pub fn pextr(sink: &mut impl CodeSink, size: LaneSize, dst: Gpr, src: Xmm, lane: u8) {
    match size {
        // `66 0F C5 /r ib`: the GPR in `reg`.
        LaneSize::W => {
            let e = Enc::new(Map::M0F, 0xC5).prefix(0x66);
            emit_rm(sink, &e, dst.enc(), (&XmmMem::Reg(src)).into(), 1);
        }
        _ => {
            let e = match size {
                LaneSize::B => Enc::new(Map::M0F3A, 0x14),
                LaneSize::D => Enc::new(Map::M0F3A, 0x16),
                _ => Enc::new(Map::M0F3A, 0x16).w(true),
            }
            .prefix(0x66);
            emit_rm(sink, &e, src.enc(), (&GprMem::Reg(dst)).into(), 1);
        }
    }
    sink.put1(lane);
}

/// Sign-bit gathers into a GPR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Movmsk {
    Pmovmskb,
    Movmskps,
    Movmskpd,
}

impl Movmsk {
    /// Every form.
    pub const ALL: [Movmsk; 3] = [Movmsk::Pmovmskb, Movmsk::Movmskps, Movmsk::Movmskpd];
}

/// `op dst, src`: the sign bit of each lane of `src`, lane 0 in bit 0, into `dst`.
pub fn movmsk(sink: &mut impl CodeSink, op: Movmsk, dst: Gpr, src: Xmm) {
    let e = match op {
        Movmsk::Pmovmskb => Enc::new(Map::M0F, 0xD7).prefix(0x66),
        Movmsk::Movmskps => Enc::new(Map::M0F, 0x50),
        Movmsk::Movmskpd => Enc::new(Map::M0F, 0x50).prefix(0x66),
    };
    emit_rm(sink, &e, dst.enc(), (&XmmMem::Reg(src)).into(), 0);
}

/// `vfmadd213ps/pd dst, b, c` (`VEX.128.66.0F38.W0/W1 A8 /r`): `dst = dst * b + c` per f32
/// (`f64` false) or f64 lane, rounded once. Needs FMA.
pub fn vfmadd213(
    sink: &mut impl CodeSink,
    f64: bool,
    dst: Xmm,
    b: Xmm,
    c: &XmmMem,
) -> Option<Rel32Fixup> {
    let vex = Vex {
        pp: VexPp::P66,
        map: Map::M0F38,
        w: f64,
        opcode: 0xA8,
    };
    emit_vex_rm(sink, &vex, dst.enc(), b.enc(), c.into(), 0)
}
