//! Instruction parts every ISA's families share: what a call calls, the frame values, the
//! mapping of a call's fixed-register operands, and the printing of register and block lists.
//!
//! Cost: each function is O(its operands); printing allocates the printed string.

use std::sync::Arc;

use kestrel_ir::FunctionName;
use kestrel_regalloc::PRegSet;

use super::operands::{FixedRegs, OperandSpec, Operands};
use super::{BlockIndex, PReg, VReg};

/// What a call calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallDest<R = VReg> {
    /// A named function, through a call relocation (shared: mapping an instruction's
    /// registers copies it).
    Direct(Arc<FunctionName>),
    /// An address in a register (the call's first operand).
    Indirect(R),
}

impl CallDest {
    /// The destination with its register (if any) visited as a use.
    pub fn map<S, F: FnMut(OperandSpec) -> S>(&self, m: &mut Operands<S, F>) -> CallDest<S> {
        match self {
            CallDest::Direct(name) => CallDest::Direct(name.clone()),
            CallDest::Indirect(target) => CallDest::Indirect(m.reg_use(*target)),
        }
    }
}

/// A value of the frame itself (the `get_*` IR opcodes).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameValue {
    StackPointer,
    FramePointer,
    ReturnAddress,
}

impl FrameValue {
    /// The IR opcode's name.
    pub fn name(self) -> &'static str {
        match self {
            FrameValue::StackPointer => "get_stack_pointer",
            FrameValue::FramePointer => "get_frame_pointer",
            FrameValue::ReturnAddress => "get_return_address",
        }
    }
}

/// A call's fixed-register operands, `regs` = its `num_uses` uses (arguments) then its defs
/// (results), visited in that order.
pub fn map_call_regs<S, F: FnMut(OperandSpec) -> S>(
    m: &mut Operands<S, F>,
    regs: &[(VReg, PReg)],
    num_uses: u32,
) -> FixedRegs<S> {
    let (uses, defs) = regs.split_at(num_uses as usize);
    let mut mapped = m.fixed_list(uses, Operands::fixed_use);
    mapped.extend(m.fixed_list(defs, Operands::fixed_def));
    mapped
}

/// What a call overwrites beyond its defs: `clobbered` (its convention's caller-saved
/// registers) less the registers of its results, `regs[num_uses..]`.
pub fn call_clobbers_less_results<R>(
    mut clobbered: PRegSet,
    regs: &[(R, PReg)],
    num_uses: u32,
) -> PRegSet {
    for (_, r) in &regs[num_uses as usize..] {
        clobbered.remove(*r);
    }
    clobbered
}

/// `block1, block2, …`.
pub fn block_list(blocks: &[BlockIndex]) -> String {
    let names: Vec<String> = blocks.iter().map(|b| format!("block{}", b.0)).collect();
    names.join(", ")
}

/// The registers' printed names, comma-separated.
pub fn reg_names(regs: &[(String, PReg)]) -> String {
    let names: Vec<&str> = regs.iter().map(|(n, _)| n.as_str()).collect();
    names.join(", ")
}

/// The glue of an ISA's instruction enum `Inst<R = VReg>`, one variant `$variant` per
/// family `$family<R>` (each family with `map`, `visit` and `pretty`; `ControlInst` with
/// `Call { regs, num_uses, conv, .. }`, and the ISA's `abi::call_clobbers`): `From` each
/// family, and `Inst::map`, `collect_operands`, `clobbers` and `pretty`, each dispatching
/// to the family. Expanded in the ISA's `inst` module.
macro_rules! inst_families {
    ($($family:ident => $variant:ident),* $(,)?) => {
        $(
            impl From<$family> for Inst {
                fn from(i: $family) -> Inst {
                    Inst::$variant(i)
                }
            }
        )*

        impl Inst {
            /// The same instruction with every register operand mapped (see the module
            /// contract).
            pub fn map<S, F: FnMut(OperandSpec) -> S>(&self, m: &mut Operands<S, F>) -> Inst<S> {
                match self {
                    $(Inst::$variant(i) => Inst::$variant(i.map(m)),)*
                }
            }

            /// Append the operands, in operand order, to `out`.
            pub fn collect_operands(&self, out: &mut Vec<Operand>) {
                let m = &mut Operands::new(
                    #[inline(always)]
                    |op: OperandSpec| out.push(op.operand()),
                );
                match self {
                    $(Inst::$variant(i) => i.visit(m),)*
                }
            }

            /// Registers overwritten beyond the defs: a call's clobbers (by its convention),
            /// less its results.
            #[inline]
            pub fn clobbers(&self) -> PRegSet {
                match self {
                    Inst::Control(ControlInst::Call {
                        regs,
                        num_uses,
                        conv,
                        ..
                    }) => $crate::machinst::shared_inst::call_clobbers_less_results(
                        super::abi::call_clobbers(*conv),
                        regs,
                        *num_uses,
                    ),
                    _ => PRegSet::empty(),
                }
            }

            /// Printed form, operands named by `ops` (in operand order).
            pub fn pretty(&self, ops: &[String]) -> String {
                let mut names = ops.iter();
                let named = self.map(&mut Operands::keeping_lists(|_| {
                    names.next().cloned().unwrap_or_else(|| "?".into())
                }));
                match named {
                    $(Inst::$variant(i) => i.pretty(),)*
                }
            }
        }
    };
}
pub(crate) use inst_families;

/// The [`MachInst`](super::MachInst) methods that only forward to an ISA's `Inst` glue
/// ([`inst_families`]) or name its `AluInst::Mov` and `ControlInst::Jmp`: operands,
/// clobbers, moves, terminators, jumps and printing. Expanded inside `impl MachInst`.
macro_rules! mach_inst_forwarding {
    () => {
        fn collect_operands(&self, out: &mut Vec<kestrel_regalloc::Operand>) {
            Inst::collect_operands(self, out)
        }

        #[inline]
        fn clobbers(&self) -> PRegSet {
            Inst::clobbers(self)
        }

        fn is_move(&self) -> Option<(VReg, VReg)> {
            match *self {
                Inst::Alu(AluInst::Mov { dst, src }) => Some((dst, src)),
                _ => None,
            }
        }

        fn is_term(&self) -> bool {
            matches!(self, Inst::Control(c) if c.is_term())
        }

        fn gen_jump(target: BlockIndex) -> Self {
            ControlInst::Jmp { target }.into()
        }

        fn pretty(&self, ops: &[String]) -> String {
            Inst::pretty(self, ops)
        }
    };
}
pub(crate) use mach_inst_forwarding;
