//! Calls (`call`, `call_indirect`), globals, and the preamble entities they need.
//!
//! - A call to a function defined in the module is a direct `call` of `u0:N` (colocated;
//!   the JIT links it), passing the caller's own `vmctx`.
//! - A call to an imported function loads its `FuncRef` (code, callee vmctx) from the
//!   vmctx's imported-function array and calls the code with the callee's vmctx.
//! - `call_indirect` bounds-checks the index against the table's length (trap "undefined
//!   element"), loads the entry (a `FuncRef` address), traps on null ("uninitialized
//!   element") and on a type id different from the expected signature's canonical id
//!   ("indirect call type mismatch"), then calls as for an import.
//! - `return_call` and `return_call_indirect` do the same as tail calls (`return_call`,
//!   `return_call_indirect` of the IR), after which the code is unreachable.
//! - Globals live in cells reached through the vmctx's cell-pointer array (an imported
//!   global is the exporter's cell).
//!
//! Cost: O(1) instructions per operator plus one per argument; each callee and signature is
//! declared once per function (hash maps).

use std::collections::HashMap;

use kestrel_ir::{
    AbiParam, CallConv, ExtFuncData, FuncRef, FunctionName, IntCC, MemFlags, SigRef, Signature,
    Type, Value as IrValue,
};

use super::{
    fixed_field, func_name, mutable_field, sig, table_entry, trusted_readonly, FuncTranslator, Res,
};
use crate::runtime::libcalls::Libcall;
use crate::runtime::vmctx::offsets;
use crate::trap;

/// Entities declared in the function's preamble, by what they stand for.
#[derive(Default)]
pub(crate) struct Refs {
    /// Defined functions called directly, by function index.
    funcs: HashMap<u32, FuncRef>,
    /// Signatures by Wasm type index.
    sigs: HashMap<u32, SigRef>,
    libcalls: HashMap<Libcall, FuncRef>,
}

