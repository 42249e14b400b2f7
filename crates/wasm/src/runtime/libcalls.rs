//! Runtime functions translated code calls, defined in one place: [`Libcall`] gives each one's
//! symbol, IR signature and address (the translator declares them from it, `Module::new`
//! registers them with the JIT). All are `extern "C"`, take the caller's vmctx first, and
//! never unwind: a failure is a status the caller's code turns into a trap (0: done,
//! 1: trap with the operation's out-of-bounds code), and a panic in a host function is
//! caught and becomes a host trap.
//!
//! Cost: each is O(1) plus the bytes or entries it touches (`grow` may copy the memory).

use std::cell::RefCell;

use kestrel_ir::Type;

use super::host::HostCtx;
use super::instance::InstanceData;
use super::vmctx::VmCtx;
use crate::trap::Trap;
use crate::val::Val;

/// A runtime function; see the module docs.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Libcall {
    /// `(memory, delta: i32) -> old pages or -1`
    MemoryGrow,
    /// `(dst_memory, src_memory, dst, src, len: i32) -> status`
    MemoryCopy,
    /// `(memory, dst, byte, len: i32) -> status`
    MemoryFill,
    /// `(memory, segment, dst, src, len: i32) -> status`
    MemoryInit,
    /// `(segment: i32)`
    DataDrop,
    /// `(table: i32, init: i64, delta: i32) -> old length or -1`
    TableGrow,
    /// `(table: i32, dst: i32, value: i64, len: i32) -> status`
    TableFill,
    /// `(dst_table, src_table, dst, src, len: i32) -> status`
    TableCopy,
    /// `(table, segment, dst, src, len: i32) -> status`
    TableInit,
    /// `(segment: i32)`
    ElemDrop,
}

impl Libcall {
    pub const ALL: [Libcall; 10] = [
        Libcall::MemoryGrow,
        Libcall::MemoryCopy,
        Libcall::MemoryFill,
        Libcall::MemoryInit,
        Libcall::DataDrop,
        Libcall::TableGrow,
        Libcall::TableFill,
        Libcall::TableCopy,
        Libcall::TableInit,
        Libcall::ElemDrop,
    ];

    /// The symbol the JIT links calls to.
    pub fn symbol(self) -> &'static str {
        match self {
            Libcall::MemoryGrow => "kestrel_wasm_memory_grow",
            Libcall::MemoryCopy => "kestrel_wasm_memory_copy",
            Libcall::MemoryFill => "kestrel_wasm_memory_fill",
            Libcall::MemoryInit => "kestrel_wasm_memory_init",
            Libcall::DataDrop => "kestrel_wasm_data_drop",
            Libcall::TableGrow => "kestrel_wasm_table_grow",
            Libcall::TableFill => "kestrel_wasm_table_fill",
            Libcall::TableCopy => "kestrel_wasm_table_copy",
            Libcall::TableInit => "kestrel_wasm_table_init",
            Libcall::ElemDrop => "kestrel_wasm_elem_drop",
        }
    }

    /// Parameter types after the vmctx, and result types.
    pub fn signature(self) -> (&'static [Type], &'static [Type]) {
        use Type as T;
        match self {
            Libcall::MemoryGrow => (&[T::I32, T::I32], &[T::I32]),
            Libcall::MemoryFill => (&[T::I32, T::I32, T::I32, T::I32], &[T::I32]),
            Libcall::MemoryCopy | Libcall::MemoryInit => {
                (&[T::I32, T::I32, T::I32, T::I32, T::I32], &[T::I32])
            }
            Libcall::DataDrop | Libcall::ElemDrop => (&[T::I32], &[]),
            Libcall::TableGrow => (&[T::I32, T::I64, T::I32], &[T::I32]),
            Libcall::TableFill => (&[T::I32, T::I32, T::I64, T::I32], &[T::I32]),
            Libcall::TableCopy | Libcall::TableInit => {
                (&[T::I32, T::I32, T::I32, T::I32, T::I32], &[T::I32])
            }
        }
    }

    /// The implementation's address.
    pub fn address(self) -> *const u8 {
        match self {
            Libcall::MemoryGrow => memory_grow as *const u8,
            Libcall::MemoryCopy => memory_copy as *const u8,
            Libcall::MemoryFill => memory_fill as *const u8,
            Libcall::MemoryInit => memory_init as *const u8,
            Libcall::DataDrop => data_drop as *const u8,
            Libcall::TableGrow => table_grow as *const u8,
            Libcall::TableFill => table_fill as *const u8,
            Libcall::TableCopy => table_copy as *const u8,
            Libcall::TableInit => table_init as *const u8,
            Libcall::ElemDrop => elem_drop as *const u8,
        }
    }
}

