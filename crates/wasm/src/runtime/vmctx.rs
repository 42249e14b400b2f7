//! The instance context (`vmctx`): the one place its layout is defined. Translated code
//! receives a pointer to an instance's [`VmCtx`] as its first argument and reaches all
//! instance state through it with the offsets below; the runtime fills it in.
//!
//! Layout (all `#[repr(C)]`, 64-bit little-endian: x86-64 and AArch64):
//!
//! ```text
//! VmCtx          +0  memory:          *mut MemoryDef      (memory 0; null: no memory)
//!                +8  globals:         *const *mut GlobalCell  (one cell pointer per global)
//!                +16 tables:          *const *mut TableDef    (one per table)
//!                +24 imported_funcs:  *const FuncRef          (one per imported function)
//!                +32 limits:          *const RuntimeLimits    (the thread's, see func.rs)
//!                +40 func_refs:       *const *const FuncRef   (one per function, imports
//!                                     first: what `ref.func` returns)
//!                +48 runtime:         *const ()               (the instance, for libcalls only)
//!                +56 memories:        *const *mut MemoryDef   (one per memory, imports first;
//!                                     memory 0 is also `memory`, the fast path)
//! MemoryDef      +0  base: *mut u8,  +8 size: u64 (bytes)
//! GlobalCell     +0  bits: u64 (i32/f32 in the low 4 bytes, little-endian; a reference
//!                    as in a table)
//! TableDef       +0  base: *mut u64,  +8 len: u64 (entries)
//! table entry        u64: a funcref is a `*const FuncRef` (0: null); an externref is the
//!                    host's value plus one (0: null)
//! FuncRef        +0  code: *const u8,  +8 vmctx: *mut VmCtx,
//!                +16 type_id: u64 (the canonical id of its signature, see `types.rs`)
//! RuntimeLimits  +0  stack_limit: u64 (lowest stack address Wasm frames may use;
//!                    one per thread)
//! ```
//!
//! Memories, globals and tables are reached through pointers so that an imported one is the
//! exporting instance's object itself, and so that `memory.grow` (which may move the base)
//! is seen by every instance sharing the memory: translated code reloads `base` and `size`
//! at each access instead of caching them.

use std::mem::offset_of;

/// An instance's context; see the module docs.
#[repr(C)]
#[derive(Debug)]
pub struct VmCtx {
    pub memory: *mut MemoryDef,
    pub globals: *const *mut GlobalCell,
    pub tables: *const *mut TableDef,
    pub imported_funcs: *const FuncRef,
    pub limits: *const RuntimeLimits,
    pub func_refs: *const *const FuncRef,
    pub runtime: *const (),
    pub memories: *const *mut MemoryDef,
}

/// A linear memory as translated code sees it.
#[repr(C)]
#[derive(Debug)]
pub struct MemoryDef {
    pub base: *mut u8,
    pub size: u64,
}

/// One global's storage.
#[repr(C)]
#[derive(Debug, Default)]
pub struct GlobalCell {
    pub bits: u64,
}

/// A table as translated code sees it.
#[repr(C)]
#[derive(Debug)]
pub struct TableDef {
    pub base: *mut u64,
    pub len: u64,
}

/// What a function reference points at; also an imported function's entry.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FuncRef {
    pub code: *const u8,
    pub vmctx: *mut VmCtx,
    pub type_id: u64,
}

/// Limits shared by all instances used on one thread (see `func.rs`).
#[repr(C)]
#[derive(Debug, Default)]
pub struct RuntimeLimits {
    /// 0 while no Wasm call is active on the thread.
    pub stack_limit: std::cell::Cell<u64>,
}

/// Byte offsets used by the translator.
pub mod offsets {
    use super::*;

    pub const MEMORY: i32 = offset_of!(VmCtx, memory) as i32;
    pub const GLOBALS: i32 = offset_of!(VmCtx, globals) as i32;
    pub const TABLES: i32 = offset_of!(VmCtx, tables) as i32;
    pub const IMPORTED_FUNCS: i32 = offset_of!(VmCtx, imported_funcs) as i32;
    pub const LIMITS: i32 = offset_of!(VmCtx, limits) as i32;
    pub const FUNC_REFS: i32 = offset_of!(VmCtx, func_refs) as i32;
    pub const MEMORIES: i32 = offset_of!(VmCtx, memories) as i32;
    pub const MEMORY_BASE: i32 = offset_of!(MemoryDef, base) as i32;
    pub const MEMORY_SIZE: i32 = offset_of!(MemoryDef, size) as i32;
    pub const TABLE_BASE: i32 = offset_of!(TableDef, base) as i32;
    pub const TABLE_LEN: i32 = offset_of!(TableDef, len) as i32;
    pub const FUNCREF_CODE: i32 = offset_of!(FuncRef, code) as i32;
    pub const FUNCREF_VMCTX: i32 = offset_of!(FuncRef, vmctx) as i32;
    pub const FUNCREF_TYPE_ID: i32 = offset_of!(FuncRef, type_id) as i32;
    pub const FUNCREF_SIZE: i64 = std::mem::size_of::<FuncRef>() as i64;
    pub const STACK_LIMIT: i32 = offset_of!(RuntimeLimits, stack_limit) as i32;
}

#[cfg(test)]
mod tests {
    use super::offsets::*;

    #[test]
    fn layout_is_the_documented_one() {
        assert_eq!(
            (MEMORY, GLOBALS, TABLES, IMPORTED_FUNCS, LIMITS, FUNC_REFS),
            (0, 8, 16, 24, 32, 40)
        );
        assert_eq!(std::mem::offset_of!(super::VmCtx, runtime), 48);
        assert_eq!(MEMORIES, 56);
        assert_eq!(
            (MEMORY_BASE, MEMORY_SIZE, TABLE_BASE, TABLE_LEN),
            (0, 8, 0, 8)
        );
        assert_eq!((FUNCREF_CODE, FUNCREF_VMCTX, FUNCREF_TYPE_ID), (0, 8, 16));
        assert_eq!(FUNCREF_SIZE, 24);
        assert_eq!(STACK_LIMIT, 0);
    }
}
