//! Cross-checks of branches, PC-relative addresses, label-use patching and the system
//! instructions.

use super::super::branch;
use super::super::label_use::PcOffset;
use super::super::misc::{self, Barrier};
use super::super::operands::UImm6;
use super::*;

/// Offsets to try for a kind: zero, one unit each way, and the limits of its reach.
fn offsets(kind: LabelUse) -> Vec<i64> {
    let unit = match kind {
        LabelUse::Adr21 => 1,
        LabelUse::Adrp21 => 4096,
        _ => 4,
    };
    let max = kind.max_pos_range() as i64;
    let min = -(kind.max_neg_range() as i64);
    vec![0, unit, -unit, 3 * unit, max, min, max - unit, min + unit]
}

/// The address objdump prints for a use of `kind` at `pc` with `offset`.
fn target(kind: LabelUse, pc: u64, offset: i64) -> String {
    let base = if kind == LabelUse::Adrp21 {
        pc & !0xFFF
    } else {
        pc
    };
    format!("{:#x}", base as i64 + offset)
}

#[test]
fn branch_forms() {
    let mut c = Checker::new("branch");
    for off in offsets(LabelUse::Branch26) {
        let o = PcOffset::new(off).unwrap();
        let e = format!("b {}", target(LabelUse::Branch26, c.pc(), off));
        c.check_fixup(|s| branch::b(s, o), LabelUse::Branch26, e);
        let e = format!("bl {}", target(LabelUse::Branch26, c.pc(), off));
        c.check_fixup(|s| branch::bl(s, o), LabelUse::Branch26, e);
    }
    for off in offsets(LabelUse::Branch19) {
        let o = PcOffset::new(off).unwrap();
        for cond in Cond::ALL {
            let e = format!(
                "b.{} {}",
                cond_name(cond),
                target(LabelUse::Branch19, c.pc(), off)
            );
            c.check_fixup(|s| branch::b_cond(s, cond, o), LabelUse::Branch19, e);
        }
        for size in Size::ALL {
            for rt in zrs() {
                let t = z(rt, size);
                let e = format!("cbz {t}, {}", target(LabelUse::Branch19, c.pc(), off));
                c.check_fixup(|s| branch::cbz(s, size, rt, o), LabelUse::Branch19, e);
                let e = format!("cbnz {t}, {}", target(LabelUse::Branch19, c.pc(), off));
                c.check_fixup(|s| branch::cbnz(s, size, rt, o), LabelUse::Branch19, e);
            }
        }
    }
    for off in offsets(LabelUse::Branch14) {
        let o = PcOffset::new(off).unwrap();
        for rt in zrs() {
            for bit in [0, 1, 5, 31, 32, 33, 63] {
                let b = UImm6::new(bit).unwrap();
                let t = z(rt, if bit < 32 { Size::S32 } else { Size::S64 });
                let e = format!(
                    "tbz {t}, #{bit}, {}",
                    target(LabelUse::Branch14, c.pc(), off)
                );
                c.check_fixup(|s| branch::tbz(s, rt, b, o), LabelUse::Branch14, e);
                let e = format!(
                    "tbnz {t}, #{bit}, {}",
                    target(LabelUse::Branch14, c.pc(), off)
                );
                c.check_fixup(|s| branch::tbnz(s, rt, b, o), LabelUse::Branch14, e);
            }
        }
    }
    assert!(UImm6::new(64).is_none());
    for rn in Gpr::all() {
        let n = format!("x{}", rn.enc());
        c.check(|s| branch::br(s, rn), format!("br {n}"));
        c.check(|s| branch::blr(s, rn), format!("blr {n}"));
        let e = if rn.enc() == 30 {
            "ret".to_string()
        } else {
            format!("ret {n}")
        };
        c.check(|s| branch::ret(s, rn), e);
    }
    for rd in zrs() {
        let d = z(rd, Size::S64);
        for off in offsets(LabelUse::Adr21) {
            let o = PcOffset::new(off).unwrap();
            let e = format!("adr {d}, {}", target(LabelUse::Adr21, c.pc(), off));
            c.check_fixup(|s| branch::adr(s, rd, o), LabelUse::Adr21, e);
        }
        for off in offsets(LabelUse::Adrp21) {
            let o = PcOffset::new(off).unwrap();
            let e = format!("adrp {d}, {}", target(LabelUse::Adrp21, c.pc(), off));
            c.check_fixup(|s| branch::adrp(s, rd, o), LabelUse::Adrp21, e);
        }
    }
    c.finish();
}

