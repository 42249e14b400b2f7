//! Unwind facts: how to find the caller's frame at every instruction of a function.
//!
//! # Contract
//!
//! Emission records [`UnwindOp`]s at code offsets, in increasing offset order, through
//! `MachBuffer::add_unwind`; they are DWARF call-frame rules in the ISA's DWARF register
//! numbering, so a writer turns them into `.eh_frame` instructions one to one. Before the
//! first op, the ISA's [`UnwindCie`] rules hold (on x86-64: the caller's `rsp` is `rsp + 8`,
//! the return address is at `CFA - 8`). An op at offset `o` takes effect for the instruction
//! that starts at `o`.
//!
//! Markers sit between instructions, so the buffer never removes or moves code across one:
//! a branch that ends before a marker is never truncated (see `MachBuffer::add_unwind`).
//!
//! Cost: one record per prologue/epilogue step; nothing per ordinary instruction.

/// One call-frame rule change.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum UnwindOp {
    /// The CFA is now `reg + offset`.
    DefCfa { reg: u16, offset: u32 },
    /// The CFA is now `reg + (the current offset)`.
    DefCfaRegister { reg: u16 },
    /// The CFA is now `(the current register) + offset`.
    DefCfaOffset { offset: u32 },
    /// The caller's value of `reg` is saved at `CFA + cfa_offset`.
    SaveReg { reg: u16, cfa_offset: i32 },
    /// Push the current rules (before an epilogue in the middle of the code).
    RememberState,
    /// Pop the rules pushed by the last `RememberState` (after that epilogue's return).
    RestoreState,
}

/// The rules every function of an ISA starts with (the CIE of `.eh_frame`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct UnwindCie {
    /// DWARF register number of the stack pointer.
    pub sp_reg: u16,
    /// DWARF column of the return address.
    pub ra_reg: u16,
    /// At entry the CFA is `sp + cfa_offset`.
    pub cfa_offset: u32,
    /// At entry the return address is at `CFA + ra_offset` (`None`: in `ra_reg` itself).
    pub ra_offset: Option<i32>,
    /// Code alignment factor (instruction granularity in bytes).
    pub code_align: u8,
    /// Data alignment factor (stack slot granularity, negative: the stack grows down).
    pub data_align: i8,
}
