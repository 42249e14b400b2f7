//! WASI preview 1 (`wasi_snapshot_preview1`): the system interface C (wasi-libc), Rust and
//! other toolchains' programs import, as host functions over the instance's memory.
//!
//! ```no_run
//! use kestrel_wasm::wasi::{Capture, Output, Wasi, WasiCtx};
//! use kestrel_wasm::{Imports, Module};
//!
//! let module = Module::new(&std::fs::read("hello.wasm").unwrap()).unwrap();
//! let stdout = Capture::new();
//! let ctx = WasiCtx::new()
//!     .arg("hello")
//!     .env("LANG", "C")
//!     .preopen_dir("/tmp/work", ".")
//!     .stdout(Output::Capture(stdout.clone()));
//! let wasi = Wasi::new(ctx).unwrap();
//! let instance = wasi.instantiate(&module, &Imports::new()).unwrap();
//! let exit_code = wasi.run_start(&instance).unwrap();
//! println!("exit {exit_code}: {}", stdout.text());
//! ```
//!
//! Contract.
//! - **Linking** ([`Wasi::define_imports`]): every import of the module from
//!   `wasi_snapshot_preview1` is defined — the functions Kestrel implements with their
//!   preview-1 types (a module declaring another type is a link error naming both), every
//!   other preview-1 function, and any unknown name, returning `NOSYS` (an unknown name
//!   whose type does not return an errno traps if called). So any module written against
//!   preview 1 instantiates.
//! - **Memory**: the calls read and write the instance's exported `memory` (else its memory
//!   0), bound after instantiation ([`Wasi::bind`], done by [`Wasi::instantiate`]). A
//!   call before that (from a start function) traps with a message saying so. Guest
//!   pointers out of bounds are `FAULT`, never a host crash (`guest.rs`).
//! - **Exit**: `proc_exit(code)` ends the execution with [`Trap::Exit`], which unwinds through
//!   the runtime like any trap (the host function returns normally; its stub then traps,
//!   so no host frame is skipped); [`Wasi::run_start`] turns it into the exit code.
//! - **Files**: stdio are fds 0–2 ([`WasiCtx`] says where they go); preopened directories
//!   follow from 3. Every open directory and file is held as an OS handle, never as a host
//!   path, and every guest path is resolved by the kernel below the handle of its directory
//!   descriptor (`sandbox.rs`): `..` past it, absolute paths and symbolic links leading out
//!   are `PERM`, whatever the guest renames or links and whatever another host process
//!   swaps in the tree meanwhile. What each call does and leaves out is written in its file
//!   under `calls/`; not implemented: `fd_allocate`, `fd_fdstat_set_rights`, `proc_raise`
//!   and sockets (`NOSYS`).
//! - One program per [`Wasi`]: its descriptor table and memory binding are the program's.
//!
//! Layout: `abi` (the ABI's numbers and layouts), `ctx` (the builder), `state` (a running
//! program's state), `fds` (descriptor table), `sandbox` (guest path checks and the confinement contract), `guest`
//! (checked memory access), `calls/` (the functions).
//!
//! Cost: linking compiles one small stub per imported WASI function (see `host.rs`); each
//! call is a host call plus the work described in its file.

pub mod abi;
mod calls;
mod ctx;
mod fds;
mod guest;
mod sandbox;
mod state;

use std::cell::RefCell;
use std::rc::Rc;

pub use ctx::{Capture, Input, Output, Preopen, WasiCtx};

use self::calls::{Call, Cx};
use self::state::WasiState;
use crate::error::WasmError;
use crate::module::Module;
use crate::module_info::ImportKind;
use crate::runtime::{Extern, Func, Imports, Instance, InvokeError};
use crate::trap::Trap;
use crate::val::Val;

/// The import module name of WASI preview 1.
pub const MODULE: &str = "wasi_snapshot_preview1";

/// Every preview-1 function Kestrel defines, with its Wasm type, by name (those not
/// implemented return `NOSYS`).
pub fn functions() -> impl Iterator<Item = (&'static str, wasmparser::FuncType)> {
    calls::CALLS.iter().map(|c| (c.name, c.ty()))
}

