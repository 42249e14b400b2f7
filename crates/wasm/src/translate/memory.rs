//! Linear-memory access: loads, stores, `memory.size`, `memory.grow`.
//!
//! An access of `size` bytes at Wasm address `a` (an `i32`) with static offset `o` reads
//! `base + zext(a) + o`, and is kept in bounds one of two ways (see `config.rs`):
//! - **guard pages**, when the module is compiled for them and `o + size <= GUARD_BYTES`:
//!   no code at all. `a < 2^32`, so the access lies inside the memory's reservation, which
//!   is inaccessible past the current size (`runtime/memory.rs`); an out-of-bounds access
//!   faults, and the access carries the trap code `heap_oob` so the JIT's handler reports
//!   the fault at exactly that instruction as the out-of-bounds trap. Only `base` is loaded,
//!   and read-only: a guard memory's base never moves.
//! - **explicit**, otherwise (explicit mode, or an offset past the guard): the code
//!   computes in 64 bits `end = zext(a) + (o + size)` — no overflow, as `a < 2^32` and
//!   `o < 2^32` — and traps with `heap_oob` when `end > memory size`; the access is then
//!   `notrap`. `base` and `size` are loaded at each access (a call may have grown, and
//!   moved, the memory).
//!
//! Cost: O(1) instructions per access: guard mode an extension and an add, none when an
//! access it is dominated by computed the same address, plus the `MemoryDef` pointer and
//! `base` loads where no dominating access loaded them ([`HeapCache`]); explicit mode
//! three loads, an add, a compare and a conditional trap.

use kestrel_ir::immediates::AliasRegion;
use kestrel_ir::{InstructionData, IntCC, MemFlags, Opcode, Type, Value as IrValue};
use wasmparser::{MemArg, Operator};

use super::{fixed_field, mutable_field, FuncTranslator, Res, HEAP_OOB};
use crate::config::BoundsChecks;
use crate::runtime::libcalls::Libcall;
use crate::runtime::memory::GUARD_BYTES;
use crate::runtime::vmctx::offsets;

/// What a reused value of the heap cache stands for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum HeapKey {
    /// Memory `n`'s `MemoryDef` pointer.
    Def(u32),
    /// Guard memory `n`'s base.
    GuardBase(u32),
    /// `base + zext(addr)` in guard memory `n`: the native address of Wasm address `addr`.
    Address(u32, IrValue),
}

/// Values computed for memory accesses that later accesses reuse instead of computing them
/// again (the mid-end would merge the copies, but only after paying to build, verify and
/// walk them; at opt level `none` nothing would). All are fixed while the function runs:
/// the `MemoryDef` pointer and a guard memory's base never change (`fixed_field`), and an
/// address is a pure function of them and an SSA value.
///
/// Reuse must respect dominance, which Wasm's structured control flow gives without a
/// dominator tree: a value computed in the body of frame `j` (with `j + 1` frames open)
/// dominates the rest of that body, nested frames included, because control reaches later
/// code of the body only by falling through from earlier code (a branch leaves to an
/// enclosing frame's end, or to a loop's header, which precedes it). It does not dominate
/// an `if`'s else arm, nor anything after the frame's `end` (reachable by branches that
/// skip it). So each value is recorded with the number of frames open when it was made,
/// and is forgotten when that frame ends or reaches its `else` ([`HeapCache::close_frame`]).
///
/// Cost: O(1) per lookup and insertion (hashed); each entry is dropped at most once.
#[derive(Default)]
pub(crate) struct HeapCache {
    /// `(key, value, open frames)` in the order made, so the number of open frames never
    /// decreases along the list (entries of deeper frames were dropped when they closed).
    entries: Vec<(HeapKey, IrValue, usize)>,
    /// Position of each key's entry in `entries`.
    index: rustc_hash::FxHashMap<HeapKey, usize>,
}

impl HeapCache {
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
    }

    fn get(&self, key: HeapKey) -> Option<IrValue> {
        self.index.get(&key).map(|&k| self.entries[k].1)
    }

    fn insert(&mut self, key: HeapKey, value: IrValue, open_frames: usize) {
        debug_assert!(self.entries.last().is_none_or(|e| e.2 <= open_frames));
        self.index.insert(key, self.entries.len());
        self.entries.push((key, value, open_frames));
    }

    /// Frame `j` (with `j + 1` frames open) ends or starts its else arm: forget the values
    /// made inside it, which do not dominate what follows.
    pub fn close_frame(&mut self, j: usize) {
        while let Some(&(key, _, open)) = self.entries.last() {
            if open <= j {
                break;
            }
            self.entries.pop();
            self.index.remove(&key);
        }
    }
}

/// Flags of a heap access: trapping with `heap_oob` where it relies on the guard region,
/// `notrap` where it was checked in code.
fn heap_flags(trap: bool) -> MemFlags {
    let mut f = MemFlags::new();
    f.trap_code = trap.then_some(HEAP_OOB);
    f.alias_region = Some(AliasRegion::Heap);
    f
}

