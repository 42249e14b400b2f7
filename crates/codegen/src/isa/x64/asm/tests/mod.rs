//! Cross-check of every encoding form against the iced-x86 decoder.
//!
//! Each case encodes one instruction into a `Vec<u8>`, states the instruction it intends as an
//! [`Expect`] (iced mnemonic, operands with registers, memory base/index/scale/displacement and
//! access size, immediates, branch targets, lock prefix), decodes the bytes in 64-bit mode at
//! ip 0 and compares field by field. The bytes must decode as exactly one instruction. Memory
//! operands are also checked for the shortest displacement, and RIP-relative operands and rel32
//! branches for the returned [`Rel32Fixup`] (field position, end of instruction, stored value).
//!
//! Failures are collected and reported together with the bytes, iced's Intel text and the
//! intended instruction.

mod gpr;
mod other;
mod sse;
mod vec;

use super::operands::{Amode, GprMem, Scale, XmmMem};
use super::regs::{Gpr, Size, Xmm};
use super::Rel32Fixup;
use iced_x86::{
    Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter, Mnemonic, OpKind, Register,
};

/// An intended operand, in terms iced reports.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Reg(Register),
    /// Memory; for a RIP base `disp` is relative to the end of the instruction. `bytes` is the
    /// access size (0 for `lea`).
    Mem {
        base: Register,
        index: Register,
        scale: u32,
        disp: i64,
        bytes: usize,
    },
    /// An immediate, compared on its low `bits` bits.
    Imm {
        value: i64,
        bits: u32,
    },
    /// A rel8 or rel32 branch target, relative to the end of the instruction.
    Branch {
        disp: i64,
        rel32: bool,
    },
}

/// The intended instruction.
#[derive(Clone, Debug)]
struct Expect {
    mnemonic: Mnemonic,
    /// `None` skips the operand check (multi-byte `nop`s).
    ops: Option<Vec<Op>>,
    lock: bool,
}

fn ex(mnemonic: Mnemonic, ops: Vec<Op>) -> Expect {
    Expect {
        mnemonic,
        ops: Some(ops),
        lock: false,
    }
}

fn ex_lock(mnemonic: Mnemonic, ops: Vec<Op>) -> Expect {
    Expect {
        mnemonic,
        ops: Some(ops),
        lock: true,
    }
}

const R64: [Register; 16] = {
    use Register::*;
    [
        RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15,
    ]
};
const R32: [Register; 16] = {
    use Register::*;
    [
        EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI, R8D, R9D, R10D, R11D, R12D, R13D, R14D, R15D,
    ]
};
const R16: [Register; 16] = {
    use Register::*;
    [
        AX, CX, DX, BX, SP, BP, SI, DI, R8W, R9W, R10W, R11W, R12W, R13W, R14W, R15W,
    ]
};
const R8: [Register; 16] = {
    use Register::*;
    [
        AL, CL, DL, BL, SPL, BPL, SIL, DIL, R8L, R9L, R10L, R11L, R12L, R13L, R14L, R15L,
    ]
};
const XMMS: [Register; 16] = {
    use Register::*;
    [
        XMM0, XMM1, XMM2, XMM3, XMM4, XMM5, XMM6, XMM7, XMM8, XMM9, XMM10, XMM11, XMM12, XMM13,
        XMM14, XMM15,
    ]
};

/// The iced register for the `size`-wide view of `r`.
fn ireg(r: Gpr, size: Size) -> Register {
    let i = usize::from(r.enc());
    match size {
        Size::S8 => R8[i],
        Size::S16 => R16[i],
        Size::S32 => R32[i],
        Size::S64 => R64[i],
    }
}

fn r(g: Gpr, size: Size) -> Op {
    Op::Reg(ireg(g, size))
}

fn x(v: Xmm) -> Op {
    Op::Reg(XMMS[usize::from(v.enc())])
}

