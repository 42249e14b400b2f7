//! Kestrel's in-process JIT: loads machine code into memory, links it, and runs it.
//!
//! Independent of how the code was produced: the input is a [`CompiledFunction`] (bytes,
//! relocations, trap sites, signature). The flow is the one Cranelift users know:
//!
//! ```text
//! let mut module = JitModule::new();                  // or JitBuilder::new().symbol(..).build()
//! let f = module.declare_function("f", Linkage::Local, &sig)?;
//! module.define_function(f, compiled)?;
//! module.finalize_definitions()?;                     // resolve, place, patch, RX, traps
//! let results = unsafe { module.call(f, &[Value::I32(1)]) }?;   // or get_finalized_function
//! ```
//!
//! Guarantees:
//! - **W^X.** Each finalize writes its code into read-write (never executable) pages, then
//!   makes them read-execute; they are not written again until freed and decommitted. No
//!   page is writable and executable at once, and there is no double mapping.
//! - **Linking.** Imports resolve from the builder's symbol table, then the process
//!   (`dlsym`); a missing one is [`JitError::UndefinedSymbol`]. Calls between module
//!   functions are direct rel32 calls (through a stub only when a target is out of reach).
//! - **Traps.** A fault (SIGILL from `ud2`, SIGFPE from `div`/`idiv`, SIGSEGV/SIGBUS from a
//!   load) at a registered trap site during [`JitModule::call`] makes the call return
//!   [`CallError::Trap`]; the process and the thread continue. So does a stack overflow in
//!   JIT code: a fault on the thread's stack guard reports `stk_ovf` (the JIT compiles with
//!   stack probes on, so a large frame cannot skip the guard). Any other fault in JIT code is
//!   reported on stderr (signal, fault address, function and offset) and kills the process
//!   as it would have; faults outside JIT code go to the handler that was installed before
//!   ours. See [`traps`](crate::traps) and
//!   [`trampoline`](crate::trampoline) for how.
//!
//! x86-64 and AArch64 Linux (System V / AAPCS64; the handler reads the Linux `ucontext_t`).
//! The module compiles with the host's `TargetIsa` (`kestrel_codegen::isa::host`); what the
//! JIT itself does differently per host (trampoline, signal context, stubs, cache) is in
//! `arch/`.
//!
//! Not yet:
//! - only the conventions the backend compiles can be called from the host (`system_v`,
//!   `fast`, `cold`, `tail`, `winch`, with results beyond the return registers in a
//!   host-allocated return area, and `windows_fastcall`);
//!
//! Also:
//! - **Unwinding.** Each finalize registers `.eh_frame` for its functions with the process's
//!   unwinder (see `frames.rs`), so backtraces and unwinding pass through Kestrel frames.
//! - **Debugging.** With [`JitBuilder::debug_info`] (or `KESTREL_DEBUG_INFO=1`), each
//!   finalize describes its functions and their source lines to gdb through the GDB JIT
//!   interface (see `gdb_jit.rs`).
//! - **Profiling.** With [`JitBuilder::perf_map`] (or `KESTREL_PERF_MAP=1`), finalize
//!   appends each function to `/tmp/perf-PID.map` for `perf report`.
//! - **Data.** [`JitModule::declare_data`] / [`JitModule::define_data`] place read-only and
//!   writable data next to the code, with relocations to functions, data and symbols.
//! - **Freeing.** [`JitModule::free_function`] releases one function, whatever was finalized
//!   with it: its trap sites, unwind and debugger registrations, and the code pages no live
//!   function of its batch still uses ([`JitModule::free_data`] does the same for a data
//!   object, which otherwise lives until the module is dropped). Perf-map lines stay (the
//!   map is append-only). [`JitModule::memory_stats`] counts the pages in use.
//! - The [`Module`] trait (shared with `kestrel-object`) lets a front end target either.

#[cfg(not(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux"
)))]
compile_error!("kestrel-jit supports x86-64 and AArch64 Linux only");

pub mod abi;
mod arch;
mod compiled;
mod error;
mod frames;
mod gdb_jit;
mod ir;
mod libcalls;
mod link;
mod memory;
mod module;
pub mod perf_map;
mod symbols;
pub mod trampoline;
pub mod traps;
mod value;

pub use compiled::{CompiledFunction, Reloc, RelocKind, RelocTarget, SourceLines, TrapSite};
pub use error::{CallError, JitError, Trap};
pub use ir::{ir_name, with_ir_name};
pub use kestrel_codegen::settings::OptLevel;
pub use kestrel_module::{DataDescription, DataId, DataInit, DataReloc, DeclError, Module};
pub use memory::MemoryStats;
pub use module::{FuncId, JitBuilder, JitModule, Linkage};
pub use value::Value;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
