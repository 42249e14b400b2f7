//! Runtime functions translated code calls: `memory.grow`, and the entry of host functions
//! (called by their stubs, see `host.rs`). Both are `extern "C"` and never unwind: a panic
//! in a host function is caught and turned into a trap.

use std::cell::RefCell;

use super::host::HostCtx;
use super::memory::MemoryBox;
use super::vmctx::VmCtx;
use crate::trap::Trap;
use crate::val::Val;

/// `memory.grow`: grow the instance's memory by `delta` pages; the old size, or -1.
///
/// # Safety
/// `vmctx` is the context of a live instance that has a memory (the translator emits the
/// call only then), called on the thread running that instance.
pub unsafe extern "C" fn memory_grow(vmctx: *mut VmCtx, delta: u32) -> u32 {
    // SAFETY: by the contract, `vmctx` and its memory are live; a `MemoryDef` pointer is
    // always the first field of a `MemoryBox` (see `memory.rs`).
    let memory = unsafe { &*((*vmctx).memory as *const MemoryBox) };
    match memory.grow(delta as u64) {
        Some(old) => old as u32,
        None => u32::MAX,
    }
}

thread_local! {
    /// The trap a host function reported, for the runtime to pick up after the stub trapped.
    static HOST_TRAP: RefCell<Option<Trap>> = const { RefCell::new(None) };
}

/// The trap the last failing host function on this thread reported, if any.
pub(crate) fn take_host_trap() -> Option<Trap> {
    HOST_TRAP.with(|t| t.borrow_mut().take())
}

/// Run the host function of `ctx` on the 8-byte slots at `values`: its arguments in, its
/// results out. Returns 0, or 1 after recording a trap (the stub then traps).
///
/// # Safety
/// `ctx` is a live [`HostCtx`] and `values` holds `max(params, results)` slots (the stub's
/// stack slot).
pub unsafe extern "C" fn host_call(ctx: *const HostCtx, values: *mut u64) -> u32 {
    // SAFETY: by the contract.
    let ctx = unsafe { &*ctx };
    let params = ctx.ty.params();
    let args: Vec<Val> = params
        .iter()
        .enumerate()
        // SAFETY: slot `i` exists (contract); the type is numeric (host functions are
        // created only for numeric signatures).
        .map(|(i, &ty)| Val::from_bits(ty, unsafe { *values.add(i) }).expect("numeric"))
        .collect();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (ctx.func)(&args)));
    let results = match outcome {
        Ok(Ok(results)) => results,
        Ok(Err(trap)) => return record(trap),
        Err(_) => return record(Trap::Host("the host function panicked".into())),
    };
    let types_match = results.len() == ctx.ty.results().len()
        && results
            .iter()
            .zip(ctx.ty.results())
            .all(|(v, &t)| v.ty() == t);
    if !types_match {
        return record(Trap::Host(
            "the host function returned values of the wrong types".into(),
        ));
    }
    for (i, v) in results.iter().enumerate() {
        // SAFETY: slot `i` exists (contract).
        unsafe { *values.add(i) = v.to_bits() };
    }
    0
}

fn record(trap: Trap) -> u32 {
    HOST_TRAP.with(|t| *t.borrow_mut() = Some(trap));
    1
}
