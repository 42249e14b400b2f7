//! Typing rules: which controlling types an opcode admits and what result types it produces.
//!
//! The controlling type is the type an instruction is polymorphic over (`iadd.i32`'s `i32`);
//! see [`crate::opcode::Ctrl`] for where it comes from. Calls are not here: their results come
//! from their signature.

use crate::opcode::Opcode;
use crate::types::Type;

/// A set of admissible types, as a predicate with a name for error messages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeSet {
    /// Any scalar integer or float.
    Any,
    /// `i8` … `i128`.
    Int,
    /// Integers from `lo` to `hi` bits.
    IntRange(u32, u32),
    /// `f32`, `f64`.
    Float,
    /// Exactly this type.
    Exactly(Type),
    /// No controlling type at all.
    Nothing,
}

impl TypeSet {
    #[inline]
    pub fn contains(self, ty: Type) -> bool {
        match self {
            TypeSet::Any => ty.is_int() || ty.is_float(),
            TypeSet::Int => ty.is_int(),
            TypeSet::IntRange(lo, hi) => ty.is_int() && (lo..=hi).contains(&ty.bits()),
            TypeSet::Float => ty.is_float(),
            TypeSet::Exactly(t) => ty == t,
            TypeSet::Nothing => ty.is_invalid(),
        }
    }

    /// The one type of a singleton set (`uload32`'s `i64`), which text may then leave out.
    pub fn only(self) -> Option<Type> {
        match self {
            TypeSet::Exactly(t) => Some(t),
            TypeSet::IntRange(lo, hi) if lo == hi => Type::int_with_bits(lo),
            _ => None,
        }
    }

    /// A phrase for messages: "an integer type", "i32 or i64", …
    pub fn describe(self) -> String {
        match self {
            TypeSet::Any => "an integer or float type".into(),
            TypeSet::Int => "an integer type".into(),
            TypeSet::IntRange(lo, hi) if lo == hi => format!("i{lo}"),
            TypeSet::IntRange(lo, hi) => format!("an integer type from i{lo} to i{hi}"),
            TypeSet::Float => "f32 or f64".into(),
            TypeSet::Exactly(t) => t.to_string(),
            TypeSet::Nothing => "no type".into(),
        }
    }
}

/// The controlling types `op` admits.
pub fn ctrl_type_set(op: Opcode) -> TypeSet {
    use Opcode::*;
    match op {
        Jump | BrTable | Return | Trap | Debugtrap | Call | Nop | Fence | SequencePoint
        | F32const | F64const => TypeSet::Nothing,
        Brif | Trapz | Trapnz => TypeSet::Int,
        CallIndirect | FuncAddr | StackAddr | GetFramePointer | GetStackPointer
        | GetReturnAddress => TypeSet::IntRange(32, 64),
        GlobalValue => TypeSet::Any,
        SymbolValue => TypeSet::Exactly(Type::I64),
        Iconst => TypeSet::IntRange(8, 64),
        Select | SelectSpectreGuard | Bitselect | Bitcast => TypeSet::Any,
        Band | Bor | Bxor | Bnot | BandNot | BorNot | BxorNot => TypeSet::Any,
        Icmp | Iadd | Isub | Ineg | Iabs | Imul | Umulhi | Smulhi | Udiv | Sdiv | Urem | Srem
        | Smin | Umin | Smax | Umax | UaddOverflow | SaddOverflow | UsubOverflow | SsubOverflow
        | UaddOverflowCin | SaddOverflowCin | UsubOverflowBin | SsubOverflowBin | Rotl | Rotr
        | Ishl | Ushr | Sshr | Bitrev | Clz | Cls | Ctz | Popcnt | Bmask | Uextend | Sextend
        | Ireduce | FcvtToUint | FcvtToSint | FcvtToUintSat | FcvtToSintSat => TypeSet::Int,
        UmulOverflow | SmulOverflow => TypeSet::IntRange(8, 64),
        UaddOverflowTrap => TypeSet::IntRange(32, 64),
        Bswap => TypeSet::IntRange(16, 128),
        Iconcat => TypeSet::IntRange(8, 64),
        Isplit => TypeSet::IntRange(16, 128),
        Fcmp | Fadd | Fsub | Fmul | Fdiv | Sqrt | Fma | Fneg | Fabs | Fcopysign | Fmin | Fmax
        | Ceil | Floor | Trunc | Nearest | FcvtFromUint | FcvtFromSint => TypeSet::Float,
        Fpromote => TypeSet::Exactly(Type::F64),
        Fdemote => TypeSet::Exactly(Type::F32),
        Load | Store | StackLoad | StackStore => TypeSet::Any,
        Uload8 | Sload8 | Istore8 => TypeSet::IntRange(16, 64),
        Uload16 | Sload16 | Istore16 => TypeSet::IntRange(32, 64),
        Uload32 | Sload32 | Istore32 => TypeSet::IntRange(64, 64),
        AtomicRmw | AtomicCas | AtomicLoad | AtomicStore => TypeSet::Int,
    }
}

