//! A compiled module: validated, decoded, every defined function translated and compiled
//! into one JIT module, ready to be instantiated any number of times.
//!
//! The [`Config`] chooses the bounds-check mode and the mid-end's opt level (`config.rs`);
//! the module records the bounds-check mode its code was compiled for, and its instances lay
//! out their memories to match.
//!
//! Pipeline (each step's contract is in its own file):
//! `features::validate_declarations` → `ModuleInfo::decode` → for each function
//! `features::validate_body`, `translate_function` and the host backend's
//! `compile_function` → `JitModule::define_function` → `finalize_definitions`. Each body is
//! decoded once: validation keeps its operators, and the translation replays them.
//!
//! Functions are independent, so translation and compilation run in parallel on rayon's
//! global pool ([`translate_and_compile`]), largest body first from a shared counter; each
//! is deterministic and the results are gathered by function index, so the module is the
//! one a serial compile gives (a test compares them byte for byte), and an error is the one
//! of the lowest-numbered failing
//! function. Each worker translates a function and compiles it at once, in memory it keeps
//! (a [`TranslateContext`] and a [`CompileContext`]), and hands the IR back for the next
//! function: only machine code outlives a function's turn, so the module's IR never sits
//! in memory all at once. Each pool thread keeps that memory for the next module
//! ([`release_compile_memory`] frees it). Declaring and defining into the JIT stays serial.
//!
//! Cost: linear in the module's size, plus the backend's cost per function, divided among
//! the pool's threads.

use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use kestrel_codegen::isa::x64::{Flags, OptLevel};
use kestrel_codegen::machinst::compile::CompileContext;
use kestrel_codegen::machinst::{CodegenError, CompiledCode};
use kestrel_ir::Function;
use kestrel_jit::{with_ir_name, FuncId, JitBuilder, Linkage};
use rayon::prelude::*;
use wasmparser::{BinaryReader, FuncValidatorAllocations, FunctionBody};

use crate::compile_times::{CompileTimes, WorkerTimes};
use crate::config::{BoundsChecks, Config};
use crate::error::WasmError;
use crate::features;
use crate::module_info::ModuleInfo;
use crate::runtime::func::Code;
use crate::runtime::libcalls::Libcall;
use crate::runtime::memory::guard_pages_available;
use crate::translate::{self, func_name, sig, TranslateContext};

/// A compiled module; cheap to clone.
#[derive(Clone)]
pub struct Module {
    pub(crate) inner: Rc<CompiledModule>,
}

pub(crate) struct CompiledModule {
    pub info: ModuleInfo,
    /// The bytes of each data segment.
    pub data: Vec<Vec<u8>>,
    pub code: Rc<Code>,
    /// JIT ids of the defined functions, by defined-function index.
    pub ids: Vec<FuncId>,
    /// How the code keeps accesses in bounds, and so which memories it may use.
    pub bounds_checks: BoundsChecks,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("functions", &self.inner.info.funcs.len())
            .finish_non_exhaustive()
    }
}

/// Validate and decode `bytes` and translate every defined function to IR with memory
/// accesses checked as `checks` says (no code generation): what [`Module::with_config`]
/// compiles, for inspection and tests. As there, each body is validated right before its
/// translation, which takes the facts the validation learned (see
/// [`features::validate_body`]); the first failing function's error is
/// [`features::validate`]'s.
pub fn translate_module(
    bytes: &[u8],
    checks: BoundsChecks,
) -> Result<(ModuleInfo, Vec<Function>), WasmError> {
    let bodies = features::validate_declarations(bytes)?;
    let info = ModuleInfo::decode(bytes)?;
    let work: Vec<(u32, features::BodyValidator)> =
        (info.num_imported_funcs..).zip(bodies).collect();
    let funcs = work
        .into_par_iter()
        .map_init(
            || {
                (
                    TranslateContext::new(),
                    FuncValidatorAllocations::default(),
                    Vec::new(),
                )
            },
            |(ctx, allocs, decoded), (index, validator)| {
                let range = info.bodies[(index - info.num_imported_funcs) as usize].clone();
                let body = FunctionBody::new(BinaryReader::new(&bytes[range.clone()], range.start));
                features::validate_body(
                    bytes,
                    validator,
                    &body,
                    allocs,
                    ctx.body_facts_for_next(),
                    decoded,
                )?;
                ctx.body_facts_known();
                translate::translate_function_in(ctx, &info, bytes, index, checks, Some(decoded))
            },
        )
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok((info, funcs))
}

