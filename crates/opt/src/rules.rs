//! The rules' view of the function being rewritten: the generated matcher of
//! `simplify.rules` and its `Context`, implemented over a compaction cursor.
//!
//! Contract. Requires the cursor of a fused compaction walk (`Function::compact_with`): the
//! extractors look only at instructions already placed (`CompactCursor::placed_def`), which
//! are final, and `make` inserts before the current instruction, so every value a rule
//! returns is defined before, and dominates, the instruction being simplified. `make`
//! simplifies a new instruction first (to a bounded depth) and then looks it up in the value
//! table, so a rule never builds a duplicate of a dominating instruction. Cost: O(1) per
//! extractor call; a rule's work is bounded by its size times the depth bound.

use kestrel_interp::ops;
use kestrel_ir::compact::CompactCursor;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::opcode::Ctrl;
use kestrel_ir::{InstructionData, Opcode, Type, Value};

use crate::gvn::ValueTable;
use crate::magic;

mod generated {
    use kestrel_ir::*;
    include!(concat!(env!("OUT_DIR"), "/ir_ops.rs"));
    include!(concat!(env!("OUT_DIR"), "/ir_builders.rs"));
    include!(concat!(env!("OUT_DIR"), "/simplify.rs"));
}
use generated::data_of;
/// An IR instruction as the rules see it (one variant per opcode, its operands as fields).
pub use generated::Op;
pub(crate) use generated::{constructor_simplify, constructor_simplify_branch, op_of, Taken};

/// Every rule of `simplify.rules`, as `FILE:LINE name`; the fired counts index it.
pub fn simplification_rules() -> &'static [&'static str] {
    generated::RULE_SITES
}

/// How deep `make` simplifies instructions it builds inside other rules' right-hand sides.
const MAX_DEPTH: u32 = 4;

/// The state one rule application sees.
pub(crate) struct RulesCtx<'c, 'f> {
    pub cursor: &'c mut CompactCursor<'f>,
    pub values: &'c mut ValueTable,
    pub domtree: &'c DominatorTree,
    /// Per rule (index into [`simplification_rules`]): how often it fired.
    pub fired: &'c mut [u32],
    pub depth: u32,
}

impl RulesCtx<'_, '_> {
    /// The bits of a constant value (`iconst` at its type's width, or a float constant).
    fn constant_bits(&self, v: Value) -> Option<u128> {
        let (inst, _) = self.cursor.placed_def(v)?;
        let dfg = &self.cursor.func.dfg;
        match *dfg.inst(inst) {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(ops::truncate(imm as i128 as u128, dfg.value_type(v).bits())),
            // An `i128` constant is an extended `i64` one (see `iconst` in the rules).
            InstructionData::Unary { opcode, arg }
                if matches!(opcode, Opcode::Sextend | Opcode::Uextend) =>
            {
                let bits = self.constant_bits(arg)?;
                let from = dfg.value_type(arg).bits();
                Some(match opcode {
                    Opcode::Sextend => ops::sextend(bits, from, dfg.value_type(v).bits()),
                    _ => bits,
                })
            }
            InstructionData::UnaryIeee32 { imm, .. } => Some(u128::from(imm)),
            InstructionData::UnaryIeee64 { imm, .. } => Some(u128::from(imm)),
            _ => None,
        }
    }

    /// The bits of an integer constant and its width.
    fn int_constant(&self, v: Value) -> Option<(u128, u32)> {
        let ty = self.cursor.func.dfg.value_type(v);
        if !ty.is_int() {
            return None;
        }
        Some((self.constant_bits(v)?, ty.bits()))
    }

    /// The controlling type of `data` whose first result has type `ty`.
    fn ctrl_type(&self, data: &InstructionData, ty: Type) -> Type {
        match data.opcode().ctrl() {
            Ctrl::None => Type::INVALID,
            Ctrl::Suffix => ty,
            Ctrl::Operand(n) | Ctrl::OperandPrinted(n) => {
                let arg = data.fixed_args()[usize::from(n)];
                self.cursor.func.dfg.value_type(arg)
            }
        }
    }
}

