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
    /// Any scalar or vector type.
    AnyOrVector,
    /// An integer scalar or a vector of integers.
    IntLanes,
    /// A float scalar or a vector of floats.
    FloatLanes,
    /// A vector of integers of `lo` to `hi` bits.
    IntVector(u32, u32),
    /// Any vector type.
    Vector,
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
            TypeSet::AnyOrVector => ty.is_int() || ty.is_float() || TypeSet::Vector.contains(ty),
            TypeSet::IntLanes => ty.is_int() || TypeSet::IntVector(8, 128).contains(ty),
            TypeSet::FloatLanes => ty.is_float() || (ty.is_vector() && ty.is_float_lane()),
            TypeSet::IntVector(lo, hi) => {
                ty.is_vector() && ty.is_int_lane() && (lo..=hi).contains(&ty.lane_bits())
            }
            TypeSet::Vector => ty.is_vector() && ty.bits() != 0 && ty.bits() <= 128,
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
            TypeSet::AnyOrVector => "an integer, float or vector type".into(),
            TypeSet::IntLanes => "an integer or integer vector type".into(),
            TypeSet::FloatLanes => "a float or float vector type".into(),
            TypeSet::IntVector(lo, hi) if lo == hi => format!("a vector of i{lo} lanes"),
            TypeSet::IntVector(lo, hi) => {
                format!("an integer vector type with i{lo} to i{hi} lanes")
            }
            TypeSet::Vector => "a vector type".into(),
            TypeSet::Int => "an integer type".into(),
            TypeSet::IntRange(lo, hi) if lo == hi => format!("i{lo}"),
            TypeSet::IntRange(lo, hi) => format!("an integer type from i{lo} to i{hi}"),
            TypeSet::Float => "a float type (f16, f32, f64, f128)".into(),
            TypeSet::Exactly(t) => t.to_string(),
            TypeSet::Nothing => "no type".into(),
        }
    }
}

