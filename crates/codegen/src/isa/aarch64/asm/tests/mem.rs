//! Cross-checks of loads and stores (single, pair, literal) and atomics.

use super::super::atomic::{self, AtomicOp, Ordering};
use super::super::label_use::PcOffset;
use super::super::mem::{self, Amode, FpLdSt, IndexExtend, IntLdSt, LiteralLoad};
use super::super::operands::{SImm7, SImm9, UImm12};
use super::super::pair::{self, pair_index, FpPair, IntPair, PairAmode};
use super::super::regs::{FpMemSize, MemSize, SdqSize};
use super::*;

/// Every addressing shape with offsets at their limits, for bases `rns` and index
/// registers `rms`.
fn amodes(rns: &[GprSp], rms: &[GprZr]) -> Vec<Amode> {
    let mut v = Vec::new();
    for &rn in rns {
        for index in [0, 1, 2, 0x7FF, 0xFFF] {
            let index = UImm12::new(index).unwrap();
            v.push(Amode::Scaled { rn, index });
        }
        for off in [-256, -255, -1, 0, 1, 8, 255] {
            let offset = SImm9::new(off).unwrap();
            v.push(Amode::Unscaled { rn, offset });
            v.push(Amode::PreIndex { rn, offset });
            v.push(Amode::PostIndex { rn, offset });
        }
        for &rm in rms {
            for extend in IndexExtend::ALL {
                for scaled in [false, true] {
                    v.push(Amode::RegOffset {
                        rn,
                        rm,
                        extend,
                        scaled,
                    });
                }
            }
        }
    }
    v
}

/// The text objdump prints for `amode` with an access of `2^log2` bytes, and whether the
/// instruction is the unscaled (`ldur`/`stur`) one.
fn amode_text(amode: &Amode, log2: u32) -> (String, bool) {
    let n = s(amode.rn(), Size::S64);
    match *amode {
        Amode::Scaled { index, .. } => match index.get() << log2 {
            0 => (format!("[{n}]"), false),
            off => (format!("[{n}, #{off}]"), false),
        },
        Amode::Unscaled { offset, .. } => match offset.get() {
            0 => (format!("[{n}]"), true),
            off => (format!("[{n}, #{off}]"), true),
        },
        Amode::PreIndex { offset, .. } => (format!("[{n}, #{}]!", offset.get()), false),
        Amode::PostIndex { offset, .. } => (format!("[{n}], #{}", offset.get()), false),
        Amode::RegOffset {
            rm, extend, scaled, ..
        } => {
            let (ename, msize) = match extend {
                IndexExtend::Uxtw => ("uxtw", Size::S32),
                IndexExtend::Lsl => ("lsl", Size::S64),
                IndexExtend::Sxtw => ("sxtw", Size::S32),
                IndexExtend::Sxtx => ("sxtx", Size::S64),
            };
            let m = z(rm, msize);
            let text = match (ename, scaled) {
                ("lsl", false) => format!("[{n}, {m}]"),
                (_, false) => format!("[{n}, {m}, {ename}]"),
                (_, true) => format!("[{n}, {m}, {ename} #{log2}]"),
            };
            (text, false)
        }
    }
}

