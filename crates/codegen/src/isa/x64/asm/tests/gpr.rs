//! Cross-checks of the integer forms: ALU, test, unary, shifts, multiply/divide, moves and
//! extensions.

use super::super::alu::{self, AluOp, UnaryOp};
use super::super::moves::{self, ExtMode};
use super::super::mul_div::{self, MulDivOp};
use super::super::shift::{self, DoubleShift, ShiftOp};
use super::*;

fn alu_mnemonic(op: AluOp) -> Mnemonic {
    match op {
        AluOp::Add => Mnemonic::Add,
        AluOp::Or => Mnemonic::Or,
        AluOp::Adc => Mnemonic::Adc,
        AluOp::Sbb => Mnemonic::Sbb,
        AluOp::And => Mnemonic::And,
        AluOp::Sub => Mnemonic::Sub,
        AluOp::Xor => Mnemonic::Xor,
        AluOp::Cmp => Mnemonic::Cmp,
    }
}

#[test]
fn alu_forms() {
    let mut c = Checker::new();
    let rms = gprmems(&regs(), &some_amodes());
    let rms_small = gprmems(&few_regs(), &few_amodes());
    for op in AluOp::ALL {
        let m = alu_mnemonic(op);
        for size in Size::ALL {
            for dst in &rms {
                for src in some_regs() {
                    c.check(
                        |s| alu::alu_rm_r(s, op, size, dst, src),
                        ex(m, vec![gm(dst, size), r(src, size)]),
                    );
                    c.check(
                        |s| alu::alu_r_rm(s, op, size, src, dst),
                        ex(m, vec![r(src, size), gm(dst, size)]),
                    );
                }
            }
            for dst in &rms_small {
                for v in imms(size) {
                    let e = ex(m, vec![gm(dst, size), imm(v.into(), size.bits())]);
                    c.check(|s| alu::alu_rm_imm(s, op, size, dst, v), e);
                }
            }
            if op != AluOp::Cmp {
                for a in few_amodes() {
                    for src in few_regs() {
                        let e = ex_lock(m, vec![mem(&a, size.bytes()), r(src, size)]);
                        c.check(|s| alu::lock_alu_m_r(s, op, size, &a, src), e);
                    }
                }
            }
        }
    }
    c.finish("alu");
}

#[test]
fn test_and_unary_forms() {
    let mut c = Checker::new();
    let rms = gprmems(&regs(), &all_amodes());
    for size in Size::ALL {
        for dst in &rms {
            for src in few_regs() {
                let e = ex(Mnemonic::Test, vec![gm(dst, size), r(src, size)]);
                c.check(|s| alu::test_rm_r(s, size, dst, src), e);
            }
            for op in UnaryOp::ALL {
                let m = match op {
                    UnaryOp::Inc => Mnemonic::Inc,
                    UnaryOp::Dec => Mnemonic::Dec,
                    UnaryOp::Not => Mnemonic::Not,
                    UnaryOp::Neg => Mnemonic::Neg,
                };
                c.check(
                    |s| alu::unary_rm(s, op, size, dst),
                    ex(m, vec![gm(dst, size)]),
                );
            }
        }
        for dst in gprmems(&some_regs(), &few_amodes()) {
            for v in imms(size) {
                let e = ex(
                    Mnemonic::Test,
                    vec![gm(&dst, size), imm(v.into(), size.bits())],
                );
                c.check(|s| alu::test_rm_imm(s, size, &dst, v), e);
            }
        }
    }
    c.finish("test/unary");
}

#[test]
fn shift_forms() {
    let mut c = Checker::new();
    let rms = gprmems(&regs(), &some_amodes());
    for op in ShiftOp::ALL {
        let m = match op {
            ShiftOp::Rol => Mnemonic::Rol,
            ShiftOp::Ror => Mnemonic::Ror,
            ShiftOp::Rcl => Mnemonic::Rcl,
            ShiftOp::Rcr => Mnemonic::Rcr,
            ShiftOp::Shl => Mnemonic::Shl,
            ShiftOp::Shr => Mnemonic::Shr,
            ShiftOp::Sar => Mnemonic::Sar,
        };
        for size in Size::ALL {
            for dst in &rms {
                c.check(
                    |s| shift::shift_rm_cl(s, op, size, dst),
                    ex(m, vec![gm(dst, size), Op::Reg(Register::CL)]),
                );
                for n in [1, 7, 31, 63] {
                    let e = ex(m, vec![gm(dst, size), imm(n.into(), 8)]);
                    c.check(|s| shift::shift_rm_imm(s, op, size, dst, n), e);
                }
            }
        }
    }
    for (op, m) in [
        (DoubleShift::Shld, Mnemonic::Shld),
        (DoubleShift::Shrd, Mnemonic::Shrd),
    ] {
        for size in [Size::S16, Size::S32, Size::S64] {
            for dst in gprmems(&some_regs(), &some_amodes()) {
                for src in few_regs() {
                    let e = ex(m, vec![gm(&dst, size), r(src, size), Op::Reg(Register::CL)]);
                    c.check(|s| shift::double_shift_cl(s, op, size, &dst, src), e);
                    let e = ex(m, vec![gm(&dst, size), r(src, size), imm(13, 8)]);
                    c.check(|s| shift::double_shift_imm(s, op, size, &dst, src, 13), e);
                }
            }
        }
    }
    c.finish("shift");
}

