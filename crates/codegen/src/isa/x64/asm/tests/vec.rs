//! Cross-checks of the packed vector forms (`asm/vec.rs`).

use super::super::vec::{self, LaneSize, Movmsk, VecImmOp, VecOp, VecShiftImm};
use super::*;

fn vec_mnemonic(op: VecOp) -> Mnemonic {
    use VecOp::*;
    match op {
        Paddb => Mnemonic::Paddb,
        Paddw => Mnemonic::Paddw,
        Paddd => Mnemonic::Paddd,
        Paddq => Mnemonic::Paddq,
        Psubb => Mnemonic::Psubb,
        Psubw => Mnemonic::Psubw,
        Psubd => Mnemonic::Psubd,
        Psubq => Mnemonic::Psubq,
        Paddsb => Mnemonic::Paddsb,
        Paddsw => Mnemonic::Paddsw,
        Paddusb => Mnemonic::Paddusb,
        Paddusw => Mnemonic::Paddusw,
        Psubsb => Mnemonic::Psubsb,
        Psubsw => Mnemonic::Psubsw,
        Psubusb => Mnemonic::Psubusb,
        Psubusw => Mnemonic::Psubusw,
        Pmullw => Mnemonic::Pmullw,
        Pmuludq => Mnemonic::Pmuludq,
        Pmulld => Mnemonic::Pmulld,
        Pavgb => Mnemonic::Pavgb,
        Pavgw => Mnemonic::Pavgw,
        Pand => Mnemonic::Pand,
        Pandn => Mnemonic::Pandn,
        Por => Mnemonic::Por,
        Pxor => Mnemonic::Pxor,
        Pcmpeqb => Mnemonic::Pcmpeqb,
        Pcmpeqw => Mnemonic::Pcmpeqw,
        Pcmpeqd => Mnemonic::Pcmpeqd,
        Pcmpeqq => Mnemonic::Pcmpeqq,
        Pcmpgtb => Mnemonic::Pcmpgtb,
        Pcmpgtw => Mnemonic::Pcmpgtw,
        Pcmpgtd => Mnemonic::Pcmpgtd,
        Pminub => Mnemonic::Pminub,
        Pmaxub => Mnemonic::Pmaxub,
        Pminsw => Mnemonic::Pminsw,
        Pmaxsw => Mnemonic::Pmaxsw,
        Pminsb => Mnemonic::Pminsb,
        Pmaxsb => Mnemonic::Pmaxsb,
        Pminuw => Mnemonic::Pminuw,
        Pmaxuw => Mnemonic::Pmaxuw,
        Pminsd => Mnemonic::Pminsd,
        Pmaxsd => Mnemonic::Pmaxsd,
        Pminud => Mnemonic::Pminud,
        Pmaxud => Mnemonic::Pmaxud,
        Pabsb => Mnemonic::Pabsb,
        Pabsw => Mnemonic::Pabsw,
        Pabsd => Mnemonic::Pabsd,
        Pshufb => Mnemonic::Pshufb,
        Psllw => Mnemonic::Psllw,
        Pslld => Mnemonic::Pslld,
        Psllq => Mnemonic::Psllq,
        Psrlw => Mnemonic::Psrlw,
        Psrld => Mnemonic::Psrld,
        Psrlq => Mnemonic::Psrlq,
        Psraw => Mnemonic::Psraw,
        Psrad => Mnemonic::Psrad,
        Punpcklbw => Mnemonic::Punpcklbw,
        Punpcklwd => Mnemonic::Punpcklwd,
        Punpckldq => Mnemonic::Punpckldq,
        Punpcklqdq => Mnemonic::Punpcklqdq,
        Punpckhbw => Mnemonic::Punpckhbw,
        Punpckhwd => Mnemonic::Punpckhwd,
        Punpckhdq => Mnemonic::Punpckhdq,
        Punpckhqdq => Mnemonic::Punpckhqdq,
        Packsswb => Mnemonic::Packsswb,
        Packuswb => Mnemonic::Packuswb,
        Packssdw => Mnemonic::Packssdw,
        Addps => Mnemonic::Addps,
        Addpd => Mnemonic::Addpd,
        Subps => Mnemonic::Subps,
        Subpd => Mnemonic::Subpd,
        Mulps => Mnemonic::Mulps,
        Mulpd => Mnemonic::Mulpd,
        Divps => Mnemonic::Divps,
        Divpd => Mnemonic::Divpd,
        Minps => Mnemonic::Minps,
        Minpd => Mnemonic::Minpd,
        Maxps => Mnemonic::Maxps,
        Maxpd => Mnemonic::Maxpd,
        Sqrtps => Mnemonic::Sqrtps,
        Sqrtpd => Mnemonic::Sqrtpd,
        Andps => Mnemonic::Andps,
        Andnps => Mnemonic::Andnps,
        Orps => Mnemonic::Orps,
        Xorps => Mnemonic::Xorps,
        Movaps => Mnemonic::Movaps,
        Movdqa => Mnemonic::Movdqa,
        Cvtdq2ps => Mnemonic::Cvtdq2ps,
        Packusdw => Mnemonic::Packusdw,
        Pmulhw => Mnemonic::Pmulhw,
        Pmulhuw => Mnemonic::Pmulhuw,
        Pmulhrsw => Mnemonic::Pmulhrsw,
        Pmaddwd => Mnemonic::Pmaddwd,
        Pmaddubsw => Mnemonic::Pmaddubsw,
        Psadbw => Mnemonic::Psadbw,
        Cvtps2pd => Mnemonic::Cvtps2pd,
        Cvtpd2ps => Mnemonic::Cvtpd2ps,
        Cvtdq2pd => Mnemonic::Cvtdq2pd,
        Cvttps2dq => Mnemonic::Cvttps2dq,
        Cvttpd2dq => Mnemonic::Cvttpd2dq,
        Andpd => Mnemonic::Andpd,
        Andnpd => Mnemonic::Andnpd,
        Orpd => Mnemonic::Orpd,
        Pmovsxbw => Mnemonic::Pmovsxbw,
        Pmovsxwd => Mnemonic::Pmovsxwd,
        Pmovsxdq => Mnemonic::Pmovsxdq,
        Pmovzxbw => Mnemonic::Pmovzxbw,
        Pmovzxwd => Mnemonic::Pmovzxwd,
        Pmovzxdq => Mnemonic::Pmovzxdq,
    }
}

