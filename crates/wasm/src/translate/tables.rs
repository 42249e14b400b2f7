//! References and tables: `ref.null`, `ref.is_null`, `ref.func`, `table.get`/`set`/`size`
//! inline; `table.grow`/`fill`/`copy`/`init` and `elem.drop` as runtime calls.
//!
//! A reference is an `i64` (see `runtime/vmctx.rs`): null is 0, a funcref the address of its
//! function's `FuncRef` record (from the vmctx's `func_refs` array), an externref the host's
//! value plus one. Table accesses out of bounds trap "out of bounds table access".
//!
//! Cost: O(1) instructions per operator.

use kestrel_ir::{IntCC, Type};
use wasmparser::Operator;

use super::{fixed_field, mutable_field, table_entry, FuncTranslator, Res};
use crate::runtime::libcalls::Libcall;
use crate::runtime::vmctx::offsets;
use crate::trap;

impl FuncTranslator<'_> {
    /// Translate `op` if it is a reference or table operator; `Ok(false)` if it is not one.
    pub(super) fn translate_reference(&mut self, op: &Operator) -> Res<bool> {
        use Operator as O;
        match *op {
            O::RefNull { .. } => {
                let v = self.b.ins().iconst(Type::I64, 0).map_err(|e| self.err(e))?;
                self.stack.push(v);
            }
            O::RefIsNull => {
                let r = self.pop();
                let zero = self.b.ins().iconst(Type::I64, 0).map_err(|e| self.err(e))?;
                let c = self
                    .b
                    .ins()
                    .icmp(IntCC::Equal, r, zero)
                    .map_err(|e| self.err(e))?;
                let v = self
                    .b
                    .ins()
                    .uextend(Type::I32, c)
                    .map_err(|e| self.err(e))?;
                self.stack.push(v);
            }
            O::RefFunc { function_index } => {
                let refs =
                    self.load_field(Type::I64, fixed_field(), self.vmctx, offsets::FUNC_REFS)?;
                let v =
                    self.load_field(Type::I64, fixed_field(), refs, function_index as i32 * 8)?;
                self.stack.push(v);
            }
            O::TableGet { table } => {
                let index = self.pop();
                let slot = self.table_slot(table, index, trap::TABLE_ACCESS)?;
                let v = self.load_field(Type::I64, table_entry(), slot, 0)?;
                self.stack.push(v);
            }
            O::TableSet { table } => {
                let value = self.pop();
                let index = self.pop();
                let slot = self.table_slot(table, index, trap::TABLE_ACCESS)?;
                self.b
                    .ins()
                    .store(table_entry(), value, slot, 0)
                    .map_err(|e| self.err(e))?;
            }
            O::TableSize { table } => {
                let def = self.table_def(table)?;
                let len = self.load_field(Type::I64, mutable_field(), def, offsets::TABLE_LEN)?;
                let v = self
                    .b
                    .ins()
                    .ireduce(Type::I32, len)
                    .map_err(|e| self.err(e))?;
                self.stack.push(v);
            }
            O::TableGrow { table } => {
                let delta = self.pop();
                let init = self.pop();
                let t = self.iconst32(table)?;
                let old = self.libcall(Libcall::TableGrow, &[t, init, delta])?[0];
                self.stack.push(old);
            }
            O::TableFill { table } => {
                let n = self.pop();
                let value = self.pop();
                let dst = self.pop();
                let t = self.iconst32(table)?;
                self.checked_libcall(Libcall::TableFill, &[t, dst, value, n], trap::TABLE_ACCESS)?;
            }
            O::TableCopy {
                dst_table,
                src_table,
            } => {
                let n = self.pop();
                let src = self.pop();
                let dst = self.pop();
                let (d, s) = (self.iconst32(dst_table)?, self.iconst32(src_table)?);
                self.checked_libcall(Libcall::TableCopy, &[d, s, dst, src, n], trap::TABLE_ACCESS)?;
            }
            O::TableInit { elem_index, table } => {
                let n = self.pop();
                let src = self.pop();
                let dst = self.pop();
                let (t, seg) = (self.iconst32(table)?, self.iconst32(elem_index)?);
                self.checked_libcall(
                    Libcall::TableInit,
                    &[t, seg, dst, src, n],
                    trap::TABLE_ACCESS,
                )?;
            }
            O::ElemDrop { elem_index } => {
                let seg = self.iconst32(elem_index)?;
                self.libcall(Libcall::ElemDrop, &[seg])?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
