//! Hardware registers and operand sizes.
//!
//! # Contract
//!
//! - Register number 31 means the stack pointer in some operand slots and the zero register
//!   in others. The types say which: a [`Gpr`] is `x0`–`x30` only; a [`GprZr`] is a `Gpr` or
//!   the zero register (`xzr`/`wzr`); a [`GprSp`] is a `Gpr` or the stack pointer
//!   (`sp`/`wsp`). Every `Gpr` converts into both; `GprZr::ZR` and `GprSp::SP` are the only
//!   ways to name number 31, so a slot that means SP cannot be handed ZR, nor the reverse.
//! - A [`Vreg`] is a SIMD/FP register `v0`–`v31`; the width of an access (`b`/`h`/`s`/`d`/`q`)
//!   comes from the instruction.
//! - Registers carry no width; a [`Size`] (integer operations), [`MemSize`] (integer memory
//!   accesses), [`FpSize`] (FP arithmetic) or [`FpMemSize`] (FP/SIMD memory accesses) does.
//! - Names follow the Arm assembler (`x0`, `w30`, `xzr`, `wsp`, `s5`, `d31`, `q0`).

use core::fmt;

/// Width of an integer operation: the `sf` bit, `w` (32-bit) or `x` (64-bit) registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// 32 bits (`w` registers; writes zero the upper 32 bits).
    S32,
    /// 64 bits (`x` registers).
    S64,
}

impl Size {
    /// Both sizes, smallest first.
    pub const ALL: [Size; 2] = [Size::S32, Size::S64];

    /// Width in bits.
    pub const fn bits(self) -> u32 {
        match self {
            Size::S32 => 32,
            Size::S64 => 64,
        }
    }

    /// The `sf` bit (bit 31 of most integer data-processing instructions).
    pub(crate) const fn sf(self) -> u32 {
        match self {
            Size::S32 => 0,
            Size::S64 => 1 << 31,
        }
    }
}

/// Size of an integer memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSize {
    S8,
    S16,
    S32,
    S64,
}

impl MemSize {
    /// All sizes, smallest first.
    pub const ALL: [MemSize; 4] = [MemSize::S8, MemSize::S16, MemSize::S32, MemSize::S64];

    /// log2 of the size in bytes: the `size` field of loads and stores.
    pub const fn log2_bytes(self) -> u32 {
        self as u32
    }

    /// Size in bytes.
    pub const fn bytes(self) -> u32 {
        1 << self.log2_bytes()
    }

    /// The register width the access loads into or stores from: `w` up to 32 bits.
    pub const fn reg_size(self) -> Size {
        match self {
            MemSize::S64 => Size::S64,
            _ => Size::S32,
        }
    }
}

/// Precision of a scalar floating-point operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpSize {
    /// Single precision (`s` registers).
    F32,
    /// Double precision (`d` registers).
    F64,
}

impl FpSize {
    /// Both precisions.
    pub const ALL: [FpSize; 2] = [FpSize::F32, FpSize::F64];

    /// The `ftype` field (bits 22–23) of FP data-processing instructions.
    pub(crate) const fn ftype(self) -> u32 {
        match self {
            FpSize::F32 => 0,
            FpSize::F64 => 1 << 22,
        }
    }

    /// The same width as a memory access size.
    pub const fn mem_size(self) -> FpMemSize {
        match self {
            FpSize::F32 => FpMemSize::S32,
            FpSize::F64 => FpMemSize::S64,
        }
    }
}

/// Size of an FP/SIMD register memory access (`b`, `h`, `s`, `d`, `q` registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpMemSize {
    S8,
    S16,
    S32,
    S64,
    S128,
}

impl FpMemSize {
    /// All sizes, smallest first.
    pub const ALL: [FpMemSize; 5] = [
        FpMemSize::S8,
        FpMemSize::S16,
        FpMemSize::S32,
        FpMemSize::S64,
        FpMemSize::S128,
    ];

    /// log2 of the size in bytes.
    pub const fn log2_bytes(self) -> u32 {
        self as u32
    }

    /// Size in bytes.
    pub const fn bytes(self) -> u32 {
        1 << self.log2_bytes()
    }

    /// Register name prefix: `b`, `h`, `s`, `d` or `q`.
    pub const fn prefix(self) -> char {
        match self {
            FpMemSize::S8 => 'b',
            FpMemSize::S16 => 'h',
            FpMemSize::S32 => 's',
            FpMemSize::S64 => 'd',
            FpMemSize::S128 => 'q',
        }
    }
}

/// Width of an FP/SIMD register for the forms that exist only for `s`, `d` and `q` registers
/// (load/store pair, load literal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SdqSize {
    S32,
    S64,
    S128,
}

impl SdqSize {
    /// All sizes, smallest first.
    pub const ALL: [SdqSize; 3] = [SdqSize::S32, SdqSize::S64, SdqSize::S128];

    /// The same width as a memory access size.
    pub const fn mem_size(self) -> FpMemSize {
        match self {
            SdqSize::S32 => FpMemSize::S32,
            SdqSize::S64 => FpMemSize::S64,
            SdqSize::S128 => FpMemSize::S128,
        }
    }

    /// The `opc` field of pair and literal forms: 0, 1, 2.
    pub(crate) const fn opc(self) -> u32 {
        self as u32
    }
}

/// A general-purpose register `x0`–`x30` (never number 31).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gpr(u8);

/// A general-purpose register or the zero register (number 31 reads as zero, writes are
/// discarded).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GprZr(u8);

/// A general-purpose register or the stack pointer (number 31).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GprSp(u8);

/// A SIMD/FP register `v0`–`v31`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Vreg(u8);

