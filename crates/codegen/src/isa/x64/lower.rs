//! The glue between the generated x86-64 selector (`lower.rules`) and the Lower driver.
//!
//! # Contract
//!
//! Implements the generated `Context` trait: extractors describe IR instructions to the
//! rules (read-only; they never merge anything), constructors emit [`Inst`]s into the current
//! IR instruction's sequence and return the registers holding results. The only constructors
//! that record a merge are those that consume a merged producer (`alu_imm`, `imul_imm`,
//! `shift_imm`, `cond_of`, `fcond_of`, `alu_mem`/`imul_mem` for a load, and `cmp_cond` for an immediate
//! or load operand; a load's address folds in `lower_mem::addr_mem`), so a failed rule
//! leaves the use counts untouched. Calls and returns are lowered here directly through the ABI.
//!
//! Every merge is optional: the extractors `imm32`, `icmp_merge`, `fcmp_merge` and
//! `load_merge` (and `cmp_cond` for a constant operand) ask the chaos control
//! ([`Decision::ImmOperand`], [`Decision::IcmpFusion`], [`Decision::FcmpFusion`],
//! [`Decision::LoadSink`]) once the merge is possible, and report
//! no match when told to skip, so a lower-priority rule takes the general form. The rules
//! report each firing through `rule_fired` (indices into [`lowering_rules`]).

use kestrel_ir::{FloatCC, Inst as IrInst, InstructionData, IntCC, Opcode, TrapCode, Type, Value};
use kestrel_regalloc::{RegClass, VReg};

use super::abi;
use super::asm::alu::{AluOp, UnaryOp};
use super::asm::bits::{BitCount, ShiftX};
use super::asm::moves::ExtMode;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::shift::ShiftOp;
use super::asm::sse::{FloatSize, RoundMode, SseOp};
use super::asm::Size;
use super::features::CpuFeatures;
use super::inst::{CallDest, Cond, Inst, Pred, RegImm};
use super::lower_op::op_of;
pub use super::lower_op::Op;
use crate::chaos::Decision;
use crate::machinst::lower::{Lower, Results};
use crate::machinst::{BlockIndex, CodegenError};

mod generated {
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/x64_lower.rs"));
}

// `CompiledCode::rules_fired` holds rule indices as `u16`.
const _: () = assert!(generated::RULE_SITES.len() <= u16::MAX as usize);

/// Every selection rule of `lower.rules`, as `FILE:LINE` (with the rule's name, if any);
/// `CompiledCode::rules_fired` indexes this list.
pub fn lowering_rules() -> &'static [&'static str] {
    generated::RULE_SITES
}

/// Which division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DivKind {
    Udiv,
    Sdiv,
    Urem,
    Srem,
}

/// A constant operand that a user may fold: the value and its sign-extended bits.
#[derive(Clone, Copy, Debug)]
pub struct Imm {
    value: Value,
    imm: i64,
}

/// A mergeable `icmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct Cmp {
    value: Value,
    cc: IntCC,
    a: Value,
    b: Value,
}

/// A mergeable `fcmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct FCmp {
    value: Value,
    cc: FloatCC,
    a: Value,
    b: Value,
}

/// A load its single ALU user may perform: the loaded value, the load and its address.
#[derive(Clone, Copy, Debug)]
pub struct Ld {
    value: Value,
    load: IrInst,
    addr: Value,
    offset: i32,
    trap: Option<TrapCode>,
}

/// The registers an IR instruction's results live in (none for side effects).
#[derive(Clone, Copy, Debug)]
pub struct Out([Option<VReg>; 3]);

impl Out {
    /// A two-register result (low half first).
    pub(super) fn two(lo: VReg, hi: VReg) -> Out {
        Out([Some(lo), Some(hi), None])
    }

    /// A two-register result and a one-register flag.
    pub(super) fn three(lo: VReg, hi: VReg, flag: VReg) -> Out {
        Out([Some(lo), Some(hi), Some(flag)])
    }
}

/// Bitwise operations on float registers (`AndNot` is `!a & b`).
#[derive(Clone, Copy, Debug)]
pub enum FBitOp {
    And,
    Or,
    Xor,
    AndNot,
}

/// Float arithmetic selected by `fbinop`.
#[derive(Clone, Copy, Debug)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
}

pub(super) fn float_size(ty: Type) -> FloatSize {
    if ty == Type::F32 {
        FloatSize::F32
    } else {
        FloatSize::F64
    }
}

/// The scalar SSE operation for `ty`: `ss` for f32, `sd` for f64.
fn sse_for(ty: Type, single: SseOp, double: SseOp) -> SseOp {
    match float_size(ty) {
        FloatSize::F32 => single,
        FloatSize::F64 => double,
    }
}

/// Selection state for one IR instruction.
pub struct IselCtx<'a, 'f> {
    pub lower: &'a mut Lower<'f, Inst>,
    /// The instruction being lowered.
    pub inst: IrInst,
    /// The lowered successors, for a terminator.
    pub targets: &'a [BlockIndex],
    /// What the target CPU has: an instruction it lacks gets its baseline fallback.
    pub features: CpuFeatures,
}

/// The operation size for a type whose upper bits may be garbage (8/16 use 32-bit forms).
fn op_size(ty: Type) -> Size {
    if ty.bits() == 64 {
        Size::S64
    } else {
        Size::S32
    }
}

/// The exact size of an integer type.
pub(super) fn exact_size(ty: Type) -> Size {
    match ty.bits() {
        8 => Size::S8,
        16 => Size::S16,
        32 => Size::S32,
        _ => Size::S64,
    }
}

/// The sign bit of a float type's bits.
fn sign_bit(ty: Type) -> u64 {
    1 << (ty.bits() - 1)
}

/// All bits of a float type.
fn width_mask(ty: Type) -> u64 {
    if ty.bits() == 64 {
        u64::MAX
    } else {
        (1 << ty.bits()) - 1
    }
}

fn int_cc(cc: IntCC) -> Cc {
    match cc {
        IntCC::Equal => Cc::E,
        IntCC::NotEqual => Cc::NE,
        IntCC::SignedLessThan => Cc::L,
        IntCC::SignedGreaterThanOrEqual => Cc::GE,
        IntCC::SignedGreaterThan => Cc::G,
        IntCC::SignedLessThanOrEqual => Cc::LE,
        IntCC::UnsignedLessThan => Cc::B,
        IntCC::UnsignedGreaterThanOrEqual => Cc::AE,
        IntCC::UnsignedGreaterThan => Cc::A,
        IntCC::UnsignedLessThanOrEqual => Cc::BE,
    }
}

