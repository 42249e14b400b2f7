//! Instantiation: resolve imports, create globals, memory and tables, build the vmctx,
//! apply element and data segments, run the start function.
//!
//! Contract. Requires a compiled [`Module`]. Guarantees: on success the instance's vmctx
//! follows `vmctx.rs` and stays at one address for the instance's life; every pointer in it
//! is kept alive by the instance (imports by the `Extern`s it holds). Import mismatches are
//! [`WasmError::Link`] ("unknown import", "incompatible import type"); a segment out of
//! bounds or a trapping start function is [`WasmError::Trap`]. Segments are applied in
//! order, elements first, and a failing one stops instantiation with the earlier writes
//! kept (the Wasm 2.0 rule; they may be visible through imported tables and memories).
//!
//! Cost: O(imports + globals + segment sizes + exports).

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::rc::Rc;

use wasmparser::ExternalKind;

use super::externs::{Extern, Global, Imports, Memory, Table};
use super::func::{thread_limits, Func, InvokeError};
use super::vmctx::{FuncRef, GlobalCell, TableDef, VmCtx};
use crate::error::WasmError;
use crate::module::{CompiledModule, Module};
use crate::module_info::{ConstValue, ImportKind};
use crate::trap::Trap;
use crate::val::Val;

/// An instance of a module; cheap to clone (a handle).
#[derive(Clone)]
pub struct Instance {
    data: Rc<InstanceData>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").finish_non_exhaustive()
    }
}

/// Everything the vmctx points at, owned.
struct InstanceData {
    vmctx: UnsafeCell<VmCtx>,
    module: Rc<CompiledModule>,
    /// Imported functions, by function index.
    imported_funcs: Vec<Func>,
    /// Their references, the array the vmctx points at.
    _imported_refs: Box<[FuncRef]>,
    globals: Vec<Global>,
    _global_ptrs: Box<[*mut GlobalCell]>,
    memory: Option<Memory>,
    tables: Vec<Table>,
    _table_ptrs: Box<[*mut TableDef]>,
}

fn link_error(module: &str, field: &str, message: impl Into<String>) -> WasmError {
    WasmError::Link {
        module: module.to_string(),
        field: field.to_string(),
        message: message.into(),
    }
}

/// Whether limits `(min, max)` of an actual import satisfy the declared ones.
fn limits_match(actual: (u64, Option<u64>), declared: (u64, Option<u64>)) -> bool {
    actual.0 >= declared.0
        && match (actual.1, declared.1) {
            (_, None) => true,
            (Some(a), Some(d)) => a <= d,
            (None, Some(_)) => false,
        }
}

/// The imports of `module`, resolved and checked.
#[derive(Default)]
struct Resolved {
    funcs: Vec<Func>,
    globals: Vec<Global>,
    memory: Option<Memory>,
    tables: Vec<Table>,
}

fn resolve_imports(m: &CompiledModule, imports: &Imports) -> Result<Resolved, WasmError> {
    let mut r = Resolved::default();
    for imp in &m.info.imports {
        let (module, field) = (imp.module.as_str(), imp.field.as_str());
        let found = imports
            .get(module, field)
            .ok_or_else(|| link_error(module, field, "unknown import"))?;
        let incompatible = || {
            link_error(
                module,
                field,
                format!("incompatible import type (found a {})", found.kind()),
            )
        };
        match (&imp.kind, found) {
            (ImportKind::Func { type_index, .. }, Extern::Func(f)) => {
                if *f.ty() != m.info.types[*type_index as usize] {
                    return Err(incompatible());
                }
                r.funcs.push(f.clone());
            }
            (ImportKind::Global { index }, Extern::Global(g)) => {
                let decl = &m.info.globals[*index as usize];
                if g.ty() != decl.ty || g.is_mutable() != decl.mutable {
                    return Err(incompatible());
                }
                r.globals.push(g.clone());
            }
            (ImportKind::Memory(ty), Extern::Memory(mem)) => {
                if !limits_match(
                    (mem.pages(), mem.0.declared_max()),
                    (ty.initial, ty.maximum),
                ) {
                    return Err(incompatible());
                }
                r.memory = Some(mem.clone());
            }
            (ImportKind::Table { ty, .. }, Extern::Table(t)) => {
                if !limits_match((t.len(), t.0.declared_max()), (ty.initial, ty.maximum)) {
                    return Err(incompatible());
                }
                r.tables.push(t.clone());
            }
            _ => return Err(incompatible()),
        }
    }
    Ok(r)
}

/// The value of a constant expression, given the globals so far.
fn eval_const(c: ConstValue, globals: &[Global]) -> Result<Val, WasmError> {
    Ok(match c {
        ConstValue::I32(v) => Val::I32(v),
        ConstValue::I64(v) => Val::I64(v),
        ConstValue::F32(v) => Val::F32(v),
        ConstValue::F64(v) => Val::F64(v),
        ConstValue::GlobalGet(i) => globals[i as usize].get(),
        ConstValue::RefNull | ConstValue::RefFunc(_) => {
            return Err(WasmError::Unsupported {
                offset: 0,
                feature: "reference-typed constant expressions".into(),
            })
        }
    })
}

/// A segment offset (an `i32` constant expression) as an unsigned offset.
fn eval_offset(c: ConstValue, globals: &[Global]) -> Result<u64, WasmError> {
    match eval_const(c, globals)? {
        Val::I32(v) => Ok(v as u32 as u64),
        other => Err(WasmError::Unsupported {
            offset: 0,
            feature: format!("segment offset of type {}", other.ty()),
        }),
    }
}

