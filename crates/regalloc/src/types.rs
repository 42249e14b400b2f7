//! The vocabulary shared by the client and the allocator: registers, virtual registers,
//! operands (bit-packed), allocations, program points and edits.
//!
//! Everything here is a small `Copy` value over dense indices. The packing of [`Operand`]
//! is documented on the type; the other types are plain newtypes.

use std::fmt;

/// A register class. Registers of one class never hold values of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegClass {
    /// General-purpose integer registers.
    Int = 0,
    /// Floating-point (and later vector) registers.
    Float = 1,
}

/// Number of register classes; arrays indexed by class have this length.
pub const NUM_CLASSES: usize = 2;

impl RegClass {
    /// Both classes, in index order.
    pub const ALL: [RegClass; NUM_CLASSES] = [RegClass::Int, RegClass::Float];

    /// Dense index of the class.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    #[inline]
    fn from_bit(bit: u32) -> RegClass {
        if bit == 0 {
            RegClass::Int
        } else {
            RegClass::Float
        }
    }
}

/// A physical register: `class * 64 + hw_enc`.
///
/// Layout (u8): bits 0..6 hardware encoding (0..63), bit 6 class. The dense index
/// (`index()`) is the raw value, so a [`PRegSet`] of 128 bits covers both classes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PReg(u8);

impl PReg {
    /// Largest hardware encoding plus one.
    pub const MAX_HW: usize = 64;

    /// A register with hardware encoding `hw` (< 64) in `class`.
    #[inline]
    pub const fn new(hw: usize, class: RegClass) -> PReg {
        assert!(hw < 64);
        PReg(((class as u8) << 6) | hw as u8)
    }

    /// Hardware encoding within the class.
    #[inline]
    pub fn hw_enc(self) -> usize {
        (self.0 & 63) as usize
    }

    /// The register's class.
    #[inline]
    pub fn class(self) -> RegClass {
        RegClass::from_bit(u32::from(self.0 >> 6))
    }

    /// Dense index over all classes (0..128).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Inverse of [`PReg::index`].
    #[inline]
    pub fn from_index(index: usize) -> PReg {
        debug_assert!(index < 128);
        PReg(index as u8)
    }
}

impl fmt::Debug for PReg {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for PReg {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class() {
            RegClass::Int => write!(f, "r{}", self.hw_enc()),
            RegClass::Float => write!(f, "f{}", self.hw_enc()),
        }
    }
}

/// A set of physical registers (both classes), as a 128-bit mask over [`PReg::index`].
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PRegSet(u128);

impl PRegSet {
    /// The empty set.
    #[inline]
    pub const fn empty() -> PRegSet {
        PRegSet(0)
    }

    /// Adds `reg`.
    #[inline]
    pub fn add(&mut self, reg: PReg) {
        self.0 |= 1u128 << reg.index();
    }

    /// Removes `reg`.
    #[inline]
    pub fn remove(&mut self, reg: PReg) {
        self.0 &= !(1u128 << reg.index());
    }

    /// Whether `reg` is in the set.
    #[inline]
    pub fn contains(self, reg: PReg) -> bool {
        self.0 & (1u128 << reg.index()) != 0
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The registers in either set.
    #[inline]
    pub fn union(self, other: PRegSet) -> PRegSet {
        PRegSet(self.0 | other.0)
    }

    /// The registers in both sets.
    #[inline]
    pub fn intersection(self, other: PRegSet) -> PRegSet {
        PRegSet(self.0 & other.0)
    }

    /// The registers of `self` not in `other`.
    #[inline]
    pub fn difference(self, other: PRegSet) -> PRegSet {
        PRegSet(self.0 & !other.0)
    }

    /// The registers of `class` in the set (a class owns indices `64 * class..`, see
    /// [`PReg::index`]).
    #[inline]
    pub fn of_class(self, class: RegClass) -> PRegSet {
        PRegSet(self.0 & (u128::from(u64::MAX) << (64 * class as u32)))
    }

    /// The number of registers in the set.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The registers in index order.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = PReg> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let index = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(PReg::from_index(index))
        })
    }
}

