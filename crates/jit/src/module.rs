//! The JIT module: declare functions (local or imported), define local ones from compiled
//! code, finalize (place, link, protect, register traps), then look them up or call them.
//!
//! Cost: finalizing is O(code bytes + relocations + trap sites) with hash-map symbol lookups.

use std::collections::HashMap;

use kestrel_module::decls::{Declarations, Name};

use kestrel_codegen::isa::x64::Flags;
use kestrel_ir::{Function, Signature};
use kestrel_module::Module;

use crate::abi;
use crate::compiled::{CompiledFunction, RelocKind};
use crate::error::{CallError, JitError, Trap};
use crate::memory::CodeRegion;
use crate::trampoline;
use crate::traps::{self, registry::Registration};
use crate::value::Value;

pub use kestrel_module::{DataDescription, DataId, FuncId, Linkage};

/// Where a declared function stands.
pub(crate) enum State {
    /// Declared only (a local waiting for its definition, or an unresolved import), or freed.
    Declared,
    /// Defined, to be placed by the next finalize.
    Defined(Box<CompiledFunction>),
    /// Placed and executable (local, in region `region`), or resolved (import, no region).
    Finalized { addr: usize, region: Option<usize> },
}

pub(crate) type Decl = kestrel_module::decls::FuncDecl<State>;

/// Where a declared data object stands.
pub(crate) enum DataState {
    Declared,
    Defined(Box<DataDescription>),
    Finalized(usize),
}

/// One finalized batch of code and data. Field order matters: the unwinder and the trap
/// handler stop looking at the range before the memory is unmapped.
pub(crate) struct LiveRegion {
    pub _debug: Option<crate::gdb_jit::GdbRegistration>,
    pub _frames: Option<crate::frames::FrameRegistration>,
    pub _registration: Registration,
    pub _memory: CodeRegion,
    /// Functions of the region not freed yet; with no data in it, the region is released
    /// when this reaches zero.
    pub live_functions: usize,
    pub has_data: bool,
}

/// Configuration of a module: the symbol table imports are resolved from first, the
/// compilation flags for [`Module::define_function`], and the profiler map.
#[derive(Debug, Clone)]
pub struct JitBuilder {
    symbols: HashMap<String, usize>,
    flags: Flags,
    perf_map: bool,
    debug_info: bool,
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
        JitBuilder {
            symbols,
            // Stack probes on: a frame larger than the guard page traps as `stk_ovf` instead
            // of skipping the guard.
            flags: Flags {
                probestack_size_log2: Some(
                    kestrel_codegen::isa::x64::probestack::DEFAULT_SIZE_LOG2,
                ),
                ..Flags::default()
            },
            perf_map: std::env::var_os("KESTREL_PERF_MAP").is_some_and(|v| v == "1"),
            debug_info: std::env::var_os("KESTREL_DEBUG_INFO").is_some_and(|v| v == "1"),
        }
    }

    /// Compile IR with these flags (default: `Flags::default()` with stack probes every 4 KiB).
    pub fn flags(&mut self, flags: Flags) -> &mut Self {
        self.flags = flags;
        self
    }

    /// Run the mid-end at `level` before compiling each function (`OptLevel::None` by
    /// default); the same as setting `Flags::opt_level`.
    pub fn opt_level(&mut self, level: kestrel_codegen::isa::x64::OptLevel) -> &mut Self {
        self.flags.opt_level = level;
        self
    }

    /// Append `START SIZE NAME` lines for every finalized function to `/tmp/perf-PID.map`,
    /// so `perf report` names JIT code. Also on when the environment variable
    /// `KESTREL_PERF_MAP` is `1` when the builder is made.
    pub fn perf_map(&mut self, on: bool) -> &mut Self {
        self.perf_map = on;
        self
    }

    /// Describe each finalized batch to debuggers through GDB's JIT interface (see
    /// `gdb_jit.rs`): function names, and line tables mapping the code to the lines of the
    /// CLIF text it was parsed from (or to a front end's `@srcloc`s, as lines of the file
    /// `kestrel-jit`). Also on when the environment variable `KESTREL_DEBUG_INFO` is `1`
    /// when the builder is made. Costs an ELF image (a copy of the code plus the DWARF) per
    /// batch, released with the batch.
    pub fn debug_info(&mut self, on: bool) -> &mut Self {
        self.debug_info = on;
        self
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
            flags: self.flags,
            perf_map: self.perf_map,
            debug_info: self.debug_info,
            decls: Declarations::default(),
            regions: Vec::new(),
            free_regions: Vec::new(),
            compile_ctx: Default::default(),
        }
    }
}

/// In-process code: functions declared, defined, finalized into W^X memory, and called.
///
/// Dropping the module unmaps its code; no code of it may be running then, and pointers from
/// [`get_finalized_function`](Self::get_finalized_function) become dangling.
pub struct JitModule {
    pub(crate) symbols: HashMap<String, usize>,
    pub(crate) flags: Flags,
    pub(crate) perf_map: bool,
    pub(crate) debug_info: bool,
    /// Functions and data objects, one namespace, with where each stands.
    pub(crate) decls: Declarations<State, DataState>,
    /// By region index; a released region leaves `None` so indices stay stable.
    pub(crate) regions: Vec<Option<LiveRegion>>,
    /// Indices of `None` slots in `regions`, reused by the next finalize.
    pub(crate) free_regions: Vec<usize>,
    /// The backend's memory, kept from one compiled function to the next.
    pub(crate) compile_ctx: kestrel_codegen::machinst::compile::CompileContext,
}

