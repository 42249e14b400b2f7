//! Helpers shared by the JIT tests: assemble with iced-x86, build signatures and modules.

use iced_x86::code_asm::{CodeAssembler, CodeLabel};
use iced_x86::{BlockEncoderOptions, IcedError};
use kestrel_ir::{AbiParam, CallConv, Signature, Type};
use kestrel_jit::{CompiledFunction, FuncId, JitModule, Linkage};

/// Assembled bytes plus the offsets of the labels the body asked for.
pub struct Asm {
    pub code: Vec<u8>,
    pub labels: Vec<u32>,
}

/// Assemble `body`; it returns the labels whose offsets the test needs.
pub fn assemble(body: impl FnOnce(&mut CodeAssembler) -> Result<Vec<CodeLabel>, IcedError>) -> Asm {
    let mut a = CodeAssembler::new(64).unwrap();
    let labels = body(&mut a).unwrap();
    let result = a
        .assemble_options(0, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
        .unwrap();
    let labels = labels
        .iter()
        .map(|l| result.label_ip(l).unwrap() as u32)
        .collect();
    Asm {
        code: result.inner.code_buffer,
        labels,
    }
}

/// A new label bound at the current position.
pub fn here(a: &mut CodeAssembler) -> Result<CodeLabel, IcedError> {
    let mut l = a.create_label();
    a.set_label(&mut l)?;
    Ok(l)
}

/// A `system_v` signature.
pub fn sig(params: &[Type], returns: &[Type]) -> Signature {
    let mut s = Signature::new(CallConv::SystemV);
    s.params = params.iter().map(|&t| AbiParam::new(t)).collect();
    s.returns = returns.iter().map(|&t| AbiParam::new(t)).collect();
    s
}

/// Declare and define a local function.
pub fn define(m: &mut JitModule, name: &str, func: CompiledFunction) -> FuncId {
    let id = m
        .declare_function(name, Linkage::Local, &func.signature)
        .unwrap();
    m.define_function(id, func).unwrap();
    id
}

/// A finalized module holding one function.
pub fn single(func: CompiledFunction) -> (JitModule, FuncId) {
    let mut m = JitModule::new();
    let id = define(&mut m, "f", func);
    m.finalize_definitions().unwrap();
    (m, id)
}
