//! Cross-checks of the SSE forms.

use super::super::sse::{self, FcmpPred, FloatSize, RoundMode, SseOp, SseStore};
use super::*;

fn sse_mnemonic(op: SseOp) -> Mnemonic {
    use SseOp::*;
    match op {
        Movss => Mnemonic::Movss,
        Movsd => Mnemonic::Movsd,
        Movaps => Mnemonic::Movaps,
        Movapd => Mnemonic::Movapd,
        Movups => Mnemonic::Movups,
        Movupd => Mnemonic::Movupd,
        Movdqa => Mnemonic::Movdqa,
        Movdqu => Mnemonic::Movdqu,
        Movq => Mnemonic::Movq,
        Addss => Mnemonic::Addss,
        Addsd => Mnemonic::Addsd,
        Subss => Mnemonic::Subss,
        Subsd => Mnemonic::Subsd,
        Mulss => Mnemonic::Mulss,
        Mulsd => Mnemonic::Mulsd,
        Divss => Mnemonic::Divss,
        Divsd => Mnemonic::Divsd,
        Minss => Mnemonic::Minss,
        Minsd => Mnemonic::Minsd,
        Maxss => Mnemonic::Maxss,
        Maxsd => Mnemonic::Maxsd,
        Sqrtss => Mnemonic::Sqrtss,
        Sqrtsd => Mnemonic::Sqrtsd,
        Andps => Mnemonic::Andps,
        Andpd => Mnemonic::Andpd,
        Andnps => Mnemonic::Andnps,
        Andnpd => Mnemonic::Andnpd,
        Orps => Mnemonic::Orps,
        Orpd => Mnemonic::Orpd,
        Xorps => Mnemonic::Xorps,
        Xorpd => Mnemonic::Xorpd,
        Pand => Mnemonic::Pand,
        Pandn => Mnemonic::Pandn,
        Por => Mnemonic::Por,
        Pxor => Mnemonic::Pxor,
        Ucomiss => Mnemonic::Ucomiss,
        Ucomisd => Mnemonic::Ucomisd,
        Comiss => Mnemonic::Comiss,
        Comisd => Mnemonic::Comisd,
        Cvtss2sd => Mnemonic::Cvtss2sd,
        Cvtsd2ss => Mnemonic::Cvtsd2ss,
    }
}

fn store_mnemonic(op: SseStore) -> Mnemonic {
    match op {
        SseStore::Movss => Mnemonic::Movss,
        SseStore::Movsd => Mnemonic::Movsd,
        SseStore::Movaps => Mnemonic::Movaps,
        SseStore::Movapd => Mnemonic::Movapd,
        SseStore::Movups => Mnemonic::Movups,
        SseStore::Movupd => Mnemonic::Movupd,
        SseStore::Movdqa => Mnemonic::Movdqa,
        SseStore::Movdqu => Mnemonic::Movdqu,
        SseStore::Movq => Mnemonic::Movq,
    }
}

#[test]
fn sse_arith_and_moves() {
    let mut c = Checker::new();
    let srcs = xmmmems(&xmms(), &some_amodes());
    for op in SseOp::ALL {
        let m = sse_mnemonic(op);
        for dst in xmms() {
            for src in &srcs {
                let e = ex(m, vec![x(dst), xm(src, op.mem_bytes())]);
                c.check(|s| sse::sse_r_rm(s, op, dst, src), e);
            }
        }
    }
    for op in SseStore::ALL {
        for a in all_amodes() {
            for src in few_xmms() {
                let e = ex(store_mnemonic(op), vec![mem(&a, op.mem_bytes()), x(src)]);
                c.check(|s| sse::sse_store(s, op, &a, src), e);
            }
        }
    }
    c.finish("sse");
}

#[test]
fn sse_gpr_transfers_and_conversions() {
    let mut c = Checker::new();
    let gms = gprmems(&regs(), &some_amodes());
    for isize in [Size::S32, Size::S64] {
        let mv = if isize == Size::S32 {
            Mnemonic::Movd
        } else {
            Mnemonic::Movq
        };
        for v in xmms() {
            for g in &gms {
                c.check(
                    |s| sse::movd_to_xmm(s, isize, v, g),
                    ex(mv, vec![x(v), gm(g, isize)]),
                );
                c.check(
                    |s| sse::movd_from_xmm(s, isize, g, v),
                    ex(mv, vec![gm(g, isize), x(v)]),
                );
            }
        }
        for fsize in FloatSize::ALL {
            let (to_f, to_i_trunc, to_i) = match fsize {
                FloatSize::F32 => (Mnemonic::Cvtsi2ss, Mnemonic::Cvttss2si, Mnemonic::Cvtss2si),
                FloatSize::F64 => (Mnemonic::Cvtsi2sd, Mnemonic::Cvttsd2si, Mnemonic::Cvtsd2si),
            };
            for v in few_xmms() {
                for g in &gms {
                    let e = ex(to_f, vec![x(v), gm(g, isize)]);
                    c.check(|s| sse::cvt_int_to_float(s, fsize, isize, v, g), e);
                }
            }
            for dst in regs() {
                for src in xmmmems(&few_xmms(), &some_amodes()) {
                    for (trunc, m) in [(true, to_i_trunc), (false, to_i)] {
                        let e = ex(m, vec![r(dst, isize), xm(&src, fsize.bytes())]);
                        c.check(
                            |s| sse::cvt_float_to_int(s, fsize, isize, trunc, dst, &src),
                            e,
                        );
                    }
                }
            }
        }
    }
    for fsize in FloatSize::ALL {
        let (rm, cm) = match fsize {
            FloatSize::F32 => (Mnemonic::Roundss, Mnemonic::Cmpss),
            FloatSize::F64 => (Mnemonic::Roundsd, Mnemonic::Cmpsd),
        };
        for dst in xmms() {
            for src in xmmmems(&few_xmms(), &some_amodes()) {
                for mode in RoundMode::ALL {
                    let e = ex(
                        rm,
                        vec![x(dst), xm(&src, fsize.bytes()), imm(mode as i64, 8)],
                    );
                    c.check(|s| sse::round(s, fsize, dst, &src, mode), e);
                }
                for pred in FcmpPred::ALL {
                    let e = ex(
                        cm,
                        vec![x(dst), xm(&src, fsize.bytes()), imm(pred as i64, 8)],
                    );
                    c.check(|s| sse::cmp_scalar(s, fsize, dst, &src, pred), e);
                }
            }
        }
    }
    c.finish("sse transfers/conversions");
}
