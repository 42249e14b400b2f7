//! Memory addressing modes and register-or-memory operands.
//!
//! # Contract
//!
//! - An [`Amode`] is one of the three 64-bit addressing shapes the backend uses: `base + disp`,
//!   `base + index * scale + disp`, and `rip + disp`. The encoder picks the ModRM/SIB form and
//!   the displacement width (none, disp8, disp32) itself; the special cases (`rsp`/`r12` base
//!   needs a SIB byte, `rbp`/`r13` base cannot have "no displacement") are handled there and are
//!   invisible here.
//! - `rsp` cannot be an index (its SIB encoding means "no index"). [`Amode::base_index`] checks
//!   that; `r12` is a valid index (REX.X distinguishes it).
//! - A RIP-relative displacement is relative to the end of the instruction, as in the hardware.
//!   Encoding one always returns a [`super::Rel32Fixup`] so a label can be patched in later.
//! - [`GprMem`] and [`XmmMem`] are the `r/m` operand of an instruction: the register class is in
//!   the type, so an XMM register can never reach a GPR `r/m` slot or vice versa.

use core::fmt;

use super::regs::{Gpr, Size, Xmm};

/// Scale factor applied to the index register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scale {
    One,
    Two,
    Four,
    Eight,
}

impl Scale {
    /// All scales.
    pub const ALL: [Scale; 4] = [Scale::One, Scale::Two, Scale::Four, Scale::Eight];

    /// The two-bit SIB field.
    pub(crate) fn bits(self) -> u8 {
        match self {
            Scale::One => 0,
            Scale::Two => 1,
            Scale::Four => 2,
            Scale::Eight => 3,
        }
    }

    /// The multiplier: 1, 2, 4 or 8.
    pub fn factor(self) -> u32 {
        1 << self.bits()
    }
}

/// A 64-bit memory address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Amode {
    /// `[base + disp]`.
    BaseDisp { base: Gpr, disp: i32 },
    /// `[base + index * scale + disp]`; `index` is never `rsp`.
    BaseIndex { base: Gpr, index: Gpr, scale: Scale, disp: i32 },
    /// `[rip + disp]`, `disp` relative to the end of the instruction.
    RipRel { disp: i32 },
}

impl Amode {
    /// `[base + disp]`.
    pub fn base_disp(base: Gpr, disp: i32) -> Amode {
        Amode::BaseDisp { base, disp }
    }

    /// `[base + index * scale + disp]`; panics if `index` is `rsp`, which x86-64 cannot encode
    /// as an index.
    pub fn base_index(base: Gpr, index: Gpr, scale: Scale, disp: i32) -> Amode {
        assert_ne!(index, Gpr::RSP, "rsp cannot be an index register");
        Amode::BaseIndex {
            base,
            index,
            scale,
            disp,
        }
    }

    /// `[rip + disp]`.
    pub fn rip(disp: i32) -> Amode {
        Amode::RipRel { disp }
    }
}

/// Intel syntax without a size keyword: `[rax+rcx*4+0x10]`, `[rip-0x8]`.
impl fmt::Display for Amode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (base, index, disp) = match *self {
            Amode::BaseDisp { base, disp } => (base.name(Size::S64), None, disp),
            Amode::BaseIndex {
                base,
                index,
                scale,
                disp,
            } => (base.name(Size::S64), Some((index, scale)), disp),
            Amode::RipRel { disp } => ("rip", None, disp),
        };
        write!(f, "[{base}")?;
        if let Some((index, scale)) = index {
            write!(f, "+{}*{}", index.name(Size::S64), scale.factor())?;
        }
        match disp {
            0 => {}
            d if d < 0 => write!(f, "-{:#x}", d.unsigned_abs())?,
            d => write!(f, "+{d:#x}")?,
        }
        f.write_str("]")
    }
}

/// A general-purpose register or a memory operand (the `r/m` slot of an integer instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GprMem {
    Reg(Gpr),
    Mem(Amode),
}

/// An SSE register or a memory operand (the `xmm/m` slot of an SSE instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XmmMem {
    Reg(Xmm),
    Mem(Amode),
}

impl From<Gpr> for GprMem {
    fn from(r: Gpr) -> GprMem {
        GprMem::Reg(r)
    }
}

impl From<Amode> for GprMem {
    fn from(m: Amode) -> GprMem {
        GprMem::Mem(m)
    }
}

impl From<Xmm> for XmmMem {
    fn from(r: Xmm) -> XmmMem {
        XmmMem::Reg(r)
    }
}

impl From<Amode> for XmmMem {
    fn from(m: Amode) -> XmmMem {
        XmmMem::Mem(m)
    }
}