/// The constant instruction holding `bits` as a value of type `ty`, if one can.
fn constant_op(ty: Type, bits: u128) -> Option<Op> {
    let is_nan = |exp: u128, frac: u128| bits & exp == exp && bits & frac != 0;
    if ty == Type::F32 {
        return (!is_nan(0x7f80_0000, 0x007f_ffff)).then_some(Op::F32const { bits: bits as u64 });
    }
    if ty == Type::F64 {
        let (exp, frac) = (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff);
        return (!is_nan(exp, frac)).then_some(Op::F64const { bits: bits as u64 });
    }
    if !ty.is_int() {
        return None;
    }
    // The parser's form: zero-extended below 64 bits; an `i128` as the `i64` whose sign
    // extension it is (see `iconst` in the rules).
    let imm = match ty.bits() {
        128 => i64::try_from(ops::to_signed(bits, 128)).ok()?,
        _ => bits as u64 as i64,
    };
    Some(Op::Iconst { imm })
}

impl generated::Context for RulesCtx<'_, '_> {
    fn def(&mut self, v: Value) -> Option<Op> {
        let (inst, _) = self.cursor.placed_def(v)?;
        let dfg = &self.cursor.func.dfg;
        (dfg.inst_results(inst).len() == 1).then(|| op_of(dfg.inst(inst)))
    }

    fn value_type(&mut self, v: Value) -> Type {
        self.cursor.func.dfg.value_type(v)
    }

    fn int_ty(&mut self, ty: Type) -> Option<Type> {
        ty.is_int().then_some(ty)
    }

    fn narrow_int_ty(&mut self, ty: Type) -> Option<Type> {
        (ty.is_int() && ty.bits() <= 64).then_some(ty)
    }

    fn uconst(&mut self, v: Value) -> Option<u64> {
        let (bits, _) = self.int_constant(v)?;
        u64::try_from(bits).ok()
    }

    fn all_ones(&mut self, v: Value) -> Option<()> {
        let (bits, width) = self.int_constant(v)?;
        (bits == ops::mask(width)).then_some(())
    }

    fn nonzero(&mut self, v: Value) -> Option<()> {
        let (bits, _) = self.int_constant(v)?;
        (bits != 0).then_some(())
    }

    fn make(&mut self, ty: Type, op: Op) -> Value {
        // Immediates in the parser's form (zero-extended below 64 bits), so equal constants
        // are equal instructions and the printed IR reads back the same.
        let op = match op {
            Op::Iconst { imm } if ty.is_int() && ty.bits() < 64 => Op::Iconst {
                imm: imm & ((1i64 << ty.bits()) - 1),
            },
            op => op,
        };
        let data = data_of(&op)
            .expect("simplify.rules builds only instructions without lists or destinations");
        if self.depth < MAX_DEPTH {
            self.depth += 1;
            let simpler = constructor_simplify(self, ty, op);
            self.depth -= 1;
            if let Some(v) = simpler.filter(|&v| self.cursor.func.dfg.value_type(v) == ty) {
                return v;
            }
        }
        let block = self.cursor.block;
        if let Some(v) = self.values.lookup(&data, ty, block, self.domtree) {
            return v[0];
        }
        let ctrl = self.ctrl_type(&data, ty);
        let types = kestrel_ir::typing::result_types(data.opcode(), ctrl);
        let results = self.cursor.insert_before(data, types.as_slice());
        self.values
            .insert(data, types.as_slice()[0], block, &results);
        results[0]
    }

