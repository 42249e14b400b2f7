//! The seeded smoke campaigns that run with every `cargo test`: oracles 1 and 2 (interpreter
//! vs native, native with chaos vs without) over a fixed, deterministic set of cases, the
//! mid-end's oracles (optimized IR interpreted, native at `speed`) over a smaller one, and
//! the object oracle (cases linked by `cc` in batches) over a smaller set still.
//! 30,000 cases take about a minute on the 2-core reference machine (debug build, opt-level 1);
//! `KESTREL_FUZZ_SMOKE_CASES` overrides the number of cases.

use kestrel_difftest::campaign::{self, Campaign, Limit};

const SEED: u64 = 20261122;
const DEFAULT_CASES: u64 = 30_000;

#[test]
fn seeded_smoke_campaign_finds_nothing() {
    let cases = std::env::var("KESTREL_FUZZ_SMOKE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let mut c = Campaign::new(SEED);
    c.limit = Limit::Cases(cases);
    c.chaos = true;
    c.out_dir = std::env::temp_dir().join(format!("kestrel-smoke-{}", std::process::id()));
    c.progress_every = std::time::Duration::from_secs(10);
    let mut log = Vec::new();
    let summary = campaign::run(c, &mut log);
    let log = String::from_utf8_lossy(&log);
    eprintln!("{log}");
    assert_eq!(summary.cases, cases);
    assert_eq!(
        summary.failures, 0,
        "failures (minimized cases in {:?}):\n{log}",
        summary.written
    );
}

#[test]
fn seeded_mid_end_smoke_campaign_finds_nothing_and_fires_every_rule() {
    let cases = 5_000;
    let mut c = Campaign::new(SEED ^ 0x0E7D);
    c.limit = Limit::Cases(cases);
    c.opt = true;
    c.out_dir = std::env::temp_dir().join(format!("kestrel-smoke-opt-{}", std::process::id()));
    let mut log = Vec::new();
    let summary = campaign::run(c, &mut log);
    let log = String::from_utf8_lossy(&log);
    assert_eq!(summary.cases, cases);
    assert_eq!(
        summary.failures, 0,
        "failures (minimized cases in {:?}):\n{log}",
        summary.written
    );
    let coverage = summary.coverage.expect("campaigns collect coverage");
    let unfired = coverage.unfired_simplifications();
    assert!(
        unfired.is_empty(),
        "mid-end rules that never fired: {unfired:?}"
    );
    assert!(
        coverage.if_converted() > 0,
        "the generated diamonds and triangles never met the if-conversion's shape"
    );
}

#[test]
fn seeded_object_smoke_campaign_finds_nothing() {
    let cases = 256;
    let mut c = Campaign::new(SEED ^ 0x0B1E);
    c.limit = Limit::Cases(cases);
    c.native = false;
    c.batch = 128;
    c.extra
        .push(Box::new(kestrel_difftest::ObjectOracle::new()));
    c.out_dir = std::env::temp_dir().join(format!("kestrel-smoke-obj-{}", std::process::id()));
    let mut log = Vec::new();
    let summary = campaign::run(c, &mut log);
    let log = String::from_utf8_lossy(&log);
    assert_eq!(summary.cases, cases);
    assert_eq!(
        summary.failures, 0,
        "failures (minimized cases in {:?}):\n{log}",
        summary.written
    );
}