impl Instance {
    /// Instantiate `module` with `imports`; see the module docs.
    pub fn new(module: &Module, imports: &Imports) -> Result<Instance, WasmError> {
        let m = &module.inner;
        let info = &m.info;
        let mut r = resolve_imports(m, imports)?;
        for decl in &info.globals[info.num_imported_globals as usize..] {
            let init = decl.init.expect("defined globals have an initializer");
            let value = eval_const(init, &r.globals)?;
            r.globals.push(Global::new(value, decl.mutable));
        }
        if let (None, Some((ty, false))) = (&r.memory, &info.memory) {
            r.memory = Some(Memory::new(ty.initial, ty.maximum)?);
        }
        for ty in &info.tables[info.num_imported_tables as usize..] {
            r.tables.push(Table::new(ty.initial, ty.maximum)?);
        }
        let imported_refs: Box<[FuncRef]> = r.funcs.iter().map(Func::func_ref).collect();
        let global_ptrs: Box<[*mut GlobalCell]> = r.globals.iter().map(Global::cell_ptr).collect();
        let table_ptrs: Box<[*mut TableDef]> = r.tables.iter().map(|t| t.0.def_ptr()).collect();
        let vmctx = VmCtx {
            memory: r
                .memory
                .as_ref()
                .map_or(std::ptr::null_mut(), |mem| mem.0.def_ptr()),
            globals: global_ptrs.as_ptr(),
            tables: table_ptrs.as_ptr(),
            imported_funcs: imported_refs.as_ptr(),
            limits: thread_limits(),
        };
        let instance = Instance {
            data: Rc::new(InstanceData {
                vmctx: UnsafeCell::new(vmctx),
                module: m.clone(),
                imported_funcs: r.funcs,
                _imported_refs: imported_refs,
                globals: r.globals,
                _global_ptrs: global_ptrs,
                memory: r.memory,
                tables: r.tables,
                _table_ptrs: table_ptrs,
            }),
        };
        instance.apply_segments()?;
        if let Some(start) = info.start {
            instance.func(start).call(&[]).map_err(|e| match e {
                InvokeError::Trap(t) => WasmError::Trap(t),
                other => WasmError::Resource(other.to_string()),
            })?;
        }
        Ok(instance)
    }

    fn apply_segments(&self) -> Result<(), WasmError> {
        let d = &self.data;
        let info = &d.module.info;
        for seg in &info.elements {
            let table = &d.tables[seg.table as usize];
            let offset = eval_offset(seg.offset, &d.globals)?;
            if offset + seg.funcs.len() as u64 > table.len() {
                return Err(Trap::TableOutOfBounds.into());
            }
            for (i, f) in seg.funcs.iter().enumerate() {
                let (entry, owner) = match f {
                    Some(f) => {
                        let func = self.func(*f);
                        (func.func_ref(), Some(func.owner.clone()))
                    }
                    None => (FuncRef::NULL, None),
                };
                table.0.set(offset + i as u64, entry, owner);
            }
        }
        for (seg, bytes) in info.data.iter().zip(&d.module.data) {
            let offset = eval_offset(seg.offset, &d.globals)?;
            let memory = d.memory.as_ref().expect("validated: data needs a memory");
            if !memory.0.write(offset, bytes) {
                return Err(Trap::MemoryOutOfBounds.into());
            }
        }
        Ok(())
    }

    fn vmctx_ptr(&self) -> *mut VmCtx {
        self.data.vmctx.get()
    }

    /// Function `index` of the instance's index space.
    fn func(&self, index: u32) -> Func {
        let d = &self.data;
        let info = &d.module.info;
        if index < info.num_imported_funcs {
            return d.imported_funcs[index as usize].clone();
        }
        Func {
            code: d.module.code.clone(),
            id: d.module.ids[(index - info.num_imported_funcs) as usize],
            vmctx: self.vmctx_ptr(),
            ty: info.func_type(index).clone(),
            owner: d.clone(),
        }
    }

    /// The export named `name`.
    pub fn get_export(&self, name: &str) -> Option<Extern> {
        let d = &self.data;
        let &(_, kind, index) = d.module.info.exports.iter().find(|(n, _, _)| n == name)?;
        Some(match kind {
            ExternalKind::Func => Extern::Func(self.func(index)),
            ExternalKind::Global => Extern::Global(d.globals[index as usize].clone()),
            ExternalKind::Memory => Extern::Memory(d.memory.clone()?),
            ExternalKind::Table => Extern::Table(d.tables[index as usize].clone()),
            _ => return None,
        })
    }

    /// Every export, by name.
    pub fn exports(&self) -> HashMap<String, Extern> {
        self.data
            .module
            .info
            .exports
            .iter()
            .filter_map(|(n, _, _)| Some((n.clone(), self.get_export(n)?)))
            .collect()
    }

    /// Call the exported function `name` with `args`.
    pub fn invoke(&self, name: &str, args: &[Val]) -> Result<Vec<Val>, InvokeError> {
        match self.get_export(name) {
            Some(Extern::Func(f)) => f.call(args),
            _ => Err(InvokeError::UnknownExport(name.to_string())),
        }
    }

    /// The value of the exported global `name`.
    pub fn global(&self, name: &str) -> Option<Val> {
        match self.get_export(name)? {
            Extern::Global(g) => Some(g.get()),
            _ => None,
        }
    }

    /// The instance's memory, if it has one.
    pub fn memory(&self) -> Option<Memory> {
        self.data.memory.clone()
    }
}
