//! The host-to-JIT trampoline: one hand-written routine that can call any System V signature
//! the [`abi`](crate::abi) module classifies, and the landing point a caught trap resumes at.
//!
//! Protocol, shared with the signal handler (`traps::handler`):
//! 1. [`invoke`] fills a [`CallCtx`] (target, register images, stack slots), publishes it as
//!    this thread's current call in [`CURRENT`], and calls `kestrel_jit_trampoline(ctx)`.
//! 2. The trampoline saves the callee-saved registers in its own frame, records its `rsp` and
//!    `rbp` in the context, copies the stack arguments below a 16-byte aligned `rsp`, loads the
//!    argument registers and calls the target (keeping the context pointer in its frame: a
//!    `winch` target preserves no register but rbp and rsp). On a normal return it stores rax, rdx, xmm0 and
//!    xmm1 in the context and returns 0. Results beyond those registers are in the return
//!    area `invoke` allocated and passed in rdi (see [`abi`]).
//! 3. If the target faults at a registered trap site, the handler writes the trap into the
//!    context and edits the interrupted register state: `rip` = `kestrel_jit_trap_landing`,
//!    `rsp`/`rbp` = the values saved in step 2. Returning from the handler resumes there; the
//!    landing restores the callee-saved registers from the trampoline frame and returns 1 from
//!    `kestrel_jit_trampoline`, as if the call had returned.
//!
//! Frames between the trampoline and the fault (JIT frames, and any host frames of a host
//! function that called JIT code directly) are discarded without running destructors.

use std::cell::Cell;
use std::mem::offset_of;
use std::ptr;

use kestrel_ir::TrapCode;

use crate::abi::{self, ArgLoc, CallPlan, RetLoc};
use crate::value::Value;

/// The block the trampoline and the signal handler share; offsets are baked into the assembly.
#[repr(C)]
pub(crate) struct CallCtx {
    /// Address to call.
    pub target: usize,
    /// rdi, rsi, rdx, rcx, r8, r9.
    pub gprs: [u64; abi::ARG_GPRS],
    /// Low 64 bits of xmm0–xmm7.
    pub xmms: [u64; abi::ARG_XMMS],
    /// Stack argument slots, copied to `[rsp]` upwards at the call.
    pub stack: *const u64,
    pub stack_len: usize,
    /// rax, rdx after the call.
    pub ret_gprs: [u64; 2],
    /// Low 64 bits of xmm0, xmm1 after the call.
    pub ret_xmms: [u64; 2],
    /// The trampoline's `rsp` and `rbp` after its prologue: where a trap resumes.
    pub saved_rsp: u64,
    pub saved_rbp: u64,
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

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl kestrel_jit_trampoline",
    ".hidden kestrel_jit_trampoline",
    ".type kestrel_jit_trampoline, @function",
    "kestrel_jit_trampoline:",
    ".cfi_startproc",
    "push rbp",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset rbp, -16",
    "mov rbp, rsp",
    ".cfi_def_cfa_register rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    ".cfi_offset rbx, -24",
    ".cfi_offset r12, -32",
    ".cfi_offset r13, -40",
    ".cfi_offset r14, -48",
    ".cfi_offset r15, -56",
    // Entry rsp was 8 mod 16; after six pushes and this it is 0 mod 16. The slot keeps the
    // context pointer across the call (a winch callee may overwrite r12; rbp survives).
    "sub rsp, 8",
    "mov [rbp - 48], rdi",
    "mov r12, rdi",
    "mov [r12 + {saved_rsp}], rsp",
    "mov [r12 + {saved_rbp}], rbp",
    // Reserve the stack argument area, rounded up to 16 bytes, and copy the slots into it.
    "mov rcx, [r12 + {stack_len}]",
    "mov rsi, [r12 + {stack}]",
    "lea rax, [rcx * 8 + 15]",
    "and rax, -16",
    "sub rsp, rax",
    "xor eax, eax",
    "2:",
    "cmp rax, rcx",
    "jae 3f",
    "mov rdx, [rsi + rax * 8]",
    "mov [rsp + rax * 8], rdx",
    "inc rax",
    "jmp 2b",
    "3:",
    "movq xmm0, qword ptr [r12 + {xmms}]",
    "movq xmm1, qword ptr [r12 + {xmms} + 8]",
    "movq xmm2, qword ptr [r12 + {xmms} + 16]",
    "movq xmm3, qword ptr [r12 + {xmms} + 24]",
    "movq xmm4, qword ptr [r12 + {xmms} + 32]",
    "movq xmm5, qword ptr [r12 + {xmms} + 40]",
    "movq xmm6, qword ptr [r12 + {xmms} + 48]",
    "movq xmm7, qword ptr [r12 + {xmms} + 56]",
    "mov rdi, [r12 + {gprs}]",
    "mov rsi, [r12 + {gprs} + 8]",
    "mov rdx, [r12 + {gprs} + 16]",
    "mov rcx, [r12 + {gprs} + 24]",
    "mov r8, [r12 + {gprs} + 32]",
    "mov r9, [r12 + {gprs} + 40]",
    "call qword ptr [r12 + {target}]",
    "mov r12, [rbp - 48]",
    "mov [r12 + {ret_gprs}], rax",
    "mov [r12 + {ret_gprs} + 8], rdx",
    "movq qword ptr [r12 + {ret_xmms}], xmm0",
    "movq qword ptr [r12 + {ret_xmms} + 8], xmm1",
    "xor eax, eax",
    "lea rsp, [rbp - 40]",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    ".cfi_def_cfa rsp, 8",
    "ret",
    ".cfi_endproc",
    ".size kestrel_jit_trampoline, . - kestrel_jit_trampoline",
    "",
    // Entered only from the signal handler's edited context, with rbp = the trampoline's
    // frame pointer; returns 1 ("trapped") from kestrel_jit_trampoline.
    ".p2align 4",
    ".globl kestrel_jit_trap_landing",
    ".hidden kestrel_jit_trap_landing",
    ".type kestrel_jit_trap_landing, @function",
    "kestrel_jit_trap_landing:",
    "mov eax, 1",
    "lea rsp, [rbp - 40]",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".size kestrel_jit_trap_landing, . - kestrel_jit_trap_landing",
    target = const offset_of!(CallCtx, target),
    gprs = const offset_of!(CallCtx, gprs),
    xmms = const offset_of!(CallCtx, xmms),
    stack = const offset_of!(CallCtx, stack),
    stack_len = const offset_of!(CallCtx, stack_len),
    ret_gprs = const offset_of!(CallCtx, ret_gprs),
    ret_xmms = const offset_of!(CallCtx, ret_xmms),
    saved_rsp = const offset_of!(CallCtx, saved_rsp),
    saved_rbp = const offset_of!(CallCtx, saved_rbp),
);

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
/// to 16 bytes), its address passed in rdi, and the results placed in it are read back from
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
        xmms: [0; abi::ARG_XMMS],
        stack: ptr::null(),
        stack_len: stack.len(),
        ret_gprs: [0; 2],
        ret_xmms: [0; 2],
        saved_rsp: 0,
        saved_rbp: 0,
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
                ArgLoc::Xmm(i) => ctx.xmms[i] = word,
                ArgLoc::Stack(i) => stack[i] = word,
            }
        }
    }
    ctx.stack = stack.as_ptr();
    if plan.ret_area > 0 {
        // The hidden return-area pointer (classify checked no argument uses rdi then).
        ctx.gprs[0] = area.as_mut_ptr() as u64;
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
        RetLoc::Xmm(i) => ctx.ret_xmms[i],
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