impl IselCtx<'_, '_> {
    fn int(&mut self) -> VReg {
        self.lower.alloc_vreg(RegClass::Int)
    }

    pub(super) fn ext(&mut self, signed: bool, a: Value, to_bits: u32) -> VReg {
        let from = self.lower.value_type(a).bits();
        let src = self.lower.value_vreg(a);
        let mode = match (from, to_bits == 64) {
            (8, false) => ExtMode::BL,
            (8, true) => ExtMode::BQ,
            (16, false) => ExtMode::WL,
            (16, true) => ExtMode::WQ,
            (32, true) => ExtMode::LQ,
            // Same width (32 → 32 is not an IR extension; a no-op for safety).
            _ => return src,
        };
        let dst = self.int();
        self.lower.emit(Inst::Ext {
            mode,
            signed,
            dst,
            src,
        });
        dst
    }

    /// `op` (`Lzcnt`, `Tzcnt` or `Popcnt`) of `src` at `size` (32 or 64 bits), with
    /// baseline code when the target lacks the instruction:
    ///
    /// - LZCNT: `bsr` gives the index `i` of the highest set bit; `clz = i ^ (w - 1)`. For a
    ///   zero source `bsr` sets ZF and leaves its destination undefined, so a `test`/`cmov`
    ///   substitutes `2w - 1`, which the `xor` turns into `w`.
    /// - TZCNT: `bsf`, with `w` substituted for a zero source the same way.
    /// - POPCNT: the SWAR sum (bit pairs, nibbles, bytes, then a multiply by `0x0101…` that
    ///   adds the byte counts into the top byte).
    pub(super) fn count_bits(&mut self, op: BitCount, size: Size, src: VReg) -> VReg {
        let have = match op {
            BitCount::Lzcnt => self.features.lzcnt,
            BitCount::Tzcnt => self.features.bmi1,
            BitCount::Popcnt => self.features.popcnt,
            BitCount::Bsf | BitCount::Bsr => true,
        };
        if have {
            let dst = self.int();
            self.lower.emit(Inst::BitCount { op, size, dst, src });
            return dst;
        }
        let width: u64 = if size == Size::S64 { 64 } else { 32 };
        let scan = |ctx: &mut Self, op: BitCount, zero_result: u64| {
            let idx = ctx.int();
            ctx.lower.emit(Inst::BitCount {
                op,
                size,
                dst: idx,
                src,
            });
            let alt = ctx.int();
            ctx.lower.emit(Inst::MovImm {
                dst: alt,
                imm: zero_result,
            });
            let dst = ctx.int();
            ctx.lower.emit(Inst::Cmov {
                cond: Cond::Test {
                    size,
                    cc: Cc::E,
                    a: src,
                },
                t: alt,
                f: idx,
                dst,
            });
            dst
        };
        match op {
            BitCount::Lzcnt => {
                let idx = scan(self, BitCount::Bsr, 2 * width - 1);
                self.alu_at(AluOp::Xor, size, idx, RegImm::Imm(width as i32 - 1))
            }
            BitCount::Tzcnt => scan(self, BitCount::Bsf, width),
            _ => self.popcnt_swar(size, src),
        }
    }

