//! Cross-checks of the scalar floating-point forms.

use super::super::cond::Cond;
use super::super::fp::{self, FcmpOp, FpBinOp, FpFmaOp, FpToInt, FpUnaryOp, IntToFp};
use super::super::fp_imm::FpImm8;
use super::super::regs::FpSize;
use super::*;

/// The register prefix of a precision.
fn p(size: FpSize) -> char {
    match size {
        FpSize::F32 => 's',
        FpSize::F64 => 'd',
    }
}

/// A float as C's `%.18e` prints it (objdump's format for `fmov` immediates).
fn c_exp(value: f64) -> String {
    let text = format!("{value:.18e}");
    let (mantissa, exp) = text.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

#[test]
fn fp_forms() {
    let mut c = Checker::new("fp");
    assert_eq!(c_exp(-31.0), "-3.100000000000000000e+01");
    assert_eq!(c_exp(0.125), "1.250000000000000000e-01");
    for size in FpSize::ALL {
        let p = p(size);
        for op in FpBinOp::ALL {
            let name = match op {
                FpBinOp::Fmul => "fmul",
                FpBinOp::Fdiv => "fdiv",
                FpBinOp::Fadd => "fadd",
                FpBinOp::Fsub => "fsub",
                FpBinOp::Fmax => "fmax",
                FpBinOp::Fmin => "fmin",
                FpBinOp::Fmaxnm => "fmaxnm",
                FpBinOp::Fminnm => "fminnm",
                FpBinOp::Fnmul => "fnmul",
            };
            for rd in vregs() {
                for rn in few_vregs() {
                    for rm in few_vregs() {
                        let e = format!("{name} {}, {}, {}", v(rd, p), v(rn, p), v(rm, p));
                        c.check(|s| fp::fp_binary(s, op, size, rd, rn, rm), e);
                    }
                }
            }
        }
        for op in FpUnaryOp::ALL {
            let name = match op {
                FpUnaryOp::Fmov => "fmov",
                FpUnaryOp::Fabs => "fabs",
                FpUnaryOp::Fneg => "fneg",
                FpUnaryOp::Fsqrt => "fsqrt",
                FpUnaryOp::Frintn => "frintn",
                FpUnaryOp::Frintp => "frintp",
                FpUnaryOp::Frintm => "frintm",
                FpUnaryOp::Frintz => "frintz",
                FpUnaryOp::Frinta => "frinta",
                FpUnaryOp::Frintx => "frintx",
                FpUnaryOp::Frinti => "frinti",
            };
            for rd in vregs() {
                for rn in vregs() {
                    let e = format!("{name} {}, {}", v(rd, p), v(rn, p));
                    c.check(|s| fp::fp_unary(s, op, size, rd, rn), e);
                }
            }
        }
        let other = match size {
            FpSize::F32 => 'd',
            FpSize::F64 => 's',
        };
        for rd in vregs() {
            for rn in vregs() {
                let e = format!("fcvt {}, {}", v(rd, other), v(rn, p));
                c.check(|s| fp::fcvt(s, size, rd, rn), e);
            }
        }
        for op in FpFmaOp::ALL {
            let name = match op {
                FpFmaOp::Fmadd => "fmadd",
                FpFmaOp::Fmsub => "fmsub",
                FpFmaOp::Fnmadd => "fnmadd",
                FpFmaOp::Fnmsub => "fnmsub",
            };
            for rd in few_vregs() {
                for rn in few_vregs() {
                    for rm in few_vregs() {
                        for ra in few_vregs() {
                            let (d, n, m, a) = (v(rd, p), v(rn, p), v(rm, p), v(ra, p));
                            let e = format!("{name} {d}, {n}, {m}, {a}");
                            c.check(|s| fp::fp_fma(s, op, size, rd, rn, rm, ra), e);
                        }
                    }
                }
            }
        }
        for op in FcmpOp::ALL {
            let name = match op {
                FcmpOp::Fcmp => "fcmp",
                FcmpOp::Fcmpe => "fcmpe",
            };
            for rn in vregs() {
                for rm in vregs() {
                    let e = format!("{name} {}, {}", v(rn, p), v(rm, p));
                    c.check(|s| fp::fcmp(s, op, size, rn, rm), e);
                }
                let e = format!("{name} {}, #0.0", v(rn, p));
                c.check(|s| fp::fcmp_zero(s, op, size, rn), e);
            }
        }
        for cond in Cond::ALL {
            for rd in few_vregs() {
                for rn in few_vregs() {
                    for rm in few_vregs() {
                        let cn = cond_name(cond);
                        let e = format!("fcsel {}, {}, {}, {cn}", v(rd, p), v(rn, p), v(rm, p));
                        c.check(|s| fp::fcsel(s, size, rd, rn, rm, cond), e);
                    }
                }
            }
        }
        for int in Size::ALL {
            for (op, name) in [(IntToFp::Scvtf, "scvtf"), (IntToFp::Ucvtf, "ucvtf")] {
                for rd in few_vregs() {
                    for rn in zrs() {
                        let e = format!("{name} {}, {}", v(rd, p), z(rn, int));
                        c.check(|s| fp::int_to_fp(s, op, int, size, rd, rn), e);
                    }
                }
            }
            for (op, name) in [(FpToInt::Fcvtzs, "fcvtzs"), (FpToInt::Fcvtzu, "fcvtzu")] {
                for rd in zrs() {
                    for rn in few_vregs() {
                        let e = format!("{name} {}, {}", z(rd, int), v(rn, p));
                        c.check(|s| fp::fp_to_int(s, op, int, size, rd, rn), e);
                    }
                }
            }
        }
        let int = match size {
            FpSize::F32 => Size::S32,
            FpSize::F64 => Size::S64,
        };
        for r in zrs() {
            for f in vregs() {
                let e = format!("fmov {}, {}", z(r, int), v(f, p));
                c.check(|s| fp::fmov_to_gpr(s, size, r, f), e);
                let e = format!("fmov {}, {}", v(f, p), z(r, int));
                c.check(|s| fp::fmov_from_gpr(s, size, f, r), e);
            }
        }
        for bits in 0..=255u8 {
            let imm = FpImm8::from_bits(bits);
            for rd in [vreg(0), vreg(31)] {
                let e = format!("fmov {}, #{}", v(rd, p), c_exp(imm.value()));
                c.check(|s| fp::fmov_imm(s, size, rd, imm), e);
            }
        }
        for value in [1.0, -2.5, 0.125, 31.0, -0.1875] {
            let imm = FpImm8::new(value).unwrap();
            let e = format!("fmov {}, #{}", v(vreg(5), p), c_exp(value));
            c.check(|s| fp::fmov_imm(s, size, vreg(5), imm), e);
        }
    }
    c.finish();
}
