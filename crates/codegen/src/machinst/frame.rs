//! The frame of one function, for every ISA: what the prologue saves and allocates, and
//! where each stack slot, spill slot and call area lies.
//!
//! # Contract
//!
//! Requires the function's VCode and its allocation. [`compute_frame`] reads the ISA's
//! facts through [`Abi`] (what each instruction asks of the frame, the callee-saved
//! registers of each convention, the size of a saved float register) and guarantees:
//!
//! - Every callee-saved register of the function's convention that the allocation writes,
//!   *or that one of its calls may overwrite* (a call's [`MachInst::clobbers`]), is saved:
//!   the function preserves it for its caller whatever its callees do. (A `system_v`
//!   function calling `winch` code saves what that code may destroy.) The exception is
//!   [`FrameOptions::pinned_reg`], which is never saved.
//! - Layout, from the frame pointer down: the saved integer registers at `fp - 8*(i+1)`,
//!   then the saved float registers in slots of [`Abi::FLOAT_SAVE_BYTES`] from the
//!   integer area rounded up to that size, then padding; from `sp` up: the outgoing stack arguments (at least
//!   [`Abi::min_out_area`] of each call's convention), the return area at the next
//!   16 bytes (rounded up to [`Abi::RET_AREA_ALIGN`]), the explicit stack slots (each
//!   at its alignment, at least its natural one up to 16 bytes), the spill slots (8 bytes
//!   each, 8-aligned; 16 bytes each, 16-aligned, in a function with a vector value, so a
//!   128-bit vector spills whole; [`FrameOptions::vector_spill_slots`]). The total below
//!   the frame pointer is a multiple of 16.
//! - A frame is set up (frame pointer saved and set) when anything addresses it: frame
//!   bytes, calls, incoming stack arguments, explicit stack slots, reads of the frame
//!   pointer or return address, or `preserve_frame_pointers`. Otherwise the function runs on
//!   its caller's stack pointer and needs no prologue.
//! - A function of the `tail` convention pops its incoming stack arguments when it returns
//!   ([`Frame::incoming_pop`], a multiple of 16). A tail call in it needs the frame, and an
//!   outgoing area of at least its header and the callee's stack arguments when either
//!   function has stack arguments ([`FrameUse::TailCall`]).
//! - A stack-limit check (planned at lowering) covers what the function takes below the
//!   frame pointer plus 16 bytes for a callee's saved pair when it calls; a function that
//!   takes nothing there is not checked. Stack probes are asked for when the frame is at
//!   least one probe interval large.
//!
//! Cost: one pass over the instructions, the allocations, the edits and the stack slots
//! (linear in the function; whether a vector value exists comes from the type check that
//! starts each compile); the saved-register list is inline (no allocation), the slot
//! offsets one vector.

use kestrel_ir::{CallConv, Function};
use kestrel_regalloc::{Allocation, Output, PReg, PRegSet, RegClass};
use smallvec::SmallVec;

use super::abi::{self, Abi};
use super::stack_limit::StackLimitSteps;
use super::vcode::VCode;
use super::MachInst;

/// What one instruction asks of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUse {
    /// Nothing.
    None,
    /// A store into the outgoing stack-argument area, ending this many bytes above `sp`.
    OutgoingArg { end: u32 },
    /// The address of an outgoing return area of this many bytes.
    RetArea { size: u32 },
    /// A call of a function of this convention.
    Call(CallConv),
    /// A read of the frame pointer or of the return address, which needs the frame.
    FrameRead,
    /// A tail call whose callee takes this many bytes of stack arguments.
    TailCall { stack_bytes: u32 },
}

/// A callee-saved register the prologue saves, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SavedReg {
    /// The register.
    pub reg: PReg,
    /// Its save slot's offset from the frame pointer (negative).
    pub offset: i32,
}

/// The most callee-saved registers any convention has (AArch64: 10 integer, 8 float).
const MAX_SAVED: usize = 18;

