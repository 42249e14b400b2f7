//! The AArch64 object oracle in seeded campaigns: a short run finds nothing and really runs
//! cases on AArch64 (under `qemu-aarch64`), and a wrong answer from the oracle is caught,
//! minimized and written as a test file that runs on AArch64.
//! Needs `aarch64-linux-gnu-gcc` and `qemu-aarch64` (a missing tool fails the tests).

use kestrel_difftest::campaign::{self, Campaign, Limit};
use kestrel_difftest::coverage::Coverage;
use kestrel_difftest::{ObjectOracle, Oracle, Outcome, TestCase};
use kestrel_ir::TrapCode;

const SEED: u64 = 20261122 ^ 0xA64;

/// A campaign of `cases` cases with `oracle` as its only oracle after the interpreter.
fn aarch64_campaign(cases: u64, oracle: Box<dyn Oracle>, out: &str) -> Campaign {
    let mut c = Campaign::new(SEED);
    c.limit = Limit::Cases(cases);
    c.native = false;
    c.batch = 100;
    c.extra.push(oracle);
    c.out_dir = std::env::temp_dir().join(format!("kestrel-{out}-{}", std::process::id()));
    c
}

#[test]
fn seeded_aarch64_smoke_campaign_finds_nothing() {
    let cases = 200;
    let oracle = Box::new(ObjectOracle::aarch64().unwrap());
    let mut log = Vec::new();
    let summary = campaign::run(aarch64_campaign(cases, oracle, "smoke-a64"), &mut log);
    let log = String::from_utf8_lossy(&log);
    assert_eq!(summary.cases, cases);
    assert_eq!(
        summary.failures, 0,
        "failures (minimized cases in {:?}):\n{log}",
        summary.written
    );
    let [("aarch64", unsupported)] = summary.unsupported[..] else {
        panic!("the aarch64 oracle may decline: {:?}", summary.unsupported);
    };
    // Everything the generator makes is lowered (only big-endian read-modify-writes and
    // `stack_limit`, which it does not generate, are unsupported).
    assert!(
        unsupported < cases / 20,
        "{unsupported} unsupported:\n{log}"
    );
    assert!(summary.final_line().ends_with(" unsupported on aarch64"));
    // The support check's compilations record which AArch64 lowering rules fired.
    let fired = log
        .lines()
        .rev()
        .filter_map(|l| l.split(", aarch64 rules ").nth(1))
        .find_map(|r| r.split('/').next()?.parse::<usize>().ok());
    assert!(
        fired.is_some_and(|n| n > 100),
        "AArch64 rule coverage missing or tiny ({fired:?}):\n{log}"
    );
}

/// The AArch64 oracle with every answer turned wrong (results into a trap, a trap into no
/// results).
struct WrongAarch64(ObjectOracle);

impl Oracle for WrongAarch64 {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn baseline(&self) -> Option<&'static str> {
        self.0.baseline()
    }
    fn prefetch(&mut self, cases: &[&TestCase]) {
        self.0.prefetch(cases)
    }
    fn may_decline(&self) -> bool {
        self.0.may_decline()
    }
    fn declines(&mut self, case: &TestCase) -> Option<String> {
        self.0.declines(case)
    }
    fn run(
        &mut self,
        case: &TestCase,
        seed: u64,
        cov: &mut Coverage,
    ) -> Result<Vec<Outcome>, String> {
        let outcomes = self.0.run(case, seed, cov)?;
        Ok(outcomes
            .into_iter()
            .map(|o| match o {
                Outcome::Returned(_) => Outcome::Trapped(TrapCode::INTEGER_OVERFLOW),
                Outcome::Trapped(_) => Outcome::Returned(Vec::new()),
            })
            .collect())
    }
}

#[test]
fn a_wrong_aarch64_answer_is_a_minimized_failure() {
    let oracle = Box::new(WrongAarch64(ObjectOracle::aarch64().unwrap()));
    let mut c = aarch64_campaign(20, oracle, "wrong-a64");
    c.max_failures = 1;
    c.minimize_budget = 20;
    let out_dir = c.out_dir.clone();
    let mut log = Vec::new();
    let summary = campaign::run(c, &mut log);
    let log = String::from_utf8_lossy(&log);
    assert_eq!(summary.failures, 1, "{log}");
    assert!(log.contains("aarch64 disagrees with interpreter"), "{log}");
    let text = std::fs::read_to_string(&summary.written[0]).unwrap();
    assert!(text.contains("kestrel fuzz --aarch64 --seed"), "{text}");
    assert!(text.contains("\ntarget aarch64\n"), "{text}");
    let _ = std::fs::remove_dir_all(out_dir);
}
