//! The process-wide signal handler for SIGILL, SIGFPE, SIGSEGV and SIGBUS.
//!
//! Contract: installed once ([`install`]) with `SA_SIGINFO | SA_ONSTACK`. For a hardware fault
//! whose PC is a registered trap site, on a thread inside a trampoline call, it records the
//! trap in that call's context and redirects the interrupted context to the trampoline's
//! landing (see `trampoline`). Everything else goes to the action that was installed before
//! it, as if this handler were not there. The handler only does async-signal-safe things:
//! atomic loads and stores, a const thread-local read, plain memory writes, and `sigaction`
//! and `raise` when chaining to the default action.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::Once;

use libc::{c_int, c_void, siginfo_t};

use crate::trampoline::{self, CURRENT};
use crate::traps::registry;

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
    if unsafe { catch(info, uctx) } {
        return;
    }
    // SAFETY: same pointers, forwarded unchanged.
    unsafe { chain(sig, info, uctx) }
}

/// Redirect a fault at a registered trap site to the trampoline's landing; `false` if this
/// fault is not ours.
unsafe fn catch(info: *mut siginfo_t, uctx: *mut c_void) -> bool {
    // SAFETY: valid pointers from the kernel (see `on_signal`).
    let (info, uc) = unsafe { (&*info, &mut *(uctx as *mut libc::ucontext_t)) };
    // A non-positive code means the signal was sent (kill, sigqueue, tgkill), not a fault.
    if info.si_code <= 0 {
        return false;
    }
    let gregs = &mut uc.uc_mcontext.gregs;
    let pc = gregs[libc::REG_RIP as usize] as usize;
    let Some(site) = registry::lookup(pc) else {
        return false;
    };
    let ctx = CURRENT.with(|c| c.get());
    if ctx.is_null() {
        // JIT code called without the trampoline: nowhere to return to.
        return false;
    }
    // SAFETY: a non-null `CURRENT` points to the live context of this thread's innermost
    // trampoline call (`trampoline::invoke` clears it before the context goes away).
    let ctx = unsafe { &mut *ctx };
    let sp = gregs[libc::REG_RSP as usize] as u64;
    if sp > ctx.saved_rsp {
        // The fault is not running below the trampoline frame (another stack): not ours.
        return false;
    }
    ctx.trap_code = Some(site.code);
    ctx.trap_func = site.func;
    ctx.trap_offset = site.func_offset;
    ctx.trap_srcloc = site.srcloc;
    gregs[libc::REG_RIP as usize] = trampoline::landing_address() as i64;
    gregs[libc::REG_RSP as usize] = ctx.saved_rsp as i64;
    gregs[libc::REG_RBP as usize] = ctx.saved_rbp as i64;
    true
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
