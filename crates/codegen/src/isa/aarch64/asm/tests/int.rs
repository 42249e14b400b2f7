//! Cross-checks of the integer data-processing forms: add/sub, logical, wide moves, shifts,
//! bitfield moves, multiply/divide, bit operations and conditional forms.

use super::super::add_sub::{self, AddSub, AddSubImm};
use super::super::bitfield::{self, Bitfield, BitfieldOp};
use super::super::bits::{self, BitOp};
use super::super::cond::{self, CcmpOp, Cond, CselOp, Nzcv};
use super::super::logical::{self, LogicalImmOp, LogicalOp};
use super::super::logical_imm::LogicalImm;
use super::super::moves::{self, MoveWideOp, WideImm};
use super::super::mul_div::{self, MaddOp, Signedness};
use super::super::operands::{
    ArithShift, Extend, Extended, LogicShift, ShiftAmount, Shifted, UImm5,
};
use super::super::shift::{self, ShiftOp};
use super::*;

fn addsub_name(op: AddSub) -> &'static str {
    match op {
        AddSub::Add => "add",
        AddSub::Sub => "sub",
    }
}

/// Shift amounts to try at `size`, the limits included.
fn amounts(size: Size) -> Vec<u32> {
    match size {
        Size::S32 => vec![0, 1, 17, 31],
        Size::S64 => vec![0, 1, 31, 32, 63],
    }
}

/// `, lsl #3`, or nothing for an unshifted register.
fn shift_suffix(kind: &str, amount: u32) -> String {
    if kind == "lsl" && amount == 0 {
        String::new()
    } else {
        format!(", {kind} #{amount}")
    }
}

fn extend_name(ext: Extend) -> &'static str {
    match ext {
        Extend::Uxtb => "uxtb",
        Extend::Uxth => "uxth",
        Extend::Uxtw => "uxtw",
        Extend::Uxtx => "uxtx",
        Extend::Sxtb => "sxtb",
        Extend::Sxth => "sxth",
        Extend::Sxtw => "sxtw",
        Extend::Sxtx => "sxtx",
    }
}

