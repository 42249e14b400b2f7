//! `Switch`: a multi-way branch on an integer, emitted as a `br_table` when the cases are
//! dense and as a binary compare tree (`icmp` + `brif`) when they are sparse.
//!
//! Contract. Requires: the selector is an integer value; every case value fits in its type
//! (read as unsigned); case blocks and the default block take no arguments and are not sealed
//! yet (the switch adds branches to them). Guarantees: control reaches the block of the case
//! equal to the selector, or the default block; the current block is filled; every block the
//! switch creates for itself is sealed (its only predecessor is known when it is created).
//!
//! Density: `n >= 4` cases whose span `max - min + 1` is at most `2n` use a table (the span
//! bounds the table at twice the cases). The selector is rebased to `min`; selectors wider
//! than `i32` are range-checked first (then reduced, as `br_table` indexes with `i32`),
//! narrower ones zero-extended (out-of-range indices then fall to the table's default).
//! Otherwise a binary search with unsigned `icmp ult` splits the sorted cases until at most
//! three remain, which are tested one by one with `icmp eq`.

use super::{BuilderError, FunctionBuilder};
use crate::entity::{Block, Value};
use crate::immediates::IntCC;
use crate::types::Type;

/// Cases of a multi-way branch; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct Switch {
    cases: Vec<(u128, Block)>,
}

impl Switch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Branch to `block` when the selector equals `index`.
    pub fn set_entry(&mut self, index: u128, block: Block) -> Result<(), BuilderError> {
        if self.cases.iter().any(|&(i, _)| i == index) {
            return Err(BuilderError::DuplicateSwitchCase { index });
        }
        self.cases.push((index, block));
        Ok(())
    }

    /// The cases so far, in insertion order.
    pub fn entries(&self) -> &[(u128, Block)] {
        &self.cases
    }

    /// Emit the switch on `selector` at the end of the current block.
    pub fn emit(
        mut self,
        fb: &mut FunctionBuilder,
        selector: Value,
        default: Block,
    ) -> Result<(), BuilderError> {
        fb.check_value(selector)?;
        let ty = fb.func.dfg.value_type(selector);
        if !ty.is_int() {
            return Err(BuilderError::InvalidInstruction {
                opcode: crate::Opcode::BrTable,
                message: format!("a switch selector must be an integer, {selector} is {ty}"),
            });
        }
        for &(index, _) in &self.cases {
            if ty.bits() < 128 && index >> ty.bits() != 0 {
                return Err(BuilderError::SwitchCaseOutOfRange { index, ty });
            }
        }
        self.cases.sort_unstable_by_key(|&(i, _)| i);
        let cases = self.cases;
        match (cases.first(), cases.last()) {
            (Some(&(min, _)), Some(&(max, _))) if is_dense(cases.len(), min, max) => {
                emit_table(fb, selector, ty, &cases, default)
            }
            (Some(_), _) => emit_tree(fb, selector, ty, &cases, default),
            (None, _) => fb.ins().jump(default, &[]).map(|_| ()),
        }
    }
}

fn is_dense(n: usize, min: u128, max: u128) -> bool {
    n >= 4 && (max - min) < 2 * n as u128
}

/// A constant of integer type `ty` with the (unsigned, in-range) value `k`.
fn constant(fb: &mut FunctionBuilder, ty: Type, k: u128) -> Result<Value, BuilderError> {
    if ty.bits() <= 64 {
        return fb.ins().iconst(ty, k as u64 as i64);
    }
    let lo = fb.ins().iconst(Type::I64, k as u64 as i64)?;
    let hi = fb.ins().iconst(Type::I64, (k >> 64) as u64 as i64)?;
    fb.ins().iconcat(lo, hi)
}

/// Create a block, make it current and seal it: its only predecessor was just emitted.
fn enter_new_block(fb: &mut FunctionBuilder, block: Block) -> Result<(), BuilderError> {
    fb.switch_to_block(block)?;
    fb.seal_block(block)
}

fn emit_table(
    fb: &mut FunctionBuilder,
    selector: Value,
    ty: Type,
    cases: &[(u128, Block)],
    default: Block,
) -> Result<(), BuilderError> {
    let min = cases[0].0;
    let span = (cases[cases.len() - 1].0 - min + 1) as usize;
    let index = if min == 0 {
        selector
    } else {
        let base = constant(fb, ty, min)?;
        fb.ins().isub(selector, base)?
    };
    let index32 = match ty.bits() {
        32 => index,
        b if b < 32 => fb.ins().uextend(Type::I32, index)?,
        _ => {
            // Wider than i32: reducing could wrap an out-of-range index into the table.
            let limit = constant(fb, ty, span as u128)?;
            let in_range = fb.ins().icmp(IntCC::UnsignedLessThan, index, limit)?;
            let table_block = fb.create_block();
            fb.ins().brif(in_range, table_block, &[], default, &[])?;
            enter_new_block(fb, table_block)?;
            fb.ins().ireduce(Type::I32, index)?
        }
    };
    let mut entries = vec![default; span];
    for &(k, block) in cases {
        entries[(k - min) as usize] = block;
    }
    fb.ins().br_table(index32, default, &entries).map(|_| ())
}

fn emit_tree(
    fb: &mut FunctionBuilder,
    selector: Value,
    ty: Type,
    cases: &[(u128, Block)],
    default: Block,
) -> Result<(), BuilderError> {
    if cases.len() <= 3 {
        for (i, &(k, block)) in cases.iter().enumerate() {
            let c = constant(fb, ty, k)?;
            let eq = fb.ins().icmp(IntCC::Equal, selector, c)?;
            if i + 1 == cases.len() {
                fb.ins().brif(eq, block, &[], default, &[])?;
            } else {
                let next = fb.create_block();
                fb.ins().brif(eq, block, &[], next, &[])?;
                enter_new_block(fb, next)?;
            }
        }
        return Ok(());
    }
    let (low, high) = cases.split_at(cases.len() / 2);
    let pivot = constant(fb, ty, high[0].0)?;
    let below = fb.ins().icmp(IntCC::UnsignedLessThan, selector, pivot)?;
    let (low_block, high_block) = (fb.create_block(), fb.create_block());
    fb.ins().brif(below, low_block, &[], high_block, &[])?;
    enter_new_block(fb, low_block)?;
    emit_tree(fb, selector, ty, low, default)?;
    enter_new_block(fb, high_block)?;
    emit_tree(fb, selector, ty, high, default)
}
