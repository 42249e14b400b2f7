//! The glue between the generated AArch64 selector (`lower.rules`) and the Lower driver.
//!
//! # Contract
//!
//! Implements the generated `Context` trait with the externs the rules call: extractors
//! describe IR instructions and constants to the rules (read-only; they never merge
//! anything), and constructors build operands or emit an instruction the rules built
//! (`def`, `emit`) or one the rules cannot build yet (extensions by type, the ABI, jump
//! tables, symbol addresses). The only externs that record a merge are those that consume
//! a merged producer (`arith_operand`, `logic_operand`, `shift_count`, `cmp_operand` for an
//! `iconst`, `cond_of`/`fcond_of` for a compare, `amode` for an address `iadd`), so a failed
//! rule leaves the use counts untouched. Calls and returns go through the ABI (`abi.rs`) and are partial; one that
//! fails keeps its error in [`IselCtx::error`], which [`lower_inst`] returns instead of
//! "unsupported".
//!
//! Every merge is optional: the extractors `arith_imm`, `arith_imm_neg`, `logic_imm_of`,
//! `shift_imm`, `cmp_imm`, `icmp_merge` and `fcmp_merge` ask the chaos control
//! ([`Decision::ImmOperand`], [`Decision::IcmpFusion`], [`Decision::FcmpFusion`]) once the
//! merge is possible, and report no match when told to skip, so a lower-priority rule takes
//! the general form. The rules report each firing through `rule_fired` (indices into
//! [`lowering_rules`]).
//!
//! Cost: the driver's, plus O(1) per extern call (each emits or folds a bounded sequence).

use std::sync::Arc;

use kestrel_ir::entity::EntityRef;
use kestrel_ir::immediates::Endianness;
use kestrel_ir::{
    AtomicRmwOp, FloatCC, GlobalValue, Inst as IrInst, InstructionData, IntCC, MemFlags, StackSlot,
    TrapCode, Type, Value,
};
use kestrel_regalloc::{RegClass, VReg};
use smallvec::SmallVec;

use super::abi;
use super::asm::add_sub::{AddSub, AddSubImm};
use super::asm::atomic::AtomicOp;
use super::asm::bitfield::{Bitfield, BitfieldOp};
use super::asm::bits::BitOp;
use super::asm::cond::Cond as Cc;
use super::asm::fp::{FpBinOp, FpUnaryOp};
use super::asm::logical::LogicalImmOp;
use super::asm::logical_imm::LogicalImm;
use super::asm::mul_div::MaddOp;
use super::asm::operands::ShiftAmount;
use super::asm::{FpMemSize, FpSize, MemSize, Size};
use super::features::CpuFeatures;
use super::inst::{
    AluInst, AluOp, AtomicInst, CallDest, CmpRhs, Cond, ControlInst, DivKind, FloatInst,
    FrameValue, Inst, LoadKind, Mem, MemInst, StoreKind, UnaryOp,
};
use super::isel::*;
use crate::chaos::Decision;
use crate::machinst::ir_ops::{op_of, Op};
use crate::machinst::lower::{Lower, Results};
use crate::machinst::{BlockIndex, CodegenError};

pub(super) mod generated {
    use super::*;
    // The IR types of `ir_ops.rules` that the rest of this file does not import.
    use kestrel_ir::{FuncRef, TrapCode};
    include!(concat!(env!("OUT_DIR"), "/aarch64_lower.rs"));
}
// Enums the rules declare for themselves (the DSL generates them).
pub use generated::{LoadWidth, StoreWidth};

// `CompiledCode::rules_fired` holds rule indices as `u16`.
const _: () = assert!(generated::RULE_SITES.len() <= u16::MAX as usize);

/// Every selection rule of the AArch64 `lower.rules`, as `FILE:LINE` (with the rule's name,
/// if any); `CompiledCode::rules_fired` indexes this list.
pub fn lowering_rules() -> &'static [&'static str] {
    generated::RULE_SITES
}

impl generated::Context for IselCtx<'_, '_> {
    fn inst_op(&mut self, i: IrInst) -> Op {
        op_of(self.lower.data(i))
    }

    fn result_type(&mut self, i: IrInst) -> Option<Type> {
        let v = self.lower.f.dfg.first_result(i)?;
        Some(self.lower.value_type(v))
    }

    fn int_ty(&mut self, ty: Type) -> Option<Type> {
        (ty.is_int() && ty.bits() <= 64).then_some(ty)
    }

