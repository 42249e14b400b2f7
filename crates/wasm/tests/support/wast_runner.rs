//! A `.wast` script runner for Kestrel's Wasm engine: runs each directive of a spec-test
//! script and classifies it as passed, failed, or out of scope (needs a proposal Kestrel
//! refuses, detected from the validation error, or a construct outside the core numeric
//! world such as reference or vector values, threads or components).

use std::collections::HashMap;

use kestrel_wasm::{
    BoundsChecks, Config, Extern, Func, Global, Imports, Instance, InvokeError, Memory, Module,
    Table, Val, WasmError,
};
use wast::core::{NanPattern, WastArgCore, WastRetCore};
use wast::parser::{self, ParseBuffer};
use wast::{
    QuoteWat, QuoteWatTest, Wast, WastArg, WastDirective, WastExecute, WastInvoke, WastRet, Wat,
};

/// What happened to one directive.
pub enum Outcome {
    Pass,
    Fail(String),
    OutOfScope(String),
}

/// Totals for one script.
#[derive(Default, Debug, Clone)]
pub struct Report {
    pub passed: usize,
    pub failed: usize,
    pub out_of_scope: usize,
    /// `line: message` of each failure.
    pub failures: Vec<String>,
    /// Distinct out-of-scope reasons, with counts.
    pub scope_reasons: HashMap<String, usize>,
    /// Lines of the passing directives.
    pub passed_lines: Vec<usize>,
}

impl Report {
    fn record(&mut self, line: usize, outcome: Outcome) {
        match outcome {
            Outcome::Pass => {
                self.passed += 1;
                self.passed_lines.push(line);
            }
            Outcome::Fail(m) => {
                self.failed += 1;
                self.failures.push(format!("line {line}: {m}"));
            }
            Outcome::OutOfScope(r) => {
                self.out_of_scope += 1;
                *self.scope_reasons.entry(r).or_default() += 1;
            }
        }
    }
}

/// A module the script made, or why it is unavailable.
#[derive(Clone)]
enum Slot {
    /// Index into `Runner::instances`.
    Ready(usize),
    /// Needs a proposal Kestrel refuses: directives using it are out of scope.
    OutOfScope(String),
    /// Failed to compile or instantiate although in scope: directives using it fail.
    Broken(String),
}

struct Runner {
    /// How every module of the script is compiled.
    config: Config,
    imports: Imports,
    current: Option<Slot>,
    named: HashMap<String, Slot>,
    /// `module definition`s: their bytes, or why they are unavailable.
    definitions: HashMap<String, Result<Vec<u8>, Slot>>,
    /// Every instance made, and whether an out-of-scope module may have changed its state
    /// (it imported from it: its segments could have written to shared tables or memory
    /// before it failed). Failures on a tainted instance are out of scope, not failures.
    instances: Vec<(Instance, bool)>,
    /// Registered names and the instance (or unavailable slot) behind each.
    registered: HashMap<String, Slot>,
}

/// Run `text` (the script named `name`) with every module compiled for `checks`.
pub fn run_script(name: &str, text: &str, checks: BoundsChecks) -> Report {
    let mut report = Report::default();
    let mut lexer = wast::lexer::Lexer::new(text);
    // The suite tests names with bidirectional-override characters on purpose.
    lexer.allow_confusing_unicode(true);
    let buf = match ParseBuffer::new_with_lexer(lexer) {
        Ok(b) => b,
        Err(e) => {
            report.record(0, Outcome::Fail(format!("{name}: lexing failed: {e}")));
            return report;
        }
    };
    let wast: Wast = match parser::parse(&buf) {
        Ok(w) => w,
        Err(e) => {
            report.record(0, Outcome::Fail(format!("{name}: parsing failed: {e}")));
            return report;
        }
    };
    let mut runner = Runner {
        config: Config::with_bounds_checks(checks),
        imports: spectest_imports(),
        current: None,
        named: HashMap::new(),
        definitions: HashMap::new(),
        instances: Vec::new(),
        registered: HashMap::new(),
    };
    for directive in wast.directives {
        let (line, _) = directive.span().linecol_in(text);
        let outcome = runner.directive(directive);
        report.record(line + 1, outcome);
    }
    report
}

