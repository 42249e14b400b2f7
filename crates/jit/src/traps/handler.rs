//! The process-wide signal handler for SIGILL, SIGFPE, SIGSEGV and SIGBUS.
//!
//! Contract: installed once ([`install`]) with `SA_SIGINFO | SA_ONSTACK`. For a hardware fault
//! whose PC is in JIT code, on a thread inside a trampoline call, that is a trap — the PC is
//! a registered trap site, or the fault address lies in the thread's stack guard region
//! (`stack.rs`; reported as `stk_ovf`, whichever instruction touched it) — it records the
//! trap in that call's context and redirects the interrupted context to the trampoline's
//! landing (see `trampoline`). A fault in JIT code that it does not catch is reported on
//! stderr (signal, fault address, function and offset) and then, like every fault outside
//! JIT code and every sent signal, goes to the action that was installed before it, as if
//! this handler were not there (by default: the process dies of the signal). The handler
//! only does async-signal-safe things: atomic loads and stores, const thread-local reads,
//! plain memory writes, `write(2)` of a line formatted on its stack, and `sigaction` and
//! `raise` when chaining to the default action. The interrupted context's PC and SP are
//! read, and the redirect written, by the host's `arch` module (the Linux `ucontext_t` of
//! x86-64 or AArch64).

use std::cell::UnsafeCell;
use std::fmt::Write as _;
use std::mem::MaybeUninit;
use std::sync::Once;

use kestrel_ir::TrapCode;
use libc::{c_int, c_void, siginfo_t};

use crate::arch::host;
use crate::trampoline::{self, CURRENT};
use crate::traps::{registry, stack};

const SIGNALS: [c_int; 4] = [libc::SIGILL, libc::SIGFPE, libc::SIGSEGV, libc::SIGBUS];

/// The actions that were installed before ours, by index into `SIGNALS`.
struct PreviousActions(UnsafeCell<[MaybeUninit<libc::sigaction>; SIGNALS.len()]>);

// SAFETY: written only inside `INSTALL.call_once`, each entry before our handler for that
// signal is installed; read-only afterwards (the handler reads it, and the `Once` orders the
// writes before any later `install` caller).
unsafe impl Sync for PreviousActions {}

static PREVIOUS: PreviousActions =
    PreviousActions(UnsafeCell::new([MaybeUninit::uninit(); SIGNALS.len()]));
static INSTALL: Once = Once::new();

/// Install the handler for all four signals, once per process. Later calls do nothing.
pub(crate) fn install() {
    INSTALL.call_once(|| {
        for (i, &sig) in SIGNALS.iter().enumerate() {
            // SAFETY: `PREVIOUS` entry `i` is written here before our handler for `sig`
            // exists, so no handler reads it concurrently; the sigaction structs are fully
            // initialised (zeroed, then the fields we use set) before the calls.
            unsafe {
                let prev = (*PREVIOUS.0.get())[i].as_mut_ptr();
                let rc = libc::sigaction(sig, std::ptr::null(), prev);
                assert_eq!(rc, 0, "sigaction({sig}) query failed");
                let mut ours: libc::sigaction = std::mem::zeroed();
                ours.sa_sigaction = on_signal as *const () as usize;
                ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut ours.sa_mask);
                let rc = libc::sigaction(sig, &ours, std::ptr::null_mut());
                assert_eq!(rc, 0, "sigaction({sig}) install failed");
            }
        }
    });
}

/// The handler.
///
/// # Safety
/// Called by the kernel only, with the `siginfo_t` and `ucontext_t` of the signal.
unsafe extern "C" fn on_signal(sig: c_int, info: *mut siginfo_t, uctx: *mut c_void) {
    // SAFETY: the kernel passes valid pointers for an SA_SIGINFO handler.
    if unsafe { catch(sig, info, uctx) } {
        return;
    }
    // SAFETY: same pointers, forwarded unchanged.
    unsafe { chain(sig, info, uctx) }
}