    /// `dst = a op b` at `size`.
    fn alu_at(&mut self, op: AluOp, size: Size, a: VReg, b: RegImm) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::Alu {
            op,
            size,
            dst,
            a,
            b,
        });
        dst
    }

    /// `dst = a op imm` at `size`.
    fn shift_at(&mut self, op: ShiftOp, size: Size, a: VReg, imm: u8) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::ShiftImm {
            op,
            size,
            dst,
            a,
            imm,
        });
        dst
    }

    /// The population count of `x` at `size` without POPCNT (see [`Self::count_bits`]).
    fn popcnt_swar(&mut self, size: Size, x: VReg) -> VReg {
        let wide = size == Size::S64;
        // A byte pattern repeated across the width: an immediate at 32 bits (every pattern
        // is below 2^31), a register at 64.
        let pattern = |ctx: &mut Self, byte: u8| {
            if wide {
                let r = ctx.int();
                ctx.lower.emit(Inst::MovImm {
                    dst: r,
                    imm: u64::from(byte) * 0x0101_0101_0101_0101,
                });
                RegImm::Reg(r)
            } else {
                RegImm::Imm(i32::from(byte) * 0x0101_0101)
            }
        };
        // x - ((x >> 1) & 0x55…): two-bit counts.
        let m1 = pattern(self, 0x55);
        let t = self.shift_at(ShiftOp::Shr, size, x, 1);
        let t = self.alu_at(AluOp::And, size, t, m1);
        let x = self.alu_at(AluOp::Sub, size, x, RegImm::Reg(t));
        // (x & 0x33…) + ((x >> 2) & 0x33…): nibble counts.
        let m2 = pattern(self, 0x33);
        let t = self.shift_at(ShiftOp::Shr, size, x, 2);
        let t = self.alu_at(AluOp::And, size, t, m2);
        let x = self.alu_at(AluOp::And, size, x, m2);
        let x = self.alu_at(AluOp::Add, size, x, RegImm::Reg(t));
        // (x + (x >> 4)) & 0x0f…: byte counts.
        let m4 = pattern(self, 0x0f);
        let t = self.shift_at(ShiftOp::Shr, size, x, 4);
        let x = self.alu_at(AluOp::Add, size, x, RegImm::Reg(t));
        let x = self.alu_at(AluOp::And, size, x, m4);
        // The multiply sums every byte into the top one.
        let h = pattern(self, 0x01);
        let p = self.int();
        self.lower.emit(Inst::Imul {
            size,
            dst: p,
            a: x,
            b: h,
        });
        let top = if wide { 56 } else { 24 };
        self.shift_at(ShiftOp::Shr, size, p, top)
    }

    /// Reverse the bits of the low `ty.bits()` of `x`: swap adjacent bits, pairs and nibbles
    /// with masks, then reverse the bytes. Bits above the width are masked away at each step
    /// before they can reach the low part.
    pub(super) fn bitrev_reg(&mut self, ty: Type, x: VReg) -> VReg {
        let size = op_size(ty);
        let mut x = x;
        for (sh, m) in [
            (1u8, 0x5555_5555_5555_5555u64),
            (2, 0x3333_3333_3333_3333),
            (4, 0x0f0f_0f0f_0f0f_0f0f),
        ] {
            let mask = if size == Size::S64 {
                let r = self.int();
                self.lower.emit(Inst::MovImm { dst: r, imm: m });
                RegImm::Reg(r)
            } else {
                RegImm::Imm(m as u32 as i32)
            };
            let alu = |this: &mut Self, op, a, b| {
                let dst = this.int();
                this.lower.emit(Inst::Alu {
                    op,
                    size,
                    dst,
                    a,
                    b,
                });
                dst
            };
            let shift = |this: &mut Self, op, a| {
                let dst = this.int();
                this.lower.emit(Inst::ShiftImm {
                    op,
                    size,
                    dst,
                    a,
                    imm: sh,
                });
                dst
            };
            let t1 = shift(self, ShiftOp::Shr, x);
            let t1 = alu(self, AluOp::And, t1, mask);
            let t2 = alu(self, AluOp::And, x, mask);
            let t2 = shift(self, ShiftOp::Shl, t2);
            x = alu(self, AluOp::Or, t1, RegImm::Reg(t2));
        }
        if ty.bits() == 8 {
            return x;
        }
        let dst = self.int();
        self.lower.emit(Inst::Bswap {
            size: exact_size(ty),
            dst,
            a: x,
        });
        dst
    }

    fn xmm_rmr(&mut self, op: SseOp, a: VReg, b: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::XmmRmR { op, dst, a, b });
        dst
    }

    fn xmm_unary(&mut self, op: SseOp, src: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::XmmUnary { op, dst, src });
        dst
    }

    fn minmax(&mut self, ty: Type, max: bool, a: VReg, b: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::FMinMax {
            size: float_size(ty),
            max,
            dst,
            a,
            b,
        });
        dst
    }

    fn cvt_int(&mut self, ty: Type, isize: Size, src: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::CvtIntToFloat {
            fsize: float_size(ty),
            isize,
            dst,
            src,
        });
        dst
    }

    /// `a op [load]` (`None`: multiply), performing the merged load `m`.
    fn mem_op(&mut self, ty: Type, op: Option<AluOp>, a: VReg, m: Ld) -> VReg {
        self.lower.sink_load(m.value);
        let mem = super::lower_mem::addr_mem(self.lower, m.load, m.addr, m.offset, 0);
        let dst = self.int();
        self.lower.emit(Inst::AluMem {
            op,
            size: op_size(ty),
            dst,
            a,
            mem,
            trap: m.trap,
        });
        dst
    }

    pub(super) fn test(&mut self, c: Value, cc: Cc) -> Cond {
        if self.lower.value_type(c) == Type::I128 {
            return self.i128_test(c, cc);
        }
        let size = exact_size(self.lower.value_type(c));
        let a = self.lower.value_vreg(c);
        Cond::Test { size, cc, a }
    }

    /// `a <cc> b` for floats as `ucomis` flags. Unordered sets ZF, PF and CF, `x < y` sets
    /// CF, equal sets ZF; so `lt`/`le`/`ugt`/`uge` swap the operands, and only `eq` (ZF
    /// without PF) and `ne` (its negation) need two flags.
    fn fcmp_cond(&mut self, cc: FloatCC, a: Value, b: Value) -> Cond {
        use FloatCC::*;
        use Pred::{And, One, Or};
        let size = float_size(self.lower.value_type(a));
        let (swap, pred) = match cc {
            Ordered => (false, One(Cc::NP)),
            Unordered => (false, One(Cc::P)),
            Equal => (false, And(Cc::E, Cc::NP)),
            NotEqual => (false, Or(Cc::NE, Cc::P)),
            OrderedNotEqual => (false, One(Cc::NE)),
            UnorderedOrEqual => (false, One(Cc::E)),
            GreaterThan => (false, One(Cc::A)),
            GreaterThanOrEqual => (false, One(Cc::AE)),
            LessThan => (true, One(Cc::A)),
            LessThanOrEqual => (true, One(Cc::AE)),
            UnorderedOrLessThan => (false, One(Cc::B)),
            UnorderedOrLessThanOrEqual => (false, One(Cc::BE)),
            UnorderedOrGreaterThan => (true, One(Cc::B)),
            UnorderedOrGreaterThanOrEqual => (true, One(Cc::BE)),
        };
        let (mut x, mut y) = (self.lower.value_vreg(a), self.lower.value_vreg(b));
        if swap {
            std::mem::swap(&mut x, &mut y);
        }
        Cond::Fcmp {
            size,
            pred,
            a: x,
            b: y,
        }
    }
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

    fn float_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::F32 || ty == Type::F64).then_some(ty)
    }

    fn imm32(&mut self, v: Value) -> Option<Imm> {
        let imm = self.lower.const_value(v)?;
        i32::try_from(imm).ok()?;
        if self.lower.should_skip(Decision::ImmOperand) {
            return None;
        }
        Some(Imm { value: v, imm })
    }

    fn icmp_merge(&mut self, v: Value) -> Option<Cmp> {
        let inst = self.lower.mergeable_inst(v, self.inst)?;
        let cmp = match *self.lower.data(inst) {
            InstructionData::IntCompare {
                opcode: Opcode::Icmp,
                cond,
                args: [a, b],
            } => Cmp {
                value: v,
                cc: cond,
                a,
                b,
            },
            _ => return None,
        };
        (!self.lower.should_skip(Decision::IcmpFusion)).then_some(cmp)
    }

    fn load_merge(&mut self, v: Value) -> Option<Ld> {
        let load = self.lower.mergeable_load(v, self.inst)?;
        let ty = self.lower.value_type(v);
        match *self.lower.data(load) {
            InstructionData::Load {
                opcode: Opcode::Load,
                flags,
                arg,
                offset,
            } if (ty == Type::I32 || ty == Type::I64)
                && flags.endianness != Some(kestrel_ir::immediates::Endianness::Big)
                && !self.lower.should_skip(Decision::LoadSink) =>
            {
                Some(Ld {
                    value: v,
                    load,
                    addr: arg,
                    offset,
                    trap: flags.trap_code,
                })
            }
            _ => None,
        }
    }

    fn rule_fired(&mut self, rule: usize) {
        self.lower.rule_fired(rule);
    }

    fn alu_mem(&mut self, ty: Type, op: AluOp, a: VReg, m: Ld) -> VReg {
        self.mem_op(ty, Some(op), a, m)
    }

    fn imul_mem(&mut self, ty: Type, a: VReg, m: Ld) -> VReg {
        self.mem_op(ty, None, a, m)
    }

    fn put_in_reg(&mut self, v: Value) -> VReg {
        self.lower.value_vreg(v)
    }

    fn out_reg(&mut self, r: VReg) -> Out {
        Out([Some(r), None, None])
    }

    fn mov_imm(&mut self, ty: Type, n: i64) -> VReg {
        let dst = self.int();
        let bits = ty.bits();
        let imm = if bits >= 64 {
            n as u64
        } else {
            (n as u64) & ((1u64 << bits) - 1)
        };
        self.lower.emit(Inst::MovImm { dst, imm });
        dst
    }

    fn alu(&mut self, ty: Type, op: AluOp, a: VReg, b: VReg) -> VReg {
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Alu {
            op,
            size,
            dst,
            a,
            b: RegImm::Reg(b),
        });
        dst
    }

    fn alu_imm(&mut self, ty: Type, op: AluOp, a: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Alu {
            op,
            size,
            dst,
            a,
            b: RegImm::Imm(k.imm as i32),
        });
        dst
    }

    fn imul(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Imul {
            size,
            dst,
            a,
            b: RegImm::Reg(b),
        });
        dst
    }

    fn imul_imm(&mut self, ty: Type, a: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Imul {
            size,
            dst,
            a,
            b: RegImm::Imm(k.imm as i32),
        });
        dst
    }

    fn unary(&mut self, ty: Type, op: UnaryOp, a: VReg) -> VReg {
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Unary { op, size, dst, a });
        dst
    }

    fn shift(&mut self, ty: Type, op: ShiftOp, a: VReg, amt: VReg) -> VReg {
        let bits = ty.bits();
        // BMI2 masks the count to 5 (6) bits too, which is CLIF's modulo at 32 (64) bits.
        let x = match op {
            ShiftOp::Shl => Some(ShiftX::Shlx),
            ShiftOp::Shr => Some(ShiftX::Shrx),
            ShiftOp::Sar => Some(ShiftX::Sarx),
            _ => None,
        };
        if let Some(op) = x.filter(|_| self.features.bmi2 && bits >= 32) {
            let dst = self.int();
            let size = exact_size(ty);
            self.lower.emit(Inst::ShiftX {
                op,
                size,
                dst,
                a,
                amt,
            });
            return dst;
        }
        let rotate = matches!(op, ShiftOp::Rol | ShiftOp::Ror);
        // The hardware masks the count to 5 (6) bits; narrower shifts need their own mask (a
        // rotate by the masked count is already right modulo the width).
        let amt = if bits < 32 && !rotate {
            let masked = self.int();
            self.lower.emit(Inst::Alu {
                op: AluOp::And,
                size: Size::S32,
                dst: masked,
                a: amt,
                b: RegImm::Imm(bits as i32 - 1),
            });
            masked
        } else {
            amt
        };
        let size = if op == ShiftOp::Shl {
            op_size(ty)
        } else {
            exact_size(ty)
        };
        let dst = self.int();
        self.lower.emit(Inst::ShiftCl {
            op,
            size,
            dst,
            a,
            amt,
        });
        dst
    }

    fn shift_imm(&mut self, ty: Type, op: ShiftOp, a: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let imm = (k.imm as u64 & u64::from(ty.bits() - 1)) as u8;
        let size = if op == ShiftOp::Shl {
            op_size(ty)
        } else {
            exact_size(ty)
        };
        let dst = self.int();
        self.lower.emit(Inst::ShiftImm {
            op,
            size,
            dst,
            a,
            imm,
        });
        dst
    }

    fn cmp_zero(&mut self, cc: IntCC, a: Value) -> Cond {
        let size = exact_size(self.lower.value_type(a));
        let a = self.lower.value_vreg(a);
        Cond::Cmp {
            size,
            cc: int_cc(cc),
            a,
            b: RegImm::Imm(0),
        }
    }

    fn fconst(&mut self, ty: Type, bits: u64) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::XmmConst {
            size: float_size(ty),
            dst,
            bits,
        });
        dst
    }

    fn fbinop(&mut self, ty: Type, op: FloatOp, a: VReg, b: VReg) -> VReg {
        let op = match op {
            FloatOp::Add => sse_for(ty, SseOp::Addss, SseOp::Addsd),
            FloatOp::Sub => sse_for(ty, SseOp::Subss, SseOp::Subsd),
            FloatOp::Mul => sse_for(ty, SseOp::Mulss, SseOp::Mulsd),
            FloatOp::Div => sse_for(ty, SseOp::Divss, SseOp::Divsd),
        };
        self.xmm_rmr(op, a, b)
    }

    fn fmin(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.minmax(ty, false, a, b)
    }

    fn fmax(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        self.minmax(ty, true, a, b)
    }

    fn fsqrt(&mut self, ty: Type, a: VReg) -> VReg {
        self.xmm_unary(sse_for(ty, SseOp::Sqrtss, SseOp::Sqrtsd), a)
    }

    fn fneg(&mut self, ty: Type, a: VReg) -> VReg {
        let mask = self.fconst(ty, sign_bit(ty));
        self.xmm_rmr(SseOp::Xorps, a, mask)
    }

    fn fabs(&mut self, ty: Type, a: VReg) -> VReg {
        let mask = self.fconst(ty, !sign_bit(ty) & width_mask(ty));
        self.xmm_rmr(SseOp::Andps, a, mask)
    }

    fn fcopysign(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        let magnitude = self.fabs(ty, a);
        let sign_mask = self.fconst(ty, sign_bit(ty));
        let sign = self.xmm_rmr(SseOp::Andps, b, sign_mask);
        self.xmm_rmr(SseOp::Orps, magnitude, sign)
    }

    fn fround(&mut self, ty: Type, mode: RoundMode, a: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::XmmRound {
            size: float_size(ty),
            mode,
            dst,
            src: a,
        });
        dst
    }

    fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> VReg {
        let cond = self.fcmp_cond(cc, a, b);
        self.setcc(cond)
    }

    fn fcmp_merge(&mut self, v: Value) -> Option<FCmp> {
        let inst = self.lower.mergeable_inst(v, self.inst)?;
        let InstructionData::FloatCompare {
            opcode: Opcode::Fcmp,
            cond,
            args: [a, b],
        } = *self.lower.data(inst)
        else {
            return None;
        };
        let m = FCmp {
            value: v,
            cc: cond,
            a,
            b,
        };
        (!self.lower.should_skip(Decision::FcmpFusion)).then_some(m)
    }

    fn fcond_of(&mut self, m: FCmp) -> Cond {
        self.lower.merge(m.value);
        self.fcmp_cond(m.cc, m.a, m.b)
    }

    fn fcvt_width(&mut self, ty: Type, a: VReg) -> VReg {
        self.xmm_unary(sse_for(ty, SseOp::Cvtsd2ss, SseOp::Cvtss2sd), a)
    }

    fn fcvt_from_sint(&mut self, ty: Type, a: Value) -> VReg {
        let bits = self.lower.value_type(a).bits();
        let (src, isize) = match bits {
            8 | 16 => (self.ext(true, a, 32), Size::S32),
            32 => (self.lower.value_vreg(a), Size::S32),
            _ => (self.lower.value_vreg(a), Size::S64),
        };
        self.cvt_int(ty, isize, src)
    }

    fn fcvt_from_uint(&mut self, ty: Type, a: Value) -> VReg {
        let bits = self.lower.value_type(a).bits();
        if bits == 64 {
            let src = self.lower.value_vreg(a);
            let dst = self.lower.alloc_vreg(RegClass::Float);
            self.lower.emit(Inst::CvtU64ToFloat {
                fsize: float_size(ty),
                dst,
                src,
            });
            return dst;
        }
        // Zero-extended to 64 bits the value is non-negative, so the signed conversion is
        // exact.
        let src = self.ext(false, a, 64);
        self.cvt_int(ty, Size::S64, src)
    }

    fn bitcast(&mut self, ty: Type, a: Value) -> VReg {
        let from = self.lower.value_type(a);
        let src = self.lower.value_vreg(a);
        let size = if ty.bits() == 64 {
            Size::S64
        } else {
            Size::S32
        };
        match (from.is_float(), ty.is_float()) {
            (false, true) => {
                let dst = self.lower.alloc_vreg(RegClass::Float);
                self.lower.emit(Inst::MovToXmm { size, dst, src });
                dst
            }
            (true, false) => {
                let dst = self.int();
                self.lower.emit(Inst::MovFromXmm { size, dst, src });
                dst
            }
            _ => src,
        }
    }

    fn xmm_select(&mut self, cond: Cond, t: VReg, f: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(Inst::XmmSelect { cond, t, f, dst });
        dst
    }

    fn bit_count(&mut self, ty: Type, op: BitCount, a: Value) -> VReg {
        let bits = ty.bits();
        let size = op_size(ty);
        let src = match (bits, op) {
            (64 | 32, _) => self.lower.value_vreg(a),
            // A marker bit just above the value stops tzcnt at the width.
            (_, BitCount::Tzcnt) => {
                let v = self.lower.value_vreg(a);
                let dst = self.int();
                self.lower.emit(Inst::Alu {
                    op: AluOp::Or,
                    size: Size::S32,
                    dst,
                    a: v,
                    b: RegImm::Imm(1 << bits),
                });
                dst
            }
            _ => self.ext(false, a, 32),
        };
        let dst = self.count_bits(op, size, src);
        if op == BitCount::Lzcnt && bits < 32 {
            // Counted over 32 bits: the extension added 32 - bits leading zeros.
            let adj = self.int();
            self.lower.emit(Inst::Alu {
                op: AluOp::Sub,
                size: Size::S32,
                dst: adj,
                a: dst,
                b: RegImm::Imm(32 - bits as i32),
            });
            return adj;
        }
        dst
    }

    fn cls(&mut self, ty: Type, a: Value) -> VReg {
        // cls(x) = clz(x ^ (x >> 63)) - 1 - (64 - bits), on x sign-extended to 64 bits.
        let bits = ty.bits();
        let x = if bits == 64 {
            self.lower.value_vreg(a)
        } else {
            self.ext(true, a, 64)
        };
        let s = self.int();
        self.lower.emit(Inst::ShiftImm {
            op: ShiftOp::Sar,
            size: Size::S64,
            dst: s,
            a: x,
            imm: 63,
        });
        let u = self.int();
        self.lower.emit(Inst::Alu {
            op: AluOp::Xor,
            size: Size::S64,
            dst: u,
            a: s,
            b: RegImm::Reg(x),
        });
        let z = self.count_bits(BitCount::Lzcnt, Size::S64, u);
        let r = self.int();
        self.lower.emit(Inst::Alu {
            op: AluOp::Sub,
            size: Size::S64,
            dst: r,
            a: z,
            b: RegImm::Imm(64 - bits as i32 + 1),
        });
        r
    }

    fn bswap(&mut self, ty: Type, a: VReg) -> VReg {
        if ty.bits() == 8 {
            return a;
        }
        let dst = self.int();
        self.lower.emit(Inst::Bswap {
            size: exact_size(ty),
            dst,
            a,
        });
        dst
    }

    fn mulhi(&mut self, ty: Type, signed: bool, a: Value, b: Value) -> VReg {
        let bits = ty.bits();
        if bits == 64 {
            let (a, b) = (self.lower.value_vreg(a), self.lower.value_vreg(b));
            let (dst, tmp) = (self.int(), self.int());
            self.lower.emit(Inst::MulHi {
                size: Size::S64,
                signed,
                a,
                b,
                dst,
                tmp,
            });
            return dst;
        }
        // Narrower: the full product fits 64 bits; take its upper half.
        let (x, y) = (self.ext(signed, a, 64), self.ext(signed, b, 64));
        let p = self.int();
        self.lower.emit(Inst::Imul {
            size: Size::S64,
            dst: p,
            a: x,
            b: RegImm::Reg(y),
        });
        let dst = self.int();
        self.lower.emit(Inst::ShiftImm {
            op: if signed { ShiftOp::Sar } else { ShiftOp::Shr },
            size: Size::S64,
            dst,
            a: p,
            imm: bits as u8,
        });
        dst
    }

    fn bmask(&mut self, ty: Type, a: Value) -> VReg {
        let cond = self.test(a, Cc::NE);
        let flag = self.int();
        self.lower.emit(Inst::Setcc { cond, dst: flag });
        let dst = self.int();
        self.lower.emit(Inst::Unary {
            op: UnaryOp::Neg,
            size: op_size(ty),
            dst,
            a: flag,
        });
        dst
    }

    fn overflow(&mut self, ty: Type, op: AluOp, signed: bool, a: Value, b: Value) -> Out {
        let (a, b) = (self.lower.value_vreg(a), self.lower.value_vreg(b));
        let (dst, flag) = (self.int(), self.int());
        self.lower.emit(Inst::AluFlags {
            op,
            size: exact_size(ty),
            dst,
            a,
            b: RegImm::Reg(b),
            cc: if signed { Cc::O } else { Cc::B },
            flag,
        });
        Out([Some(dst), Some(flag), None])
    }

    fn alu_trap(&mut self, ty: Type, a: VReg, b: VReg, code: TrapCode) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::AluTrap {
            op: AluOp::Add,
            size: exact_size(ty),
            dst,
            a,
            b: RegImm::Reg(b),
            cc: Cc::B,
            code,
        });
        dst
    }

    fn fbitop(&mut self, op: FBitOp, a: VReg, b: VReg) -> VReg {
        let op = match op {
            FBitOp::And => SseOp::Andps,
            FBitOp::Or => SseOp::Orps,
            FBitOp::Xor => SseOp::Xorps,
            FBitOp::AndNot => SseOp::Andnps,
        };
        self.xmm_rmr(op, a, b)
    }

    fn fbnot(&mut self, ty: Type, a: VReg) -> VReg {
        let ones = self.fconst(ty, width_mask(ty));
        self.xmm_rmr(SseOp::Xorps, a, ones)
    }

    fn int_ty_narrow(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I8 || ty == Type::I16).then_some(ty)
    }

    fn int_ty_wide(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I32 || ty == Type::I64).then_some(ty)
    }

    fn fcvt_to_int(&mut self, ty: Type, a: Value, signed: bool, sat: bool) -> VReg {
        let fsize = float_size(self.lower.value_type(a));
        let src = self.lower.value_vreg(a);
        let dst = self.int();
        self.lower.emit(Inst::FcvtToInt {
            fsize,
            isize: exact_size(ty),
            signed,
            sat,
            dst,
            src,
        });
        dst
    }

    fn mul_overflow(&mut self, ty: Type, signed: bool, a: Value, b: Value) -> Out {
        let (a, b) = (self.lower.value_vreg(a), self.lower.value_vreg(b));
        let (tmp, lo, flag) = (self.int(), self.int(), self.int());
        self.lower.emit(Inst::MulOverflow {
            size: exact_size(ty),
            signed,
            a,
            b,
            tmp,
            lo,
            flag,
        });
        Out([Some(lo), Some(flag), None])
    }

    fn bitrev(&mut self, ty: Type, a: VReg) -> VReg {
        self.bitrev_reg(ty, a)
    }

    fn bitrev128(&mut self, a: Value) -> Out {
        self.i128_bitrev(a)
    }

    fn iabs128(&mut self, a: Value) -> Out {
        self.i128_iabs(a)
    }

    fn bitselect128(&mut self, c: Value, t: Value, f: Value) -> Out {
        self.i128_bitselect(c, t, f)
    }

    fn i128_val(&mut self, v: Value) -> Option<Value> {
        (self.lower.value_type(v) == Type::I128).then_some(v)
    }

    fn concat_narrow(&mut self, ty: Type, lo: Value, hi: Value) -> VReg {
        let half = ty.bits() / 2;
        let l = self.ext(false, lo, ty.bits().max(32));
        let h = self.lower.value_vreg(hi);
        let shifted = self.int();
        self.lower.emit(Inst::ShiftImm {
            op: ShiftOp::Shl,
            size: op_size(ty),
            dst: shifted,
            a: h,
            imm: half as u8,
        });
        let dst = self.int();
        self.lower.emit(Inst::Alu {
            op: AluOp::Or,
            size: op_size(ty),
            dst,
            a: l,
            b: RegImm::Reg(shifted),
        });
        dst
    }

    fn split_narrow(&mut self, a: Value) -> Out {
        let ty = self.lower.value_type(a);
        let x = self.lower.value_vreg(a);
        let hi = self.int();
        self.lower.emit(Inst::ShiftImm {
            op: ShiftOp::Shr,
            size: exact_size(ty),
            dst: hi,
            a: x,
            imm: (ty.bits() / 2) as u8,
        });
        // The low half is the same register: its upper bits are unspecified.
        Out([Some(x), Some(hi), None])
    }

    fn i128_ty(&mut self, ty: Type) -> Option<Type> {
        (ty == Type::I128).then_some(ty)
    }

    fn alu128(&mut self, lo: AluOp, hi: AluOp, a: Value, b: Value) -> Out {
        self.i128_alu(lo, hi, a, b)
    }

    fn overflow128(&mut self, op_lo: AluOp, op_hi: AluOp, cc: Cc, a: Value, b: Value) -> Out {
        self.i128_overflow(op_lo, op_hi, cc, a, b, None)
    }

    fn cc_o(&mut self) -> Cc {
        Cc::O
    }

    fn cc_b(&mut self) -> Cc {
        Cc::B
    }

    fn op_not128(&mut self, op: AluOp, a: Value, b: Value) -> Out {
        self.i128_op_not(op, a, b)
    }

    fn mulhi128(&mut self, signed: bool, a: Value, b: Value) -> Out {
        self.i128_mulhi(signed, a, b)
    }

    fn not128(&mut self, a: Value) -> Out {
        self.i128_not(a)
    }

    fn neg128(&mut self, a: Value) -> Out {
        self.i128_neg(a)
    }

    fn mul128(&mut self, a: Value, b: Value) -> Out {
        self.i128_mul(a, b)
    }

    fn shift128(&mut self, op: ShiftOp, a: Value, b: Value) -> Out {
        self.i128_shift(op, a, b)
    }

    fn ext128(&mut self, signed: bool, a: Value) -> Out {
        self.i128_ext(signed, a)
    }

    fn concat128(&mut self, lo: Value, hi: Value) -> Out {
        self.i128_concat(lo, hi)
    }

    fn split128(&mut self, a: Value) -> Out {
        self.i128_split(a)
    }

    fn select128(&mut self, cond: Cond, t: Value, f: Value) -> Out {
        self.i128_select(cond, t, f)
    }

    fn bmask128(&mut self, a: Value) -> Out {
        self.i128_bmask(a)
    }

    fn count128(&mut self, op: BitCount, a: Value) -> Out {
        self.i128_count(op, a)
    }

    fn overflow_carry128(&mut self, op: AluOp, cc: Cc, a: Value, b: Value, c: Value) -> Out {
        self.i128_overflow(op, op, cc, a, b, Some(c))
    }

    fn overflow_carry(&mut self, ty: Type, op: AluOp, cc: Cc, a: Value, b: Value, c: Value) -> Out {
        let (a, b, cin) = (
            self.lower.value_vreg(a),
            self.lower.value_vreg(b),
            self.lower.value_vreg(c),
        );
        let (dst, flag) = (self.int(), self.int());
        self.lower.emit(Inst::AluCarry {
            op,
            size: exact_size(ty),
            dst,
            a,
            b,
            cin,
            cc,
            flag,
        });
        Out([Some(dst), Some(flag), None])
    }

    fn fcvt_narrow(&mut self, ty: Type, a: Value, signed: bool, sat: bool) -> VReg {
        // Convert at 32 bits (which traps or saturates for that range), then check or clamp
        // to the narrow range.
        let v = self.fcvt_to_int(Type::I32, a, signed, sat);
        let bits = ty.bits();
        let (lo, hi): (i64, i64) = if signed {
            (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        } else {
            (0, (1 << bits) - 1)
        };
        let cmp = |cc, k: i64| Cond::Cmp {
            size: Size::S32,
            cc,
            a: v,
            b: RegImm::Imm(k as i32),
        };
        if !sat {
            if signed {
                self.lower.emit(Inst::TrapIf {
                    cond: cmp(Cc::L, lo),
                    code: TrapCode::INTEGER_OVERFLOW,
                });
            }
            self.lower.emit(Inst::TrapIf {
                cond: cmp(if signed { Cc::G } else { Cc::A }, hi),
                code: TrapCode::INTEGER_OVERFLOW,
            });
            return v;
        }
        let max = self.int();
        self.lower.emit(Inst::MovImm {
            dst: max,
            imm: hi as u64,
        });
        let upper = self.int();
        let over = cmp(if signed { Cc::G } else { Cc::A }, hi);
        self.lower.emit(Inst::Cmov {
            cond: over,
            t: max,
            f: v,
            dst: upper,
        });
        if !signed {
            return upper;
        }
        let min = self.int();
        self.lower.emit(Inst::MovImm {
            dst: min,
            imm: lo as u64,
        });
        let dst = self.int();
        self.lower.emit(Inst::Cmov {
            cond: Cond::Cmp {
                size: Size::S32,
                cc: Cc::L,
                a: upper,
                b: RegImm::Imm(lo as i32),
            },
            t: min,
            f: upper,
            dst,
        });
        dst
    }

    fn cls128(&mut self, a: Value) -> Out {
        self.i128_cls(a)
    }

    fn bswap128(&mut self, a: Value) -> Out {
        self.i128_bswap(a)
    }

    fn cc_slt(&mut self) -> IntCC {
        IntCC::SignedLessThan
    }

    fn cc_sgt(&mut self) -> IntCC {
        IntCC::SignedGreaterThan
    }

    fn cc_ult(&mut self) -> IntCC {
        IntCC::UnsignedLessThan
    }

    fn cc_ugt(&mut self) -> IntCC {
        IntCC::UnsignedGreaterThan
    }

    fn bool_true(&mut self) -> bool {
        true
    }

    fn bool_false(&mut self) -> bool {
        false
    }

    fn uext(&mut self, a: Value, ty: Type) -> VReg {
        self.ext(false, a, ty.bits())
    }

    fn sext(&mut self, a: Value, ty: Type) -> VReg {
        self.ext(true, a, ty.bits())
    }

    fn div(&mut self, ty: Type, kind: DivKind, a: Value, b: Value) -> VReg {
        let signed = matches!(kind, DivKind::Sdiv | DivKind::Srem);
        let rem = matches!(kind, DivKind::Urem | DivKind::Srem);
        let (dividend, divisor) = if ty.bits() < 32 {
            (self.ext(signed, a, 32), self.ext(signed, b, 32))
        } else {
            (self.lower.value_vreg(a), self.lower.value_vreg(b))
        };
        let tmp = self.int();
        let dst = self.int();
        self.lower.emit(Inst::Div {
            size: op_size(ty),
            narrow: exact_size(ty),
            signed,
            rem,
            dividend,
            divisor,
            tmp,
            dst,
        });
        dst
    }

    fn setcc(&mut self, cond: Cond) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::Setcc { cond, dst });
        dst
    }

    fn cmov(&mut self, cond: Cond, t: VReg, f: VReg) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::cmov(cond, t, f, dst));
        dst
    }

    fn trap(&mut self, code: TrapCode) -> Out {
        self.lower.emit(Inst::Ud2 { code });
        Out([None, None, None])
    }

    fn trap_if(&mut self, cond: Cond, code: TrapCode) -> Out {
        self.lower.emit(Inst::TrapIf { cond, code });
        Out([None, None, None])
    }

    fn branch(&mut self, cond: Cond) -> Out {
        self.lower.emit(Inst::CondBr {
            cond,
            taken: self.targets[0],
            not_taken: self.targets[1],
        });
        Out([None, None, None])
    }

    fn jump(&mut self) -> Out {
        self.lower.emit(Inst::Jmp {
            target: self.targets[0],
        });
        Out([None, None, None])
    }

    fn cmp_cond(&mut self, cc: IntCC, a: Value, b: Value) -> Cond {
        if self.lower.value_type(a) == Type::I128 {
            return self.i128_cmp(cc, a, b);
        }
        let size = exact_size(self.lower.value_type(a));
        let a = self.lower.value_vreg(a);
        // A load as the right operand is compared in memory.
        if let Some(m) = generated::Context::load_merge(self, b) {
            self.lower.sink_load(m.value);
            let mem = super::lower_mem::addr_mem(self.lower, m.load, m.addr, m.offset, 0);
            return Cond::CmpMem {
                size,
                cc: int_cc(cc),
                a,
                mem,
                trap: m.trap,
            };
        }
        let b = match self
            .lower
            .const_value(b)
            .and_then(|k| i32::try_from(k).ok())
            .filter(|_| !self.lower.should_skip(Decision::ImmOperand))
        {
            Some(k) => {
                self.lower.merge(b);
                RegImm::Imm(k)
            }
            None => RegImm::Reg(self.lower.value_vreg(b)),
        };
        Cond::Cmp {
            size,
            cc: int_cc(cc),
            a,
            b,
        }
    }

    fn cond_of(&mut self, m: Cmp) -> Cond {
        self.lower.merge(m.value);
        self.cmp_cond(m.cc, m.a, m.b)
    }

    fn nonzero(&mut self, c: Value) -> Cond {
        self.test(c, Cc::NE)
    }

    fn zero(&mut self, c: Value) -> Cond {
        self.test(c, Cc::E)
    }

    fn invert(&mut self, c: Cond) -> Cond {
        c.invert()
    }
}

