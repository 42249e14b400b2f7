//! The glue between the generated x86-64 selector (`lower.rules`, `lower_vec.rules`) and the
//! Lower driver (the vector externs are `lower_vec.rs`'s).
//!
//! # Contract
//!
//! Implements the generated `Context` trait with the externs the rules call (those every ISA
//! implements alike come from `isel_prelude_externs!`, `machinst::isel`): extractors describe IR
//! instructions to the rules (read-only; they never merge anything), and constructors build
//! operands (`reg_operand`, `imm_operand`, `amode`, …) or emit an instruction the rules built
//! (`def`, `emit`) or one the rules cannot build yet (register pairs, the ABI). The only externs
//! that record a merge are those that consume a merged producer (`imm_operand` and `shift_count`
//! for an `iconst`, `cond_of`/`fcond_of` for a compare, `alu_mem`/`imul_mem`/`cmp_mem` for a load;
//! an address folds in `lower_mem::addr_mem`, as the `addr_fold` rules say), so a failed rule
//! leaves the use counts untouched. Calls, returns and runtime-library calls go through the ABI
//! (`abi.rs`) and are partial; one that fails keeps its error in `IselCtx::error`, which
//! [`lower_inst`] returns instead of "unsupported". So does `lacks_cmpxchg16b`, the rule for a
//! 128-bit atomic on a target without CMPXCHG16B (CPU features are extractors: `has_bit_count`,
//! `lacks_sse41`, `has_cmpxchg16b`, `wide_with_bmi2`).
//!
//! Constructors take a value's registers in the shape it is held in: `put_in_reg` and the
//! scalar constructors one register (`Lower::value_vreg`), `pair_of` and the `i128` helpers
//! an `i128`'s two (`Lower::value_pair`), `low_bits` the low half on purpose
//! (`Lower::value_lo`). The Lower driver reports any other shape, and results returned in
//! registers their types do not take, as unsupported: no opcode list decides which rules
//! may meet an `i128`.
//!
//! Every merge is optional: the extractors `imm32`, `icmp_merge`, `fcmp_merge`,
//! `band_merge` and `load_merge` ask the chaos control
//! ([`Decision::ImmOperand`], [`Decision::IcmpFusion`], [`Decision::FcmpFusion`],
//! [`Decision::BandTestFusion`], [`Decision::LoadSink`]) once the merge is possible, and report
//! no match when told to skip, so a lower-priority rule takes the general form. Which
//! opcode a producer has, the rules say (`icmp_parts`, `load_parts`, …). The rules
//! report each firing through `rule_fired` (indices into [`lowering_rules`]).

use kestrel_ir::entity::EntityRef;
use kestrel_ir::{
    AtomicRmwOp, FloatCC, GlobalValue, Inst as IrInst, IntCC, MemFlags, StackSlot, TrapCode, Type,
    Value,
};
use kestrel_regalloc::VReg;

use super::abi;
use super::asm::alu::{AluOp, UnaryOp};
use super::asm::bits::{BitCount, ShiftX};
use super::asm::moves::ExtMode;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::shift::{DoubleShift, ShiftOp};
use super::asm::sse::{FloatSize, RoundMode, SseOp};
use super::asm::vec::{LaneSize, Movmsk, VecImmOp, VecOp, VecShiftImm};
use super::asm::Size;
use super::inst::{
    AluInst, AtomicInst, BitsInst, CallDest, Cond, ControlInst, FrameValue, Inst, LoadKind, Mem,
    MemInst, MemOwn, Pred, RegImm, SseInst, StoreKind, VecInst, V128,
};
use super::lower_mem::{self, LeaPlan};
pub use super::lower_op::Op;
use crate::chaos::Decision;
use crate::machinst::isel::isel_prelude_externs;
use crate::machinst::isel::vec::VecLanes;

pub use super::isel::IselCtx;
use super::isel::*;
pub use super::isel_types::*;

pub(super) mod generated {
    use super::*;
    // The one IR type of `ir_ops.rules` that the rest of this file does not import.
    use kestrel_ir::{Constant, FuncRef, Immediate};
    include!(concat!(env!("OUT_DIR"), "/x64_lower.rs"));
}
// Enums the rules declare for themselves (the DSL generates them).
pub use generated::{DivKind, FBitOp, FloatOp, Libcall, LoadWidth, Runtime, StoreWidth};

