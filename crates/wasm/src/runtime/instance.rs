//! Instantiation: resolve imports, create globals, memory and tables, build the vmctx and
//! the function records, apply element and data segments, run the start function; and the
//! instance-side work of the bulk-memory and table libcalls.
//!
//! Contract. Requires a compiled [`Module`]. Guarantees: on success the instance's vmctx
//! follows `vmctx.rs` and stays at one address for the instance's life (it is boxed); every
//! pointer in it is kept alive by the instance (imports by the `Extern`s it holds). Import
//! mismatches are [`WasmError::Link`] ("unknown import", "incompatible import type", or a
//! memory without guard pages imported by a module compiled for them); defined memories are
//! laid out for the module's bounds-check mode (`memory.rs`); a
//! segment out of bounds or a trapping start function is [`WasmError::Trap`]. Segments are
//! applied in order, elements first, and a failing one stops instantiation with the earlier
//! writes kept (the Wasm 2.0 rule; they may be visible through imported tables and
//! memories). Active and declared segments are dropped once applied.
//!
//! Lifetimes: the instance keeps its imports alive. A table it imports keeps the instance
//! alive (its code may store references to its functions there); a table it defines is
//! owned by it, and every handle to it given out (an export) keeps the instance alive, so
//! entries pointing at the instance's functions never dangle. Instances that import each
//! other's tables form reference cycles and are not freed (a known limitation until
//! instances live in a store).
//!
//! Cost: O(imports + functions + globals + segment sizes + exports).

use std::cell::{RefCell, UnsafeCell};
use std::collections::HashMap;
use std::rc::Rc;

use wasmparser::ExternalKind;

use super::externs::{Extern, Global, Imports, Memory, Table};
use super::func::{thread_limits, Func, InvokeError};
use super::memory::MemoryBox;
use super::table::TableBox;
use super::vmctx::{FuncRef, GlobalCell, TableDef, VmCtx};
use crate::config::BoundsChecks;
use crate::error::WasmError;
use crate::module::{CompiledModule, Module};
use crate::module_info::{ConstExpr, ConstOp, ImportKind, SegmentMode};
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
pub(crate) struct InstanceData {
    vmctx: Box<UnsafeCell<VmCtx>>,
    module: Rc<CompiledModule>,
    /// Imported functions, by function index.
    imported_funcs: Vec<Func>,
    /// Their records, copied: the array the vmctx's `imported_funcs` points at.
    _imported_records: Box<[FuncRef]>,
    /// Records of the defined functions, by defined-function index.
    records: Box<[FuncRef]>,
    /// Record addresses of all functions, imports first: the vmctx's `func_refs`.
    func_refs: Box<[*const FuncRef]>,
    globals: Vec<Global>,
    _global_ptrs: Box<[*mut GlobalCell]>,
    memories: Vec<Memory>,
    _memory_ptrs: Box<[*mut super::vmctx::MemoryDef]>,
    tables: Vec<Table>,
    _table_ptrs: Box<[*mut TableDef]>,
    /// Per data segment: dropped (an active one after instantiation).
    dropped_data: RefCell<Vec<bool>>,
    /// Per element segment: its references, or `None` once dropped.
    elements: RefCell<Vec<Option<Vec<u64>>>>,
    /// No other module's code can run under a call into this instance (see
    /// [`runs_only_own_code`]).
    runs_only_own_code: bool,
}