/// Patching fields of emitted words reaches exactly the limits objdump shows, and the
/// offset types reject one unit beyond them.
#[test]
fn patched_label_uses() {
    let mut c = Checker::new("label_use");
    let cond = Cond::Ge;
    for kind in LabelUse::ALL {
        // One instruction of each form with this kind of field, as emitted for a label.
        let mut forms: Vec<(Vec<u8>, String)> = Vec::new();
        let mut add = |emit: &dyn Fn(&mut Vec<u8>), text: &str| {
            let mut word = Vec::new();
            emit(&mut word);
            forms.push((word, text.to_string()));
        };
        match kind {
            LabelUse::Branch26 => {
                add(
                    &|s| {
                        branch::b(s, PcOffset::ZERO);
                    },
                    "b",
                );
                add(
                    &|s| {
                        branch::bl(s, PcOffset::ZERO);
                    },
                    "bl",
                );
            }
            LabelUse::Branch19 => {
                add(
                    &|s| {
                        branch::b_cond(s, cond, PcOffset::ZERO);
                    },
                    "b.ge",
                );
                add(
                    &|s| {
                        branch::cbz(s, Size::S64, zr(9), PcOffset::ZERO);
                    },
                    "cbz x9,",
                );
                add(
                    &|s| {
                        branch::cbnz(s, Size::S32, zr(9), PcOffset::ZERO);
                    },
                    "cbnz w9,",
                );
            }
            LabelUse::Branch14 => {
                let bit = UImm6::new(40).unwrap();
                add(
                    &|s| {
                        branch::tbz(s, zr(9), bit, PcOffset::ZERO);
                    },
                    "tbz x9, #40,",
                );
                add(
                    &|s| {
                        branch::tbnz(s, zr(9), bit, PcOffset::ZERO);
                    },
                    "tbnz x9, #40,",
                );
            }
            LabelUse::Adr21 => add(
                &|s| {
                    branch::adr(s, zr(9), PcOffset::ZERO);
                },
                "adr x9,",
            ),
            LabelUse::Adrp21 => add(
                &|s| {
                    branch::adrp(s, zr(9), PcOffset::ZERO);
                },
                "adrp x9,",
            ),
            LabelUse::Literal19 => {
                use super::super::mem::{self, LiteralLoad};
                add(
                    &|s| {
                        mem::ldr_literal(s, LiteralLoad::LdrX, zr(9), PcOffset::ZERO);
                    },
                    "ldr x9,",
                );
            }
        }
        for (bytes, text) in forms {
            let word = u32::from_le_bytes(bytes.try_into().expect("one word"));
            for off in offsets(kind) {
                let patched = kind.patch(word, off).expect("in range");
                assert_eq!(kind.offset(patched), off);
                let e = format!("{text} {}", target(kind, c.pc(), off));
                c.check_word(patched, e);
            }
            let unit = offsets(kind)[1];
            let max = kind.max_pos_range() as i64;
            let min = -(kind.max_neg_range() as i64);
            assert_eq!(kind.patch(word, max + unit), None, "{kind:?}");
            assert_eq!(kind.patch(word, min - unit), None, "{kind:?}");
        }
    }
    assert!(super::super::label_use::Branch26Offset::new(128 << 20).is_none());
    assert!(super::super::label_use::Branch14Offset::new(-(32 << 10) - 4).is_none());
    assert!(super::super::label_use::AdrpOffset::new(2048).is_none());
    c.finish();
}

#[test]
fn system_forms() {
    let mut c = Checker::new("system");
    c.check(misc::nop, "nop");
    c.check(misc::isb, "isb");
    for imm in [0u16, 1, 0x7FFF, 0x8000, 0xF000, 0xFFFF] {
        c.check(|s| misc::brk(s, imm), format!("brk #{imm:#x}"));
        c.check(|s| misc::udf(s, imm), format!("udf #{imm}"));
    }
    for option in Barrier::ALL {
        let name = match option {
            Barrier::OshLd => "oshld",
            Barrier::OshSt => "oshst",
            Barrier::Osh => "osh",
            Barrier::NshLd => "nshld",
            Barrier::NshSt => "nshst",
            Barrier::Nsh => "nsh",
            Barrier::IshLd => "ishld",
            Barrier::IshSt => "ishst",
            Barrier::Ish => "ish",
            Barrier::Ld => "ld",
            Barrier::St => "st",
            Barrier::Sy => "sy",
        };
        c.check(|s| misc::dmb(s, option), format!("dmb {name}"));
        c.check(|s| misc::dsb(s, option), format!("dsb {name}"));
    }
    c.finish();
}
