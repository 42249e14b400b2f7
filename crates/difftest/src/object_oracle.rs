//! The object oracles: Kestrel's code written to an ELF object by `kestrel-object`, linked
//! with a generated driver and run as a separate process. `object` is x86-64 code linked by
//! `cc` and run directly; `aarch64` is AArch64 code linked statically by
//! `aarch64-linux-gnu-gcc` and run under `qemu-aarch64` (see `kestrel_filetests::object_run`).
//!
//! Contract: as [`Oracle::run`]; the baseline is the interpreter. The `aarch64` oracle
//! declines ([`Oracle::declines`]) a case that the AArch64 backend reports as
//! `CodegenError::Unsupported` (see `aarch64_support`).
//!
//! Linking costs far more than running, so [`Oracle::prefetch`] compiles a whole batch of cases into one object
//! (each case's functions renamed `c<k>_<name>` so the cases cannot collide; the calls
//! between them are renamed alike) and runs every argument set of every case in one process
//! (`kestrel_filetests::object_run`, which survives traps). `run` then answers from that
//! batch; a case outside it (a candidate during minimization), or any case of a batch that
//! could not be built, runs in a batch of its own, so an error is always the case's own.
//!
//! Cost: per batch, one compile of its functions, one link and one process (plus one per
//! crash, which is itself a finding); under `qemu-aarch64` the process is far slower. The
//! `aarch64` oracle also compiles every case once more to learn whether it is supported
//! (once per prefetched case: `declines` answers those from the batch).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use kestrel_codegen::chaos::Chaos;
use std::sync::Arc;

use kestrel_codegen::isa::TargetIsa;
use kestrel_filetests::native::Flags;
use kestrel_filetests::object_run::{run_calls_via_object_on, ObjectTarget};
use kestrel_fuzzgen::{Outcome, TestCase};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, FunctionName};

use crate::aarch64_support::{check_tools, unsupported_on_aarch64_noting};
use crate::coverage::Coverage;
use crate::oracle::Oracle;

/// See the module documentation.
pub struct ObjectOracle {
    target: ObjectTarget,
    /// The ISA with the features the code may use.
    isa: Arc<dyn TargetIsa>,
    flags: Flags,
    dir: PathBuf,
    /// Outcomes of the prefetched batch, by case text.
    batch: HashMap<String, Result<Vec<Outcome>, String>>,
    /// What [`Oracle::declines`] answers for the prefetched cases, by case text.
    declined: HashMap<String, Option<String>>,
    /// AArch64 rules fired by the support check's compilations since the last run, each
    /// compilation's list ended by `u16::MAX` (see [`Oracle::run`]).
    fired: Vec<u16>,
}

impl ObjectOracle {
    /// Objects for the host CPU, with the checks the native oracle runs; built and linked
    /// in a fresh directory under the system's temporary directory.
    pub fn new() -> Self {
        let host = kestrel_filetests::native_isa(None).expect("a host ISA Kestrel compiles for");
        Self::for_target(ObjectTarget::X86_64, host)
    }

    /// Objects for AArch64 (base ISA), with the same checks, run under `qemu-aarch64`; an
    /// error naming the Debian packages to install when a tool is missing.
    pub fn aarch64() -> Result<Self, String> {
        Self::aarch64_with(&[])
    }

    /// [`Self::aarch64`] for code that may use the AArch64 feature flags `features`
    /// (`has_lse`; run on qemu's `max` CPU when it uses any); an unknown flag is an error.
    pub fn aarch64_with(features: &[&str]) -> Result<Self, String> {
        check_tools()?;
        let mut builder = kestrel_codegen::isa::lookup("aarch64").map_err(|e| e.to_string())?;
        builder.set_all(false);
        if let Some(flag) = features.iter().find(|f| !builder.set(f)) {
            return Err(format!("`{flag}` is not an AArch64 feature flag"));
        }
        let mut oracle = Self::for_target(ObjectTarget::Aarch64, builder.finish());
        // The support check's compilations record the AArch64 rules they fire.
        oracle.flags.coverage = true;
        Ok(oracle)
    }

    fn for_target(target: ObjectTarget, isa: Arc<dyn TargetIsa>) -> Self {
        // One directory per oracle: two oracles of one process must not share their files.
        static INSTANCES: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kestrel-fuzz-{}-{}-{}",
            target.isa(),
            std::process::id(),
            INSTANCES.fetch_add(1, Ordering::Relaxed)
        ));
        ObjectOracle {
            target,
            isa,
            flags: Flags {
                check_regalloc: true,
                validate: true,
                ..Flags::default()
            },
            dir,
            batch: HashMap::new(),
            declined: HashMap::new(),
            fired: Vec::new(),
        }
    }

    /// Run `cases` in one executable: the outcomes per case, or why the batch failed.
    fn run_batch(&self, cases: &[&TestCase]) -> Result<Vec<Result<Vec<Outcome>, String>>, String> {
        let mut funcs = Vec::new();
        let mut calls: Vec<(String, Vec<DataValue>)> = Vec::new();
        let mut spans = Vec::new();
        for (k, case) in cases.iter().enumerate() {
            let renamed = renamed(case, k);
            let entry = run_name(&renamed[0].name);
            let start = calls.len();
            calls.extend(case.args.iter().map(|a| (entry.clone(), a.clone())));
            spans.push(start..calls.len());
            funcs.extend(renamed);
        }
        let no_chaos = Chaos::disabled;
        let outcomes = run_calls_via_object_on(
            self.target,
            &self.isa,
            &funcs,
            &calls,
            self.flags,
            &no_chaos,
            &self.dir,
        )?;
        let name = self.name();
        Ok(spans
            .into_iter()
            .map(|span| {
                outcomes[span]
                    .iter()
                    .map(|o| match o {
                        Ok(values) => Ok(Outcome::Returned(values.clone())),
                        Err(e) => match e.trap {
                            Some(code) => Ok(Outcome::Trapped(code)),
                            None => Err(format!("{name}: {}", e.message)),
                        },
                    })
                    .collect()
            })
            .collect())
    }
}

