//! Checked operands shared by several families: unsigned and signed immediate fields, shift
//! amounts, shifted registers and extended registers.
//!
//! # Contract
//!
//! Every constructor returns `None` when its value does not fit the field; a value of these
//! types is always encodable. A [`ShiftAmount`] (and so a [`Shifted`]) is built for one
//! operation [`Size`] and carries it: the form that takes it gets its size from it.

use core::fmt;

use super::regs::{GprZr, Size};

/// An unsigned immediate field of `BITS` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UImm<const BITS: u32>(u32);

/// A signed (two's complement) immediate field of `BITS` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SImm<const BITS: u32>(i32);

/// `ccmp`/`ccmn` immediate, 0–31.
pub type UImm5 = UImm<5>;
/// `tbz`/`tbnz` bit number, 0–63.
pub type UImm6 = UImm<6>;
/// Scaled unsigned load/store offset index, 0–4095.
pub type UImm12 = UImm<12>;
/// Unscaled and pre/post-index load/store offset, -256–255.
pub type SImm9 = SImm<9>;
/// Scaled `ldp`/`stp` offset index, -64–63.
pub type SImm7 = SImm<7>;

impl<const BITS: u32> UImm<BITS> {
    /// The largest value.
    pub const MAX: u32 = (1 << BITS) - 1;

    /// `value`, or `None` if it needs more than `BITS` bits.
    pub const fn new(value: u32) -> Option<Self> {
        if value <= Self::MAX {
            Some(UImm(value))
        } else {
            None
        }
    }

    /// The value.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl<const BITS: u32> SImm<BITS> {
    /// The smallest value.
    pub const MIN: i32 = -(1 << (BITS - 1));
    /// The largest value.
    pub const MAX: i32 = (1 << (BITS - 1)) - 1;

    /// `value`, or `None` if it is outside the `BITS`-bit two's complement range.
    pub const fn new(value: i32) -> Option<Self> {
        if value >= Self::MIN && value <= Self::MAX {
            Some(SImm(value))
        } else {
            None
        }
    }

    /// The value.
    pub const fn get(self) -> i32 {
        self.0
    }

    /// The field bits (two's complement, `BITS` wide).
    pub(crate) const fn bits(self) -> u32 {
        (self.0 as u32) & ((1 << BITS) - 1)
    }
}

/// A shift or rotate amount for an operation of a given size: 0 to width − 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShiftAmount {
    size: Size,
    amount: u8,
}

impl ShiftAmount {
    /// `amount` for `size`, or `None` unless `amount < size.bits()`.
    pub const fn new(size: Size, amount: u32) -> Option<ShiftAmount> {
        if amount < size.bits() {
            Some(ShiftAmount {
                size,
                amount: amount as u8,
            })
        } else {
            None
        }
    }

    /// The operation size it was built for.
    pub const fn size(self) -> Size {
        self.size
    }

    /// The amount.
    pub const fn get(self) -> u32 {
        self.amount as u32
    }
}

/// A shift kind accepted by a shifted-register form ([`ArithShift`] for add/sub,
/// [`LogicShift`] for logical operations).
pub trait ShiftKind: Copy + fmt::Debug {
    /// Logical shift left: the kind of an unshifted register operand.
    const LSL: Self;

    /// The `shift` field (bits 22–23).
    fn field(self) -> u32;
}

/// Shifts of the second register of an add/sub (no rotate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithShift {
    Lsl = 0,
    Lsr = 1,
    Asr = 2,
}

impl ArithShift {
    /// All kinds.
    pub const ALL: [ArithShift; 3] = [ArithShift::Lsl, ArithShift::Lsr, ArithShift::Asr];
}

impl ShiftKind for ArithShift {
    const LSL: Self = ArithShift::Lsl;

    fn field(self) -> u32 {
        self as u32
    }
}

/// Shifts of the second register of a logical operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicShift {
    Lsl = 0,
    Lsr = 1,
    Asr = 2,
    Ror = 3,
}

impl LogicShift {
    /// All kinds.
    pub const ALL: [LogicShift; 4] = [
        LogicShift::Lsl,
        LogicShift::Lsr,
        LogicShift::Asr,
        LogicShift::Ror,
    ];
}

impl ShiftKind for LogicShift {
    const LSL: Self = LogicShift::Lsl;

    fn field(self) -> u32 {
        self as u32
    }
}

/// A register shifted by a constant (`x2, lsl #3`), for an operation of the size it was built
/// for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shifted<K> {
    rm: GprZr,
    kind: K,
    amount: ShiftAmount,
}

impl<K: ShiftKind> Shifted<K> {
    /// `rm, kind #amount` at `size`, or `None` unless `amount < size.bits()`.
    pub fn new(size: Size, rm: GprZr, kind: K, amount: u32) -> Option<Self> {
        let amount = ShiftAmount::new(size, amount)?;
        Some(Shifted { rm, kind, amount })
    }

    /// `rm` unshifted, at `size`.
    pub fn reg(size: Size, rm: GprZr) -> Self {
        Shifted {
            rm,
            kind: K::LSL,
            amount: ShiftAmount { size, amount: 0 },
        }
    }

    /// The operation size.
    pub fn size(&self) -> Size {
        self.amount.size
    }

    /// The register, shift kind and amount.
    pub fn parts(&self) -> (GprZr, K, u32) {
        (self.rm, self.kind, self.amount.get())
    }

    /// `Rm`, `shift` and `imm6` fields.
    pub(crate) fn fields(&self) -> u32 {
        super::rm_field(self.rm.enc()) | (self.kind.field() << 22) | (self.amount.get() << 10)
    }
}

/// How an extended-register operand widens its register (the `option` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extend {
    Uxtb = 0,
    Uxth = 1,
    Uxtw = 2,
    Uxtx = 3,
    Sxtb = 4,
    Sxth = 5,
    Sxtw = 6,
    Sxtx = 7,
}

impl Extend {
    /// All extensions.
    pub const ALL: [Extend; 8] = [
        Extend::Uxtb,
        Extend::Uxth,
        Extend::Uxtw,
        Extend::Uxtx,
        Extend::Sxtb,
        Extend::Sxth,
        Extend::Sxtw,
        Extend::Sxtx,
    ];

    /// Width of the register read by this extension in an operation of `size`: `x` only for
    /// `uxtx`/`sxtx` in a 64-bit operation.
    pub const fn reg_size(self, size: Size) -> Size {
        match (self, size) {
            (Extend::Uxtx | Extend::Sxtx, Size::S64) => Size::S64,
            _ => Size::S32,
        }
    }
}

/// A register extended and then shifted left by 0–4 (`w2, sxtw #2`), the second operand of
/// the extended-register add/sub forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extended {
    rm: GprZr,
    extend: Extend,
    shift: u8,
}

impl Extended {
    /// `rm, extend #shift`, or `None` unless `shift <= 4`.
    pub const fn new(rm: GprZr, extend: Extend, shift: u32) -> Option<Extended> {
        if shift <= 4 {
            Some(Extended {
                rm,
                extend,
                shift: shift as u8,
            })
        } else {
            None
        }
    }

    /// The register, extension and shift.
    pub const fn parts(&self) -> (GprZr, Extend, u32) {
        (self.rm, self.extend, self.shift as u32)
    }

    /// `Rm`, `option` and `imm3` fields.
    pub(crate) const fn fields(&self) -> u32 {
        super::rm_field(self.rm.enc()) | ((self.extend as u32) << 13) | ((self.shift as u32) << 10)
    }
}