fn mem(a: &Amode, bytes: u32) -> Op {
    let bytes = bytes as usize;
    match *a {
        Amode::BaseDisp { base, disp } => Op::Mem {
            base: ireg(base, Size::S64),
            index: Register::None,
            scale: 1,
            disp: disp.into(),
            bytes,
        },
        Amode::BaseIndex {
            base,
            index,
            scale,
            disp,
        } => Op::Mem {
            base: ireg(base, Size::S64),
            index: ireg(index, Size::S64),
            scale: scale.factor(),
            disp: disp.into(),
            bytes,
        },
        Amode::RipRel { disp } => Op::Mem {
            base: Register::RIP,
            index: Register::None,
            scale: 1,
            disp: disp.into(),
            bytes,
        },
    }
}

/// A GPR-or-memory operand accessed at `size`.
fn gm(o: &GprMem, size: Size) -> Op {
    match o {
        GprMem::Reg(g) => r(*g, size),
        GprMem::Mem(a) => mem(a, size.bytes()),
    }
}

/// An XMM-or-memory operand whose memory form reads `bytes`.
fn xm(o: &XmmMem, bytes: u32) -> Op {
    match o {
        XmmMem::Reg(v) => x(*v),
        XmmMem::Mem(a) => mem(a, bytes),
    }
}

fn imm(value: i64, bits: u32) -> Op {
    Op::Imm { value, bits }
}

/// A representative register set: the legacy eight (rsp, rbp, sil/dil included) and r8–r15
/// with the special-cased r12/r13.
fn regs() -> Vec<Gpr> {
    Gpr::all().collect()
}

/// A smaller register set for forms with several register operands.
fn some_regs() -> Vec<Gpr> {
    [
        Gpr::RAX,
        Gpr::RCX,
        Gpr::RSP,
        Gpr::RBP,
        Gpr::RSI,
        Gpr::RDI,
        Gpr::R8,
        Gpr::R12,
        Gpr::R13,
        Gpr::R15,
    ]
    .to_vec()
}

fn few_regs() -> Vec<Gpr> {
    [Gpr::RAX, Gpr::RSP, Gpr::RDI, Gpr::R9, Gpr::R12, Gpr::R13].to_vec()
}

fn xmms() -> Vec<Xmm> {
    Xmm::all().collect()
}

fn few_xmms() -> Vec<Xmm> {
    [
        Xmm::new(0),
        Xmm::new(5),
        Xmm::new(7),
        Xmm::new(8),
        Xmm::new(15),
    ]
    .to_vec()
}

/// Every addressing shape: each base with no displacement (rsp/r12 need a SIB, rbp/r13 a
/// disp8), disp8 and disp32 edges, base+index*scale for each scale with awkward bases and
/// indices (r12/r13 index, rbp/r13/rsp/r12 base), and RIP-relative.
fn all_amodes() -> Vec<Amode> {
    let mut v: Vec<Amode> = Gpr::all().map(|b| Amode::base_disp(b, 0)).collect();
    let bases = [
        Gpr::RAX,
        Gpr::RSP,
        Gpr::RBP,
        Gpr::RDI,
        Gpr::R8,
        Gpr::R12,
        Gpr::R13,
        Gpr::R15,
    ];
    for base in bases {
        for disp in [1, -1, 127, -128, 128, -129, 0x1234_5678, i32::MIN, i32::MAX] {
            v.push(Amode::base_disp(base, disp));
        }
    }
    let indices = [
        Gpr::RAX,
        Gpr::RBP,
        Gpr::RSI,
        Gpr::R8,
        Gpr::R12,
        Gpr::R13,
        Gpr::R15,
    ];
    for base in bases {
        for index in indices {
            for scale in Scale::ALL {
                for disp in [0, -8, 0x100] {
                    v.push(Amode::base_index(base, index, scale, disp));
                }
            }
        }
    }
    for disp in [0, -5, 0x7654_3210] {
        v.push(Amode::rip(disp));
    }
    v
}

