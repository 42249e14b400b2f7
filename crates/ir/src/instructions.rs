//! Instruction data: one compact, `Copy` enum variant per instruction format.
//!
//! Fixed operands are stored inline; variable-length ones (call arguments, return values,
//! branch arguments) are [`ValueList`]s in the function's pool. Instruction results are not
//! stored here but in the data-flow graph.

use crate::entity::{
    Block, Constant, ExceptionTable, FuncRef, GlobalValue, Immediate, JumpTable, SigRef, StackSlot,
    Value,
};
use crate::immediates::{AtomicRmwOp, FloatCC, IntCC, MemFlags, TrapCode};
use crate::opcode::{InstructionFormat, Opcode};
use crate::pool::{ValueList, ValueListPool};

/// A branch destination: a block and the arguments passed to its parameters.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct BlockCall {
    pub block: Block,
    pub args: ValueList,
}

impl BlockCall {
    #[inline]
    pub fn new(block: Block, args: &[Value], pool: &mut ValueListPool) -> Self {
        BlockCall {
            block,
            args: pool.alloc(args),
        }
    }
}

/// The operands of one instruction.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum InstructionData {
    Unary {
        opcode: Opcode,
        arg: Value,
    },
    UnaryImm {
        opcode: Opcode,
        imm: i64,
    },
    UnaryIeee16 {
        opcode: Opcode,
        imm: u16,
    },
    UnaryIeee32 {
        opcode: Opcode,
        imm: u32,
    },
    UnaryIeee64 {
        opcode: Opcode,
        imm: u64,
    },
    UnaryGlobalValue {
        opcode: Opcode,
        global_value: GlobalValue,
    },
    UnaryConst {
        opcode: Opcode,
        constant: Constant,
    },
    Binary {
        opcode: Opcode,
        args: [Value; 2],
    },
    BinaryImm8 {
        opcode: Opcode,
        arg: Value,
        imm: u8,
    },
    Ternary {
        opcode: Opcode,
        args: [Value; 3],
    },
    TernaryImm8 {
        opcode: Opcode,
        args: [Value; 2],
        imm: u8,
    },
    Shuffle {
        opcode: Opcode,
        args: [Value; 2],
        mask: Immediate,
    },
    MultiAry {
        opcode: Opcode,
        args: ValueList,
    },
    NullAry {
        opcode: Opcode,
    },
    IntCompare {
        opcode: Opcode,
        cond: IntCC,
        args: [Value; 2],
    },
    FloatCompare {
        opcode: Opcode,
        cond: FloatCC,
        args: [Value; 2],
    },
    Jump {
        opcode: Opcode,
        destination: BlockCall,
    },
    Brif {
        opcode: Opcode,
        arg: Value,
        blocks: [BlockCall; 2],
    },
    BranchTable {
        opcode: Opcode,
        arg: Value,
        table: JumpTable,
    },
    Call {
        opcode: Opcode,
        func_ref: FuncRef,
        args: ValueList,
    },
    /// `args[0]` is the callee address, the rest are the arguments.
    CallIndirect {
        opcode: Opcode,
        sig_ref: SigRef,
        args: ValueList,
    },
    /// The destinations (and the signature written in text) are in the exception table.
    TryCall {
        opcode: Opcode,
        func_ref: FuncRef,
        args: ValueList,
        table: ExceptionTable,
    },
    /// `args[0]` is the callee address, the rest are the arguments.
    TryCallIndirect {
        opcode: Opcode,
        sig_ref: SigRef,
        args: ValueList,
        table: ExceptionTable,
    },
    FuncAddr {
        opcode: Opcode,
        func_ref: FuncRef,
    },
    Load {
        opcode: Opcode,
        flags: MemFlags,
        arg: Value,
        offset: i32,
    },
    /// `args` = [stored value, address].
    Store {
        opcode: Opcode,
        flags: MemFlags,
        args: [Value; 2],
        offset: i32,
    },
    LoadNoOffset {
        opcode: Opcode,
        flags: MemFlags,
        arg: Value,
    },
    /// `args` = [stored value, address].
    StoreNoOffset {
        opcode: Opcode,
        flags: MemFlags,
        args: [Value; 2],
    },
    /// `args` = [address, operand].
    AtomicRmw {
        opcode: Opcode,
        flags: MemFlags,
        op: AtomicRmwOp,
        args: [Value; 2],
    },
    /// `args` = [address, expected, replacement].
    AtomicCas {
        opcode: Opcode,
        flags: MemFlags,
        args: [Value; 3],
    },
    StackLoad {
        opcode: Opcode,
        stack_slot: StackSlot,
        offset: i32,
    },
    StackStore {
        opcode: Opcode,
        arg: Value,
        stack_slot: StackSlot,
        offset: i32,
    },
    Trap {
        opcode: Opcode,
        code: TrapCode,
    },
    CondTrap {
        opcode: Opcode,
        arg: Value,
        code: TrapCode,
    },
    IntAddTrap {
        opcode: Opcode,
        args: [Value; 2],
        code: TrapCode,
    },
}

