//! Instruction framing shared by every form: legacy prefixes, REX, opcode maps, ModRM, SIB,
//! displacements, and the VEX prefix.
//!
//! # Contract
//!
//! An instruction is described by an [`Enc`] (prefixes, REX.W, opcode map and byte, and which
//! operands are 8-bit registers) plus its operands: a `reg` field value (a register number 0–15,
//! or an opcode extension `/0`–`/7`) and an [`Rm`] operand. [`emit_rm`] writes
//!
//! ```text
//! [F0] [66] [F2|F3|66 mandatory] [REX] [0F [38|3A]] opcode ModRM [SIB] [disp8|disp32]
//! ```
//!
//! and the caller writes any immediate right after, passing its size as `imm_len` so the
//! returned RIP-relative [`Rel32Fixup`] knows where the instruction ends.
//!
//! Choices made here, in one place:
//! - REX is emitted iff one of W/R/X/B is set, or an 8-bit operand is register 4–7 (so that it
//!   means `spl`/`bpl`/`sil`/`dil`, not `ah`/`ch`/`dh`/`bh`).
//! - Displacement: none when it is 0 and the base is not `rbp`/`r13` (whose "no displacement"
//!   encodings mean RIP-relative or no-base); disp8 when it fits in `i8`; disp32 otherwise.
//! - A base of `rsp`/`r12` (low bits 100, which in ModRM.rm means "SIB follows") always gets a
//!   SIB byte with index 100 ("none").
//!
//! VEX ([`emit_vex_rm`]) always uses the three-byte `C4` form: every VEX instruction here is in
//! map 0F38, which the two-byte `C5` form cannot express.

use super::operands::{Amode, GprMem, XmmMem};
use super::regs::{Gpr, Size};
use super::{CodeSink, Rel32Fixup};

/// Opcode map (escape bytes before the opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Map {
    /// One-byte opcodes.
    Legacy,
    /// `0F xx`.
    M0F,
    /// `0F 38 xx`.
    M0F38,
    /// `0F 3A xx`.
    M0F3A,
}

/// Everything about an instruction's framing except its operands.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Enc {
    lock: bool,
    osize: bool,
    mandatory: Option<u8>,
    w: bool,
    map: Map,
    opcode: u8,
    byte_reg: bool,
    byte_rm: bool,
}

impl Enc {
    /// A plain opcode: no prefixes, no REX.W, no 8-bit operands.
    pub(crate) const fn new(map: Map, opcode: u8) -> Enc {
        Enc {
            lock: false,
            osize: false,
            mandatory: None,
            w: false,
            map,
            opcode,
            byte_reg: false,
            byte_rm: false,
        }
    }

    /// The usual integer pattern: `op8` for 8-bit operands (both `reg` and `r/m` registers are
    /// byte registers), `op` otherwise, with 0x66 for 16 bits and REX.W for 64 bits.
    pub(crate) fn sized(size: Size, map: Map, op8: u8, op: u8) -> Enc {
        match size {
            Size::S8 => Enc::new(map, op8).byte_reg().byte_rm(),
            _ => Enc::new(map, op).size(size),
        }
    }

    /// Like [`Enc::sized`] for forms whose `reg` field is an opcode extension (`/digit`): in
    /// the 8-bit form only the `r/m` register is a byte register.
    pub(crate) fn sized_ext(size: Size, map: Map, op8: u8, op: u8) -> Enc {
        match size {
            Size::S8 => Enc::new(map, op8).byte_rm(),
            _ => Enc::new(map, op).size(size),
        }
    }

    /// Sets 0x66 or REX.W for a 16/32/64-bit operand size (8 bits must be handled by the
    /// caller's opcode choice and is rejected here).
    pub(crate) fn size(mut self, size: Size) -> Enc {
        debug_assert_ne!(size, Size::S8, "8-bit size needs its own opcode");
        self.osize = size == Size::S16;
        self.w = size == Size::S64;
        self
    }

    /// Sets REX.W.
    pub(crate) const fn w(mut self, w: bool) -> Enc {
        self.w = w;
        self
    }

    /// Adds a mandatory prefix (0x66, 0xF2 or 0xF3) that selects the instruction.
    pub(crate) const fn prefix(mut self, p: u8) -> Enc {
        self.mandatory = Some(p);
        self
    }

    /// Adds the LOCK prefix.
    pub(crate) const fn lock(mut self) -> Enc {
        self.lock = true;
        self
    }

    /// Marks the `reg` field as an 8-bit register.
    pub(crate) const fn byte_reg(mut self) -> Enc {
        self.byte_reg = true;
        self
    }