/// One instance of each addressing shape, for forms enumerated over many other dimensions.
fn some_amodes() -> Vec<Amode> {
    vec![
        Amode::base_disp(Gpr::RAX, 0),
        Amode::base_disp(Gpr::RSP, 0),
        Amode::base_disp(Gpr::RBP, 0),
        Amode::base_disp(Gpr::R12, 0),
        Amode::base_disp(Gpr::R13, 0),
        Amode::base_disp(Gpr::RSI, 0x40),
        Amode::base_disp(Gpr::RSP, -8),
        Amode::base_disp(Gpr::R12, 0x7F),
        Amode::base_disp(Gpr::R15, -0x81),
        Amode::base_disp(Gpr::RBP, 0x1000),
        Amode::base_index(Gpr::RAX, Gpr::RCX, Scale::One, 0),
        Amode::base_index(Gpr::RBP, Gpr::R12, Scale::Two, 0),
        Amode::base_index(Gpr::R13, Gpr::R13, Scale::Four, 16),
        Amode::base_index(Gpr::RSP, Gpr::RBP, Scale::Eight, -0x1_0000),
        Amode::base_index(Gpr::R12, Gpr::R9, Scale::Eight, 8),
        Amode::rip(0),
        Amode::rip(-0x20),
    ]
}

fn few_amodes() -> Vec<Amode> {
    vec![
        Amode::base_disp(Gpr::RSP, 0),
        Amode::base_disp(Gpr::R13, 0),
        Amode::base_disp(Gpr::R8, 0x200),
        Amode::base_index(Gpr::RBP, Gpr::R12, Scale::Four, -4),
        Amode::rip(0x10),
    ]
}

/// Registers and memory operands for an `r/m` slot.
fn gprmems(regs: &[Gpr], amodes: &[Amode]) -> Vec<GprMem> {
    regs.iter()
        .map(|&g| GprMem::Reg(g))
        .chain(amodes.iter().map(|&a| GprMem::Mem(a)))
        .collect()
}

fn xmmmems(regs: &[Xmm], amodes: &[Amode]) -> Vec<XmmMem> {
    regs.iter()
        .map(|&v| XmmMem::Reg(v))
        .chain(amodes.iter().map(|&a| XmmMem::Mem(a)))
        .collect()
}

/// Immediate edge values that fit `size`, signed or unsigned.
fn imms(size: Size) -> Vec<i32> {
    let mut v = vec![0, 1, -1, 0x7F, -0x80];
    match size {
        Size::S8 => v.push(0xFF),
        Size::S16 => v.extend([0x80, -0x81, 0x7FFF, -0x8000, 0xFFFF]),
        Size::S32 | Size::S64 => v.extend([0x80, -0x81, 0x7FFF_FFFF, i32::MIN, 0x1234_5678]),
    }
    v
}

/// Runs cases and collects mismatches.
struct Checker {
    count: usize,
    failures: Vec<String>,
}

impl Checker {
    fn new() -> Checker {
        Checker {
            count: 0,
            failures: Vec::new(),
        }
    }

    /// Encodes with `emit`, decodes, and compares with `expect`.
    fn check(&mut self, emit: impl FnOnce(&mut Vec<u8>) -> Option<Rel32Fixup>, expect: Expect) {
        let mut bytes = Vec::new();
        let fixup = emit(&mut bytes);
        self.count += 1;
        let mut decoder = Decoder::with_ip(64, &bytes, 0, DecoderOptions::NONE);
        let instr = decoder.decode();
        if let Err(why) =
            compare(&instr, &bytes, fixup, &expect).and_then(|()| rex_is_needed(&instr, &bytes))
        {
            let text = intel_text(&instr);
            let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
            self.failures.push(format!(
                "{why}\n    bytes:    {}\n    iced:     {text} ({:?})\n    intended: {expect:?}\n    fixup:    {fixup:?}",
                hex.join(" "),
                instr.code()
            ));
        }
    }