/// The frame of one function (see the module contract).
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Whether the prologue saves the frame pointer and sets it up. False only when nothing
    /// addresses the frame; then the body runs on the caller's `sp` and a bare return is
    /// the epilogue.
    pub setup: bool,
    /// Bytes the prologue subtracts from `sp` after setting up the frame pointer (a
    /// multiple of 16; the save area included).
    pub size: u32,
    /// `stack_limit`: how to compute the limit, and the bytes the function takes below
    /// the frame pointer; checked in the prologue before `sp` moves.
    pub stack_check: Option<(StackLimitSteps, u32)>,
    /// Stack probes: the probe interval, when the frame is at least that large; run in the
    /// prologue before `sp` moves.
    pub probe_interval: Option<u32>,
    /// Callee-saved registers to save, integers first, in save order.
    pub saved: SmallVec<[SavedReg; MAX_SAVED]>,
    /// Offset of spill slot 0 from `sp`.
    pub spill_base: i32,
    /// Bytes of each spill slot: 8, or 16 in a function with a vector value.
    pub spill_slot_bytes: u32,
    /// Offset of each explicit stack slot from `sp`.
    pub slot_offsets: Vec<i32>,
    /// Offset of the outgoing return area from `sp` (above the outgoing arguments).
    pub ret_area_base: i32,
    /// Bytes of incoming stack arguments the function pops when it returns (`tail`
    /// convention; 0 for every other).
    pub incoming_pop: u32,
}

impl Frame {
    /// The offset from `sp` of the spill slot `alloc` names, or `None` for a register.
    pub fn spill_offset(&self, alloc: Allocation) -> Option<i32> {
        match alloc {
            Allocation::Stack(s) => Some(self.spill_base + (self.spill_slot_bytes * s.0) as i32),
            Allocation::Reg(_) => None,
        }
    }

    /// The offset from `sp` of explicit stack slot `slot`.
    pub fn slot_offset(&self, slot: u32) -> i32 {
        self.slot_offsets[slot as usize]
    }
}

/// Layout options of one compilation.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameOptions {
    /// A frame even where nothing needs one.
    pub preserve_frame_pointers: bool,
    /// Probe the frame every this many bytes when it is at least that large.
    pub probe_interval: Option<u32>,
    /// Some value of the function has a vector type, so spill slots are 16 bytes.
    pub vector_spill_slots: bool,
    /// The pinned register (`enable_pinned_reg`): a global of the program, never saved.
    pub pinned_reg: Option<PReg>,
}

/// The frame for `f` given its allocation `ra` (see the module contract).
pub fn compute_frame<A: Abi>(
    f: &Function,
    vcode: &VCode<A::Inst>,
    ra: &Output,
    options: FrameOptions,
) -> Frame {
    // Outgoing stack arguments, then the return area, live at the bottom of the frame, each
    // shared by all calls.
    let (mut out_args, mut ret_area) = (0u32, 0u32);
    let mut clobbered_by_calls = PRegSet::empty();
    let mut has_calls = false;
    let mut needs_fp = options.preserve_frame_pointers || abi::has_stack_params::<A>(&f.signature);
    let incoming_pop = abi::tail_stack_bytes::<A>(&f.signature);
    for inst in vcode.insts() {
        match A::frame_use(inst) {
            FrameUse::None => {}
            FrameUse::OutgoingArg { end } => out_args = out_args.max(end),
            FrameUse::RetArea { size } => ret_area = ret_area.max(size),
            FrameUse::Call(conv) => {
                has_calls = true;
                needs_fp = true;
                out_args = out_args.max(A::min_out_area(conv));
                // What the callee may overwrite counts as written here: this function must
                // still preserve its own callee-saved registers for its caller.
                clobbered_by_calls = clobbered_by_calls.union(inst.clobbers());
            }
            FrameUse::FrameRead => needs_fp = true,
            FrameUse::TailCall { stack_bytes } => {
                // The sequence restores the frame pointer it set up, so it needs one; it
                // moves the header and the arguments through the outgoing area.
                needs_fp = true;
                if stack_bytes > 0 || incoming_pop > 0 {
                    out_args = out_args.max(abi::TAIL_CALL_HEADER + stack_bytes);
                }
            }
        }
    }
    let ret_area_base = out_args.next_multiple_of(16);
    let ret_area_end = ret_area_base + ret_area.next_multiple_of(A::RET_AREA_ALIGN);
    // Registers the code writes, and the spill slots it touches: the allocator may count
    // slots it reserved but never used, which must not grow the frame. (A flag per register
    // index: one store per allocation.)
    let mut written = [false; 128];
    let mut spill_slots = 0u32;
    let mut note = |a: Allocation| match a {
        Allocation::Reg(r) => written[r.index()] = true,
        Allocation::Stack(s) => spill_slots = spill_slots.max(s.0 + 1),
    };
    ra.allocs.iter().copied().for_each(&mut note);
    for (_, e) in &ra.edits {
        note(e.from);
        note(e.to);
    }
    debug_assert!(spill_slots as usize <= ra.num_spillslots);
    // The pinned register is not allocated, so only calls clobber it here; it is not saved
    // either, so that a `set_pinned_reg` in this function or its callees outlives it.
    let (saved, save_area) = save_slots::<A>(f.signature.call_conv, |r| {
        (written[r.index()] || clobbered_by_calls.contains(r)) && Some(r) != options.pinned_reg
    });
    let mut slot_offsets = Vec::with_capacity(f.stack_slots.len());
    let mut off = ret_area_end;
    for (_, slot) in f.stack_slots.iter() {
        // At least the natural alignment of a slot up to 16 bytes (for 16-byte atomics).
        let natural = slot.size.next_power_of_two().min(16);
        let align = (1u32 << slot.align_shift.min(4)).max(natural);
        off = off.next_multiple_of(align.max(1));
        slot_offsets.push(off as i32);
        off += slot.size;
    }
    let spill_slot_bytes = if options.vector_spill_slots { 16 } else { 8 };
    let spill_base = off.next_multiple_of(spill_slot_bytes);
    let body = spill_base + spill_slot_bytes * spill_slots;
    let size = (body + save_area).next_multiple_of(16);
    // Saved registers make `size` non-zero, so they need no term of their own.
    let setup = needs_fp || size > 0 || !f.stack_slots.is_empty();
    // (`gen_args` planned the limit's computation, or reported why it cannot be.)
    let below = size + if has_calls { 16 } else { 0 };
    let stack_check = match vcode.stack_limit() {
        Some(steps) if setup && below > 0 => Some((steps.clone(), below)),
        _ => None,
    };
    Frame {
        setup,
        size,
        stack_check,
        probe_interval: options.probe_interval.filter(|&p| setup && size >= p),
        saved,
        spill_base: spill_base as i32,
        spill_slot_bytes,
        slot_offsets,
        ret_area_base: ret_area_base as i32,
        incoming_pop,
    }
}

