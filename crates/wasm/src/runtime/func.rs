//! Functions as the host holds them ([`Func`]) and calls from the host into Wasm.
//!
//! A `Func` is compiled code (a JIT module and a function id in it), the context pointer it
//! takes as its first argument (an instance's vmctx, or a host function's context), its
//! type, and an owner that keeps that context alive. Calls go through
//! [`kestrel_jit::JitModule::call`] with the context prepended.
//!
//! Stack limit: translated functions check the thread's [`RuntimeLimits`] in their
//! prologue. The outermost host-to-Wasm call on a thread sets the limit to the current stack
//! pointer minus [`MAX_WASM_STACK`] and clears it on return (nested calls keep it), so deep
//! recursion traps "call stack exhausted" instead of overflowing the native stack. The
//! calling thread must have that much stack left, plus room for the trap handler's frames.
//!
//! Where a trap happened: the JIT reports the trapping instruction's function as an id in
//! *some* JIT module, without saying which. A call can name the Wasm function only when
//! the code that may run under it is its own module's plus host-function stubs (which trap
//! only with the host code): [`Func::trap_origin`] is set for exactly those calls (see
//! `Instance::func`), and then a non-host trap's id is one of the module's functions. A
//! host function's trap (including `proc_exit`) is reported without a function: the stub
//! that trapped does not know its Wasm caller.
//!
//! Cost of a call from the host: the JIT trampoline's, plus one argument check per value.

use std::any::Any;
use std::rc::Rc;

use kestrel_jit::{CallError, FuncId, JitModule, Value};
use wasmparser::FuncType;

use super::libcalls::take_host_trap;
use super::types::type_id;
use super::vmctx::{FuncRef, RuntimeLimits, VmCtx};
use crate::module::CompiledModule;
use crate::trap::{self, Trap};
use crate::val::Val;

/// Bytes of native stack Wasm code may use below the outermost host call.
pub const MAX_WASM_STACK: u64 = 1 << 20;

thread_local! {
    static LIMITS: RuntimeLimits = const {
        RuntimeLimits { stack_limit: std::cell::Cell::new(0) }
    };
}

/// The current thread's limits (what a vmctx created on this thread points at).
pub(crate) fn thread_limits() -> *const RuntimeLimits {
    LIMITS.with(|l| l as *const RuntimeLimits)
}

/// Sets the thread's stack limit for the outermost call and clears it on drop.
struct StackLimitGuard {
    outermost: bool,
}

impl StackLimitGuard {
    fn enter() -> StackLimitGuard {
        let here = 0u8;
        let sp = std::hint::black_box(&here) as *const u8 as u64;
        let outermost = LIMITS.with(|l| {
            if l.stack_limit.get() != 0 {
                return false;
            }
            l.stack_limit.set(sp.saturating_sub(MAX_WASM_STACK).max(1));
            true
        });
        StackLimitGuard { outermost }
    }
}

impl Drop for StackLimitGuard {
    fn drop(&mut self) {
        if self.outermost {
            LIMITS.with(|l| l.stack_limit.set(0));
        }
    }
}

/// Compiled code: one JIT module (a Wasm module's functions, or a host function's stub).
pub(crate) struct Code {
    pub jit: JitModule,
}

/// Why a call from the host did not return results.
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    /// The Wasm code trapped (or exited, [`Trap::Exit`]). `func` is the index, in the
    /// invoked function's module, of the function whose code trapped, when the runtime can
    /// tell (see the module docs); `offset`, then, is the byte offset in the module's binary
    /// of the Wasm instruction that trapped, when its code kept one (code a mid-end
    /// rewrite created may have none).
    #[error("{trap}")]
    Trap { trap: Trap, func: Option<u32>, offset: Option<u32> },
    /// No export of that name, or not a function.
    #[error("no exported function named `{0}`")]
    UnknownExport(String),
    /// The arguments do not match the function's parameters (or an externref is
    /// `u64::MAX`, which has no representation).
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// The JIT could not make the call (an internal error).
    #[error("call failed: {0}")]
    Call(String),
}

