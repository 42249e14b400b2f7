//! Defining functions straight from IR: compile with the host's backend ([`crate::host_isa`]), then
//! define.
//!
//! This is the short path for embedders:
//! `module.define_ir(&func, &Flags::default())?; module.finalize_definitions()?;` and then
//! `module.call(id, &args)`. Calls in the IR resolve at finalize: a callee declared in the
//! module by the same name (see [`ir_name`]) is a module function, anything else (a library
//! call the backend introduced, or a host function) is looked up as a symbol.

use kestrel_codegen::isa::x64::Flags;
use kestrel_codegen::machinst::{buffer, CompiledCode};
use kestrel_ir::{Function, Signature};
use kestrel_module::decls::Name;

use crate::{
    CompiledFunction, FuncId, JitError, JitModule, Linkage, Reloc, RelocKind, RelocTarget, TrapSite,
};

pub use kestrel_module::{ir_name, with_ir_name};

impl JitModule {
    /// Compile `func` for this machine and define it under its own name, declaring it as a
    /// local function first if it is not declared yet. Returns its id.
    pub fn define_ir(&mut self, func: &Function, flags: &Flags) -> Result<FuncId, JitError> {
        let name = ir_name(&func.name);
        let id = match self.get_name(&name) {
            Some(id) => id,
            None => self.declare_function(&name, Linkage::Local, &func.signature)?,
        };
        self.define_ir_as(id, func, flags)?;
        Ok(id)
    }

    /// Compile `func` and define declared function `id` with it (whatever its IR name).
    pub fn define_ir_as(
        &mut self,
        id: FuncId,
        func: &Function,
        flags: &Flags,
    ) -> Result<(), JitError> {
        let name = ir_name(&func.name);
        let code = crate::host_isa()
            .compile_in(&mut self.compile_ctx, func, flags)
            .map_err(|error| JitError::Compile {
                name: name.clone(),
                error,
            })?;
        let compiled = self
            .compiled_from_codegen(code, func.signature.clone())
            .with_source_of(func);
        self.define_function(id, compiled)
    }

    /// The backend's output as a definition for this module: relocations against functions
    /// and data declared here become module references, all others symbol references.
    pub fn compiled_from_codegen(
        &self,
        code: CompiledCode,
        signature: Signature,
    ) -> CompiledFunction {
        let relocs = code
            .relocs
            .iter()
            .map(|r| {
                // One lookup says which namespace the name is declared in, if any; a
                // declared function is named by its id from here on.
                let target = with_ir_name(&r.target, |name| match self.decls.name(name) {
                    Some(Name::Func(id)) => RelocTarget::Declared(id),
                    Some(Name::Data(_)) => RelocTarget::Data(name.to_string()),
                    None => RelocTarget::Symbol(name.to_string()),
                });
                Reloc {
                    offset: r.offset,
                    kind: reloc_kind(r.kind),
                    target,
                    addend: r.addend,
                }
            })
            .collect();
        // Moved, not copied: the two site types have one layout, so the list keeps its
        // memory.
        let traps = code
            .traps
            .into_iter()
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
            unwind: code.unwind,
            lines: crate::SourceLines {
                file: None,
                decl_line: 0,
                ranges: code.srclocs,
            },
        }
    }
}

impl CompiledFunction {
    /// Name the text `func` was parsed from, and its header's line, as this code's source
    /// (for debuggers); no change for a function built in memory.
    pub fn with_source_of(mut self, func: &Function) -> Self {
        if let Some(sm) = func.source_map.as_deref() {
            self.lines.file = Some(sm.file.to_string());
            self.lines.decl_line = sm.function.line;
        }
        self
    }
}

fn reloc_kind(kind: buffer::RelocKind) -> RelocKind {
    match kind {
        buffer::RelocKind::Abs4 => RelocKind::Abs4,
        buffer::RelocKind::Abs8 => RelocKind::Abs8,
        buffer::RelocKind::PcRel4 => RelocKind::PcRel4,
        buffer::RelocKind::CallPcRel4 => RelocKind::CallPcRel4,
        buffer::RelocKind::GotPcRel4 => RelocKind::GotPcRel4,
        buffer::RelocKind::Arm64Call26 => RelocKind::Arm64Call26,
        buffer::RelocKind::Arm64AdrPage21 => RelocKind::Arm64AdrPage21,
        buffer::RelocKind::Arm64AddLo12 => RelocKind::Arm64AddLo12,
        buffer::RelocKind::Arm64GotPage21 => RelocKind::Arm64GotPage21,
        buffer::RelocKind::Arm64GotLo12 => RelocKind::Arm64GotLo12,
    }
}