impl FuncTranslator<'_> {
    /// Memory `mem`'s `MemoryDef` pointer (memory 0 straight from the vmctx), loaded once
    /// where it dominates later uses (see [`HeapCache`]).
    fn memory_def(&mut self, mem: u32) -> Res<IrValue> {
        if let Some(def) = self.heap_cache.get(HeapKey::Def(mem)) {
            return Ok(def);
        }
        let def = if mem == 0 {
            self.load_field(Type::I64, fixed_field(), self.vmctx, offsets::MEMORY)?
        } else {
            let defs = self.load_field(Type::I64, fixed_field(), self.vmctx, offsets::MEMORIES)?;
            self.load_field(Type::I64, fixed_field(), defs, mem as i32 * 8)?
        };
        self.heap_cache
            .insert(HeapKey::Def(mem), def, self.control.len());
        Ok(def)
    }

    /// The base of guard-page memory `mem`, whose `MemoryDef` is `def` (it never moves).
    fn guard_base(&mut self, mem: u32, def: IrValue) -> Res<IrValue> {
        if let Some(base) = self.heap_cache.get(HeapKey::GuardBase(mem)) {
            return Ok(base);
        }
        let base = self
            .b
            .ins()
            .load(Type::I64, fixed_field(), def, offsets::MEMORY_BASE)
            .map_err(|e| self.err(e))?;
        self.heap_cache
            .insert(HeapKey::GuardBase(mem), base, self.control.len());
        Ok(base)
    }

    /// The native address for an access of `size` bytes at Wasm address `addr` plus
    /// `offset`, bounds-checked in code unless the guard region covers it; returns it, the
    /// offset to put on the access and whether the access must trap (see the module docs).
    fn heap_address(
        &mut self,
        memarg: &MemArg,
        addr: IrValue,
        size: u64,
    ) -> Res<(IrValue, i32, bool)> {
        let offset = memarg.offset;
        let guarded = self.bounds_checks == BoundsChecks::Guard
            && offset
                .checked_add(size)
                .is_some_and(|end| end <= GUARD_BYTES);
        let key = HeapKey::Address(memarg.memory, addr);
        let cached = guarded.then(|| self.heap_cache.get(key)).flatten();
        let mut address = match cached {
            Some(address) => address,
            None => {
                let def = self.memory_def(memarg.memory)?;
                let wide = self
                    .b
                    .ins()
                    .uextend(Type::I64, addr)
                    .map_err(|e| self.err(e))?;
                let base = if guarded {
                    self.guard_base(memarg.memory, def)?
                } else {
                    // A call or `memory.grow` may move an explicitly-checked memory:
                    // reloaded at each access.
                    self.explicit_bounds_check(def, wide, offset + size)?;
                    self.b
                        .ins()
                        .load(Type::I64, mutable_field(), def, offsets::MEMORY_BASE)
                        .map_err(|e| self.err(e))?
                };
                let address = self.b.ins().iadd(base, wide).map_err(|e| self.err(e))?;
                if guarded {
                    self.heap_cache.insert(key, address, self.control.len());
                }
                address
            }
        };
        let static_offset = match i32::try_from(offset) {
            Ok(o) => o,
            Err(_) => {
                let o = self
                    .b
                    .ins()
                    .iconst(Type::I64, offset as i64)
                    .map_err(|e| self.err(e))?;
                address = self.b.ins().iadd(address, o).map_err(|e| self.err(e))?;
                0
            }
        };
        Ok((address, static_offset, guarded))
    }

    /// Trap `heap_oob` unless `wide + reach <= size` of the memory at `def`.
    fn explicit_bounds_check(&mut self, def: IrValue, wide: IrValue, reach: u64) -> Res {
        let mem_size = self
            .b
            .ins()
            .load(Type::I64, mutable_field(), def, offsets::MEMORY_SIZE)
            .map_err(|e| self.err(e))?;
        let reach = self
            .b
            .ins()
            .iconst(Type::I64, reach as i64)
            .map_err(|e| self.err(e))?;
        let end = self.b.ins().iadd(wide, reach).map_err(|e| self.err(e))?;
        let oob = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThan, end, mem_size)
            .map_err(|e| self.err(e))?;
        self.b
            .ins()
            .trapnz(oob, HEAP_OOB)
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn load(&mut self, opcode: Opcode, ty: Type, size: u64, memarg: &MemArg) -> Res {
        let addr = self.pop();
        let (address, offset, trap) = self.heap_address(memarg, addr, size)?;
        let data = InstructionData::Load {
            opcode,
            flags: heap_flags(trap),
            arg: address,
            offset,
        };
        let inst = self.b.ins().build(data, ty).map_err(|e| self.err(e))?;
        self.stack.push(self.b.inst_results(inst)[0]);
        Ok(())
    }

    fn store(&mut self, opcode: Opcode, size: u64, memarg: &MemArg) -> Res {
        let value = self.pop();
        let addr = self.pop();
        let (address, offset, trap) = self.heap_address(memarg, addr, size)?;
        let data = InstructionData::Store {
            opcode,
            flags: heap_flags(trap),
            args: [value, address],
            offset,
        };
        self.b
            .ins()
            .build(data, Type::INVALID)
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Translate `op` if it is a load or store; `Ok(false)` if it is not one.
    pub(super) fn translate_memory_access(&mut self, op: &Operator) -> Res<bool> {
        use Opcode as Op;
        use Operator as O;
        use Type as T;
        match op {
            O::I32Load { memarg } => self.load(Op::Load, T::I32, 4, memarg)?,
            O::I64Load { memarg } => self.load(Op::Load, T::I64, 8, memarg)?,
            O::F32Load { memarg } => self.load(Op::Load, T::F32, 4, memarg)?,
            O::F64Load { memarg } => self.load(Op::Load, T::F64, 8, memarg)?,
            O::I32Load8S { memarg } => self.load(Op::Sload8, T::I32, 1, memarg)?,
            O::I32Load8U { memarg } => self.load(Op::Uload8, T::I32, 1, memarg)?,
            O::I32Load16S { memarg } => self.load(Op::Sload16, T::I32, 2, memarg)?,
            O::I32Load16U { memarg } => self.load(Op::Uload16, T::I32, 2, memarg)?,
            O::I64Load8S { memarg } => self.load(Op::Sload8, T::I64, 1, memarg)?,
            O::I64Load8U { memarg } => self.load(Op::Uload8, T::I64, 1, memarg)?,
            O::I64Load16S { memarg } => self.load(Op::Sload16, T::I64, 2, memarg)?,
            O::I64Load16U { memarg } => self.load(Op::Uload16, T::I64, 2, memarg)?,
            O::I64Load32S { memarg } => self.load(Op::Sload32, T::I64, 4, memarg)?,
            O::I64Load32U { memarg } => self.load(Op::Uload32, T::I64, 4, memarg)?,
            O::I32Store { memarg } | O::F32Store { memarg } => self.store(Op::Store, 4, memarg)?,
            O::I64Store { memarg } | O::F64Store { memarg } => self.store(Op::Store, 8, memarg)?,
            O::I32Store8 { memarg } | O::I64Store8 { memarg } => {
                self.store(Op::Istore8, 1, memarg)?
            }
            O::I32Store16 { memarg } | O::I64Store16 { memarg } => {
                self.store(Op::Istore16, 2, memarg)?
            }
            O::I64Store32 { memarg } => self.store(Op::Istore32, 4, memarg)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `memory.size`: the size in bytes over the page size (64 KiB).
    pub(super) fn op_memory_size(&mut self, mem: u32) -> Res {
        let def = self.memory_def(mem)?;
        let size = self
            .b
            .ins()
            .load(Type::I64, mutable_field(), def, offsets::MEMORY_SIZE)
            .map_err(|e| self.err(e))?;
        let sixteen = self
            .b
            .ins()
            .iconst(Type::I64, 16)
            .map_err(|e| self.err(e))?;
        let pages = self.b.ins().ushr(size, sixteen).map_err(|e| self.err(e))?;
        let v = self
            .b
            .ins()
            .ireduce(Type::I32, pages)
            .map_err(|e| self.err(e))?;
        self.stack.push(v);
        Ok(())
    }

    /// `memory.grow`: a call to the runtime.
    pub(super) fn op_memory_grow(&mut self, mem: u32) -> Res {
        let delta = self.pop();
        let mem = self.iconst32(mem)?;
        let old = self.libcall(Libcall::MemoryGrow, &[mem, delta])?[0];
        self.stack.push(old);
        Ok(())
    }

    /// `memory.copy`, `memory.fill`, `memory.init`, `data.drop`: calls to the runtime, which
    /// checks bounds (trap `heap_oob`).
    pub(super) fn translate_bulk_memory(&mut self, op: &Operator) -> Res<bool> {
        let (lc, immediates) = match *op {
            Operator::MemoryCopy { dst_mem, src_mem } => {
                (Libcall::MemoryCopy, vec![dst_mem, src_mem])
            }
            Operator::MemoryFill { mem } => (Libcall::MemoryFill, vec![mem]),
            Operator::MemoryInit { data_index, mem } => {
                (Libcall::MemoryInit, vec![mem, data_index])
            }
            Operator::DataDrop { data_index } => {
                let seg = self.iconst32(data_index)?;
                self.libcall(Libcall::DataDrop, &[seg])?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        let mut args = Vec::with_capacity(5);
        for imm in immediates {
            args.push(self.iconst32(imm)?);
        }
        let operands = self.stack.split_off(self.stack.len() - 3);
        args.extend(operands);
        self.checked_libcall(lc, &args, HEAP_OOB)?;
        Ok(true)
    }

    /// An `i32` constant from an immediate index.
    pub(super) fn iconst32(&mut self, n: u32) -> Res<IrValue> {
        self.b
            .ins()
            .iconst(Type::I32, n as i32 as i64)
            .map_err(|e| self.err(e))
    }
}