impl FuncTranslator<'_> {
    fn sig_ref(&mut self, type_index: u32) -> Res<SigRef> {
        if let Some(&s) = self.refs.sigs.get(&type_index) {
            return Ok(s);
        }
        let sig = sig::wasm_signature(&self.info.types[type_index as usize], self.offset)?;
        let s = self.b.import_signature(sig);
        self.refs.sigs.insert(type_index, s);
        Ok(s)
    }

    fn direct_ref(&mut self, func: u32) -> Res<FuncRef> {
        if let Some(&f) = self.refs.funcs.get(&func) {
            return Ok(f);
        }
        let signature = self.sig_ref(self.info.funcs[func as usize])?;
        let f = self.b.import_function(ExtFuncData {
            name: func_name(func),
            signature,
            colocated: true,
        });
        self.refs.funcs.insert(func, f);
        Ok(f)
    }

    /// Call runtime function `lc` with the vmctx and `args`; returns its results.
    pub(super) fn libcall(&mut self, lc: Libcall, args: &[IrValue]) -> Res<Vec<IrValue>> {
        let callee = match self.refs.libcalls.get(&lc) {
            Some(&f) => f,
            None => {
                let (params, returns) = lc.signature();
                let mut sig = Signature::new(CallConv::SystemV);
                sig.params.push(AbiParam::new(Type::I64));
                sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
                sig.returns
                    .extend(returns.iter().map(|&t| AbiParam::new(t)));
                let signature = self.b.import_signature(sig);
                let f = self.b.import_function(ExtFuncData {
                    name: FunctionName::Named(lc.symbol().into()),
                    signature,
                    colocated: false,
                });
                self.refs.libcalls.insert(lc, f);
                f
            }
        };
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(self.vmctx);
        all.extend_from_slice(args);
        let inst = self.b.ins().call(callee, &all).map_err(|e| self.err(e))?;
        Ok(self.b.inst_results(inst).to_vec())
    }

    /// Call `lc`, which returns a status, and trap with `code` when it is not 0.
    pub(super) fn checked_libcall(
        &mut self,
        lc: Libcall,
        args: &[IrValue],
        code: kestrel_ir::TrapCode,
    ) -> Res {
        let status = self.libcall(lc, args)?[0];
        self.b.ins().trapnz(status, code).map_err(|e| self.err(e))?;
        Ok(())
    }

    pub(super) fn load_field(
        &mut self,
        ty: Type,
        flags: MemFlags,
        base: IrValue,
        offset: i32,
    ) -> Res<IrValue> {
        self.b
            .ins()
            .load(ty, flags, base, offset)
            .map_err(|e| self.err(e))
    }

    /// Push the results of call `inst`.
    fn finish_call(&mut self, inst: kestrel_ir::Inst) {
        let results = self.b.inst_results(inst).to_vec();
        self.stack.extend_from_slice(&results);
    }

    fn pop_args(&mut self, type_index: u32) -> Vec<IrValue> {
        let n = self.info.types[type_index as usize].params().len();
        self.stack.split_off(self.stack.len() - n)
    }

    /// After a call: its results on the stack, or, for a tail call, unreachable code.
    fn after_call(&mut self, inst: kestrel_ir::Inst, tail: bool) {
        if tail {
            self.reachable = false;
        } else {
            self.finish_call(inst);
        }
    }

    /// `call func`, or `return_call func` when `tail`.
    pub(super) fn op_call(&mut self, func: u32, tail: bool) -> Res {
        let type_index = self.info.funcs[func as usize];
        let wasm_args = self.pop_args(type_index);
        let inst = if func < self.info.num_imported_funcs {
            let imports = self.load_field(
                Type::I64,
                fixed_field(),
                self.vmctx,
                offsets::IMPORTED_FUNCS,
            )?;
            let entry = func as i32 * offsets::FUNCREF_SIZE as i32;
            let code = self.load_field(
                Type::I64,
                fixed_field(),
                imports,
                entry + offsets::FUNCREF_CODE,
            )?;
            let callee_vmctx = self.load_field(
                Type::I64,
                fixed_field(),
                imports,
                entry + offsets::FUNCREF_VMCTX,
            )?;
            let sig = self.sig_ref(type_index)?;
            let mut args = vec![callee_vmctx];
            args.extend_from_slice(&wasm_args);
            if tail {
                self.b.ins().return_call_indirect(sig, code, &args)
            } else {
                self.b.ins().call_indirect(sig, code, &args)
            }
        } else {
            let callee = self.direct_ref(func)?;
            let mut args = vec![self.vmctx];
            args.extend_from_slice(&wasm_args);
            if tail {
                self.b.ins().return_call(callee, &args)
            } else {
                self.b.ins().call(callee, &args)
            }
        }
        .map_err(|e| self.err(e))?;
        self.after_call(inst, tail);
        Ok(())
    }

    /// The address of entry `index` (an `i32`) of table `table`, after a bounds check that
    /// traps with `code`.
    pub(super) fn table_slot(
        &mut self,
        table: u32,
        index: IrValue,
        code: kestrel_ir::TrapCode,
    ) -> Res<IrValue> {
        let def = self.table_def(table)?;
        let len = self.load_field(Type::I64, mutable_field(), def, offsets::TABLE_LEN)?;
        let wide = self
            .b
            .ins()
            .uextend(Type::I64, index)
            .map_err(|e| self.err(e))?;
        let oob = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, wide, len)
            .map_err(|e| self.err(e))?;
        self.b.ins().trapnz(oob, code).map_err(|e| self.err(e))?;
        let base = self.load_field(Type::I64, mutable_field(), def, offsets::TABLE_BASE)?;
        let three = self.b.ins().iconst(Type::I64, 3).map_err(|e| self.err(e))?;
        let scaled = self.b.ins().ishl(wide, three).map_err(|e| self.err(e))?;
        self.b.ins().iadd(base, scaled).map_err(|e| self.err(e))
    }

    /// Table `table`'s `TableDef` pointer.
    pub(super) fn table_def(&mut self, table: u32) -> Res<IrValue> {
        let tables = self.load_field(Type::I64, fixed_field(), self.vmctx, offsets::TABLES)?;
        self.load_field(Type::I64, fixed_field(), tables, table as i32 * 8)
    }

    /// `call_indirect`, or `return_call_indirect` when `tail`.
    pub(super) fn op_call_indirect(&mut self, type_index: u32, table: u32, tail: bool) -> Res {
        let index = self.pop();
        let wasm_args = self.pop_args(type_index);
        let slot = self.table_slot(table, index, trap::TABLE_OUT_OF_BOUNDS)?;
        let func_ref = self.load_field(Type::I64, table_entry(), slot, 0)?;
        self.b
            .ins()
            .trapz(func_ref, trap::NULL_REFERENCE)
            .map_err(|e| self.err(e))?;
        let found = self.load_field(
            Type::I64,
            trusted_readonly(),
            func_ref,
            offsets::FUNCREF_TYPE_ID,
        )?;
        let id = self.info.type_ids[type_index as usize];
        let expected = self
            .b
            .ins()
            .iconst(Type::I64, id as i64)
            .map_err(|e| self.err(e))?;
        let mismatch = self
            .b
            .ins()
            .icmp(IntCC::NotEqual, found, expected)
            .map_err(|e| self.err(e))?;
        self.b
            .ins()
            .trapnz(mismatch, trap::BAD_SIGNATURE)
            .map_err(|e| self.err(e))?;
        let code = self.load_field(
            Type::I64,
            trusted_readonly(),
            func_ref,
            offsets::FUNCREF_CODE,
        )?;
        let callee_vmctx = self.load_field(
            Type::I64,
            trusted_readonly(),
            func_ref,
            offsets::FUNCREF_VMCTX,
        )?;
        let sig = self.sig_ref(type_index)?;
        let mut args = vec![callee_vmctx];
        args.extend_from_slice(&wasm_args);
        let inst = if tail {
            self.b.ins().return_call_indirect(sig, code, &args)
        } else {
            self.b.ins().call_indirect(sig, code, &args)
        }
        .map_err(|e| self.err(e))?;
        self.after_call(inst, tail);
        Ok(())
    }

    /// The address of global `index`'s cell.
    fn global_cell(&mut self, index: u32) -> Res<IrValue> {
        let cells = self.load_field(Type::I64, fixed_field(), self.vmctx, offsets::GLOBALS)?;
        self.load_field(Type::I64, fixed_field(), cells, index as i32 * 8)
    }

    pub(super) fn op_global_get(&mut self, index: u32) -> Res {
        let decl = &self.info.globals[index as usize];
        let ty = sig::ir_type(decl.ty, self.offset)?;
        let flags = if decl.mutable {
            mutable_field()
        } else {
            fixed_field()
        };
        let cell = self.global_cell(index)?;
        let v = self.load_field(ty, flags, cell, 0)?;
        self.stack.push(v);
        Ok(())
    }

    pub(super) fn op_global_set(&mut self, index: u32) -> Res {
        let v = self.pop();
        let cell = self.global_cell(index)?;
        self.b
            .ins()
            .store(mutable_field(), v, cell, 0)
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}