impl InstructionData {
    #[inline]
    pub fn opcode(&self) -> Opcode {
        use InstructionData::*;
        match *self {
            Unary { opcode, .. }
            | UnaryImm { opcode, .. }
            | UnaryIeee16 { opcode, .. }
            | UnaryIeee32 { opcode, .. }
            | UnaryIeee64 { opcode, .. }
            | UnaryGlobalValue { opcode, .. }
            | UnaryConst { opcode, .. }
            | Binary { opcode, .. }
            | BinaryImm8 { opcode, .. }
            | Ternary { opcode, .. }
            | TernaryImm8 { opcode, .. }
            | Shuffle { opcode, .. }
            | MultiAry { opcode, .. }
            | NullAry { opcode }
            | IntCompare { opcode, .. }
            | FloatCompare { opcode, .. }
            | Jump { opcode, .. }
            | Brif { opcode, .. }
            | BranchTable { opcode, .. }
            | Call { opcode, .. }
            | CallIndirect { opcode, .. }
            | TryCall { opcode, .. }
            | TryCallIndirect { opcode, .. }
            | FuncAddr { opcode, .. }
            | Load { opcode, .. }
            | Store { opcode, .. }
            | LoadNoOffset { opcode, .. }
            | StoreNoOffset { opcode, .. }
            | AtomicRmw { opcode, .. }
            | AtomicCas { opcode, .. }
            | StackLoad { opcode, .. }
            | StackStore { opcode, .. }
            | Trap { opcode, .. }
            | CondTrap { opcode, .. }
            | IntAddTrap { opcode, .. } => opcode,
        }
    }

    /// The format this variant represents (always equal to `self.opcode().format()` for
    /// well-formed data).
    #[inline]
    pub fn format(&self) -> InstructionFormat {
        use InstructionData as D;
        use InstructionFormat as F;
        match self {
            D::Unary { .. } => F::Unary,
            D::UnaryImm { .. } => F::UnaryImm,
            D::UnaryIeee16 { .. } => F::UnaryIeee16,
            D::UnaryIeee32 { .. } => F::UnaryIeee32,
            D::UnaryIeee64 { .. } => F::UnaryIeee64,
            D::UnaryGlobalValue { .. } => F::UnaryGlobalValue,
            D::UnaryConst { .. } => F::UnaryConst,
            D::Binary { .. } => F::Binary,
            D::BinaryImm8 { .. } => F::BinaryImm8,
            D::Ternary { .. } => F::Ternary,
            D::TernaryImm8 { .. } => F::TernaryImm8,
            D::Shuffle { .. } => F::Shuffle,
            D::MultiAry { .. } => F::MultiAry,
            D::NullAry { .. } => F::NullAry,
            D::IntCompare { .. } => F::IntCompare,
            D::FloatCompare { .. } => F::FloatCompare,
            D::Jump { .. } => F::Jump,
            D::Brif { .. } => F::Brif,
            D::BranchTable { .. } => F::BranchTable,
            D::Call { .. } => F::Call,
            D::CallIndirect { .. } => F::CallIndirect,
            D::TryCall { .. } => F::TryCall,
            D::TryCallIndirect { .. } => F::TryCallIndirect,
            D::FuncAddr { .. } => F::FuncAddr,
            D::Load { .. } => F::Load,
            D::Store { .. } => F::Store,
            D::LoadNoOffset { .. } => F::LoadNoOffset,
            D::StoreNoOffset { .. } => F::StoreNoOffset,
            D::AtomicRmw { .. } => F::AtomicRmw,
            D::AtomicCas { .. } => F::AtomicCas,
            D::StackLoad { .. } => F::StackLoad,
            D::StackStore { .. } => F::StackStore,
            D::Trap { .. } => F::Trap,
            D::CondTrap { .. } => F::CondTrap,
            D::IntAddTrap { .. } => F::IntAddTrap,
        }
    }

    /// The fixed value operands (not those in a [`ValueList`]).
    #[inline]
    pub fn fixed_args(&self) -> &[Value] {
        use InstructionData::*;
        match self {
            Unary { arg, .. }
            | BinaryImm8 { arg, .. }
            | Brif { arg, .. }
            | BranchTable { arg, .. }
            | Load { arg, .. }
            | LoadNoOffset { arg, .. }
            | StackStore { arg, .. }
            | CondTrap { arg, .. } => std::slice::from_ref(arg),
            Binary { args, .. }
            | TernaryImm8 { args, .. }
            | Shuffle { args, .. }
            | IntCompare { args, .. }
            | FloatCompare { args, .. }
            | Store { args, .. }
            | StoreNoOffset { args, .. }
            | AtomicRmw { args, .. }
            | IntAddTrap { args, .. } => args,
            Ternary { args, .. } | AtomicCas { args, .. } => args,
            _ => &[],
        }
    }

