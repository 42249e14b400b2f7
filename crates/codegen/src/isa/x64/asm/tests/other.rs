//! Cross-checks of condition-code users, branches, bit manipulation and the miscellaneous forms.

use super::super::bits::{self, BitCount, LowestBit, ShiftX};
use super::super::misc::{self, Fence};
use super::super::setcc_cmov_jcc::{self as cc, Cc};
use super::*;

/// (setcc, cmovcc, jcc) mnemonics of a condition.
fn cc_mnemonics(c: Cc) -> (Mnemonic, Mnemonic, Mnemonic) {
    use Mnemonic as M;
    match c {
        Cc::O => (M::Seto, M::Cmovo, M::Jo),
        Cc::NO => (M::Setno, M::Cmovno, M::Jno),
        Cc::B => (M::Setb, M::Cmovb, M::Jb),
        Cc::AE => (M::Setae, M::Cmovae, M::Jae),
        Cc::E => (M::Sete, M::Cmove, M::Je),
        Cc::NE => (M::Setne, M::Cmovne, M::Jne),
        Cc::BE => (M::Setbe, M::Cmovbe, M::Jbe),
        Cc::A => (M::Seta, M::Cmova, M::Ja),
        Cc::S => (M::Sets, M::Cmovs, M::Js),
        Cc::NS => (M::Setns, M::Cmovns, M::Jns),
        Cc::P => (M::Setp, M::Cmovp, M::Jp),
        Cc::NP => (M::Setnp, M::Cmovnp, M::Jnp),
        Cc::L => (M::Setl, M::Cmovl, M::Jl),
        Cc::GE => (M::Setge, M::Cmovge, M::Jge),
        Cc::LE => (M::Setle, M::Cmovle, M::Jle),
        Cc::G => (M::Setg, M::Cmovg, M::Jg),
    }
}

const REL32_DISPS: [i32; 5] = [0, -6, 0x100, i32::MAX - 16, i32::MIN];
const REL8_DISPS: [i8; 4] = [0, -2, 127, -128];

#[test]
fn condition_and_branch_forms() {
    let mut c = Checker::new();
    for cond in Cc::ALL {
        assert_eq!(cond.invert().invert(), cond);
        let (set, cmov, j) = cc_mnemonics(cond);
        for dst in gprmems(&regs(), &some_amodes()) {
            c.check(
                |s| cc::setcc(s, cond, &dst),
                ex(set, vec![gm(&dst, Size::S8)]),
            );
        }
        for size in [Size::S16, Size::S32, Size::S64] {
            for src in gprmems(&some_regs(), &few_amodes()) {
                for dst in some_regs() {
                    let e = ex(cmov, vec![r(dst, size), gm(&src, size)]);
                    c.check(|s| cc::cmov(s, cond, size, dst, &src), e);
                }
            }
        }
        for d in REL32_DISPS {
            let e = ex(
                j,
                vec![Op::Branch {
                    disp: d.into(),
                    rel32: true,
                }],
            );
            c.check(|s| Some(cc::jcc_rel32(s, cond, d)), e);
        }
        for d in REL8_DISPS {
            let e = ex(
                j,
                vec![Op::Branch {
                    disp: d.into(),
                    rel32: false,
                }],
            );
            c.check_plain(|s| cc::jcc_rel8(s, cond, d), e);
        }
    }
    for d in REL32_DISPS {
        let e = ex(
            Mnemonic::Jmp,
            vec![Op::Branch {
                disp: d.into(),
                rel32: true,
            }],
        );
        c.check(|s| Some(cc::jmp_rel32(s, d)), e);
        let e = ex(
            Mnemonic::Call,
            vec![Op::Branch {
                disp: d.into(),
                rel32: true,
            }],
        );
        c.check(|s| Some(misc::call_rel32(s, d)), e);
    }
    for d in REL8_DISPS {
        let e = ex(
            Mnemonic::Jmp,
            vec![Op::Branch {
                disp: d.into(),
                rel32: false,
            }],
        );
        c.check_plain(|s| cc::jmp_rel8(s, d), e);
    }
    for t in gprmems(&regs(), &all_amodes()) {
        c.check(
            |s| cc::jmp_rm(s, &t),
            ex(Mnemonic::Jmp, vec![gm(&t, Size::S64)]),
        );
        c.check(
            |s| misc::call_rm(s, &t),
            ex(Mnemonic::Call, vec![gm(&t, Size::S64)]),
        );
        c.check(
            |s| misc::push_rm(s, &t),
            ex(Mnemonic::Push, vec![gm(&t, Size::S64)]),
        );
        c.check(
            |s| misc::pop_rm(s, &t),
            ex(Mnemonic::Pop, vec![gm(&t, Size::S64)]),
        );
    }
    c.finish("conditions/branches");
}

