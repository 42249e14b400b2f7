//! Running one case through every oracle and finding the first disagreement.

use std::fmt;

use kestrel_fuzzgen::{Outcome, TestCase};

use crate::coverage::Coverage;
use crate::oracle::Oracle;

/// How an oracle failed on a case.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// The oracle could not run the case (compile error, checker, validator, limit).
    Error,
    /// It ran, and an outcome differs from its baseline's.
    Mismatch,
}

/// A disagreement (or an oracle error) on one case.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The oracle that failed.
    pub oracle: &'static str,
    /// The oracle it was compared with (`None` when the reference itself failed).
    pub baseline: Option<&'static str>,
    pub kind: FindingKind,
    /// For a mismatch: the argument set, and both outcomes.
    pub arg_index: Option<usize>,
    pub expected: Option<Outcome>,
    pub got: Option<Outcome>,
    /// For an error: the oracle's message.
    pub message: String,
}

impl Finding {
    /// Whether the oracle panicked (see [`crate::panics`]).
    pub fn is_panic(&self) -> bool {
        self.kind == FindingKind::Error && self.message.starts_with(crate::panics::PREFIX)
    }

    /// `oracle` could not run the case.
    pub fn error(oracle: &'static str, baseline: Option<&'static str>, message: String) -> Self {
        Finding {
            oracle,
            baseline,
            kind: FindingKind::Error,
            arg_index: None,
            expected: None,
            got: None,
            message,
        }
    }

    /// Whether `other` is the same failure for minimization purposes: the same oracle failing
    /// in the same way (for a mismatch, with the same shapes of outcome: results vs trap on
    /// each side).
    pub fn same_failure(&self, other: &Finding) -> bool {
        let shape = |o: &Option<Outcome>| match o {
            Some(Outcome::Returned(_)) => 1,
            Some(Outcome::Trapped(_)) => 2,
            None => 0,
        };
        self.oracle == other.oracle
            && self.kind == other.kind
            && shape(&self.expected) == shape(&other.expected)
            && shape(&self.got) == shape(&other.got)
            && error_class(&self.message) == error_class(&other.message)
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.kind {
            FindingKind::Error => write!(f, "{} failed: {}", self.oracle, self.message),
            FindingKind::Mismatch => write!(
                f,
                "{} disagrees with {} on argument set {}: expected {}, got {}",
                self.oracle,
                self.baseline.unwrap_or("?"),
                self.arg_index.unwrap_or(0),
                show(self.expected.as_ref()),
                show(self.got.as_ref()),
            ),
        }
    }
}

/// An error message without the names and numbers that change while a case shrinks
/// (`%f2`, `v79`, `inst49`, `line 12`), so "the same error" survives minimization but an
/// unrelated one (a missing symbol instead of an allocator error) does not.
fn error_class(message: &str) -> String {
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '%' {
            while chars
                .peek()
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                chars.next();
            }
            out.push('%');
        } else if c.is_ascii_digit() {
            while chars.peek().is_some_and(|c| c.is_ascii_digit()) {
                chars.next();
            }
            out.push('#');
        } else {
            out.push(c);
        }
    }
    out
}

fn show(outcome: Option<&Outcome>) -> String {
    match outcome {
        None => "nothing".into(),
        Some(Outcome::Trapped(code)) => format!("trap {code}"),
        Some(Outcome::Returned(values)) => format!(
            "[{}]",
            values
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The outcomes of a passing case, per oracle, in oracle order.
pub type Outcomes = Vec<(&'static str, Vec<Outcome>)>;

/// What a passing case did: the outcomes of the oracles that ran it, and the oracles that
/// declined it as unsupported (see [`Oracle::declines`]).
#[derive(Clone, Debug, Default)]
pub struct Checked {
    pub outcomes: Outcomes,
    pub declined: Vec<&'static str>,
}

/// Run `case` through `oracles` (the reference first, then every oracle after its baseline)
/// and return every oracle's outcomes, or the first finding (an oracle that panics is an
/// error finding naming the panic, see [`crate::panics`]). An oracle that declines the
/// case is skipped (and named in [`Checked::declined`]); an oracle whose baseline declined
/// it is a misconfiguration, reported as a finding.
pub fn check_case(
    case: &TestCase,
    oracles: &mut [Box<dyn Oracle>],
    seed: u64,
    coverage: &mut Coverage,
) -> Result<Checked, Box<Finding>> {
    let mut done: Outcomes = Vec::with_capacity(oracles.len());
    let mut declined = Vec::new();
    for oracle in oracles.iter_mut() {
        let name = oracle.name();
        let baseline = oracle.baseline();
        if oracle.declines(case).is_some() {
            declined.push(name);
            continue;
        }
        let outcomes = crate::panics::run_caught(oracle.as_mut(), case, seed, coverage)
            .map_err(|message| Box::new(Finding::error(name, baseline, message)))?;
        if let Some(base) = baseline {
            let Some((_, expected)) = done.iter().find(|(n, _)| *n == base) else {
                let message = format!("misconfigured: {name} runs before its baseline {base}");
                return Err(Box::new(Finding::error(name, baseline, message)));
            };
            if let Some(i) = (0..expected.len()).find(|&i| outcomes.get(i) != Some(&expected[i])) {
                return Err(Box::new(Finding {
                    oracle: name,
                    baseline,
                    kind: FindingKind::Mismatch,
                    arg_index: Some(i),
                    expected: Some(expected[i].clone()),
                    got: outcomes.get(i).cloned(),
                    message: String::new(),
                }));
            }
        }
        done.push((name, outcomes));
    }
    Ok(Checked {
        outcomes: done,
        declined,
    })
}

#[cfg(test)]
mod tests {
    use super::error_class;

    #[test]
    fn error_classes_ignore_names_and_numbers() {
        assert_eq!(
            error_class("native: %f2: register allocation: v79 used at inst49"),
            error_class("native: %f0: register allocation: v7 used at inst3")
        );
        assert_ne!(
            error_class("native: %f2: register allocation: v79 used at inst49"),
            error_class("native: symbol `f1` was not found")
        );
        assert_ne!(
            error_class("unsupported: `band_not` of type f32"),
            error_class("unsupported: `sequence_point`")
        );
    }
}