/// The controlling types `op` admits.
pub fn ctrl_type_set(op: Opcode) -> TypeSet {
    use Opcode::*;
    match op {
        Jump | BrTable | Return | Trap | Debugtrap | Call | ReturnCall | TryCall | Nop | Fence
        | SequencePoint | F32const | F64const | F16const | F128const | Uload8x8 | Sload8x8
        | Uload16x4 | Sload16x4 | Uload32x2 | Sload32x2 => TypeSet::Nothing,
        Brif | Trapz | Trapnz => TypeSet::Int,
        CallIndirect | ReturnCallIndirect | TryCallIndirect | FuncAddr | StackAddr
        | GetFramePointer | GetStackPointer | GetReturnAddress | GetPinnedReg | SetPinnedReg => {
            TypeSet::IntRange(32, 64)
        }
        GlobalValue => TypeSet::Any,
        SymbolValue => TypeSet::Exactly(Type::I64),
        Iconst => TypeSet::IntRange(8, 64),
        Select | SelectSpectreGuard | Bitselect | Bitcast => TypeSet::AnyOrVector,
        Band | Bor | Bxor | Bnot | BandNot | BorNot | BxorNot => TypeSet::AnyOrVector,
        Icmp | Iadd | Isub | Ineg | Iabs | Imul | Umulhi | Smulhi | Smin | Umin | Smax | Umax
        | Rotl | Rotr | Ishl | Ushr | Sshr | Popcnt | Bmask | FcvtToUintSat | FcvtToSintSat => {
            TypeSet::IntLanes
        }
        Udiv | Sdiv | Urem | Srem | UaddOverflow | SaddOverflow | UsubOverflow | SsubOverflow
        | UaddOverflowCin | SaddOverflowCin | UsubOverflowBin | SsubOverflowBin | Bitrev | Clz
        | Cls | Ctz | Uextend | Sextend | Ireduce | FcvtToUint | FcvtToSint => TypeSet::Int,
        UmulOverflow | SmulOverflow => TypeSet::IntRange(8, 64),
        UaddOverflowTrap => TypeSet::IntRange(32, 64),
        Bswap => TypeSet::IntRange(16, 128),
        Iconcat => TypeSet::IntRange(8, 64),
        Isplit => TypeSet::IntRange(16, 128),
        Fcmp | Fadd | Fsub | Fmul | Fdiv | Sqrt | Fma | Fneg | Fabs | Fcopysign | Fmin | Fmax
        | Ceil | Floor | Trunc | Nearest | FcvtFromUint | FcvtFromSint => TypeSet::FloatLanes,
        Fpromote | Fdemote => TypeSet::Float,
        Load | Store | StackLoad | StackStore => TypeSet::AnyOrVector,
        Vconst | Splat | ScalarToVector | Extractlane | Insertlane | VanyTrue | VallTrue => {
            TypeSet::Vector
        }
        Shuffle | Swizzle => TypeSet::Exactly(Type::I8X16),
        VhighBits => TypeSet::Int,
        Snarrow | Unarrow | Uunarrow => TypeSet::IntVector(16, 64),
        SwidenLow | SwidenHigh | UwidenLow | UwidenHigh | IaddPairwise => TypeSet::IntVector(8, 32),
        FvpromoteLow => TypeSet::Exactly(Type::F32X4),
        Fvdemote => TypeSet::Exactly(Type::F64X2),
        UaddSat | SaddSat | UsubSat | SsubSat | AvgRound => TypeSet::IntVector(8, 64),
        SqmulRoundSat => TypeSet::IntVector(16, 32),
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
        | CallIndirect | ReturnCall | ReturnCallIndirect | TryCall | TryCallIndirect | Nop
        | Fence | SequencePoint | Store | Istore8 | Istore16 | Istore32 | StackStore
        | AtomicStore | SetPinnedReg => ResultTypes::none(),
        F32const => ResultTypes::one(Type::F32),
        F64const => ResultTypes::one(Type::F64),
        F16const => ResultTypes::one(Type::F16),
        F128const => ResultTypes::one(Type::F128),
        Icmp | Fcmp if ctrl.is_vector() => ResultTypes::one(ctrl.as_int()),
        Icmp | Fcmp | VanyTrue | VallTrue => ResultTypes::one(Type::I8),
        Extractlane => ResultTypes::one(ctrl.lane_type()),
        SwidenLow | SwidenHigh | UwidenLow | UwidenHigh => {
            ResultTypes::one(ctrl.merge_lanes().unwrap_or(Type::INVALID))
        }
        Snarrow | Unarrow | Uunarrow => {
            ResultTypes::one(ctrl.split_lanes().unwrap_or(Type::INVALID))
        }
        FvpromoteLow => ResultTypes::one(Type::F64X2),
        Fvdemote => ResultTypes::one(Type::F32X4),
        Uload8x8 | Sload8x8 => ResultTypes::one(Type::I16X8),
        Uload16x4 | Sload16x4 => ResultTypes::one(Type::I32X4),
        Uload32x2 | Sload32x2 => ResultTypes::one(Type::I64X2),
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
    fn every_polymorphic_opcode_admits_some_type() {
        let vectors = [
            Type::I8X16,
            Type::I16X8,
            Type::I32X4,
            Type::F32X4,
            Type::F64X2,
        ];
        for &op in Opcode::ALL {
            let set = ctrl_type_set(op);
            if set != TypeSet::Nothing {
                assert!(
                    Type::SCALARS
                        .iter()
                        .chain(&vectors)
                        .any(|&t| set.contains(t)),
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
        assert_eq!(
            result_types(Opcode::Icmp, Type::F32X4).as_slice(),
            &[Type::I32X4]
        );
        assert_eq!(
            result_types(Opcode::SwidenLow, Type::I8X16).as_slice(),
            &[Type::I16X8]
        );
        assert_eq!(
            result_types(Opcode::Snarrow, Type::I32X4).as_slice(),
            &[Type::I16X8]
        );
        assert_eq!(
            result_types(Opcode::Extractlane, Type::F64X2).as_slice(),
            &[Type::F64]
        );
        assert!(ctrl_type_set(Opcode::Iadd).contains(Type::I64X2));
        assert!(!ctrl_type_set(Opcode::Udiv).contains(Type::I64X2));
        assert!(!ctrl_type_set(Opcode::Fadd).contains(Type::I32X4));
    }
}