#[test]
fn load_store_forms() {
    let mut c = Checker::new("load_store");
    let modes = amodes(&[sp(0), sp(17), GprSp::SP], &[zr(0), zr(30), GprZr::ZR]);
    for op in IntLdSt::ALL {
        let (name, uname, log2, size) = match op {
            IntLdSt::Strb => ("strb", "sturb", 0, Size::S32),
            IntLdSt::Strh => ("strh", "sturh", 1, Size::S32),
            IntLdSt::StrW => ("str", "stur", 2, Size::S32),
            IntLdSt::StrX => ("str", "stur", 3, Size::S64),
            IntLdSt::Ldrb => ("ldrb", "ldurb", 0, Size::S32),
            IntLdSt::Ldrh => ("ldrh", "ldurh", 1, Size::S32),
            IntLdSt::LdrW => ("ldr", "ldur", 2, Size::S32),
            IntLdSt::LdrX => ("ldr", "ldur", 3, Size::S64),
            IntLdSt::LdrsbW => ("ldrsb", "ldursb", 0, Size::S32),
            IntLdSt::LdrsbX => ("ldrsb", "ldursb", 0, Size::S64),
            IntLdSt::LdrshW => ("ldrsh", "ldursh", 1, Size::S32),
            IntLdSt::LdrshX => ("ldrsh", "ldursh", 1, Size::S64),
            IntLdSt::Ldrsw => ("ldrsw", "ldursw", 2, Size::S64),
        };
        for rt in [zr(1), zr(30), GprZr::ZR] {
            for &amode in &modes {
                if amode.writes_back() && amode.rn().enc() == rt.enc() {
                    continue;
                }
                let (text, unscaled) = amode_text(&amode, log2);
                let mn = if unscaled { uname } else { name };
                let e = format!("{mn} {}, {text}", z(rt, size));
                c.check(|s| mem::ld_st(s, op, rt, amode), e);
            }
        }
        // The transfer register may be the base when nothing is written back.
        let e = format!("{name} {}, [x0, #{}]", z(zr(0), size), 1 << log2);
        let amode = Amode::scaled(sp(0), 1 << log2, 1 << log2).unwrap();
        c.check(|s| mem::ld_st(s, op, zr(0), amode), e);
    }
    let modes = amodes(&[sp(0), GprSp::SP], &[zr(30), GprZr::ZR]);
    for size in FpMemSize::ALL {
        let (p, log2) = match size {
            FpMemSize::S8 => ('b', 0),
            FpMemSize::S16 => ('h', 1),
            FpMemSize::S32 => ('s', 2),
            FpMemSize::S64 => ('d', 3),
            FpMemSize::S128 => ('q', 4),
        };
        for (op, name, uname) in [
            (FpLdSt::Str(size), "str", "stur"),
            (FpLdSt::Ldr(size), "ldr", "ldur"),
        ] {
            for rt in few_vregs() {
                for &amode in &modes {
                    let (text, unscaled) = amode_text(&amode, log2);
                    let mn = if unscaled { uname } else { name };
                    let e = format!("{mn} {}, {text}", v(rt, p));
                    c.check(|s| mem::ld_st_fp(s, op, rt, amode), e);
                }
            }
        }
    }
    // Offset helpers.
    let rn = sp(3);
    assert_eq!(
        Amode::scaled(rn, 32760, 8),
        Some(Amode::Scaled {
            rn,
            index: UImm12::new(4095).unwrap()
        })
    );
    assert_eq!(Amode::scaled(rn, 32768, 8), None);
    assert_eq!(Amode::scaled(rn, 4, 8), None);
    assert_eq!(Amode::scaled(rn, -8, 8), None);
    assert_eq!(
        Amode::offset(rn, -8, 8),
        Some(Amode::Unscaled {
            rn,
            offset: SImm9::new(-8).unwrap()
        })
    );
    assert_eq!(Amode::offset(rn, 32768, 8), None);
    assert_eq!(Amode::base(rn), Amode::scaled(rn, 0, 4).unwrap());
    assert!(SImm9::new(256).is_none() && SImm9::new(-257).is_none());
    assert!(UImm12::new(4096).is_none());
    c.finish();
}