#[test]
fn bit_forms() {
    let mut c = Checker::new();
    let srcs = gprmems(&regs(), &some_amodes());
    for size in [Size::S16, Size::S32, Size::S64] {
        for op in BitCount::ALL {
            let m = match op {
                BitCount::Bsf => Mnemonic::Bsf,
                BitCount::Bsr => Mnemonic::Bsr,
                BitCount::Tzcnt => Mnemonic::Tzcnt,
                BitCount::Lzcnt => Mnemonic::Lzcnt,
                BitCount::Popcnt => Mnemonic::Popcnt,
            };
            for src in &srcs {
                for dst in some_regs() {
                    c.check(
                        |s| bits::bit_count(s, op, size, dst, src),
                        ex(m, vec![r(dst, size), gm(src, size)]),
                    );
                }
            }
        }
        for base in &srcs {
            for bit in few_regs() {
                c.check(
                    |s| bits::bt_rm_r(s, size, base, bit),
                    ex(Mnemonic::Bt, vec![gm(base, size), r(bit, size)]),
                );
            }
            for n in [0u8, 9, 63] {
                let e = ex(Mnemonic::Bt, vec![gm(base, size), imm(n.into(), 8)]);
                c.check(|s| bits::bt_rm_imm(s, size, base, n), e);
            }
        }
    }
    for size in [Size::S32, Size::S64] {
        for g in regs() {
            c.check_plain(
                |s| bits::bswap(s, size, g),
                ex(Mnemonic::Bswap, vec![r(g, size)]),
            );
        }
        for src in &srcs {
            for a in some_regs() {
                for b in few_regs() {
                    let e = ex(Mnemonic::Andn, vec![r(a, size), r(b, size), gm(src, size)]);
                    c.check(|s| bits::andn(s, size, a, b, src), e);
                    let e = ex(Mnemonic::Bextr, vec![r(a, size), gm(src, size), r(b, size)]);
                    c.check(|s| bits::bextr(s, size, a, src, b), e);
                    let e = ex(Mnemonic::Bzhi, vec![r(a, size), gm(src, size), r(b, size)]);
                    c.check(|s| bits::bzhi(s, size, a, src, b), e);
                    for op in ShiftX::ALL {
                        let m = match op {
                            ShiftX::Shlx => Mnemonic::Shlx,
                            ShiftX::Sarx => Mnemonic::Sarx,
                            ShiftX::Shrx => Mnemonic::Shrx,
                        };
                        let e = ex(m, vec![r(a, size), gm(src, size), r(b, size)]);
                        c.check(|s| bits::shiftx(s, op, size, a, src, b), e);
                    }
                }
                for op in LowestBit::ALL {
                    let m = match op {
                        LowestBit::Blsr => Mnemonic::Blsr,
                        LowestBit::Blsmsk => Mnemonic::Blsmsk,
                        LowestBit::Blsi => Mnemonic::Blsi,
                    };
                    c.check(
                        |s| bits::lowest_bit(s, op, size, a, src),
                        ex(m, vec![r(a, size), gm(src, size)]),
                    );
                }
            }
        }
    }
    c.finish("bits");
}

