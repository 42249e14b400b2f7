//! The operand mapper every ISA's instruction families are written with.
//!
//! # Contract
//!
//! An instruction family is generic over its register type `R`; lowering builds it over
//! `VReg`, and its `map` visits its registers in operand order through an [`Operands`]
//! mapper, which gives each operand its constraint and replaces it by an `S`: encoding
//! (`S = PReg`) and printing (`S = String`) rebuild the instruction that way; collection
//! for the allocator calls `visit`, the same walk building nothing. Both come from one list
//! per family written with [`map_operands`] (one line per variant, its register fields in
//! operand order), so the three cannot disagree.
//!
//! Cost: O(operands) per visit; nothing is allocated except the register lists a printing
//! mapper keeps.

use kestrel_regalloc::{Operand, OperandConstraint, OperandKind, OperandPos, PReg, VReg};
use smallvec::SmallVec;

/// A list of fixed-register operands (an entry's arguments, a return's values, a call's
/// registers): two are kept inline, in the space a `Vec` takes, so a small function's
/// arguments and a return of one or two values allocate nothing. The list is a set of
/// constraints for the allocator and encodes nothing: mapped for encoding it comes out empty
/// (only a printing mapper keeps lists), and each ISA's `ControlInst::emit_mapped` encodes
/// the instructions carrying one without building a mapped copy at all.
pub type FixedRegs<S = VReg> = SmallVec<[(S, PReg); 2]>;

