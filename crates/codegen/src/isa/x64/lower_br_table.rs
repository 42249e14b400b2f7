//! Lowering of `br_table`.
//!
//! # Contract
//!
//! Takes the index value and the lowered successors (`targets[0]` the default, `targets[1 +
//! k]` the target of index `k`) and emits the block's terminator, plus what it needs before
//! it. Tables of up to [`MAX_CHAIN`] entries become a compare chain ([`BrTable::Chain`]);
//! larger ones a bounds check and an indirect jump through a table of 32-bit offsets in the
//! constant pool ([`BrTable::Base`] + [`BrTable::Seq`]). The index is compared
//! unsigned at its own width, so an out-of-range value, however large, takes the default.

use std::sync::Arc;

use kestrel_ir::{Type, Value};
use kestrel_regalloc::RegClass;

use super::asm::moves::ExtMode;
use super::asm::Size;
use super::inst::{AluInst, BrTable, ControlInst, Inst};
use super::isel::exact_size;
use crate::machinst::lower::Lower;
use crate::machinst::BlockIndex;

/// The largest table lowered as a compare chain. A chain entry is `cmp r32, imm8; je rel32`
/// (9 bytes); the jump-table dispatch is 28 bytes plus 4 per entry (and up to 3 of
/// alignment), so the chain is smaller up to 5 entries. From 5 on the table is used anyway:
/// its dispatch is one compare and one indirect jump whatever the index, where a chain runs
/// up to `n` compares.
pub const MAX_CHAIN: usize = 4;

/// `br_table idx, targets[0], [targets[1..]]` as the block's terminator; `zero_extended`
/// when the rules know the index's register to be zero-extended to 64 bits already.
pub fn lower_br_table(
    lower: &mut Lower<'_, Inst>,
    arg: Value,
    zero_extended: bool,
    targets: &[BlockIndex],
) {
    let ty = lower.value_type(arg);
    let idx = lower.value_vreg(arg);
    if targets.len() == 1 {
        lower.emit(ControlInst::Jmp { target: targets[0] });
        return;
    }
    if targets.len() - 1 <= MAX_CHAIN {
        lower.emit(ControlInst::Table {
            table: BrTable::Chain {
                size: exact_size(ty),
                idx,
            },
            targets: targets.into(),
        });
        return;
    }
    // The address mode reads all 64 bits of the index; the upper bits of a narrower value are
    // unspecified, so zero-extend it (a 32-bit write clears bits 32..64).
    let (size, idx) = match ty {
        Type::I64 => (Size::S64, idx),
        _ if zero_extended => (Size::S32, idx),
        _ => {
            let mode = match ty {
                Type::I8 => ExtMode::BL,
                Type::I16 => ExtMode::WL,
                _ => ExtMode::LQ,
            };
            let ext = lower.alloc_vreg(RegClass::Int);
            lower.emit(AluInst::Ext {
                mode,
                signed: false,
                dst: ext,
                src: idx,
            });
            (Size::S32, ext)
        }
    };
    let base = lower.alloc_vreg(RegClass::Int);
    // One shared list for both halves of the sequence.
    let targets: Arc<[BlockIndex]> = targets.into();
    lower.emit(ControlInst::Table {
        table: BrTable::Base { dst: base },
        targets: targets.clone(),
    });
    lower.emit(ControlInst::Table {
        table: BrTable::Seq { size, idx, base },
        targets,
    });
}
