//! Selection state ([`IselCtx`]), the merged constants the AArch64 rules pass between
//! extractors and constructors (beside the shared values of `machinst::isel`), and the
//! helpers the rule constructors share (sizes of types, immediates, extensions).
//!
//! # Contract
//!
//! The `*_for` helpers only compute whether and how a constant fits an instruction field;
//! none emits or merges anything. [`IselCtx::ext`] emits one extension into the current IR
//! instruction's sequence (or nothing when the value is already as wide).
//!
//! Cost: O(1) per helper call.

use kestrel_ir::{IntCC, Type, Value};
use kestrel_regalloc::VReg;

use super::asm::add_sub::{AddSub, AddSubImm};
use super::asm::bitfield::{Bitfield, BitfieldOp};
use super::asm::cond::Cond as Cc;
use super::asm::logical_imm::LogicalImm;
use super::asm::operands::Extend;
use super::asm::{FpMemSize, FpSize, MemSize, Size};
use super::features::CpuFeatures;
use super::inst::{AluInst, CmpRhs, Inst};
pub(super) use crate::machinst::isel::width_mask;
use crate::machinst::isel::{by_precision, by_width};
pub use crate::machinst::isel::{Cmp, FCmp, Imm, MaybeTrap, Out, Pair};

/// Selection state for one IR instruction (the shared context with AArch64's instructions
/// and CPU features).
pub type IselCtx<'a, 'f> = crate::machinst::isel::IselCtx<'a, 'f, Inst, CpuFeatures>;

/// A merged `iconst` as an `add`/`sub #imm` operand.
#[derive(Clone, Copy, Debug)]
pub struct ArithImm {
    pub(super) value: Value,
    pub(super) op: AddSub,
    pub(super) imm: AddSubImm,
}

/// A merged `iconst` as a bitmask immediate.
#[derive(Clone, Copy, Debug)]
pub struct LogicImmV {
    pub(super) value: Value,
    pub(super) imm: LogicalImm,
}

/// A merged `iconst` compare operand: its sign-extended value and, once checked against a
/// compare ([`cmp_rhs_for`]), the operand it becomes.
#[derive(Clone, Copy, Debug)]
pub struct CmpImm {
    pub(super) value: Value,
    pub(super) imm: i64,
    pub(super) rhs: Option<CmpRhs>,
}

/// The operation size for a type whose upper bits may be garbage (8/16 use 32-bit forms).
pub(super) fn op_size(ty: Type) -> Size {
    by_width(ty, Size::S32, Size::S64)
}

pub(super) fn fp_size(ty: Type) -> FpSize {
    by_precision(ty, FpSize::F32, FpSize::F64)
}

pub(super) fn mem_size(ty: Type) -> MemSize {
    match ty.bits() {
        8 => MemSize::S8,
        16 => MemSize::S16,
        32 => MemSize::S32,
        _ => MemSize::S64,
    }
}

pub(super) fn fp_mem_size(ty: Type) -> FpMemSize {
    match fp_size(ty) {
        FpSize::F32 => FpMemSize::S32,
        FpSize::F64 => FpMemSize::S64,
    }
}

pub(super) fn int_cc(cc: IntCC) -> Cc {
    match cc {
        IntCC::Equal => Cc::Eq,
        IntCC::NotEqual => Cc::Ne,
        IntCC::SignedLessThan => Cc::Lt,
        IntCC::SignedGreaterThanOrEqual => Cc::Ge,
        IntCC::SignedGreaterThan => Cc::Gt,
        IntCC::SignedLessThanOrEqual => Cc::Le,
        IntCC::UnsignedLessThan => Cc::Lo,
        IntCC::UnsignedGreaterThanOrEqual => Cc::Hs,
        IntCC::UnsignedGreaterThan => Cc::Hi,
        IntCC::UnsignedLessThanOrEqual => Cc::Ls,
    }
}

pub(super) fn signed_cc(cc: IntCC) -> bool {
    matches!(
        cc,
        IntCC::SignedLessThan
            | IntCC::SignedGreaterThanOrEqual
            | IntCC::SignedGreaterThan
            | IntCC::SignedLessThanOrEqual
    )
}

/// `x + k` as `add #k` or `sub #-k`, if either immediate holds it. For types below 64 bits
/// `k` is sign-extended and the arithmetic wraps at the width, so either form is exact.
pub(super) fn arith_for(k: i64) -> Option<(AddSub, AddSubImm)> {
    if k >= 0 {
        AddSubImm::new(k as u64).map(|imm| (AddSub::Add, imm))
    } else {
        let neg = k.checked_neg()?;
        AddSubImm::new(neg as u64).map(|imm| (AddSub::Sub, imm))
    }
}