/// The `spectest` exports the host module leaves out, each with the refused proposal it
/// needs: a link error naming one is out of scope, not a failure.
const SPECTEST_OMITTED: [(&str, &str); 1] = [("shared_memory", "the threads proposal")];

/// The `spectest` host module of the spec tests.
fn spectest_imports() -> Imports {
    use wasmparser::{FuncType, ValType as T};
    let mut imports = Imports::new();
    let prints: [(&str, &[T]); 7] = [
        ("print", &[]),
        ("print_i32", &[T::I32]),
        ("print_i64", &[T::I64]),
        ("print_f32", &[T::F32]),
        ("print_f64", &[T::F64]),
        ("print_i32_f32", &[T::I32, T::F32]),
        ("print_f64_f64", &[T::F64, T::F64]),
    ];
    for (name, params) in prints {
        let ty = FuncType::new(params.iter().copied(), []);
        let f = Func::wrap(ty, |_| Ok(vec![])).expect("spectest function compiles");
        imports.define("spectest", name, Extern::Func(f));
    }
    let globals = [
        ("global_i32", Val::I32(666)),
        ("global_i64", Val::I64(666)),
        ("global_f32", Val::F32(666.6f32.to_bits())),
        ("global_f64", Val::F64(666.6f64.to_bits())),
    ];
    for (name, v) in globals {
        imports.define("spectest", name, Extern::Global(Global::new(v, false)));
    }
    let table = Table::new(wasmparser::RefType::FUNCREF, 10, Some(20)).expect("spectest table");
    imports.define("spectest", "table", Extern::Table(table));
    let memory = Memory::new(1, Some(2)).expect("spectest memory");
    imports.define("spectest", "memory", Extern::Memory(memory));
    imports
}

/// Why compiling `bytes` failed, as a slot.
fn failed_slot(e: WasmError) -> Slot {
    match e {
        WasmError::Unsupported { feature, .. } => Slot::OutOfScope(feature),
        other => Slot::Broken(other.to_string()),
    }
}

fn arg(a: &WastArg) -> Result<Val, String> {
    use wast::core::{AbstractHeapType, HeapType};
    match a {
        WastArg::Core(WastArgCore::I32(v)) => Ok(Val::I32(*v)),
        WastArg::Core(WastArgCore::I64(v)) => Ok(Val::I64(*v)),
        WastArg::Core(WastArgCore::F32(v)) => Ok(Val::F32(v.bits)),
        WastArg::Core(WastArgCore::F64(v)) => Ok(Val::F64(v.bits)),
        WastArg::Core(WastArgCore::RefExtern(n)) => Ok(Val::ExternRef(Some(*n as u64))),
        WastArg::Core(WastArgCore::RefNull(HeapType::Abstract {
            ty: AbstractHeapType::Func,
            ..
        })) => Ok(Val::FuncRef(0)),
        WastArg::Core(WastArgCore::RefNull(HeapType::Abstract {
            ty: AbstractHeapType::Extern,
            ..
        })) => Ok(Val::ExternRef(None)),
        other => Err(format!("argument {other:?}")),
    }
}

fn f32_matches(p: &NanPattern<wast::token::F32>, bits: u32) -> bool {
    let is_nan = bits & 0x7f80_0000 == 0x7f80_0000 && bits & 0x007f_ffff != 0;
    match p {
        NanPattern::CanonicalNan => bits & 0x7fff_ffff == 0x7fc0_0000,
        NanPattern::ArithmeticNan => is_nan && bits & 0x0040_0000 != 0,
        NanPattern::Value(v) => v.bits == bits,
    }
}

