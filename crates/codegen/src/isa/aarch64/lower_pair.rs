//! The selection helpers for `i128` values held in register pairs (`lower_i128.rules`):
//! the pair of a value, add and subtract on pairs ([`AluInst::Pair`]), and addresses of
//! 16-byte accesses.
//!
//! # Contract
//!
//! Each helper emits into the current IR instruction's sequence and returns fresh
//! registers; none merges anything. The addresses they
//! return always leave room for the second half 8 bytes further (any `i32` offset).
//!
//! Cost: O(1) per call.

use kestrel_ir::entity::EntityRef;
use kestrel_ir::{StackSlot, Value};
use kestrel_regalloc::VReg;

use super::asm::add_sub::{AddSub, AddSubImm};
use super::asm::cond::Cond as Cc;
use super::asm::Size;
use super::inst::{AluInst, Mem, MemInst, PairRegs};
use super::isel::{IselCtx, Out, Pair};

impl IselCtx<'_, '_> {
    /// `a op b` on pairs into a fresh pair, with `cin` as the carry or borrow in, and with
    /// `flag_cc` a fresh register holding that condition of the 128-bit result.
    pub(super) fn pair_arith(
        &mut self,
        op: AddSub,
        a: Pair,
        b: Pair,
        cin: Option<VReg>,
        flag_cc: Option<Cc>,
    ) -> (Pair, Option<VReg>) {
        let (dst, flag) = self.pair_and_flag_regs(flag_cc.is_some());
        self.lower.emit(AluInst::Pair {
            op,
            // Read only with a flag.
            cc: flag_cc.unwrap_or(Cc::Hs),
            regs: Box::new(PairRegs {
                dst,
                a: a.0,
                b: b.0,
                cin,
                flag,
            }),
        });
        (Pair(dst), flag)
    }

    /// A call of `routine` with `args` and the current instruction's results, through the
    /// AAPCS64 (an ABI error is kept for the driver, as for calls).
    pub(super) fn runtime_call(
        &mut self,
        routine: super::lower::generated::Runtime,
        args: &[Value],
    ) -> Option<Out> {
        let (params, returns) = self.call_types(args);
        let sig = super::abi::libcall_signature(&params, &returns);
        let dest = super::lower::runtime_dest(routine);
        let done = super::abi::gen_call(self.lower, dest, &sig, args);
        self.result(done)
    }

    /// The pair and its flag as an instruction's three results.
    pub(super) fn pair_and_flag(&mut self, (p, flag): (Pair, Option<VReg>)) -> Out {
        let flag = flag.expect("a flag was asked for");
        Out::three(p.0[0], p.0[1], flag)
    }

    /// The address of a 16-byte access at `mem` (from `amode`) whose second half is 8 bytes
    /// further: `mem`, with `[x + y]` and offsets whose second half would overflow computed
    /// into a register first.
    pub(super) fn widened(&mut self, mem: Mem) -> Mem {
        match mem {
            Mem::RegReg { base, index } => {
                let sum = self.int();
                self.lower.emit(AluInst::Rrr {
                    op: super::inst::AluOp::Add,
                    size: Size::S64,
                    dst: sum,
                    a: base,
                    b: index,
                });
                Mem::Reg { base: sum, off: 0 }
            }
            Mem::Reg { base, off } if off.checked_add(8).is_none() => {
                let moved = self.int();
                self.lower.emit(AluInst::AddImm {
                    op: AddSub::Add,
                    size: Size::S64,
                    dst: moved,
                    a: base,
                    imm: AddSubImm::new(8).expect("8 fits"),
                });
                Mem::Reg {
                    base: moved,
                    off: off - 8,
                }
            }
            mem => mem,
        }
    }
}

impl IselCtx<'_, '_> {
    /// The address of a 16-byte access at `slot + offset`: the slot itself, or, when the
    /// second half's offset would overflow, the slot's address computed into a register.
    pub(super) fn wide_slot_mem(&mut self, slot: StackSlot, offset: i32) -> Mem {
        let slot = slot.index() as u32;
        if offset.checked_add(8).is_some() {
            return Mem::Slot { slot, off: offset };
        }
        let base = self.int();
        self.lower.emit(MemInst::StackAddr {
            dst: base,
            slot,
            off: offset,
        });
        Mem::Reg { base, off: 0 }
    }
}

/// The second 8 bytes of a 16-byte access at `mem` (from [`IselCtx::widened`] or
/// [`IselCtx::wide_slot_mem`]).
pub(super) fn mem_hi(mem: Mem) -> Mem {
    let next = |off: i32| off.checked_add(8).expect("wide_mem leaves room for 8 more");
    match mem {
        Mem::Reg { base, off } => Mem::Reg {
            base,
            off: next(off),
        },
        Mem::Slot { slot, off } => Mem::Slot {
            slot,
            off: next(off),
        },
        Mem::IncomingArg { off } => Mem::IncomingArg { off: next(off) },
        Mem::OutgoingArg { off } => Mem::OutgoingArg { off: next(off) },
        Mem::RetArea { off } => Mem::RetArea { off: next(off) },
        Mem::RegReg { .. } => unreachable!("wide_mem never gives [x + y]"),
    }
}

#[cfg(test)]
mod tests {
    use crate::isa::aarch64::Aarch64Isa;
    use crate::isa::TargetIsa;
    use crate::settings::Flags;

    /// 16-byte accesses at offsets whose second half would overflow an `i32` still compile
    /// (the address is computed into a register first), never panic.
    #[test]
    fn wide_accesses_at_extreme_offsets_compile() {
        let text = "function %f(i64, i128) -> i128 {
            ss0 = explicit_slot 16
        block0(v0: i64, v1: i128):
            stack_store v1, ss0+2147483647
            v2 = stack_load.i128 ss0+2147483644
            store v2, v0+2147483647
            store.i128 big v2, v0-2147483648
            v3 = load.i128 v0+2147483640
            v4 = load.i128 big v0+2147483647
            v5 = iadd v3, v4
            return v5
        }";
        let f = &kestrel_ir::parse_functions(text, "wide.clif").unwrap()[0];
        let flags = Flags {
            check_regalloc: true,
            ..Flags::default()
        };
        let code = Aarch64Isa::default().compile_function(f, &flags);
        assert!(code.is_ok(), "{:?}", code.err());
    }
}
