//! Cross-check of every encoding form against GNU objdump (`aarch64-linux-gnu-objdump`, from
//! the Debian package `binutils-aarch64-linux-gnu`).
//!
//! Each test emits many words into one buffer through a [`Checker`], stating for each the
//! text objdump should print, computed here from the operands and independently of the
//! encoder: mnemonic and operands in objdump's syntax, including its preferred aliases
//! (`mov`, `cmp`, `lsl`, `ubfx`, `cset`, `mul`, `stadd`, …), which the expected-text
//! helpers decide by the Arm ARM's alias conditions. The buffer is disassembled by one
//! objdump run at the end of the test and compared word by word; mismatches are reported
//! together, the first ones listed with address, word, objdump's text and the expected text.
//!
//! The code is disassembled at [`VMA`] (4 GiB), so that backward PC-relative targets at
//! the limits of every field's reach, `adrp`'s included, print as plain positive addresses.
//! A missing objdump fails the test; it is never skipped.

mod branch;
mod fp;
mod int;
mod mem;
mod simd;

use std::fmt::Write as _;
use std::process::Command;

use super::cond::Cond;
use super::label_use::{Fixup, LabelUse};
use super::regs::{Gpr, GprSp, GprZr, Size, Vreg};

/// Address at which the test buffers are disassembled.
const VMA: u64 = 0x1_0000_0000;

const OBJDUMP: &str = "aarch64-linux-gnu-objdump";

/// Words and the text objdump should print for each, checked together by [`Checker::finish`].
pub(crate) struct Checker {
    name: &'static str,
    code: Vec<u8>,
    expected: Vec<String>,
}

impl Checker {
    pub(crate) fn new(name: &'static str) -> Checker {
        Checker {
            name,
            code: Vec::new(),
            expected: Vec::new(),
        }
    }

    /// The address the next word will be disassembled at.
    pub(crate) fn pc(&self) -> u64 {
        VMA + self.code.len() as u64
    }

    /// Emits one word with `emit` and expects objdump to print `expected` for it.
    pub(crate) fn check(&mut self, emit: impl FnOnce(&mut Vec<u8>), expected: impl Into<String>) {
        let expected = expected.into();
        let start = self.code.len();
        emit(&mut self.code);
        assert_eq!(
            self.code.len(),
            start + 4,
            "{}: not one word for `{expected}`",
            self.name
        );
        self.expected.push(expected);
    }

    /// Like [`Checker::check`] for a PC-relative form: also checks the returned fixup.
    pub(crate) fn check_fixup(
        &mut self,
        emit: impl FnOnce(&mut Vec<u8>) -> Fixup,
        kind: LabelUse,
        expected: impl Into<String>,
    ) {
        let expected = expected.into();
        let at = self.code.len() as u32;
        let mut fixup = None;
        self.check(|s| fixup = Some(emit(s)), expected.clone());
        assert_eq!(
            fixup,
            Some(Fixup { at, kind }),
            "{}: fixup of `{expected}`",
            self.name
        );
    }

    /// Expects objdump to print `expected` for `word`.
    pub(crate) fn check_word(&mut self, word: u32, expected: impl Into<String>) {
        self.check(|s| s.extend_from_slice(&word.to_le_bytes()), expected);
    }

    /// Disassembles everything with one objdump run and compares; panics with the first
    /// mismatches if there are any, else returns the number of words checked.
    pub(crate) fn finish(self) -> usize {
        let dir = std::env::temp_dir();
        let path = dir.join(format!(
            "kestrel-a64-{}-{}.bin",
            self.name,
            std::process::id()
        ));
        std::fs::write(&path, &self.code).expect("write the test code to a temporary file");
        let output = Command::new(OBJDUMP)
            .args(["-D", "-z", "-b", "binary", "-m", "aarch64"])
            .arg(format!("--adjust-vma={VMA:#x}"))
            .arg(&path)
            .output();
        let _ = std::fs::remove_file(&path);
        let output = match output {
            Ok(output) => output,
            Err(e) => panic!(
                "{}: cannot run {OBJDUMP} ({e}); the AArch64 encoder tests need it: install \
                 the Debian/Ubuntu package binutils-aarch64-linux-gnu",
                self.name
            ),
        };
        assert!(
            output.status.success(),
            "{}: {OBJDUMP} failed: {}",
            self.name,
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).expect("objdump prints UTF-8");
        let mut got: Vec<Option<(u32, String)>> = vec![None; self.expected.len()];
        for line in text.lines() {
            if let Some((addr, word, asm)) = parse_line(line) {
                let index = (addr - VMA) / 4;
                if let Some(slot) = got.get_mut(index as usize) {
                    *slot = Some((word, asm));
                }
            }
        }
        let mut failures = 0;
        let mut report = String::new();
        for (i, expected) in self.expected.iter().enumerate() {
            let word = u32::from_le_bytes(self.code[i * 4..i * 4 + 4].try_into().expect("4"));
            let ok = matches!(&got[i], Some((w, asm)) if *w == word && asm == expected);
            if !ok {
                failures += 1;
                if failures <= 40 {
                    let shown = got[i].as_ref().map_or("<missing>", |(_, asm)| asm.as_str());
                    let _ = writeln!(
                        report,
                        "  {:#x}: {word:08x}  objdump: {shown:<40} expected: {expected}",
                        VMA + 4 * i as u64
                    );
                }
            }
        }
        assert!(
            failures == 0,
            "{}: {failures} of {} words disassemble differently; first ones:\n{report}",
            self.name,
            self.expected.len()
        );
        println!(
            "{}: {} words cross-checked with objdump",
            self.name,
            self.expected.len()
        );
        self.expected.len()
    }
}