const X_NAMES: [&str; 31] = [
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
    "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27",
    "x28", "x29", "x30",
];
const W_NAMES: [&str; 31] = [
    "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12", "w13", "w14",
    "w15", "w16", "w17", "w18", "w19", "w20", "w21", "w22", "w23", "w24", "w25", "w26", "w27",
    "w28", "w29", "w30",
];

impl Gpr {
    pub const X0: Gpr = Gpr(0);
    pub const X1: Gpr = Gpr(1);
    pub const X2: Gpr = Gpr(2);
    pub const X3: Gpr = Gpr(3);
    pub const X4: Gpr = Gpr(4);
    pub const X5: Gpr = Gpr(5);
    pub const X6: Gpr = Gpr(6);
    pub const X7: Gpr = Gpr(7);
    pub const X8: Gpr = Gpr(8);
    pub const X9: Gpr = Gpr(9);
    pub const X10: Gpr = Gpr(10);
    pub const X11: Gpr = Gpr(11);
    pub const X12: Gpr = Gpr(12);
    pub const X13: Gpr = Gpr(13);
    pub const X14: Gpr = Gpr(14);
    pub const X15: Gpr = Gpr(15);
    /// `ip0`, the first intra-procedure-call scratch register.
    pub const X16: Gpr = Gpr(16);
    /// `ip1`, the second intra-procedure-call scratch register.
    pub const X17: Gpr = Gpr(17);
    /// The platform register.
    pub const X18: Gpr = Gpr(18);
    pub const X19: Gpr = Gpr(19);
    pub const X20: Gpr = Gpr(20);
    pub const X21: Gpr = Gpr(21);
    pub const X22: Gpr = Gpr(22);
    pub const X23: Gpr = Gpr(23);
    pub const X24: Gpr = Gpr(24);
    pub const X25: Gpr = Gpr(25);
    pub const X26: Gpr = Gpr(26);
    pub const X27: Gpr = Gpr(27);
    pub const X28: Gpr = Gpr(28);
    pub const X29: Gpr = Gpr(29);
    pub const X30: Gpr = Gpr(30);
    /// The frame pointer, `x29`.
    pub const FP: Gpr = Gpr::X29;
    /// The link register, `x30`.
    pub const LR: Gpr = Gpr::X30;

    /// The register `x{n}`, or `None` unless `n <= 30`.
    pub const fn new(n: u8) -> Option<Gpr> {
        if n <= 30 {
            Some(Gpr(n))
        } else {
            None
        }
    }

    /// All 31 registers in hardware order.
    pub fn all() -> impl Iterator<Item = Gpr> {
        (0..31).map(Gpr)
    }

    /// Hardware number, 0–30.
    pub const fn enc(self) -> u8 {
        self.0
    }

    /// Name of the `size`-wide view (`x5`, `w5`).
    pub fn name(self, size: Size) -> &'static str {
        let i = usize::from(self.0);
        match size {
            Size::S32 => W_NAMES[i],
            Size::S64 => X_NAMES[i],
        }
    }
}

impl GprZr {
    /// The zero register, `xzr`/`wzr`.
    pub const ZR: GprZr = GprZr(31);

    /// Hardware number, 0–31 (31 is the zero register).
    pub const fn enc(self) -> u8 {
        self.0
    }

    /// The general-purpose register, or `None` for the zero register.
    pub const fn gpr(self) -> Option<Gpr> {
        Gpr::new(self.0)
    }

    /// Name of the `size`-wide view (`x5`, `wzr`).
    pub fn name(self, size: Size) -> &'static str {
        match (self.gpr(), size) {
            (Some(r), _) => r.name(size),
            (None, Size::S32) => "wzr",
            (None, Size::S64) => "xzr",
        }
    }
}

impl GprSp {
    /// The stack pointer, `sp`/`wsp`.
    pub const SP: GprSp = GprSp(31);

    /// Hardware number, 0–31 (31 is the stack pointer).
    pub const fn enc(self) -> u8 {
        self.0
    }

    /// The general-purpose register, or `None` for the stack pointer.
    pub const fn gpr(self) -> Option<Gpr> {
        Gpr::new(self.0)
    }

    /// Name of the `size`-wide view (`x5`, `wsp`).
    pub fn name(self, size: Size) -> &'static str {
        match (self.gpr(), size) {
            (Some(r), _) => r.name(size),
            (None, Size::S32) => "wsp",
            (None, Size::S64) => "sp",
        }
    }
}

impl From<Gpr> for GprZr {
    fn from(r: Gpr) -> GprZr {
        GprZr(r.0)
    }
}

impl From<Gpr> for GprSp {
    fn from(r: Gpr) -> GprSp {
        GprSp(r.0)
    }
}

impl Vreg {
    /// The register `v{n}`, or `None` unless `n <= 31`.
    pub const fn new(n: u8) -> Option<Vreg> {
        if n <= 31 {
            Some(Vreg(n))
        } else {
            None
        }
    }

    /// All 32 registers in hardware order.
    pub fn all() -> impl Iterator<Item = Vreg> {
        (0..32).map(Vreg)
    }

    /// Hardware number, 0–31.
    pub const fn enc(self) -> u8 {
        self.0
    }

    /// Name of the scalar view of the given width (`s3`, `d3`, `q3`).
    pub fn name(self, size: FpMemSize) -> String {
        format!("{}{}", size.prefix(), self.0)
    }
}

macro_rules! debug_as_x {
    ($($t:ty),*) => {$(
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name(Size::S64))
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name(Size::S64))
            }
        }
    )*};
}
debug_as_x!(Gpr, GprZr, GprSp);

impl fmt::Debug for Vreg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

impl fmt::Display for Vreg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}