/// Whether code of no other module can run under a call into an instance with these
/// imports: every imported function is a host function that returns no function
/// references, and no table or reference-typed global is imported (the ways another
/// instance's function could be reached). Funcref arguments of the call itself are
/// checked per call (`Func::call`).
fn runs_only_own_code(m: &CompiledModule, r: &Resolved) -> bool {
    let host_only = r
        .funcs
        .iter()
        .all(|f| f.is_host() && !f.ty().results().iter().any(|t| t.is_reference_type()));
    let ref_globals = r.globals[..m.info.num_imported_globals as usize]
        .iter()
        .any(|g| g.ty().is_reference_type());
    host_only && r.tables.is_empty() && !ref_globals
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
    memories: Vec<Memory>,
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
            (ImportKind::Memory { ty, .. }, Extern::Memory(mem)) => {
                if !limits_match(
                    (mem.pages(), mem.0.declared_max()),
                    (ty.initial, ty.maximum),
                ) {
                    return Err(incompatible());
                }
                if m.bounds_checks == BoundsChecks::Guard
                    && mem.bounds_checks() != BoundsChecks::Guard
                {
                    return Err(link_error(
                        module,
                        field,
                        "the module was compiled for guard-page memories and this memory \
                         has no guard region (compile the module with explicit bounds checks)",
                    ));
                }
                r.memories.push(mem.clone());
            }
            (ImportKind::Table { ty, .. }, Extern::Table(t)) => {
                let limits =
                    limits_match((t.len(), t.table.declared_max()), (ty.initial, ty.maximum));
                if !limits || t.table.element != ty.element_type {
                    return Err(incompatible());
                }
                r.tables.push(t.clone());
            }
            _ => return Err(incompatible()),
        }
    }
    Ok(r)
}

/// The bits of a constant expression (validated: well-typed, leaves one value), given the
/// globals so far and the function records.
fn eval_const(c: &ConstExpr, globals: &[Global], func_refs: &[*const FuncRef]) -> u64 {
    let mut stack: Vec<u64> = Vec::with_capacity(c.0.len());
    for op in &c.0 {
        let v = match *op {
            ConstOp::I32(v) => v as u32 as u64,
            ConstOp::I64(v) => v as u64,
            ConstOp::F32(v) => v as u64,
            ConstOp::F64(v) => v,
            ConstOp::GlobalGet(i) => globals[i as usize].get().to_bits(),
            ConstOp::RefNull => 0,
            ConstOp::RefFunc(f) => func_refs[f as usize] as u64,
            binary => {
                let y = stack.pop().expect("validated constant expression");
                let x = stack.pop().expect("validated constant expression");
                let (x32, y32) = (x as u32, y as u32);
                match binary {
                    ConstOp::I32Add => x32.wrapping_add(y32) as u64,
                    ConstOp::I32Sub => x32.wrapping_sub(y32) as u64,
                    ConstOp::I32Mul => x32.wrapping_mul(y32) as u64,
                    ConstOp::I64Add => x.wrapping_add(y),
                    ConstOp::I64Sub => x.wrapping_sub(y),
                    _ => x.wrapping_mul(y),
                }
            }
        };
        stack.push(v);
    }
    stack.pop().expect("validated constant expression")
}

