//! The NEON forms (`asm/simd.rs`) against objdump, every op at every lane size it takes.

use super::super::regs::{Gpr, Vreg};
use super::super::simd::*;
use super::Checker;

fn vr(n: u8) -> Vreg {
    Vreg::new(n).unwrap()
}

/// `vN.T` with the lane size's full-register arrangement.
fn t(n: u8, e: Elem) -> String {
    format!("v{n}.{}", e.suffix())
}

/// `vN.T` of the 64-bit half arrangement (`8b`, `4h`, `2s`).
fn half(n: u8, e: Elem) -> String {
    let s = match e {
        Elem::B => "8b",
        Elem::H => "4h",
        Elem::S => "2s",
        Elem::D => "1d",
    };
    format!("v{n}.{s}")
}

const INT: [Elem; 4] = [Elem::B, Elem::H, Elem::S, Elem::D];
const FLOAT: [Elem; 2] = [Elem::S, Elem::D];
const BYTES: [Elem; 1] = [Elem::B];

#[test]
fn simd_forms() {
    use VecBinOp::*;
    let mut c = Checker::new("simd");
    let (d, n, m) = (3u8, 17u8, 30u8);
    let small = &INT[..3];
    let hs = &INT[1..3];
    let bin: Vec<(VecBinOp, &str, &[Elem])> = vec![
        (Add, "add", &INT),
        (Sub, "sub", &INT),
        (Mul, "mul", small),
        (Sqadd, "sqadd", &INT),
        (Uqadd, "uqadd", &INT),
        (Sqsub, "sqsub", &INT),
        (Uqsub, "uqsub", &INT),
        (Urhadd, "urhadd", small),
        (Smax, "smax", small),
        (Umax, "umax", small),
        (Smin, "smin", small),
        (Umin, "umin", small),
        (Sshl, "sshl", &INT),
        (Ushl, "ushl", &INT),
        (Cmeq, "cmeq", &INT),
        (Cmgt, "cmgt", &INT),
        (Cmhi, "cmhi", &INT),
        (Cmge, "cmge", &INT),
        (Cmhs, "cmhs", &INT),
        (Addp, "addp", &INT),
        (And, "and", &BYTES),
        (Bic, "bic", &BYTES),
        (Orn, "orn", &BYTES),
        (Eor, "eor", &BYTES),
        (Bsl, "bsl", &BYTES),
        (Sqrdmulh, "sqrdmulh", hs),
        (Fadd, "fadd", &FLOAT),
        (Fsub, "fsub", &FLOAT),
        (Fmul, "fmul", &FLOAT),
        (Fdiv, "fdiv", &FLOAT),
        (Fmax, "fmax", &FLOAT),
        (Fmin, "fmin", &FLOAT),
        (Fcmeq, "fcmeq", &FLOAT),
        (Fcmge, "fcmge", &FLOAT),
        (Fcmgt, "fcmgt", &FLOAT),
        (Fmla, "fmla", &FLOAT),
        (Uzp1, "uzp1", &INT),
        (Uzp2, "uzp2", &INT),
        (Zip1, "zip1", &INT),
        (Zip2, "zip2", &INT),
    ];
    for (op, name, elems) in bin {
        for &e in elems {
            let text = format!("{name} {}, {}, {}", t(d, e), t(n, e), t(m, e));
            c.check(|s| vec_binary(s, op, e, vr(d), vr(n), vr(m)), text);
        }
    }
    let orr = format!(
        "orr {}, {}, {}",
        t(d, Elem::B),
        t(n, Elem::B),
        t(m, Elem::B)
    );
    c.check(|s| vec_binary(s, Orr, Elem::B, vr(d), vr(n), vr(m)), orr);
    c.check(
        |s| vec_mov(s, vr(d), vr(n)),
        format!("mov {}, {}", t(d, Elem::B), t(n, Elem::B)),
    );

    use VecUnaryOp::*;
    let un: Vec<(VecUnaryOp, &str, &[Elem])> = vec![
        (Abs, "abs", &INT),
        (Neg, "neg", &INT),
        (Not, "mvn", &BYTES),
        (Cnt, "cnt", &BYTES),
        (Rev16, "rev16", &BYTES),
        (Rev32, "rev32", &BYTES),
        (Rev64, "rev64", &BYTES),
        (Fabs, "fabs", &FLOAT),
        (Fneg, "fneg", &FLOAT),
        (Fsqrt, "fsqrt", &FLOAT),
        (Frintn, "frintn", &FLOAT),
        (Frintp, "frintp", &FLOAT),
        (Frintm, "frintm", &FLOAT),
        (Frintz, "frintz", &FLOAT),
        (Scvtf, "scvtf", &FLOAT),
        (Ucvtf, "ucvtf", &FLOAT),
        (Fcvtzs, "fcvtzs", &FLOAT),
        (Fcvtzu, "fcvtzu", &FLOAT),
    ];
    for (op, name, elems) in un {
        for &e in elems {
            c.check(
                |s| vec_unary(s, op, e, vr(d), vr(n)),
                format!("{name} {}, {}", t(d, e), t(n, e)),
            );
        }
    }
    for (op, name) in [
        (Cmeq0, "cmeq"),
        (Cmgt0, "cmgt"),
        (Cmge0, "cmge"),
        (Cmlt0, "cmlt"),
        (Cmle0, "cmle"),
    ] {
        for e in INT {
            c.check(
                |s| vec_unary(s, op, e, vr(d), vr(n)),
                format!("{name} {}, {}, #0", t(d, e), t(n, e)),
            );
        }
    }
    for (op, name) in [(Saddlp, "saddlp"), (Uaddlp, "uaddlp")] {
        for (e, w) in [(Elem::B, Elem::H), (Elem::H, Elem::S), (Elem::S, Elem::D)] {
            c.check(
                |s| vec_unary(s, op, e, vr(d), vr(n)),
                format!("{name} {}, {}", t(d, w), t(n, e)),
            );
        }
    }
    for (op, name) in [
        (NarrowOp::Sqxtn, "sqxtn"),
        (NarrowOp::Uqxtn, "uqxtn"),
        (NarrowOp::Sqxtun, "sqxtun"),
    ] {
        for (e, to) in [(Elem::H, Elem::B), (Elem::S, Elem::H), (Elem::D, Elem::S)] {
            c.check(
                |s| vec_narrow(s, op, false, e, vr(d), vr(n)),
                format!("{name} {}, {}", half(d, to), t(n, e)),
            );
            c.check(
                |s| vec_narrow(s, op, true, e, vr(d), vr(n)),
                format!("{name}2 {}, {}", t(d, to), t(n, e)),
            );
        }
    }
    c.check(
        |s| vec_narrow(s, NarrowOp::Fcvtn, false, Elem::D, vr(d), vr(n)),
        format!("fcvtn {}, {}", half(d, Elem::S), t(n, Elem::D)),
    );
    c.check(
        |s| fcvtl(s, false, vr(d), vr(n)),
        format!("fcvtl {}, {}", t(d, Elem::D), half(n, Elem::S)),
    );
    for (op, name) in [
        (AcrossOp::Addv, "addv"),
        (AcrossOp::Umaxv, "umaxv"),
        (AcrossOp::Uminv, "uminv"),
    ] {
        for (e, r) in [(Elem::B, 'b'), (Elem::H, 'h'), (Elem::S, 's')] {
            c.check(
                |s| vec_across(s, op, e, false, vr(d), vr(n)),
                format!("{name} {r}{d}, {}", t(n, e)),
            );
        }
        c.check(
            |s| vec_across(s, op, Elem::B, true, vr(d), vr(n)),
            format!("{name} b{d}, {}", half(n, Elem::B)),
        );
    }
    c.check(
        |s| addp_scalar(s, vr(d), vr(n)),
        format!("addp d{d}, {}", t(n, Elem::D)),
    );
    for e in INT {
        let bits = e.bits() as u8;
        for k in [0, 1, bits - 1] {
            c.check(
                |s| vec_shift_imm(s, ShiftImmOp::Shl, e, vr(d), vr(n), u32::from(k)),
                format!("shl {}, {}, #{k}", t(d, e), t(n, e)),
            );
        }
        for k in [1, bits - 1, bits] {
            c.check(
                |s| vec_shift_imm(s, ShiftImmOp::Ushr, e, vr(d), vr(n), u32::from(k)),
                format!("ushr {}, {}, #{k}", t(d, e), t(n, e)),
            );
            c.check(
                |s| vec_shift_imm(s, ShiftImmOp::Sshr, e, vr(d), vr(n), u32::from(k)),
                format!("sshr {}, {}, #{k}", t(d, e), t(n, e)),
            );
        }
    }
    for (e, w) in [(Elem::B, Elem::H), (Elem::H, Elem::S), (Elem::S, Elem::D)] {
        c.check(
            |s| vec_widen(s, true, false, e, vr(d), vr(n)),
            format!("sxtl {}, {}", t(d, w), half(n, e)),
        );
        c.check(
            |s| vec_widen(s, false, true, e, vr(d), vr(n)),
            format!("uxtl2 {}, {}", t(d, w), t(n, e)),
        );
        c.check(
            |s| mull(s, true, false, e, vr(d), vr(n), vr(m)),
            format!("smull {}, {}, {}", t(d, w), half(n, e), half(m, e)),
        );
        c.check(
            |s| mull(s, false, true, e, vr(d), vr(n), vr(m)),
            format!("umull2 {}, {}, {}", t(d, w), t(n, e), t(m, e)),
        );
    }
    let x5 = Gpr::new(5).unwrap();
    for (e, lanes, r) in [
        (Elem::B, 16u8, 'b'),
        (Elem::H, 8, 'h'),
        (Elem::S, 4, 's'),
        (Elem::D, 2, 'd'),
    ] {
        let g = if e == Elem::D { "x5" } else { "w5" };
        c.check(
            |s| dup_gpr(s, e, vr(d), x5.into()),
            format!("dup {}, {g}", t(d, e)),
        );
        for lane in [0, lanes - 1] {
            c.check(
                |s| dup_elem(s, e, vr(d), vr(n), lane),
                format!("dup {}, v{n}.{r}[{lane}]", t(d, e)),
            );
            c.check(
                |s| dup_scalar(s, e, vr(d), vr(n), lane),
                format!("mov {r}{d}, v{n}.{r}[{lane}]"),
            );
            let mov = if matches!(e, Elem::S | Elem::D) {
                "mov"
            } else {
                "umov"
            };
            c.check(
                |s| umov(s, e, x5, vr(n), lane),
                format!("{mov} {g}, v{n}.{r}[{lane}]"),
            );
            c.check(
                |s| ins_gpr(s, e, vr(d), lane, x5.into()),
                format!("mov v{d}.{r}[{lane}], {g}"),
            );
            c.check(
                |s| ins_elem(s, e, vr(d), lane, vr(n), lanes - 1 - lane),
                format!("mov v{d}.{r}[{lane}], v{n}.{r}[{}]", lanes - 1 - lane),
            );
        }
    }
    c.check(
        |s| tbl(s, vr(d), vr(n), vr(m)),
        format!(
            "tbl {}, {{{}}}, {}",
            t(d, Elem::B),
            t(n, Elem::B),
            t(m, Elem::B)
        ),
    );
    c.check(
        |s| ext(s, vr(d), vr(n), vr(m), 8),
        format!(
            "ext {}, {}, {}, #8",
            t(d, Elem::B),
            t(n, Elem::B),
            t(m, Elem::B)
        ),
    );
    c.check(
        |s| movi_fill(s, false, vr(d)),
        format!("movi v{d}.2d, #0x0"),
    );
    c.check(
        |s| movi_fill(s, true, vr(d)),
        format!("movi v{d}.2d, #0xffffffffffffffff"),
    );
    c.finish();
}