impl generated::Context for IselCtx<'_, '_> {
    isel_prelude_externs!();
    super::lower_vec::vec_externs!();

    fn imm32(&mut self, v: Value) -> Option<Imm> {
        let imm = self.lower.const_value(v)?;
        i32::try_from(imm).ok()?;
        if self.lower.should_skip(Decision::ImmOperand) {
            return None;
        }
        Some(Imm { value: v, imm })
    }

    fn neg_imm32(&mut self, v: Value) -> Option<Imm> {
        let imm = self.lower.const_value(v)?.checked_neg()?;
        i32::try_from(imm).ok()?;
        if self.lower.should_skip(Decision::ImmOperand) {
            return None;
        }
        Some(Imm { value: v, imm })
    }

    fn shared(&mut self, v: Value) -> Option<Value> {
        self.lower.has_other_uses(v).then_some(v)
    }

    fn lives_on(&mut self, v: Value) -> Option<Value> {
        (self.lower.for_speed() && self.lower.lives_on(v)).then_some(v)
    }

    fn ty_32_64(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I32 || ty == Type::I64).then_some(ty)
    }

    fn band_merge(&mut self, v: Value) -> Option<generated::Band> {
        let inst = self.lower.mergeable_inst(v, self.inst)?;
        let band = generated::constructor_band_parts(self, v, inst)?;
        (!self.lower.should_skip(Decision::BandTestFusion)).then_some(band)
    }

    fn merge_band(&mut self, band: Value, a: Value) -> VReg {
        self.lower.merge(band);
        self.lower.value_vreg(a)
    }

    fn load_merge(&mut self, v: Value) -> Option<Ld> {
        let load = self.lower.mergeable_load(v, self.inst)?;
        let ld = generated::constructor_load_parts(self, v, load)?;
        (!self.lower.should_skip(Decision::LoadSink)).then_some(ld)
    }

    fn zero_extended(&mut self, v: Value) -> Option<Value> {
        let producer = self.lower.def_inst(v)?;
        generated::constructor_zext_parts(self, v, producer)
    }

    fn alu_mem(&mut self, ty: Type, op: AluOp, a: VReg, m: Ld) -> VReg {
        self.mem_op(ty, Some(op), a, m)
    }

    fn ext_load(&mut self, kind: LoadKind, m: Ld) -> VReg {
        self.ext_load_inst(kind, m)
    }

    fn imul_mem(&mut self, ty: Type, a: VReg, m: Ld) -> VReg {
        self.mem_op(ty, None, a, m)
    }

    fn bits_inst(&mut self, i: BitsInst) -> Inst {
        i.into()
    }

    fn sse_inst(&mut self, i: SseInst) -> Inst {
        i.into()
    }

    fn reg_operand(&mut self, r: VReg) -> RegImm {
        RegImm::Reg(r)
    }

    fn imm_operand(&mut self, k: Imm) -> RegImm {
        self.lower.merge(k.value);
        RegImm::Imm(k.imm as i32)
    }

    fn movzx_mode(&mut self, k: Imm) -> Option<ExtMode> {
        match k.imm {
            0xff => Some(ExtMode::BL),
            0xffff => Some(ExtMode::WL),
            _ => None,
        }
    }

    fn movzx_mask(&mut self, mode: ExtMode, src: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let dst = self.int();
        self.lower.emit(AluInst::Ext {
            mode,
            signed: false,
            dst,
            src,
        });
        dst
    }

    fn imm_merged(&mut self, k: Imm) -> i32 {
        self.lower.merge(k.value);
        k.imm as i32
    }

    fn const_operand(&mut self, k: i64) -> RegImm {
        RegImm::Imm(i32::try_from(k).expect("the rules use 32-bit constants"))
    }

    fn op_size(&mut self, ty: Type) -> Size {
        op_size(ty)
    }

    fn exact_size(&mut self, ty: Type) -> Size {
        exact_size(ty)
    }

    fn float_size(&mut self, ty: Type) -> FloatSize {
        float_size(ty)
    }

    fn sse_for(&mut self, ty: Type, single: SseOp, double: SseOp) -> SseOp {
        sse_for(ty, single, double)
    }

    fn width_mask(&mut self, ty: Type) -> u64 {
        width_mask(ty)
    }

    fn pred_one(&mut self, c: Cc) -> Pred {
        Pred::One(c)
    }

    fn pred_and(&mut self, c: Cc, d: Cc) -> Pred {
        Pred::And(c, d)
    }

    fn pred_or(&mut self, c: Cc, d: Cc) -> Pred {
        Pred::Or(c, d)
    }

    fn has_bit_count(&mut self, op: BitCount) -> Option<BitCount> {
        let have = match op {
            BitCount::Lzcnt => self.features.lzcnt,
            BitCount::Tzcnt => self.features.bmi1,
            BitCount::Popcnt => self.features.popcnt,
            BitCount::Bsf | BitCount::Bsr => true,
        };
        have.then_some(op)
    }

    fn int_cc(&mut self, cc: IntCC) -> Cc {
        int_cc(cc)
    }

    fn imm8(&mut self, k: i64) -> u8 {
        u8::try_from(k).expect("the rules shift by less than 64")
    }

    fn fmin(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.minmax(ty, false, a, b)
    }

    fn fmax(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.minmax(ty, true, a, b)
    }

    fn int_ty_narrow(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I8 || ty == Type::I16).then_some(ty)
    }

    fn int_ty_wide(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I32 || ty == Type::I64).then_some(ty)
    }

    fn func_addr(&mut self, func: kestrel_ir::FuncRef) -> VReg {
        let callee = &self.lower.f.ext_funcs[func];
        super::lower_mem::symbol_addr(self.lower, &callee.name, 0, callee.colocated)
    }

    fn libcall(&mut self, call: Libcall, ty: Type, i: IrInst) -> Option<Out> {
        let f = self.lower.f;
        let args: Vec<Value> = f.dfg.inst(i).arguments(&f.dfg.pool).collect();
        // `CeilF32`, `FmaF64`, …: the routine's name and the type's.
        let name = format!("{call:?}{}", if ty == Type::F32 { "F32" } else { "F64" });
        let sig = abi::libcall_signature(&vec![ty; args.len()], &[ty]);
        let dest = CallDest::Direct(std::sync::Arc::new(kestrel_ir::FunctionName::Named(name)));
        let done = abi::gen_call(self.lower, dest, &sig, &args);
        self.result(done)
    }

    fn lacks_sse41(&mut self, _: IrInst) -> Option<()> {
        (!self.features.sse41).then_some(())
    }

    fn has_cmpxchg16b(&mut self, _: IrInst) -> Option<()> {
        self.features.cmpxchg16b.then_some(())
    }

    fn lacks_cmpxchg16b(&mut self, i: IrInst, ty: Type) -> Option<Out> {
        self.error = Some(self.missing_feature(i, ty, "CMPXCHG16B"));
        None
    }

    fn amode(&mut self, addr: Value, offset: i32) -> Mem {
        lower_mem::addr_mem(self, self.inst, addr, offset, 0)
    }

    fn amode_wide(&mut self, addr: Value, offset: i32) -> Mem {
        lower_mem::addr_mem(self, self.inst, addr, offset, 8)
    }

    fn addr_const(&mut self, v: Value) -> Option<i64> {
        let k = self.lower.const_value(v)?;
        (!self.lower.should_skip(Decision::AddrConstFold)).then_some(k)
    }

    fn addr_producer(
        &mut self,
        user: IrInst,
        v: Value,
        shared: bool,
        recompute: bool,
    ) -> Option<generated::Producer> {
        lower_mem::addr_producer(self, user, v, shared, recompute)
    }

    fn index_shift(&mut self, k: Value) -> Option<u8> {
        let shift = u8::try_from(self.lower.const_value(k)?).ok()?;
        (shift <= 3).then_some(shift)
    }

    fn mul_scale(&mut self, a: Value, b: Value) -> Option<generated::Scale> {
        let (x, k) = if self.lower.const_value(b).is_some() {
            (a, b)
        } else {
            (b, a)
        };
        let shift = lower_mem::lea_shift(self.lower.const_value(k)?)?;
        Some(generated::Scale::Of { x, k, shift })
    }

    fn fold_add(&mut self) -> Option<bool> {
        (!self.lower.should_skip(Decision::AddrAddFold)).then_some(true)
    }

    fn fold_shift(&mut self, _shift: u8) -> Option<bool> {
        (!self.lower.should_skip(Decision::AddrShiftFold)).then_some(true)
    }

    fn lea_plan(&mut self, a: Value, b: Value) -> Option<LeaPlan> {
        if !self.lower.for_speed() {
            return None;
        }
        lower_mem::lea_plan(self, self.inst, a, b)
    }

    fn lea_of(&mut self, plan: LeaPlan) -> Mem {
        lower_mem::lea_of(self.lower, plan)
    }

    fn lea_scale(&mut self, k: Imm) -> Option<u8> {
        if !self.lower.for_speed() {
            return None;
        }
        lower_mem::lea_shift(k.imm)
    }

    fn scaled_mem(&mut self, a: Value, k: Imm, shift: u8) -> Mem {
        self.lower.merge(k.value);
        let x = self.lower.value_vreg(a);
        Mem::RegIndex {
            base: x,
            index: x,
            shift,
            disp: 0,
        }
    }

    fn disp_mem(&mut self, a: Value, k: Imm) -> Mem {
        self.lower.merge(k.value);
        let base = self.lower.value_vreg(a);
        Mem::Reg {
            base,
            disp: k.imm as i32,
        }
    }

    fn reg_mem(&mut self, addr: Value) -> Mem {
        let base = self.lower.value_vreg(addr);
        Mem::Reg { base, disp: 0 }
    }

    fn slot_mem(&mut self, slot: StackSlot, offset: i32) -> Mem {
        Mem::Slot {
            slot: slot.index() as u32,
            disp: offset,
        }
    }

    fn notrap(&mut self) -> MemFlags {
        MemFlags::trusted()
    }

    fn load(&mut self, kind: LoadKind, mem: Mem, trap: MaybeTrap) -> VReg {
        lower_mem::load(self.lower, kind, mem, trap)
    }

    fn cmpxchg16b_load(&mut self, addr: Value) -> Out {
        // cmpxchg16b with expected = replacement = 0 loads the value (and rewrites it
        // unchanged if it was 0).
        let addr = self.lower.value_vreg(addr);
        let z: Vec<VReg> = (0..4).map(|_| self.zero_reg()).collect();
        let dst = [self.int(), self.int()];
        self.lower.emit(AtomicInst::Cas128 {
            addr,
            expected: [z[0], z[1]],
            repl: [z[2], z[3]],
            dst,
        });
        Out::two(dst[0], dst[1])
    }

    fn cmpxchg16b_store(&mut self, val: Value, addr: Value) -> Out {
        self.cmpxchg16b_rmw(AtomicRmwOp::Xchg, addr, val);
        Out::none()
    }

    fn cmpxchg16b_rmw(&mut self, op: AtomicRmwOp, addr: Value, val: Value) -> Out {
        let addr = self.lower.value_vreg(addr);
        let val = self.lower.value_pair(val);
        let (dst, tmp) = ([self.int(), self.int()], [self.int(), self.int()]);
        self.lower.emit(AtomicInst::Loop128 {
            op,
            addr,
            val,
            dst,
            tmp,
        });
        Out::two(dst[0], dst[1])
    }

    fn cmpxchg16b_cas(&mut self, addr: Value, expected: Value, repl: Value) -> Out {
        let addr = self.lower.value_vreg(addr);
        let expected = self.lower.value_pair(expected);
        let repl = self.lower.value_pair(repl);
        let dst = [self.int(), self.int()];
        self.lower.emit(AtomicInst::Cas128 {
            addr,
            expected,
            repl,
            dst,
        });
        Out::two(dst[0], dst[1])
    }

    fn alu_pair(&mut self, op_lo: AluOp, op_hi: AluOp, a: Pair, b: Pair) -> Pair {
        self.alu128((op_lo, op_hi), a, b, None, None).0
    }

    fn alu_pair_flag(&mut self, op_lo: AluOp, op_hi: AluOp, cc: Cc, a: Pair, b: Pair) -> Out {
        self.alu128_flag((op_lo, op_hi), cc, a, b, None)
    }

    fn alu_pair_carry_flag(&mut self, op: AluOp, cc: Cc, a: Pair, b: Pair, cin: VReg) -> Out {
        self.alu128_flag((op, op), cc, a, b, Some(cin))
    }

    fn sign_bit(&mut self, ty: Type) -> u64 {
        sign_bit(ty)
    }

    fn cls_excess(&mut self, ty: Type) -> i64 {
        65 - i64::from(ty.bits())
    }

    fn ty_i32(&mut self) -> Type {
        Type::I32
    }

    fn narrow_min(&mut self, ty: Type, signed: bool) -> i64 {
        if signed {
            -(1 << (ty.bits() - 1))
        } else {
            0
        }
    }

    fn narrow_max(&mut self, ty: Type, signed: bool) -> i64 {
        if signed {
            (1 << (ty.bits() - 1)) - 1
        } else {
            (1 << ty.bits()) - 1
        }
    }

    fn type_bits(&mut self, ty: Type) -> i64 {
        i64::from(ty.bits())
    }

    fn i32_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I32).then_some(ty)
    }

    fn above_width(&mut self, ty: Type) -> i64 {
        1 << ty.bits()
    }

    fn below_32(&mut self, ty: Type) -> i64 {
        32 - i64::from(ty.bits())
    }

    fn wide_with_bmi2(&mut self, ty: Type) -> Option<Type> {
        (self.features.bmi2 && ty.bits() >= 32).then_some(ty)
    }

    fn bits_minus_1(&mut self, ty: Type) -> i64 {
        i64::from(ty.bits()) - 1
    }

    fn half_bits(&mut self, ty: Type) -> i64 {
        i64::from(ty.bits() / 2)
    }

    fn uext(&mut self, a: Value, ty: Type) -> VReg {
        self.ext(false, a, ty.bits())
    }

    fn sext(&mut self, a: Value, ty: Type) -> VReg {
        self.ext(true, a, ty.bits())
    }

    fn cmov(&mut self, cond: Cond, t: VReg, f: VReg) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::cmov(cond, t, f, dst));
        dst
    }

    fn br_table(&mut self, index: Value) -> Out {
        let zero_extended = self.zero_extended(index).is_some();
        super::lower_br_table::lower_br_table(self.lower, index, zero_extended, self.targets);
        Out::none()
    }

    fn cmp_mem(&mut self, cc: IntCC, a: Value, m: Ld) -> Cond {
        let size = exact_size(self.lower.value_type(a));
        let a = self.lower.value_vreg(a);
        self.lower.sink_load(m.value);
        let mem = lower_mem::addr_mem(self, m.load, m.addr, m.offset, 0);
        Cond::CmpMem {
            size,
            cc: int_cc(cc),
            a,
            mem,
            trap: m.trap,
        }
    }

    fn cmp128_flags(&mut self, cc: Cc, a: Pair, b: Pair) -> Cond {
        Cond::Cmp128 { cc, a: a.0, b: b.0 }
    }

    fn runtime_call_reg(&mut self, routine: Runtime, ty: Type, a: VReg) -> Option<Pair> {
        let sig = abi::libcall_signature(&[ty], &[Type::I128]);
        match abi::gen_call_regs(self.lower, runtime_dest(routine), &sig, &[a]) {
            Ok(regs) => Some(Pair([regs[0], regs[1]])),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    fn pow2_bits(&mut self, ty: Type, k: i64) -> u64 {
        float_bits(ty, 2f64.powi(k as i32))
    }

    fn neg_pow2_bits(&mut self, ty: Type, k: i64) -> u64 {
        float_bits(ty, -(2f64.powi(k as i32)))
    }

    fn make_ld(
        &mut self,
        value: Value,
        load: IrInst,
        addr: Value,
        offset: i32,
        flags: MemFlags,
    ) -> Ld {
        Ld {
            value,
            load,
            addr,
            offset,
            trap: flags.trap_code,
        }
    }

    fn mem_hi(&mut self, mem: Mem) -> Mem {
        mem.offset(8)
            .expect("addr_mem keeps 8 bytes of displacement slack")
    }
}

/// Every selection rule of `lower.rules`, as `FILE:LINE` (with the rule's name, if any);
/// `CompiledCode::rules_fired` indexes this list.
pub fn lowering_rules() -> &'static [&'static str] {
    const _: () = assert!(crate::machinst::isel::rule_indices_fit(
        generated::RULE_SITES
    ));
    generated::RULE_SITES
}
