//! What instances export and import: functions, globals, memories, tables, and the
//! [`Imports`] an instantiation resolves against.

use std::any::Any;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::rc::Rc;

use wasmparser::{RefType, ValType};

use super::func::Func;
use super::memory::{guard_pages_available, MemoryBox};
use super::table::TableBox;
use super::vmctx::GlobalCell;
use crate::config::BoundsChecks;
use crate::error::WasmError;
use crate::val::Val;

/// A global's storage and type.
#[derive(Debug)]
pub struct GlobalBox {
    cell: UnsafeCell<GlobalCell>,
    pub(crate) ty: ValType,
    pub(crate) mutable: bool,
}

/// A global variable. A handle to an instance's global keeps that instance alive (a
/// funcref in it may point at the instance's functions).
#[derive(Clone)]
pub struct Global {
    pub(crate) global: Rc<GlobalBox>,
    /// The instance whose global this is, when the handle was given out by it.
    _owner: Option<Rc<dyn Any>>,
}

impl std::fmt::Debug for Global {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.global.fmt(f)
    }
}

impl Global {
    /// A new global holding `value`.
    pub fn new(value: Val, mutable: bool) -> Global {
        Global {
            global: Rc::new(GlobalBox {
                cell: UnsafeCell::new(GlobalCell {
                    bits: value.to_bits(),
                }),
                ty: value.ty(),
                mutable,
            }),
            _owner: None,
        }
    }

    /// The same global, as a handle that keeps `owner` alive.
    pub(crate) fn owned_by(&self, owner: Rc<dyn Any>) -> Global {
        Global {
            global: self.global.clone(),
            _owner: Some(owner),
        }
    }

    pub fn get(&self) -> Val {
        // SAFETY: no Wasm code runs concurrently with the host (single thread).
        let bits = unsafe { (*self.global.cell.get()).bits };
        Val::from_bits(self.global.ty, bits).expect("globals have supported types")
    }

    pub fn ty(&self) -> ValType {
        self.global.ty
    }

    pub fn is_mutable(&self) -> bool {
        self.global.mutable
    }

    pub(crate) fn cell_ptr(&self) -> *mut GlobalCell {
        self.global.cell.get()
    }
}

/// A linear memory.
#[derive(Clone, Debug)]
pub struct Memory(pub(crate) Rc<MemoryBox>);

impl Memory {
    /// A new memory of `min` pages, growing to at most `max`: a guard-page memory when this
    /// process can reserve one (so modules compiled either way can import it), else an
    /// explicitly checked one.
    pub fn new(min: u64, max: Option<u64>) -> Result<Memory, WasmError> {
        let checks = if guard_pages_available() {
            BoundsChecks::Guard
        } else {
            BoundsChecks::Explicit
        };
        Memory::with_bounds_checks(min, max, checks)
    }

    /// A new memory laid out for `checks` (see [`BoundsChecks`]).
    pub fn with_bounds_checks(
        min: u64,
        max: Option<u64>,
        checks: BoundsChecks,
    ) -> Result<Memory, WasmError> {
        Ok(Memory(Rc::new(
            MemoryBox::new(min, max, checks).map_err(WasmError::Resource)?,
        )))
    }

    /// The layout of this memory, and so which modules may import it.
    pub fn bounds_checks(&self) -> BoundsChecks {
        self.0.bounds_checks()
    }

    /// Current size in pages.
    pub fn pages(&self) -> u64 {
        self.0.pages()
    }

    /// `len` bytes at `offset`, if in bounds.
    pub fn read(&self, offset: u64, len: usize) -> Option<Vec<u8>> {
        self.0.read(offset, len)
    }

    /// Copy `bytes` to `offset`; false (nothing written) if out of bounds.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> bool {
        self.0.write(offset, bytes)
    }
}

/// A table of references. A handle to an instance's table keeps that instance alive (its
/// entries may point at the instance's functions); see `instance.rs`.
#[derive(Clone)]
pub struct Table {
    pub(crate) table: Rc<TableBox>,
    /// The instance whose table this is, when the handle was given out by it.
    _owner: Option<Rc<dyn Any>>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.table.fmt(f)
    }
}

impl Table {
    /// A new table of `min` null entries of type `element` (`RefType::FUNCREF` or
    /// `RefType::EXTERNREF`).
    pub fn new(element: RefType, min: u64, max: Option<u64>) -> Result<Table, WasmError> {
        let table = TableBox::new(element, min, max, 0).map_err(WasmError::Resource)?;
        Ok(Table {
            table: Rc::new(table),
            _owner: None,
        })
    }

    /// The same table, as a handle that keeps `owner` alive.
    pub(crate) fn owned_by(&self, owner: Rc<dyn Any>) -> Table {
        Table {
            table: self.table.clone(),
            _owner: Some(owner),
        }
    }

    pub fn len(&self) -> u64 {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// Anything an instance exports or imports.
#[derive(Clone, Debug)]
pub enum Extern {
    Func(Func),
    Global(Global),
    Memory(Memory),
    Table(Table),
}

impl Extern {
    /// `function`, `global`, `memory` or `table`.
    pub fn kind(&self) -> &'static str {
        match self {
            Extern::Func(_) => "function",
            Extern::Global(_) => "global",
            Extern::Memory(_) => "memory",
            Extern::Table(_) => "table",
        }
    }
}

/// Named externs an instantiation takes its imports from.
#[derive(Clone, Debug, Default)]
pub struct Imports {
    map: HashMap<(String, String), Extern>,
}

impl Imports {
    pub fn new() -> Imports {
        Imports::default()
    }

    /// Provide `value` as `module`.`field`.
    pub fn define(&mut self, module: &str, field: &str, value: Extern) -> &mut Self {
        self.map
            .insert((module.to_string(), field.to_string()), value);
        self
    }

    /// Provide every export of `instance` under module name `module`.
    pub fn define_instance(&mut self, module: &str, instance: &super::Instance) -> &mut Self {
        for (name, value) in instance.exports() {
            self.define(module, &name, value);
        }
        self
    }

    pub fn get(&self, module: &str, field: &str) -> Option<&Extern> {
        self.map.get(&(module.to_string(), field.to_string()))
    }
}