/// Result types of a non-call instruction with controlling type `ctrl` (already checked
/// against [`ctrl_type_set`]). At most two results.
#[inline]
pub fn result_types(op: Opcode, ctrl: Type) -> ResultTypes {
    use Opcode::*;
    match op {
        Jump | Brif | BrTable | Return | Trap | Trapz | Trapnz | Debugtrap | Call
        | CallIndirect | Nop | Fence | SequencePoint | Store | Istore8 | Istore16 | Istore32
        | StackStore | AtomicStore => ResultTypes::none(),
        F32const => ResultTypes::one(Type::F32),
        F64const => ResultTypes::one(Type::F64),
        Icmp | Fcmp => ResultTypes::one(Type::I8),
        UaddOverflow | SaddOverflow | UsubOverflow | SsubOverflow | UmulOverflow | SmulOverflow
        | UaddOverflowCin | SaddOverflowCin | UsubOverflowBin | SsubOverflowBin => {
            ResultTypes::two(ctrl, Type::I8)
        }
        Iconcat => ResultTypes::one(ctrl.double_width().unwrap_or(Type::INVALID)),
        Isplit => {
            let half = ctrl.half_width().unwrap_or(Type::INVALID);
            ResultTypes::two(half, half)
        }
        _ => ResultTypes::one(ctrl),
    }
}

/// Up to two result types, without allocating.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ResultTypes {
    types: [Type; 2],
    len: u8,
}

impl ResultTypes {
    #[inline]
    pub fn none() -> Self {
        ResultTypes {
            types: [Type::INVALID; 2],
            len: 0,
        }
    }
    #[inline]
    pub fn one(a: Type) -> Self {
        ResultTypes {
            types: [a, Type::INVALID],
            len: 1,
        }
    }
    #[inline]
    pub fn two(a: Type, b: Type) -> Self {
        ResultTypes {
            types: [a, b],
            len: 2,
        }
    }
    #[inline]
    pub fn as_slice(&self) -> &[Type] {
        &self.types[..self.len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_polymorphic_opcode_admits_some_scalar() {
        for &op in Opcode::ALL {
            let set = ctrl_type_set(op);
            if set != TypeSet::Nothing {
                assert!(
                    Type::SCALARS.iter().any(|&t| set.contains(t)),
                    "{op} admits nothing"
                );
            }
        }
    }

    #[test]
    fn results() {
        assert_eq!(
            result_types(Opcode::Icmp, Type::I64).as_slice(),
            &[Type::I8]
        );
        assert_eq!(
            result_types(Opcode::Isplit, Type::I128).as_slice(),
            &[Type::I64, Type::I64]
        );
        assert_eq!(
            result_types(Opcode::Iconcat, Type::I64).as_slice(),
            &[Type::I128]
        );
        assert!(result_types(Opcode::Store, Type::I32).as_slice().is_empty());
        assert!(!ctrl_type_set(Opcode::Iconst).contains(Type::I128));
        assert!(ctrl_type_set(Opcode::Band).contains(Type::F64));
    }
}
