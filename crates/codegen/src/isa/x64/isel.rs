//! Selection state ([`IselCtx`]) and the helpers the x86-64 rule constructors share: sizes
//! and masks of types, and the instruction sequences several constructors emit (an ALU op
//! into a fresh register, SSE forms, min/max, conversions, memory operands).
//!
//! # Contract
//!
//! Each helper emits into the current IR instruction's sequence and returns the register
//! holding its result; none records a merge (only the constructors in `lower.rs` do).

use kestrel_ir::{FloatCC, Inst as IrInst, IntCC, Type, Value};
use kestrel_regalloc::{RegClass, VReg};

use super::asm::alu::AluOp;
use super::asm::bits::BitCount;
use super::asm::moves::ExtMode;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::shift::ShiftOp;
use super::asm::sse::{FloatSize, SseOp};
use super::asm::Size;
use super::features::CpuFeatures;
use super::inst::{AluInst, BitsInst, Cond, Inst, Pred, RegImm, SseInst};
use crate::machinst::lower::{Lower, Results};
use crate::machinst::{BlockIndex, CodegenError};

use super::lower::*;

/// The scalar SSE operation for `ty`: `ss` for f32, `sd` for f64.
pub(super) fn sse_for(ty: Type, single: SseOp, double: SseOp) -> SseOp {
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
    /// Why a partial constructor failed (an ABI error, a CPU feature the target lacks),
    /// reported instead of "unsupported".
    pub error: Option<CodegenError>,
}

/// The operation size for a type whose upper bits may be garbage (8/16 use 32-bit forms).
pub(super) fn op_size(ty: Type) -> Size {
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
pub(super) fn sign_bit(ty: Type) -> u64 {
    1 << (ty.bits() - 1)
}

/// All bits of a float type.
pub(super) fn width_mask(ty: Type) -> u64 {
    if ty.bits() == 64 {
        u64::MAX
    } else {
        (1 << ty.bits()) - 1
    }
}

pub(super) fn int_cc(cc: IntCC) -> Cc {
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
    /// A partial constructor's outcome: the result registers, or `None` with the error kept
    /// for the driver.
    pub(super) fn result(&mut self, done: Result<Vec<VReg>, CodegenError>) -> Option<Out> {
        match done {
            Ok(regs) => Some(Out::from(Results::from_vec(regs))),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// A fresh register holding 0.
    pub(super) fn zero_reg(&mut self) -> VReg {
        let dst = self.int();
        self.lower.emit(AluInst::MovImm { dst, imm: 0 });
        dst
    }

    /// Why `i` (at type `ty`) cannot be lowered: it needs `feature`, which the target CPU
    /// lacks, and has no fallback.
    pub(super) fn missing_feature(&self, i: IrInst, ty: Type, feature: &str) -> CodegenError {
        let f = self.lower.f;
        CodegenError::Unsupported {
            opcode: Some(f.dfg.inst(i).opcode()),
            ty: Some(ty),
            what: format!(
                "{i} in {} needs {feature}, which the target CPU lacks (no fallback yet):",
                f.name
            ),
        }
    }

    pub(super) fn int(&mut self) -> VReg {
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
        self.lower.emit(AluInst::Ext {
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
            self.lower.emit(BitsInst::BitCount { op, size, dst, src });
            return dst;
        }
        let width: u64 = if size == Size::S64 { 64 } else { 32 };
        let scan = |ctx: &mut Self, op: BitCount, zero_result: u64| {
            let idx = ctx.int();
            ctx.lower.emit(BitsInst::BitCount {
                op,
                size,
                dst: idx,
                src,
            });
            let alt = ctx.int();
            ctx.lower.emit(AluInst::MovImm {
                dst: alt,
                imm: zero_result,
            });
            let dst = ctx.int();
            ctx.lower.emit(AluInst::Cmov {
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
    pub(super) fn alu_at(&mut self, op: AluOp, size: Size, a: VReg, b: RegImm) -> VReg {
        let dst = self.int();
        self.lower.emit(AluInst::Alu {
            op,
            size,
            dst,
            a,
            b,
        });
        dst
    }

    /// `dst = a op imm` at `size`.
    pub(super) fn shift_at(&mut self, op: ShiftOp, size: Size, a: VReg, imm: u8) -> VReg {
        let dst = self.int();
        self.lower.emit(BitsInst::ShiftImm {
            op,
            size,
            dst,
            a,
            imm,
        });
        dst
    }

    /// The population count of `x` at `size` without POPCNT (see [`Self::count_bits`]).
    pub(super) fn popcnt_swar(&mut self, size: Size, x: VReg) -> VReg {
        let wide = size == Size::S64;
        // A byte pattern repeated across the width: an immediate at 32 bits (every pattern
        // is below 2^31), a register at 64.
        let pattern = |ctx: &mut Self, byte: u8| {
            if wide {
                let r = ctx.int();
                ctx.lower.emit(AluInst::MovImm {
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
        self.lower.emit(AluInst::Imul {
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
                self.lower.emit(AluInst::MovImm { dst: r, imm: m });
                RegImm::Reg(r)
            } else {
                RegImm::Imm(m as u32 as i32)
            };
            let alu = |this: &mut Self, op, a, b| {
                let dst = this.int();
                this.lower.emit(AluInst::Alu {
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
                this.lower.emit(BitsInst::ShiftImm {
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
        self.lower.emit(BitsInst::Bswap {
            size: exact_size(ty),
            dst,
            a: x,
        });
        dst
    }

    pub(super) fn xmm_rmr(&mut self, op: SseOp, a: VReg, b: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(SseInst::XmmRmR { op, dst, a, b });
        dst
    }

    pub(super) fn minmax(&mut self, ty: Type, max: bool, a: VReg, b: VReg) -> VReg {
        let dst = self.lower.alloc_vreg(RegClass::Float);
        self.lower.emit(SseInst::FMinMax {
            size: float_size(ty),
            max,
            dst,
            a,
            b,
        });
        dst
    }

    /// `a op [load]` (`None`: multiply), performing the merged load `m`.
    pub(super) fn mem_op(&mut self, ty: Type, op: Option<AluOp>, a: VReg, m: Ld) -> VReg {
        self.lower.sink_load(m.value);
        let mem = super::lower_mem::addr_mem(self.lower, m.load, m.addr, m.offset, 0);
        let dst = self.int();
        self.lower.emit(AluInst::AluMem {
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
    pub(super) fn fcmp_cond(&mut self, cc: FloatCC, a: Value, b: Value) -> Cond {
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
