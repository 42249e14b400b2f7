//! Host functions: Rust closures callable from Wasm as imports.
//!
//! Each host function gets a small compiled stub with the Wasm shape
//! `(ctx: i64, params...) -> results` (so callers treat it like any imported function):
//! it spills the parameters into 8-byte slots of a stack slot, calls
//! `libcalls::host_call` with the context and the slots' address,
//! traps with the host trap code if that returns non-zero, and loads the results back from
//! the same slots. `ctx` points at the function's [`HostCtx`].
//!
//! Cost: one stub compile per host function (a JIT module each).

use std::rc::Rc;

use kestrel_codegen::settings::Flags;
use kestrel_ir::builder::FunctionBuilder;
use kestrel_ir::{AbiParam, CallConv, ExtFuncData, FunctionName, Signature, StackSlotData, Type};
use kestrel_jit::{JitBuilder, Linkage};
use wasmparser::FuncType;

use super::func::{Code, Func};
use super::libcalls;
use super::vmctx::FuncRef;
use crate::error::WasmError;
use crate::translate::sig;
use crate::trap::{self, Trap};
use crate::val::Val;

/// The symbol stubs call.
const HOST_CALL_SYMBOL: &str = "kestrel_wasm_host_call";

/// A host function's closure.
pub type HostFn = dyn Fn(&[Val]) -> Result<Vec<Val>, Trap>;

/// What a host function's stub passes to the runtime as its context.
pub struct HostCtx {
    pub(crate) ty: FuncType,
    pub(crate) func: Box<HostFn>,
}

/// Keeps a host function's context and record alive as long as any `Func` or table refers
/// to it.
struct HostOwner {
    _ctx: Box<HostCtx>,
    _record: Box<FuncRef>,
}

impl Func {
    /// A function of type `ty` that runs `f`.
    pub fn wrap(
        ty: FuncType,
        f: impl Fn(&[Val]) -> Result<Vec<Val>, Trap> + 'static,
    ) -> Result<Func, WasmError> {
        let signature = sig::wasm_signature(&ty, 0)?;
        let stub = build_stub(&ty, signature.clone())?;
        let mut builder = JitBuilder::new();
        builder.symbol(HOST_CALL_SYMBOL, libcalls::host_call as *const u8);
        let mut jit = builder.build();
        let compile = |e: kestrel_jit::JitError| WasmError::Compile {
            func: 0,
            message: format!("host function stub: {e}"),
        };
        let id = jit
            .declare_function("host_stub", Linkage::Local, &signature)
            .map_err(compile)?;
        jit.define_ir_as(id, &stub, &Flags::default())
            .map_err(compile)?;
        jit.finalize_definitions().map_err(compile)?;
        let ctx = Box::new(HostCtx {
            ty: ty.clone(),
            func: Box::new(f),
        });
        let vmctx = &*ctx as *const HostCtx as *mut _;
        let code = Rc::new(Code { jit });
        let record = Box::new(Func::make_record(&code, id, vmctx, &ty));
        Ok(Func {
            code,
            id,
            vmctx,
            ty,
            record: &*record,
            trap_origin: None,
            owner: Rc::new(HostOwner {
                _ctx: ctx,
                _record: record,
            }),
        })
    }
}

impl Func {
    /// Whether this is a host function (a Rust closure behind a stub), as opposed to a Wasm
    /// instance's function.
    pub fn is_host(&self) -> bool {
        (*self.owner).is::<HostOwner>()
    }
}

fn build_stub(ty: &FuncType, signature: Signature) -> Result<kestrel_ir::Function, WasmError> {
    let fail = |e: kestrel_ir::builder::BuilderError| WasmError::Compile {
        func: 0,
        message: format!("host function stub: {e}"),
    };
    let slots = ty.params().len().max(ty.results().len()).max(1) as u32;
    let result_types: Vec<Type> = signature.returns.iter().map(|p| p.value_type).collect();
    let mut b = FunctionBuilder::new(FunctionName::Named("host_stub".into()), signature);
    let ss = b.create_stack_slot(StackSlotData {
        size: slots * 8,
        align_shift: 3,
    });
    let mut call_sig = Signature::new(CallConv::SystemV);
    call_sig.params.push(AbiParam::new(Type::I64));
    call_sig.params.push(AbiParam::new(Type::I64));
    call_sig.returns.push(AbiParam::new(Type::I32));
    let call_sig = b.import_signature(call_sig);
    let host_call = b.import_function(ExtFuncData {
        name: FunctionName::Named(HOST_CALL_SYMBOL.into()),
        signature: call_sig,
        colocated: false,
    });
    let entry = b.create_block();
    b.switch_to_block(entry).map_err(fail)?;
    b.seal_block(entry).map_err(fail)?;
    let params = b
        .append_block_params_for_function_params(entry)
        .map_err(fail)?;
    for (i, &p) in params[1..].iter().enumerate() {
        b.ins().stack_store(p, ss, i as i32 * 8).map_err(fail)?;
    }
    let slots_addr = b.ins().stack_addr(Type::I64, ss, 0).map_err(fail)?;
    let call = b
        .ins()
        .call(host_call, &[params[0], slots_addr])
        .map_err(fail)?;
    let status = b.inst_results(call)[0];
    b.ins().trapnz(status, trap::HOST).map_err(fail)?;
    let mut results = Vec::with_capacity(result_types.len());
    for (i, &ty) in result_types.iter().enumerate() {
        results.push(b.ins().stack_load(ty, ss, i as i32 * 8).map_err(fail)?);
    }
    b.ins().return_(&results).map_err(fail)?;
    b.finalize().map_err(fail)
}