#[test]
fn vector_register_memory_forms() {
    let mut c = Checker::new();
    let srcs = xmmmems(&xmms(), &some_amodes());
    for op in VecOp::ALL {
        let m = vec_mnemonic(op);
        for dst in xmms() {
            for src in &srcs {
                let e = ex(m, vec![x(dst), xm(src, op.mem_bytes())]);
                c.check(|s| vec::vec_r_rm(s, op, dst, src), e);
            }
        }
    }
    c.finish("vec");
}

#[test]
fn vector_immediate_forms() {
    let mut c = Checker::new();
    let srcs = xmmmems(&few_xmms(), &some_amodes());
    for op in VecImmOp::ALL {
        let m = match op {
            VecImmOp::Pshufd => Mnemonic::Pshufd,
            VecImmOp::Pshuflw => Mnemonic::Pshuflw,
            VecImmOp::Pshufhw => Mnemonic::Pshufhw,
            VecImmOp::Shufps => Mnemonic::Shufps,
            VecImmOp::Cmpps => Mnemonic::Cmpps,
            VecImmOp::Cmppd => Mnemonic::Cmppd,
            VecImmOp::Roundps => Mnemonic::Roundps,
            VecImmOp::Roundpd => Mnemonic::Roundpd,
        };
        for dst in xmms() {
            for src in &srcs {
                for k in [0u8, 1, 0x1B, 0x7F, 0xFF] {
                    // Compares take predicates 0–7 (iced names larger ones as AVX forms).
                    let k = if matches!(op, VecImmOp::Cmpps | VecImmOp::Cmppd) {
                        k & 7
                    } else {
                        k
                    };
                    let e = ex(m, vec![x(dst), xm(src, 16), imm(k.into(), 8)]);
                    c.check(|s| vec::vec_r_rm_imm(s, op, dst, src, k), e);
                }
            }
        }
    }
    for op in VecShiftImm::ALL {
        let m = match op {
            VecShiftImm::Psllw => Mnemonic::Psllw,
            VecShiftImm::Pslld => Mnemonic::Pslld,
            VecShiftImm::Psllq => Mnemonic::Psllq,
            VecShiftImm::Psrlw => Mnemonic::Psrlw,
            VecShiftImm::Psrld => Mnemonic::Psrld,
            VecShiftImm::Psrlq => Mnemonic::Psrlq,
            VecShiftImm::Psraw => Mnemonic::Psraw,
            VecShiftImm::Psrad => Mnemonic::Psrad,
            VecShiftImm::Psrldq => Mnemonic::Psrldq,
            VecShiftImm::Pslldq => Mnemonic::Pslldq,
        };
        for dst in xmms() {
            for k in [0u8, 1, 7, 15, 31, 63] {
                let e = ex(m, vec![x(dst), imm(k.into(), 8)]);
                c.check(
                    |s| {
                        vec::vec_shift_imm(s, op, dst, k);
                        None
                    },
                    e,
                );
            }
        }
    }
    c.finish("vec imm");
}