impl fmt::Debug for PRegSet {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<PReg> for PRegSet {
    #[inline]
    fn from_iter<T: IntoIterator<Item = PReg>>(iter: T) -> Self {
        let mut set = PRegSet::empty();
        for reg in iter {
            set.add(reg);
        }
        set
    }
}

/// A virtual register: a dense index below [`crate::Function::num_vregs`] and its class.
///
/// Layout (u32): bits 0..21 index, bit 21 class (0 int, 1 float).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(u32);

const VREG_INDEX_BITS: u32 = 21;

impl VReg {
    /// Largest representable index plus one.
    pub const MAX: usize = 1 << VREG_INDEX_BITS;

    /// The virtual register with dense index `index` holding values of `class`.
    #[inline]
    pub const fn new(index: usize, class: RegClass) -> VReg {
        assert!(index < VReg::MAX);
        VReg(index as u32 | (class as u32) << VREG_INDEX_BITS)
    }

    /// Dense index.
    #[inline]
    pub fn index(self) -> usize {
        (self.0 & ((1 << VREG_INDEX_BITS) - 1)) as usize
    }

    /// Register class of the values it holds.
    #[inline]
    pub fn class(self) -> RegClass {
        RegClass::from_bit(self.0 >> VREG_INDEX_BITS)
    }
}

impl fmt::Debug for VReg {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for VReg {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.index())
    }
}

/// A block: dense index in emission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(pub u32);

impl Block {
    /// Dense index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An instruction: dense index; blocks own contiguous ranges of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(pub u32);

impl Inst {
    /// Dense index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A half-open range of instructions `[first, last + 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstRange {
    /// First instruction.
    pub start: Inst,
    /// One past the last instruction.
    pub end: Inst,
}

impl InstRange {
    /// Number of instructions.
    #[inline]
    pub fn len(self) -> usize {
        (self.end.0 - self.start.0) as usize
    }

    /// Whether the range holds no instruction.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.end.0 <= self.start.0
    }

    /// The last instruction (the terminator).
    #[inline]
    pub fn last(self) -> Inst {
        Inst(self.end.0 - 1)
    }

    /// The instructions in order.
    #[inline]
    pub fn iter(self) -> impl DoubleEndedIterator<Item = Inst> {
        (self.start.0..self.end.0).map(Inst)
    }
}

/// Whether an operand reads or writes its virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// Read.
    Use,
    /// Written (exactly once in the whole function: SSA).
    Def,
}

/// When, within its instruction, an operand is read or written.
///
/// An early use is read before any def is written, so a late def may take the same
/// register. A late use stays live until the defs are written; an early def is written
/// before the uses are read (an "early clobber") and so never shares their registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandPos {
    /// Before the instruction's effect.
    Early,
    /// After the instruction's effect.
    Late,
}

/// Where an operand's value must be at its instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandConstraint {
    /// Any register of the operand's class.
    Reg,
    /// This physical register.
    FixedReg(PReg),
    /// (Defs only.) The same register as input operand `n` of this instruction, which must
    /// be an early use with constraint `Reg` or `RegOrStack` (two-address instructions).
    Reuse(usize),
    /// The virtual register's spill slot.
    Stack,
    /// A register or a spill slot, whichever is cheaper.
    RegOrStack,
}

/// One operand of an instruction, packed in 32 bits.
///
/// Layout:
///
/// ```text
///  31         25 24    23    22  21   20                 0
/// +-------------+----+-----+-----+----+-------------------+
/// | constraint  | -- | pos |kind |cls |  vreg index (21)  |
/// +-------------+----+-----+-----+----+-------------------+
/// ```
///
/// - bits 0..22: the [`VReg`] as packed (index and class; the class is the operand's).
/// - kind: bit 22 (0 use, 1 def). pos: bit 23 (0 early, 1 late). Bit 24 is free.
/// - constraint: bits 25..32 (7 bits): `1hhhhhh` fixed register with hardware encoding
///   `hhhhhh` in the operand's class; `01nnnnn` reuse input `n` (< 32); `0000000` any
///   register; `0000001` stack; `0000010` register or stack.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Operand(u32);

const VREG_BITS: u32 = 22;
const KIND_SHIFT: u32 = 22;
const POS_SHIFT: u32 = 23;
const CONSTRAINT_SHIFT: u32 = 25;