impl std::fmt::Debug for JitModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitModule")
            .field("functions", &self.decls.funcs().len())
            .field("data", &self.decls.data_objects().len())
            .field("regions", &self.regions.iter().flatten().count())
            .field("region_slots", &self.regions.len())
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
    /// a definition (`Local`/`Export`) upgrades an earlier import that is not resolved yet.
    pub fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
    ) -> Result<FuncId, JitError> {
        let open = |s: &State| matches!(s, State::Declared);
        let (id, _) =
            self.decls
                .declare_function(name, linkage, signature, || State::Declared, open)?;
        Ok(id)
    }

    /// Declare data object `name` (`writable` or read-only once finalized). Declaring it
    /// again returns the same id; a definition upgrades an import not yet resolved.
    pub fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
    ) -> Result<DataId, JitError> {
        let open = |s: &DataState| matches!(s, DataState::Declared);
        let (id, _) =
            self.decls
                .declare_data(name, linkage, writable, || DataState::Declared, open)?;
        Ok(id)
    }

    /// Give data object `id` its contents, placed by the next finalize.
    pub fn define_data(&mut self, id: DataId, data: &DataDescription) -> Result<(), JitError> {
        let defined = |s: &DataState| !matches!(s, DataState::Declared);
        self.decls.check_define_data(id, data, defined)?;
        self.decls.data_mut(id)?.state = DataState::Defined(Box::new(data.clone()));
        Ok(())
    }

    /// The address of a finalized data object (or a resolved data import).
    pub fn get_finalized_data(&self, id: DataId) -> Result<*const u8, JitError> {
        let decl = self.decls.data(id)?;
        match decl.state {
            DataState::Finalized(addr) => Ok(addr as *const u8),
            _ => Err(JitError::NotFinalized {
                name: decl.name.clone(),
            }),
        }
    }

    /// The id of a declared function.
    pub fn get_name(&self, name: &str) -> Option<FuncId> {
        match self.decls.name(name) {
            Some(Name::Func(id)) => Some(id),
            _ => None,
        }
    }

    /// The id of a declared data object.
    pub fn get_data_name(&self, name: &str) -> Option<DataId> {
        match self.decls.name(name) {
            Some(Name::Data(id)) => Some(id),
            _ => None,
        }
    }

    /// Release finalized local function `id`: its unwind and trap registrations and, once
    /// every function placed by the same finalize is freed (and that finalize placed no
    /// data), its code memory. The declaration stays: `id` can be defined and finalized
    /// again (new code at a new address).
    ///
    /// # Safety
    /// No thread may be running the function, and no code or pointer that will still be used
    /// may refer to it: calls to it from other finalized code and pointers obtained from
    /// [`get_finalized_function`](Self::get_finalized_function) dangle afterwards.
    pub unsafe fn free_function(&mut self, id: FuncId) -> Result<(), JitError> {
        let decl = self.decl(id)?;
        let State::Finalized {
            region: Some(region),
            ..
        } = decl.state
        else {
            return Err(JitError::NotFreeable {
                name: decl.name.clone(),
            });
        };
        self.decls.func_mut(id)?.state = State::Declared;
        let live = self.regions[region]
            .as_mut()
            .expect("a finalized function's region is alive");
        live.live_functions -= 1;
        if live.live_functions == 0 && !live.has_data {
            // Dropping unregisters frames and traps, then unmaps.
            self.regions[region] = None;
            self.free_regions.push(region);
        }
        Ok(())
    }

    /// The declared signature of `id`.
    pub fn signature(&self, id: FuncId) -> Result<&Signature, JitError> {
        Ok(&self.decl(id)?.signature)
    }

    /// Give local function `id` its code, to be placed by the next
    /// [`finalize_definitions`](Self::finalize_definitions). The code is checked against the
    /// declaration (signature) and itself (relocations and trap sites inside the code).
    pub fn define_function(&mut self, id: FuncId, func: CompiledFunction) -> Result<(), JitError> {
        let defined = |s: &State| !matches!(s, State::Declared);
        let decl = self
            .decls
            .check_define_function(id, &func.signature, defined)?;
        let name = || decl.name.clone();
        let len = func.code.len();
        let out_of_bounds = |what, offset| JitError::OutOfBounds {
            name: name(),
            what,
            offset,
            len,
        };
        for r in &func.relocs {
            if let RelocKind::Foreign(kind) = r.kind {
                return Err(JitError::ForeignReloc {
                    name: name(),
                    kind,
                    offset: r.offset,
                });
            }
            if r.offset as usize + r.kind.size() > len {
                return Err(out_of_bounds("relocation", r.offset));
            }
        }
        for t in &func.traps {
            if t.offset as usize >= len {
                return Err(out_of_bounds("trap site", t.offset));
            }
        }
        self.decls.func_mut(id)?.state = State::Defined(Box::new(func));
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
            State::Finalized { addr, .. } => Ok(addr as *const u8),
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
            Err((code, func, offset, srcloc)) => Err(Trap {
                code,
                offset,
                func: FuncId::from_index(func as usize),
                srcloc: (srcloc != 0).then_some(srcloc),
            }
            .into()),
        }
    }

    fn decl(&self, id: FuncId) -> Result<&Decl, JitError> {
        Ok(self.decls.func(id)?)
    }
}

impl Module for JitModule {
    type Error = JitError;

    fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
    ) -> Result<FuncId, JitError> {
        JitModule::declare_function(self, name, linkage, signature)
    }

    fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
    ) -> Result<DataId, JitError> {
        JitModule::declare_data(self, name, linkage, writable)
    }

    fn define_function(&mut self, id: FuncId, func: &Function) -> Result<(), JitError> {
        let flags = self.flags;
        self.define_ir_as(id, func, &flags)
    }

    fn define_data(&mut self, id: DataId, data: &DataDescription) -> Result<(), JitError> {
        JitModule::define_data(self, id, data)
    }
}
