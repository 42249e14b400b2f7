//! The JIT module: declare functions (local or imported), define local ones from compiled
//! code, finalize (place, link, protect, register traps), then look them up or call them.
//!
//! Each finalize places its functions and data objects in one batch of pages (`link.rs`,
//! `memory.rs`); each object owns its byte range there, and freeing one
//! ([`JitModule::free_function`], [`JitModule::free_data`]) releases its registrations and
//! the pages no other live object uses.
//!
//! Cost: finalizing is O(code bytes + relocations + trap sites) with hash-map symbol lookups;
//! freeing is O(the object's pages + its trap sites + its unwind group's records).

use std::collections::HashMap;

use kestrel_module::decls::{Declarations, Name};

use std::sync::Arc;

use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::settings::{Flags, OptLevel, DEFAULT_PROBESTACK_SIZE_LOG2};
use kestrel_ir::{Function, Signature};
use kestrel_module::Module;

use crate::abi;
use crate::compiled::CompiledFunction;
use crate::error::{CallError, JitError, Trap};
use crate::memory::{BatchPages, CodeMemory, MemoryStats};
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
    /// Placed and executable (local, with its placement), or resolved (import, `None`).
    Finalized { addr: usize, placed: Option<Box<PlacedFunction>> },
}

pub(crate) type Decl = kestrel_module::decls::FuncDecl<State>;

/// Where a declared data object stands.
pub(crate) enum DataState {
    Declared,
    Defined(Box<DataDescription>),
    /// Placed (local, with its placement) or resolved (import, `None`).
    Finalized {
        addr: usize,
        placed: Option<Placement>,
    },
}

/// The bytes an object occupies in its batch: `range` (offsets from the batch's base) of
/// batch `batch`, counted as one user of the pages it touches.
#[derive(Clone, Debug)]
pub(crate) struct Placement {
    pub batch: usize,
    pub range: std::ops::Range<usize>,
}

/// A finalized local function: its bytes (code, call stubs, GOT slots), its trap sites in
/// its batch's registration, its unwind group in the batch, and its own debugger image.
pub(crate) struct PlacedFunction {
    pub placement: Placement,
    pub trap_sites: std::ops::Range<usize>,
    /// The function's index among its batch's registered functions.
    pub region_func: usize,
    pub frame_group: usize,
    pub debug: Option<crate::gdb_jit::GdbRegistration>,
}

/// One finalized batch: its pages, and the trap sites and unwind groups of its functions.
/// Released when its last live object is freed.
pub(crate) struct LiveBatch {
    /// `None` when the batch placed no function.
    pub traps: Option<Registration>,
    /// Unwind info of the batch's live functions, in groups (`frames.rs`).
    pub frames: Vec<crate::frames::FrameGroup>,
    pub pages: BatchPages,
    /// Functions and data objects of the batch not freed yet.
    pub live: usize,
}

/// Configuration of a module: the symbol table imports are resolved from first, the
/// compilation flags for [`Module::define_function`], and the profiler map.
#[derive(Debug, Clone)]
pub struct JitBuilder {
    symbols: HashMap<String, usize>,
    flags: Flags,
    isa: Option<Arc<dyn TargetIsa>>,
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
                probestack_size_log2: Some(DEFAULT_PROBESTACK_SIZE_LOG2),
                ..Flags::default()
            },
            isa: None,
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
    pub fn opt_level(&mut self, level: OptLevel) -> &mut Self {
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

    /// Compile IR for `isa` (default: the host's ISA with its CPU's features, from
    /// `kestrel_codegen::isa::host`). The code runs in this process, so `isa` must be the
    /// host's ISA, with features the host CPU has.
    pub fn isa(&mut self, isa: Arc<dyn TargetIsa>) -> &mut Self {
        self.isa = Some(isa);
        self
    }

    /// The module.
    pub fn build(self) -> JitModule {
        let isa = self.isa.unwrap_or_else(|| {
            kestrel_codegen::isa::host()
                .expect("kestrel-jit builds only for a host ISA Kestrel compiles for")
                .finish()
        });
        JitModule {
            symbols: self.symbols,
            flags: self.flags,
            isa,
            perf_map: self.perf_map,
            debug_info: self.debug_info,
            decls: Declarations::default(),
            batches: Vec::new(),
            free_batches: Vec::new(),
            compile_ctx: Default::default(),
            memory: CodeMemory::default(),
        }
    }
}

