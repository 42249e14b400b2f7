//! Opcodes and their static properties.
//!
//! One row per opcode: its CLIF name, its instruction format (the shape of its operands, see
//! [`InstructionFormat`]), where its controlling type comes from, and its effect flags. The
//! set is Cranelift's (wasmtime `release-48.0.0`) for scalar and fixed-width vector types
//! (not dynamic vectors; `get_exception_handler_address` neither), plus the older
//! `stack_load`, `stack_store`, `global_value` and `band_not`/`bor_not`/`bxor_not`, which
//! existing `.clif` files still use.

use std::fmt;

/// The operand shape of an instruction; one variant of `InstructionData` each.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum InstructionFormat {
    Unary,
    UnaryImm,
    UnaryIeee16,
    UnaryIeee32,
    UnaryIeee64,
    UnaryGlobalValue,
    /// A constant-pool handle (`vconst`, `f128const`).
    UnaryConst,
    Binary,
    /// One value and a lane index (`extractlane`).
    BinaryImm8,
    Ternary,
    /// Two values and a lane index (`insertlane`).
    TernaryImm8,
    /// Two vectors and a lane mask (`shuffle`).
    Shuffle,
    MultiAry,
    NullAry,
    IntCompare,
    FloatCompare,
    Jump,
    Brif,
    BranchTable,
    Call,
    CallIndirect,
    /// `try_call`: a call whose outcomes are branches (see `ExceptionTableData`).
    TryCall,
    /// `try_call_indirect`: `args[0]` is the callee address.
    TryCallIndirect,
    FuncAddr,
    Load,
    Store,
    LoadNoOffset,
    StoreNoOffset,
    AtomicRmw,
    AtomicCas,
    StackLoad,
    StackStore,
    Trap,
    CondTrap,
    IntAddTrap,
}

/// Where an instruction's controlling type variable comes from.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Ctrl {
    /// The opcode is not polymorphic (`jump`, `call`, `f32const`, …).
    None,
    /// The type of value operand `n`; a type suffix in text is allowed but not needed.
    Operand(u8),
    /// Like `Operand`, but the printer always writes the suffix (Cranelift prints one for
    /// atomics, so text we print stays readable by Cranelift).
    OperandPrinted(u8),
    /// Only the type suffix (`iconst.i32`, `load.i64`, `uextend.i64`) gives it.
    Suffix,
}

macro_rules! bitflags_lite {
    ($(#[$doc:meta])* $name:ident { $($flag:ident = $val:expr),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
        pub struct $name(u16);
        impl $name {
            $(pub const $flag: $name = $name($val);)*
            pub const NONE: $name = $name(0);
            #[inline]
            pub const fn union(self, other: $name) -> $name { $name(self.0 | other.0) }
            #[inline]
            pub const fn contains(self, other: $name) -> bool { self.0 & other.0 == other.0 }
            /// Whether any flag of `other` is set.
            #[inline]
            pub const fn intersects(self, other: $name) -> bool { self.0 & other.0 != 0 }
        }
    };
}

bitflags_lite! {
    /// Effects and control-flow roles of an opcode.
    OpFlags {
        TERMINATOR = 1 << 0,
        BRANCH = 1 << 1,
        CALL = 1 << 2,
        RETURN = 1 << 3,
        CAN_TRAP = 1 << 4,
        LOADS = 1 << 5,
        STORES = 1 << 6,
        SIDE_EFFECTS = 1 << 7,
    }
}

macro_rules! opcodes {
    ($($variant:ident $name:literal $format:ident $ctrl:expr, [$($flag:ident)|*];)*) => {
        /// An instruction's operation.
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode { $($variant),* }

        impl Opcode {
            /// Every opcode, in declaration order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant),*];

            /// The CLIF name.
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$variant => $name),* }
            }

            /// Look an opcode up by its CLIF name.
            pub fn from_name(s: &str) -> Option<Opcode> {
                match s { $($name => Some(Opcode::$variant),)* _ => None }
            }

            // `format`, `ctrl` and `flags` read tables indexed by the opcode, always
            // inlined: asked for every instruction by every pass, a call each (which the
            // `match` form compiles to) showed in the compile time.
            #[inline(always)]
            pub fn format(self) -> InstructionFormat {
                const FORMATS: &[InstructionFormat] = &[$(InstructionFormat::$format),*];
                FORMATS[self as usize]
            }

            #[inline(always)]
            pub fn ctrl(self) -> Ctrl {
                const CTRLS: &[Ctrl] = &[$($ctrl),*];
                CTRLS[self as usize]
            }

            #[inline(always)]
            pub fn flags(self) -> OpFlags {
                const FLAGS: &[OpFlags] = &[$(OpFlags::NONE$(.union(OpFlags::$flag))*),*];
                FLAGS[self as usize]
            }
        }
    };
}