    /// Checks a form that never writes a PC-relative field.
    fn check_plain(&mut self, emit: impl FnOnce(&mut Vec<u8>), expect: Expect) {
        self.check(
            |s| {
                emit(s);
                None
            },
            expect,
        );
    }

    /// Panics with every failure if there were any; otherwise returns the case count.
    fn finish(self, what: &str) -> usize {
        if !self.failures.is_empty() {
            let shown: Vec<&String> = self.failures.iter().take(40).collect();
            panic!(
                "{what}: {} of {} encodings wrong; first ones:\n{}",
                self.failures.len(),
                self.count,
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        println!("{what}: {} encodings cross-checked", self.count);
        self.count
    }
}

fn is_imm(k: OpKind) -> bool {
    matches!(
        k,
        OpKind::Immediate8
            | OpKind::Immediate8_2nd
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate64
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64
    )
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn compare(
    instr: &Instruction,
    bytes: &[u8],
    fixup: Option<Rel32Fixup>,
    expect: &Expect,
) -> Result<(), String> {
    let len = bytes.len();
    if instr.is_invalid() {
        return Err("invalid encoding".into());
    }
    if instr.len() != len {
        return Err(format!(
            "decoded {} of {len} bytes as one instruction",
            instr.len()
        ));
    }
    if instr.mnemonic() != expect.mnemonic {
        return Err(format!("mnemonic {:?}", instr.mnemonic()));
    }
    if instr.has_lock_prefix() != expect.lock {
        return Err("lock prefix mismatch".into());
    }
    let mut wants_fixup = None;
    if let Some(ops) = &expect.ops {
        if instr.op_count() as usize != ops.len() {
            return Err(format!("{} operands", instr.op_count()));
        }
        for (i, op) in ops.iter().enumerate() {
            let i32_ = i as u32;
            let kind = instr.op_kind(i32_);
            let ok = match op {
                Op::Reg(reg) => kind == OpKind::Register && instr.op_register(i32_) == *reg,
                Op::Imm { value, bits } => {
                    is_imm(kind)
                        && instr.immediate(i32_) & mask(*bits) == (*value as u64) & mask(*bits)
                }
                Op::Branch { disp, rel32 } => {
                    if *rel32 {
                        wants_fixup = Some(*disp);
                    }
                    kind == OpKind::NearBranch64
                        && instr.near_branch64() == (len as i64 + disp) as u64
                }
                Op::Mem {
                    base,
                    index,
                    scale,
                    disp,
                    bytes: size,
                } => {
                    if kind != OpKind::Memory {
                        false
                    } else {
                        check_mem(instr, len, (*base, *index, *scale, *disp, *size))?;
                        if *base == Register::RIP {
                            wants_fixup = Some(*disp);
                        }
                        true
                    }
                }
            };
            if !ok {
                return Err(format!("operand {i} ({kind:?}) differs"));
            }
        }
    }
    match (wants_fixup, fixup) {
        (None, None) => Ok(()),
        (Some(disp), Some(f)) => {
            let at = f.at as usize;
            let field = bytes.get(at..at + 4).ok_or("fixup out of range")?;
            let stored = i32::from_le_bytes(field.try_into().expect("4 bytes"));
            if f.end as usize != len || i64::from(stored) != disp {
                return Err(format!("fixup {f:?} (field holds {stored}) does not match"));
            }
            Ok(())
        }
        (w, f) => Err(format!("fixup expected: {}, returned: {f:?}", w.is_some())),
    }
}

fn intel_text(instr: &Instruction) -> String {
    let mut text = String::new();
    IntelFormatter::new().format(instr, &mut text);
    text
}

/// A REX prefix must be needed: dropping it (when it is a bare 0x40) or clearing any of its set
/// bits must change the decoded instruction.
fn rex_is_needed(instr: &Instruction, bytes: &[u8]) -> Result<(), String> {
    let Some(p) = bytes
        .iter()
        .position(|b| ![0xF0, 0x66, 0xF2, 0xF3].contains(b))
    else {
        return Ok(());
    };
    let rex = bytes[p];
    if rex & 0xF0 != 0x40 {
        return Ok(());
    }
    let original = intel_text(instr);
    let mut variants = Vec::new();
    if rex == 0x40 {
        let mut v = bytes.to_vec();
        v.remove(p);
        variants.push(v);
    }
    for bit in [8, 4, 2, 1] {
        if rex & bit != 0 {
            let mut v = bytes.to_vec();
            v[p] &= !bit;
            variants.push(v);
        }
    }
    for v in variants {
        let other = Decoder::with_ip(64, &v, 0, DecoderOptions::NONE).decode();
        if !other.is_invalid() && other.len() == v.len() && intel_text(&other) == original {
            return Err(format!("redundant REX bits in {rex:#04x}"));
        }
    }
    Ok(())
}

fn check_mem(
    instr: &Instruction,
    len: usize,
    (base, index, scale, disp, size): (Register, Register, u32, i64, usize),
) -> Result<(), String> {
    if instr.memory_base() != base || instr.memory_index() != index {
        return Err(format!(
            "memory base/index {:?}/{:?}",
            instr.memory_base(),
            instr.memory_index()
        ));
    }
    if index != Register::None && instr.memory_index_scale() != scale {
        return Err(format!("scale {}", instr.memory_index_scale()));
    }
    let want = if base == Register::RIP {
        len as i64 + disp
    } else {
        disp
    };
    if instr.memory_displacement64() != want as u64 {
        return Err(format!("displacement {:#x}", instr.memory_displacement64()));
    }
    if instr.memory_size().size() != size {
        return Err(format!("memory size {:?}", instr.memory_size()));
    }
    if base != Register::RIP {
        let shortest = if disp == 0 && base != Register::RBP && base != Register::R13 {
            0
        } else if i8::try_from(disp).is_ok() {
            1
        } else {
            4
        };
        let got = instr.memory_displ_size();
        if got != shortest && !(shortest == 4 && got == 8) {
            return Err(format!("displacement size {got}, shortest is {shortest}"));
        }
    }
    Ok(())
}

/// Spot checks of exact bytes for the REX decision on byte registers.
#[test]
fn byte_register_rex() {
    let mut b = Vec::new();
    super::moves::mov_r_rm(&mut b, Size::S32, Gpr::RAX, &GprMem::Reg(Gpr::RCX));
    assert_eq!(b, [0x8B, 0xC1]);
    let mut b = Vec::new();
    super::moves::mov_r_rm(&mut b, Size::S8, Gpr::RAX, &GprMem::Reg(Gpr::RSI));
    assert_eq!(b, [0x40, 0x8A, 0xC6]);
    let mut b = Vec::new();
    super::moves::mov_r_rm(&mut b, Size::S8, Gpr::RAX, &GprMem::Reg(Gpr::RBX));
    assert_eq!(b, [0x8A, 0xC3]);
}

#[test]
fn amode_display_and_fixup_arithmetic() {
    let a = Amode::base_index(Gpr::R13, Gpr::R12, Scale::Eight, -16);
    assert_eq!(a.to_string(), "[r13+r12*8-0x10]");
    assert_eq!(Amode::base_disp(Gpr::RSP, 8).to_string(), "[rsp+0x8]");
    assert_eq!(Amode::rip(0).to_string(), "[rip]");
    let mut b = vec![0x90];
    let f = super::setcc_cmov_jcc::jmp_rel32(&mut b, 0);
    assert_eq!(f, Rel32Fixup { at: 2, end: 6 });
    assert_eq!(f.bias(), 4);
    assert_eq!(f.value_for(0), -6);
    let mut b = Vec::new();
    let f = super::alu::alu_rm_imm(
        &mut b,
        super::alu::AluOp::Cmp,
        Size::S32,
        &GprMem::Mem(Amode::rip(0)),
        1000,
    );
    assert_eq!(f, Some(Rel32Fixup { at: 2, end: 10 }));
}