#[test]
fn misc_forms() {
    let mut c = Checker::new();
    let amodes = all_amodes();
    for size in [Size::S16, Size::S32, Size::S64] {
        for a in &amodes {
            for dst in few_regs() {
                c.check(
                    |s| misc::lea(s, size, dst, a),
                    ex(Mnemonic::Lea, vec![r(dst, size), mem(a, 0)]),
                );
            }
        }
    }
    for g in regs() {
        c.check_plain(
            |s| misc::push_r(s, g),
            ex(Mnemonic::Push, vec![r(g, Size::S64)]),
        );
        c.check_plain(
            |s| misc::pop_r(s, g),
            ex(Mnemonic::Pop, vec![r(g, Size::S64)]),
        );
    }
    for v in [0, 1, -1, 127, -128, 128, -129, i32::MAX, i32::MIN] {
        c.check_plain(
            |s| misc::push_imm(s, v),
            ex(Mnemonic::Push, vec![imm(v.into(), 64)]),
        );
    }
    c.check_plain(misc::ret, ex(Mnemonic::Ret, vec![]));
    for n in [0u16, 8, 0xFFFF] {
        c.check_plain(
            |s| misc::ret_imm(s, n),
            ex(Mnemonic::Ret, vec![imm(n.into(), 16)]),
        );
    }
    c.check_plain(misc::ud2, ex(Mnemonic::Ud2, vec![]));
    c.check_plain(misc::int3, ex(Mnemonic::Int3, vec![]));
    for len in 1..=misc::MAX_NOP_LEN {
        let e = Expect {
            mnemonic: Mnemonic::Nop,
            ops: None,
            lock: false,
        };
        c.check_plain(|s| misc::nop(s, len), e);
    }
    for (kind, m) in [
        (Fence::Load, Mnemonic::Lfence),
        (Fence::Store, Mnemonic::Sfence),
        (Fence::Full, Mnemonic::Mfence),
    ] {
        c.check_plain(|s| misc::fence(s, kind), ex(m, vec![]));
    }
    for size in Size::ALL {
        for a in gprmems(&regs(), &some_amodes()) {
            for b in some_regs() {
                c.check(
                    |s| misc::xchg_rm_r(s, size, &a, b),
                    ex(Mnemonic::Xchg, vec![gm(&a, size), r(b, size)]),
                );
            }
        }
        for a in &amodes {
            for src in few_regs() {
                let e = ex_lock(Mnemonic::Cmpxchg, vec![mem(a, size.bytes()), r(src, size)]);
                c.check(|s| misc::lock_cmpxchg(s, size, a, src), e);
                let e = ex_lock(Mnemonic::Xadd, vec![mem(a, size.bytes()), r(src, size)]);
                c.check(|s| misc::lock_xadd(s, size, a, src), e);
            }
        }
    }
    for a in &amodes {
        c.check(
            |s| misc::lock_cmpxchg16b(s, a),
            ex_lock(Mnemonic::Cmpxchg16b, vec![mem(a, 16)]),
        );
    }
    c.finish("misc");
}

/// `nops` fills exactly the requested length with whole instructions.
#[test]
fn nops_fill_exactly() {
    for len in 0..40 {
        let mut b = Vec::new();
        misc::nops(&mut b, len);
        assert_eq!(b.len(), len);
        let mut d = Decoder::with_ip(64, &b, 0, DecoderOptions::NONE);
        let mut n = 0;
        while d.can_decode() {
            let i = d.decode();
            assert_eq!(i.mnemonic(), Mnemonic::Nop, "len {len}");
            n += 1;
        }
        assert_eq!(n, len.div_ceil(misc::MAX_NOP_LEN));
    }
}

/// A branch's inverted form is written on the stack: the fixed sink must hold exactly what
/// the growable one does, for every condition.
#[test]
fn array_sink_holds_what_a_vec_sink_holds() {
    use super::super::{ArraySink, CodeSink};
    for cond in Cc::ALL {
        for disp in [0, -6, 0x1234_5678] {
            let mut vec = Vec::new();
            cc::jcc_rel32(&mut vec, cond, disp);
            let mut array = ArraySink::<6>::new();
            cc::jcc_rel32(&mut array, cond, disp);
            assert_eq!(array.as_slice(), &vec[..], "{cond:?} {disp}");
            assert_eq!(array.current_offset(), 6);
        }
    }
}