impl Instance {
    /// Instantiate `module` with `imports`; see the module docs.
    pub fn new(module: &Module, imports: &Imports) -> Result<Instance, WasmError> {
        let m = &module.inner;
        let info = &m.info;
        let mut r = resolve_imports(m, imports)?;
        let runs_only_own_code = runs_only_own_code(m, &r);
        // The vmctx is boxed first so that records can point at it.
        let vmctx = Box::new(UnsafeCell::new(VmCtx {
            memory: std::ptr::null_mut(),
            memories: std::ptr::null(),
            globals: std::ptr::null(),
            tables: std::ptr::null(),
            imported_funcs: std::ptr::null(),
            limits: thread_limits(),
            func_refs: std::ptr::null(),
            runtime: std::ptr::null(),
        }));
        let vmctx_ptr = vmctx.get();
        let records: Box<[FuncRef]> = (info.num_imported_funcs..info.funcs.len() as u32)
            .zip(&m.ids)
            .map(|(index, &id)| Func::make_record(&m.code, id, vmctx_ptr, info.func_type(index)))
            .collect();
        let imported_records: Box<[FuncRef]> = r
            .funcs
            .iter()
            // SAFETY: a Func's record lives as long as its owner, which `r.funcs` holds.
            .map(|f| unsafe { *f.record })
            .collect();
        let func_refs: Box<[*const FuncRef]> = r
            .funcs
            .iter()
            .map(|f| f.record)
            .chain(records.iter().map(|rec| rec as *const FuncRef))
            .collect();
        for decl in &info.globals[info.num_imported_globals as usize..] {
            let init = decl
                .init
                .as_ref()
                .expect("defined globals have an initializer");
            let bits = eval_const(init, &r.globals, &func_refs);
            let value = Val::from_bits(decl.ty, bits).ok_or_else(|| WasmError::Unsupported {
                offset: 0,
                feature: format!("globals of type {}", decl.ty),
            })?;
            r.globals.push(Global::new(value, decl.mutable));
        }
        for ty in &info.memories[info.num_imported_memories as usize..] {
            r.memories.push(Memory::with_bounds_checks(
                ty.initial,
                ty.maximum,
                m.bounds_checks,
            )?);
        }
        for ty in &info.tables[info.num_imported_tables as usize..] {
            r.tables
                .push(Table::new(ty.element_type, ty.initial, ty.maximum)?);
        }
        let global_ptrs: Box<[*mut GlobalCell]> = r.globals.iter().map(Global::cell_ptr).collect();
        let table_ptrs: Box<[*mut TableDef]> = r.tables.iter().map(|t| t.table.def_ptr()).collect();
        let memory_ptrs: Box<[*mut super::vmctx::MemoryDef]> =
            r.memories.iter().map(|m| m.0.def_ptr()).collect();
        // SAFETY: nothing else refers to the vmctx yet.
        unsafe {
            let v = &mut *vmctx_ptr;
            v.memory = memory_ptrs.first().copied().unwrap_or(std::ptr::null_mut());
            v.memories = memory_ptrs.as_ptr();
            v.globals = global_ptrs.as_ptr();
            v.tables = table_ptrs.as_ptr();
            v.imported_funcs = imported_records.as_ptr();
            v.func_refs = func_refs.as_ptr();
        }
        let elements = info
            .elements
            .iter()
            .map(|seg| {
                let items = seg.items.iter();
                Some(
                    items
                        .map(|c| eval_const(c, &r.globals, &func_refs))
                        .collect(),
                )
            })
            .collect();
        let data = Rc::new(InstanceData {
            vmctx,
            module: m.clone(),
            imported_funcs: r.funcs,
            _imported_records: imported_records,
            records,
            func_refs,
            globals: r.globals,
            _global_ptrs: global_ptrs,
            memories: r.memories,
            _memory_ptrs: memory_ptrs,
            tables: r.tables,
            _table_ptrs: table_ptrs,
            dropped_data: RefCell::new(vec![false; info.data.len()]),
            elements: RefCell::new(elements),
            runs_only_own_code,
        });
        // SAFETY: as above; the runtime pointer is the instance's final address.
        unsafe { (*vmctx_ptr).runtime = Rc::as_ptr(&data) as *const () };
        for t in &data.tables[..info.num_imported_tables as usize] {
            t.table.keep(data.clone());
        }
        let instance = Instance { data };
        instance.apply_segments()?;
        if let Some(start) = info.start {
            instance.func(start).call(&[]).map_err(|e| match e {
                InvokeError::Trap { trap, .. } => WasmError::Trap(trap),
                other => WasmError::Resource(other.to_string()),
            })?;
        }
        Ok(instance)
    }

    fn apply_segments(&self) -> Result<(), WasmError> {
        let d = &self.data;
        let info = &d.module.info;
        for (index, seg) in info.elements.iter().enumerate() {
            match &seg.mode {
                SegmentMode::Active {
                    index: table,
                    offset,
                } => {
                    let table = *table;
                    let offset = eval_const(offset, &d.globals, &d.func_refs) as u32;
                    let n = seg.items.len() as u32;
                    if !d.table_init(table, index as u32, offset as u64, 0, n as u64) {
                        return Err(Trap::TableOutOfBounds.into());
                    }
                    d.elem_drop(index as u32);
                }
                SegmentMode::Declared => d.elem_drop(index as u32),
                SegmentMode::Passive => {}
            }
        }
        for (index, (seg, bytes)) in info.data.iter().zip(&d.module.data).enumerate() {
            if let SegmentMode::Active { index: mem, offset } = &seg.mode {
                let offset = eval_const(offset, &d.globals, &d.func_refs) as u32;
                let len = bytes.len() as u64;
                if !d.memory_init(*mem, index as u32, offset as u64, 0, len) {
                    return Err(Trap::MemoryOutOfBounds.into());
                }
                d.data_drop(index as u32);
            }
        }
        Ok(())
    }

