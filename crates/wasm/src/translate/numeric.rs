//! Numeric operators: constants, comparisons, arithmetic, conversions.
//!
//! Wasm semantics and the IR ops they map to (the IR follows Cranelift's semantics):
//! - `div_s`/`div_u`/`rem_s`/`rem_u` → `sdiv`/`udiv`/`srem`/`urem`: all trap `int_divz` on
//!   a zero divisor, `sdiv` traps `int_ovf` on `MIN / -1`, and `srem` gives 0 for
//!   `MIN % -1` — exactly Wasm's rules.
//! - shifts and rotates take their amount modulo the width in both.
//! - comparisons produce an `i8` 0/1 in the IR, widened to `i32` with `uextend` when the
//!   next operator needs the `i32` (not when it is a branch or `select` condition).
//! - float `ne` is the IR's `ne` (unordered or unequal, so true for NaN); the others are
//!   the ordered conditions, false for NaN.
//! - `min`/`max` → `fmin`/`fmax`: NaN if either operand is NaN, and `-0 < +0`.
//! - `nearest` → `nearest` (ties to even); `ceil`/`floor`/`trunc`/`sqrt` likewise.
//! - `trunc_f*_s/u` → `fcvt_to_sint/uint`: `bad_toint` for NaN, `int_ovf` out of range;
//!   `trunc_sat_*` → the `_sat` forms (NaN → 0, saturating).
//! - `reinterpret` → `bitcast`; `extend8_s` etc. → `ireduce` then `sextend`.
//!
//! Cost: one to three instructions per operator; none for a constant its block already has.

use kestrel_ir::{FloatCC, IntCC, MemFlags, Opcode, Type, Value as IrValue};
use wasmparser::Operator;

use super::{FuncTranslator, Res};

/// How many distinct constants of a block [`FuncTranslator::block_constant`] remembers (a
/// linear search: blocks rarely have more).
const BLOCK_CONSTANTS: usize = 16;