/// Compile `funcs` with the host's backend ([`kestrel_jit::host_isa`]), in parallel (each worker keeps one compile
/// context for the functions it takes); the results in `funcs`' order.
pub fn compile_functions(
    funcs: &[Function],
    flags: &Flags,
) -> Vec<Result<CompiledCode, CodegenError>> {
    funcs
        .par_iter()
        .map_init(CompileContext::new, |ctx, f| {
            kestrel_jit::host_isa().compile_in(ctx, f, flags)
        })
        .collect()
}

/// Translate and compile every defined function of the validated, decoded module `bytes`
/// with the host's backend, in parallel, each worker translating a function and compiling
/// it in memory it keeps; the results by defined-function index. A function that fails to
/// translate or compile gives its error.
pub fn translate_and_compile(
    info: &ModuleInfo,
    bytes: &[u8],
    checks: BoundsChecks,
    flags: &Flags,
) -> Vec<Result<CompiledCode, WasmError>> {
    let defined = info.num_imported_funcs..info.funcs.len() as u32;
    let work: Vec<(u32, Option<features::BodyValidator>)> =
        defined.map(|index| (index, None)).collect();
    run_workers(info, bytes, checks, flags, work, None)
}

/// [`translate_and_compile`] for a module whose declarations are validated, each worker
/// first validating the body it takes with its validator from
/// [`features::validate_declarations`] (in function order); the first failing function's
/// error is [`features::validate`]'s. With `times`, each worker adds the time of its steps
/// there when it finishes.
pub fn validate_translate_and_compile(
    info: &ModuleInfo,
    bytes: &[u8],
    checks: BoundsChecks,
    flags: &Flags,
    bodies: Vec<features::BodyValidator>,
    times: Option<&Mutex<CompileTimes>>,
) -> Vec<Result<CompiledCode, WasmError>> {
    let defined = info.num_imported_funcs..info.funcs.len() as u32;
    debug_assert_eq!(bodies.len(), defined.len());
    let work = defined.zip(bodies.into_iter().map(Some)).collect();
    run_workers(info, bytes, checks, flags, work, times)
}

/// What each worker keeps across the functions it takes, and each pool thread across the
/// modules it compiles (as a compiler keeps its contexts between modules): its buffers are
/// as large as the largest function the thread has compiled, until
/// [`release_compile_memory`].
#[derive(Default)]
struct Worker {
    translator: TranslateContext,
    compiler: CompileContext,
    validation: FuncValidatorAllocations,
    /// The operator list validation fills and translation replays (empty between
    /// functions; see [`features::reuse_decoded`]).
    decoded: features::DecodedOps<'static>,
}

thread_local! {
    /// The worker memory this pool thread keeps between modules (taken while it compiles).
    static KEPT_WORKER: std::cell::Cell<Option<Box<Worker>>> = const { std::cell::Cell::new(None) };
}

/// Frees the translation and compilation memory that the compiling threads keep between
/// modules (each thread's is as large as the largest function it has compiled). The next
/// module's compile allocates it afresh.
pub fn release_compile_memory() {
    rayon::broadcast(|_| KEPT_WORKER.with(|kept| kept.take()));
}