impl Operand {
    /// Packs an operand. `Reuse(n)` needs `n < 32`; a fixed register must be of the
    /// vreg's class.
    #[inline]
    pub fn new(
        vreg: VReg,
        kind: OperandKind,
        pos: OperandPos,
        constraint: OperandConstraint,
    ) -> Operand {
        let constraint_bits = match constraint {
            OperandConstraint::Reg => 0,
            OperandConstraint::Stack => 1,
            OperandConstraint::RegOrStack => 2,
            OperandConstraint::Reuse(n) => {
                assert!(
                    n < 32,
                    "reuse index {n} does not fit in the operand packing"
                );
                0b010_0000 | n as u32
            }
            OperandConstraint::FixedReg(reg) => {
                assert_eq!(
                    reg.class(),
                    vreg.class(),
                    "fixed register {reg} of the wrong class"
                );
                0b100_0000 | reg.hw_enc() as u32
            }
        };
        Operand(
            vreg.0
                | (matches!(kind, OperandKind::Def) as u32) << KIND_SHIFT
                | (matches!(pos, OperandPos::Late) as u32) << POS_SHIFT
                | constraint_bits << CONSTRAINT_SHIFT,
        )
    }

    /// An early use in any register.
    #[inline]
    pub fn reg_use(vreg: VReg) -> Operand {
        Operand::new(
            vreg,
            OperandKind::Use,
            OperandPos::Early,
            OperandConstraint::Reg,
        )
    }

    /// A late def in any register.
    #[inline]
    pub fn reg_def(vreg: VReg) -> Operand {
        Operand::new(
            vreg,
            OperandKind::Def,
            OperandPos::Late,
            OperandConstraint::Reg,
        )
    }

    /// The virtual register.
    #[inline]
    pub fn vreg(self) -> VReg {
        VReg(self.0 & ((1 << VREG_BITS) - 1))
    }

    /// The same operand naming `vreg` (of the same class) instead.
    #[inline]
    pub fn with_vreg(self, vreg: VReg) -> Operand {
        debug_assert_eq!(
            vreg.class(),
            self.class(),
            "{vreg} replaces a vreg of another class"
        );
        Operand(self.0 & !((1 << VREG_BITS) - 1) | vreg.0)
    }

    /// Use or def.
    #[inline]
    pub fn kind(self) -> OperandKind {
        if (self.0 >> KIND_SHIFT) & 1 == 0 {
            OperandKind::Use
        } else {
            OperandKind::Def
        }
    }

    /// Early or late.
    #[inline]
    pub fn pos(self) -> OperandPos {
        if (self.0 >> POS_SHIFT) & 1 == 0 {
            OperandPos::Early
        } else {
            OperandPos::Late
        }
    }

    /// Register class.
    #[inline]
    pub fn class(self) -> RegClass {
        self.vreg().class()
    }

    /// The constraint.
    #[inline]
    pub fn constraint(self) -> OperandConstraint {
        let bits = self.0 >> CONSTRAINT_SHIFT;
        if bits & 0b100_0000 != 0 {
            OperandConstraint::FixedReg(PReg::new((bits & 63) as usize, self.class()))
        } else if bits & 0b010_0000 != 0 {
            OperandConstraint::Reuse((bits & 31) as usize)
        } else {
            match bits {
                1 => OperandConstraint::Stack,
                2 => OperandConstraint::RegOrStack,
                _ => OperandConstraint::Reg,
            }
        }
    }

    /// Whether this is a use.
    #[inline]
    pub fn is_use(self) -> bool {
        self.kind() == OperandKind::Use
    }

    /// Whether this is a def.
    #[inline]
    pub fn is_def(self) -> bool {
        self.kind() == OperandKind::Def
    }
}

impl fmt::Debug for Operand {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_use() { "use" } else { "def" };
        let pos = match self.pos() {
            OperandPos::Early => "early",
            OperandPos::Late => "late",
        };
        write!(f, "{kind} {} {pos} {:?}", self.vreg(), self.constraint())
    }
}

/// A spill slot: an 8-byte (per class, one value) stack location, dense from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpillSlot(pub u32);