#[test]
fn mul_div_forms() {
    let mut c = Checker::new();
    for size in Size::ALL {
        for src in gprmems(&regs(), &all_amodes()) {
            for op in MulDivOp::ALL {
                let m = match op {
                    MulDivOp::Mul => Mnemonic::Mul,
                    MulDivOp::Imul => Mnemonic::Imul,
                    MulDivOp::Div => Mnemonic::Div,
                    MulDivOp::Idiv => Mnemonic::Idiv,
                };
                c.check(
                    |s| mul_div::mul_div_rm(s, op, size, &src),
                    ex(m, vec![gm(&src, size)]),
                );
            }
        }
        if size == Size::S8 {
            continue;
        }
        for src in gprmems(&regs(), &some_amodes()) {
            for dst in some_regs() {
                let e = ex(Mnemonic::Imul, vec![r(dst, size), gm(&src, size)]);
                c.check(|s| mul_div::imul_r_rm(s, size, dst, &src), e);
            }
            for dst in few_regs() {
                for v in imms(size) {
                    let e = ex(
                        Mnemonic::Imul,
                        vec![r(dst, size), gm(&src, size), imm(v.into(), size.bits())],
                    );
                    c.check(|s| mul_div::imul_r_rm_imm(s, size, dst, &src, v), e);
                }
            }
        }
        let (wide, half) = match size {
            Size::S16 => (Mnemonic::Cwd, Mnemonic::Cbw),
            Size::S32 => (Mnemonic::Cdq, Mnemonic::Cwde),
            _ => (Mnemonic::Cqo, Mnemonic::Cdqe),
        };
        c.check_plain(|s| mul_div::sign_extend_rdx(s, size), ex(wide, vec![]));
        c.check_plain(|s| mul_div::sign_extend_rax(s, size), ex(half, vec![]));
    }
    c.finish("mul/div");
}

#[test]
fn move_forms() {
    let mut c = Checker::new();
    let rms = gprmems(&regs(), &all_amodes());
    for size in Size::ALL {
        for rm in &rms {
            for g in some_regs() {
                c.check(
                    |s| moves::mov_rm_r(s, size, rm, g),
                    ex(Mnemonic::Mov, vec![gm(rm, size), r(g, size)]),
                );
                c.check(
                    |s| moves::mov_r_rm(s, size, g, rm),
                    ex(Mnemonic::Mov, vec![r(g, size), gm(rm, size)]),
                );
            }
        }
        for rm in gprmems(&regs(), &some_amodes()) {
            for v in imms(size) {
                let e = ex(
                    Mnemonic::Mov,
                    vec![gm(&rm, size), imm(v.into(), size.bits())],
                );
                c.check(|s| moves::mov_rm_imm(s, size, &rm, v), e);
            }
        }
        let mut wide: Vec<i64> = imms(size).into_iter().map(i64::from).collect();
        if size == Size::S32 {
            wide.push(0xFFFF_FFFF);
        }
        if size == Size::S64 {
            wide.extend([i64::MAX, i64::MIN, 0x1_0000_0000, -0x8000_0001]);
        }
        for g in regs() {
            for &v in &wide {
                let e = ex(Mnemonic::Mov, vec![r(g, size), imm(v, size.bits())]);
                c.check_plain(|s| moves::mov_r_imm(s, size, g, v), e);
            }
        }
    }
    // mov_r_imm64 picks a form: the decoded instruction must still produce the value.
    for g in regs() {
        for v in [
            0u64,
            1,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            0x1_0000_0000,
            u64::MAX,
            1 << 63,
            (-5i64) as u64,
        ] {
            let e = if v <= u64::from(u32::MAX) {
                ex(Mnemonic::Mov, vec![r(g, Size::S32), imm(v as i64, 32)])
            } else {
                ex(Mnemonic::Mov, vec![r(g, Size::S64), imm(v as i64, 64)])
            };
            c.check_plain(|s| moves::mov_r_imm64(s, g, v), e);
        }
    }
    for mode in ExtMode::ALL {
        let (from, to) = mode.sizes();
        for src in gprmems(&regs(), &some_amodes()) {
            for dst in some_regs() {
                let (zm, zto) = if mode == ExtMode::LQ {
                    (Mnemonic::Mov, Size::S32)
                } else {
                    (Mnemonic::Movzx, to)
                };
                c.check(
                    |s| moves::movzx(s, mode, dst, &src),
                    ex(zm, vec![r(dst, zto), gm(&src, from)]),
                );
                let sm = if mode == ExtMode::LQ {
                    Mnemonic::Movsxd
                } else {
                    Mnemonic::Movsx
                };
                c.check(
                    |s| moves::movsx(s, mode, dst, &src),
                    ex(sm, vec![r(dst, to), gm(&src, from)]),
                );
            }
        }
    }
    c.finish("moves");
}