    /// Function `index` of the instance's index space.
    fn func(&self, index: u32) -> Func {
        let d = &self.data;
        let info = &d.module.info;
        if index < info.num_imported_funcs {
            return d.imported_funcs[index as usize].clone();
        }
        let defined = (index - info.num_imported_funcs) as usize;
        Func {
            code: d.module.code.clone(),
            id: d.module.ids[defined],
            vmctx: d.vmctx.get(),
            ty: info.func_type(index).clone(),
            record: &d.records[defined],
            trap_origin: d.runs_only_own_code.then(|| d.module.clone()),
            owner: d.clone(),
        }
    }

    /// The export named `name`.
    pub fn get_export(&self, name: &str) -> Option<Extern> {
        let d = &self.data;
        let &(_, kind, index) = d.module.info.exports.iter().find(|(n, _, _)| n == name)?;
        Some(match kind {
            ExternalKind::Func => Extern::Func(self.func(index)),
            ExternalKind::Global => Extern::Global(d.globals[index as usize].owned_by(d.clone())),
            ExternalKind::Memory => Extern::Memory(d.memories[index as usize].clone()),
            ExternalKind::Table => Extern::Table(d.tables[index as usize].owned_by(d.clone())),
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

    /// The instance's memory 0, if it has one.
    pub fn memory(&self) -> Option<Memory> {
        self.data.memories.first().cloned()
    }
}

/// The instance-side work of the libcalls (see `libcalls.rs`). Each returns false, having
/// written nothing, when a range is out of bounds.
impl InstanceData {
    pub(crate) fn memory_box(&self, mem: u32) -> &MemoryBox {
        &self.memories[mem as usize].0
    }

    pub(crate) fn memory_copy(
        &self,
        dst_mem: u32,
        src_mem: u32,
        dst: u64,
        src: u64,
        len: u64,
    ) -> bool {
        if dst_mem == src_mem {
            return self.memory_box(dst_mem).copy_within(dst, src, len);
        }
        match self.memory_box(src_mem).read(src, len as usize) {
            Some(bytes) => self.memory_box(dst_mem).write(dst, &bytes),
            None => false,
        }
    }

    pub(crate) fn table_box(&self, table: u32) -> &TableBox {
        &self.tables[table as usize].table
    }

    pub(crate) fn memory_init(&self, mem: u32, seg: u32, dst: u64, src: u64, len: u64) -> bool {
        let bytes: &[u8] = if self.dropped_data.borrow()[seg as usize] {
            &[]
        } else {
            &self.module.data[seg as usize]
        };
        match bytes.get(src as usize..(src + len) as usize) {
            Some(part) => self.memory_box(mem).write(dst, part),
            None => false,
        }
    }

    pub(crate) fn data_drop(&self, seg: u32) {
        self.dropped_data.borrow_mut()[seg as usize] = true;
    }

    pub(crate) fn table_init(&self, table: u32, seg: u32, dst: u64, src: u64, len: u64) -> bool {
        let elements = self.elements.borrow();
        let items: &[u64] = elements[seg as usize].as_deref().unwrap_or(&[]);
        match items.get(src as usize..(src + len) as usize) {
            Some(part) => self.table_box(table).write(dst, part),
            None => false,
        }
    }

    pub(crate) fn elem_drop(&self, seg: u32) {
        self.elements.borrow_mut()[seg as usize] = None;
    }

    pub(crate) fn table_copy(
        &self,
        dst_table: u32,
        src_table: u32,
        dst: u64,
        src: u64,
        len: u64,
    ) -> bool {
        let dst_box = self.table_box(dst_table);
        if dst.checked_add(len).is_none_or(|end| end > dst_box.len()) {
            return false;
        }
        match self.table_box(src_table).read(src, len) {
            Some(values) => dst_box.write(dst, &values),
            None => false,
        }
    }
}