/// In-process code: functions declared, defined, finalized into W^X memory, and called.
///
/// Dropping the module unmaps its code and data; no code of it may be running then, and
/// pointers from [`get_finalized_function`](Self::get_finalized_function) and
/// [`get_finalized_data`](Self::get_finalized_data) become dangling.
pub struct JitModule {
    pub(crate) symbols: HashMap<String, usize>,
    pub(crate) flags: Flags,
    /// The target IR is compiled for, and whose code and unwind rules are placed.
    pub(crate) isa: Arc<dyn TargetIsa>,
    pub(crate) perf_map: bool,
    pub(crate) debug_info: bool,
    /// Functions and data objects, one namespace, with where each stands.
    pub(crate) decls: Declarations<State, DataState>,
    /// By batch index; a released batch leaves `None` so indices stay stable.
    pub(crate) batches: Vec<Option<LiveBatch>>,
    /// Indices of `None` slots in `batches`, reused by the next finalize.
    pub(crate) free_batches: Vec<usize>,
    /// The backend's memory, kept from one compiled function to the next.
    pub(crate) compile_ctx: kestrel_codegen::machinst::compile::CompileContext,
    /// The arenas. Last field: dropped after every registration pointing into them
    /// (debugger images in `decls`, unwind groups and trap sites in `batches`).
    pub(crate) memory: CodeMemory,
}