#[test]
fn add_sub_forms() {
    let mut c = Checker::new("add_sub");
    let imms = [
        (0, false),
        (1, false),
        (0xABC, false),
        (0xFFF, false),
        (0, true),
        (1, true),
        (0xFFF, true),
    ];
    for size in Size::ALL {
        for op in AddSub::ALL {
            let name = addsub_name(op);
            let flags_alias = match op {
                AddSub::Add => "cmn",
                AddSub::Sub => "cmp",
            };
            for rd in sps() {
                for rn in sps() {
                    for &(imm12, lsl12) in &imms {
                        let imm = AddSubImm::with_shift(imm12, lsl12).unwrap();
                        let sh = if lsl12 { ", lsl #12" } else { "" };
                        let (d, n) = (s(rd, size), s(rn, size));
                        let is_mov = op == AddSub::Add
                            && imm12 == 0
                            && !lsl12
                            && (rd == GprSp::SP || rn == GprSp::SP);
                        let e = if is_mov {
                            format!("mov {d}, {n}")
                        } else {
                            format!("{name} {d}, {n}, #{imm12:#x}{sh}")
                        };
                        c.check(|s| add_sub::add_sub_imm(s, op, size, rd, rn, imm), e);
                        let rd = zr(rd.enc());
                        let e = if rd == GprZr::ZR {
                            format!("{flags_alias} {n}, #{imm12:#x}{sh}")
                        } else {
                            format!("{name}s {}, {n}, #{imm12:#x}{sh}", z(rd, size))
                        };
                        c.check(|s| add_sub::adds_subs_imm(s, op, size, rd, rn, imm), e);
                    }
                }
            }
            for rd in zrs() {
                for rn in zrs() {
                    for rm in few_zrs() {
                        for kind in ArithShift::ALL {
                            let kname = match kind {
                                ArithShift::Lsl => "lsl",
                                ArithShift::Lsr => "lsr",
                                ArithShift::Asr => "asr",
                            };
                            for amount in amounts(size) {
                                let sh = Shifted::new(size, rm, kind, amount).unwrap();
                                let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                                let suffix = shift_suffix(kname, amount);
                                let e = if op == AddSub::Sub && rn == GprZr::ZR {
                                    format!("neg {d}, {m}{suffix}")
                                } else {
                                    format!("{name} {d}, {n}, {m}{suffix}")
                                };
                                c.check(|s| add_sub::add_sub_shifted(s, op, rd, rn, sh), e);
                                let e = if rd == GprZr::ZR {
                                    format!("{flags_alias} {n}, {m}{suffix}")
                                } else if op == AddSub::Sub && rn == GprZr::ZR {
                                    format!("negs {d}, {m}{suffix}")
                                } else {
                                    format!("{name}s {d}, {n}, {m}{suffix}")
                                };
                                c.check(|s| add_sub::adds_subs_shifted(s, op, rd, rn, sh), e);
                            }
                        }
                        let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                        if !(op == AddSub::Sub && rn == GprZr::ZR) {
                            let e = format!("{name} {d}, {n}, {m}");
                            c.check(|s| add_sub::add_sub_reg(s, op, size, rd, rn, rm), e);
                        }
                        if rd != GprZr::ZR && !(op == AddSub::Sub && rn == GprZr::ZR) {
                            let e = format!("{name}s {d}, {n}, {m}");
                            c.check(|s| add_sub::adds_subs_reg(s, op, size, rd, rn, rm), e);
                        }
                    }
                }
            }
            for rd in few_sps() {
                for rn in few_sps() {
                    for rm in few_zrs() {
                        for ext in Extend::ALL {
                            for amount in 0..=4 {
                                let rm_ext = Extended::new(rm, ext, amount).unwrap();
                                let x_reg =
                                    size == Size::S64 && matches!(ext, Extend::Uxtx | Extend::Sxtx);
                                let m = z(rm, if x_reg { Size::S64 } else { Size::S32 });
                                let is_lsl_ext = matches!(
                                    (size, ext),
                                    (Size::S32, Extend::Uxtw) | (Size::S64, Extend::Uxtx)
                                );
                                let ext_text = |sp_involved: bool| {
                                    let ename = extend_name(ext);
                                    match (sp_involved && is_lsl_ext, amount) {
                                        (true, 0) => String::new(),
                                        (true, a) => format!(", lsl #{a}"),
                                        (false, 0) => format!(", {ename}"),
                                        (false, a) => format!(", {ename} #{a}"),
                                    }
                                };
                                let (d, n) = (s(rd, size), s(rn, size));
                                let sp_involved = rd == GprSp::SP || rn == GprSp::SP;
                                let e = format!("{name} {d}, {n}, {m}{}", ext_text(sp_involved));
                                c.check(|s| add_sub::add_sub_ext(s, op, size, rd, rn, rm_ext), e);
                                let rd = zr(rd.enc());
                                let tail = format!("{m}{}", ext_text(rn == GprSp::SP));
                                let e = if rd == GprZr::ZR {
                                    format!("{flags_alias} {n}, {tail}")
                                } else {
                                    format!("{name}s {}, {n}, {tail}", z(rd, size))
                                };
                                c.check(|s| add_sub::adds_subs_ext(s, op, size, rd, rn, rm_ext), e);
                            }
                        }
                    }
                }
            }
        }
        // Operands that do not fit are rejected when they are built.
        assert!(Shifted::new(size, GprZr::ZR, ArithShift::Lsl, size.bits()).is_none());
    }
    assert!(Extended::new(GprZr::ZR, Extend::Uxtb, 5).is_none());
    assert!(AddSubImm::with_shift(0x1000, false).is_none());
    assert_eq!(
        AddSubImm::new(0xFFF).map(AddSubImm::parts),
        Some((0xFFF, false))
    );
    assert_eq!(
        AddSubImm::new(0xFFF000).map(AddSubImm::parts),
        Some((0xFFF, true))
    );
    assert_eq!(AddSubImm::new(0x1001), None);
    assert_eq!(AddSubImm::new(0x100_0000), None);
    c.finish();
}