    /// Mutable access to the fixed value operands.
    #[inline]
    pub fn fixed_args_mut(&mut self) -> &mut [Value] {
        use InstructionData::*;
        match self {
            Unary { arg, .. }
            | BinaryImm8 { arg, .. }
            | Brif { arg, .. }
            | BranchTable { arg, .. }
            | Load { arg, .. }
            | LoadNoOffset { arg, .. }
            | StackStore { arg, .. }
            | CondTrap { arg, .. } => std::slice::from_mut(arg),
            Binary { args, .. }
            | TernaryImm8 { args, .. }
            | Shuffle { args, .. }
            | IntCompare { args, .. }
            | FloatCompare { args, .. }
            | Store { args, .. }
            | StoreNoOffset { args, .. }
            | AtomicRmw { args, .. }
            | IntAddTrap { args, .. } => args,
            Ternary { args, .. } | AtomicCas { args, .. } => args,
            _ => &mut [],
        }
    }

    /// The variable-length operand list, if this format has one.
    #[inline]
    pub fn value_list(&self) -> Option<ValueList> {
        match *self {
            InstructionData::MultiAry { args, .. }
            | InstructionData::Call { args, .. }
            | InstructionData::CallIndirect { args, .. }
            | InstructionData::TryCall { args, .. }
            | InstructionData::TryCallIndirect { args, .. } => Some(args),
            _ => None,
        }
    }

    /// Mutable access to the variable-length operand list handle.
    #[inline]
    pub fn value_list_mut(&mut self) -> Option<&mut ValueList> {
        match self {
            InstructionData::MultiAry { args, .. }
            | InstructionData::Call { args, .. }
            | InstructionData::CallIndirect { args, .. }
            | InstructionData::TryCall { args, .. }
            | InstructionData::TryCallIndirect { args, .. } => Some(args),
            _ => None,
        }
    }

    /// All value operands except branch arguments: fixed ones, then the value list.
    #[inline]
    pub fn arguments<'a>(&'a self, pool: &'a ValueListPool) -> impl Iterator<Item = Value> + 'a {
        let list = self.value_list().map(|l| pool.get(l)).unwrap_or(&[]);
        self.fixed_args().iter().chain(list.iter()).copied()
    }

    /// The exception table of a `try_call` or `try_call_indirect`.
    #[inline]
    pub fn exception_table(&self) -> Option<ExceptionTable> {
        match *self {
            InstructionData::TryCall { table, .. }
            | InstructionData::TryCallIndirect { table, .. } => Some(table),
            _ => None,
        }
    }

    /// The direct branch destinations (`jump`, `brif`); `br_table` keeps its in a jump table,
    /// `try_call` in an exception table.
    #[inline]
    pub fn branch_destinations(&self) -> &[BlockCall] {
        match self {
            InstructionData::Jump { destination, .. } => std::slice::from_ref(destination),
            InstructionData::Brif { blocks, .. } => blocks,
            _ => &[],
        }
    }

    /// Mutable access to the direct branch destinations.
    #[inline]
    pub fn branch_destinations_mut(&mut self) -> &mut [BlockCall] {
        match self {
            InstructionData::Jump { destination, .. } => std::slice::from_mut(destination),
            InstructionData::Brif { blocks, .. } => blocks,
            _ => &mut [],
        }
    }

    /// Memory flags of a memory access (and of `bitcast`, which uses them for endianness).
    pub fn mem_flags(&self) -> Option<MemFlags> {
        use InstructionData::*;
        match *self {
            Load { flags, .. }
            | Store { flags, .. }
            | LoadNoOffset { flags, .. }
            | StoreNoOffset { flags, .. }
            | AtomicRmw { flags, .. }
            | AtomicCas { flags, .. } => Some(flags),
            _ => None,
        }
    }

    /// The trap code of a trapping instruction that names one.
    #[inline]
    pub fn trap_code(&self) -> Option<TrapCode> {
        use InstructionData::*;
        match *self {
            Trap { code, .. } | CondTrap { code, .. } | IntAddTrap { code, .. } => Some(code),
            _ => self.mem_flags().and_then(|f| f.trap_code),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_data_stays_small() {
        // Flat storage only pays off if the records stay compact.
        assert!(std::mem::size_of::<InstructionData>() <= 32);
    }

    #[test]
    fn argument_views() {
        let mut pool = ValueListPool::new();
        let v = |n| Value::from_u32(n);
        let call = InstructionData::CallIndirect {
            opcode: Opcode::CallIndirect,
            sig_ref: SigRef::from_u32(0),
            args: pool.alloc(&[v(1), v(2), v(3)]),
        };
        assert_eq!(
            call.arguments(&pool).collect::<Vec<_>>(),
            [v(1), v(2), v(3)]
        );
        let store = InstructionData::Store {
            opcode: Opcode::Store,
            flags: MemFlags::new(),
            args: [v(4), v(5)],
            offset: 8,
        };
        assert_eq!(store.fixed_args(), &[v(4), v(5)]);
        assert_eq!(store.format(), Opcode::Store.format());
    }
}
