//! The object oracle: Kestrel's x86-64 code written to an ELF object by `kestrel-object`,
//! linked by `cc` with a generated driver and run as a separate process.
//!
//! Contract: as [`Oracle::run`]; the baseline is the interpreter. Linking costs far more
//! than running, so [`Oracle::prefetch`] compiles a whole batch of cases into one object
//! (each case's functions renamed `c<k>_<name>` so the cases cannot collide; the calls
//! between them are renamed alike) and runs every argument set of every case in one process
//! (`kestrel_filetests::object_run`, which survives traps). `run` then answers from that
//! batch; a case outside it (a candidate during minimization), or any case of a batch that
//! could not be built, runs in a batch of its own, so an error is always the case's own.
//!
//! Cost: per batch, one compile of its functions, one `cc` and one process (plus one per
//! crash, which is itself a finding).

use std::collections::HashMap;
use std::path::PathBuf;

use kestrel_filetests::native::{CpuFeatures, Flags};
use kestrel_filetests::object_run::run_calls_via_object;
use kestrel_fuzzgen::{Outcome, TestCase};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, FunctionName};

use crate::coverage::Coverage;
use crate::oracle::Oracle;

/// See the module documentation.
pub struct ObjectOracle {
    flags: Flags,
    dir: PathBuf,
    /// Outcomes of the prefetched batch, by case text.
    batch: HashMap<String, Result<Vec<Outcome>, String>>,
}

impl ObjectOracle {
    /// Objects for the host CPU, with the checks the native oracle runs; built and linked
    /// in a fresh directory under the system's temporary directory.
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("kestrel-fuzz-object-{}", std::process::id()));
        ObjectOracle {
            flags: Flags {
                check_regalloc: true,
                validate: true,
                features: CpuFeatures::host(),
                ..Flags::default()
            },
            dir,
            batch: HashMap::new(),
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
        let outcomes = run_calls_via_object(&funcs, &calls, self.flags, &self.dir)?;
        Ok(spans
            .into_iter()
            .map(|span| {
                outcomes[span]
                    .iter()
                    .map(|o| match o {
                        Ok(values) => Ok(Outcome::Returned(values.clone())),
                        Err(e) => match e.trap {
                            Some(code) => Ok(Outcome::Trapped(code)),
                            None => Err(format!("object: {}", e.message)),
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
        "object"
    }

    fn baseline(&self) -> Option<&'static str> {
        Some("interpreter")
    }

    fn prefetch(&mut self, cases: &[&TestCase]) {
        self.batch.clear();
        if let Ok(results) = self.run_batch(cases) {
            self.batch = cases.iter().map(|c| key(c)).zip(results).collect();
        }
    }

    fn run(&mut self, case: &TestCase, _: u64, _: &mut Coverage) -> Result<Vec<Outcome>, String> {
        if let Some(result) = self.batch.remove(&key(case)) {
            return result;
        }
        self.run_batch(&[case])
            .map_err(|e| format!("object: {e}"))?
            .remove(0)
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
