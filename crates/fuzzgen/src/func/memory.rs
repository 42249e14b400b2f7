//! Stack memory: explicit slots, their initialization (rule slot-init), and in-bounds
//! accesses — `stack_load`/`stack_store`, `load`/`store` and the narrow forms through
//! `stack_addr` or an address computed from it with a masked data index, and atomics on
//! naturally aligned addresses (rules mem-in-bounds, addr-opaque).

use kestrel_ir::{AtomicRmwOp, InstructionData as D, MemFlags, Opcode, StackSlot, StackSlotData};
use kestrel_ir::{Type, Value};

use super::{FuncGen, OrBug};
use crate::draw::Draw;

/// A slot and what is known of it.
pub(crate) struct SlotInfo {
    slot: StackSlot,
    size: u32,
    /// The guaranteed alignment in bytes (the declared one).
    align: u32,
}

impl FuncGen<'_, '_> {
    /// Create 0–3 slots of 8–64 bytes; the first is usually 8- or 16-byte aligned.
    pub(super) fn make_slots(&mut self) {
        let n = match self.u.below(10) {
            0 => 0,
            1..=5 => 1,
            6..=8 => 2,
            _ => 3,
        };
        for i in 0..n {
            let size = 8 * self.u.range(1, 8) as u32;
            let align_shift = if i == 0 && !self.u.chance(15) {
                self.u.range(3, 4) as u8
            } else if self.u.chance(50) {
                self.u.range(0, 4) as u8
            } else {
                0
            };
            let slot = self
                .b
                .create_stack_slot(StackSlotData { size, align_shift });
            self.slots.push(SlotInfo {
                slot,
                size,
                align: 1 << align_shift,
            });
        }
    }

    /// Rule slot-init: store every 8-byte chunk of every slot in the entry block.
    pub(super) fn init_slots(&mut self) {
        let via_stack_store = self.ok(Opcode::StackStore, Type::I64);
        let via_store = self.ok(Opcode::Store, Type::I64) && self.ok(Opcode::StackAddr, Type::I64);
        if !self.ctx.is_usable(Type::I64) || !(via_stack_store || via_store) {
            self.slots.clear();
            return;
        }
        for i in 0..self.slots.len() {
            let (slot, size) = (self.slots[i].slot, self.slots[i].size);
            for off in (0..size as i32).step_by(8) {
                let ty = if self.u.chance(30) && self.ok(Opcode::StackStore, Type::F64) {
                    Type::F64
                } else {
                    Type::I64
                };
                let v = self.get(ty);
                if via_stack_store && (ty == Type::F64 || !via_store || self.u.chance(70)) {
                    self.b.ins().stack_store(v, slot, off).bug();
                } else {
                    let a = self.b.ins().stack_addr(Type::I64, slot, 0).bug();
                    let mut flags = MemFlags::trusted();
                    flags.aligned = self.cfg.aligned_flags;
                    self.b.ins().store(flags, v, a, off).bug();
                }
            }
        }
    }

    pub(super) fn memory_op(&mut self) {
        match self.u.below(10) {
            0..=2 => self.stack_access(),
            3..=6 => self.addr_access(),
            _ => self.atomic_access(),
        };
    }

