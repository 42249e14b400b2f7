//! Defining functions straight from IR: compile with Kestrel's x86-64 backend, then define.
//!
//! This is the short path for embedders:
//! `module.define_ir(&func, &Flags::default())?; module.finalize_definitions()?;` and then
//! `module.call(id, &args)`. Calls in the IR resolve at finalize: a callee declared in the
//! module by the same name (see [`ir_name`]) is a module function, anything else (a library
//! call the backend introduced, or a host function) is looked up as a symbol.

use kestrel_codegen::isa::x64::{Flags, X64Backend};
use kestrel_codegen::machinst::{buffer, CompiledCode};
use kestrel_ir::{Function, FunctionName, Signature};

use crate::{
    CompiledFunction, FuncId, JitError, JitModule, Linkage, Reloc, RelocKind, RelocTarget, TrapSite,
};

/// The module name of an IR function name: `%name` is `name`, `u1:2` stays `u1:2`.
pub fn ir_name(name: &FunctionName) -> String {
    match name {
        FunctionName::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

impl JitModule {
    /// Compile `func` for this machine and define it under its own name, declaring it as a
    /// local function first if it is not declared yet. Returns its id.
    pub fn define_ir(&mut self, func: &Function, flags: &Flags) -> Result<FuncId, JitError> {
        let name = ir_name(&func.name);
        let id = match self.get_name(&name) {
            Some(id) => id,
            None => self.declare_function(&name, Linkage::Local, &func.signature)?,
        };
        let code = X64Backend
            .compile_function(func, flags)
            .map_err(|error| JitError::Compile {
                name: name.clone(),
                error,
            })?;
        let compiled = self.compiled_from_codegen(code, func.signature.clone());
        self.define_function(id, compiled)?;
        Ok(id)
    }

    /// The backend's output as a definition for this module: relocations against functions
    /// declared here become module references, all others symbol references.
    pub fn compiled_from_codegen(
        &self,
        code: CompiledCode,
        signature: Signature,
    ) -> CompiledFunction {
        let relocs = code
            .relocs
            .iter()
            .map(|r| {
                let name = ir_name(&r.target);
                Reloc {
                    offset: r.offset,
                    kind: reloc_kind(r.kind),
                    target: if self.get_name(&name).is_some() {
                        RelocTarget::Function(name)
                    } else {
                        RelocTarget::Symbol(name)
                    },
                    addend: r.addend,
                }
            })
            .collect();
        let traps = code
            .traps
            .iter()
            .map(|t| TrapSite {
                offset: t.offset,
                code: t.code,
            })
            .collect();
        CompiledFunction {
            code: code.code,
            relocs,
            traps,
            signature,
        }
    }
}

fn reloc_kind(kind: buffer::RelocKind) -> RelocKind {
    match kind {
        buffer::RelocKind::Abs4 => RelocKind::Abs4,
        buffer::RelocKind::Abs8 => RelocKind::Abs8,
        buffer::RelocKind::PcRel4 => RelocKind::PcRel4,
        buffer::RelocKind::CallPcRel4 => RelocKind::CallPcRel4,
    }
}