/// `   100000000:\tf9400020 \tldr\tx0, [x1]\t// comment` → address, word, `ldr x0, [x1]`.
fn parse_line(line: &str) -> Option<(u64, u32, String)> {
    let (addr, rest) = line.trim_start().split_once(":\t")?;
    let addr = u64::from_str_radix(addr, 16).ok()?;
    let (word, asm) = rest.split_once(" \t")?;
    let word = u32::from_str_radix(word, 16).ok()?;
    let asm = asm.split("//").next().unwrap_or("").trim_end();
    Some((addr, word, asm.replacen('\t', " ", 1)))
}

// Register names and sets, written here rather than taken from `regs`.

/// Name of general register number `enc` at `size`, with 31 the zero register.
fn zr_name(enc: u8, size: Size) -> String {
    match (enc, size) {
        (31, Size::S64) => "xzr".into(),
        (31, Size::S32) => "wzr".into(),
        (n, Size::S64) => format!("x{n}"),
        (n, Size::S32) => format!("w{n}"),
    }
}

/// `r` at `size` (`x3`, `wzr`).
fn z(r: GprZr, size: Size) -> String {
    zr_name(r.enc(), size)
}

/// `r` at `size` (`x3`, `wsp`).
fn s(r: GprSp, size: Size) -> String {
    match (r.enc(), size) {
        (31, Size::S64) => "sp".into(),
        (31, Size::S32) => "wsp".into(),
        (n, _) => zr_name(n, size),
    }
}

/// `r` with the width prefix `p` (`s3`, `q31`).
fn v(r: Vreg, p: char) -> String {
    format!("{p}{}", r.enc())
}

fn gpr(n: u8) -> Gpr {
    Gpr::new(n).expect("register number")
}

fn zr(n: u8) -> GprZr {
    if n == 31 {
        GprZr::ZR
    } else {
        gpr(n).into()
    }
}

fn sp(n: u8) -> GprSp {
    if n == 31 {
        GprSp::SP
    } else {
        gpr(n).into()
    }
}

fn vreg(n: u8) -> Vreg {
    Vreg::new(n).expect("register number")
}

/// A spread of ZR-numbered registers: 0, 30, ZR and a few in between.
fn zrs() -> Vec<GprZr> {
    [0, 1, 15, 16, 29, 30, 31].map(zr).to_vec()
}

/// Fewer, for forms with three or four register operands.
fn few_zrs() -> Vec<GprZr> {
    [0, 17, 30, 31].map(zr).to_vec()
}

/// A spread of SP-capable registers.
fn sps() -> Vec<GprSp> {
    [0, 1, 16, 30, 31].map(sp).to_vec()
}

fn few_sps() -> Vec<GprSp> {
    [0, 30, 31].map(sp).to_vec()
}

fn vregs() -> Vec<Vreg> {
    [0, 1, 15, 16, 31].map(vreg).to_vec()
}

fn few_vregs() -> Vec<Vreg> {
    [0, 17, 31].map(vreg).to_vec()
}

// Names of the operation enums, matched here rather than read from their discriminants
// (which are encodings).

/// objdump's name for a condition.
fn cond_name(cond: Cond) -> &'static str {
    match cond {
        Cond::Eq => "eq",
        Cond::Ne => "ne",
        Cond::Hs => "cs",
        Cond::Lo => "cc",
        Cond::Mi => "mi",
        Cond::Pl => "pl",
        Cond::Vs => "vs",
        Cond::Vc => "vc",
        Cond::Hi => "hi",
        Cond::Ls => "ls",
        Cond::Ge => "ge",
        Cond::Lt => "lt",
        Cond::Gt => "gt",
        Cond::Le => "le",
    }
}

/// objdump's name for the opposite of a condition.
fn inverse_name(cond: Cond) -> &'static str {
    match cond {
        Cond::Eq => "ne",
        Cond::Ne => "eq",
        Cond::Hs => "cc",
        Cond::Lo => "cs",
        Cond::Mi => "pl",
        Cond::Pl => "mi",
        Cond::Vs => "vc",
        Cond::Vc => "vs",
        Cond::Hi => "ls",
        Cond::Ls => "hi",
        Cond::Ge => "lt",
        Cond::Lt => "ge",
        Cond::Gt => "le",
        Cond::Le => "gt",
    }
}

#[test]
fn parse_objdump_lines() {
    assert_eq!(
        parse_line("   100000008:\t54000040 \tb.eq\t0x100000010  // b.none"),
        Some((0x1_0000_0008, 0x5400_0040, "b.eq 0x100000010".into()))
    );
    assert_eq!(
        parse_line("   100000054:\td503201f \tnop"),
        Some((0x1_0000_0054, 0xD503_201F, "nop".into()))
    );
    assert_eq!(parse_line("Disassembly of section .data:"), None);
}