/// A family's two operand walks from one list: `map`, which rebuilds the instruction with
/// each register replaced (encoding, printing), and `visit`, which only reports the
/// operands (collection for the allocator, once per instruction: it builds and drops
/// nothing). The list gives, for each variant, its plain fields (copied by `map`), then its
/// register fields in operand order, each with the expression that visits it through the
/// mapper `m` (the field's name is bound to a reference to its value there), e.g.
/// `Alu { op, size } [a = m.reg_use(*a), b = b.map(m), dst = m.reuse_def(*dst, 0)]`;
/// `let`s before the list are shared by both walks. Listing a variant once is what fixes
/// its operand order for collection, encoding and printing alike.
///
/// A group nested in instructions (a condition, an address) says `nested`: it has `map`
/// only, which the families' walks call (a `map` over `()` builds nothing once inlined).
/// A family shared by the ISAs (`machinst::control`, `machinst::memory`) is named with its
/// ISA parameter, `ControlInst<X>`: `map` then gives `ControlInst<X, S>`.
macro_rules! map_operands {
    (
        $(#[$attr:meta])*
        $vis:vis nested $Family:ident $(<$Isa:ident>)?, |$m:ident|
        $(let $pre:pat = $pre_value:expr;)*
        { $($list:tt)* }
    ) => {
        map_operands!(@map [$(#[$attr])*] $vis $Family [$($Isa)?], $m, [$(let $pre = $pre_value;)*] $($list)*);
    };
    (
        $(#[$attr:meta])*
        $vis:vis $Family:ident $(<$Isa:ident>)?, |$m:ident|
        $(let $pre:pat = $pre_value:expr;)*
        { $($list:tt)* }
    ) => {
        map_operands!(@map [$(#[$attr])*] $vis $Family [$($Isa)?], $m, [$(let $pre = $pre_value;)*] $($list)*);
        map_operands!(@visit $vis $Family, $m, [$(let $pre = $pre_value;)*] $($list)*);
    };
    (@map [$($attr:tt)*] $vis:vis $Family:ident [$($Isa:ident)?], $m:ident, [$($pre:tt)*]
        $( $Variant:ident { $($plain:ident),* } [ $($field:ident = $mapped:expr),* ] ),* $(,)?
    ) => {
        $($attr)*
        #[inline]
        $vis fn map<S, F: FnMut(OperandSpec) -> S>(
            &self,
            $m: &mut Operands<S, F>,
        ) -> $Family<$($Isa,)? S> {
            $($pre)*
            match self {
                $( $Family::$Variant { $($plain,)* $($field,)* } => {
                    $( let $field = $mapped; )*
                    $Family::$Variant { $($plain: Clone::clone($plain),)* $($field,)* }
                } )*
            }
        }
    };
    (@visit $vis:vis $Family:ident, $m:ident, [$($pre:tt)*]
        $( $Variant:ident { $($plain:ident),* } [ $($field:ident = $mapped:expr),* ] ),* $(,)?
    ) => {
        /// Reports the operands in the order `map` visits them, building nothing.
        #[inline]
        $vis fn visit<F: FnMut(OperandSpec)>(&self, $m: &mut Operands<(), F>) {
            $($pre)*
            match self {
                $( $Family::$Variant { $($plain,)* $($field,)* } => {
                    // Plain fields stay bound: an expression may read one (a call's
                    // `num_uses`).
                    $( let _ = $plain; )*
                    $( let _ = $mapped; )*
                } )*
            }
        }
    };
}
pub(crate) use map_operands;

/// An operand as a family describes it; [`OperandSpec::operand`] packs it for the
/// allocator (only collection does: encoding and printing need no packing).
#[derive(Clone, Copy, Debug)]
pub struct OperandSpec {
    vreg: VReg,
    kind: OperandKind,
    pos: OperandPos,
    constraint: OperandConstraint,
}

impl OperandSpec {
    fn new(vreg: VReg, kind: OperandKind, pos: OperandPos, constraint: OperandConstraint) -> Self {
        OperandSpec {
            vreg,
            kind,
            pos,
            constraint,
        }
    }

    /// The allocator's operand.
    #[inline]
    pub fn operand(self) -> Operand {
        Operand::new(self.vreg, self.kind, self.pos, self.constraint)
    }
}

/// Visits one instruction's register operands in operand order, replacing each by what
/// `visit` returns for it (see the module contract). Reuse constraints name an earlier
/// operand by its index in this instruction, which [`Operands::next_index`] gives.
pub struct Operands<S, F: FnMut(OperandSpec) -> S> {
    visit: F,
    count: usize,
    /// Whether lists of fixed registers (arguments, results) are kept in the output: only
    /// printing reads them, so collection and encoding visit them without allocating.
    keep_lists: bool,
}

impl<S, F: FnMut(OperandSpec) -> S> Operands<S, F> {
    /// A mapper that calls `visit` on each operand.
    pub fn new(visit: F) -> Self {
        Operands {
            visit,
            count: 0,
            keep_lists: false,
        }
    }

    /// A mapper whose output keeps every operand, lists included (for printing).
    pub fn keeping_lists(visit: F) -> Self {
        Operands {
            visit,
            count: 0,
            keep_lists: true,
        }
    }

    /// Visit the fixed-register operands `regs` with `f`; the mapped list, or an empty one
    /// unless this mapper keeps lists. (`f` is generic, not a function pointer: the visit
    /// of each operand inlines instead of an indirect call per list element.)
    #[inline]
    pub fn fixed_list(
        &mut self,
        regs: &[(VReg, PReg)],
        f: impl Fn(&mut Self, VReg, PReg) -> S,
    ) -> FixedRegs<S> {
        let mut out = FixedRegs::new();
        for &(v, r) in regs {
            let s = f(self, v, r);
            if self.keep_lists {
                out.push((s, r));
            }
        }
        out
    }

    #[inline]
    fn push(&mut self, op: OperandSpec) -> S {
        self.count += 1;
        (self.visit)(op)
    }

    /// The index the next operand will have.
    #[inline]
    pub fn next_index(&self) -> usize {
        self.count
    }

    #[inline]
    pub fn reg_use(&mut self, v: VReg) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Use,
            OperandPos::Early,
            OperandConstraint::Reg,
        ))
    }

    #[inline]
    pub fn reg_def(&mut self, v: VReg) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Def,
            OperandPos::Late,
            OperandConstraint::Reg,
        ))
    }

    /// A def written while the uses are still read.
    #[inline]
    pub fn early_def(&mut self, v: VReg) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Def,
            OperandPos::Early,
            OperandConstraint::Reg,
        ))
    }

    /// A def in the register of operand `input` (two-address forms).
    #[inline]
    pub fn reuse_def(&mut self, v: VReg, input: usize) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Def,
            OperandPos::Late,
            OperandConstraint::Reuse(input),
        ))
    }

    #[inline]
    pub fn fixed_use(&mut self, v: VReg, r: PReg) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Use,
            OperandPos::Early,
            OperandConstraint::FixedReg(r),
        ))
    }

    #[inline]
    pub fn fixed_def(&mut self, v: VReg, r: PReg) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Def,
            OperandPos::Late,
            OperandConstraint::FixedReg(r),
        ))
    }

    #[inline]
    pub fn fixed_early_def(&mut self, v: VReg, r: PReg) -> S {
        self.push(OperandSpec::new(
            v,
            OperandKind::Def,
            OperandPos::Early,
            OperandConstraint::FixedReg(r),
        ))
    }

    /// A pair of registers (the halves of an `i128`), each mapped by `f`.
    pub fn pair(&mut self, p: [VReg; 2], f: fn(&mut Self, VReg) -> S) -> [S; 2] {
        let lo = f(self, p[0]);
        [lo, f(self, p[1])]
    }
}