impl FuncTranslator<'_> {
    fn push_result(&mut self, v: Result<IrValue, kestrel_ir::builder::BuilderError>) -> Res {
        let v = v.map_err(|e| self.err(e))?;
        self.stack.push(v);
        Ok(())
    }

    fn unop(&mut self, opcode: Opcode, ty: Type) -> Res {
        let x = self.pop();
        let v = self.b.ins().unary(opcode, ty, x);
        self.push_result(v)
    }

    fn binop(&mut self, opcode: Opcode) -> Res {
        let (x, y) = self.pop2();
        let v = self.b.ins().binary(opcode, x, y);
        self.push_result(v)
    }

    fn icmp(&mut self, cc: IntCC) -> Res {
        let (x, y) = self.pop2();
        let c = self.b.ins().icmp(cc, x, y).map_err(|e| self.err(e))?;
        self.push_flag(c);
        Ok(())
    }

    fn fcmp(&mut self, cc: FloatCC) -> Res {
        let (x, y) = self.pop2();
        let c = self.b.ins().fcmp(cc, x, y).map_err(|e| self.err(e))?;
        self.push_flag(c);
        Ok(())
    }

    fn eqz(&mut self, ty: Type) -> Res {
        let x = self.pop();
        let zero = self.b.ins().iconst(ty, 0).map_err(|e| self.err(e))?;
        let c = self
            .b
            .ins()
            .icmp(IntCC::Equal, x, zero)
            .map_err(|e| self.err(e))?;
        self.push_flag(c);
        Ok(())
    }

    /// Sign-extend the low `from` bits of the top value, in place (`extend8_s`, …).
    fn sign_extend_low(&mut self, from: Type, to: Type) -> Res {
        let x = self.pop();
        let low = self.b.ins().ireduce(from, x).map_err(|e| self.err(e))?;
        let v = self.b.ins().sextend(to, low);
        self.push_result(v)
    }

    fn bitcast(&mut self, to: Type) -> Res {
        let x = self.pop();
        let v = self.b.ins().bitcast(to, MemFlags::new(), x);
        self.push_result(v)
    }

    /// An integer constant: the current block's earlier `iconst` of it if it has one
    /// (among the first [`BLOCK_CONSTANTS`] distinct ones), else a new one. Per block, as
    /// the mid-end numbers constants (one shared across blocks would only make a long
    /// live range; the backend folds constants into immediates or rematerializes them).
    fn block_constant(&mut self, ty: Type, value: i64) -> Res<IrValue> {
        let block = self.b.current_block();
        if self.constants_block != block {
            self.constants_block = block;
            self.constants.clear();
        }
        if let Some(&(_, _, v)) = self.constants.iter().find(|c| c.0 == ty && c.1 == value) {
            return Ok(v);
        }
        let v = self.b.ins().iconst(ty, value).map_err(|e| self.err(e))?;
        if self.constants.len() < BLOCK_CONSTANTS {
            self.constants.push((ty, value, v));
        }
        Ok(v)
    }

    /// Translate `op` if it is a numeric operator; `Ok(false)` if it is not one.
    pub(super) fn translate_numeric(&mut self, op: &Operator) -> Res<bool> {
        use Opcode as Op;
        use Operator as O;
        use Type as T;
        match *op {
            O::I32Const { value } => {
                let v = self.block_constant(T::I32, value as i64)?;
                self.stack.push(v);
            }
            O::I64Const { value } => {
                let v = self.block_constant(T::I64, value)?;
                self.stack.push(v);
            }
            O::F32Const { value } => {
                let v = self.b.ins().f32const(f32::from_bits(value.bits()));
                self.push_result(v)?;
            }
            O::F64Const { value } => {
                let v = self.b.ins().f64const(f64::from_bits(value.bits()));
                self.push_result(v)?;
            }

            O::I32Eqz => self.eqz(T::I32)?,
            O::I64Eqz => self.eqz(T::I64)?,
            O::I32Eq | O::I64Eq => self.icmp(IntCC::Equal)?,
            O::I32Ne | O::I64Ne => self.icmp(IntCC::NotEqual)?,
            O::I32LtS | O::I64LtS => self.icmp(IntCC::SignedLessThan)?,
            O::I32LtU | O::I64LtU => self.icmp(IntCC::UnsignedLessThan)?,
            O::I32GtS | O::I64GtS => self.icmp(IntCC::SignedGreaterThan)?,
            O::I32GtU | O::I64GtU => self.icmp(IntCC::UnsignedGreaterThan)?,
            O::I32LeS | O::I64LeS => self.icmp(IntCC::SignedLessThanOrEqual)?,
            O::I32LeU | O::I64LeU => self.icmp(IntCC::UnsignedLessThanOrEqual)?,
            O::I32GeS | O::I64GeS => self.icmp(IntCC::SignedGreaterThanOrEqual)?,
            O::I32GeU | O::I64GeU => self.icmp(IntCC::UnsignedGreaterThanOrEqual)?,

            O::F32Eq | O::F64Eq => self.fcmp(FloatCC::Equal)?,
            O::F32Ne | O::F64Ne => self.fcmp(FloatCC::NotEqual)?,
            O::F32Lt | O::F64Lt => self.fcmp(FloatCC::LessThan)?,
            O::F32Gt | O::F64Gt => self.fcmp(FloatCC::GreaterThan)?,
            O::F32Le | O::F64Le => self.fcmp(FloatCC::LessThanOrEqual)?,
            O::F32Ge | O::F64Ge => self.fcmp(FloatCC::GreaterThanOrEqual)?,

            O::I32Clz | O::I64Clz => self.unop(Op::Clz, T::INVALID)?,
            O::I32Ctz | O::I64Ctz => self.unop(Op::Ctz, T::INVALID)?,
            O::I32Popcnt | O::I64Popcnt => self.unop(Op::Popcnt, T::INVALID)?,
            O::I32Add | O::I64Add => self.binop(Op::Iadd)?,
            O::I32Sub | O::I64Sub => self.binop(Op::Isub)?,
            O::I32Mul | O::I64Mul => self.binop(Op::Imul)?,
            O::I32DivS | O::I64DivS => self.binop(Op::Sdiv)?,
            O::I32DivU | O::I64DivU => self.binop(Op::Udiv)?,
            O::I32RemS | O::I64RemS => self.binop(Op::Srem)?,
            O::I32RemU | O::I64RemU => self.binop(Op::Urem)?,
            O::I32And | O::I64And => self.binop(Op::Band)?,
            O::I32Or | O::I64Or => self.binop(Op::Bor)?,
            O::I32Xor | O::I64Xor => self.binop(Op::Bxor)?,
            O::I32Shl | O::I64Shl => self.binop(Op::Ishl)?,
            O::I32ShrS | O::I64ShrS => self.binop(Op::Sshr)?,
            O::I32ShrU | O::I64ShrU => self.binop(Op::Ushr)?,
            O::I32Rotl | O::I64Rotl => self.binop(Op::Rotl)?,
            O::I32Rotr | O::I64Rotr => self.binop(Op::Rotr)?,

            O::F32Abs | O::F64Abs => self.unop(Op::Fabs, T::INVALID)?,
            O::F32Neg | O::F64Neg => self.unop(Op::Fneg, T::INVALID)?,
            O::F32Ceil | O::F64Ceil => self.unop(Op::Ceil, T::INVALID)?,
            O::F32Floor | O::F64Floor => self.unop(Op::Floor, T::INVALID)?,
            O::F32Trunc | O::F64Trunc => self.unop(Op::Trunc, T::INVALID)?,
            O::F32Nearest | O::F64Nearest => self.unop(Op::Nearest, T::INVALID)?,
            O::F32Sqrt | O::F64Sqrt => self.unop(Op::Sqrt, T::INVALID)?,
            O::F32Add | O::F64Add => self.binop(Op::Fadd)?,
            O::F32Sub | O::F64Sub => self.binop(Op::Fsub)?,
            O::F32Mul | O::F64Mul => self.binop(Op::Fmul)?,
            O::F32Div | O::F64Div => self.binop(Op::Fdiv)?,
            O::F32Min | O::F64Min => self.binop(Op::Fmin)?,
            O::F32Max | O::F64Max => self.binop(Op::Fmax)?,
            O::F32Copysign | O::F64Copysign => self.binop(Op::Fcopysign)?,

            O::I32WrapI64 => self.unop(Op::Ireduce, T::I32)?,
            O::I64ExtendI32S => self.unop(Op::Sextend, T::I64)?,
            O::I64ExtendI32U => self.unop(Op::Uextend, T::I64)?,
            O::I32TruncF32S | O::I32TruncF64S => self.unop(Op::FcvtToSint, T::I32)?,
            O::I32TruncF32U | O::I32TruncF64U => self.unop(Op::FcvtToUint, T::I32)?,
            O::I64TruncF32S | O::I64TruncF64S => self.unop(Op::FcvtToSint, T::I64)?,
            O::I64TruncF32U | O::I64TruncF64U => self.unop(Op::FcvtToUint, T::I64)?,
            O::I32TruncSatF32S | O::I32TruncSatF64S => self.unop(Op::FcvtToSintSat, T::I32)?,
            O::I32TruncSatF32U | O::I32TruncSatF64U => self.unop(Op::FcvtToUintSat, T::I32)?,
            O::I64TruncSatF32S | O::I64TruncSatF64S => self.unop(Op::FcvtToSintSat, T::I64)?,
            O::I64TruncSatF32U | O::I64TruncSatF64U => self.unop(Op::FcvtToUintSat, T::I64)?,
            O::F32ConvertI32S | O::F32ConvertI64S => self.unop(Op::FcvtFromSint, T::F32)?,
            O::F32ConvertI32U | O::F32ConvertI64U => self.unop(Op::FcvtFromUint, T::F32)?,
            O::F64ConvertI32S | O::F64ConvertI64S => self.unop(Op::FcvtFromSint, T::F64)?,
            O::F64ConvertI32U | O::F64ConvertI64U => self.unop(Op::FcvtFromUint, T::F64)?,
            O::F32DemoteF64 => self.unop(Op::Fdemote, T::F32)?,
            O::F64PromoteF32 => self.unop(Op::Fpromote, T::F64)?,
            O::I32ReinterpretF32 => self.bitcast(T::I32)?,
            O::I64ReinterpretF64 => self.bitcast(T::I64)?,
            O::F32ReinterpretI32 => self.bitcast(T::F32)?,
            O::F64ReinterpretI64 => self.bitcast(T::F64)?,

            O::I32Extend8S => self.sign_extend_low(T::I8, T::I32)?,
            O::I32Extend16S => self.sign_extend_low(T::I16, T::I32)?,
            O::I64Extend8S => self.sign_extend_low(T::I8, T::I64)?,
            O::I64Extend16S => self.sign_extend_low(T::I16, T::I64)?,
            O::I64Extend32S => self.sign_extend_low(T::I32, T::I64)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}
