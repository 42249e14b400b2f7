//! The host-to-JIT trampoline: one hand-written routine per host ISA (`arch/x64_trampoline.rs`,
//! `arch/aarch64_trampoline.rs`) that can call any signature the [`abi`](crate::abi) module
//! classifies, and the landing point a caught trap resumes at.
//!
//! Protocol, shared with the signal handler (`traps::handler`):
//! 1. [`invoke`] fills a [`CallCtx`] (target, register images, stack slots), publishes it as
//!    this thread's current call in [`CURRENT`], and calls `kestrel_jit_trampoline(ctx)`.
//! 2. The trampoline saves the callee-saved registers in its own frame, records its stack
//!    and frame pointers in the context, copies the stack arguments below a 16-byte aligned
//!    `sp`, loads the argument registers and calls the target (keeping the context pointer
//!    in its frame: a `winch` target preserves no register but the frame and stack
//!    pointers). On a normal return it stores the result registers in the context and
//!    returns 0. Results beyond those registers are in the return area `invoke` allocated
//!    and passed where the plan says (see [`abi`]).
//! 3. If the target faults at a registered trap site, the handler writes the trap into the
//!    context and edits the interrupted register state: the PC = `kestrel_jit_trap_landing`,
//!    the stack and frame pointers = the values saved in step 2. Returning from the handler
//!    resumes there; the landing restores the callee-saved registers from the trampoline
//!    frame and returns 1 from `kestrel_jit_trampoline`, as if the call had returned.
//!
//! Frames between the trampoline and the fault (JIT frames, and any host frames of a host
//! function that called JIT code directly) are discarded without running destructors.

use std::cell::Cell;
use std::ptr;

use kestrel_ir::TrapCode;

use crate::abi::{self, AreaPtr, ArgLoc, CallPlan, RetLoc};
use crate::value::Value;

/// The block the trampoline and the signal handler share; offsets are baked into the assembly.
#[repr(C)]
pub(crate) struct CallCtx {
    /// Address to call.
    pub target: usize,
    /// The integer argument registers, in the host's argument order.
    pub gprs: [u64; abi::ARG_GPRS],
    /// Low 64 bits of the first float argument registers.
    pub fprs: [u64; abi::ARG_FPRS],
    /// The dedicated indirect-result register's value (AArch64's x8; unused on x86-64).
    pub indirect: u64,
    /// Stack argument slots, copied to `[sp]` upwards at the call.
    pub stack: *const u64,
    pub stack_len: usize,
    /// The integer result registers after the call.
    pub ret_gprs: [u64; abi::RET_GPRS],
    /// Low 64 bits of the float result registers after the call.
    pub ret_fprs: [u64; abi::RET_FPRS],
    /// The trampoline's stack and frame pointers after its prologue: where a trap resumes.
    pub saved_sp: u64,
    pub saved_fp: u64,
    /// Written by the signal handler when it catches a trap.
    pub trap_code: Option<TrapCode>,
    pub trap_func: u32,
    pub trap_offset: u32,
    pub trap_srcloc: u32,
}

thread_local! {
    /// The innermost active trampoline call of this thread, or null.
    ///
    /// Const-initialised and without a destructor, so reading it is a plain TLS load with no
    /// lazy registration: safe to do from the signal handler.
    pub(crate) static CURRENT: Cell<*mut CallCtx> = const { Cell::new(ptr::null_mut()) };
}

extern "C" {
    /// Calls `ctx.target` as described in the module doc; 0 = returned, 1 = trapped.
    /// (`ctx` is a `*mut CallCtx`, passed untyped: the assembly only uses the offsets.)
    fn kestrel_jit_trampoline(ctx: *mut core::ffi::c_void) -> u32;
    /// Not callable: only its address is used, as a resume point.
    fn kestrel_jit_trap_landing();
}

/// Where the signal handler resumes a caught trap.
pub(crate) fn landing_address() -> usize {
    kestrel_jit_trap_landing as *const () as usize
}

/// A trap as the handler recorded it: (code, function index, offset in the function, source
/// location of the trapping instruction or 0).
pub(crate) type RawTrap = (TrapCode, u32, u32, u32);

/// One 16-byte, 16-byte aligned piece of the return area the host provides.
#[repr(C, align(16))]
#[derive(Copy, Clone, Default)]
struct AreaChunk([u64; 2]);