impl std::fmt::Debug for JitModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitModule")
            .field("functions", &self.decls.funcs().len())
            .field("data", &self.decls.data_objects().len())
            .field("batches", &self.batches.iter().flatten().count())
            .field("batch_slots", &self.batches.len())
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

    /// The target the module compiles IR for and places code of.
    pub fn isa(&self) -> &Arc<dyn TargetIsa> {
        &self.isa
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
            DataState::Finalized { addr, .. } => Ok(addr as *const u8),
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

    /// Release finalized local function `id`, whatever else was finalized with it: its trap
    /// sites (no longer reported), its `.eh_frame` records (its unwind group, at most
    /// `frames::GROUP` functions of its batch, is registered anew without it), its GDB JIT
    /// image, and the pages of its code, call stubs and GOT slots that no other live
    /// function of its batch uses (decommitted and reused by later finalizes). Its perf-map
    /// line stays: the map is append-only, and perf resolves samples by address, so the
    /// line names a dead range (until a later line names code placed there). The
    /// declaration stays: `id` can be defined and finalized again (new code, maybe at the
    /// same address). Cost: O(its pages + its trap sites + its unwind group's records), plus
    /// a logarithmic search of the arena's free runs per run of pages released (and
    /// whatever libgcc's `__deregister_frame` costs).
    ///
    /// An error (`NotFreeable`) leaves everything as it was; a `Memory` error means the
    /// function is freed but some of its pages could not be decommitted (they stay mapped,
    /// counted in [`memory_stats`](Self::memory_stats), and are never reused).
    ///
    /// # Safety
    /// No thread may be running the function, and no code or pointer that will still be used
    /// may refer to it: calls to it from other finalized code, data holding its address, and
    /// pointers obtained from [`get_finalized_function`](Self::get_finalized_function)
    /// dangle afterwards.
    pub unsafe fn free_function(&mut self, id: FuncId) -> Result<(), JitError> {
        let decl = self.decl(id)?;
        if !matches!(
            decl.state,
            State::Finalized {
                placed: Some(_),
                ..
            }
        ) {
            return Err(JitError::NotFreeable {
                name: decl.name.clone(),
            });
        }
        let state = std::mem::replace(&mut self.decls.func_mut(id)?.state, State::Declared);
        let State::Finalized {
            placed: Some(placed),
            ..
        } = state
        else {
            unreachable!("checked above")
        };
        let PlacedFunction {
            placement,
            trap_sites,
            region_func,
            frame_group,
            debug,
        } = *placed;
        // The debugger, the unwinder and the trap handler stop looking at the code before
        // its pages go.
        drop(debug);
        let batch = self.batches[placement.batch]
            .as_mut()
            .expect("a finalized function's batch is alive");
        batch.frames[frame_group].remove(id.index());
        if let Some(traps) = &batch.traps {
            traps.retire(trap_sites, region_func);
        }
        self.release(placement)
    }

    /// Release finalized local data object `id`: the pages it occupies that no other live
    /// object of its batch uses. The declaration stays: `id` can be defined and finalized
    /// again. Without this, data lives until the module is dropped. Cost: O(its pages), plus
    /// the free-run search as for functions.
    /// Errors as for [`free_function`](Self::free_function).
    ///
    /// # Safety
    /// No thread may be using the object, and no code or pointer that will still be used may
    /// refer to it: code referring to it (PC-relative or through a GOT slot), data holding
    /// its address, and pointers from [`get_finalized_data`](Self::get_finalized_data)
    /// dangle afterwards.
    pub unsafe fn free_data(&mut self, id: DataId) -> Result<(), JitError> {
        let decl = self.decls.data(id)?;
        if !matches!(
            decl.state,
            DataState::Finalized {
                placed: Some(_),
                ..
            }
        ) {
            return Err(JitError::NotFreeable {
                name: decl.name.clone(),
            });
        }
        let state = std::mem::replace(&mut self.decls.data_mut(id)?.state, DataState::Declared);
        let DataState::Finalized {
            placed: Some(placement),
            ..
        } = state
        else {
            unreachable!("checked above")
        };
        self.release(placement)
    }

    /// One object of a batch is gone: give back the pages only it used, and the batch once
    /// it has no live object (its trap registration goes with it).
    fn release(&mut self, placement: Placement) -> Result<(), JitError> {
        let slot = &mut self.batches[placement.batch];
        let batch = slot.as_mut().expect("a placed object's batch is alive");
        // Invariant: `live` counts the batch's finalized objects, this one among them.
        batch.live -= 1;
        let result = self.memory.drop_user(&mut batch.pages, placement.range);
        if batch.live == 0 {
            *slot = None;
            self.free_batches.push(placement.batch);
        }
        result.map_err(|source| JitError::Memory {
            op: "munmap of freed code or data pages",
            source,
        })
    }

    /// What the module's code and data occupy now (see [`MemoryStats`]).
    pub fn memory_stats(&self) -> MemoryStats {
        self.memory.stats()
    }

    /// Bytes of committed code pages (read-execute) used by live functions.
    pub fn code_bytes_mapped(&self) -> usize {
        self.memory.stats().code_bytes
    }

    /// The declared signature of `id`.
    pub fn signature(&self, id: FuncId) -> Result<&Signature, JitError> {
        Ok(&self.decl(id)?.signature)
    }

    /// Give local function `id` its code, to be placed by the next
    /// [`finalize_definitions`](Self::finalize_definitions). The code is checked against the
    /// declaration (signature) and itself (relocations and trap sites inside the code).
    pub fn define_function(&mut self, id: FuncId, func: CompiledFunction) -> Result<(), JitError> {
        // The code runs in this process: an ISA other than the host's (which `JitBuilder::isa`
        // allows to be set) would pass the relocation check below and then crash.
        if self.isa.name() != crate::arch::host::NAME {
            return Err(JitError::ForeignIsa {
                isa: self.isa.name(),
                host: crate::arch::host::NAME,
            });
        }
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
            if !self.isa.reloc_kinds().contains(&r.kind) {
                return Err(JitError::ForeignReloc {
                    name: name(),
                    kind: r.kind,
                    offset: r.offset,
                    isa: self.isa.name(),
                });
            }
            if r.offset as usize + r.kind.size() as usize > len {
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

    /// Resolve every import, then place all functions and data objects defined since the
    /// last finalize in one new batch of pages (see `link.rs`), patch their relocations and
    /// register their trap sites, unwind info and (if on) debugger and perf-map entries.
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
        let plan = abi::classify(&*self.isa, &decl.signature)?;
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

#[cfg(test)]
mod tests {
    use kestrel_ir::{AbiParam, CallConv, TrapCode, Type};

    use super::*;
    use crate::compiled::TrapSite;
    use crate::memory::page_size;
    use crate::traps::registry;

    fn sig() -> Signature {
        let mut s = Signature::new(CallConv::SystemV);
        s.params = vec![AbiParam::new(Type::I64)];
        s.returns = vec![AbiParam::new(Type::I64)];
        s
    }

    /// `pad` nops, then `ud2` (a trap site with `code`), then `ret`.
    fn trapping(pad: usize, code: u8) -> CompiledFunction {
        let mut bytes = vec![0x90; pad];
        bytes.extend([0x0f, 0x0b, 0xc3]);
        CompiledFunction {
            traps: vec![TrapSite {
                offset: pad as u32,
                code: TrapCode::user(code).unwrap(),
            }],
            ..CompiledFunction::new(bytes, sig())
        }
    }

    fn define(m: &mut JitModule, name: &str, f: CompiledFunction) -> FuncId {
        let id = m.declare_function(name, Linkage::Local, &sig()).unwrap();
        m.define_function(id, f).unwrap();
        id
    }

    #[test]
    fn a_freed_functions_trap_sites_are_gone_even_where_new_code_reuses_its_pages() {
        let page = page_size();
        let mut m = JitModule::new();
        // `a` fills the first page; `b` starts on the second, which only it uses.
        let a = define(&mut m, "a", trapping(page - 3, 1));
        let b = define(&mut m, "b", trapping(40, 2));
        m.finalize_definitions().unwrap();
        let site = |m: &JitModule, id, pad| m.get_finalized_function(id).unwrap() as usize + pad;
        let (a_site, b_site) = (site(&m, a, page - 3), site(&m, b, 40));
        assert_eq!(b_site % page, 40, "b starts its own page");
        assert_eq!(
            registry::locate(b_site)
                .and_then(|l| l.trap)
                .map(|t| t.func),
            Some(b.index() as u32)
        );
        unsafe { m.free_function(b) }.unwrap();
        assert!(registry::locate(b_site).and_then(|l| l.trap).is_none());
        assert_eq!(
            registry::locate(a_site)
                .and_then(|l| l.trap)
                .map(|t| t.func),
            Some(a.index() as u32)
        );

        // The next one-page batch takes the freed page (best fit), with a site at the same
        // address: the live one is found, not the retired one of the first batch.
        let c = define(&mut m, "c", trapping(40, 3));
        m.finalize_definitions().unwrap();
        assert_eq!(site(&m, c, 40), b_site);
        let found = registry::locate(b_site).and_then(|l| l.trap).unwrap();
        assert_eq!(
            (found.func, found.code),
            (c.index() as u32, TrapCode::user(3).unwrap())
        );
        unsafe { m.free_function(a) }.unwrap();
        assert!(registry::locate(a_site).and_then(|l| l.trap).is_none());
        assert!(registry::locate(b_site).and_then(|l| l.trap).is_some());
    }

    #[test]
    fn a_data_only_batch_is_released_by_freeing_its_objects() {
        let page = page_size();
        let mut m = JitModule::new();
        let ro = m.declare_data("ro", Linkage::Local, false).unwrap();
        let rw = m.declare_data("rw", Linkage::Local, true).unwrap();
        m.define_data(ro, &DataDescription::bytes(vec![1u8; page + 1]))
            .unwrap();
        m.define_data(rw, &DataDescription::bytes([2u8; 8]))
            .unwrap();
        m.finalize_definitions().unwrap();
        assert_eq!(m.memory_stats().data_bytes, 3 * page);
        assert_eq!(m.memory_stats().code_bytes, 0);
        unsafe { m.free_data(ro) }.unwrap();
        assert_eq!(m.memory_stats().data_bytes, page);
        let rw_addr = m.get_finalized_data(rw).unwrap();
        assert_eq!(unsafe { *rw_addr }, 2);
        unsafe { m.free_data(rw) }.unwrap();
        assert_eq!(m.memory_stats().data_bytes, 0);
        assert!(format!("{m:?}").contains("batches: 0"), "{m:?}");
    }
}