/// Whether `movz` or `movn` can produce `value` (of `size`): then objdump prints
/// `orr rd, zr, #value` as `orr`, otherwise as `mov`.
fn move_wide_can(value: u64, size: Size) -> bool {
    let mask = if size == Size::S64 {
        u64::MAX
    } else {
        0xFFFF_FFFF
    };
    let one_halfword = |v: u64| (0..size.bits() / 16).any(|h| v & !(0xFFFF << (16 * h)) == 0);
    one_halfword(value & mask) || one_halfword(!value & mask)
}

/// Bitmask immediates built by definition: a run of `len` ones rotated right by `rot` in an
/// element of `esize` bits, replicated to 64 bits.
fn bitmask(esize: u32, len: u32, rot: u32) -> u64 {
    let emask = if esize == 64 {
        u64::MAX
    } else {
        (1u64 << esize) - 1
    };
    let run = (1u64 << len) - 1;
    let elem = if rot == 0 {
        run
    } else {
        ((run >> rot) | (run << (esize - rot))) & emask
    };
    let mut value = 0;
    let mut at = 0;
    while at < 64 {
        value |= elem << at;
        at += esize;
    }
    value
}

#[test]
fn carry_forms() {
    let mut c = Checker::new("carry");
    for size in Size::ALL {
        for op in AddSub::ALL {
            for set_flags in [false, true] {
                let name = match (op, set_flags) {
                    (AddSub::Add, false) => "adc",
                    (AddSub::Add, true) => "adcs",
                    (AddSub::Sub, false) => "sbc",
                    (AddSub::Sub, true) => "sbcs",
                };
                for rd in zrs() {
                    for rn in zrs() {
                        for rm in few_zrs() {
                            let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                            let e = if op == AddSub::Sub && rn == GprZr::ZR {
                                let neg = if set_flags { "ngcs" } else { "ngc" };
                                format!("{neg} {d}, {m}")
                            } else {
                                format!("{name} {d}, {n}, {m}")
                            };
                            c.check(
                                |s| add_sub::add_sub_carry(s, op, set_flags, size, rd, rn, rm),
                                e,
                            );
                        }
                    }
                }
            }
        }
    }
    c.finish();
}