/// The callee-saved registers of `cc` for which `used` holds, with their save slots, and
/// the bytes of the save area: the integer registers 8 bytes each below the frame pointer,
/// then, from the integer area rounded up to [`Abi::FLOAT_SAVE_BYTES`] (whether or not
/// a float register is saved), the float ones in slots of that size.
fn save_slots<A: Abi>(
    cc: CallConv,
    used: impl Fn(PReg) -> bool,
) -> (SmallVec<[SavedReg; MAX_SAVED]>, u32) {
    let regs = A::callee_saved(cc);
    let mut saved = SmallVec::new();
    let mut depth = 0u32;
    for &reg in regs
        .iter()
        .filter(|r| r.class() == RegClass::Int && used(**r))
    {
        depth += 8;
        saved.push(SavedReg {
            reg,
            offset: -(depth as i32),
        });
    }
    depth = depth.next_multiple_of(A::FLOAT_SAVE_BYTES);
    for &reg in regs
        .iter()
        .filter(|r| r.class() == RegClass::Float && used(**r))
    {
        depth += A::FLOAT_SAVE_BYTES;
        saved.push(SavedReg {
            reg,
            offset: -(depth as i32),
        });
    }
    (saved, depth)
}

#[cfg(test)]
mod tests {
    use crate::settings::Flags;

    /// A probe interval (`probestack_size_log2`) outside what the prologues can step by is
    /// an error naming the setting, on every ISA.
    #[test]
    fn probe_intervals_beyond_the_range_are_errors() {
        let f = &kestrel_ir::parse_functions("function %f() {\nblock0:\n    return\n}\n", "f.clif")
            .unwrap()[0];
        for log2 in [3, 24, u8::MAX] {
            let flags = Flags {
                probestack_size_log2: Some(log2),
                ..Flags::default()
            };
            for name in crate::isa::names() {
                let isa = crate::isa::lookup(name).unwrap().finish();
                let err = isa.compile_function(f, &flags).unwrap_err();
                assert!(
                    err.to_string().contains("probestack_size_log2"),
                    "{name}: {err}"
                );
            }
        }
    }
}
