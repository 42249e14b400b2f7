//! What may be emitted: the `allow` filter folded into per-opcode type masks once per case,
//! the types the generator can make values of, and the weighted table of straight-line
//! opcodes.

use kestrel_ir::typing::{ctrl_type_set, TypeSet};
use kestrel_ir::{Opcode, Type};

use crate::GenConfig;

/// Index of a scalar type in [`Type::SCALARS`].
pub(crate) fn ti(t: Type) -> usize {
    match t {
        Type::I8 => 0,
        Type::I16 => 1,
        Type::I32 => 2,
        Type::I64 => 3,
        Type::I128 => 4,
        Type::F32 => 5,
        _ => 6,
    }
}

/// Bit of `Type::INVALID` (non-polymorphic opcodes) in a type mask.
const NO_TYPE: u8 = 1 << 7;

/// Straight-line opcodes with their relative weights (the rest is emitted by shapes, memory
/// and call code).
const STRAIGHT: &[(Opcode, u32)] = {
    use Opcode::*;
    &[
        (Iadd, 6),
        (Isub, 4),
        (Imul, 4),
        (Band, 3),
        (Bor, 3),
        (Bxor, 3),
        (Icmp, 5),
        (Iconst, 3),
        (F32const, 1),
        (F64const, 1),
        (Nop, 1),
        (Select, 4),
        (SelectSpectreGuard, 2),
        (Bitselect, 2),
        (Ineg, 2),
        (Iabs, 2),
        (Umulhi, 2),
        (Smulhi, 2),
        (Udiv, 3),
        (Sdiv, 3),
        (Urem, 3),
        (Srem, 3),
        (Smin, 2),
        (Umin, 2),
        (Smax, 2),
        (Umax, 2),
        (UaddOverflow, 2),
        (SaddOverflow, 2),
        (UsubOverflow, 2),
        (SsubOverflow, 2),
        (UmulOverflow, 2),
        (SmulOverflow, 2),
        (UaddOverflowCin, 2),
        (SaddOverflowCin, 2),
        (UsubOverflowBin, 2),
        (SsubOverflowBin, 2),
        (UaddOverflowTrap, 2),
        (Bnot, 2),
        (BandNot, 2),
        (BorNot, 2),
        (BxorNot, 2),
        (Rotl, 2),
        (Rotr, 2),
        (Ishl, 3),
        (Ushr, 3),
        (Sshr, 3),
        (Bitrev, 2),
        (Clz, 2),
        (Cls, 2),
        (Ctz, 2),
        (Bswap, 2),
        (Popcnt, 2),
        (Bmask, 2),
        (Uextend, 3),
        (Sextend, 3),
        (Ireduce, 3),
        (Iconcat, 2),
        (Isplit, 2),
        (Fcmp, 3),
        (Fadd, 3),
        (Fsub, 3),
        (Fmul, 3),
        (Fdiv, 3),
        (Sqrt, 2),
        (Fma, 2),
        (Fneg, 2),
        (Fabs, 2),
        (Fcopysign, 2),
        (Fmin, 2),
        (Fmax, 2),
        (Ceil, 1),
        (Floor, 1),
        (Trunc, 1),
        (Nearest, 1),
        (Fpromote, 2),
        (Fdemote, 2),
        (FcvtToUint, 2),
        (FcvtToSint, 2),
        (FcvtToUintSat, 2),
        (FcvtToSintSat, 2),
        (FcvtFromUint, 2),
        (FcvtFromSint, 2),
        (Bitcast, 3),
        (Trapz, 1),
        (Trapnz, 1),
        (GetFramePointer, 1),
        (GetStackPointer, 1),
        (GetReturnAddress, 1),
        (Fence, 1),
        (SequencePoint, 1),
    ]
};

/// The filter and type availability for one case.
pub(crate) struct Ctx {
    /// Per opcode (`Opcode` is a `u8`): bit `ti(t)` set when `t` is admitted and allowed;
    /// [`NO_TYPE`] for an allowed non-polymorphic opcode. The interpreter-only opcodes (whose
    /// types are vectors, `f16` or `f128`, which no backend lowers) stay 0.
    masks: [u8; 256],
    /// Types the generator can make values of (constants are allowed for them).
    pub usable: u8,
    /// Straight-line opcodes with at least one usable type, with cumulative weights.
    straight: Vec<(Opcode, u32)>,
    total_weight: u32,
}