#[test]
fn literal_and_pair_forms() {
    let mut c = Checker::new("literal_pair");
    let max = LabelUse::Literal19.max_pos_range() as i64;
    let min = -(LabelUse::Literal19.max_neg_range() as i64);
    let offsets = [0, 4, -4, 0x1000, max, min];
    for op in LiteralLoad::ALL {
        let (name, size) = match op {
            LiteralLoad::LdrW => ("ldr", Size::S32),
            LiteralLoad::LdrX => ("ldr", Size::S64),
            LiteralLoad::Ldrsw => ("ldrsw", Size::S64),
        };
        for rt in zrs() {
            for off in offsets {
                let e = format!("{name} {}, {:#x}", z(rt, size), c.pc() as i64 + off);
                let offset = PcOffset::new(off).unwrap();
                c.check_fixup(
                    |s| mem::ldr_literal(s, op, rt, offset),
                    LabelUse::Literal19,
                    e,
                );
            }
        }
    }
    for size in SdqSize::ALL {
        let p = sdq_prefix(size);
        for rt in vregs() {
            for off in offsets {
                let e = format!("ldr {}, {:#x}", v(rt, p), c.pc() as i64 + off);
                let offset = PcOffset::new(off).unwrap();
                c.check_fixup(
                    |s| mem::ldr_literal_fp(s, size, rt, offset),
                    LabelUse::Literal19,
                    e,
                );
            }
        }
    }
    let pair_regs = [(0, 1), (30, 31), (31, 0), (7, 30), (31, 31)];
    let indices = [-64, -63, -1, 0, 1, 62, 63];
    let pair_modes = |rn: GprSp, bytes: i32| {
        let n = s(rn, Size::S64);
        let mut v = Vec::new();
        for i in indices {
            let index = SImm7::new(i).unwrap();
            let off = i * bytes;
            let plain = if off == 0 {
                format!("[{n}]")
            } else {
                format!("[{n}, #{off}]")
            };
            v.push((PairAmode::Offset { rn, index }, plain));
            v.push((PairAmode::PreIndex { rn, index }, format!("[{n}, #{off}]!")));
            v.push((PairAmode::PostIndex { rn, index }, format!("[{n}], #{off}")));
        }
        v
    };
    for op in IntPair::ALL {
        let (name, size) = match op {
            IntPair::StpW => ("stp", Size::S32),
            IntPair::StpX => ("stp", Size::S64),
            IntPair::LdpW => ("ldp", Size::S32),
            IntPair::LdpX => ("ldp", Size::S64),
            IntPair::Ldpsw => ("ldpsw", Size::S64),
        };
        for rn in [sp(0), sp(17), GprSp::SP] {
            let bytes = match op {
                IntPair::StpX | IntPair::LdpX => 8,
                IntPair::StpW | IntPair::LdpW | IntPair::Ldpsw => 4,
            };
            for (amode, text) in pair_modes(rn, bytes) {
                for (t, t2) in pair_regs {
                    let (rt, rt2) = (zr(t), zr(t2));
                    if (op.is_load() && rt == rt2)
                        || (amode.writes_back() && (rn.enc() == t || rn.enc() == t2))
                    {
                        continue;
                    }
                    let e = format!("{name} {}, {}, {text}", z(rt, size), z(rt2, size));
                    c.check(|s| pair::ld_st_pair(s, op, rt, rt2, amode), e);
                }
            }
        }
    }
    for size in SdqSize::ALL {
        let p = sdq_prefix(size);
        let bytes = match size {
            SdqSize::S32 => 4,
            SdqSize::S64 => 8,
            SdqSize::S128 => 16,
        };
        for (op, name) in [(FpPair::Stp(size), "stp"), (FpPair::Ldp(size), "ldp")] {
            for rn in [sp(0), GprSp::SP] {
                for (amode, text) in pair_modes(rn, bytes) {
                    for (t, t2) in pair_regs {
                        let (rt, rt2) = (vreg(t), vreg(t2));
                        if name == "ldp" && rt == rt2 {
                            continue;
                        }
                        let e = format!("{name} {}, {}, {text}", v(rt, p), v(rt2, p));
                        c.check(|s| pair::ld_st_pair_fp(s, op, rt, rt2, amode), e);
                    }
                }
            }
        }
    }
    assert_eq!(pair_index(-512, 8), SImm7::new(-64));
    assert_eq!(pair_index(504, 8), SImm7::new(63));
    assert_eq!(pair_index(512, 8), None);
    assert_eq!(pair_index(4, 8), None);
    assert!(SImm7::new(64).is_none() && SImm7::new(-65).is_none());
    c.finish();
}

/// The `b`/`h` mnemonic suffix and register width of an access size.
fn size_suffix(size: MemSize) -> (&'static str, Size) {
    match size {
        MemSize::S8 => ("b", Size::S32),
        MemSize::S16 => ("h", Size::S32),
        MemSize::S32 => ("", Size::S32),
        MemSize::S64 => ("", Size::S64),
    }
}

