//! Global values for every ISA's selector: [`IselCtx::global_value_vreg`] walks a global
//! value chain (a symbol, the `vmctx` parameter, loads from a base, constant offsets) and
//! asks the ISA for each step's instructions ([`GlobalValueSteps`]).
//!
//! # Contract
//!
//! Requires a verified function (no cycles among global values); a chain deeper than
//! [`MAX_GLOBAL_VALUE_DEPTH`], an undefined global value, `vmctx` without a `vmctx`
//! parameter and a load of a type the ISA cannot load are typed errors. Each `global_value`
//! instruction evaluates its chain again: the chain has no instruction of its own whose
//! result could be shared. Steps are emitted innermost first (a load's base before the
//! load). Cost: linear in the chain's length (bounded).

use kestrel_ir::{ArgumentPurpose, FunctionName, GlobalValue, GlobalValueData, Type};
use kestrel_regalloc::VReg;

use super::{IselCtx, MaybeTrap};
use crate::machinst::{CodegenError, MachInst};

/// Global values nest at most this deep (the verifier rejects cycles; this bounds the rest).
pub const MAX_GLOBAL_VALUE_DEPTH: u32 = 32;

/// A step's register, or why the ISA cannot take it.
pub type StepResult = Result<VReg, CodegenError>;

/// The instructions of each step of a global value chain, into fresh registers.
pub trait GlobalValueSteps {
    /// The value of type `ty` loaded from `base + offset`, or `None` (emitting nothing) for
    /// a type the ISA cannot load.
    fn global_load(&mut self, ty: Type, base: VReg, offset: i32, trap: MaybeTrap) -> Option<VReg>;
    /// `base + offset` at type `ty`.
    fn global_add(&mut self, base: VReg, offset: i64, ty: Type) -> VReg;
    /// `&name + offset` (PC-relative when `colocated`, through the GOT otherwise).
    fn symbol(&mut self, name: &FunctionName, offset: i64, colocated: bool) -> StepResult;
}

impl<I: MachInst, F> IselCtx<'_, '_, I, F>
where
    Self: GlobalValueSteps,
{
    /// Evaluate global value `gv` into a fresh register.
    pub fn global_value_vreg(&mut self, gv: GlobalValue) -> Result<VReg, CodegenError> {
        self.global_value_at(gv, 0)
    }

    fn global_value_at(&mut self, gv: GlobalValue, depth: u32) -> Result<VReg, CodegenError> {
        if depth > MAX_GLOBAL_VALUE_DEPTH {
            return Err(CodegenError::unsupported(format!(
                "global value chain deeper than {MAX_GLOBAL_VALUE_DEPTH}"
            )));
        }
        let f = self.lower.f;
        let data = f
            .global_values
            .get(gv)
            .ok_or_else(|| CodegenError::unsupported(format!("undefined global value {gv}")))?;
        match *data {
            GlobalValueData::Symbol {
                ref name,
                offset,
                colocated,
            } => self.symbol(name, offset, colocated),
            GlobalValueData::VMContext => {
                let index = f
                    .signature
                    .special_param_index(ArgumentPurpose::VMContext)
                    .ok_or_else(|| {
                        CodegenError::unsupported("`vmctx` global value without a vmctx parameter")
                    })?;
                let entry = f
                    .layout
                    .entry_block()
                    .expect("a lowered function has an entry");
                Ok(self.lower.value_vreg(f.dfg.block_params(entry)[index]))
            }
            GlobalValueData::Load {
                base,
                offset,
                global_type,
                flags,
            } => {
                let base = self.global_value_at(base, depth + 1)?;
                // A type the ISA cannot load fails the function: the base's instructions,
                // already emitted, are dropped with it.
                self.global_load(global_type, base, offset, flags.trap_code)
                    .ok_or_else(|| {
                        CodegenError::unsupported(format!("global value loaded as {global_type}"))
                    })
            }
            GlobalValueData::IAddImm {
                base,
                offset,
                global_type,
            } => {
                let base = self.global_value_at(base, depth + 1)?;
                Ok(self.global_add(base, offset, global_type))
            }
        }
    }
}