    /// Marks a register in the `r/m` field as an 8-bit register.
    pub(crate) const fn byte_rm(mut self) -> Enc {
        self.byte_rm = true;
        self
    }
}

/// The `r/m` operand as the framing sees it: a register number or a memory address.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rm<'a> {
    Reg(u8),
    Mem(&'a Amode),
}

impl<'a> From<&'a GprMem> for Rm<'a> {
    fn from(op: &'a GprMem) -> Rm<'a> {
        match op {
            GprMem::Reg(r) => Rm::Reg(r.enc()),
            GprMem::Mem(m) => Rm::Mem(m),
        }
    }
}

impl<'a> From<&'a XmmMem> for Rm<'a> {
    fn from(op: &'a XmmMem) -> Rm<'a> {
        match op {
            XmmMem::Reg(r) => Rm::Reg(r.enc()),
            XmmMem::Mem(m) => Rm::Mem(m),
        }
    }
}

impl Rm<'_> {
    /// REX.X and REX.B contributions (as bits 1 and 0).
    fn rex_xb(&self) -> u8 {
        match *self {
            Rm::Reg(r) => r >> 3,
            Rm::Mem(Amode::BaseDisp { base, .. }) => base.high(),
            Rm::Mem(Amode::BaseIndex { base, index, .. }) => (index.high() << 1) | base.high(),
            Rm::Mem(Amode::RipRel { .. }) => 0,
        }
    }
}

/// Writes the prefixes, REX (if needed), map escapes and opcode. `rex_rxb` holds REX.R/X/B in
/// bits 2..0; `force_rex` asks for a REX even when it would be 0x40.
fn emit_head(sink: &mut impl CodeSink, enc: &Enc, rex_rxb: u8, force_rex: bool) {
    if enc.lock {
        sink.put1(0xF0);
    }
    if enc.osize {
        sink.put1(0x66);
    }
    if let Some(p) = enc.mandatory {
        sink.put1(p);
    }
    let rex = 0x40 | (u8::from(enc.w) << 3) | rex_rxb;
    if rex != 0x40 || force_rex {
        sink.put1(rex);
    }
    // Most opcodes are one-byte: one well-predicted test for them (a `match` over the four
    // maps compiles to an indirect jump, often mispredicted).
    if enc.map != Map::Legacy {
        sink.put1(0x0F);
        if enc.map == Map::M0F38 {
            sink.put1(0x38);
        } else if enc.map == Map::M0F3A {
            sink.put1(0x3A);
        }
    }
    sink.put1(enc.opcode);
}

/// Writes a whole instruction head with a ModRM operand: prefixes, REX, opcode, ModRM, SIB and
/// displacement. `reg` is a register number (0–15) or an opcode extension (0–7); `imm_len` is
/// the number of immediate bytes the caller writes next. Returns the RIP-relative fixup, if any.
pub(crate) fn emit_rm(
    sink: &mut impl CodeSink,
    enc: &Enc,
    reg: u8,
    rm: Rm<'_>,
    imm_len: u32,
) -> Option<Rel32Fixup> {
    debug_assert!(reg < 16);
    let mut force_rex = enc.byte_reg && Gpr::new(reg).byte_needs_rex();
    if let Rm::Reg(r) = rm {
        force_rex |= enc.byte_rm && Gpr::new(r).byte_needs_rex();
    }
    let rxb = ((reg >> 3) << 2) | rm.rex_xb();
    emit_head(sink, enc, rxb, force_rex);
    emit_modrm_tail(sink, reg & 7, rm, imm_len)
}

/// Writes an opcode that carries a register in its low three bits (`50+r`, `B8+r`, `0F C8+r`),
/// with REX.B for registers 8–15. `byte` marks an 8-bit register operand.
pub(crate) fn emit_opcode_reg(sink: &mut impl CodeSink, enc: &Enc, reg: Gpr, byte: bool) {
    let mut e = *enc;
    e.opcode |= reg.low3();
    emit_head(sink, &e, reg.high(), byte && reg.byte_needs_rex());
}

/// Writes an instruction that has no ModRM byte (`ret`, `cqo`, `jmp rel32`'s opcode, …).
pub(crate) fn emit_plain(sink: &mut impl CodeSink, enc: &Enc) {
    emit_head(sink, enc, 0, false);
}

fn modrm(md: u8, reg: u8, rm: u8) -> u8 {
    debug_assert!(md < 4 && reg < 8 && rm < 8);
    (md << 6) | (reg << 3) | rm
}