/// `k` (sign-extended from `ty`) as a bitmask immediate of `ty`'s operation size. Bits
/// above a narrow type's width may be anything, so each filling of them is tried.
pub(super) fn logic_for(ty: Type, k: i64) -> Option<LogicalImm> {
    let size = op_size(ty);
    if size == Size::S64 {
        return LogicalImm::new(k as u64, size);
    }
    let low = k as u64 & width_mask(ty);
    let above = 0xFFFF_FFFF & !width_mask(ty);
    [k as u64 & 0xFFFF_FFFF, low, low | above]
        .into_iter()
        .find_map(|v| LogicalImm::new(v, size))
}

/// The compare operand for the constant `k` (sign-extended from `ty`) against a value of
/// `ty` under `cc`: at a narrow type's 32-bit compare, the constant extended as the value
/// is (by the condition's signedness); `cmp #k` for a non-negative one, `cmn #-k` for a
/// negative one (equivalent, flags included, for every nonzero `k` at the compare's width).
pub(super) fn cmp_rhs_for(cc: IntCC, ty: Type, k: i64) -> Option<CmpRhs> {
    let v = if ty.bits() < 32 && !signed_cc(cc) {
        (k as u64 & width_mask(ty)) as i64
    } else {
        k
    };
    if v >= 0 {
        AddSubImm::new(v as u64).map(CmpRhs::Imm)
    } else {
        AddSubImm::new(v.checked_neg()? as u64).map(CmpRhs::NegImm)
    }
}

/// How a compare extends its second operand of narrow type `ty` under `cc`.
pub(super) fn cmp_extend(cc: IntCC, ty: Type) -> Extend {
    extend_of(signed_cc(cc), ty)
}

/// The extended-register operand that extends a value of type `ty` (8 to 32 bits).
pub(super) fn extend_of(signed: bool, ty: Type) -> Extend {
    match (signed, ty.bits()) {
        (true, 8) => Extend::Sxtb,
        (true, 16) => Extend::Sxth,
        (true, _) => Extend::Sxtw,
        (false, 8) => Extend::Uxtb,
        (false, 16) => Extend::Uxth,
        (false, _) => Extend::Uxtw,
    }
}

impl IselCtx<'_, '_> {
    /// `a` (an integer value) zero- or sign-extended from its type to `to`: a bitfield
    /// move, or `a` itself when its type is at least as wide. A zero extension to 64 bits
    /// from 8 or 16 is a 32-bit one (a `w` write clears the upper half).
    pub(super) fn ext(&mut self, signed: bool, a: Value, to: Size) -> VReg {
        let from = self.lower.value_type(a).bits();
        let src = self.lower.value_vreg(a);
        if from >= to.bits() {
            return src;
        }
        let (op, size) = match (signed, from) {
            (true, _) => (BitfieldOp::Sbfm, to),
            (false, 32) => (BitfieldOp::Ubfm, Size::S64),
            (false, _) => (BitfieldOp::Ubfm, Size::S32),
        };
        let field = Bitfield::extract(size, 0, from).expect("a field of the value's width");
        let dst = self.int();
        self.lower.emit(AluInst::Bitfield {
            op,
            field,
            dst,
            src,
        });
        dst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_immediates_take_either_sign() {
        assert_eq!(
            arith_for(4095).map(|(op, i)| (op, i.value())),
            Some((AddSub::Add, 4095))
        );
        assert_eq!(
            arith_for(-1).map(|(op, i)| (op, i.value())),
            Some((AddSub::Sub, 1))
        );
        assert_eq!(arith_for(0x1000).map(|(_, i)| i.value()), Some(0x1000));
        assert!(arith_for(4097).is_none());
        assert!(arith_for(i64::MIN).is_none());
    }

    #[test]
    fn narrow_bitmasks_may_fill_the_bits_above_the_width() {
        // 0xF0 as an i8 is -16: 0xFFFF_FFF0 at 32 bits is a bitmask, as is 0xF0.
        assert!(logic_for(Type::I8, -16).is_some());
        assert!(logic_for(Type::I32, 0x00FF_00FF).is_some());
        assert!(logic_for(Type::I32, 0x1234).is_none());
        assert!(logic_for(Type::I64, -1).is_none());
    }

    #[test]
    fn compare_constants_follow_the_extension() {
        // i8 250 is -6: unsigned compares see 250, signed ones -6 (`cmn #6`).
        let unsigned = cmp_rhs_for(IntCC::UnsignedLessThan, Type::I8, -6);
        assert!(matches!(unsigned, Some(CmpRhs::Imm(k)) if k.value() == 250));
        let signed = cmp_rhs_for(IntCC::SignedLessThan, Type::I8, -6);
        assert!(matches!(signed, Some(CmpRhs::NegImm(k)) if k.value() == 6));
        assert!(matches!(
            cmp_rhs_for(IntCC::Equal, Type::I64, 0),
            Some(CmpRhs::Imm(_))
        ));
        assert!(cmp_rhs_for(IntCC::Equal, Type::I64, i64::MIN).is_none());
    }
}
