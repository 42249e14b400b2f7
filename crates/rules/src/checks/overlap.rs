//! Overlap and shadowing, decided pairwise per term.
//!
//! Two rules *overlap* when some input could satisfy both: no binding they share is
//! required to be two different enum variants or two different integers (an opaque
//! extractor may match anything). Overlapping rules at the same priority are an error,
//! since which one fires would be an accident of ordering.
//!
//! A rule is *shadowed* when a higher-priority rule matches everything it matches:
//! every test of the higher rule is also a test of the lower one. Because bindings are
//! hash-consed, "the same extractor or partial constructor applied to the same value"
//! is literally the same test, and it succeeds or fails alike in both rules; any
//! fallible call the lower rule lacks is assumed able to fail, so it never shadows.
//!
//! `multi` terms are exempt: all of their matching rules fire.

use crate::diagnostics::{Code, Diagnostic, Diagnostics};
use crate::program::{Program, Rule};

pub fn check(program: &Program, diags: &mut Diagnostics) {
    for (term, set) in &program.rulesets {
        let info = &program.terms[*term];
        // Rules are sorted by priority, highest first, then by source order.
        for (j, lower) in set.rules.iter().enumerate() {
            if lower.disjoint(lower) {
                diags.push(
                    Diagnostic::error(Code::NeverMatches, format!(
                        "rule {} can never match: its patterns require one value to be two different things",
                        describe(lower, diags)
                    ))
                    .at(lower.span, "this rule never fires"),
                );
                continue;
            }
            if info.multi {
                continue; // all matching rules fire: overlap and order are intended
            }
            if let Some(higher) = set.rules[..j]
                .iter()
                .find(|h| h.prio > lower.prio && subsumes(h, lower))
            {
                diags.push(shadowed(lower, higher, diags));
                continue;
            }
            for earlier in &set.rules[..j] {
                if earlier.prio == lower.prio && !earlier.disjoint(lower) {
                    diags.push(overlapping(earlier, lower, &info.name, diags));
                }
            }
        }
    }
}

/// Whether every input that `lower` matches is matched by `higher`.
fn subsumes(higher: &Rule, lower: &Rule) -> bool {
    // Both test lists are sorted; `higher`'s must be a subset of `lower`'s.
    higher.tests.iter().all(|t| lower.tests.contains(t))
}

fn shadowed(lower: &Rule, higher: &Rule, diags: &Diagnostics) -> Diagnostic {
    let at = diags.sources.location(higher.span);
    Diagnostic::error(
        Code::Shadowed,
        format!("rule {} can never fire", describe(lower, diags)),
    )
    .at(lower.span, "this rule is shadowed")
    .also(
        higher.span,
        format!(
            "priority {} rule matches everything it matches",
            higher.prio
        ),
    )
    .note(format!(
        "note: shadowed by: {at} (priority {})",
        higher.prio
    ))
    .note(format!(
        "help: give this rule a priority above {}, or remove it",
        higher.prio
    ))
}

fn overlapping(first: &Rule, second: &Rule, term: &str, diags: &Diagnostics) -> Diagnostic {
    let at = diags.sources.location(first.span);
    Diagnostic::error(
        Code::Overlap,
        format!(
            "rules {} and {} of `{term}` overlap at priority {}",
            describe(second, diags),
            describe(first, diags),
            first.prio
        ),
    )
    .at(second.span, "this rule")
    .also(first.span, "and this rule can match the same input")
    .note(format!("note: also matches: {at}"))
    .note("help: give one of them a higher priority to say which one wins")
}

/// Names a rule in a message: by its name if it has one, always by its location.
fn describe(rule: &Rule, diags: &Diagnostics) -> String {
    let at = diags.sources.location(rule.span);
    match &rule.name {
        Some(name) => format!("`{name}` ({at})"),
        None => at,
    }
}