/// Call `target` with `args` laid out by `plan`; return the results' bits in `plan.rets`
/// order, or the trap the handler caught.
///
/// If the plan has a return area, it is allocated here (16-byte aligned, zeroed, rounded up
/// to 16 bytes), its address passed where `plan.area_ptr` says, and the results placed in it are read back from
/// it after the call by their offsets.
///
/// # Safety
/// `target` must be executable code implementing the signature `plan` was built from, and
/// `args` must match it in number and type (the caller checks). Trap handling must be set up
/// for this thread (`traps::prepare_thread`).
pub(crate) unsafe fn invoke(
    target: usize,
    plan: &CallPlan,
    args: &[Value],
) -> Result<Vec<u128>, RawTrap> {
    debug_assert_eq!(plan.args.len(), args.len());
    let mut stack = vec![0u64; plan.stack_slots];
    let mut area = vec![AreaChunk::default(); plan.ret_area.div_ceil(16)];
    let mut ctx = CallCtx {
        target,
        gprs: [0; abi::ARG_GPRS],
        fprs: [0; abi::ARG_FPRS],
        indirect: 0,
        stack: ptr::null(),
        stack_len: stack.len(),
        ret_gprs: [0; abi::RET_GPRS],
        ret_fprs: [0; abi::RET_FPRS],
        saved_sp: 0,
        saved_fp: 0,
        trap_code: None,
        trap_func: 0,
        trap_offset: 0,
        trap_srcloc: 0,
    };
    for ((ty, ext, locs), value) in plan.args.iter().zip(args) {
        debug_assert_eq!(*ty, value.ty());
        let bits = value.to_bits();
        // One part: the (widened) value; two parts (`i128`): low half, then high half.
        let words = match locs.len() {
            1 => [abi::widen(*ty, *ext, bits), 0],
            _ => [bits as u64, (bits >> 64) as u64],
        };
        for (&loc, word) in locs.iter().zip(words) {
            match loc {
                ArgLoc::Gpr(i) => ctx.gprs[i] = word,
                ArgLoc::Fpr(i) => ctx.fprs[i] = word,
                ArgLoc::Stack(i) => stack[i] = word,
            }
        }
    }
    ctx.stack = stack.as_ptr();
    if plan.ret_area > 0 {
        // The hidden return-area pointer (classify checked no argument uses its register).
        let area_ptr = area.as_mut_ptr() as u64;
        match plan.area_ptr {
            AreaPtr::Gpr(i) => ctx.gprs[i] = area_ptr,
            AreaPtr::Indirect => ctx.indirect = area_ptr,
        }
    }

    let ctx_ptr: *mut CallCtx = &mut ctx;
    let outer = CURRENT.replace(ctx_ptr);
    // SAFETY: the caller guarantees `target` implements the signature whose argument
    // registers and stack slots `ctx` now holds; `ctx` and `stack` outlive the call. The
    // return area, if any, is `plan.ret_area` bytes (rounded up) of 16-byte aligned memory
    // owned by `area`, which outlives the call and is not otherwise accessed during it, so
    // the callee's stores inside `[0, plan.ret_area)` land inside it. The
    // handler writes to `*ctx_ptr` only while this call is active (it is `CURRENT`).
    let trapped = unsafe { kestrel_jit_trampoline(ctx_ptr.cast()) };
    CURRENT.set(outer);

    if trapped != 0 {
        let code = ctx
            .trap_code
            .expect("the handler records a code before resuming");
        return Err((code, ctx.trap_func, ctx.trap_offset, ctx.trap_srcloc));
    }
    let area_bytes: Vec<u8> = area
        .iter()
        .flat_map(|c| c.0.iter().flat_map(|w| w.to_le_bytes()))
        .collect();
    // A part in the area is read at its type's width (winch packs parts unaligned).
    let part = |loc: RetLoc, width: usize| match loc {
        RetLoc::Gpr(i) => ctx.ret_gprs[i],
        RetLoc::Fpr(i) => ctx.ret_fprs[i],
        RetLoc::Area(off) => {
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(&area_bytes[off..off + width]);
            u64::from_le_bytes(word)
        }
    };
    let results = plan
        .rets
        .iter()
        .map(|&(ty, ref locs)| {
            locs.iter().enumerate().fold(0u128, |acc, (i, &loc)| {
                acc | (part(loc, abi::part_bytes(ty)) as u128) << (64 * i)
            })
        })
        .collect();
    Ok(results)
}
