//! Kestrel's SSA intermediate representation.
//!
//! A [`Function`] holds its instructions in flat dense arrays (seed 004): values,
//! instructions and blocks are `u32` indices, operand lists share one pool, block order is
//! explicit, and rewrites are queued and applied by [`Function::compact`]. The text format is
//! CLIF ([`parse_functions`], [`Function`]'s `Display`), checked by [`verify_function`], and
//! built programmatically with [`builder::FunctionBuilder`].

pub mod builder;
pub mod cfg;
pub mod compact;
pub mod dfg;
pub mod domtree;
pub mod entity;
pub mod function;
pub mod fuzzing;
pub mod ieee;
pub mod immediates;
pub mod instructions;
pub mod layout;
pub mod literal;
pub mod opcode;
pub mod pool;
pub mod rules_view;
pub mod scratch;
pub mod text;
pub mod types;
pub mod typing;
pub mod verifier;

pub use dfg::{ConstantData, DataFlowGraph, ValueDef};
pub use entity::{
    Block, Constant, ExceptionTable, FuncRef, GlobalValue, Immediate, Inst, JumpTable, SigRef,
    StackSlot, Value,
};
pub use function::{
    AbiParam, ArgumentExtension, ArgumentPurpose, CallConv, ExceptionTableData, ExtFuncData,
    Function, FunctionName, GlobalValueData, JumpTableData, Signature, StackSlotData,
};
pub use immediates::{AtomicRmwOp, FloatCC, IntCC, MemFlags, TrapCode};
pub use instructions::{BlockCall, InstructionData};
pub use opcode::Opcode;
pub use text::{parse_functions, ParseError};
pub use types::Type;
pub use verifier::{verify_function, VerifierErrors};