    fn fold(&mut self, ty: Type, op: Op) -> Option<Op> {
        let data = data_of(&op)?;
        let args = data.fixed_args();
        let extension = matches!(data.opcode(), Opcode::Uextend | Opcode::Sextend);
        if args.is_empty() || (extension && ty == Type::I128) {
            return None;
        }
        let mut x = [0u128; 3];
        for (slot, &a) in x.iter_mut().zip(args) {
            *slot = self.constant_bits(a)?;
        }
        let in_ty = self.cursor.func.dfg.value_type(args[0]);
        match ops::eval_pure(&data, ty, in_ty, &x[..args.len()])? {
            Ok(ops::Evaluated::One(bits)) => constant_op(ty, bits),
            _ => None,
        }
    }

    fn i64_ty(&mut self) -> Type {
        Type::I64
    }

    fn log2(&mut self, k: u64) -> Option<i64> {
        k.is_power_of_two().then(|| i64::from(k.trailing_zeros()))
    }

    fn low_mask(&mut self, k: u64) -> i64 {
        k.wrapping_sub(1) as i64
    }

    fn narrower(&mut self, from: Type, to: Type) -> Option<Type> {
        (to.bits() < from.bits()).then_some(to)
    }

    fn udiv_magic(&mut self, ty: Type, d: u64) -> Option<i64> {
        let g = magic::unsigned_magic(ty.bits(), d)?;
        (!g.add).then_some(g.multiplier as i64)
    }

    fn udiv_magic_wide(&mut self, ty: Type, d: u64) -> Option<i64> {
        let g = magic::unsigned_magic(ty.bits(), d)?;
        g.add.then_some(g.multiplier as i64)
    }

    fn udiv_multiplier(&mut self, ty: Type, d: u64) -> i64 {
        magic::unsigned_magic(ty.bits(), d).map_or(0, |g| g.multiplier as i64)
    }

    fn sdiv_multiplier(&mut self, ty: Type, d: u64) -> i64 {
        magic::signed_magic(ty.bits(), d).map_or(0, |g| g.multiplier as i64)
    }

    fn udiv_shift(&mut self, ty: Type, d: u64) -> i64 {
        magic::unsigned_magic(ty.bits(), d).map_or(0, |g| i64::from(g.shift))
    }

    fn udiv_reducible(&mut self, ty: Type, d: u64) -> Option<u64> {
        magic::unsigned_magic(ty.bits(), d).map(|_| d)
    }

    fn sdiv_magic(&mut self, ty: Type, d: u64) -> Option<i64> {
        let g = magic::signed_magic(ty.bits(), d)?;
        (!g.add).then_some(g.multiplier as i64)
    }

    fn sdiv_magic_wide(&mut self, ty: Type, d: u64) -> Option<i64> {
        let g = magic::signed_magic(ty.bits(), d)?;
        g.add.then_some(g.multiplier as i64)
    }

    fn sdiv_shift(&mut self, ty: Type, d: u64) -> i64 {
        magic::signed_magic(ty.bits(), d).map_or(0, |g| i64::from(g.shift))
    }

    fn sdiv_reducible(&mut self, ty: Type, d: u64) -> Option<u64> {
        magic::signed_magic(ty.bits(), d).map(|_| d)
    }

    fn sdiv_pow2(&mut self, ty: Type, d: u64) -> Option<i64> {
        let k = d.trailing_zeros();
        (d.is_power_of_two() && k >= 1 && k + 1 < ty.bits()).then_some(i64::from(k))
    }

    fn negative_divisor(&mut self, ty: Type, d: u64) -> Option<u64> {
        let signed = ops::to_signed(u128::from(d), ty.bits());
        let smallest = -(1i128 << (ty.bits() - 1));
        (signed < -1 && signed > smallest).then(|| (-signed) as u64)
    }

    fn as_imm(&mut self, d: u64) -> i64 {
        d as i64
    }

    fn bits_minus(&mut self, ty: Type, k: i64) -> i64 {
        i64::from(ty.bits()) - k
    }

    fn negate(&mut self, d: u64) -> i64 {
        (d as i64).wrapping_neg()
    }

    fn rule_fired(&mut self, rule: usize) {
        self.fired[rule] += 1;
    }
}