#[test]
fn logical_forms() {
    let mut c = Checker::new("logical");
    for size in Size::ALL {
        for op in LogicalOp::ALL {
            let name = match op {
                LogicalOp::And => "and",
                LogicalOp::Bic => "bic",
                LogicalOp::Orr => "orr",
                LogicalOp::Orn => "orn",
                LogicalOp::Eor => "eor",
                LogicalOp::Eon => "eon",
                LogicalOp::Ands => "ands",
                LogicalOp::Bics => "bics",
            };
            for rd in zrs() {
                for rn in zrs() {
                    for rm in few_zrs() {
                        for kind in LogicShift::ALL {
                            let kname = match kind {
                                LogicShift::Lsl => "lsl",
                                LogicShift::Lsr => "lsr",
                                LogicShift::Asr => "asr",
                                LogicShift::Ror => "ror",
                            };
                            for amount in amounts(size) {
                                let sh = Shifted::new(size, rm, kind, amount).unwrap();
                                let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                                let suffix = shift_suffix(kname, amount);
                                let e = match op {
                                    LogicalOp::Orr if rn == GprZr::ZR && suffix.is_empty() => {
                                        format!("mov {d}, {m}")
                                    }
                                    LogicalOp::Orn if rn == GprZr::ZR => {
                                        format!("mvn {d}, {m}{suffix}")
                                    }
                                    LogicalOp::Ands if rd == GprZr::ZR => {
                                        format!("tst {n}, {m}{suffix}")
                                    }
                                    _ => format!("{name} {d}, {n}, {m}{suffix}"),
                                };
                                c.check(|s| logical::logical_shifted(s, op, rd, rn, sh), e);
                            }
                        }
                    }
                }
            }
            let (rd, rn, rm) = (zr(3), zr(4), zr(5));
            let e = format!("{name} {}, {}, {}", z(rd, size), z(rn, size), z(rm, size));
            c.check(|s| logical::logical_reg(s, op, size, rd, rn, rm), e);
        }
        // Immediates: every element size, run lengths and rotations at their limits.
        let mut values = Vec::new();
        for esize in [2, 4, 8, 16, 32, 64] {
            if esize > size.bits() {
                continue;
            }
            for len in [1, 2, esize / 2, esize - 1] {
                for rot in [0, 1, esize / 2, esize - 1] {
                    if len >= 1 && len < esize && rot < esize {
                        let v = bitmask(esize, len, rot);
                        values.push(if size == Size::S32 {
                            v & 0xFFFF_FFFF
                        } else {
                            v
                        });
                    }
                }
            }
        }
        values.sort_unstable();
        values.dedup();
        let hex = |v: u64| format!("#{v:#x}");
        for &value in &values {
            let imm = LogicalImm::new(value, size).unwrap_or_else(|| panic!("{value:#x}"));
            for op in LogicalImmOp::ALL {
                let name = match op {
                    LogicalImmOp::And => "and",
                    LogicalImmOp::Orr => "orr",
                    LogicalImmOp::Eor => "eor",
                };
                for rd in few_sps() {
                    for rn in few_zrs() {
                        let (d, n) = (s(rd, size), z(rn, size));
                        // GNU prints `mov` also when a wide move could make the value
                        // but cannot write SP.
                        let e = if op == LogicalImmOp::Orr
                            && rn == GprZr::ZR
                            && (rd == GprSp::SP || !move_wide_can(value, size))
                        {
                            format!("mov {d}, {}", hex(value))
                        } else {
                            format!("{name} {d}, {n}, {}", hex(value))
                        };
                        c.check(|s| logical::and_orr_eor_imm(s, op, rd, rn, imm), e);
                    }
                }
            }
            for rd in few_zrs() {
                for rn in few_zrs() {
                    let (d, n) = (z(rd, size), z(rn, size));
                    let e = if rd == GprZr::ZR {
                        format!("tst {n}, {}", hex(value))
                    } else {
                        format!("ands {d}, {n}, {}", hex(value))
                    };
                    c.check(|s| logical::ands_imm(s, rd, rn, imm), e);
                }
            }
        }
    }
    assert!(LogicalImm::new(0x1_0000_0001, Size::S32).is_none());
    c.finish();
}

#[test]
fn move_wide_forms() {
    let mut c = Checker::new("move_wide");
    for size in Size::ALL {
        let mask = if size == Size::S64 {
            u64::MAX
        } else {
            0xFFFF_FFFF
        };
        for op in MoveWideOp::ALL {
            for rd in zrs() {
                let d = z(rd, size);
                for imm16 in [0u16, 1, 0x1234, 0x8000, 0xFFFE, 0xFFFF] {
                    for shift in (0..size.bits()).step_by(16) {
                        let imm = WideImm::new(size, imm16, shift).unwrap();
                        let value = u64::from(imm16) << shift;
                        let lsl = if shift == 0 {
                            String::new()
                        } else {
                            format!(", lsl #{shift}")
                        };
                        let zero_shifted = imm16 == 0 && shift != 0;
                        let e = match op {
                            MoveWideOp::Movz if !zero_shifted => format!("mov {d}, #{value:#x}"),
                            MoveWideOp::Movn
                                if !(zero_shifted || (size == Size::S32 && imm16 == 0xFFFF)) =>
                            {
                                format!("mov {d}, #{:#x}", !value & mask)
                            }
                            MoveWideOp::Movz => format!("movz {d}, #{imm16:#x}{lsl}"),
                            MoveWideOp::Movn => format!("movn {d}, #{imm16:#x}{lsl}"),
                            MoveWideOp::Movk => format!("movk {d}, #{imm16:#x}{lsl}"),
                        };
                        c.check(|s| moves::move_wide(s, op, rd, imm), e);
                    }
                }
            }
        }
        assert!(WideImm::new(size, 1, size.bits()).is_none());
        assert!(WideImm::new(size, 1, 8).is_none());
    }
    // The helpers that find the halfword.
    let parts = |w: Option<WideImm>| w.map(WideImm::parts);
    assert_eq!(parts(WideImm::for_movz(Size::S64, 0)), Some((0, 0)));
    assert_eq!(
        parts(WideImm::for_movz(Size::S64, 0xABCD << 48)),
        Some((0xABCD, 48))
    );
    assert_eq!(parts(WideImm::for_movz(Size::S64, 0x1_0001)), None);
    assert_eq!(parts(WideImm::for_movz(Size::S32, 0x1_0000_0000)), None);
    assert_eq!(parts(WideImm::for_movn(Size::S64, !0x50000)), Some((5, 16)));
    assert_eq!(
        parts(WideImm::for_movn(Size::S32, 0xFFFF_0000)),
        Some((0xFFFF, 0))
    );
    c.finish();
}

