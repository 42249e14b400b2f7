//! Kestrel's WebAssembly front end and runtime.
//!
//! A binary module is validated and decoded with `wasmparser`, each function is translated
//! into one Kestrel IR function with `FunctionBuilder` ([`translate`]), compiled by the
//! host's backend (`kestrel_codegen::isa::host`: x86-64 or AArch64; functions in parallel,
//! with the result of a serial compile) into an in-process JIT module ([`Module`]), and
//! instantiated with its
//! own context, memory, tables and globals ([`Instance`]). Traps come back as [`Trap`]s with
//! the spec's messages.
//!
//! ```
//! use kestrel_wasm::{Imports, Instance, Module, Val};
//!
//! let wasm = kestrel_wasm::wat_to_binary(br#"
//!     (module (func (export "add") (param i32 i32) (result i32)
//!         local.get 0 local.get 1 i32.add))"#, None).unwrap();
//! let module = Module::new(&wasm).unwrap();
//! let instance = Instance::new(&module, &Imports::new()).unwrap();
//! assert_eq!(instance.invoke("add", &[Val::I32(2), Val::I32(40)]).unwrap(), [Val::I32(42)]);
//! ```
//!
//! Contract.
//! - **Supported** ([`features::SUPPORTED`]): the Wasm 2.0 core without SIMD — all numeric
//!   operators (with sign-extension and non-trapping float-to-int), locals, globals
//!   (imported mutable ones too), structured control with multi-value block types,
//!   `br_table`, direct, imported and indirect calls (with signature checks), reference
//!   types (`funcref`/`externref` values, multiple tables, `table.*`, `ref.*`), bulk memory
//!   (`memory.copy`/`fill`/`init`, `data.drop`, passive segments), imports and exports of
//!   every kind, the start function — plus three Wasm 3.0 pieces: multiple memories,
//!   extended constant expressions and tail calls (`return_call`, `return_call_indirect`;
//!   every Wasm function is compiled with the `tail` convention). Text modules read through
//!   [`wat_to_binary`]. Memory accesses rely on guard pages (each memory
//!   reserves 4 GiB plus a 2 GiB guard; an out-of-bounds access faults and becomes the
//!   out-of-bounds trap) or, selected by [`Config`] or when no address space can be
//!   reserved, are bounds-checked in code ([`BoundsChecks`]). Host
//!   functions are Rust closures ([`Func::wrap`]). Deep recursion traps "call stack
//!   exhausted" through the backend's stack-limit check (see `runtime/func.rs`). A trap
//!   names the Wasm function it happened in when only the module's own code can run under
//!   the call (see `runtime/func.rs`). WASI preview 1 ([`wasi`]): arguments, environment,
//!   clocks, randomness, stdio, files and directories confined to preopened directories,
//!   `proc_exit` as [`Trap::Exit`].
//! - **Refused with an error naming the proposal** (never a panic): SIMD and relaxed SIMD,
//!   threads, exceptions, memory64 (and 64-bit tables), GC and typed function
//!   references. Malformed or invalid modules are [`WasmError::Invalid`] with the byte
//!   offset; valid modules that need a refused proposal are [`WasmError::Unsupported`].
//! - **Not yet**: WASI sockets and the later WASI versions, a store that frees instances
//!   referring to each other through tables (such cycles are kept alive), caching compiled
//!   code, explicitly checked memories beyond 1 GiB (guard-page memories reach 4 GiB).
//! - **Cost**: compilation is linear in the module's size plus the backend's cost per
//!   function; each memory access costs one load of the memory's base with guard pages,
//!   or a bounds check (three loads, a compare, a conditional trap) without; calls to imports and through tables are indirect calls; bulk and
//!   table-growing operators are runtime calls.
//!
//! Layout: [`config`] (how code is compiled: the bounds-check mode), [`features`] (what is
//! accepted), [`text`] (the text format read into a binary module), [`module_info`] (decoding), [`translate`] (one
//! function to IR, one file per concern), [`module`] (compile into a JIT module),
//! [`runtime`] (the vmctx layout in `vmctx.rs`, memories, tables, globals, libcalls, host
//! functions, instances), [`trap`] (Wasm traps and their IR trap codes, in one place),
//! [`wasi`] (WASI preview 1 over an instance's memory).
//!
//! x86-64 and AArch64 Linux, like `kestrel-jit`.

pub mod compile_times;
pub mod config;
pub mod error;
pub mod features;
pub mod module;
pub mod module_info;
pub mod runtime;
pub mod text;
pub mod translate;
pub mod trap;
pub mod val;
pub mod wasi;

pub use compile_times::CompileTimes;
pub use config::{BoundsChecks, Config, OptLevel};
pub use error::WasmError;
pub use module::{translate_module, Module};
pub use runtime::{Extern, Func, Global, Imports, Instance, InvokeError, Memory, Table};
pub use text::wat_to_binary;
pub use trap::Trap;
pub use val::Val;