/// A WASI program's host side: its state, and the imports that work on it. Cheap to clone
/// (a handle).
#[derive(Clone)]
pub struct Wasi {
    state: Rc<RefCell<WasiState>>,
}

impl std::fmt::Debug for Wasi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wasi").finish_non_exhaustive()
    }
}

impl Wasi {
    /// The program's state from `ctx`; a preopened directory that cannot be opened is an
    /// error naming it.
    pub fn new(ctx: WasiCtx) -> Result<Wasi, WasmError> {
        Ok(Wasi {
            state: Rc::new(RefCell::new(WasiState::new(ctx)?)),
        })
    }

    /// Define every `wasi_snapshot_preview1` import of `module` in `imports`; see the
    /// module docs.
    pub fn define_imports(&self, module: &Module, imports: &mut Imports) -> Result<(), WasmError> {
        let info = module.info();
        for imp in info.imports.iter().filter(|i| i.module == MODULE) {
            let link_error = |message: String| WasmError::Link {
                module: MODULE.into(),
                field: imp.field.clone(),
                message,
            };
            let ImportKind::Func { type_index, .. } = imp.kind else {
                return Err(link_error("WASI provides only functions".into()));
            };
            let declared = &info.types[type_index as usize];
            let func = match calls::find(&imp.field) {
                Some(call) if call.ty() == *declared => self.host_function(call)?,
                Some(call) => {
                    return Err(link_error(format!(
                        "incompatible import type: declared {declared}, WASI's is {}",
                        call.ty()
                    )))
                }
                None => unknown_function(&imp.field, declared.clone())?,
            };
            imports.define(MODULE, &imp.field, Extern::Func(func));
        }
        Ok(())
    }

    /// The host function running `call` on this program's state.
    fn host_function(&self, call: &'static Call) -> Result<Func, WasmError> {
        let state = self.state.clone();
        Func::wrap(call.ty(), move |args| {
            let mut state = state.try_borrow_mut().map_err(|_| {
                Trap::Host(format!(
                    "WASI {}: called during another WASI call",
                    call.name
                ))
            })?;
            let memory = state.memory.clone();
            let mut cx = Cx {
                state: &mut state,
                memory: memory.as_ref().map(|m| &*m.0),
                name: call.name,
            };
            calls::dispatch(call, &mut cx, args)
        })
    }

    /// Make the calls use `instance`'s exported `memory` (else its memory 0).
    pub fn bind(&self, instance: &Instance) {
        let memory = match instance.get_export("memory") {
            Some(Extern::Memory(m)) => Some(m),
            _ => instance.memory(),
        };
        self.state.borrow_mut().memory = memory;
    }

    /// Instantiate `module` with `imports` plus its WASI imports, and bind its memory.
    pub fn instantiate(&self, module: &Module, imports: &Imports) -> Result<Instance, WasmError> {
        let mut all = imports.clone();
        self.define_imports(module, &mut all)?;
        let instance = Instance::new(module, &all)?;
        self.bind(&instance);
        Ok(instance)
    }

    /// Run the program: call `_start`. Its exit code: the one passed to `proc_exit`, or 0
    /// when `_start` returns.
    pub fn run_start(&self, instance: &Instance) -> Result<i32, InvokeError> {
        match instance.invoke("_start", &[]) {
            Ok(_) => Ok(0),
            Err(InvokeError::Trap {
                trap: Trap::Exit(code),
                ..
            }) => Ok(code),
            Err(e) => Err(e),
        }
    }
}

/// A function of a name preview 1 does not have: `NOSYS` if its type returns an errno,
/// else a trap naming it.
fn unknown_function(name: &str, ty: wasmparser::FuncType) -> Result<Func, WasmError> {
    let returns_errno = ty.results() == [wasmparser::ValType::I32];
    let message = format!("WASI function `{name}` is not part of preview 1");
    Func::wrap(ty, move |_| {
        if returns_errno {
            Ok(vec![Val::I32(abi::Errno::NOSYS.0 as i32)])
        } else {
            Err(Trap::Host(message.clone()))
        }
    })
}