    fn narrow_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I8 || ty == Type::I16).then_some(ty)
    }

    fn wide_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I32 || ty == Type::I64).then_some(ty)
    }

    fn i64_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I64).then_some(ty)
    }

    fn float_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::F32 || ty == Type::F64).then_some(ty)
    }

    fn has_lse(&mut self, _: IrInst) -> Option<()> {
        self.features.lse.then_some(())
    }

    fn rule_fired(&mut self, rule: usize) {
        self.lower.rule_fired(rule);
    }

    fn alu_inst(&mut self, i: AluInst) -> Inst {
        i.into()
    }

    fn float_inst(&mut self, i: FloatInst) -> Inst {
        i.into()
    }

    fn mem_inst(&mut self, i: MemInst) -> Inst {
        i.into()
    }

    fn atomic_inst(&mut self, i: AtomicInst) -> Inst {
        i.into()
    }

    fn control_inst(&mut self, i: ControlInst) -> Inst {
        i.into()
    }

    fn def(&mut self, dst: VReg, inst: Inst) -> VReg {
        self.lower.emit(inst);
        dst
    }

    fn emit(&mut self, inst: Inst) -> Out {
        self.lower.emit(inst);
        Out::none()
    }

    fn int_reg(&mut self) -> VReg {
        self.int()
    }

    fn float_reg(&mut self) -> VReg {
        self.lower.alloc_vreg(RegClass::Float)
    }

    fn op_size(&mut self, ty: Type) -> Size {
        op_size(ty)
    }

    fn fp_size(&mut self, ty: Type) -> FpSize {
        fp_size(ty)
    }

    fn type_bits(&mut self, ty: Type) -> u8 {
        ty.bits() as u8
    }

    fn imm_bits(&mut self, ty: Type, n: i64) -> u64 {
        n as u64 & width_mask(ty)
    }

    fn bf_lsl(&mut self, s: Size, k: u8) -> Bitfield {
        Bitfield::lsl(s, u32::from(k)).expect("the rules shift by less than the width")
    }

    fn bf_shr(&mut self, s: Size, k: u8) -> Bitfield {
        Bitfield::shift_right(s, u32::from(k)).expect("the rules shift by less than the width")
    }

    fn rotr_amount(&mut self, s: Size, k: u8) -> ShiftAmount {
        ShiftAmount::new(s, u32::from(k)).expect("the rules rotate by less than the width")
    }

    fn mask_imm(&mut self, s: Size, m: u64) -> LogicalImm {
        let m = match s {
            Size::S32 => m & 0xFFFF_FFFF,
            Size::S64 => m,
        };
        LogicalImm::new(m, s).expect("the rules' masks are bitmask immediates")
    }

    fn put_in_reg(&mut self, v: Value) -> VReg {
        self.lower.value_vreg(v)
    }

    fn out_reg(&mut self, r: VReg) -> Out {
        Out::one(r)
    }

    fn nothing(&mut self) -> Out {
        Out::none()
    }

    fn value_type(&mut self, v: Value) -> Type {
        self.lower.value_type(v)
    }

    fn uext32(&mut self, v: Value) -> VReg {
        self.ext(false, v, Size::S32)
    }

    fn sext32(&mut self, v: Value) -> VReg {
        self.ext(true, v, Size::S32)
    }

    fn ext32(&mut self, signed: bool, v: Value) -> VReg {
        self.ext(signed, v, Size::S32)
    }

    fn uext_to(&mut self, v: Value, s: Size) -> VReg {
        self.ext(false, v, s)
    }

    fn sext_to(&mut self, v: Value, s: Size) -> VReg {
        self.ext(true, v, s)
    }

    fn arith_imm(&mut self, v: Value) -> Option<ArithImm> {
        let (op, imm) = arith_for(self.lower.const_value(v)?)?;
        (!self.lower.should_skip(Decision::ImmOperand)).then_some(ArithImm { value: v, op, imm })
    }

    fn arith_imm_neg(&mut self, v: Value) -> Option<ArithImm> {
        let (op, imm) = arith_for(self.lower.const_value(v)?.checked_neg()?)?;
        (!self.lower.should_skip(Decision::ImmOperand)).then_some(ArithImm { value: v, op, imm })
    }

    fn arith_op(&mut self, k: ArithImm) -> AddSub {
        k.op
    }

    fn arith_operand(&mut self, k: ArithImm) -> AddSubImm {
        self.lower.merge(k.value);
        k.imm
    }

    fn logic_imm_of(&mut self, v: Value) -> Option<LogicImmV> {
        let imm = logic_for(self.lower.value_type(v), self.lower.const_value(v)?)?;
        (!self.lower.should_skip(Decision::ImmOperand)).then_some(LogicImmV { value: v, imm })
    }

    fn logic_operand(&mut self, k: LogicImmV) -> LogicalImm {
        self.lower.merge(k.value);
        k.imm
    }

    fn shift_imm(&mut self, v: Value) -> Option<ShiftImm> {
        let imm = self.lower.const_value(v)?;
        (!self.lower.should_skip(Decision::ImmOperand)).then_some(ShiftImm { value: v, imm })
    }

    fn shift_count(&mut self, ty: Type, k: ShiftImm) -> u8 {
        self.lower.merge(k.value);
        (k.imm as u64 & u64::from(ty.bits() - 1)) as u8
    }

    fn shift_mask(&mut self, ty: Type) -> u64 {
        u64::from(ty.bits() - 1)
    }

    fn field_above(&mut self, ty: Type, k: u8) -> Bitfield {
        let (k, bits) = (u32::from(k), ty.bits());
        Bitfield::extract(op_size(ty), k, bits - k).expect("a field inside the type")
    }

    fn bit_above(&mut self, ty: Type) -> Bitfield {
        Bitfield::extract(Size::S32, ty.bits(), 1).expect("a narrow type's carry bit")
    }

    fn self_ext(&mut self, signed: bool, ty: Type, r: VReg) -> CmpRhs {
        CmpRhs::Ext(r, extend_of(signed, ty))
    }

    fn double_size(&mut self, ty: Type) -> Size {
        if ty.bits() == 32 {
            Size::S64
        } else {
            Size::S32
        }
    }

    fn ext_to(&mut self, signed: bool, v: Value, s: Size) -> VReg {
        self.ext(signed, v, s)
    }

    fn half_bits(&mut self, ty: Type) -> u8 {
        (ty.bits() / 2) as u8
    }

    fn make_pair(&mut self, a: VReg, b: VReg) -> Pair {
        Pair([a, b])
    }

    fn pair_lo(&mut self, p: Pair) -> VReg {
        p.0[0]
    }

    fn pair_hi(&mut self, p: Pair) -> VReg {
        p.0[1]
    }

    fn i128_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I128).then_some(ty)
    }

    fn i128_val(&mut self, v: Value) -> Option<Value> {
        (self.lower.value_type(v) == Type::I128).then_some(v)
    }

    fn ty_i64(&mut self) -> Type {
        Type::I64
    }

    fn pair_of(&mut self, v: Value) -> Pair {
        Pair(self.lower.value_pair(v))
    }

    fn out_pair(&mut self, p: Pair) -> Out {
        Out(smallvec::smallvec![p.0[0], p.0[1]])
    }

    fn low_bits(&mut self, v: Value) -> VReg {
        self.lower.value_lo(v)
    }

    fn alu_pair(&mut self, op: AddSub, a: Pair, b: Pair) -> Pair {
        self.pair_arith(op, a, b, None, None).0
    }

    fn pair_flag(&mut self, op: AddSub, cc: Cc, a: Pair, b: Pair) -> VReg {
        let (_, flag) = self.pair_arith(op, a, b, None, Some(cc));
        flag.expect("a flag was asked for")
    }

    fn alu_pair_flag(&mut self, op: AddSub, cc: Cc, a: Pair, b: Pair) -> Out {
        let done = self.pair_arith(op, a, b, None, Some(cc));
        self.pair_and_flag(done)
    }

    fn alu_pair_carry_flag(&mut self, op: AddSub, cc: Cc, a: Pair, b: Pair, cin: VReg) -> Out {
        let done = self.pair_arith(op, a, b, Some(cin), Some(cc));
        self.pair_and_flag(done)
    }

    fn runtime_call1(&mut self, routine: generated::Runtime, a: Value) -> Option<Out> {
        self.runtime_call(routine, &[a])
    }

    fn runtime_call2(&mut self, routine: generated::Runtime, a: Value, b: Value) -> Option<Out> {
        self.runtime_call(routine, &[a, b])
    }

    fn runtime_call_reg(&mut self, routine: generated::Runtime, ty: Type, a: VReg) -> Option<Pair> {
        let sig = abi::libcall_signature(&[ty], &[Type::I128]);
        let args = [smallvec::smallvec![a]];
        match abi::gen_call_regs(self.lower, runtime_dest(routine), &sig, &args) {
            Ok(regs) => Some(Pair([regs[0], regs[1]])),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    fn div_by_zero(&mut self) -> TrapCode {
        TrapCode::INTEGER_DIVISION_BY_ZERO
    }

    fn int_overflow(&mut self) -> TrapCode {
        TrapCode::INTEGER_OVERFLOW
    }

    fn bad_toint(&mut self) -> TrapCode {
        TrapCode::BAD_CONVERSION_TO_INTEGER
    }

    fn to128_low(&mut self, ty: Type, signed: bool) -> u64 {
        float_bits(ty, if signed { -(2f64.powi(127)) } else { -1.0 })
    }

    fn to128_high(&mut self, ty: Type, signed: bool) -> u64 {
        float_bits(ty, 2f64.powi(if signed { 127 } else { 128 }))
    }

    fn atomic_load128(&mut self, a: Value, trap: MaybeTrap) -> Out {
        let (dst, addr) = ([self.int(), self.int()], self.lower.value_vreg(a));
        self.lower.emit(AtomicInst::Load128 { dst, addr, trap });
        self.out_pair(Pair(dst))
    }

    fn atomic_store128(&mut self, v: Value, a: Value, trap: MaybeTrap) -> Out {
        let (src, addr) = (self.lower.value_pair(v), self.lower.value_vreg(a));
        self.lower.emit(AtomicInst::Store128 { src, addr, trap });
        Out::none()
    }

    fn atomic_rmw128(&mut self, op: AtomicRmwOp, a: Value, v: Value, trap: MaybeTrap) -> Out {
        let (dst, tmp) = ([self.int(), self.int()], self.int());
        let (addr, val) = (self.lower.value_vreg(a), self.lower.value_pair(v));
        self.lower.emit(AtomicInst::Rmw128 {
            op,
            dst,
            addr,
            val,
            tmp,
            trap,
        });
        self.out_pair(Pair(dst))
    }

    fn atomic_cas128(&mut self, a: Value, e: Value, r: Value, trap: MaybeTrap) -> Out {
        let dst = [self.int(), self.int()];
        let addr = self.lower.value_vreg(a);
        let (expected, repl) = (self.lower.value_pair(e), self.lower.value_pair(r));
        self.lower.emit(AtomicInst::Cas128 {
            dst,
            addr,
            expected,
            repl,
            trap,
        });
        self.out_pair(Pair(dst))
    }

    fn amode_wide(&mut self, addr: Value, offset: i32) -> Mem {
        self.wide_mem(addr, offset)
    }

    fn slot_mem_wide(&mut self, slot: StackSlot, offset: i32) -> Mem {
        self.wide_slot_mem(slot, offset)
    }

    fn mem_hi(&mut self, mem: Mem) -> Mem {
        super::lower_pair::mem_hi(mem)
    }

    fn out2(&mut self, a: VReg, b: VReg) -> Out {
        Out(smallvec::smallvec![a, b])
    }

    fn rotl_count(&mut self, ty: Type, k: u8) -> u8 {
        let bits = ty.bits() as u8;
        bits.wrapping_sub(k) & (bits - 1)
    }

    fn below_32(&mut self, ty: Type) -> u64 {
        u64::from(32 - ty.bits())
    }

    fn below_32_u8(&mut self, ty: Type) -> u8 {
        (32 - ty.bits()) as u8
    }

    fn sub_const(&mut self, r: VReg, k: u64) -> VReg {
        let dst = self.int();
        self.lower.emit(AluInst::AddImm {
            op: AddSub::Sub,
            size: Size::S32,
            dst,
            a: r,
            imm: AddSubImm::new(k).expect("the rules subtract small constants"),
        });
        dst
    }

    fn above_width(&mut self, ty: Type) -> u64 {
        1 << ty.bits()
    }

    fn cmp_imm(&mut self, v: Value) -> Option<CmpImm> {
        let imm = self.lower.const_value(v)?;
        Some(CmpImm {
            value: v,
            imm,
            rhs: None,
        })
    }

    fn cmp_imm_fits(&mut self, cc: IntCC, ty: Type, k: CmpImm) -> Option<CmpImm> {
        let rhs = cmp_rhs_for(cc, ty, k.imm)?;
        if self.lower.should_skip(Decision::ImmOperand) {
            return None;
        }
        Some(CmpImm {
            rhs: Some(rhs),
            ..k
        })
    }

    fn cmp_operand(&mut self, k: CmpImm) -> CmpRhs {
        self.lower.merge(k.value);
        k.rhs.expect("checked by cmp_imm_fits")
    }

    fn cmp_reg(&mut self, r: VReg) -> CmpRhs {
        CmpRhs::Reg(r)
    }

    fn cmp_ext(&mut self, cc: IntCC, ty: Type, r: VReg) -> CmpRhs {
        CmpRhs::Ext(r, cmp_extend(cc, ty))
    }

    fn int_cc(&mut self, cc: IntCC) -> Cc {
        int_cc(cc)
    }

    fn signed_cc(&mut self, cc: IntCC) -> bool {
        signed_cc(cc)
    }

    fn low_mask(&mut self, ty: Type) -> Option<LogicalImm> {
        if ty.bits() >= 32 {
            return None;
        }
        LogicalImm::new(width_mask(ty), Size::S32)
    }

    fn make_cmp(&mut self, value: Value, cc: IntCC, a: Value, b: Value) -> Cmp {
        Cmp { value, cc, a, b }
    }

    fn make_fcmp(&mut self, value: Value, cc: FloatCC, a: Value, b: Value) -> FCmp {
        FCmp { value, cc, a, b }
    }

    fn icmp_merge(&mut self, v: Value) -> Option<Cmp> {
        let inst = self.lower.mergeable_inst(v, self.inst)?;
        let cmp = generated::constructor_icmp_parts(self, v, inst)?;
        // The compared values must fit a register (an i128 compare is no scalar test).
        (!self.lower.should_skip(Decision::IcmpFusion)).then_some(cmp)
    }

    fn cond_of(&mut self, m: Cmp) -> Cond {
        self.lower.merge(m.value);
        generated::constructor_cmp_cond(self, m.cc, m.a, m.b)
    }

    fn fcmp_merge(&mut self, v: Value) -> Option<FCmp> {
        let inst = self.lower.mergeable_inst(v, self.inst)?;
        let m = generated::constructor_fcmp_parts(self, v, inst)?;
        (!self.lower.should_skip(Decision::FcmpFusion)).then_some(m)
    }

    fn fcond_of(&mut self, m: FCmp) -> Cond {
        self.lower.merge(m.value);
        generated::constructor_float_cond(self, m.cc, m.a, m.b)
    }

    fn invert(&mut self, c: Cond) -> Cond {
        c.invert()
    }

    fn zero_cmp(&mut self) -> CmpRhs {
        CmpRhs::Imm(AddSubImm::new(0).expect("0 fits"))
    }

    fn branch(&mut self, cond: Cond) -> Out {
        self.lower.emit(ControlInst::CondBr {
            cond,
            taken: self.targets[0],
            not_taken: self.targets[1],
        });
        Out::none()
    }

    fn jump(&mut self) -> Out {
        self.lower.emit(ControlInst::Jmp {
            target: self.targets[0],
        });
        Out::none()
    }

    fn br_table(&mut self, index: Value) -> Out {
        if self.targets.len() == 1 {
            return self.jump();
        }
        // The index is compared and scaled at 32 bits (`uxtw`) or 64: a narrow one is
        // zero-extended so that no garbage bit takes part.
        let ty = self.lower.value_type(index);
        let idx = self.ext(false, index, op_size(ty));
        self.lower.emit(ControlInst::JmpTable {
            size: op_size(ty),
            idx,
            targets: self.targets.into(),
        });
        Out::none()
    }

    fn ret(&mut self, i: IrInst) -> Option<Out> {
        let f = self.lower.f;
        let args: SmallVec<[Value; 8]> = f.dfg.inst(i).arguments(&f.dfg.pool).collect();
        let done = abi::gen_return(self.lower, &args);
        self.result(done.map(|()| Results::new()))
    }

    fn call(&mut self, i: IrInst) -> Option<Out> {
        let f = self.lower.f;
        let InstructionData::Call { func_ref, args, .. } = *f.dfg.inst(i) else {
            return None;
        };
        let ext = &f.ext_funcs[func_ref];
        let sig = &f.signatures[ext.signature];
        let dest = CallDest::Direct(Arc::new(ext.name.clone()));
        let done = abi::gen_call(self.lower, dest, sig, f.dfg.pool.get(args));
        self.result(done)
    }

    fn call_indirect(&mut self, i: IrInst) -> Option<Out> {
        let f = self.lower.f;
        let InstructionData::CallIndirect { sig_ref, args, .. } = *f.dfg.inst(i) else {
            return None;
        };
        let args = f.dfg.pool.get(args);
        let target = self.lower.value_vreg(args[0]);
        let sig = &f.signatures[sig_ref];
        let done = abi::gen_call(self.lower, CallDest::Indirect(target), sig, &args[1..]);
        self.result(done)
    }

    fn func_addr(&mut self, func: kestrel_ir::FuncRef) -> VReg {
        let callee = &self.lower.f.ext_funcs[func];
        let (name, got) = (Arc::new(callee.name.clone()), !callee.colocated);
        self.symbol_addr(name, 0, got)
    }

    fn global_value(&mut self, gv: GlobalValue) -> Option<Out> {
        let done = self
            .global_value_vreg(gv, 0)
            .map(|r| smallvec::smallvec![r]);
        self.result(done)
    }

    fn amode(&mut self, addr: Value, offset: i32) -> Mem {
        self.addr_mem(addr, offset)
    }

    fn slot_mem(&mut self, slot: StackSlot, offset: i32) -> Mem {
        Mem::Slot {
            slot: slot.index() as u32,
            off: offset,
        }
    }

    fn little(&mut self, flags: MemFlags) -> Option<MemFlags> {
        (flags.endianness != Some(Endianness::Big)).then_some(flags)
    }

    fn big(&mut self, flags: MemFlags) -> Option<MemFlags> {
        (flags.endianness == Some(Endianness::Big)).then_some(flags)
    }

    fn bf_sext64(&mut self, bits: u8) -> Bitfield {
        Bitfield::extract(Size::S64, 0, u32::from(bits)).expect("16 or 32 bits")
    }

    fn mem_trap(&mut self, flags: MemFlags) -> MaybeTrap {
        flags.trap_code
    }

    fn no_trap(&mut self) -> MaybeTrap {
        None
    }

    fn mem_size(&mut self, ty: Type) -> MemSize {
        mem_size(ty)
    }

    fn fp_mem_size(&mut self, ty: Type) -> FpMemSize {
        fp_mem_size(ty)
    }

    fn load(&mut self, kind: LoadKind, mem: Mem, trap: MaybeTrap) -> VReg {
        let class = match kind {
            LoadKind::Int { .. } => RegClass::Int,
            LoadKind::Float { .. } => RegClass::Float,
        };
        let dst = self.lower.alloc_vreg(class);
        self.lower.emit(MemInst::Load {
            kind,
            dst,
            mem,
            trap,
        });
        dst
    }

    fn slot_index(&mut self, slot: StackSlot) -> u32 {
        slot.index() as u32
    }

    fn sign_mask(&mut self, ty: Type) -> u64 {
        1 << (ty.bits() - 1)
    }

    fn abs_mask(&mut self, ty: Type) -> u64 {
        width_mask(ty) >> 1
    }
}

/// A runtime routine as a call destination: `__` and its name in lower case.
pub(super) fn runtime_dest(routine: generated::Runtime) -> CallDest {
    let name = format!("__{}", format!("{routine:?}").to_lowercase());
    CallDest::Direct(Arc::new(kestrel_ir::FunctionName::Named(name)))
}

/// The bits of `x` as a float of `ty` (exact for the powers of two the bounds use).
fn float_bits(ty: Type, x: f64) -> u64 {
    if ty == Type::F32 {
        u64::from((x as f32).to_bits())
    } else {
        x.to_bits()
    }
}

/// Lower one non-branch IR instruction by the rules, giving its result registers with
/// `Lower::set_outputs`; `Ok(false)` when no rule matches.
pub fn lower_inst(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
    features: CpuFeatures,
) -> Result<bool, CodegenError> {
    let mut ctx = IselCtx {
        lower,
        inst,
        targets: &[],
        error: None,
        features,
    };
    let lowered = generated::constructor_lower(&mut ctx, inst);
    // The list is read where the selector left it: moving it out of the `Option` would
    // copy it wide right after it was written in pieces, and stall.
    let regs = lowered.as_ref().map(|out| out.0.as_slice());
    ctx.lower.selected(regs, &mut ctx.error)
}

/// Lower a block terminator with its lowered successors.
pub fn lower_branch(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
    targets: &[BlockIndex],
    features: CpuFeatures,
) -> Option<()> {
    let mut ctx = IselCtx {
        lower,
        inst,
        targets,
        error: None,
        features,
    };
    generated::constructor_lower_branch(&mut ctx, inst).map(|_| ())
}
