//! Memory for the AArch64 selector: what the memory rules of `lower.rules` cannot say yet.
//!
//! # Contract
//!
//! Address folding is rules (`amode` in `lower.rules`).
//!
//! - the [`GlobalValueSteps`] of a global value chain (a symbol, loads and constant offsets;
//!   walked by `machinst::isel::global_value`); [`IselCtx::symbol_addr`] a symbol's address.
//!
//! Cost: O(1) per step.

use std::sync::Arc;

use kestrel_ir::{FunctionName, Type};
use kestrel_regalloc::VReg;

use super::inst::{AluInst, AluOp, LoadKind, Mem, MemInst};
use super::isel::{arith_for, mem_size, op_size, IselCtx};
use super::lower::generated;
use crate::machinst::isel::global_value::{GlobalValueSteps, StepResult};
use crate::machinst::isel::MaybeTrap;
use crate::machinst::CodegenError;

impl GlobalValueSteps for IselCtx<'_, '_> {
    fn global_load(&mut self, ty: Type, base: VReg, offset: i32, trap: MaybeTrap) -> Option<VReg> {
        if !ty.is_int() || ty.bits() > 64 {
            return None;
        }
        let kind = LoadKind::Int {
            size: mem_size(ty),
            signed: false,
        };
        let mem = Mem::Reg { base, off: offset };
        Some(generated::Context::load(self, kind, mem, trap))
    }

    fn global_add(&mut self, a: VReg, offset: i64, ty: Type) -> VReg {
        let (size, dst) = (op_size(ty), self.int());
        match arith_for(offset) {
            Some((op, imm)) => self.lower.emit(AluInst::AddImm {
                op,
                size,
                dst,
                a,
                imm,
            }),
            None => {
                let b = self.int();
                self.lower.emit(AluInst::MovImm {
                    size,
                    dst: b,
                    imm: offset as u64,
                });
                self.lower.emit(AluInst::Rrr {
                    op: AluOp::Add,
                    size,
                    dst,
                    a,
                    b,
                });
            }
        }
        dst
    }

    /// An offset must fit 32 bits.
    fn symbol(&mut self, name: &FunctionName, offset: i64, colocated: bool) -> StepResult {
        let offset = i32::try_from(offset).map_err(|_| {
            CodegenError::unsupported(format!("symbol offset {offset} beyond 32 bits on aarch64"))
        })?;
        Ok(self.symbol_addr(Arc::new(name.clone()), offset, !colocated))
    }
}

impl IselCtx<'_, '_> {
    /// `dst = &name + offset` (see [`MemInst::SymbolAddr`]).
    pub(super) fn symbol_addr(
        &mut self,
        name: Arc<kestrel_ir::FunctionName>,
        offset: i32,
        got: bool,
    ) -> VReg {
        self.int_def(|dst| MemInst::SymbolAddr {
            dst,
            name,
            offset,
            got,
        })
    }
}