/// Redirect a fault in JIT code that is a trap — a registered trap site, or a touch of the
/// thread's stack guard (`stk_ovf`) — to the trampoline's landing; `false` if this fault is
/// not ours. A fault in JIT code that is not a trap, or one with no trampoline call to
/// return to, is reported on stderr (see [`report_fatal`]) before returning `false`.
unsafe fn catch(sig: c_int, info: *mut siginfo_t, uctx: *mut c_void) -> bool {
    // SAFETY: valid pointers from the kernel (see `on_signal`).
    let (info, uc) = unsafe { (&*info, &mut *(uctx as *mut libc::ucontext_t)) };
    // A non-positive code means the signal was sent (kill, sigqueue, tgkill), not a fault.
    if info.si_code <= 0 {
        return false;
    }
    let (pc, sp) = host::context_pc_sp(uc);
    let Some(at) = registry::locate(pc) else {
        // Not JIT code: not ours.
        return false;
    };
    // SAFETY: for SIGSEGV and SIGBUS the kernel fills in the fault address.
    let addr = unsafe { info.si_addr() } as usize;
    let memory_fault = sig == libc::SIGSEGV || sig == libc::SIGBUS;
    let trap = if memory_fault && stack::in_guard(addr) {
        // The frame ran into the guard below the stack, whatever instruction touched it.
        Some((TrapCode::STACK_OVERFLOW, 0))
    } else {
        at.trap.map(|t| (t.code, t.srcloc))
    };
    let Some((code, srcloc)) = trap else {
        report_fatal(sig, addr, pc, &at, "no trap is recorded there");
        return false;
    };
    let ctx = CURRENT.with(|c| c.get());
    if ctx.is_null() {
        report_fatal(sig, addr, pc, &at, "JIT code called without the trampoline");
        return false;
    }
    // SAFETY: a non-null `CURRENT` points to the live context of this thread's innermost
    // trampoline call (`trampoline::invoke` clears it before the context goes away).
    let ctx = unsafe { &mut *ctx };
    if sp > ctx.saved_sp {
        // The fault is not running below the trampoline frame (another stack): not ours.
        report_fatal(sig, addr, pc, &at, "not running on the trampoline's stack");
        return false;
    }
    let (func, offset) = match (at.trap, at.func) {
        (Some(t), _) => (t.func, t.func_offset),
        (None, Some(f)) => f,
        // A guard fault outside any function (in a stub): name no function.
        (None, None) => (u32::MAX, 0),
    };
    ctx.trap_code = Some(code);
    ctx.trap_func = func;
    ctx.trap_offset = offset;
    ctx.trap_srcloc = srcloc;
    // The landing runs in the trampoline's frame, above every JIT frame: on the part of
    // the stack that was in use before the call, so it is mapped and has room.
    host::redirect(
        uc,
        trampoline::landing_address(),
        ctx.saved_sp,
        ctx.saved_fp,
    );
    true
}

/// Write one line naming the fatal fault — signal, fault address, JIT function and offset,
/// PC — and `why` it is not caught, to stderr. Formats into a stack buffer and writes it with
/// one `write(2)`: nothing allocates.
fn report_fatal(sig: c_int, addr: usize, pc: usize, at: &registry::Located, why: &str) {
    let mut line = StackLine::new();
    let signal = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "signal",
    };
    let name = std::str::from_utf8(&at.name[..at.name_len]).unwrap_or("?");
    let _ = match at.func {
        Some((_, offset)) => writeln!(
            line,
            "kestrel-jit: fatal {signal} (fault address {addr:#x}) at offset {offset:#x} of JIT function `{name}` (pc {pc:#x}): {why}"
        ),
        None => writeln!(
            line,
            "kestrel-jit: fatal {signal} (fault address {addr:#x}) in JIT code outside any function (pc {pc:#x}): {why}"
        ),
    };
    let bytes = line.line();
    // SAFETY: write(2) is async-signal-safe; `bytes` is valid for its length.
    unsafe { libc::write(libc::STDERR_FILENO, bytes.as_ptr().cast(), bytes.len()) };
}

/// A line formatted on the stack; text beyond its capacity is dropped.
struct StackLine {
    buf: [u8; 512],
    len: usize,
}

impl StackLine {
    fn new() -> Self {
        StackLine {
            buf: [0; 512],
            len: 0,
        }
    }

    /// The text, ending in a newline even when it was cut.
    fn line(&mut self) -> &[u8] {
        if self.len > 0 && self.buf[self.len - 1] != b'\n' {
            self.buf[self.len - 1] = b'\n';
        }
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for StackLine {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Hand the signal to the action installed before ours.
unsafe fn chain(sig: c_int, info: *mut siginfo_t, uctx: *mut c_void) {
    let Some(i) = SIGNALS.iter().position(|&s| s == sig) else {
        return;
    };
    // SAFETY: our handler is installed only after entry `i` was written (see `install`).
    let prev = unsafe { (*PREVIOUS.0.get())[i].assume_init_ref() };
    let action = prev.sa_sigaction;
    if action == libc::SIG_IGN {
        return;
    }
    if action == libc::SIG_DFL {
        // Restore the default action. A fault re-executes the instruction on return and now
        // gets the default (terminating) action; a sent signal is re-raised, and delivered
        // when this handler returns and unblocks it.
        // SAFETY: `prev` is a valid sigaction; sigaction and raise are async-signal-safe.
        unsafe {
            libc::sigaction(sig, prev, std::ptr::null_mut());
            if (*info).si_code <= 0 {
                libc::raise(sig);
            }
        }
        return;
    }
    if prev.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: with SA_SIGINFO, `sa_sigaction` is a three-argument handler.
        let f: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(action) };
        f(sig, info, uctx);
    } else {
        // SAFETY: without SA_SIGINFO, `sa_sigaction` is a one-argument handler.
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(action) };
        f(sig);
    }
}