    /// A slot that can hold `bytes` at an offset multiple of `align` (when `align > 0`, the
    /// slot must also guarantee that alignment).
    fn pick_slot(&mut self, bytes: u32, need_align: u32) -> Option<usize> {
        let n = self.slots.len();
        let start = self.u.below(n);
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| self.slots[i].size >= bytes && self.slots[i].align >= need_align)
    }

    /// An in-bounds offset for `bytes` in slot `i`; a multiple of `bytes` when `aligned`.
    fn pick_offset(&mut self, i: usize, bytes: u32, aligned: bool) -> i32 {
        let size = self.slots[i].size;
        let off = if aligned {
            bytes * self.u.below(((size - bytes) / bytes + 1) as usize) as u32
        } else {
            self.u.below((size - bytes + 1) as usize) as u32
        };
        off as i32
    }

    fn stack_access(&mut self) -> bool {
        let store = self.u.chance(50);
        let op = if store {
            Opcode::StackStore
        } else {
            Opcode::StackLoad
        };
        let Some(ty) = self.pick_type(self.ctx.types(op)) else {
            return false;
        };
        let Some(i) = self.pick_slot(ty.bytes(), 0) else {
            return false;
        };
        let aligned = self.u.chance(50);
        let off = self.pick_offset(i, ty.bytes(), aligned);
        let slot = self.slots[i].slot;
        if store {
            let v = self.get(ty);
            self.b.ins().stack_store(v, slot, off).bug();
        } else {
            let v = self.b.ins().stack_load(ty, slot, off).bug();
            self.put(v);
        }
        true
    }

    /// `load`/`store` and the extending/truncating forms, through `stack_addr`.
    fn addr_access(&mut self) -> bool {
        use Opcode::*;
        const OPS: [(Opcode, u32); 11] = [
            (Load, 0),
            (Store, 0),
            (Uload8, 1),
            (Sload8, 1),
            (Istore8, 1),
            (Uload16, 2),
            (Sload16, 2),
            (Istore16, 2),
            (Uload32, 4),
            (Sload32, 4),
            (Istore32, 4),
        ];
        if !self.ok(StackAddr, Type::I64) {
            return false;
        }
        let (op, narrow) = self.u.pick(&OPS[..]);
        let Some(ty) = self.pick_type(self.ctx.types(op)) else {
            return false;
        };
        let bytes = if narrow == 0 { ty.bytes() } else { narrow };
        let Some(i) = self.pick_slot(bytes, 0) else {
            return false;
        };
        let want_aligned = self.u.chance(50);
        let off = self.pick_offset(i, bytes, want_aligned);
        let SlotInfo { slot, size, align } = self.slots[i];
        let mut flags = MemFlags::new();
        if self.u.chance(50) {
            flags.trap_code = None;
        }
        // Truly aligned only if the slot guarantees it and the offset keeps it.
        flags.aligned = self.cfg.aligned_flags
            && align >= bytes
            && off as u32 % bytes == 0
            && self.u.chance(70);
        let indexed = if self.u.chance(25) {
            self.indexed_addr(i, bytes)
        } else {
            None
        };
        let (addr, offset) = if let Some(at) = indexed {
            flags.aligned = false; // the index moves the access by any multiple of its scale
            at
        } else {
            // Split the offset between `stack_addr` and the access (possibly negative).
            let base_limit = if self.cfg.negative_offsets {
                size as usize
            } else {
                off as usize
            };
            let base = self.u.below(base_limit + 1) as i32;
            let addr = self.b.ins().stack_addr(Type::I64, slot, base).bug();
            (addr, off - base)
        };
        if matches!(op, Store | Istore8 | Istore16 | Istore32) {
            let v = self.get(ty);
            let data = D::Store {
                opcode: op,
                flags,
                args: [v, addr],
                offset,
            };
            self.emit(data, Type::INVALID);
        } else {
            let data = D::Load {
                opcode: op,
                flags,
                arg: addr,
                offset,
            };
            let v = self.emit1(data, ty);
            self.put(v);
        }
        true
    }

    /// An address computed as a front end does, `stack_addr(slot, b) + index · scale (+ c)`,
    /// with the access's offset: the index is a data value masked to keep every access of
    /// `bytes` inside slot `i` (rule mem-in-bounds; data flows into the address, never back,
    /// rule addr-opaque), scaled by a shift of 0 to 3 or a multiply by 3, 5 or 9, an `i32`
    /// one zero-extended first. This is the arithmetic the backends fold into addressing
    /// modes. `None` when the slot has no room for an index or an opcode is not in use.
    fn indexed_addr(&mut self, i: usize, bytes: u32) -> Option<(Value, i32)> {
        use Opcode::*;
        let SlotInfo { slot, size, .. } = self.slots[i];
        let room = size.checked_sub(bytes)?; // the highest offset an access may start at
        let (scale, shift) = match self.u.below(7) {
            k @ 0..=3 => (1u32 << k, Some(k as i64)),
            4 => (3, None),
            5 => (5, None),
            _ => (9, None),
        };
        // The largest `2^j - 1` whose scaled value fits: `n + 1` rounded down to a power
        // of two, less one.
        let mask = match room / scale {
            0 => return None,
            n => (1u32 << (31 - (n + 1).leading_zeros())) - 1,
        };
        let wide = self.u.chance(50);
        let ity = if wide { Type::I64 } else { Type::I32 };
        let ops = [
            (Band, ity),
            (Iadd, Type::I64),
            (if shift.is_some() { Ishl } else { Imul }, Type::I64),
            (if wide { Iadd } else { Uextend }, Type::I64),
        ];
        if !self.ctx.is_usable(ity) || ops.iter().any(|&(op, ty)| !self.ok(op, ty)) {
            return None;
        }
        let x = self.get(ity);
        let m = self.b.ins().iconst(ity, i64::from(mask)).bug();
        let mut index = self.b.ins().band(x, m).bug();
        if !wide {
            index = self.b.ins().uextend(Type::I64, index).bug();
        }
        let k = self
            .b
            .ins()
            .iconst(Type::I64, shift.unwrap_or(i64::from(scale)))
            .bug();
        let scaled = if shift.is_some() {
            self.b.ins().ishl(index, k).bug()
        } else {
            self.b.ins().imul(index, k).bug()
        };
        // The lowest offset the access reaches, split between `stack_addr`, an added
        // constant and the access's own offset.
        let lowest = self.u.below((room - mask * scale) as usize + 1) as i32;
        let base = self.u.below(lowest as usize + 1) as i32;
        let added = self.u.below((lowest - base) as usize + 1) as i32;
        let start = self.b.ins().stack_addr(Type::I64, slot, base).bug();
        let mut addr = if self.u.chance(50) {
            self.b.ins().iadd(start, scaled).bug()
        } else {
            self.b.ins().iadd(scaled, start).bug()
        };
        if added > 0 || self.u.chance(20) {
            let c = self.b.ins().iconst(Type::I64, i64::from(added)).bug();
            addr = self.b.ins().iadd(addr, c).bug();
        }
        Some((addr, lowest - base - added))
    }

    /// Atomics on a naturally aligned, in-bounds address.
    fn atomic_access(&mut self) -> bool {
        use Opcode::*;
        if !self.ok(StackAddr, Type::I64) {
            return false;
        }
        let op = self
            .u
            .pick(&[AtomicLoad, AtomicStore, AtomicRmw, AtomicRmw, AtomicCas][..]);
        // i128 atomics are rare.
        let mask = if self.u.chance(8) { 0x1f } else { 0x0f };
        let Some(ty) = self.pick_type(self.ctx.types(op) & mask) else {
            return false;
        };
        let bytes = ty.bytes();
        let Some(i) = self.pick_slot(bytes, bytes) else {
            return false;
        };
        let off = self.pick_offset(i, bytes, true);
        let slot = self.slots[i].slot;
        let mut flags = MemFlags::new();
        if self.u.chance(50) {
            flags.trap_code = None;
            flags.aligned = self.cfg.aligned_flags && self.u.chance(60);
        }
        let addr = self.b.ins().stack_addr(Type::I64, slot, off).bug();
        match op {
            AtomicLoad => {
                let v = self.atomic_load(flags, addr, ty);
                self.put(v);
            }
            AtomicStore => {
                let v = self.get(ty);
                let data = D::StoreNoOffset {
                    opcode: op,
                    flags,
                    args: [v, addr],
                };
                self.emit(data, Type::INVALID);
            }
            AtomicRmw => {
                let rmw = self.u.pick(AtomicRmwOp::ALL);
                let v = self.get(ty);
                let data = D::AtomicRmw {
                    opcode: op,
                    flags,
                    op: rmw,
                    args: [addr, v],
                };
                let r = self.emit1(data, Type::INVALID);
                self.put(r);
            }
            _ => {
                // Expect the current contents half of the time, so the swap happens.
                let expected = if self.u.chance(50) && self.ok(AtomicLoad, ty) {
                    self.atomic_load(flags, addr, ty)
                } else {
                    self.get(ty)
                };
                let new = self.get(ty);
                let data = D::AtomicCas {
                    opcode: op,
                    flags,
                    args: [addr, expected, new],
                };
                let r = self.emit1(data, Type::INVALID);
                self.put(r);
            }
        }
        true
    }

    fn atomic_load(&mut self, flags: MemFlags, addr: Value, ty: Type) -> Value {
        let data = D::LoadNoOffset {
            opcode: Opcode::AtomicLoad,
            flags,
            arg: addr,
        };
        self.emit1(data, ty)
    }
}
