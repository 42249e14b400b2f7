//! Hardware registers and operand sizes.
//!
//! # Contract
//!
//! - A [`Gpr`] or [`Xmm`] is a hardware register number 0–15 (the encoding the CPU uses: low
//!   three bits in ModRM/SIB/opcode, bit 3 in REX or VEX). Construction checks the range, so
//!   every value of these types is encodable.
//! - A [`Gpr`] carries no width; the width of an access comes from the [`Size`] of the
//!   instruction. Names for each width follow Intel syntax (`al`, `sil`, `r8b`, `r8w`, `r8d`).
//! - 8-bit accesses always mean the low byte (`spl`, `bpl`, `sil`, `dil` for numbers 4–7, which
//!   the encoder guarantees by emitting a REX prefix); the legacy high-byte registers
//!   `ah`/`ch`/`dh`/`bh` are not expressible.

use core::fmt;

/// Operand size of an integer instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// 8 bits.
    S8,
    /// 16 bits (encoded with the 0x66 operand-size prefix).
    S16,
    /// 32 bits (the default operand size; writes zero the upper 32 bits).
    S32,
    /// 64 bits (encoded with REX.W).
    S64,
}

impl Size {
    /// All sizes, smallest first.
    pub const ALL: [Size; 4] = [Size::S8, Size::S16, Size::S32, Size::S64];

    /// Width in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Size::S8 => 1,
            Size::S16 => 2,
            Size::S32 => 4,
            Size::S64 => 8,
        }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        self.bytes() * 8
    }
}

/// A general-purpose register by hardware number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gpr(u8);

/// An SSE register by hardware number (`xmm0`–`xmm15`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Xmm(u8);

const NAMES64: [&str; 16] = [
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15",
];
const NAMES32: [&str; 16] = [
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d",
    "r13d", "r14d", "r15d",
];
const NAMES16: [&str; 16] = [
    "ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w", "r12w", "r13w",
    "r14w", "r15w",
];
const NAMES8: [&str; 16] = [
    "al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b",
    "r13b", "r14b", "r15b",
];
const XMM_NAMES: [&str; 16] = [
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
    "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
];

impl Gpr {
    pub const RAX: Gpr = Gpr(0);
    pub const RCX: Gpr = Gpr(1);
    pub const RDX: Gpr = Gpr(2);
    pub const RBX: Gpr = Gpr(3);
    pub const RSP: Gpr = Gpr(4);
    pub const RBP: Gpr = Gpr(5);
    pub const RSI: Gpr = Gpr(6);
    pub const RDI: Gpr = Gpr(7);
    pub const R8: Gpr = Gpr(8);
    pub const R9: Gpr = Gpr(9);
    pub const R10: Gpr = Gpr(10);
    pub const R11: Gpr = Gpr(11);
    pub const R12: Gpr = Gpr(12);
    pub const R13: Gpr = Gpr(13);
    pub const R14: Gpr = Gpr(14);
    pub const R15: Gpr = Gpr(15);

    /// The register with hardware number `enc`; panics unless `enc < 16`.
    pub const fn new(enc: u8) -> Gpr {
        assert!(enc < 16, "GPR number out of range");
        Gpr(enc)
    }

    /// All sixteen registers in hardware order.
    pub fn all() -> impl Iterator<Item = Gpr> {
        (0..16).map(Gpr)
    }

    /// Hardware number, 0–15.
    pub const fn enc(self) -> u8 {
        self.0
    }

    /// Low three bits of the number (the ModRM/SIB/opcode field).
    pub(crate) const fn low3(self) -> u8 {
        self.0 & 7
    }

    /// Bit 3 of the number (the REX/VEX extension bit).
    pub(crate) const fn high(self) -> u8 {
        self.0 >> 3
    }

    /// Whether an 8-bit access to this register needs a REX prefix to mean the low byte
    /// (`spl`, `bpl`, `sil`, `dil`) rather than `ah`–`bh`.
    pub(crate) const fn byte_needs_rex(self) -> bool {
        matches!(self.0, 4..=7)
    }

    /// Intel-syntax name of the `size`-wide view of this register.
    pub fn name(self, size: Size) -> &'static str {
        let i = usize::from(self.0);
        match size {
            Size::S8 => NAMES8[i],
            Size::S16 => NAMES16[i],
            Size::S32 => NAMES32[i],
            Size::S64 => NAMES64[i],
        }
    }
}

impl fmt::Debug for Gpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name(Size::S64))
    }
}

impl fmt::Display for Gpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name(Size::S64))
    }
}

impl Xmm {
    /// The register `xmm{enc}`; panics unless `enc < 16`.
    pub const fn new(enc: u8) -> Xmm {
        assert!(enc < 16, "XMM number out of range");
        Xmm(enc)
    }

    /// All sixteen registers in hardware order.
    pub fn all() -> impl Iterator<Item = Xmm> {
        (0..16).map(Xmm)
    }

    /// Hardware number, 0–15.
    pub const fn enc(self) -> u8 {
        self.0
    }

    /// Intel-syntax name.
    pub fn name(self) -> &'static str {
        XMM_NAMES[usize::from(self.0)]
    }
}

impl fmt::Debug for Xmm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Xmm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