/// The instance behind `vmctx`.
///
/// # Safety
/// `vmctx` is the context of a live instance, on the thread running it.
unsafe fn instance<'a>(vmctx: *mut VmCtx) -> &'a InstanceData {
    // SAFETY: by the contract; `runtime` is set to the instance's data at instantiation.
    unsafe { &*((*vmctx).runtime as *const InstanceData) }
}

fn status(ok: bool) -> u32 {
    u32::from(!ok)
}

// SAFETY (all libcalls below): translated code passes its own live vmctx, on the thread
// running the instance, and the validator checked the indices it passes.

unsafe extern "C" fn memory_grow(vmctx: *mut VmCtx, mem: u32, delta: u32) -> u32 {
    let i = unsafe { instance(vmctx) };
    i.memory_box(mem)
        .grow(delta as u64)
        .map_or(u32::MAX, |old| old as u32)
}

unsafe extern "C" fn memory_copy(
    vmctx: *mut VmCtx,
    dst_mem: u32,
    src_mem: u32,
    dst: u32,
    src: u32,
    len: u32,
) -> u32 {
    let i = unsafe { instance(vmctx) };
    status(i.memory_copy(dst_mem, src_mem, dst as u64, src as u64, len as u64))
}

unsafe extern "C" fn memory_fill(
    vmctx: *mut VmCtx,
    mem: u32,
    dst: u32,
    byte: u32,
    len: u32,
) -> u32 {
    let i = unsafe { instance(vmctx) };
    status(i.memory_box(mem).fill(dst as u64, byte as u8, len as u64))
}

unsafe extern "C" fn memory_init(
    vmctx: *mut VmCtx,
    mem: u32,
    seg: u32,
    dst: u32,
    src: u32,
    len: u32,
) -> u32 {
    let i = unsafe { instance(vmctx) };
    status(i.memory_init(mem, seg, dst as u64, src as u64, len as u64))
}

unsafe extern "C" fn data_drop(vmctx: *mut VmCtx, seg: u32) {
    unsafe { instance(vmctx) }.data_drop(seg);
}

unsafe extern "C" fn table_grow(vmctx: *mut VmCtx, table: u32, init: u64, delta: u32) -> u32 {
    let i = unsafe { instance(vmctx) };
    i.table_box(table)
        .grow(delta as u64, init)
        .map_or(u32::MAX, |old| old as u32)
}

unsafe extern "C" fn table_fill(
    vmctx: *mut VmCtx,
    table: u32,
    dst: u32,
    value: u64,
    len: u32,
) -> u32 {
    let i = unsafe { instance(vmctx) };
    status(i.table_box(table).fill(dst as u64, value, len as u64))
}

unsafe extern "C" fn table_copy(
    vmctx: *mut VmCtx,
    dst_table: u32,
    src_table: u32,
    dst: u32,
    src: u32,
    len: u32,
) -> u32 {
    let i = unsafe { instance(vmctx) };
    status(i.table_copy(dst_table, src_table, dst as u64, src as u64, len as u64))
}

unsafe extern "C" fn table_init(
    vmctx: *mut VmCtx,
    table: u32,
    seg: u32,
    dst: u32,
    src: u32,
    len: u32,
) -> u32 {
    let i = unsafe { instance(vmctx) };
    status(i.table_init(table, seg, dst as u64, src as u64, len as u64))
}

unsafe extern "C" fn elem_drop(vmctx: *mut VmCtx, seg: u32) {
    unsafe { instance(vmctx) }.elem_drop(seg);
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
    let mut args = Vec::with_capacity(params.len());
    for (i, &ty) in params.iter().enumerate() {
        // SAFETY: slot `i` exists (contract).
        match Val::from_bits(ty, unsafe { *values.add(i) }) {
            Some(v) => args.push(v),
            None => return record(Trap::Host(format!("unsupported parameter type {ty}"))),
        }
    }
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