impl Default for ObjectOracle {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ObjectOracle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Oracle for ObjectOracle {
    fn name(&self) -> &'static str {
        match self.target {
            ObjectTarget::X86_64 => "object",
            ObjectTarget::Aarch64 => "aarch64",
        }
    }

    fn baseline(&self) -> Option<&'static str> {
        Some("interpreter")
    }

    fn prefetch(&mut self, cases: &[&TestCase]) {
        self.batch.clear();
        self.declined.clear();
        // A declined case would make the whole batch fail to compile.
        let mut supported = Vec::with_capacity(cases.len());
        for &case in cases {
            let why = self.declines(case);
            if why.is_none() {
                supported.push(case);
            }
            if self.may_decline() {
                self.declined.insert(key(case), why);
            }
        }
        let cases = supported;
        if let Ok(results) = self.run_batch(&cases) {
            self.batch = cases.iter().map(|c| key(c)).zip(results).collect();
        }
    }

    fn run(
        &mut self,
        case: &TestCase,
        _: u64,
        coverage: &mut Coverage,
    ) -> Result<Vec<Outcome>, String> {
        // The rules the support check's compilations fired, one run of them per
        // compilation (`u16::MAX` ends each).
        for compiled in self
            .fired
            .split(|&r| r == u16::MAX)
            .filter(|r| !r.is_empty())
        {
            coverage.record_aarch64_rules(compiled);
        }
        self.fired.clear();
        if let Some(result) = self.batch.remove(&key(case)) {
            return result;
        }
        let name = self.name();
        self.run_batch(&[case])
            .map_err(|e| format!("{name}: {e}"))?
            .remove(0)
    }

    fn may_decline(&self) -> bool {
        self.target == ObjectTarget::Aarch64
    }

    fn declines(&mut self, case: &TestCase) -> Option<String> {
        if self.target == ObjectTarget::X86_64 {
            return None;
        }
        match self.declined.remove(&key(case)) {
            Some(why) => why,
            None => {
                let fired = &mut self.fired;
                unsupported_on_aarch64_noting(&*self.isa, case, &self.flags, &mut |rules| {
                    fired.extend_from_slice(rules);
                    fired.push(u16::MAX);
                })
            }
        }
    }
}

/// A case's identity: its printed functions and argument sets.
fn key(case: &TestCase) -> String {
    let mut k = String::new();
    for f in &case.functions {
        k += &f.to_string();
    }
    k + &format!("{:?}", case.args)
}

/// The name a renamed function is called by (as `; run:` lines spell it).
fn run_name(name: &FunctionName) -> String {
    match name {
        FunctionName::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

/// Case `k`'s functions, each renamed `c<k>_<name>`, with their references to each other
/// renamed alike.
fn renamed(case: &TestCase, k: usize) -> Vec<Function> {
    let rename = |name: &FunctionName| {
        FunctionName::Named(format!("c{k}_{}", run_name(name).replace(':', "_")))
    };
    let own: Vec<&FunctionName> = case.functions.iter().map(|f| &f.name).collect();
    case.functions
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.name = rename(&f.name);
            for ext in f.ext_funcs.values_mut() {
                if own.contains(&&ext.name) {
                    ext.name = rename(&ext.name);
                }
            }
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_ir::TrapCode;

    fn case(text: &str, args: Vec<Vec<DataValue>>) -> TestCase {
        TestCase {
            functions: kestrel_ir::parse_functions(text, "case.clif").unwrap(),
            args,
        }
    }

    #[test]
    fn batched_cases_return_their_own_results_and_traps() {
        // Both cases name their functions alike: renaming keeps them apart.
        let a = case(
            "function %f(i64) -> i64 {
                 fn0 = colocated %g(i64) -> i64
             block0(v0: i64):
                 v1 = call fn0(v0)
                 return v1
             }
             function %g(i64) -> i64 {
             block0(v0: i64):
                 v1 = iconst.i64 100
                 v2 = udiv v1, v0
                 return v2
             }",
            vec![
                vec![DataValue::I64(7)],
                vec![DataValue::I64(0)],
                vec![DataValue::I64(50)],
            ],
        );
        let b = case(
            "function %f(i32) -> i32, i32 {
             block0(v0: i32):
                 v1 = iconst.i32 1
                 v2 = iadd v0, v1
                 return v2, v0
             }",
            vec![vec![DataValue::I32(-1)]],
        );
        let mut oracle = ObjectOracle::new();
        oracle.prefetch(&[&a, &b]);
        assert_eq!(oracle.batch.len(), 2, "the batch was built");
        let mut cov = Coverage::default();
        let ret = |v: Vec<DataValue>| Outcome::Returned(v);
        assert_eq!(
            oracle.run(&a, 0, &mut cov).unwrap(),
            [
                ret(vec![DataValue::I64(14)]),
                Outcome::Trapped(TrapCode::INTEGER_DIVISION_BY_ZERO),
                ret(vec![DataValue::I64(2)]),
            ]
        );
        assert_eq!(
            oracle.run(&b, 0, &mut cov).unwrap(),
            [ret(vec![DataValue::I32(0), DataValue::I32(-1)])]
        );
        // Outside the batch, a case runs alone, with the same answer.
        assert!(oracle.batch.is_empty());
        assert_eq!(
            oracle.run(&b, 0, &mut cov).unwrap(),
            [ret(vec![DataValue::I32(0), DataValue::I32(-1)])]
        );
    }
}
