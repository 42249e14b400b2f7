//! The glue between the generated AArch64 selector (`lower.rules`, `lower_i128.rules`,
//! `lower_vec.rules`) and the Lower driver (the vector externs are `lower_vec.rs`'s).
//!
//! # Contract
//!
//! Implements the generated `Context` trait with the externs the rules call (those every
//! ISA implements alike come from `isel_prelude_externs!`, `machinst::isel`): extractors
//! describe IR instructions and constants to the rules (read-only; they never merge
//! anything), and constructors build operands or emit an instruction the rules built
//! (`def`, `emit`) or one the rules cannot build yet (extensions by type, the ABI, jump
//! tables, symbol addresses). The only externs that record a merge are those that consume
//! a merged producer (`arith_operand`, `logic_operand`, `shift_count`, `cmp_operand` for an
//! `iconst`, `cond_of`/`fcond_of` for a compare, `mem_folded`/`mem_reg_reg` for an address
//! `iadd` the `amode` rules fold), so a failed rule leaves the use counts untouched. Calls
//! and returns go through the ABI (`abi.rs`) and are partial; one that fails keeps its
//! error in `IselCtx::error`, which [`lower_inst`] returns instead of "unsupported".
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
use kestrel_ir::{
    AtomicRmwOp, FloatCC, GlobalValue, Inst as IrInst, IntCC, MemFlags, StackSlot, Type, Value,
};
use kestrel_regalloc::{RegClass, VReg};

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
use super::asm::simd::{AcrossOp, Elem, NarrowOp, ShiftImmOp, VecBinOp, VecUnaryOp};
use super::asm::{FpMemSize, FpSize, MemSize, Size};
use super::inst::{
    AluInst, AluOp, AtomicInst, BrTable, CallDest, CmpRhs, Cond, ControlInst, DivKind, FloatInst,
    FrameValue, Inst, LoadKind, Mem, MemInst, StoreKind, UnaryOp, VecInst,
};
use super::isel::*;
use crate::chaos::Decision;
use crate::machinst::ir_ops::Op;
use crate::machinst::isel::isel_prelude_externs;
use crate::machinst::isel::vec::{VecLanes, V128};

pub(super) mod generated {
    use super::*;
    // The IR types of `ir_ops.rules` that the rest of this file does not import.
    use kestrel_ir::{Constant, FuncRef, Immediate, TrapCode};
    include!(concat!(env!("OUT_DIR"), "/aarch64_lower.rs"));
}
// Enums the rules declare for themselves (the DSL generates them).
pub use generated::{LoadWidth, StoreWidth};

impl generated::Context for IselCtx<'_, '_> {
    isel_prelude_externs!();
    super::lower_vec::vec_externs!();