fn run_workers(
    info: &ModuleInfo,
    bytes: &[u8],
    checks: BoundsChecks,
    flags: &Flags,
    work: Vec<(u32, Option<features::BodyValidator>)>,
    times: Option<&Mutex<CompileTimes>>,
) -> Vec<Result<CompiledCode, WasmError>> {
    // Largest bodies first, handed out one at a time from a shared counter (greedy
    // longest-first scheduling): the longest compiles start at once instead of whenever a
    // worker's share of the list reaches them (a module's one huge function, left for
    // last, would be compiled alone while the other workers idle).
    let body_len = |index: u32| info.bodies[(index - info.num_imported_funcs) as usize].len();
    let mut by_size: Vec<(usize, (u32, Option<features::BodyValidator>))> =
        work.into_iter().enumerate().collect();
    by_size.sort_by_key(|(_, (index, _))| std::cmp::Reverse(body_len(*index)));
    let n = by_size.len();
    let queue: Vec<Mutex<Option<_>>> = by_size.into_iter().map(|w| Mutex::new(Some(w))).collect();
    let results: Vec<Mutex<Option<Result<CompiledCode, WasmError>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    rayon::broadcast(|_| {
        let mut w = KEPT_WORKER
            .with(|kept| kept.take())
            .unwrap_or_else(|| Box::new(Worker::default()));
        w.translator
            .set_for_mid_end(flags.opt_level == OptLevel::Speed);
        // The builder's type checks go with the verifier (`Config::verify`).
        w.translator.set_type_checks(!flags.verified);
        let mut timed = times.map(|_| WorkerTimes::default());
        let mut compiled_any = false;
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= n {
                break;
            }
            // Each `k` is taken by exactly one worker, so the slot still holds its item.
            let Some((position, (index, validator))) = lock(&queue[k]).take() else {
                continue;
            };
            let result = compile_one(
                &mut w,
                info,
                bytes,
                checks,
                flags,
                (index, validator),
                timed.as_mut(),
            );
            *lock(&results[position]) = Some(result);
            compiled_any = true;
        }
        if let (Some(times), Some(mine), true) = (times, &timed, compiled_any) {
            lock(times).absorb(mine);
        }
        KEPT_WORKER.with(|kept| kept.set(Some(w)));
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .expect("every position was compiled")
        })
        .collect()
}

/// `m`'s contents, also after a panic elsewhere poisoned it (each slot is written once).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Validate (when given a validator), translate and compile defined function `index` in
/// worker `w`'s memory, adding each step's time to `times` when given.
fn compile_one(
    w: &mut Worker,
    info: &ModuleInfo,
    bytes: &[u8],
    checks: BoundsChecks,
    flags: &Flags,
    (index, validator): (u32, Option<features::BodyValidator>),
    mut times: Option<&mut WorkerTimes>,
) -> Result<CompiledCode, WasmError> {
    let mut clock = times.is_some().then(Instant::now);
    let began = clock;
    // The time since the last lap, added to the step `slot` picks (only when timing).
    let mut lap = |times: &mut Option<&mut WorkerTimes>, slot: fn(&mut WorkerTimes) -> &mut _| {
        if let (Some(t), Some(start)) = (times.as_deref_mut(), clock.as_mut()) {
            let now = Instant::now();
            *slot(t) += now - *start;
            *start = now;
        }
    };
    // Validation decodes the operators once, into this list; translation replays them.
    let mut decoded = features::reuse_decoded(std::mem::take(&mut w.decoded));
    let validated = match validator {
        Some(validator) => {
            let range = info.bodies[(index - info.num_imported_funcs) as usize].clone();
            let body = FunctionBody::new(BinaryReader::new(&bytes[range.clone()], range.start));
            let facts = w.translator.body_facts_for_next();
            let checked = features::validate_body(
                bytes,
                validator,
                &body,
                &mut w.validation,
                facts,
                &mut decoded,
            );
            if let Err(e) = checked {
                w.decoded = features::reuse_decoded(decoded);
                return Err(e);
            }
            w.translator.body_facts_known();
            lap(&mut times, |t| &mut t.validate_bodies);
            true
        }
        None => false,
    };
    let replay = validated.then_some(&mut decoded);
    let translated =
        translate::translate_function_in(&mut w.translator, info, bytes, index, checks, replay);
    w.decoded = features::reuse_decoded(decoded);
    let mut f = translated?;
    lap(&mut times, |t| &mut t.translate);
    // The translated function is this compile's own: the mid-end optimizes it in place.
    let compiler = &mut w.compiler;
    let code = match times {
        Some(t) => {
            let timed = Some(&mut t.backend);
            let code = kestrel_jit::host_isa().compile_consuming_in(compiler, &mut f, flags, timed);
            if let Some(began) = began {
                t.function_took(index, began.elapsed());
            }
            code
        }
        None => kestrel_jit::host_isa().compile_consuming_in(compiler, &mut f, flags, None),
    };
    w.translator.recycle(f);
    code.map_err(|error| WasmError::Compile {
        func: index,
        message: error.to_string(),
    })
}

impl Module {
    /// Compile a binary module with the default [`Config`] (guard pages); see the module
    /// docs.
    pub fn new(bytes: &[u8]) -> Result<Module, WasmError> {
        Module::with_config(bytes, &Config::default())
    }

