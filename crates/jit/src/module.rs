//! The JIT module: declare functions (local or imported), define local ones from compiled
//! code, finalize (place, link, protect, register traps), then look them up or call them.
//!
//! Cost: finalizing is O(code bytes + relocations + trap sites) with hash-map symbol lookups.

use std::collections::HashMap;

use kestrel_ir::Signature;

use crate::abi;
use crate::compiled::CompiledFunction;
use crate::error::{CallError, JitError, Trap};
use crate::memory::CodeRegion;
use crate::trampoline;
use crate::traps::{self, registry::Registration};
use crate::value::Value;

/// A function declared in a [`JitModule`], by declaration order.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct FuncId(u32);

impl FuncId {
    pub(crate) fn new(index: usize) -> FuncId {
        FuncId(u32::try_from(index).expect("more than 2^32 functions"))
    }

    /// The declaration index.
    pub fn as_u32(self) -> u32 {
        self.0
    }

    fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a declared function's code comes from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Linkage {
    /// Defined in this module with [`JitModule::define_function`].
    Local,
    /// Provided by the host: the builder's symbol table, else the process (`dlsym`).
    Import,
}

/// Where a declared function stands.
pub(crate) enum State {
    /// Declared only (a local waiting for its definition, or an unresolved import).
    Declared,
    /// Defined, to be placed by the next finalize.
    Defined(Box<CompiledFunction>),
    /// Placed and executable (local), or resolved (import): its address.
    Finalized(usize),
}

pub(crate) struct Decl {
    pub name: String,
    pub linkage: Linkage,
    pub signature: Signature,
    pub state: State,
}

/// One finalized batch of code. Field order matters: the trap registration is dropped (and
/// the handler stops looking at the range) before the memory is unmapped.
pub(crate) struct LiveRegion {
    pub _registration: Registration,
    pub _memory: CodeRegion,
}

/// Configuration of a module: the symbol table imports are resolved from first.
#[derive(Debug, Clone)]
pub struct JitBuilder {
    symbols: HashMap<String, usize>,
}

impl Default for JitBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl JitBuilder {
    /// A builder whose symbol table holds the runtime library (see `libcalls.rs`).
    pub fn new() -> Self {
        let symbols = crate::libcalls::LIBCALLS
            .iter()
            .map(|&(name, ptr)| (name.to_string(), ptr as usize))
            .collect();
        JitBuilder { symbols }
    }

    /// Resolve imports and symbol relocations named `name` to `ptr`, before looking in the
    /// process. A later registration of the same name replaces an earlier one.
    pub fn symbol(&mut self, name: impl Into<String>, ptr: *const u8) -> &mut Self {
        self.symbols.insert(name.into(), ptr as usize);
        self
    }

    /// The module.
    pub fn build(self) -> JitModule {
        JitModule {
            symbols: self.symbols,
            decls: Vec::new(),
            names: HashMap::new(),
            regions: Vec::new(),
        }
    }
}

/// In-process code: functions declared, defined, finalized into W^X memory, and called.
///
/// Dropping the module unmaps its code; no code of it may be running then, and pointers from
/// [`get_finalized_function`](Self::get_finalized_function) become dangling.
pub struct JitModule {
    pub(crate) symbols: HashMap<String, usize>,
    pub(crate) decls: Vec<Decl>,
    pub(crate) names: HashMap<String, FuncId>,
    pub(crate) regions: Vec<LiveRegion>,
}

impl std::fmt::Debug for JitModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitModule")
            .field("functions", &self.names.len())
            .field("regions", &self.regions.len())
            .finish_non_exhaustive()
    }
}

impl Default for JitModule {
    fn default() -> Self {
        Self::new()
    }
}

impl JitModule {
    /// A module with an empty symbol table: imports come from the process only.
    pub fn new() -> Self {
        JitBuilder::new().build()
    }