fn f64_matches(p: &NanPattern<wast::token::F64>, bits: u64) -> bool {
    let exp = 0x7ff0_0000_0000_0000u64;
    let quiet = 0x0008_0000_0000_0000u64;
    let is_nan = bits & exp == exp && bits & 0x000f_ffff_ffff_ffff != 0;
    match p {
        NanPattern::CanonicalNan => bits & !(1 << 63) == exp | quiet,
        NanPattern::ArithmeticNan => is_nan && bits & quiet != 0,
        NanPattern::Value(v) => v.bits == bits,
    }
}

/// Whether `got` matches `want`; `Err` for expectations outside the numeric world.
fn result_matches(want: &WastRet, got: &Val) -> Result<bool, String> {
    Ok(match (want, got) {
        (WastRet::Core(WastRetCore::I32(w)), Val::I32(g)) => w == g,
        (WastRet::Core(WastRetCore::I64(w)), Val::I64(g)) => w == g,
        (WastRet::Core(WastRetCore::F32(p)), Val::F32(g)) => f32_matches(p, *g),
        (WastRet::Core(WastRetCore::F64(p)), Val::F64(g)) => f64_matches(p, *g),
        (WastRet::Core(WastRetCore::RefNull(_)), Val::FuncRef(r)) => *r == 0,
        (WastRet::Core(WastRetCore::RefNull(_)), Val::ExternRef(r)) => r.is_none(),
        (WastRet::Core(WastRetCore::RefExtern(None)), Val::ExternRef(r)) => r.is_some(),
        (WastRet::Core(WastRetCore::RefExtern(Some(n))), Val::ExternRef(r)) => {
            *r == Some(*n as u64)
        }
        // Function identity is not observable from the host: any non-null funcref.
        (WastRet::Core(WastRetCore::RefFunc(_)), Val::FuncRef(r)) => *r != 0,
        (WastRet::Core(WastRetCore::I32(_) | WastRetCore::I64(_)), _)
        | (WastRet::Core(WastRetCore::F32(_) | WastRetCore::F64(_)), _)
        | (
            WastRet::Core(
                WastRetCore::RefNull(_) | WastRetCore::RefExtern(_) | WastRetCore::RefFunc(_),
            ),
            _,
        ) => false,
        (other, _) => return Err(format!("expected result {other:?}")),
    })
}

/// A trap message matches the expected one if either starts with the other (scripts
/// sometimes add detail, e.g. "uninitialized element 2").
fn trap_matches(expected: &str, got: &str) -> bool {
    expected.starts_with(got) || got.starts_with(expected)
}

impl Runner {
    fn slot(&self, id: Option<wast::token::Id>) -> Option<Slot> {
        match id {
            Some(id) => self.named.get(id.name()).cloned(),
            None => self.current.clone(),
        }
    }

    /// Compile and instantiate `bytes`. A module out of scope taints the instances it
    /// imports from; an import from a registered module that is out of scope makes this one
    /// out of scope too.
    fn instantiate(&mut self, bytes: &[u8]) -> Result<usize, WasmError> {
        let result =
            Module::with_config(bytes, &self.config).and_then(|m| Instance::new(&m, &self.imports));
        match result {
            Ok(i) => {
                self.instances.push((i, false));
                Ok(self.instances.len() - 1)
            }
            Err(e) => {
                if let WasmError::Link { module, .. } = &e {
                    if let Some(Slot::OutOfScope(r)) = self.registered.get(module) {
                        return Err(WasmError::Unsupported {
                            offset: 0,
                            feature: format!("imports from out-of-scope module `{module}` ({r})"),
                        });
                    }
                }
                if e.is_unsupported() {
                    self.taint_imported(bytes);
                }
                Err(e)
            }
        }
    }