    /// Compile a binary module with `config`. Guard pages are used when requested and this
    /// process can reserve a guard memory; otherwise accesses are checked explicitly
    /// ([`Module::bounds_checks`] tells which).
    pub fn with_config(bytes: &[u8], config: &Config) -> Result<Module, WasmError> {
        Module::compile(bytes, config, None)
    }

    /// [`Module::with_config`], also measuring where the compile time goes (see
    /// [`CompileTimes`]; the clock costs a little, so the total is slightly above an
    /// untimed compile's).
    pub fn with_config_timed(
        bytes: &[u8],
        config: &Config,
    ) -> Result<(Module, CompileTimes), WasmError> {
        let times = Mutex::new(CompileTimes::default());
        let module = Module::compile(bytes, config, Some(&times))?;
        let times = times.into_inner().unwrap_or_else(|p| p.into_inner());
        Ok((module, times))
    }

    fn compile(
        bytes: &[u8],
        config: &Config,
        times: Option<&Mutex<CompileTimes>>,
    ) -> Result<Module, WasmError> {
        let start = Instant::now();
        let bounds_checks = match config.bounds_checks {
            BoundsChecks::Guard if guard_pages_available() => BoundsChecks::Guard,
            _ => BoundsChecks::Explicit,
        };
        // Function bodies are validated by the workers that translate them.
        let bodies = features::validate_declarations(bytes)?;
        let info = ModuleInfo::decode(bytes)?;
        let mut builder = JitBuilder::new();
        for lc in Libcall::ALL {
            builder.symbol(lc.symbol(), lc.address());
        }
        let mut jit = builder.build();
        let compile = |func: u32, e: kestrel_jit::JitError| WasmError::Compile {
            func,
            message: e.to_string(),
        };
        let defined = info.num_imported_funcs..info.funcs.len() as u32;
        let mut ids = Vec::with_capacity(defined.len());
        let mut signatures = Vec::with_capacity(defined.len());
        for index in defined {
            let signature = sig::wasm_signature(info.func_type(index), 0)?;
            let id = with_ir_name(&func_name(index), |name| {
                jit.declare_function(name, Linkage::Local, &signature)
            })
            .map_err(|e| compile(index, e))?;
            ids.push(id);
            signatures.push(signature);
        }
        let flags = Flags {
            opt_level: config.opt_level,
            // The verifier's pass is skipped when the configuration says so (see
            // `Config::verify`), and with it the builder's per-instruction type checks.
            verified: !config.verify,
            // Probes keep a large frame from skipping the guard page below the stack (the
            // stack limit check bounds Wasm's own frames; probes cover the rest).
            probestack_size_log2: Some(kestrel_codegen::isa::x64::probestack::DEFAULT_SIZE_LOG2),
            ..Flags::default()
        };
        let parallel_start = Instant::now();
        let decode = parallel_start - start;
        let compiled =
            validate_translate_and_compile(&info, bytes, bounds_checks, &flags, bodies, times);
        let link_start = Instant::now();
        for (((signature, &id), code), index) in signatures
            .into_iter()
            .zip(&ids)
            .zip(compiled)
            .zip(info.num_imported_funcs..)
        {
            let definition = jit.compiled_from_codegen(code?, signature);
            jit.define_function(id, definition)
                .map_err(|e| compile(index, e))?;
        }
        jit.finalize_definitions().map_err(|e| compile(0, e))?;
        if let Some(times) = times {
            let end = Instant::now();
            let mut t = lock(times);
            t.decode = decode;
            t.parallel_wall = link_start - parallel_start;
            t.link = end - link_start;
            t.wall = end - start;
            t.functions = ids.len();
        }
        let data = info
            .data
            .iter()
            .map(|d| bytes[d.bytes.clone()].to_vec())
            .collect();
        Ok(Module {
            inner: Rc::new(CompiledModule {
                info,
                data,
                code: Rc::new(Code { jit }),
                ids,
                bounds_checks,
            }),
        })
    }

    /// How the compiled code keeps memory accesses in bounds.
    pub fn bounds_checks(&self) -> BoundsChecks {
        self.inner.bounds_checks
    }

    /// What the module declares.
    pub fn info(&self) -> &ModuleInfo {
        &self.inner.info
    }
}