use Ctrl::{Operand as Op, OperandPrinted as OpP, Suffix as Sfx};
const NO: Ctrl = Ctrl::None;

opcodes! {
    // Control flow.
    Jump "jump" Jump NO, [TERMINATOR | BRANCH];
    Brif "brif" Brif Op(0), [TERMINATOR | BRANCH];
    BrTable "br_table" BranchTable NO, [TERMINATOR | BRANCH];
    Return "return" MultiAry NO, [TERMINATOR | RETURN];
    Trap "trap" Trap NO, [TERMINATOR | CAN_TRAP | SIDE_EFFECTS];
    Trapz "trapz" CondTrap Op(0), [CAN_TRAP | SIDE_EFFECTS];
    Trapnz "trapnz" CondTrap Op(0), [CAN_TRAP | SIDE_EFFECTS];
    Debugtrap "debugtrap" NullAry NO, [SIDE_EFFECTS];
    Call "call" Call NO, [CALL | CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    CallIndirect "call_indirect" CallIndirect Op(0), [CALL | CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    ReturnCall "return_call" Call NO, [TERMINATOR | RETURN | CALL | CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    ReturnCallIndirect "return_call_indirect" CallIndirect Op(0), [TERMINATOR | RETURN | CALL | CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    TryCall "try_call" TryCall NO, [TERMINATOR | BRANCH | CALL | CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    TryCallIndirect "try_call_indirect" TryCallIndirect Op(0), [TERMINATOR | BRANCH | CALL | CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    FuncAddr "func_addr" FuncAddr Sfx, [];

    // Constants.
    Iconst "iconst" UnaryImm Sfx, [];
    F32const "f32const" UnaryIeee32 NO, [];
    F64const "f64const" UnaryIeee64 NO, [];
    F16const "f16const" UnaryIeee16 NO, [];
    F128const "f128const" UnaryConst NO, [];
    Vconst "vconst" UnaryConst Sfx, [];
    Nop "nop" NullAry NO, [];

    // Selection.
    Select "select" Ternary Op(1), [];
    SelectSpectreGuard "select_spectre_guard" Ternary Op(1), [];
    Bitselect "bitselect" Ternary Op(1), [];

    // Integer arithmetic.
    Icmp "icmp" IntCompare Op(0), [];
    Iadd "iadd" Binary Op(0), [];
    Isub "isub" Binary Op(0), [];
    Ineg "ineg" Unary Op(0), [];
    Iabs "iabs" Unary Op(0), [];
    Imul "imul" Binary Op(0), [];
    Umulhi "umulhi" Binary Op(0), [];
    Smulhi "smulhi" Binary Op(0), [];
    Udiv "udiv" Binary Op(0), [CAN_TRAP];
    Sdiv "sdiv" Binary Op(0), [CAN_TRAP];
    Urem "urem" Binary Op(0), [CAN_TRAP];
    Srem "srem" Binary Op(0), [CAN_TRAP];
    Smin "smin" Binary Op(0), [];
    Umin "umin" Binary Op(0), [];
    Smax "smax" Binary Op(0), [];
    Umax "umax" Binary Op(0), [];

    // Arithmetic with carry and overflow flags.
    UaddOverflow "uadd_overflow" Binary Op(0), [];
    SaddOverflow "sadd_overflow" Binary Op(0), [];
    UsubOverflow "usub_overflow" Binary Op(0), [];
    SsubOverflow "ssub_overflow" Binary Op(0), [];
    UmulOverflow "umul_overflow" Binary Op(0), [];
    SmulOverflow "smul_overflow" Binary Op(0), [];
    UaddOverflowCin "uadd_overflow_cin" Ternary Op(1), [];
    SaddOverflowCin "sadd_overflow_cin" Ternary Op(1), [];
    UsubOverflowBin "usub_overflow_bin" Ternary Op(1), [];
    SsubOverflowBin "ssub_overflow_bin" Ternary Op(1), [];
    UaddOverflowTrap "uadd_overflow_trap" IntAddTrap Op(0), [CAN_TRAP | SIDE_EFFECTS];

    // Bitwise.
    Band "band" Binary Op(0), [];
    Bor "bor" Binary Op(0), [];
    Bxor "bxor" Binary Op(0), [];
    Bnot "bnot" Unary Op(0), [];
    BandNot "band_not" Binary Op(0), [];
    BorNot "bor_not" Binary Op(0), [];
    BxorNot "bxor_not" Binary Op(0), [];
    Rotl "rotl" Binary Op(0), [];
    Rotr "rotr" Binary Op(0), [];
    Ishl "ishl" Binary Op(0), [];
    Ushr "ushr" Binary Op(0), [];
    Sshr "sshr" Binary Op(0), [];
    Bitrev "bitrev" Unary Op(0), [];
    Clz "clz" Unary Op(0), [];
    Cls "cls" Unary Op(0), [];
    Ctz "ctz" Unary Op(0), [];
    Bswap "bswap" Unary Op(0), [];
    Popcnt "popcnt" Unary Op(0), [];
    Bmask "bmask" Unary Sfx, [];

    // Width changes.
    Uextend "uextend" Unary Sfx, [];
    Sextend "sextend" Unary Sfx, [];
    Ireduce "ireduce" Unary Sfx, [];
    Iconcat "iconcat" Binary Op(0), [];
    Isplit "isplit" Unary Op(0), [];

    // Floating point.
    Fcmp "fcmp" FloatCompare Op(0), [];
    Fadd "fadd" Binary Op(0), [];
    Fsub "fsub" Binary Op(0), [];
    Fmul "fmul" Binary Op(0), [];
    Fdiv "fdiv" Binary Op(0), [];
    Sqrt "sqrt" Unary Op(0), [];
    Fma "fma" Ternary Op(1), [];
    Fneg "fneg" Unary Op(0), [];
    Fabs "fabs" Unary Op(0), [];
    Fcopysign "fcopysign" Binary Op(0), [];
    Fmin "fmin" Binary Op(0), [];
    Fmax "fmax" Binary Op(0), [];
    Ceil "ceil" Unary Op(0), [];
    Floor "floor" Unary Op(0), [];
    Trunc "trunc" Unary Op(0), [];
    Nearest "nearest" Unary Op(0), [];
    Fpromote "fpromote" Unary Sfx, [];
    Fdemote "fdemote" Unary Sfx, [];
    FcvtToUint "fcvt_to_uint" Unary Sfx, [CAN_TRAP];
    FcvtToSint "fcvt_to_sint" Unary Sfx, [CAN_TRAP];
    FcvtToUintSat "fcvt_to_uint_sat" Unary Sfx, [];
    FcvtToSintSat "fcvt_to_sint_sat" Unary Sfx, [];
    FcvtFromUint "fcvt_from_uint" Unary Sfx, [];
    FcvtFromSint "fcvt_from_sint" Unary Sfx, [];
    Bitcast "bitcast" LoadNoOffset Sfx, [];

    // Memory.
    Load "load" Load Sfx, [CAN_TRAP | LOADS];
    Store "store" Store Op(0), [CAN_TRAP | STORES];
    Uload8 "uload8" Load Sfx, [CAN_TRAP | LOADS];
    Sload8 "sload8" Load Sfx, [CAN_TRAP | LOADS];
    Istore8 "istore8" Store Op(0), [CAN_TRAP | STORES];
    Uload16 "uload16" Load Sfx, [CAN_TRAP | LOADS];
    Sload16 "sload16" Load Sfx, [CAN_TRAP | LOADS];
    Istore16 "istore16" Store Op(0), [CAN_TRAP | STORES];
    Uload32 "uload32" Load Sfx, [CAN_TRAP | LOADS];
    Sload32 "sload32" Load Sfx, [CAN_TRAP | LOADS];
    Istore32 "istore32" Store Op(0), [CAN_TRAP | STORES];
    StackLoad "stack_load" StackLoad Sfx, [LOADS];
    StackStore "stack_store" StackStore Op(0), [STORES];
    StackAddr "stack_addr" StackLoad Sfx, [];
    GlobalValue "global_value" UnaryGlobalValue Sfx, [LOADS];
    SymbolValue "symbol_value" UnaryGlobalValue Sfx, [];
    GetFramePointer "get_frame_pointer" NullAry Sfx, [];
    GetStackPointer "get_stack_pointer" NullAry Sfx, [];
    GetReturnAddress "get_return_address" NullAry Sfx, [];
    // The pinned register (`enable_pinned_reg`): a global of the program that no function
    // allocates, saves or restores. Effects keep each read in order with writes and calls.
    GetPinnedReg "get_pinned_reg" NullAry Sfx, [SIDE_EFFECTS];
    SetPinnedReg "set_pinned_reg" Unary Op(0), [SIDE_EFFECTS];

    // Vector lanes and shapes.
    Splat "splat" Unary Sfx, [];
    ScalarToVector "scalar_to_vector" Unary Sfx, [];
    Extractlane "extractlane" BinaryImm8 Op(0), [];
    Insertlane "insertlane" TernaryImm8 Op(0), [];
    Shuffle "shuffle" Shuffle Op(0), [];
    Swizzle "swizzle" Binary Op(0), [];
    VanyTrue "vany_true" Unary Op(0), [];
    VallTrue "vall_true" Unary Op(0), [];
    VhighBits "vhigh_bits" Unary Sfx, [];
    Snarrow "snarrow" Binary Op(0), [];
    Unarrow "unarrow" Binary Op(0), [];
    Uunarrow "uunarrow" Binary Op(0), [];
    SwidenLow "swiden_low" Unary Op(0), [];
    SwidenHigh "swiden_high" Unary Op(0), [];
    UwidenLow "uwiden_low" Unary Op(0), [];
    UwidenHigh "uwiden_high" Unary Op(0), [];
    IaddPairwise "iadd_pairwise" Binary Op(0), [];
    FvpromoteLow "fvpromote_low" Unary Op(0), [];
    Fvdemote "fvdemote" Unary Op(0), [];

    // Vector lane arithmetic.
    UaddSat "uadd_sat" Binary Op(0), [];
    SaddSat "sadd_sat" Binary Op(0), [];
    UsubSat "usub_sat" Binary Op(0), [];
    SsubSat "ssub_sat" Binary Op(0), [];
    AvgRound "avg_round" Binary Op(0), [];
    SqmulRoundSat "sqmul_round_sat" Binary Op(0), [];

    // Vector memory: 64 bits loaded and each lane extended to twice its width.
    Uload8x8 "uload8x8" Load NO, [CAN_TRAP | LOADS];
    Sload8x8 "sload8x8" Load NO, [CAN_TRAP | LOADS];
    Uload16x4 "uload16x4" Load NO, [CAN_TRAP | LOADS];
    Sload16x4 "sload16x4" Load NO, [CAN_TRAP | LOADS];
    Uload32x2 "uload32x2" Load NO, [CAN_TRAP | LOADS];
    Sload32x2 "sload32x2" Load NO, [CAN_TRAP | LOADS];

    // Atomics.
    AtomicRmw "atomic_rmw" AtomicRmw OpP(1), [CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    AtomicCas "atomic_cas" AtomicCas OpP(1), [CAN_TRAP | LOADS | STORES | SIDE_EFFECTS];
    AtomicLoad "atomic_load" LoadNoOffset Sfx, [CAN_TRAP | LOADS | SIDE_EFFECTS];
    AtomicStore "atomic_store" StoreNoOffset OpP(0), [CAN_TRAP | STORES | SIDE_EFFECTS];
    Fence "fence" NullAry NO, [LOADS | STORES | SIDE_EFFECTS];
    SequencePoint "sequence_point" NullAry NO, [SIDE_EFFECTS];
}

impl Opcode {
    #[inline]
    pub fn is_terminator(self) -> bool {
        self.flags().contains(OpFlags::TERMINATOR)
    }
    #[inline]
    pub fn is_branch(self) -> bool {
        self.flags().contains(OpFlags::BRANCH)
    }
    #[inline]
    pub fn is_call(self) -> bool {
        self.flags().contains(OpFlags::CALL)
    }
    #[inline]
    pub fn is_return(self) -> bool {
        self.flags().contains(OpFlags::RETURN)
    }
    /// A tail call (`return_call`, `return_call_indirect`): a call that ends the function,
    /// has no results of its own and returns the callee's results to the caller.
    #[inline]
    pub fn is_return_call(self) -> bool {
        self.flags().contains(OpFlags::RETURN.union(OpFlags::CALL))
    }
    /// `try_call` or `try_call_indirect`: a call that ends its block and branches to the
    /// normal successor or to a handler.
    #[inline]
    pub fn is_try_call(self) -> bool {
        self.flags().contains(OpFlags::BRANCH.union(OpFlags::CALL))
    }
    #[inline]
    pub fn can_trap(self) -> bool {
        self.flags().contains(OpFlags::CAN_TRAP)
    }
    #[inline]
    pub fn can_load(self) -> bool {
        self.flags().contains(OpFlags::LOADS)
    }
    #[inline]
    pub fn can_store(self) -> bool {
        self.flags().contains(OpFlags::STORES)
    }
    /// True when the instruction must be kept even if its results are unused.
    #[inline]
    pub fn has_side_effects(self) -> bool {
        let f = self.flags();
        f.contains(OpFlags::SIDE_EFFECTS)
            || f.contains(OpFlags::STORES)
            || f.contains(OpFlags::TERMINATOR)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &op in Opcode::ALL {
            assert!(seen.insert(op.name()), "duplicate {}", op.name());
            assert_eq!(Opcode::from_name(op.name()), Some(op));
        }
        assert_eq!(Opcode::from_name("iadd_imm"), None);
    }

    #[test]
    fn flags() {
        assert!(Opcode::Brif.is_terminator() && Opcode::Brif.is_branch());
        assert!(Opcode::Return.is_terminator() && !Opcode::Return.is_branch());
        assert!(Opcode::Store.has_side_effects() && !Opcode::Iadd.has_side_effects());
        assert!(Opcode::Udiv.can_trap() && !Opcode::Udiv.has_side_effects());
    }
}