#[test]
fn atomic_forms() {
    let mut c = Checker::new("atomic");
    for size in MemSize::ALL {
        let (sfx, rs) = size_suffix(size);
        for rt in [zr(0), zr(30), GprZr::ZR] {
            for rn in [sp(1), sp(30), GprSp::SP] {
                let (t, n) = (z(rt, rs), s(rn, Size::S64));
                c.check(
                    |s| atomic::ldxr(s, size, rt, rn),
                    format!("ldxr{sfx} {t}, [{n}]"),
                );
                c.check(
                    |s| atomic::ldaxr(s, size, rt, rn),
                    format!("ldaxr{sfx} {t}, [{n}]"),
                );
                c.check(
                    |s| atomic::ldar(s, size, rt, rn),
                    format!("ldar{sfx} {t}, [{n}]"),
                );
                c.check(
                    |s| atomic::stlr(s, size, rt, rn),
                    format!("stlr{sfx} {t}, [{n}]"),
                );
                for status in [zr(2), zr(29)] {
                    if status.enc() == rn.enc() {
                        continue;
                    }
                    let w = z(status, Size::S32);
                    let e = format!("stxr{sfx} {w}, {t}, [{n}]");
                    c.check(|s| atomic::stxr(s, size, status, rt, rn), e);
                    let e = format!("stlxr{sfx} {w}, {t}, [{n}]");
                    c.check(|s| atomic::stlxr(s, size, status, rt, rn), e);
                }
            }
        }
        if size == MemSize::S64 {
            for (rt, rt2) in [(zr(0), zr(1)), (zr(30), zr(5)), (GprZr::ZR, zr(7))] {
                for rn in [sp(3), GprSp::SP] {
                    let (t, t2, n) = (z(rt, Size::S64), z(rt2, Size::S64), s(rn, Size::S64));
                    let e = format!("ldaxp {t}, {t2}, [{n}]");
                    c.check(|s| atomic::ldaxp(s, rt, rt2, rn), e);
                    let status = zr(16);
                    let w = z(status, Size::S32);
                    let e = format!("stlxp {w}, {t}, {t2}, [{n}]");
                    c.check(|s| atomic::stlxp(s, status, rt, rt2, rn), e);
                }
            }
        }
        for order in Ordering::ALL {
            let acquire = matches!(order, Ordering::Acquire | Ordering::AcqRel);
            let osfx = match order {
                Ordering::Relaxed => "",
                Ordering::Acquire => "a",
                Ordering::Release => "l",
                Ordering::AcqRel => "al",
            };
            for op in AtomicOp::ALL {
                let base = match op {
                    AtomicOp::Add => "add",
                    AtomicOp::Clr => "clr",
                    AtomicOp::Eor => "eor",
                    AtomicOp::Set => "set",
                    AtomicOp::Smax => "smax",
                    AtomicOp::Smin => "smin",
                    AtomicOp::Umax => "umax",
                    AtomicOp::Umin => "umin",
                    AtomicOp::Swp => "swp",
                };
                for rs in [zr(0), zr(30), GprZr::ZR] {
                    for rt in [zr(1), GprZr::ZR] {
                        for rn in [sp(2), GprSp::SP] {
                            let (sr, tr, n) =
                                (z(rs, rs_size(size)), z(rt, rs_size(size)), s(rn, Size::S64));
                            let e = if op == AtomicOp::Swp {
                                format!("swp{osfx}{sfx} {sr}, {tr}, [{n}]")
                            } else if rt == GprZr::ZR && !acquire {
                                format!("st{base}{osfx}{sfx} {sr}, [{n}]")
                            } else {
                                format!("ld{base}{osfx}{sfx} {sr}, {tr}, [{n}]")
                            };
                            c.check(|s| atomic::atomic_rmw(s, op, size, order, rs, rt, rn), e);
                        }
                    }
                }
            }
            for rs in [zr(0), zr(30), GprZr::ZR] {
                for rt in [zr(1), GprZr::ZR] {
                    for rn in [sp(2), GprSp::SP] {
                        let (sr, tr, n) =
                            (z(rs, rs_size(size)), z(rt, rs_size(size)), s(rn, Size::S64));
                        let e = format!("cas{osfx}{sfx} {sr}, {tr}, [{n}]");
                        c.check(|s| atomic::cas(s, size, order, rs, rt, rn), e);
                    }
                }
            }
        }
    }
    c.finish();
}

fn rs_size(size: MemSize) -> Size {
    size_suffix(size).1
}

fn sdq_prefix(size: SdqSize) -> char {
    match size {
        SdqSize::S32 => 's',
        SdqSize::S64 => 'd',
        SdqSize::S128 => 'q',
    }
}