    /// Mark the instances registered under the module names `bytes` imports from.
    fn taint_imported(&mut self, bytes: &[u8]) {
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            let Ok(wasmparser::Payload::ImportSection(r)) = payload else {
                continue;
            };
            for imp in r.into_imports().flatten() {
                if let Some(Slot::Ready(i)) = self.registered.get(imp.module) {
                    self.instances[*i].1 = true;
                }
            }
        }
    }

    /// The instance of a ready slot.
    fn instance(&self, index: usize) -> Instance {
        self.instances[index].0.clone()
    }

    fn define_module(&mut self, mut module: QuoteWat) -> Outcome {
        let name = module.name().map(|id| id.name().to_string());
        let (slot, outcome) = match module_bytes(&mut module) {
            Err(e) => (
                Slot::Broken(format!("encoding failed: {e}")),
                Outcome::Fail(format!("module did not encode: {e}")),
            ),
            Ok(bytes) => match self.instantiate(&bytes) {
                Ok(i) => (Slot::Ready(i), Outcome::Pass),
                Err(e) => match failed_slot(e) {
                    Slot::OutOfScope(r) => (Slot::OutOfScope(r.clone()), Outcome::OutOfScope(r)),
                    Slot::Broken(m) => (Slot::Broken(m.clone()), Outcome::Fail(m)),
                    Slot::Ready(_) => unreachable!(),
                },
            },
        };
        if let Some(name) = name {
            self.named.insert(name, slot.clone());
        }
        self.current = Some(slot);
        outcome
    }

    /// Run an invocation; `Err(outcome)` when it cannot be run.
    fn invoke(&self, inv: &WastInvoke) -> Result<Result<Vec<Val>, InvokeError>, Outcome> {
        let instance = match self.slot(inv.module) {
            Some(Slot::Ready(i)) => self.instance(i),
            Some(Slot::OutOfScope(r)) => return Err(Outcome::OutOfScope(r)),
            Some(Slot::Broken(m)) => return Err(Outcome::Fail(format!("module unusable: {m}"))),
            None => return Err(Outcome::Fail("no module to invoke".into())),
        };
        let args: Vec<Val> = inv
            .args
            .iter()
            .map(arg)
            .collect::<Result<_, _>>()
            .map_err(Outcome::OutOfScope)?;
        Ok(instance.invoke(inv.name, &args))
    }

    fn execute(&mut self, exec: WastExecute) -> Result<Result<Vec<Val>, InvokeError>, Outcome> {
        match exec {
            WastExecute::Invoke(inv) => self.invoke(&inv),
            WastExecute::Get { module, global, .. } => match self.slot(module) {
                Some(Slot::Ready(i)) => match self.instance(i).global(global) {
                    Some(v) => Ok(Ok(vec![v])),
                    None => Err(Outcome::Fail(format!("no global `{global}`"))),
                },
                Some(Slot::OutOfScope(r)) => Err(Outcome::OutOfScope(r)),
                _ => Err(Outcome::Fail("no module for get".into())),
            },
            WastExecute::Wat(mut wat) => {
                let bytes = wat
                    .encode()
                    .map_err(|e| Outcome::Fail(format!("encoding failed: {e}")))?;
                match self.instantiate(&bytes) {
                    Ok(_) => Ok(Ok(vec![])),
                    Err(WasmError::Trap(trap)) => Ok(Err(InvokeError::Trap {
                        trap,
                        func: None,
                        offset: None,
                    })),
                    Err(e) => Err(match failed_slot(e) {
                        Slot::OutOfScope(r) => Outcome::OutOfScope(r),
                        Slot::Broken(m) => Outcome::Fail(m),
                        Slot::Ready(_) => unreachable!(),
                    }),
                }
            }
        }
    }

    /// `assert_invalid` / `assert_malformed`: the module must be rejected. A rejection
    /// because a refused proposal is needed (a feature-gate message from Kestrel's
    /// validator, where the standard one names another problem) is out of scope, not a pass.
    ///
    /// A quoted text module goes through Kestrel's text reader (`wat_to_binary`, what
    /// `kestrel wasm run` reads `.wat` with): its rejection passes a malformed-text test; what
    /// it accepts must then be rejected by the validator like any binary.
    fn expect_rejection(&self, mut module: QuoteWat, message: &str) -> Outcome {
        if matches!(module, QuoteWat::QuoteComponent(..)) {
            return Outcome::OutOfScope("components".into());
        }
        let bytes = match module_bytes(&mut module) {
            Ok(b) => b,
            Err(NotEncoded::MalformedText(_)) => return Outcome::Pass,
            Err(e) => return Outcome::Fail(format!("could not encode: {e}")),
        };
        match Module::with_config(&bytes, &self.config) {
            // Scripts of proposals older than Wasm 3.0 may expect what 3.0 made valid (a
            // second memory or table): the standard 3.0 validator is the referee.
            Ok(_) if standard_accepts(&bytes) => {
                Outcome::OutOfScope(format!("expects \"{message}\", which Wasm 3.0 accepts"))
            }
            Ok(_) => Outcome::Fail(format!("module accepted, expected \"{message}\"")),
            Err(WasmError::Invalid { .. }) => {
                let ours = kestrel_wasm::features::validator()
                    .validate_all(&bytes)
                    .err();
                let standard =
                    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::WASM3)
                        .validate_all(&bytes)
                        .err();
                match (ours, standard) {
                    (Some(a), Some(b))
                        if a.message() != b.message()
                            && kestrel_wasm::features::is_feature_gate(a.message()) =>
                    {
                        Outcome::OutOfScope(format!("rejected earlier: {}", a.message()))
                    }
                    _ => Outcome::Pass,
                }
            }
            Err(WasmError::Unsupported { feature, .. }) => Outcome::OutOfScope(feature),
            Err(e) => Outcome::Fail(format!("rejected late ({e}), expected \"{message}\"")),
        }
    }

    /// Run `d`; a failure involving a tainted instance is out of scope.
    fn directive(&mut self, d: WastDirective) -> Outcome {
        let target = match &d {
            WastDirective::Invoke(inv) | WastDirective::AssertExhaustion { call: inv, .. } => {
                Some(inv.module)
            }
            WastDirective::AssertReturn { exec, .. } | WastDirective::AssertTrap { exec, .. } => {
                match exec {
                    WastExecute::Invoke(inv) => Some(inv.module),
                    WastExecute::Get { module, .. } => Some(*module),
                    WastExecute::Wat(_) => None,
                }
            }
            _ => None,
        };
        let tainted = match target.and_then(|m| self.slot(m)) {
            Some(Slot::Ready(i)) => self.instances[i].1,
            _ => false,
        };
        match self.directive_inner(d) {
            Outcome::Fail(m) if tainted => Outcome::OutOfScope(format!(
                "state changed by an out-of-scope module (failed: {m})"
            )),
            other => other,
        }
    }

    fn directive_inner(&mut self, d: WastDirective) -> Outcome {
        match d {
            WastDirective::Module(m) => self.define_module(m),
            WastDirective::ModuleDefinition(mut m) => {
                let name = m.name().map(|id| id.name().to_string());
                let (entry, outcome) = match m.encode() {
                    Ok(bytes) => match Module::with_config(&bytes, &self.config) {
                        Ok(_) => (Ok(bytes), Outcome::Pass),
                        Err(e) => match failed_slot(e) {
                            Slot::OutOfScope(r) => {
                                (Err(Slot::OutOfScope(r.clone())), Outcome::OutOfScope(r))
                            }
                            Slot::Broken(m) => (Err(Slot::Broken(m.clone())), Outcome::Fail(m)),
                            Slot::Ready(_) => unreachable!(),
                        },
                    },
                    Err(e) => {
                        let m = format!("encoding failed: {e}");
                        (Err(Slot::Broken(m.clone())), Outcome::Fail(m))
                    }
                };
                if let Some(n) = name {
                    self.definitions.insert(n, entry);
                }
                outcome
            }
            WastDirective::ModuleInstance {
                instance, module, ..
            } => {
                let definition = module.and_then(|m| self.definitions.get(m.name()).cloned());
                let slot = match definition {
                    Some(Ok(bytes)) => match self.instantiate(&bytes) {
                        Ok(i) => Slot::Ready(i),
                        Err(e) => failed_slot(e),
                    },
                    Some(Err(slot)) => slot,
                    None => Slot::Broken("instance of an unknown definition".into()),
                };
                if let Some(id) = instance {
                    self.named.insert(id.name().to_string(), slot.clone());
                }
                self.current = Some(slot.clone());
                match slot {
                    Slot::Ready(_) => Outcome::Pass,
                    Slot::OutOfScope(r) => Outcome::OutOfScope(r),
                    Slot::Broken(m) => Outcome::Fail(m),
                }
            }
            WastDirective::Register { name, module, .. } => {
                let slot = self.slot(module);
                if let Some(slot) = &slot {
                    self.registered.insert(name.to_string(), slot.clone());
                }
                match slot {
                    Some(Slot::Ready(i)) => {
                        let instance = self.instance(i);
                        self.imports.define_instance(name, &instance);
                        Outcome::Pass
                    }
                    Some(Slot::OutOfScope(r)) => Outcome::OutOfScope(r),
                    _ => Outcome::Fail("register: module unavailable".into()),
                }
            }
            WastDirective::Invoke(inv) => match self.invoke(&inv) {
                Ok(Ok(_)) => Outcome::Pass,
                Ok(Err(e)) => Outcome::Fail(format!("invoke {}: {e}", inv.name)),
                Err(o) => o,
            },
            WastDirective::AssertReturn { exec, results, .. } => {
                let what = describe(&exec);
                match self.execute(exec) {
                    Ok(Ok(got)) => {
                        if got.len() != results.len() {
                            return Outcome::Fail(format!("{what}: got {got:?}, want {results:?}"));
                        }
                        for (w, g) in results.iter().zip(&got) {
                            match result_matches(w, g) {
                                Ok(true) => {}
                                Ok(false) => {
                                    return Outcome::Fail(format!(
                                        "{what}: got {got:?}, want {results:?}"
                                    ))
                                }
                                Err(r) => return Outcome::OutOfScope(r),
                            }
                        }
                        Outcome::Pass
                    }
                    Ok(Err(e)) => Outcome::Fail(format!("{what}: {e}")),
                    Err(o) => o,
                }
            }
            WastDirective::AssertTrap { exec, message, .. } => {
                let what = describe(&exec);
                match self.execute(exec) {
                    Ok(Err(InvokeError::Trap { trap: t, .. }))
                        if trap_matches(message, &t.to_string()) =>
                    {
                        Outcome::Pass
                    }
                    Ok(Err(e)) => Outcome::Fail(format!("{what}: {e}, expected \"{message}\"")),
                    Ok(Ok(v)) => {
                        Outcome::Fail(format!("{what}: returned {v:?}, expected \"{message}\""))
                    }
                    Err(o) => o,
                }
            }
            WastDirective::AssertExhaustion { call, message, .. } => match self.invoke(&call) {
                Ok(Err(InvokeError::Trap { trap: t, .. }))
                    if trap_matches(message, &t.to_string()) =>
                {
                    Outcome::Pass
                }
                Ok(Err(e)) => Outcome::Fail(format!("{}: {e}, expected \"{message}\"", call.name)),
                Ok(Ok(v)) => Outcome::Fail(format!("{}: returned {v:?}", call.name)),
                Err(o) => o,
            },
            WastDirective::AssertInvalid {
                module, message, ..
            } => self.expect_rejection(module, message),
            WastDirective::AssertMalformed {
                module, message, ..
            } => self.expect_rejection(module, message),
            WastDirective::AssertUnlinkable {
                mut module,
                message,
                ..
            } => {
                let bytes = match module.encode() {
                    Ok(b) => b,
                    Err(e) => return Outcome::Fail(format!("encoding failed: {e}")),
                };
                let compiled = match Module::with_config(&bytes, &self.config) {
                    Ok(m) => m,
                    Err(e) => {
                        return match failed_slot(e) {
                            Slot::OutOfScope(r) => Outcome::OutOfScope(r),
                            Slot::Broken(m) => Outcome::Fail(m),
                            Slot::Ready(_) => unreachable!(),
                        }
                    }
                };
                match Instance::new(&compiled, &self.imports) {
                    Err(WasmError::Link { message: m, .. }) if m.starts_with(message) => {
                        Outcome::Pass
                    }
                    Err(WasmError::Link { module, .. })
                        if matches!(self.registered.get(&module), Some(Slot::OutOfScope(_))) =>
                    {
                        Outcome::OutOfScope(format!("imports from out-of-scope module `{module}`"))
                    }
                    Err(WasmError::Link { module, field, .. }) if module == "spectest" => {
                        match SPECTEST_OMITTED.iter().find(|(name, _)| *name == field) {
                            Some((_, proposal)) => {
                                Outcome::OutOfScope(format!("{proposal} (spectest `{field}`)"))
                            }
                            None => Outcome::Fail(format!(
                                "import `spectest`.`{field}` failed to link, expected \"{message}\""
                            )),
                        }
                    }
                    Err(WasmError::Unsupported { feature, .. }) => Outcome::OutOfScope(feature),
                    Err(e) => Outcome::Fail(format!("{e}, expected \"{message}\"")),
                    Ok(_) => Outcome::Fail(format!("linked, expected \"{message}\"")),
                }
            }
            WastDirective::AssertInvalidCustom { .. }
            | WastDirective::AssertMalformedCustom { .. } => {
                Outcome::OutOfScope("custom sections".into())
            }
            WastDirective::AssertException { .. } => Outcome::OutOfScope("exceptions".into()),
            WastDirective::AssertSuspension { .. } => Outcome::OutOfScope("stack switching".into()),
            WastDirective::Thread(_) | WastDirective::Wait { .. } => {
                Outcome::OutOfScope("threads".into())
            }
        }
    }
}