/// Displacement class for a base register and displacement: (ModRM.mod, bytes).
fn disp_mode(base: Gpr, disp: i32) -> (u8, u32) {
    if disp == 0 && base.low3() != 5 {
        (0, 0)
    } else if i8::try_from(disp).is_ok() {
        (1, 1)
    } else {
        (2, 4)
    }
}

fn put_disp(sink: &mut impl CodeSink, disp: i32, bytes: u32) {
    match bytes {
        0 => {}
        1 => sink.put1(disp as u8),
        _ => sink.put4(disp as u32),
    }
}

/// ModRM, SIB and displacement for a `reg` field value (low three bits) and an operand.
fn emit_modrm_tail(
    sink: &mut impl CodeSink,
    reg3: u8,
    rm: Rm<'_>,
    imm_len: u32,
) -> Option<Rel32Fixup> {
    match rm {
        Rm::Reg(r) => {
            sink.put1(modrm(3, reg3, r & 7));
            None
        }
        Rm::Mem(&Amode::BaseDisp { base, disp }) => {
            let (md, bytes) = disp_mode(base, disp);
            if base.low3() == 4 {
                sink.put1(modrm(md, reg3, 4));
                sink.put1(modrm(0, 4, 4));
            } else {
                sink.put1(modrm(md, reg3, base.low3()));
            }
            put_disp(sink, disp, bytes);
            None
        }
        Rm::Mem(&Amode::BaseIndex {
            base,
            index,
            scale,
            disp,
        }) => {
            debug_assert_ne!(index, Gpr::RSP, "rsp cannot be an index register");
            let (md, bytes) = disp_mode(base, disp);
            sink.put1(modrm(md, reg3, 4));
            sink.put1(modrm(scale.bits(), index.low3(), base.low3()));
            put_disp(sink, disp, bytes);
            None
        }
        Rm::Mem(&Amode::RipRel { disp }) => {
            sink.put1(modrm(0, reg3, 5));
            let at = sink.current_offset();
            sink.put4(disp as u32);
            Some(Rel32Fixup {
                at,
                end: at + 4 + imm_len,
            })
        }
    }
}

/// The implied-prefix field of a VEX prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VexPp {
    None = 0,
    P66 = 1,
    PF3 = 2,
    PF2 = 3,
}

/// A VEX-encoded instruction (scalar, L=0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vex {
    pub(crate) pp: VexPp,
    pub(crate) map: Map,
    pub(crate) w: bool,
    pub(crate) opcode: u8,
}

/// Writes a VEX instruction head with a ModRM operand: VEX prefix (with `vvvv` = register
/// number 0–15 of the extra source), opcode, ModRM, SIB and displacement.
pub(crate) fn emit_vex_rm(
    sink: &mut impl CodeSink,
    vex: &Vex,
    reg: u8,
    vvvv: u8,
    rm: Rm<'_>,
    imm_len: u32,
) -> Option<Rel32Fixup> {
    debug_assert!(reg < 16 && vvvv < 16);
    let r = reg >> 3;
    let xb = rm.rex_xb();
    let not_vvvv = (!vvvv & 0xF) << 3;
    let mmmmm = match vex.map {
        Map::M0F => 1,
        Map::M0F38 => 2,
        Map::M0F3A => 3,
        Map::Legacy => unreachable!("VEX has no legacy map"),
    };
    sink.put1(0xC4);
    sink.put1(((((r << 2) | xb) ^ 0b111) << 5) | mmmmm);
    sink.put1((u8::from(vex.w) << 7) | not_vvvv | vex.pp as u8);
    sink.put1(vex.opcode);
    emit_modrm_tail(sink, reg & 7, rm, imm_len)
}

/// Writes an immediate of `bytes` bytes (1, 2, 4 or 8), truncating `value`.
pub(crate) fn put_imm(sink: &mut impl CodeSink, value: i64, bytes: u32) {
    match bytes {
        1 => sink.put1(value as u8),
        2 => sink.put2(value as u16),
        4 => sink.put4(value as u32),
        8 => sink.put8(value as u64),
        _ => unreachable!("immediate size {bytes}"),
    }
}

/// Whether `imm` fits the operand width of `size`, read either as signed or as unsigned; every
/// immediate this layer accepts for a `size`-wide operation must.
pub(crate) fn imm_fits(size: Size, imm: i64) -> bool {
    match size {
        Size::S8 => (-128..=255).contains(&imm),
        Size::S16 => (-32768..=65535).contains(&imm),
        Size::S32 => (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&imm),
        Size::S64 => true,
    }
}