#[test]
fn shift_and_bitfield_forms() {
    let mut c = Checker::new("shift_bitfield");
    for size in Size::ALL {
        let w = size.bits();
        for op in ShiftOp::ALL {
            let name = match op {
                ShiftOp::Lslv => "lsl",
                ShiftOp::Lsrv => "lsr",
                ShiftOp::Asrv => "asr",
                ShiftOp::Rorv => "ror",
            };
            for rd in zrs() {
                for rn in few_zrs() {
                    for rm in few_zrs() {
                        let e = format!("{name} {}, {}, {}", z(rd, size), z(rn, size), z(rm, size));
                        c.check(|s| shift::shift_reg(s, op, size, rd, rn, rm), e);
                    }
                }
            }
        }
        for rd in few_zrs() {
            for rn in few_zrs() {
                for rm in few_zrs() {
                    for lsb in amounts(size) {
                        let amount = ShiftAmount::new(size, lsb).unwrap();
                        let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                        let e = if rn == rm {
                            format!("ror {d}, {n}, #{lsb}")
                        } else {
                            format!("extr {d}, {n}, {m}, #{lsb}")
                        };
                        c.check(|s| shift::extr(s, rd, rn, rm, amount), e);
                    }
                }
            }
        }
        assert!(ShiftAmount::new(size, w).is_none());
        // Every immr/imms pair at the limits and around the extension widths.
        let positions: Vec<u32> = [0, 1, 6, 7, 8, 15, 16, 30, 31, 32, 62, 63]
            .into_iter()
            .filter(|&p| p < w)
            .collect();
        for op in BitfieldOp::ALL {
            for &immr in &positions {
                for &imms in &positions {
                    let field = Bitfield::new(size, immr, imms).unwrap();
                    for (rd, rn) in [(zr(0), zr(1)), (zr(30), zr(31)), (zr(31), zr(17))] {
                        let e = bitfield_text(op, size, rd, rn, immr, imms);
                        c.check(|s| bitfield::bitfield(s, op, rd, rn, field), e);
                    }
                }
            }
        }
        assert!(Bitfield::new(size, w, 0).is_none());
        assert!(Bitfield::new(size, 0, w).is_none());
        // The alias constructors.
        let (rd, rn) = (zr(2), zr(3));
        let (d, n) = (z(rd, size), z(rn, size));
        for amount in 1..w {
            let f = Bitfield::lsl(size, amount).unwrap();
            c.check(
                |s| bitfield::bitfield(s, BitfieldOp::Ubfm, rd, rn, f),
                format!("lsl {d}, {n}, #{amount}"),
            );
        }
        for amount in 0..w {
            let f = Bitfield::shift_right(size, amount).unwrap();
            c.check(
                |s| bitfield::bitfield(s, BitfieldOp::Ubfm, rd, rn, f),
                format!("lsr {d}, {n}, #{amount}"),
            );
            c.check(
                |s| bitfield::bitfield(s, BitfieldOp::Sbfm, rd, rn, f),
                format!("asr {d}, {n}, #{amount}"),
            );
        }
        for (lsb, width) in [
            (0, 1),
            (1, 2),
            (3, w - 4),
            (w - 1, 1),
            (1, w - 1),
            (w / 2, w / 2),
        ] {
            // A field that reaches the top bit is a plain shift, printed as one.
            let to_top = lsb + width == w;
            let f = Bitfield::extract(size, lsb, width).unwrap();
            let args = format!("{d}, {n}, #{lsb}, #{width}");
            let (ubfx, sbfx) = if to_top {
                (
                    format!("lsr {d}, {n}, #{lsb}"),
                    format!("asr {d}, {n}, #{lsb}"),
                )
            } else {
                (format!("ubfx {args}"), format!("sbfx {args}"))
            };
            c.check(|s| bitfield::bitfield(s, BitfieldOp::Ubfm, rd, rn, f), ubfx);
            c.check(|s| bitfield::bitfield(s, BitfieldOp::Sbfm, rd, rn, f), sbfx);
            c.check(
                |s| bitfield::bitfield(s, BitfieldOp::Bfm, rd, rn, f),
                format!("bfxil {args}"),
            );
            if lsb > 0 {
                let f = Bitfield::insert(size, lsb, width).unwrap();
                let ubfiz = if to_top {
                    format!("lsl {d}, {n}, #{lsb}")
                } else {
                    format!("ubfiz {args}")
                };
                c.check(
                    |s| bitfield::bitfield(s, BitfieldOp::Ubfm, rd, rn, f),
                    ubfiz,
                );
                c.check(
                    |s| bitfield::bitfield(s, BitfieldOp::Sbfm, rd, rn, f),
                    format!("sbfiz {args}"),
                );
                c.check(
                    |s| bitfield::bitfield(s, BitfieldOp::Bfm, rd, rn, f),
                    format!("bfi {args}"),
                );
                let bfc = format!("bfc {d}, #{lsb}, #{width}");
                c.check(
                    |s| bitfield::bitfield(s, BitfieldOp::Bfm, rd, GprZr::ZR, f),
                    bfc,
                );
            }
        }
        assert!(Bitfield::extract(size, 1, w).is_none());
        assert!(Bitfield::extract(size, 0, 0).is_none());
        assert!(Bitfield::insert(size, w, 1).is_none());
        // Inserting at bit 0 is extracting from bit 0.
        for width in [1, 8, w - 1, w] {
            assert_eq!(
                Bitfield::insert(size, 0, width),
                Bitfield::extract(size, 0, width)
            );
        }
        let ext = |bits: u32, op: BitfieldOp| Bitfield::extend(size, bits).map(|f| (op, f));
        let wn = z(rn, Size::S32);
        let mut extensions = vec![
            (ext(8, BitfieldOp::Sbfm), format!("sxtb {d}, {wn}")),
            (ext(16, BitfieldOp::Sbfm), format!("sxth {d}, {wn}")),
        ];
        match size {
            Size::S32 => {
                extensions.push((ext(8, BitfieldOp::Ubfm), format!("uxtb {d}, {wn}")));
                extensions.push((ext(16, BitfieldOp::Ubfm), format!("uxth {d}, {wn}")));
                assert!(Bitfield::extend(size, 32).is_none());
            }
            Size::S64 => extensions.push((ext(32, BitfieldOp::Sbfm), format!("sxtw {d}, {wn}"))),
        }
        for (f, e) in extensions {
            let (op, f) = f.unwrap();
            c.check(|s| bitfield::bitfield(s, op, rd, rn, f), e);
        }
    }
    c.finish();
}