/// Whether `bytes` is a valid Wasm 3.0 module by `wasmparser`'s standard validator.
fn standard_accepts(bytes: &[u8]) -> bool {
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::WASM3)
        .validate_all(bytes)
        .is_ok()
}

/// Why a module directive has no binary.
enum NotEncoded {
    /// Kestrel's text reader rejected the quoted text (its message).
    MalformedText(String),
    /// `wast` could not encode the module.
    Failed(String),
}

impl std::fmt::Display for NotEncoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotEncoded::MalformedText(m) | NotEncoded::Failed(m) => f.write_str(m),
        }
    }
}

/// The binary of a module directive: a quoted text module read by Kestrel's text reader
/// (`wat_to_binary`, what `kestrel wasm run` reads `.wat` with), any other encoded by `wast`.
fn module_bytes(module: &mut QuoteWat) -> Result<Vec<u8>, NotEncoded> {
    match module.to_test() {
        Ok(QuoteWatTest::Text(text)) => kestrel_wasm::wat_to_binary(&text, None)
            .map_err(|e| NotEncoded::MalformedText(e.to_string())),
        Ok(QuoteWatTest::Binary(bytes)) => Ok(bytes),
        Err(e) => Err(NotEncoded::Failed(e.to_string())),
    }
}

fn describe(exec: &WastExecute) -> String {
    match exec {
        WastExecute::Invoke(i) => format!("invoke {}", i.name),
        WastExecute::Get { global, .. } => format!("get {global}"),
        WastExecute::Wat(Wat::Module(_)) => "instantiate".into(),
        WastExecute::Wat(_) => "instantiate component".into(),
    }
}