    /// Declare `name`. Declaring a name again with the same signature returns the same id;
    /// a local declaration upgrades an earlier import that is not resolved yet.
    pub fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
    ) -> Result<FuncId, JitError> {
        if let Some(&id) = self.names.get(name) {
            let decl = &mut self.decls[id.index()];
            if decl.signature != *signature {
                return Err(JitError::IncompatibleSignature {
                    name: name.to_string(),
                    previous: Box::new(decl.signature.clone()),
                    new: Box::new(signature.clone()),
                });
            }
            if linkage == Linkage::Local && decl.linkage == Linkage::Import {
                if !matches!(decl.state, State::Declared) {
                    return Err(JitError::AlreadyDefined {
                        name: name.to_string(),
                    });
                }
                decl.linkage = Linkage::Local;
            }
            return Ok(id);
        }
        let id = FuncId::new(self.decls.len());
        self.decls.push(Decl {
            name: name.to_string(),
            linkage,
            signature: signature.clone(),
            state: State::Declared,
        });
        self.names.insert(name.to_string(), id);
        Ok(id)
    }

    /// The id of a declared function.
    pub fn get_name(&self, name: &str) -> Option<FuncId> {
        self.names.get(name).copied()
    }

    /// The declared signature of `id`.
    pub fn signature(&self, id: FuncId) -> Result<&Signature, JitError> {
        Ok(&self.decl(id)?.signature)
    }

    /// Give local function `id` its code, to be placed by the next
    /// [`finalize_definitions`](Self::finalize_definitions). The code is checked against the
    /// declaration (signature) and itself (relocations and trap sites inside the code).
    pub fn define_function(&mut self, id: FuncId, func: CompiledFunction) -> Result<(), JitError> {
        let decl = self.decl(id)?;
        let name = || decl.name.clone();
        if decl.linkage == Linkage::Import {
            return Err(JitError::DefineImport { name: name() });
        }
        if !matches!(decl.state, State::Declared) {
            return Err(JitError::AlreadyDefined { name: name() });
        }
        if func.signature != decl.signature {
            return Err(JitError::SignatureMismatch {
                name: name(),
                declared: Box::new(decl.signature.clone()),
                defined: Box::new(func.signature),
            });
        }
        let len = func.code.len();
        let out_of_bounds = |what, offset| JitError::OutOfBounds {
            name: name(),
            what,
            offset,
            len,
        };
        for r in &func.relocs {
            if r.offset as usize + r.kind.size() > len {
                return Err(out_of_bounds("relocation", r.offset));
            }
        }
        for t in &func.traps {
            if t.offset as usize >= len {
                return Err(out_of_bounds("trap site", t.offset));
            }
        }
        self.decls[id.index()].state = State::Defined(Box::new(func));
        Ok(())
    }

    /// Resolve every import, then place all functions defined since the last finalize in
    /// one new executable region, patch their relocations and register their trap sites.
    /// On error nothing defined is placed; the definitions stay pending.
    pub fn finalize_definitions(&mut self) -> Result<(), JitError> {
        crate::link::finalize(self)
    }

    /// The address of a finalized local function or a resolved import.
    pub fn get_finalized_function(&self, id: FuncId) -> Result<*const u8, JitError> {
        let decl = self.decl(id)?;
        match decl.state {
            State::Finalized(addr) => Ok(addr as *const u8),
            State::Declared | State::Defined(_) => Err(JitError::NotFinalized {
                name: decl.name.clone(),
            }),
        }
    }

    /// Call function `id` with `args` through the generic trampoline and return its results,
    /// or the trap it hit at one of its (or its callees') registered trap sites.
    ///
    /// # Safety
    /// The function's machine code must really implement its declared signature under the
    /// x86-64 backend's convention for it (System V for `system_v`, `fast`, `cold` and `tail`,
    /// with results beyond rax, rdx, xmm0 and xmm1 stored through a hidden return-area pointer
    /// in rdi; see [`abi`](crate::abi)) and be memory-safe for these arguments:
    /// the JIT executes it as it is. A trap discards the frames between this call and the
    /// fault without running destructors, so host functions called from JIT code must not
    /// hold resources across calls back into trapping JIT code.
    pub unsafe fn call(&self, id: FuncId, args: &[Value]) -> Result<Vec<Value>, CallError> {
        let addr = self.get_finalized_function(id)? as usize;
        let decl = self.decl(id)?;
        let call_conv = decl.signature.call_conv;
        if !abi::callable_conv(call_conv) {
            return Err(JitError::UnsupportedCallConv {
                name: decl.name.clone(),
                call_conv,
            }
            .into());
        }
        let plan = abi::classify(&decl.signature)?;
        if args.len() != plan.args.len() {
            return Err(CallError::ArgumentCount {
                expected: plan.args.len(),
                got: args.len(),
            });
        }
        for (index, (arg, &(expected, _, _))) in args.iter().zip(&plan.args).enumerate() {
            if arg.ty() != expected {
                return Err(CallError::ArgumentType {
                    index,
                    expected,
                    got: arg.ty(),
                });
            }
        }
        traps::prepare_thread().map_err(|source| JitError::Memory {
            op: "setting up the alternate signal stack",
            source,
        })?;
        // SAFETY: `addr` is finalized code of `id` (or a resolved import), which the caller
        // promises implements `decl.signature`; `args` were checked against it above, and
        // `prepare_thread` set up trap handling for this thread.
        match unsafe { trampoline::invoke(addr, &plan, args) } {
            Ok(bits) => Ok(plan
                .rets
                .iter()
                .zip(bits)
                .map(|(&(ty, _), b)| Value::from_bits(ty, b).expect("classified as scalar"))
                .collect()),
            Err((code, func, offset)) => Err(Trap {
                code,
                offset,
                func: FuncId(func),
            }
            .into()),
        }
    }

    fn decl(&self, id: FuncId) -> Result<&Decl, JitError> {
        self.decls.get(id.index()).ok_or(JitError::BadFuncId { id })
    }
}
