//! Selection state ([`IselCtx`]) and the helpers the x86-64 rule constructors share: sizes
//! and masks of types, and the instruction sequences several constructors emit (an ALU op
//! into a fresh register, SSE forms, min/max, conversions, memory operands).
//!
//! # Contract
//!
//! Each helper emits into the current IR instruction's sequence and returns the register
//! holding its result; none records a merge (only the constructors in `lower.rs` do).

use kestrel_ir::{Inst as IrInst, IntCC, Type, Value};
use kestrel_regalloc::{RegClass, VReg};

use crate::machinst::isel::{by_precision, by_width};
pub(super) use crate::machinst::isel::{sign_bit, width_mask};

use super::asm::alu::AluOp;
use super::asm::moves::ExtMode;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::sse::{FloatSize, SseOp};
use super::asm::Size;
use super::features::CpuFeatures;
use super::inst::{AluInst, Inst, LoadKind, MemInst, SseInst};
use crate::machinst::CodegenError;

use super::lower::*;

/// The scalar SSE operation for `ty`: `ss` for f32, `sd` for f64.
pub(super) fn sse_for(ty: Type, single: SseOp, double: SseOp) -> SseOp {
    by_precision(ty, single, double)
}

/// Selection state for one IR instruction (the shared context with x86-64's instructions
/// and CPU features).
pub type IselCtx<'a, 'f> = crate::machinst::isel::IselCtx<'a, 'f, Inst, CpuFeatures>;

/// The operation size for a type whose upper bits may be garbage (8/16 use 32-bit forms).
pub(super) fn op_size(ty: Type) -> Size {
    by_width(ty, Size::S32, Size::S64)
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

/// The bits of `v` as a float of type `ty`.
pub(super) fn float_bits(ty: Type, v: f64) -> u64 {
    match float_size(ty) {
        FloatSize::F32 => u64::from((v as f32).to_bits()),
        FloatSize::F64 => v.to_bits(),
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

    /// A call of `routine` with `args`, whose signature is the arguments' types to the
    /// instruction's result types.
    pub(super) fn runtime_call(&mut self, routine: Runtime, args: &[Value]) -> Option<Out> {
        let (params, returns) = self.call_types(args);
        let sig = super::abi::libcall_signature(&params, &returns);
        let done = super::abi::gen_call(self.lower, runtime_dest(routine), &sig, args);
        self.result(done)
    }

    /// `a op b` on pairs with the carry (`B`) or overflow (`O`) flag of the 128-bit result,
    /// and `cin` as the carry in: the two halves and the flag, all fresh and distinct.
    pub(super) fn alu128_flag(
        &mut self,
        (op_lo, op_hi): (AluOp, AluOp),
        cc: Cc,
        a: Pair,
        b: Pair,
        cin: Option<VReg>,
    ) -> Out {
        let (dst, f) = self.alu128((op_lo, op_hi), a, b, cin, Some(cc));
        Out::three(dst.0[0], dst.0[1], f.expect("a flag was asked for"))
    }

    /// `a op b` on pairs ([`AluInst::Alu128`]) into a fresh pair, and with `flag_cc` a fresh
    /// flag register set to that condition of the result.
    pub(super) fn alu128(
        &mut self,
        (op_lo, op_hi): (AluOp, AluOp),
        a: Pair,
        b: Pair,
        cin: Option<VReg>,
        flag_cc: Option<Cc>,
    ) -> (Pair, Option<VReg>) {
        let (dst, flag_reg) = self.pair_and_flag_regs(flag_cc.is_some());
        let flag = flag_cc.zip(flag_reg);
        self.lower.emit(AluInst::Alu128 {
            op_lo,
            op_hi,
            dst,
            a: a.0,
            b: b.0,
            cin,
            flag,
        });
        (Pair(dst), flag.map(|(_, f)| f))
    }

    pub(super) fn ext(&mut self, signed: bool, a: Value, to_bits: u32) -> VReg {
        let from = self.lower.value_type(a).bits();
        // What the rules know to be zero-extended already (`zero_extended`).
        if !signed && generated::Context::zero_extended(self, a).is_some() {
            return self.lower.value_vreg(a);
        }
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
        self.int_def(|dst| AluInst::Ext {
            mode,
            signed,
            dst,
            src,
        })
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

    /// The merged load `m` performed with `kind` (an extending load) into a fresh register.
    pub(super) fn ext_load_inst(&mut self, kind: LoadKind, m: Ld) -> VReg {
        self.lower.sink_load(m.value);
        let mem = super::lower_mem::addr_mem(self, m.load, m.addr, m.offset, 0);
        let dst = self.int();
        self.lower.emit(MemInst::Load {
            kind,
            dst,
            mem,
            trap: m.trap,
        });
        dst
    }

    /// `a op [load]` (`None`: multiply), performing the merged load `m`.
    pub(super) fn mem_op(&mut self, ty: Type, op: Option<AluOp>, a: VReg, m: Ld) -> VReg {
        self.lower.sink_load(m.value);
        let mem = super::lower_mem::addr_mem(self, m.load, m.addr, m.offset, 0);
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
}