/// The Arm ARM's `BFXPreferred`: whether `ubfm`/`sbfm` prints as `ubfx`/`sbfx`.
fn bfx_preferred(size: Size, unsigned: bool, immr: u32, imms: u32) -> bool {
    if imms < immr || imms == size.bits() - 1 {
        return false;
    }
    if immr == 0 {
        if size == Size::S32 && (imms == 7 || imms == 15) {
            return false;
        }
        if size == Size::S64 && !unsigned && (imms == 7 || imms == 15 || imms == 31) {
            return false;
        }
    }
    true
}

/// objdump's text for a bitfield move, by the Arm ARM's alias conditions.
fn bitfield_text(op: BitfieldOp, size: Size, rd: GprZr, rn: GprZr, immr: u32, imms: u32) -> String {
    let w = size.bits();
    let (d, n) = (z(rd, size), z(rn, size));
    let wn = z(rn, Size::S32);
    let (ins_lsb, ins_width) = ((w - immr) % w, imms + 1);
    let (ext_lsb, ext_width) = (immr, imms.wrapping_sub(immr).wrapping_add(1));
    match op {
        BitfieldOp::Ubfm => {
            if imms == w - 1 {
                format!("lsr {d}, {n}, #{immr}")
            } else if imms + 1 == immr {
                format!("lsl {d}, {n}, #{}", w - 1 - imms)
            } else if imms < immr {
                format!("ubfiz {d}, {n}, #{ins_lsb}, #{ins_width}")
            } else if bfx_preferred(size, true, immr, imms) {
                format!("ubfx {d}, {n}, #{ext_lsb}, #{ext_width}")
            } else {
                let name = if imms == 7 { "uxtb" } else { "uxth" };
                format!("{name} {d}, {wn}")
            }
        }
        BitfieldOp::Sbfm => {
            if imms == w - 1 {
                format!("asr {d}, {n}, #{immr}")
            } else if imms < immr {
                format!("sbfiz {d}, {n}, #{ins_lsb}, #{ins_width}")
            } else if bfx_preferred(size, false, immr, imms) {
                format!("sbfx {d}, {n}, #{ext_lsb}, #{ext_width}")
            } else {
                let name = match imms {
                    7 => "sxtb",
                    15 => "sxth",
                    _ => "sxtw",
                };
                format!("{name} {d}, {wn}")
            }
        }
        BitfieldOp::Bfm => {
            if imms < immr {
                if rn == GprZr::ZR {
                    format!("bfc {d}, #{ins_lsb}, #{ins_width}")
                } else {
                    format!("bfi {d}, {n}, #{ins_lsb}, #{ins_width}")
                }
            } else {
                format!("bfxil {d}, {n}, #{ext_lsb}, #{ext_width}")
            }
        }
    }
}

