//! Memory for the AArch64 selector: what the memory rules of `lower.rules` cannot say yet.
//!
//! # Contract
//!
//! - [`IselCtx::addr_mem`] folds an address `iadd` that only the access uses into the
//!   access (a constant into the offset, or two registers into `[x + y]`), merging the
//!   producers it absorbs once the fold is sure; which producer is an `iadd` the rules say
//!   (`iadd_parts`).
//! - [`IselCtx::global_value_vreg`] evaluates a global value chain (a symbol, `vmctx`, loads
//!   and constant offsets); [`IselCtx::symbol_addr`] a symbol's address.
//!
//! Cost: O(1) per access, plus the length of a global value chain (bounded).

use std::sync::Arc;

use kestrel_ir::{ArgumentPurpose, GlobalValue, GlobalValueData, Value};
use kestrel_regalloc::VReg;

use super::inst::{AluInst, AluOp, LoadKind, Mem, MemInst};
use super::isel::{arith_for, mem_size, op_size, IselCtx};
use super::lower::generated;
use crate::chaos::Decision;
use crate::machinst::CodegenError;

/// Global values nest at most this deep (the verifier rejects cycles; this bounds the rest).
const MAX_GLOBAL_VALUE_DEPTH: u32 = 32;

impl IselCtx<'_, '_> {
    /// Evaluate global value `gv` into a fresh vreg (a symbol's address, the `vmctx`
    /// parameter, loads from it, and constant offsets). Each `global_value` instruction
    /// evaluates its chain again: the chain has no instruction of its own to share.
    pub(super) fn global_value_vreg(
        &mut self,
        gv: GlobalValue,
        depth: u32,
    ) -> Result<VReg, CodegenError> {
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
            } => {
                let offset = i32::try_from(offset).map_err(|_| {
                    CodegenError::unsupported(format!(
                        "symbol offset {offset} beyond 32 bits on aarch64"
                    ))
                })?;
                Ok(self.symbol_addr(Arc::new(name.clone()), offset, !colocated))
            }
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
                if !global_type.is_int() || global_type.bits() > 64 {
                    return Err(CodegenError::unsupported(format!(
                        "global value loaded as {global_type}"
                    )));
                }
                let base = self.global_value_vreg(base, depth + 1)?;
                let kind = LoadKind::Int {
                    size: mem_size(global_type),
                    signed: false,
                };
                let mem = Mem::Reg { base, off: offset };
                Ok(generated::Context::load(self, kind, mem, flags.trap_code))
            }
            GlobalValueData::IAddImm {
                base,
                offset,
                global_type,
            } => {
                let a = self.global_value_vreg(base, depth + 1)?;
                let (size, dst) = (op_size(global_type), self.int());
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
                Ok(dst)
            }
        }
    }

    /// The memory operand of an access at `addr + offset` by the current instruction: an
    /// `iadd` that only this access uses (in this block) folds in, its constant operand
    /// into the offset (while the sum fits 32 bits), or with no offset, its two registers
    /// into `[x + y]`. Each fold is optional (asked of the chaos control) and merges the
    /// producers it absorbs only once it is sure to happen.
    pub(super) fn addr_mem(&mut self, addr: Value, offset: i32) -> Mem {
        let folded = self.lower.mergeable_inst(addr, self.inst).and_then(|inst| {
            let generated::Operands2::Two { a, b } =
                generated::constructor_iadd_parts(self, addr, inst)?;
            let constant = [(a, b), (b, a)].into_iter().find_map(|(x, k)| {
                let sum = i64::from(offset).checked_add(self.lower.const_value(k)?)?;
                Some((x, k, i32::try_from(sum).ok()?))
            });
            match constant {
                Some((x, k, off)) if !self.lower.should_skip(Decision::AddrConstFold) => {
                    self.lower.merge(addr);
                    self.lower.merge(k);
                    let base = self.lower.value_vreg(x);
                    Some(Mem::Reg { base, off })
                }
                None if offset == 0 && !self.lower.should_skip(Decision::AddrAddFold) => {
                    self.lower.merge(addr);
                    let base = self.lower.value_vreg(a);
                    let index = self.lower.value_vreg(b);
                    Some(Mem::RegReg { base, index })
                }
                _ => None,
            }
        });
        folded.unwrap_or_else(|| Mem::Reg {
            base: self.lower.value_vreg(addr),
            off: offset,
        })
    }

    /// `dst = &name + offset` (see [`MemInst::SymbolAddr`]).
    pub(super) fn symbol_addr(
        &mut self,
        name: Arc<kestrel_ir::FunctionName>,
        offset: i32,
        got: bool,
    ) -> VReg {
        let dst = self.int();
        self.lower.emit(MemInst::SymbolAddr {
            dst,
            name,
            offset,
            got,
        });
        dst
    }
}