/// Where a value is: a register or a spill slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Allocation {
    /// In a physical register.
    Reg(PReg),
    /// In a spill slot.
    Stack(SpillSlot),
}

impl Allocation {
    /// The register, if any.
    #[inline]
    pub fn as_reg(self) -> Option<PReg> {
        match self {
            Allocation::Reg(r) => Some(r),
            Allocation::Stack(_) => None,
        }
    }

    /// Whether this is a spill slot.
    #[inline]
    pub fn is_stack(self) -> bool {
        matches!(self, Allocation::Stack(_))
    }

    /// Dense location index: registers `0..128`, slots from 128. Used by the checker and
    /// the executor to keep per-location state in flat vectors.
    #[inline]
    pub fn loc_index(self) -> usize {
        match self {
            Allocation::Reg(r) => r.index(),
            Allocation::Stack(s) => 128 + s.0 as usize,
        }
    }
}

impl fmt::Debug for Allocation {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Allocation {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allocation::Reg(r) => write!(f, "{r}"),
            Allocation::Stack(s) => write!(f, "stack{}", s.0),
        }
    }
}

/// A point between instructions where edits execute: before or after an instruction.
/// Packed as `inst * 2 + (0 before | 1 after)`, so points order as program text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProgPoint(u32);

impl ProgPoint {
    /// Just before `inst` reads its operands.
    #[inline]
    pub fn before(inst: Inst) -> ProgPoint {
        ProgPoint(inst.0 * 2)
    }

    /// Just after `inst` wrote its results.
    #[inline]
    pub fn after(inst: Inst) -> ProgPoint {
        ProgPoint(inst.0 * 2 + 1)
    }

    /// The instruction.
    #[inline]
    pub fn inst(self) -> Inst {
        Inst(self.0 / 2)
    }

    /// Whether the point is after its instruction.
    #[inline]
    pub fn is_after(self) -> bool {
        self.0 & 1 == 1
    }

    /// Raw packed value.
    #[inline]
    pub fn raw(self) -> u32 {
        self.0
    }

    /// Inverse of [`ProgPoint::raw`].
    #[inline]
    pub fn from_raw(raw: u32) -> ProgPoint {
        ProgPoint(raw)
    }
}

impl fmt::Debug for ProgPoint {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = if self.is_after() { "after" } else { "before" };
        write!(f, "{side} inst{}", self.inst().0)
    }
}

/// An edit inserted by the allocator: copy the value in `from` to `to`. A register to slot
/// move is a spill, a slot to register move a reload, register to register a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    /// Source location.
    pub from: Allocation,
    /// Destination location.
    pub to: Allocation,
    /// Class of the moved value (the scratch register used for it is of this class).
    pub class: RegClass,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operand_packing_round_trips() {
        let constraints = [
            OperandConstraint::Reg,
            OperandConstraint::Stack,
            OperandConstraint::RegOrStack,
            OperandConstraint::Reuse(0),
            OperandConstraint::Reuse(31),
        ];
        for class in RegClass::ALL {
            let fixed = [
                OperandConstraint::FixedReg(PReg::new(0, class)),
                OperandConstraint::FixedReg(PReg::new(63, class)),
            ];
            for &c in constraints.iter().chain(&fixed) {
                for kind in [OperandKind::Use, OperandKind::Def] {
                    for pos in [OperandPos::Early, OperandPos::Late] {
                        for index in [0, 1, 12345, VReg::MAX - 1] {
                            let v = VReg::new(index, class);
                            let op = Operand::new(v, kind, pos, c);
                            assert_eq!(
                                (op.vreg(), op.kind(), op.pos(), op.constraint(), op.class()),
                                (v, kind, pos, c, class)
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[inline]
    fn preg_sets_and_points() {
        let set: PRegSet = [PReg::new(3, RegClass::Int), PReg::new(5, RegClass::Float)]
            .into_iter()
            .collect();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![PReg::new(3, RegClass::Int), PReg::new(5, RegClass::Float)]
        );
        assert!(ProgPoint::before(Inst(4)) < ProgPoint::after(Inst(4)));
        assert!(ProgPoint::after(Inst(4)) < ProgPoint::before(Inst(5)));
        assert_eq!(ProgPoint::after(Inst(7)).inst(), Inst(7));
    }
}