impl InvokeError {
    /// The trap, if the call trapped.
    pub fn trap(&self) -> Option<&Trap> {
        match self {
            InvokeError::Trap { trap, .. } => Some(trap),
            _ => None,
        }
    }
}

/// A callable function; see the module docs.
#[derive(Clone)]
pub struct Func {
    pub(crate) code: Rc<Code>,
    pub(crate) id: FuncId,
    pub(crate) vmctx: *mut VmCtx,
    pub(crate) ty: FuncType,
    /// The function's `FuncRef` record (what references to it point at), owned by `owner`.
    pub(crate) record: *const FuncRef,
    /// Set when only this module's code (and host stubs) can run under a call of this
    /// function: then the module maps a trapping JIT function back to its Wasm index.
    pub(crate) trap_origin: Option<Rc<CompiledModule>>,
    pub(crate) owner: Rc<dyn Any>,
}

impl std::fmt::Debug for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Func({:?} {})", self.id, self.ty)
    }
}

impl Func {
    /// The function's type.
    pub fn ty(&self) -> &FuncType {
        &self.ty
    }

    /// The record references to this function point at (code, context, type id).
    pub(crate) fn make_record(
        code: &Code,
        id: FuncId,
        vmctx: *mut VmCtx,
        ty: &FuncType,
    ) -> FuncRef {
        FuncRef {
            code: code
                .jit
                .get_finalized_function(id)
                .expect("a Func's code is finalized"),
            vmctx,
            type_id: type_id(ty),
        }
    }

    /// The function as a reference value.
    pub fn as_val(&self) -> Val {
        Val::FuncRef(self.record as u64)
    }

    /// Call the function with `args`.
    pub fn call(&self, args: &[Val]) -> Result<Vec<Val>, InvokeError> {
        let params = self.ty.params();
        let ill_typed = args.len() != params.len()
            || args.iter().zip(params).any(|(a, &p)| a.ty() != p)
            || args.contains(&Val::ExternRef(Some(u64::MAX)));
        if ill_typed {
            return Err(InvokeError::BadArguments(format!(
                "expected {:?}, got {:?}",
                params,
                args.iter().map(|a| a.ty()).collect::<Vec<_>>()
            )));
        }
        let mut jit_args = Vec::with_capacity(args.len() + 1);
        jit_args.push(Value::I64(self.vmctx as i64));
        jit_args.extend(args.iter().map(|a| a.to_jit()));
        let _guard = StackLimitGuard::enter();
        // SAFETY: the code implements `(vmctx, params) -> results` (translated from a
        // validated function or generated as a host stub), `vmctx` is kept alive by
        // `owner`, and the arguments were checked against the type above.
        match unsafe { self.code.jit.call(self.id, &jit_args) } {
            Ok(values) => values
                .into_iter()
                .zip(self.ty.results())
                .map(|(v, &ty)| {
                    Val::from_jit(ty, v).ok_or_else(|| InvokeError::Call("non-Wasm result".into()))
                })
                .collect(),
            Err(CallError::Trap(t)) if t.code == trap::HOST => Err(InvokeError::Trap {
                trap: take_host_trap().unwrap_or_else(|| Trap::from_code(t.code)),
                func: None,
                offset: None,
            }),
            Err(CallError::Trap(t)) => {
                // A source location is the translator's operator offset only in code of the
                // module it names.
                let func = self.trapping_function(t.func, args);
                Err(InvokeError::Trap {
                    trap: Trap::from_code(t.code),
                    func,
                    offset: func.and(t.srcloc),
                })
            }
            Err(e) => Err(InvokeError::Call(e.to_string())),
        }
    }

    /// The Wasm index of JIT function `id`, where a non-host trap of a call with `args`
    /// happened, if that is known (see the module docs). A non-null funcref argument may be
    /// another instance's function, whose code could then run under the call: unknown.
    fn trapping_function(&self, id: FuncId, args: &[Val]) -> Option<u32> {
        let module = self.trap_origin.as_ref()?;
        if args.iter().any(|a| matches!(a, Val::FuncRef(r) if *r != 0)) {
            return None;
        }
        let defined = module.ids.iter().position(|&i| i == id)?;
        Some(module.info.num_imported_funcs + defined as u32)
    }
}