#[test]
fn mul_div_bit_forms() {
    let mut c = Checker::new("mul_div_bits");
    for size in Size::ALL {
        for op in MaddOp::ALL {
            let (name, alias) = match op {
                MaddOp::Madd => ("madd", "mul"),
                MaddOp::Msub => ("msub", "mneg"),
            };
            for rd in few_zrs() {
                for rn in few_zrs() {
                    for rm in few_zrs() {
                        for ra in few_zrs() {
                            let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                            let e = if ra == GprZr::ZR {
                                format!("{alias} {d}, {n}, {m}")
                            } else {
                                format!("{name} {d}, {n}, {m}, {}", z(ra, size))
                            };
                            c.check(|s| mul_div::madd(s, op, size, rd, rn, rm, ra), e);
                        }
                    }
                }
            }
        }
        for sign in Signedness::ALL {
            let name = if sign == Signedness::Signed {
                "sdiv"
            } else {
                "udiv"
            };
            for rd in zrs() {
                for rn in few_zrs() {
                    for rm in few_zrs() {
                        let e = format!("{name} {}, {}, {}", z(rd, size), z(rn, size), z(rm, size));
                        c.check(|s| mul_div::div(s, sign, size, rd, rn, rm), e);
                    }
                }
            }
        }
        for op in BitOp::ALL {
            let name = match op {
                BitOp::Rbit => "rbit",
                BitOp::Rev16 => "rev16",
                BitOp::Rev => "rev",
                BitOp::Clz => "clz",
                BitOp::Cls => "cls",
            };
            for rd in zrs() {
                for rn in zrs() {
                    let e = format!("{name} {}, {}", z(rd, size), z(rn, size));
                    c.check(|s| bits::bit_op(s, op, size, rd, rn), e);
                }
            }
        }
    }
    let (x, w) = (Size::S64, Size::S32);
    for sign in Signedness::ALL {
        let (u, high) = match sign {
            Signedness::Signed => ('s', "smulh"),
            Signedness::Unsigned => ('u', "umulh"),
        };
        for op in MaddOp::ALL {
            let (name, alias) = match op {
                MaddOp::Madd => ("maddl", "mull"),
                MaddOp::Msub => ("msubl", "mnegl"),
            };
            for rd in few_zrs() {
                for rn in few_zrs() {
                    for rm in few_zrs() {
                        for ra in few_zrs() {
                            let (d, n, m) = (z(rd, x), z(rn, w), z(rm, w));
                            let e = if ra == GprZr::ZR {
                                format!("{u}{alias} {d}, {n}, {m}")
                            } else {
                                format!("{u}{name} {d}, {n}, {m}, {}", z(ra, x))
                            };
                            c.check(|s| mul_div::madd_long(s, op, sign, rd, rn, rm, ra), e);
                        }
                    }
                }
            }
        }
        for rd in zrs() {
            for rn in few_zrs() {
                for rm in few_zrs() {
                    let e = format!("{high} {}, {}, {}", z(rd, x), z(rn, x), z(rm, x));
                    c.check(|s| mul_div::mul_high(s, sign, rd, rn, rm), e);
                }
            }
        }
    }
    for rd in zrs() {
        for rn in zrs() {
            c.check(
                |s| bits::rev32(s, rd, rn),
                format!("rev32 {}, {}", z(rd, x), z(rn, x)),
            );
        }
    }
    c.finish();
}

