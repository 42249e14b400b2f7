//! Seeded fuzzing campaigns: generate, check, minimize, report.
//!
//! Case `i` of a campaign with seed `S` is generated from bytes that depend only on `(S, i)`,
//! so a campaign stopped by a case count is deterministic, and any case can be regenerated
//! from its seed and index (failure files name both). Progress lines go to the `progress`
//! writer, each ending in a newline; failures are minimized and written as test files.
//!
//! A native run that never returns cannot be interrupted safely, so a watchdog thread writes
//! the case being run when it exceeds [`Campaign::hang_timeout`] and ends the process with a
//! failure status.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kestrel_fuzzgen::{generate, GenConfig, Outcome, TestCase, Unstructured};

use crate::check::{check_case, Finding};
use crate::coverage::Coverage;
use crate::minimize::minimize;
use crate::opt_oracle::{OptInterpreterOracle, OptNativeOracle};
use crate::oracle::{InterpreterOracle, NativeOracle, Oracle};

/// When a campaign stops.
#[derive(Copy, Clone, Debug)]
pub enum Limit {
    Cases(u64),
    Time(Duration),
}

/// A campaign's settings.
pub struct Campaign {
    pub seed: u64,
    pub limit: Limit,
    /// Run Kestrel's native code against the interpreter (oracle 1).
    pub native: bool,
    /// Also run native code under the chaos control against native code without it (oracle 2).
    pub chaos: bool,
    /// Also run the mid-end's oracles: the optimized IR interpreted, and native code at opt
    /// level `speed`, each against the interpreter.
    pub opt: bool,
    /// Further oracles (e.g. Cranelift), run after the built-in ones.
    pub extra: Vec<Box<dyn Oracle>>,
    pub gen: GenConfig,
    /// Where minimized failures are written (created if missing).
    pub out_dir: PathBuf,
    /// How often a progress line is printed.
    pub progress_every: Duration,
    /// Stop after this many failures (the same bug tends to repeat).
    pub max_failures: u64,
    /// Predicate calls allowed when minimizing one failure.
    pub minimize_budget: usize,
    /// A case running longer than this is a hang.
    pub hang_timeout: Duration,
    /// Cases generated ahead and offered to every oracle's [`Oracle::prefetch`] at once.
    pub batch: usize,
}

impl Campaign {
    /// Oracle 1 only, 1,000 cases, failures into `fuzz-failures/`.
    pub fn new(seed: u64) -> Self {
        Campaign {
            seed,
            limit: Limit::Cases(1000),
            native: true,
            chaos: false,
            opt: false,
            extra: Vec::new(),
            gen: GenConfig::default(),
            out_dir: PathBuf::from("fuzz-failures"),
            progress_every: Duration::from_secs(1),
            max_failures: 10,
            minimize_budget: 3000,
            hang_timeout: Duration::from_secs(20),
            batch: 32,
        }
    }
}

/// What a campaign did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub cases: u64,
    pub failures: u64,
    /// IR instructions over all cases (for the mean size).
    pub insts: u64,
    /// Files written for failures.
    pub written: Vec<PathBuf>,
    pub coverage: Option<Coverage>,
    pub elapsed: Duration,
    /// Per oracle that may decline cases (see [`Oracle::declines`]), in oracle order: the
    /// cases it declined as unsupported (run by the others, never by it).
    pub unsupported: Vec<(&'static str, u64)>,
}

impl Summary {
    /// The last line a campaign prints.
    pub fn final_line(&self) -> String {
        format!(
            "{} cases, {} failures{}",
            self.cases,
            self.failures,
            self.unsupported_text()
        )
    }

    /// `, N unsupported on ORACLE` per oracle that may decline cases.
    fn unsupported_text(&self) -> String {
        self.unsupported
            .iter()
            .map(|(oracle, n)| format!(", {n} unsupported on {oracle}"))
            .collect()
    }
}