#[test]
fn vector_lane_transfers() {
    let mut c = Checker::new();
    for size in LaneSize::ALL {
        let (ins, ext, gsize, mem_bytes) = match size {
            LaneSize::B => (Mnemonic::Pinsrb, Mnemonic::Pextrb, Size::S32, 1),
            LaneSize::W => (Mnemonic::Pinsrw, Mnemonic::Pextrw, Size::S32, 2),
            LaneSize::D => (Mnemonic::Pinsrd, Mnemonic::Pextrd, Size::S32, 4),
            LaneSize::Q => (Mnemonic::Pinsrq, Mnemonic::Pextrq, Size::S64, 8),
        };
        for v in xmms() {
            for g in gprmems(&some_regs(), &some_amodes()) {
                let src = match &g {
                    GprMem::Reg(r0) => r(*r0, gsize),
                    GprMem::Mem(a) => mem(a, mem_bytes),
                };
                for lane in [0u8, 1, 3] {
                    let e = ex(ins, vec![x(v), src.clone(), imm(lane.into(), 8)]);
                    c.check(|s| vec::pinsr(s, size, v, &g, lane), e);
                }
            }
            for g in regs() {
                for lane in [0u8, 1, 3] {
                    let e = ex(ext, vec![r(g, gsize), x(v), imm(lane.into(), 8)]);
                    c.check(
                        |s| {
                            vec::pextr(s, size, g, v, lane);
                            None
                        },
                        e,
                    );
                }
            }
        }
    }
    for op in Movmsk::ALL {
        let m = match op {
            Movmsk::Pmovmskb => Mnemonic::Pmovmskb,
            Movmsk::Movmskps => Mnemonic::Movmskps,
            Movmsk::Movmskpd => Mnemonic::Movmskpd,
        };
        for v in xmms() {
            for g in regs() {
                let e = ex(m, vec![r(g, Size::S32), x(v)]);
                c.check(
                    |s| {
                        vec::movmsk(s, op, g, v);
                        None
                    },
                    e,
                );
            }
        }
    }
    c.finish("vec lanes");
}

#[test]
fn fused_multiply_add() {
    let mut c = Checker::new();
    let srcs = xmmmems(&few_xmms(), &some_amodes());
    for f64 in [false, true] {
        let m = if f64 {
            Mnemonic::Vfmadd213pd
        } else {
            Mnemonic::Vfmadd213ps
        };
        for dst in xmms() {
            for b in few_xmms() {
                for src in &srcs {
                    let e = ex(m, vec![x(dst), x(b), xm(src, 16)]);
                    c.check(|s| vec::vfmadd213(s, f64, dst, b, src), e);
                }
            }
        }
    }
    c.finish("fma");
}