#[test]
fn conditional_forms() {
    let mut c = Checker::new("conditional");
    for cond in Cond::ALL {
        assert_eq!(cond.invert().invert(), cond);
        assert_ne!(cond.invert(), cond);
    }
    assert_eq!(Cond::Hs.invert(), Cond::Lo);
    assert_eq!(Cond::Gt.invert(), Cond::Le);
    for size in Size::ALL {
        for op in CselOp::ALL {
            for rd in few_zrs() {
                for rn in few_zrs() {
                    for rm in few_zrs() {
                        for cond in Cond::ALL {
                            let (cn, inv) = (cond_name(cond), inverse_name(cond));
                            let (d, n, m) = (z(rd, size), z(rn, size), z(rm, size));
                            let zero = rn == GprZr::ZR;
                            let e = match op {
                                CselOp::Csinc if rn == rm && zero => format!("cset {d}, {inv}"),
                                CselOp::Csinc if rn == rm => format!("cinc {d}, {n}, {inv}"),
                                CselOp::Csinv if rn == rm && zero => format!("csetm {d}, {inv}"),
                                CselOp::Csinv if rn == rm => format!("cinv {d}, {n}, {inv}"),
                                CselOp::Csneg if rn == rm => format!("cneg {d}, {n}, {inv}"),
                                _ => {
                                    let name = match op {
                                        CselOp::Csel => "csel",
                                        CselOp::Csinc => "csinc",
                                        CselOp::Csinv => "csinv",
                                        CselOp::Csneg => "csneg",
                                    };
                                    format!("{name} {d}, {n}, {m}, {cn}")
                                }
                            };
                            c.check(|s| cond::csel(s, op, size, rd, rn, rm, cond), e);
                        }
                    }
                }
            }
        }
        for op in CcmpOp::ALL {
            let name = match op {
                CcmpOp::Ccmn => "ccmn",
                CcmpOp::Ccmp => "ccmp",
            };
            for rn in few_zrs() {
                for cond in Cond::ALL {
                    let cn = cond_name(cond);
                    for nzcv in [0, 1, 4, 8, 15] {
                        let flags = Nzcv::from_bits(nzcv).unwrap();
                        let n = z(rn, size);
                        for rm in few_zrs() {
                            let e = format!("{name} {n}, {}, #{nzcv:#x}, {cn}", z(rm, size));
                            c.check(|s| cond::ccmp_reg(s, op, size, rn, rm, flags, cond), e);
                        }
                        for imm in [0, 1, 16, 31] {
                            let i = UImm5::new(imm).unwrap();
                            let e = format!("{name} {n}, #{imm:#x}, #{nzcv:#x}, {cn}");
                            c.check(|s| cond::ccmp_imm(s, op, size, rn, i, flags, cond), e);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(Nzcv::new(true, false, true, false).bits(), 0b1010);
    assert!(Nzcv::from_bits(16).is_none());
    assert!(UImm5::new(32).is_none());
    c.finish();
}
