//! The control family every ISA shares: arguments, branches, returns, traps and calls, with
//! each ISA's condition and jump-table forms plugged in.
//!
//! # Contract
//!
//! [`ControlInst<X, R>`] is the control family of ISA `X` over registers `R`. Its variants
//! and their operand order are the same on every ISA, written once here: `map` and `visit`
//! (one [`map_operands`] list), `is_term` and printing. The ISA supplies, through
//! [`ControlIsa`], its fused condition ([`ControlIsa::Cond`], mapped and printed by the
//! ISA), its `br_table` forms ([`ControlIsa::Table`]: operands, printing, which end a
//! block), and its mnemonics; it encodes each variant (`isa/<name>/inst/control.rs`: the
//! encoders [`control_isa`]'s `emit_mapped` dispatches to).
//!
//! Cost: O(operands) per visit, like every family; printing allocates the printed string.

use std::fmt::Debug;
use std::sync::Arc;

use kestrel_ir::{CallConv, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::operands::{map_operands, FixedRegs, OperandSpec, Operands};
use super::shared_inst::{map_call_regs, reg_names, CallDest};
use super::BlockIndex;

/// What an ISA plugs into [`ControlInst`] (see the module contract). Every ISA implements
/// it with [`control_isa`].
pub trait ControlIsa: Clone + Debug + Sized + 'static {
    /// A fused test and the condition read from it (its operands come first in the
    /// consuming instruction's operand order).
    type Cond<R>;
    /// The ISA's `br_table` instructions, less their targets (registers and sizes only, so
    /// that mapping one copies no list).
    type Table<R>;
    /// The unconditional branch's mnemonic (`jmp`, `b`).
    const JUMP: &'static str;
    /// The trap instruction's mnemonic (`ud2`, `udf`).
    const TRAP: &'static str;
    /// The debug trap's printed form (`int3`, `brk #0`).
    const DEBUG_TRAP: &'static str;
    /// The register an indirect tail call's target is fixed to: one that carries no
    /// argument of the `tail` convention and that the tail-call sequence neither restores
    /// nor uses as a temporary.
    const TAIL_TARGET: PReg;

    /// `cond` with its registers visited as uses (the condition's `map`).
    fn map_cond<S, F: FnMut(OperandSpec) -> S>(
        cond: &Self::Cond<VReg>,
        m: &mut Operands<S, F>,
    ) -> Self::Cond<S>;
    /// The printed condition.
    fn pretty_cond(cond: &Self::Cond<String>) -> String;
    /// `table` with its registers visited in its operand order.
    fn map_table<S, F: FnMut(OperandSpec) -> S>(
        table: &Self::Table<VReg>,
        m: &mut Operands<S, F>,
    ) -> Self::Table<S>;
    /// The printed jump-table instruction of `targets` (the default first).
    fn pretty_table(table: &Self::Table<String>, targets: &[BlockIndex]) -> String;
    /// Whether the jump-table instruction ends its block.
    fn table_is_term(table: &Self::Table<VReg>) -> bool;
}