/// The bytes case `index` of campaign `seed` is generated from.
pub fn case_bytes(seed: u64, index: u64, out: &mut Vec<u8>) {
    let mut state = splitmix(seed ^ splitmix(index.wrapping_add(0x5EED)));
    let len = 2048 + (state % 6144) as usize;
    out.clear();
    while out.len() < len {
        state = splitmix(state);
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
}

/// The seed the oracles get for case `index` (chaos decisions derive from it).
pub fn case_seed(seed: u64, index: u64) -> u64 {
    splitmix(seed.wrapping_mul(31).wrapping_add(index))
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Regenerate case `index` of campaign `seed`.
pub fn regenerate(seed: u64, index: u64, gen: &GenConfig) -> Option<TestCase> {
    let mut bytes = Vec::new();
    case_bytes(seed, index, &mut bytes);
    generate(&mut Unstructured::new(&bytes), gen).ok()
}

/// The oracles of a campaign, reference first and every oracle after its baseline.
pub fn oracles(
    native: bool,
    chaos: bool,
    opt: bool,
    extra: Vec<Box<dyn Oracle>>,
) -> Vec<Box<dyn Oracle>> {
    let mut list: Vec<Box<dyn Oracle>> = vec![Box::new(InterpreterOracle)];
    if native || chaos {
        list.push(Box::new(NativeOracle::new(false)));
    }
    if chaos {
        list.push(Box::new(NativeOracle::new(true)));
    }
    if opt {
        list.push(Box::new(OptInterpreterOracle));
        list.push(Box::new(OptNativeOracle::default()));
    }
    list.extend(extra);
    list
}

/// Shared with the watchdog: which case is running since when.
struct Running {
    index: AtomicU64,
    /// Milliseconds since the campaign start when the case began; `u64::MAX` when idle.
    since_ms: AtomicU64,
    cases: AtomicU64,
    failures: AtomicU64,
}

/// Run a campaign, writing progress lines to `progress`.
pub fn run(campaign: Campaign, progress: &mut dyn Write) -> Summary {
    let Campaign {
        seed,
        limit,
        native,
        chaos,
        opt,
        extra,
        gen,
        out_dir,
        progress_every,
        max_failures,
        minimize_budget,
        hang_timeout,
        batch,
    } = campaign;
    let mut oracles = oracles(native, chaos, opt, extra);
    // A panicking oracle is a finding: silence its message while the campaign runs.
    let _quiet = crate::panics::QuietPanics::install();
    let start = Instant::now();
    let running = Arc::new(Running {
        index: AtomicU64::new(0),
        since_ms: AtomicU64::new(u64::MAX),
        cases: AtomicU64::new(0),
        failures: AtomicU64::new(0),
    });
    spawn_watchdog(
        running.clone(),
        start,
        hang_timeout,
        seed,
        gen.clone(),
        out_dir.clone(),
    );

    let mut summary = Summary {
        unsupported: oracles
            .iter()
            .filter(|o| o.may_decline())
            .map(|o| (o.name(), 0))
            .collect(),
        ..Summary::default()
    };
    let mut coverage = Coverage::default();
    let mut bytes = Vec::new();
    let mut last_progress = Instant::now();
    let mut index = 0u64;
    // Cases generated ahead (by index), already offered to the oracles' prefetch.
    let mut ahead: VecDeque<Result<TestCase, String>> = VecDeque::new();
    loop {
        match limit {
            Limit::Cases(n) if summary.cases >= n => break,
            Limit::Time(t) if start.elapsed() >= t => break,
            _ => {}
        }
        if summary.failures >= max_failures {
            let _ = writeln!(progress, "fuzz: stopping after {max_failures} failures");
            break;
        }
        if ahead.is_empty() {
            let n = match limit {
                Limit::Cases(n) => (n - summary.cases).min(batch.max(1) as u64),
                Limit::Time(_) => batch.max(1) as u64,
            };
            for i in index..index + n {
                case_bytes(seed, i, &mut bytes);
                ahead.push_back(
                    generate(&mut Unstructured::new(&bytes), &gen).map_err(|e| e.to_string()),
                );
            }
            let cases: Vec<&TestCase> = ahead.iter().filter_map(|c| c.as_ref().ok()).collect();
            for oracle in &mut oracles {
                oracle.prefetch(&cases);
            }
        }
        let case = match ahead.pop_front().expect("generated above") {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(progress, "fuzz: case {index}: generator error: {e}");
                summary.failures += 1;
                index += 1;
                continue;
            }
        };
        coverage.record_case(&case);
        summary.insts += case.inst_count() as u64;
        let cseed = case_seed(seed, index);
        running.index.store(index, Ordering::Relaxed);
        running
            .since_ms
            .store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
        let result = check_case(&case, &mut oracles, cseed, &mut coverage);
        if let Ok(checked) = &result {
            for (oracle, n) in &mut summary.unsupported {
                *n += u64::from(checked.declined.contains(oracle));
            }
        }
        if let Err(finding) = result {
            summary.failures += 1;
            running.failures.store(summary.failures, Ordering::Relaxed);
            let _ = writeln!(progress, "fuzz: case {index} (seed {seed}): {finding}");
            if finding.is_panic() {
                // Unwinding may have left the oracles' state half-built: run nothing more.
                match write_failure(&out_dir, seed, index, &case, &finding) {
                    Ok(path) => {
                        let _ = writeln!(
                            progress,
                            "fuzz: an oracle panicked: case written unminimized to {}; stopping",
                            path.display()
                        );
                        summary.written.push(path);
                    }
                    Err(e) => {
                        let _ = writeln!(progress, "fuzz: cannot write the failure: {e}");
                    }
                }
                summary.cases += 1;
                break;
            }
            let small = minimize(&case, minimize_budget, &mut |candidate| {
                let mut scratch = Coverage::default();
                match check_case(candidate, &mut oracles, cseed, &mut scratch) {
                    Err(f) => f.same_failure(&finding),
                    Ok(_) => false,
                }
            });
            let mut scratch = Coverage::default();
            let small_finding = check_case(&small, &mut oracles, cseed, &mut scratch)
                .err()
                .unwrap_or(finding);
            match write_failure(&out_dir, seed, index, &small, &small_finding) {
                Ok(path) => {
                    let _ = writeln!(
                        progress,
                        "fuzz: minimized to {} instructions, written to {}",
                        small.inst_count(),
                        path.display()
                    );
                    summary.written.push(path);
                }
                Err(e) => {
                    let _ = writeln!(progress, "fuzz: cannot write the failure: {e}");
                }
            }
        }
        running.since_ms.store(u64::MAX, Ordering::Relaxed);
        summary.cases += 1;
        running.cases.store(summary.cases, Ordering::Relaxed);
        index += 1;
        if last_progress.elapsed() >= progress_every {
            last_progress = Instant::now();
            let _ = writeln!(progress, "{}", progress_line(&summary, &coverage, start));
        }
    }
    summary.elapsed = start.elapsed();
    let _ = writeln!(progress, "{}", progress_line(&summary, &coverage, start));
    summary.coverage = Some(coverage);
    summary
}

fn progress_line(summary: &Summary, coverage: &Coverage, start: Instant) -> String {
    let secs = start.elapsed().as_secs_f64();
    let rate = summary.cases as f64 / secs.max(1e-9);
    let mean = summary.insts as f64 / (summary.cases.max(1)) as f64;
    let (ops, total_ops) = coverage.opcode_summary();
    let mut rules = match coverage.rule_summary() {
        Some((hit, total)) => format!(", rules {hit}/{total}"),
        None => String::new(),
    };
    if let Some((hit, total)) = coverage.aarch64_rule_summary() {
        rules += &format!(", aarch64 rules {hit}/{total}");
    }
    format!(
        "fuzz: {secs:.1}s, {} cases ({rate:.0}/s), {} failures{}, mean {mean:.1} insts, opcodes {ops}/{total_ops}{rules}",
        summary.cases, summary.failures, summary.unsupported_text()
    )
}

/// The reference outcomes of `case` (what the test file expects).
fn reference_outcomes(case: &TestCase) -> Vec<Outcome> {
    let mut reference = InterpreterOracle;
    reference
        .run(case, 0, &mut Coverage::default())
        .unwrap_or_default()
}

/// Write a failing case as a ready-to-commit test file; returns its path.
pub fn write_failure(
    dir: &Path,
    seed: u64,
    index: u64,
    case: &TestCase,
    finding: &Finding,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("fuzz-{seed}-{index}.clif"));
    let flag = match finding.oracle {
        "native-chaos" => " --chaos",
        "object" => " --object",
        "aarch64" => " --aarch64",
        _ => "",
    };
    let mut text = format!(
        "; Found by `kestrel fuzz{flag} --seed {seed}` (case {index}), minimized.\n; {}\n",
        finding.to_string().replace('\n', "\n; ")
    );
    let mut body = case.to_test_file(&reference_outcomes(case));
    if finding.oracle == "aarch64" {
        // The file must run on the target that failed.
        body = body.replacen("target x86_64\n", "target x86_64\ntarget aarch64\n", 1);
    }
    text += &body;
    std::fs::write(&path, text)?;
    Ok(path)
}

fn spawn_watchdog(
    running: Arc<Running>,
    start: Instant,
    timeout: Duration,
    seed: u64,
    gen: GenConfig,
    out_dir: PathBuf,
) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let since = running.since_ms.load(Ordering::Relaxed);
        if since == u64::MAX {
            continue;
        }
        let now = start.elapsed().as_millis() as u64;
        if now.saturating_sub(since) < timeout.as_millis() as u64 {
            continue;
        }
        let index = running.index.load(Ordering::Relaxed);
        eprintln!(
            "fuzz: case {index} (seed {seed}) has run for over {}s: a hang",
            timeout.as_secs()
        );
        if let Some(case) = regenerate(seed, index, &gen) {
            let finding = Finding::error(
                "native",
                Some("interpreter"),
                format!("did not return within {}s", timeout.as_secs()),
            );
            if let Ok(path) = write_failure(&out_dir, seed, index, &case, &finding) {
                eprintln!("fuzz: case written (not minimized) to {}", path.display());
            }
        }
        println!(
            "{} cases, {} failures",
            running.cases.load(Ordering::Relaxed),
            running.failures.load(Ordering::Relaxed) + 1
        );
        std::process::exit(1);
    });
}