/// Lower one non-branch IR instruction (calls and returns through the ABI, the rest by the
/// rules).
pub fn lower_inst(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
    features: &CpuFeatures,
) -> Result<Option<Results>, CodegenError> {
    let f = lower.f;
    match *f.dfg.inst(inst) {
        InstructionData::MultiAry {
            opcode: Opcode::Return,
            args,
        } => {
            abi::gen_return(lower, f.dfg.pool.get(args))?;
            return Ok(Some(Results::new()));
        }
        InstructionData::Call { func_ref, args, .. } => {
            let ext = &f.ext_funcs[func_ref];
            let sig = &f.signatures[ext.signature];
            let dest = CallDest::Direct(ext.name.clone());
            let regs = abi::gen_call(lower, dest, sig, f.dfg.pool.get(args))?;
            return Ok(Some(regs.into()));
        }
        InstructionData::CallIndirect { sig_ref, args, .. } => {
            let sig = &f.signatures[sig_ref];
            let args = f.dfg.pool.get(args);
            let target = lower.value_vreg(args[0]);
            let regs = abi::gen_call(lower, CallDest::Indirect(target), sig, &args[1..])?;
            return Ok(Some(regs.into()));
        }
        InstructionData::Binary {
            opcode: opcode @ (Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem),
            args: [a, b],
        } if f.dfg.value_type(a) == Type::I128 => {
            let regs = super::lower_i128::lower_divrem(lower, opcode, a, b)?;
            return Ok(Some(regs.into()));
        }
        InstructionData::Unary {
            opcode:
                opcode @ (Opcode::FcvtToSint
                | Opcode::FcvtToUint
                | Opcode::FcvtToSintSat
                | Opcode::FcvtToUintSat),
            arg,
        } if f
            .dfg
            .inst_results(inst)
            .first()
            .map(|&r| f.dfg.value_type(r))
            == Some(Type::I128) =>
        {
            let regs = super::lower_i128::lower_fcvt_to(lower, opcode, arg)?;
            return Ok(Some(regs.into()));
        }
        InstructionData::Unary {
            opcode: opcode @ (Opcode::FcvtFromSint | Opcode::FcvtFromUint),
            arg,
        } if f.dfg.value_type(arg) == Type::I128 => {
            let to = f
                .dfg
                .value_type(f.dfg.first_result(inst).expect("a conversion result"));
            let signed = opcode == Opcode::FcvtFromSint;
            let regs = super::lower_i128::lower_fcvt_from(lower, signed, to, arg)?;
            return Ok(Some(regs.into()));
        }
        InstructionData::Ternary {
            opcode: Opcode::Fma,
            args,
        } => {
            // No FMA instruction in the assembler yet: call the `FmaF32`/`FmaF64` libcall,
            // which the embedder provides (the test runner does).
            let ty = f.dfg.value_type(args[0]);
            let name = if ty == Type::F32 { "FmaF32" } else { "FmaF64" };
            let mut sig = kestrel_ir::Signature::new(kestrel_ir::CallConv::SystemV);
            sig.params = vec![kestrel_ir::AbiParam::new(ty); 3];
            sig.returns = vec![kestrel_ir::AbiParam::new(ty)];
            let dest = CallDest::Direct(kestrel_ir::FunctionName::Named(name.into()));
            let regs = abi::gen_call(lower, dest, &sig, &args)?;
            return Ok(Some(regs.into()));
        }
        InstructionData::Unary {
            opcode: opcode @ (Opcode::Ceil | Opcode::Floor | Opcode::Trunc | Opcode::Nearest),
            arg,
        } if !features.sse41 => {
            // No ROUNDSS/ROUNDSD without SSE4.1: call the rounding libcall (`CeilF32`, …),
            // which the embedder provides (the test runner does).
            let ty = f.dfg.value_type(arg);
            let op = match opcode {
                Opcode::Ceil => "Ceil",
                Opcode::Floor => "Floor",
                Opcode::Trunc => "Trunc",
                _ => "Nearest",
            };
            let name = format!("{op}{}", if ty == Type::F32 { "F32" } else { "F64" });
            let mut sig = kestrel_ir::Signature::new(kestrel_ir::CallConv::SystemV);
            sig.params = vec![kestrel_ir::AbiParam::new(ty)];
            sig.returns = vec![kestrel_ir::AbiParam::new(ty)];
            let dest = CallDest::Direct(kestrel_ir::FunctionName::Named(name));
            let regs = abi::gen_call(lower, dest, &sig, &[arg])?;
            return Ok(Some(regs.into()));
        }
        InstructionData::FuncAddr { func_ref, .. } => {
            let callee = &f.ext_funcs[func_ref];
            let dst = super::lower_mem::symbol_addr(lower, &callee.name, 0, callee.colocated);
            return Ok(Some(smallvec::smallvec![dst]));
        }
        _ => {}
    }
    super::lower_i128::check_i128(lower, inst)?;
    if let Some(regs) = super::lower_mem::lower_memory(lower, inst)? {
        return Ok(Some(regs));
    }
    let mut ctx = IselCtx {
        lower,
        inst,
        targets: &[],
        features: *features,
    };
    Ok(generated::constructor_lower(&mut ctx, inst).map(|o| o.0.into_iter().flatten().collect()))
}

/// Lower a block terminator with its lowered successors.
pub fn lower_branch(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
    targets: &[BlockIndex],
    features: &CpuFeatures,
) -> Option<()> {
    if let InstructionData::BranchTable { arg, .. } = *lower.f.dfg.inst(inst) {
        super::lower_br_table::lower_br_table(lower, arg, targets);
        return Some(());
    }
    let mut ctx = IselCtx {
        lower,
        inst,
        targets,
        features: *features,
    };
    generated::constructor_lower_branch(&mut ctx, inst).map(|_| ())
}