/// Implements [`ControlIsa`] for the ISA marker type `$isa` from its condition type `$cond`
/// and jump-table type `$table` (each generic over its registers, with a `map` and, over
/// `String`, a `pretty`; the table's takes the targets, and it says which forms end a block
/// with `is_term`) and its mnemonics; and `emit_mapped`, the family's encoding with the
/// allocated registers, dispatched once here to the encoders the invoking module has by
/// these names (over its `Ctx` and `Buf`): `uncond_branch`, `Cond::branch`, `emit_table`,
/// `emit_ret`, `trap`, `emit_trap_if`, `emit_debug_trap`, `emit_direct_call`,
/// `emit_indirect_call`, `emit_callee_pops` (what a call does after a callee that popped
/// its stack arguments) and `emit_return_call`. Expanded in `isa/<name>/inst/control.rs`.
macro_rules! control_isa {
    ($isa:ty {
        cond: $cond:ident,
        table: $table:ident,
        jump: $jump:literal,
        trap: $trap:literal,
        debug_trap: $debug_trap:literal,
        tail_target: $tail_target:expr $(,)?
    }) => {
        impl $crate::machinst::control::ControlIsa for $isa {
            type Cond<R> = $cond<R>;
            type Table<R> = $table<R>;
            const JUMP: &'static str = $jump;
            const TRAP: &'static str = $trap;
            const DEBUG_TRAP: &'static str = $debug_trap;
            const TAIL_TARGET: $crate::machinst::PReg = $tail_target;

            fn map_cond<S, F: FnMut($crate::machinst::operands::OperandSpec) -> S>(
                cond: &$cond,
                m: &mut $crate::machinst::operands::Operands<S, F>,
            ) -> $cond<S> {
                cond.map(m)
            }

            fn pretty_cond(cond: &$cond<String>) -> String {
                cond.pretty()
            }

            fn map_table<S, F: FnMut($crate::machinst::operands::OperandSpec) -> S>(
                table: &$table,
                m: &mut $crate::machinst::operands::Operands<S, F>,
            ) -> $table<S> {
                table.map(m)
            }

            fn pretty_table(
                table: &$table<String>,
                targets: &[$crate::machinst::BlockIndex],
            ) -> String {
                table.pretty(targets)
            }

            fn table_is_term(table: &$table) -> bool {
                table.is_term()
            }
        }

        impl $crate::machinst::control::ControlInst<$isa> {
            /// Encodes the instruction with the registers `m` hands out (one per operand, in
            /// operand order). `Args`, `Ret` and `Call` encode none of their list (see
            /// `FixedRegs`), only a call's target, its first operand; the others map only
            /// their registers (no mapped copy of the instruction is built).
            pub(crate) fn emit_mapped<
                F: FnMut($crate::machinst::operands::OperandSpec) -> $crate::machinst::PReg,
            >(
                &self,
                m: &mut $crate::machinst::operands::Operands<$crate::machinst::PReg, F>,
                ctx: &mut Ctx<'_, '_>,
                buf: &mut Buf,
            ) {
                use $crate::machinst::control::ControlInst as C;
                use $crate::machinst::shared_inst::CallDest;
                match self {
                    C::Args { .. } => {}
                    C::Jmp { target } => uncond_branch(buf, ctx, *target),
                    C::CondBr {
                        cond,
                        taken,
                        not_taken,
                    } => cond.map(m).branch(*taken, *not_taken, ctx, buf),
                    C::Table { table, targets } => emit_table(&table.map(m), targets, ctx, buf),
                    C::Ret { .. } => emit_ret(ctx, buf),
                    C::Trap { code } => trap(buf, *code),
                    C::TrapIf { cond, code } => emit_trap_if(&cond.map(m), *code, ctx, buf),
                    C::DebugTrap => emit_debug_trap(buf),
                    C::Call {
                        dest, callee_pops, ..
                    } => {
                        match dest {
                            CallDest::Direct(callee) => emit_direct_call(buf, callee),
                            CallDest::Indirect(target) => {
                                emit_indirect_call(buf, m.reg_use(*target))
                            }
                        }
                        if *callee_pops > 0 {
                            emit_callee_pops(buf, *callee_pops);
                        }
                    }
                    C::ReturnCall {
                        dest, stack_bytes, ..
                    } => {
                        let dest = $crate::machinst::control::map_tail_dest::<$isa, _, _>(dest, m);
                        emit_return_call(&dest, *stack_bytes, ctx, buf)
                    }
                }
            }
        }
    };
}
pub(crate) use control_isa;

/// One control instruction of ISA `X`. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum ControlInst<X: ControlIsa, R = VReg> {
    /// Entry pseudo-instruction: defines the register arguments. Operands: one late def per
    /// argument, fixed to its register.
    Args { args: FixedRegs<R> },
    /// Unconditional branch to `target`. No operands.
    Jmp { target: BlockIndex },
    /// The test, a branch to `taken` when `cond` holds, then a branch to `not_taken`.
    /// Operands: `[cond…]`.
    CondBr {
        cond: X::Cond<R>,
        taken: BlockIndex,
        not_taken: BlockIndex,
    },
    /// One of the ISA's `br_table` instructions: `targets[0]` is the default, `targets[1 +
    /// k]` the target for index `k`. Operands: the table's.
    Table { table: X::Table<R>, targets: Arc<[BlockIndex]> },
    /// Epilogue and return. Operands: one use per returned value, fixed to its register.
    Ret { rets: FixedRegs<R> },
    /// The trap instruction, recorded as a trap site with `code`. No operands.
    Trap { code: TrapCode },
    /// Trap with `code` when `cond` holds. Operands: `[cond…]`.
    TrapIf { cond: X::Cond<R>, code: TrapCode },
    /// The debug trap (`debugtrap`): stops in an attached debugger; without one the process
    /// gets SIGTRAP. No operands.
    DebugTrap,
    /// A call of `dest`, a callee of convention `conv`. Operands: the target (indirect calls
    /// only), then `regs`: the first `num_uses` are argument uses, the rest result defs, each
    /// fixed to its register. Clobbers what `conv` lets a callee overwrite, except the
    /// results (the ISA's `Inst::clobbers`). One list and a convention, not two lists and a
    /// register set, keep the family small.
    ///
    /// A callee of the `tail` convention pops its `callee_pops` bytes of stack arguments
    /// when it returns (16 bits keep the instruction small; more is an ABI error); the call then moves `sp` back down by as much, so the outgoing area
    /// stays where the frame has it (0 for every other convention).
    Call {
        dest: CallDest<R>,
        regs: FixedRegs<R>,
        num_uses: u32,
        conv: CallConv,
        callee_pops: u16,
    },
    /// A tail call of `dest` (`tail` convention): the epilogue, then a jump. The callee's
    /// stack arguments, `stack_bytes` of them (a multiple of 16), were stored in the
    /// outgoing area after a 16-byte header ([`super::abi::TAIL_CALL_HEADER`]); the sequence
    /// moves header and arguments to the top of this function's incoming argument area, so
    /// the callee's frame replaces this one. Operands: the target (indirect only, fixed to
    /// [`ControlIsa::TAIL_TARGET`]), then `regs`, the argument uses, each fixed to its
    /// register. Ends the block.
    ReturnCall {
        dest: CallDest<R>,
        regs: FixedRegs<R>,
        stack_bytes: u32,
    },
}