impl Ctx {
    pub fn new(cfg: &GenConfig) -> arbitrary::Result<Ctx> {
        let mut masks = [0u8; 256];
        for &op in Opcode::ALL {
            if matches!(op, Opcode::Debugtrap | Opcode::GlobalValue)
                || interpreter_only(op)
                || needs_setting(op)
            {
                continue;
            }
            let allow = |t: Type| cfg.allow.is_none_or(|f| f(op, t));
            let set = ctrl_type_set(op);
            let mut m = 0u8;
            if set == TypeSet::Nothing {
                if allow(Type::INVALID) {
                    m = NO_TYPE;
                }
            } else {
                for t in Type::SCALARS {
                    // Among the backends' types, `fpromote` makes only f64 and `fdemote`
                    // only f32 (their f16 and f128 forms are interpreter-only).
                    let narrowest = (op == Opcode::Fpromote && t == Type::F32)
                        || (op == Opcode::Fdemote && t == Type::F64);
                    if set.contains(t) && allow(t) && !narrowest {
                        m |= 1 << ti(t);
                    }
                }
            }
            masks[op as usize] = m;
        }
        let mut ctx = Ctx {
            masks,
            usable: 0,
            straight: Vec::new(),
            total_weight: 0,
        };
        if !ctx.ok(Opcode::Jump, Type::INVALID)
            || !ctx.ok(Opcode::Return, Type::INVALID)
            || !ctx.ok(Opcode::Iconst, Type::I32)
        {
            return Err(arbitrary::Error::IncorrectFormat);
        }
        let mut usable = 0u8;
        for t in [Type::I8, Type::I16, Type::I32, Type::I64] {
            if ctx.ok(Opcode::Iconst, t) {
                usable |= 1 << ti(t);
            }
        }
        let i64_ok = usable & (1 << ti(Type::I64)) != 0;
        // `iconcat.i64` is typed by its operands, so a filter refusing i128 would still let
        // it through; `iadd.i128` stands for "the oracle handles i128 values".
        if i64_ok
            && ctx.ok(Opcode::Iadd, Type::I128)
            && (ctx.ok(Opcode::Iconcat, Type::I64)
                || ctx.ok(Opcode::Uextend, Type::I128)
                || ctx.ok(Opcode::Sextend, Type::I128))
        {
            usable |= 1 << ti(Type::I128);
        }
        if ctx.ok(Opcode::F32const, Type::INVALID) {
            usable |= 1 << ti(Type::F32);
        }
        if ctx.ok(Opcode::F64const, Type::INVALID) {
            usable |= 1 << ti(Type::F64);
        }
        ctx.usable = usable;
        let mut total = 0;
        for &(op, w) in STRAIGHT {
            let m = ctx.masks[op as usize];
            if m & (usable | NO_TYPE) != 0 {
                total += w;
                ctx.straight.push((op, total));
            }
        }
        ctx.total_weight = total;
        Ok(ctx)
    }

    /// May `op` be emitted with controlling type `ty` (`Type::INVALID` for none)?
    pub fn ok(&self, op: Opcode, ty: Type) -> bool {
        let bit = if ty == Type::INVALID {
            NO_TYPE
        } else {
            1 << ti(ty)
        };
        self.masks[op as usize] & bit != 0
    }

    /// The usable types `op` may be emitted with, as a mask.
    pub fn types(&self, op: Opcode) -> u8 {
        self.masks[op as usize] & self.usable
    }

    pub fn is_usable(&self, ty: Type) -> bool {
        self.usable & (1 << ti(ty)) != 0
    }

    /// The straight-line opcode whose cumulative weight covers `x` (`x < total_weight`).
    pub fn straight_op(&self, x: u32) -> Option<Opcode> {
        let i = self.straight.partition_point(|&(_, cum)| cum <= x);
        self.straight.get(i).map(|&(op, _)| op)
    }

    pub fn straight_weight(&self) -> u32 {
        self.total_weight
    }
}

/// Opcodes that compile only under a setting the generated cases leave off
/// (`enable_pinned_reg`), and whose value before the first write differs between the
/// interpreter and the machine: the generator never emits them.
pub fn needs_setting(op: Opcode) -> bool {
    matches!(op, Opcode::GetPinnedReg | Opcode::SetPinnedReg)
}

/// Opcodes whose only types are vectors, `f16` or `f128`, which no backend lowers yet: the
/// generator never emits them.
pub fn interpreter_only(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        F16const | F128const | Uload8x8 | Sload8x8 | Uload16x4 | Sload16x4 | Uload32x2 | Sload32x2
    ) || (ctrl_type_set(op) != TypeSet::Nothing
        && !Type::SCALARS.iter().any(|&t| ctrl_type_set(op).contains(t)))
}

/// The types in `mask`, for picking.
pub(crate) fn types_in(mask: u8, out: &mut [Type; 7]) -> usize {
    let mut n = 0;
    for t in Type::SCALARS {
        if mask & (1 << ti(t)) != 0 {
            out[n] = t;
            n += 1;
        }
    }
    n
}
