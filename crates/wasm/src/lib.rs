//! Kestrel's WebAssembly front end and runtime.
//!
//! A binary module is validated and decoded with `wasmparser`, each function is translated
//! into one Kestrel IR function with `FunctionBuilder` ([`translate`]), compiled by the
//! x86-64 backend into an in-process JIT module ([`Module`]), and instantiated with its
//! own context, memory, tables and globals ([`Instance`]). Traps come back as [`Trap`]s with
//! the spec's messages.
//!
//! ```
//! use kestrel_wasm::{Imports, Instance, Module, Val};
//!
//! let wasm = wat::parse_str(r#"
//!     (module (func (export "add") (param i32 i32) (result i32)
//!         local.get 0 local.get 1 i32.add))"#).unwrap();
//! let module = Module::new(&wasm).unwrap();
//! let instance = Instance::new(&module, &Imports::new()).unwrap();
//! assert_eq!(instance.invoke("add", &[Val::I32(2), Val::I32(40)]).unwrap(), [Val::I32(42)]);
//! ```
//!
//! Contract.
//! - **Supported** ([`features::SUPPORTED`]): the Wasm 1.0 core — all numeric operators,
//!   locals, globals (imported mutable ones too), structured control with multi-value block
//!   types, `br_table`, direct, imported and indirect calls (with signature checks), one
//!   linear memory with explicit bounds checks, `memory.size`/`memory.grow`, one funcref
//!   table with active element segments, active data segments, imports and exports of every
//!   kind, the start function — plus sign-extension operators, non-trapping float-to-int
//!   conversions and multi-value. Host functions are Rust closures ([`Func::wrap`]).
//!   Deep recursion traps "call stack exhausted" through the backend's stack-limit check.
//! - **Refused with an error naming the proposal** (never a panic): SIMD, reference types
//!   (and so multiple tables, `table.*`, typed `select` of references), bulk memory,
//!   threads, tail calls, exceptions, memory64, multi-memory, extended constants, GC and
//!   function references. Malformed or invalid modules are [`WasmError::Invalid`] with the
//!   byte offset; valid modules that need a refused proposal are
//!   [`WasmError::Unsupported`].
//! - **Not yet**: guard-page memories (every access is bounds-checked in code), WASI,
//!   caching compiled code, freeing instances that reference each other through tables
//!   (they are kept alive), calls from host functions back into the caller's instance.
//! - **Cost**: compilation is linear in the module's size plus the backend's cost per
//!   function; each memory access costs a bounds check (three loads, a compare, a
//!   conditional trap); calls between instances go through an indirect call.
//!
//! x86-64 Linux only, like `kestrel-jit`.

pub mod error;
pub mod features;
pub mod module;
pub mod module_info;
pub mod runtime;
pub mod translate;
pub mod trap;
pub mod val;

pub use error::WasmError;
pub use module::{translate_module, Module};
pub use runtime::{Extern, Func, Global, Imports, Instance, InvokeError, Memory, Table};
pub use trap::Trap;
pub use val::Val;