/// A tail call's destination with its register (if any) visited as a use fixed to `X`'s
/// [`ControlIsa::TAIL_TARGET`].
pub fn map_tail_dest<X: ControlIsa, S, F: FnMut(OperandSpec) -> S>(
    dest: &CallDest,
    m: &mut Operands<S, F>,
) -> CallDest<S> {
    match dest {
        CallDest::Direct(name) => CallDest::Direct(name.clone()),
        CallDest::Indirect(target) => CallDest::Indirect(m.fixed_use(*target, X::TAIL_TARGET)),
    }
}

impl<X: ControlIsa> ControlInst<X> {
    map_operands! {
        pub ControlInst<X>, |m| {
            Args {} [args = m.fixed_list(args, Operands::fixed_def)],
            Jmp { target } [],
            CondBr { taken, not_taken } [cond = X::map_cond(cond, m)],
            Table { targets } [table = X::map_table(table, m)],
            Ret {} [rets = m.fixed_list(rets, Operands::fixed_use)],
            Trap { code } [],
            TrapIf { code } [cond = X::map_cond(cond, m)],
            DebugTrap {} [],
            Call { num_uses, conv, callee_pops } [
                dest = dest.map(m),
                regs = map_call_regs(m, regs, *num_uses)
            ],
            ReturnCall { stack_bytes } [
                dest = map_tail_dest::<X, _, _>(dest, m),
                regs = m.fixed_list(regs, Operands::fixed_use)
            ],
        }
    }

    /// Whether the instruction ends its block.
    pub fn is_term(&self) -> bool {
        match self {
            ControlInst::Jmp { .. }
            | ControlInst::CondBr { .. }
            | ControlInst::Ret { .. }
            | ControlInst::ReturnCall { .. }
            | ControlInst::Trap { .. } => true,
            ControlInst::Table { table, .. } => X::table_is_term(table),
            _ => false,
        }
    }
}

impl<X: ControlIsa> ControlInst<X, String> {
    /// Printed form (registers already named).
    pub fn pretty(&self) -> String {
        match self {
            ControlInst::Args { args } => format!("args {}", reg_names(args)),
            ControlInst::Jmp { target } => format!("{} block{}", X::JUMP, target.0),
            ControlInst::CondBr {
                cond,
                taken,
                not_taken,
            } => format!(
                "br {}, block{}, block{}",
                X::pretty_cond(cond),
                taken.0,
                not_taken.0
            ),
            ControlInst::Table { table, targets } => X::pretty_table(table, targets),
            ControlInst::Ret { rets } => format!("ret {}", reg_names(rets)),
            ControlInst::Trap { code } => format!("{} {code}", X::TRAP),
            ControlInst::TrapIf { cond, code } => {
                format!("trap_if {}, {code}", X::pretty_cond(cond))
            }
            ControlInst::DebugTrap => X::DEBUG_TRAP.into(),
            ControlInst::Call {
                dest,
                regs,
                num_uses,
                ..
            } => {
                let (uses, defs) = regs.split_at(*num_uses as usize);
                let callee = match dest {
                    CallDest::Direct(name) => name.to_string(),
                    CallDest::Indirect(target) => format!("*{target}"),
                };
                format!("{} = call {callee}({})", reg_names(defs), reg_names(uses))
            }
            ControlInst::ReturnCall {
                dest,
                regs,
                stack_bytes,
            } => {
                let callee = match dest {
                    CallDest::Direct(name) => name.to_string(),
                    CallDest::Indirect(target) => format!("*{target}"),
                };
                format!(
                    "return_call {callee}({}) stack {stack_bytes}",
                    reg_names(regs)
                )
            }
        }
    }
}