    fn narrow_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I8 || ty == Type::I16).then_some(ty)
    }

    fn wide_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I32 || ty == Type::I64).then_some(ty)
    }

    fn has_lse(&mut self, _: IrInst) -> Option<()> {
        self.features.lse.then_some(())
    }

    fn float_inst(&mut self, i: FloatInst) -> Inst {
        i.into()
    }

    fn op_size(&mut self, ty: Type) -> Size {
        op_size(ty)
    }

    fn fp_size(&mut self, ty: Type) -> FpSize {
        fp_size(ty)
    }

    fn type_bits_u8(&mut self, ty: Type) -> u8 {
        ty.bits() as u8
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

    fn shift_imm(&mut self, v: Value) -> Option<Imm> {
        let imm = self.lower.const_value(v)?;
        (!self.lower.should_skip(Decision::ImmOperand)).then_some(Imm { value: v, imm })
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

    fn half_bits_u8(&mut self, ty: Type) -> u8 {
        (ty.bits() / 2) as u8
    }

    fn addsub_pair(&mut self, op: AddSub, a: Pair, b: Pair) -> Pair {
        self.pair_arith(op, a, b, None, None).0
    }

    fn pair_flag(&mut self, op: AddSub, cc: Cc, a: Pair, b: Pair) -> VReg {
        let (_, flag) = self.pair_arith(op, a, b, None, Some(cc));
        flag.expect("a flag was asked for")
    }

    fn addsub_pair_flag(&mut self, op: AddSub, cc: Cc, a: Pair, b: Pair) -> Out {
        let done = self.pair_arith(op, a, b, None, Some(cc));
        self.pair_and_flag(done)
    }

    fn addsub_pair_carry_flag(&mut self, op: AddSub, cc: Cc, a: Pair, b: Pair, cin: VReg) -> Out {
        let done = self.pair_arith(op, a, b, Some(cin), Some(cc));
        self.pair_and_flag(done)
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

    fn wide_mem(&mut self, mem: Mem) -> Mem {
        self.widened(mem)
    }

    fn slot_mem_wide(&mut self, slot: StackSlot, offset: i32) -> Mem {
        self.wide_slot_mem(slot, offset)
    }

    fn mem_hi(&mut self, mem: Mem) -> Mem {
        super::lower_pair::mem_hi(mem)
    }

    fn rotl_count(&mut self, ty: Type, k: u8) -> u8 {
        let bits = ty.bits() as u8;
        bits.wrapping_sub(k) & (bits - 1)
    }

    fn below_32_u64(&mut self, ty: Type) -> u64 {
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

    fn above_width_u64(&mut self, ty: Type) -> u64 {
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

    fn zero_cmp(&mut self) -> CmpRhs {
        CmpRhs::Imm(AddSubImm::new(0).expect("0 fits"))
    }

    fn br_table(&mut self, index: Value) -> Out {
        if self.targets.len() == 1 {
            return self.jump();
        }
        // The index is compared and scaled at 32 bits (`uxtw`) or 64: a narrow one is
        // zero-extended so that no garbage bit takes part.
        let ty = self.lower.value_type(index);
        let idx = self.ext(false, index, op_size(ty));
        self.lower.emit(ControlInst::Table {
            table: BrTable {
                size: op_size(ty),
                idx,
            },
            targets: self.targets.into(),
        });
        Out::none()
    }

    fn func_addr(&mut self, func: kestrel_ir::FuncRef) -> VReg {
        let callee = &self.lower.f.ext_funcs[func];
        let (name, got) = (Arc::new(callee.name.clone()), !callee.colocated);
        self.symbol_addr(name, 0, got)
    }

    fn addr_iadd(&mut self, addr: Value) -> Option<generated::Operands2> {
        let inst = self.lower.mergeable_inst(addr, self.inst)?;
        generated::constructor_iadd_parts(self, addr, inst)
    }

    fn offset_plus(&mut self, offset: i32, k: Value) -> Option<i32> {
        let sum = i64::from(offset).checked_add(self.lower.const_value(k)?)?;
        let sum = i32::try_from(sum).ok()?;
        (!self.lower.should_skip(Decision::AddrConstFold)).then_some(sum)
    }

    fn add_fold(&mut self) -> Option<bool> {
        (!self.lower.should_skip(Decision::AddrAddFold)).then_some(true)
    }

    fn mem_folded(&mut self, addr: Value, k: Value, x: Value, off: i32) -> Mem {
        self.lower.merge(addr);
        self.lower.merge(k);
        let base = self.lower.value_vreg(x);
        Mem::Reg { base, off }
    }

    fn mem_reg_reg(&mut self, addr: Value, a: Value, b: Value) -> Mem {
        self.lower.merge(addr);
        let base = self.lower.value_vreg(a);
        let index = self.lower.value_vreg(b);
        Mem::RegReg { base, index }
    }

    fn mem_reg(&mut self, addr: Value, off: i32) -> Mem {
        let base = self.lower.value_vreg(addr);
        Mem::Reg { base, off }
    }

    fn slot_mem(&mut self, slot: StackSlot, offset: i32) -> Mem {
        Mem::Slot {
            slot: slot.index() as u32,
            off: offset,
        }
    }

    fn bf_sext64(&mut self, bits: u8) -> Bitfield {
        Bitfield::extract(Size::S64, 0, u32::from(bits)).expect("16 or 32 bits")
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

    fn sign_mask(&mut self, ty: Type) -> u64 {
        1 << (ty.bits() - 1)
    }
}

/// A runtime routine as a call destination: `__` and its name in lower case.
pub(super) fn runtime_dest(routine: generated::Runtime) -> CallDest {
    CallDest::Direct(crate::machinst::isel::runtime_name(routine))
}

/// The bits of `x` as a float of `ty` (exact for the powers of two the bounds use).
fn float_bits(ty: Type, x: f64) -> u64 {
    if ty == Type::F32 {
        u64::from((x as f32).to_bits())
    } else {
        x.to_bits()
    }
}

/// Every selection rule of the AArch64 `lower.rules`, as `FILE:LINE` (with the rule's name,
/// if any); `CompiledCode::rules_fired` indexes this list.
pub fn lowering_rules() -> &'static [&'static str] {
    const _: () = assert!(crate::machinst::isel::rule_indices_fit(
        generated::RULE_SITES
    ));
    generated::RULE_SITES
}
