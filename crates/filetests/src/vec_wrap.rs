//! Wrappers through which native tests call functions with vector parameters or results.
//!
//! The JIT's host trampoline passes scalars only, so a function whose signature has a vector
//! type is called through a compiled wrapper `(i64 in, i64 out) system_v`: it loads
//! parameter `i` from `in + 16*i` (each slot holds the value's canonical bits, little-endian),
//! calls the function, and stores result `i` at `out + 16*i`. The wrapper is ordinary IR,
//! compiled by the same backend, so a backend without vector loads and stores refuses it like
//! the function itself.
//!
//! Cost: O(parameters + results) per wrapper.

use kestrel_interp::DataValue;
use kestrel_ir::builder::{BuilderError, FunctionBuilder};
use kestrel_ir::{
    AbiParam, CallConv, ExtFuncData, Function, FunctionName, MemFlags, Signature, Type,
};

/// Whether `f` has a vector parameter or result (and so is called through a wrapper).
pub fn needs_wrapper(f: &Function) -> bool {
    let sig = &f.signature;
    sig.params
        .iter()
        .chain(&sig.returns)
        .any(|p| p.value_type.is_vector())
}

/// The wrapper's name for the function named `name`.
pub fn wrapper_name(name: &str) -> String {
    format!("__kestrel_vec_{name}")
}

/// The wrapper of `target` (see the module documentation).
pub fn wrapper(target: &Function, name: &str) -> Result<Function, String> {
    let err = |e: BuilderError| format!("the vector-call wrapper of %{name}: {e}");
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(Type::I64));
    sig.params.push(AbiParam::new(Type::I64));
    let mut b = FunctionBuilder::new(FunctionName::Named(wrapper_name(name)), sig);
    let callee_sig = b.import_signature(target.signature.clone());
    let callee = b.import_function(ExtFuncData {
        name: target.name.clone(),
        signature: callee_sig,
        colocated: true,
    });
    let entry = b.create_block();
    b.switch_to_block(entry).map_err(err)?;
    let params = b
        .append_block_params_for_function_params(entry)
        .map_err(err)?;
    let (inp, out) = (params[0], params[1]);
    let mut args = Vec::with_capacity(target.signature.params.len());
    for (i, p) in target.signature.params.iter().enumerate() {
        let v = b
            .ins()
            .load(p.value_type, MemFlags::trusted(), inp, 16 * i as i32)
            .map_err(err)?;
        args.push(v);
    }
    call_and_store_results(b, callee, &args, out).map_err(err)
}

/// End a wrapper: call `callee` with `args`, store result `i` at `out + 16*i`, return, and
/// finish the function.
pub(crate) fn call_and_store_results(
    mut b: FunctionBuilder,
    callee: kestrel_ir::FuncRef,
    args: &[kestrel_ir::Value],
    out: kestrel_ir::Value,
) -> Result<Function, BuilderError> {
    let call = b.ins().call(callee, args)?;
    let results = b.inst_results(call).to_vec();
    for (i, r) in results.into_iter().enumerate() {
        b.ins().store(MemFlags::trusted(), r, out, 16 * i as i32)?;
    }
    b.ins().return_(&[])?;
    b.seal_all_blocks()?;
    b.finalize()
}

/// The 16-byte slots of `args` for a wrapper's `in` buffer.
pub fn arg_slots(args: &[DataValue]) -> Vec<u128> {
    args.iter().map(|a| a.to_slot()).collect()
}

/// The results of types `types` from a wrapper's `out` buffer.
pub fn results(types: &[Type], slots: &[u128]) -> Result<Vec<DataValue>, String> {
    types
        .iter()
        .zip(slots)
        .map(|(&ty, &slot)| {
            DataValue::from_slot(ty, slot)
                .ok_or_else(|| format!("a result of type {ty} cannot be read back"))
        })
        .collect()
}
