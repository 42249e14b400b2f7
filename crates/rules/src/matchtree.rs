//! Match trees: each internal term's rules compiled into one decision tree.
//!
//! Contract: requires a checked [`RuleSet`] (rules in priority order, tests sorted so
//! that guards come first). Produces a tree in which every rule appears in exactly one
//! leaf, every test is evaluated at most once on any path, and a binding computed at
//! some level stays in scope for everything after it at that level (so an extractor
//! shared by several rules is called once). It never duplicates a rule, so the tree is
//! linear in the size of the rules.
//!
//! Semantics: a [`Block`] runs its steps in order; a leaf returns (or, in a `multi`
//! term, records its result and continues); a test whose arms all fail falls through
//! to the next step. The tree picks the same rule as trying the rules one by one in
//! priority order, because of how a block is built from its ordered rows:
//!
//! 1. If the first row has no tests left, it is a leaf: it is the first rule that can
//!    match here, so nothing after it in this block can win (for `multi`, it fires and
//!    the rest continue).
//! 2. Otherwise pick a test `t` of the first row. The rows that also test `t`'s subject
//!    the same way form group `S`, except that a row may join only if it is disjoint
//!    from every earlier row left out of `S`. The block becomes: switch on `t` with
//!    `S` partitioned among the arms, then the remaining rows `R`.
//!
//! Running `S` before `R` gives the same first match as the original order: if the
//! original winner `m` is in `S`, the `R` rows before it are disjoint from it and so
//! fail; if `m` is in `R`, every `S` row after `m` is disjoint from `m` and so fails.
//! The same argument keeps the firing order of a `multi` term's rules.

use crate::program::{Binding, BindingId, RhsExpr, Rule, RuleSet, Test};
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug)]
pub enum Step {
    /// Compute a binding that needs no test (an argument-free call, a tuple element, …).
    Let(BindingId),
    /// Switch on an enum variant or integer value; at most one arm runs.
    Match {
        subject: BindingId,
        arms: Vec<Arm>,
        /// Whether the arms cover every enum variant (no fallback arm needed).
        exhaustive: bool,
    },
    /// Run `body` if the `Option` binding `subject` is `Some`, binding its payload.
    IfSome {
        subject: BindingId,
        payload: Option<BindingId>,
        body: Block,
    },
    /// Run `body` if the two bindings are equal.
    IfEq { a: BindingId, b: BindingId, body: Block },
    /// The rule at this index of the rule set fires.
    Leaf(usize),
}

/// The value a match arm selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmValue {
    Variant(usize),
    Int(i128),
}

#[derive(Clone, Debug)]
pub struct Arm {
    pub value: ArmValue,
    /// Field bindings this arm binds: (field index, binding).
    pub fields: Vec<(usize, BindingId)>,
    pub body: Block,
}

/// Builds the decision tree of one term's rules; `scope` marks the bindings already
/// available on entry (the parameters).
pub fn build_with_scope(
    set: &RuleSet,
    multi: bool,
    variant_count: impl Fn(BindingId) -> usize,
    mut scope: Vec<bool>,
) -> Block {
    let uses = set.rules.iter().map(|r| rule_uses(set, r)).collect();
    let builder = Builder {
        set,
        multi,
        uses,
        variant_count: &variant_count,
    };
    let rows = (0..set.rules.len())
        .map(|rule| Row {
            rule,
            remaining: set.rules[rule].tests.clone(),
        })
        .collect();
    builder.block(rows, &mut scope)
}

/// Every binding a rule reads, closed under "computed from".
pub fn rule_uses(set: &RuleSet, rule: &Rule) -> BTreeSet<BindingId> {
    let mut roots = Vec::new();
    for t in &rule.tests {
        roots.push(t.subject());
        if let Test::Eq(_, b) = t {
            roots.push(*b);
        }
    }
    rhs_bindings(&rule.rhs, &mut roots);
    let mut out = BTreeSet::new();
    while let Some(b) = roots.pop() {
        if out.insert(b) {
            roots.extend(set.bindings[b].sources());
        }
    }
    out
}

pub fn rhs_bindings(e: &RhsExpr, out: &mut Vec<BindingId>) {
    match e {
        RhsExpr::Binding(b) => out.push(*b),
        RhsExpr::Local(..) | RhsExpr::Int { .. } => {}
        RhsExpr::Call { args, .. } | RhsExpr::Variant { args, .. } => {
            args.iter().for_each(|a| rhs_bindings(a, out))
        }
        RhsExpr::Let { locals, body } => {
            locals.iter().for_each(|(_, _, v)| rhs_bindings(v, out));
            rhs_bindings(body, out);
        }
    }
}

struct Row {
    rule: usize,
    remaining: Vec<Test>,
}

struct Builder<'a> {
    set: &'a RuleSet,
    multi: bool,
    uses: Vec<BTreeSet<BindingId>>,
    variant_count: &'a dyn Fn(BindingId) -> usize,
}

/// Whether two tests switch on the same thing (so they can share one switch).
fn same_switch(a: &Test, b: &Test) -> bool {
    match (a, b) {
        (Test::Variant(x, _), Test::Variant(y, _)) | (Test::Int(x, _), Test::Int(y, _)) => x == y,
        (Test::Some(x), Test::Some(y)) => x == y,
        (Test::Eq(..), Test::Eq(..)) => a == b,
        _ => false,
    }
}

impl Builder<'_> {
    fn block(&self, rows: Vec<Row>, scope: &mut Vec<bool>) -> Block {
        let mut steps = Vec::new();
        let mut rows = rows;
        while !rows.is_empty() {
            if rows[0].remaining.is_empty() {
                let row = rows.remove(0);
                let mut needed = Vec::new();
                rhs_bindings(&self.set.rules[row.rule].rhs, &mut needed);
                for b in needed {
                    self.ensure_bound(b, scope, &mut steps);
                }
                steps.push(Step::Leaf(row.rule));
                if !self.multi {
                    break; // The first matching rule wins; later rows cannot.
                }
                continue;
            }
            let test = self.choose_test(&rows, scope);
            let (group, rest) = self.split(rows, &test);
            rows = rest;
            // `switch` pushes the `Let`s its subject needs before returning the test.
            let step = self.switch(&test, group, scope, &mut steps);
            steps.push(step);
        }
        Block { steps }
    }

    /// Picks a ready test of the first row, preferring subjects many rows test.
    fn choose_test(&self, rows: &[Row], scope: &[bool]) -> Test {
        let first = &rows[0];
        let ready = first.remaining.iter().filter(|t| self.test_ready(t, scope));
        let best = ready.max_by_key(|t| {
            let sharing = rows
                .iter()
                .filter(|r| r.remaining.iter().any(|u| same_switch(t, u)))
                .count();
            // Prefer earlier tests on ties (max_by_key keeps the last maximum).
            (sharing, std::cmp::Reverse(t.subject()))
        });
        // Tests are sorted so that guards come first; the first is always ready.
        best.cloned().unwrap_or_else(|| first.remaining[0].clone())
    }

    fn test_ready(&self, t: &Test, scope: &[bool]) -> bool {
        let ready = |b| self.binding_ready(b, scope);
        match t {
            Test::Eq(a, b) => ready(*a) && ready(*b),
            other => ready(other.subject()),
        }
    }

    fn binding_ready(&self, b: BindingId, scope: &[bool]) -> bool {
        scope[b]
            || (!self.set.bindings[b].is_guarded()
                && self.set.bindings[b]
                    .sources()
                    .iter()
                    .all(|&s| self.binding_ready(s, scope)))
    }

    /// Splits rows into the group that shares `test`'s switch and the rest.
    fn split(&self, rows: Vec<Row>, test: &Test) -> (Vec<Row>, Vec<Row>) {
        let mut group = Vec::new();
        let mut rest: Vec<Row> = Vec::new();
        for row in rows {
            let shares = row.remaining.iter().any(|t| same_switch(t, test));
            let rule = &self.set.rules[row.rule];
            if shares && rest.iter().all(|r| self.set.rules[r.rule].disjoint(rule)) {
                group.push(row);
            } else {
                rest.push(row);
            }
        }
        (group, rest)
    }

    fn ensure_bound(&self, b: BindingId, scope: &mut Vec<bool>, steps: &mut Vec<Step>) {
        if scope[b] {
            return;
        }
        debug_assert!(
            !self.set.bindings[b].is_guarded(),
            "guarded binding used outside its test"
        );
        for s in self.set.bindings[b].sources() {
            self.ensure_bound(s, scope, steps);
        }
        scope[b] = true;
        steps.push(Step::Let(b));
    }

    fn switch(
        &self,
        test: &Test,
        group: Vec<Row>,
        scope: &mut Vec<bool>,
        lets: &mut Vec<Step>,
    ) -> Step {
        match test {
            Test::Eq(a, b) => {
                self.ensure_bound(*a, scope, lets);
                self.ensure_bound(*b, scope, lets);
                let rows = remove_test(group, test);
                let body = self.block(rows, &mut scope.clone());
                Step::IfEq { a: *a, b: *b, body }
            }
            Test::Some(subject) => {
                self.ensure_bound(*subject, scope, lets);
                let rows = remove_test(group, test);
                let payload = self.set.interned.get(&Binding::Some(*subject)).copied();
                let payload =
                    payload.filter(|p| rows.iter().any(|r| self.uses[r.rule].contains(p)));
                let mut inner = scope.clone();
                if let Some(p) = payload {
                    inner[p] = true;
                }
                let body = self.block(rows, &mut inner);
                Step::IfSome {
                    subject: *subject,
                    payload,
                    body,
                }
            }
            Test::Variant(subject, _) | Test::Int(subject, _) => {
                self.ensure_bound(*subject, scope, lets);
                // Partition by value, arms in order of first appearance.
                let mut arms: Vec<(Test, ArmValue, Vec<Row>)> = Vec::new();
                for row in group {
                    let found = row.remaining.iter().find(|t| same_switch(t, test));
                    let (t, value) = match found {
                        Some(t @ Test::Variant(_, v)) => (t.clone(), ArmValue::Variant(*v)),
                        Some(t @ Test::Int(_, v)) => (t.clone(), ArmValue::Int(*v)),
                        _ => continue, // `split` only groups rows with such a test
                    };
                    let row = Row {
                        rule: row.rule,
                        remaining: row.remaining.into_iter().filter(|u| *u != t).collect(),
                    };
                    match arms.iter_mut().find(|(u, _, _)| *u == t) {
                        Some((_, _, rows)) => rows.push(row),
                        None => arms.push((t, value, vec![row])),
                    }
                }
                // Distinct arms as many as the subject has values (variants, or `true` and
                // `false`) cover it.
                let exhaustive = matches!(test, Test::Variant(..) | Test::Int(..))
                    && arms.len() == (self.variant_count)(*subject);
                let arms = arms
                    .into_iter()
                    .map(|(t, value, rows)| {
                        let fields = self.arm_fields(&t, &rows);
                        let mut inner = scope.clone();
                        for &(_, f) in &fields {
                            inner[f] = true;
                        }
                        let body = self.block(rows, &mut inner);
                        Arm {
                            value,
                            fields,
                            body,
                        }
                    })
                    .collect();
                Step::Match {
                    subject: *subject,
                    arms,
                    exhaustive,
                }
            }
        }
    }

    /// The fields of a variant arm that some rule in it reads.
    fn arm_fields(&self, test: &Test, rows: &[Row]) -> Vec<(usize, BindingId)> {
        let Test::Variant(subject, variant) = *test else {
            return Vec::new();
        };
        let mut fields: Vec<(usize, BindingId)> = Vec::new();
        for row in rows {
            for &b in &self.uses[row.rule] {
                if let Binding::Field {
                    source,
                    variant: v,
                    field,
                } = self.set.bindings[b]
                {
                    if source == subject && v == variant && !fields.contains(&(field, b)) {
                        fields.push((field, b));
                    }
                }
            }
        }
        fields.sort_unstable();
        fields
    }
}

fn remove_test(rows: Vec<Row>, test: &Test) -> Vec<Row> {
    rows.into_iter()
        .map(|row| Row {
            rule: row.rule,
            remaining: row.remaining.into_iter().filter(|t| t != test).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Diagnostics, SourceMap};
    use crate::program::Program;

    fn analyze(text: &str) -> Program {
        let mut sources = SourceMap::new();
        sources.add("t.rules", text);
        let mut diags = Diagnostics::new(sources);
        let tokens = crate::lexer::lex(0, text, &mut diags);
        let forms = crate::sexpr::read(tokens, &mut diags);
        let defs = crate::parser::parse(&forms, &mut diags);
        let program = crate::sema::analyze(&[defs], &mut diags);
        assert!(!diags.has_errors(), "{}", diags.render());
        program
    }

    fn leaves(block: &Block, out: &mut Vec<usize>) {
        for step in &block.steps {
            match step {
                Step::Leaf(r) => out.push(*r),
                Step::Let(_) => {}
                Step::IfSome { body, .. } | Step::IfEq { body, .. } => leaves(body, out),
                Step::Match { arms, .. } => arms.iter().for_each(|a| leaves(&a.body, out)),
            }
        }
    }

    #[test]
    fn every_rule_is_one_leaf_and_shared_tests_are_merged() {
        let program = analyze(
            "(type u32 (primitive u32))
             (type E (enum (A (x u32)) (B (x u32)) (C)))
             (decl f (E u32) u32)
             (rule 3 (f (E.A 1) _) 1)
             (rule 2 (f (E.A 2) _) 2)
             (rule 2 (f (E.B x) x) 3)
             (rule 1 (f (E.A _) 5) 4)
             (rule 0 (f _ _) 5)",
        );
        let (_, set) = &program.rulesets[0];
        let block = build_with_scope(set, false, |_| 3, vec![true; set.bindings.len()]);
        let mut found = Vec::new();
        leaves(&block, &mut found);
        found.sort_unstable();
        assert_eq!(found, vec![0, 1, 2, 3, 4]);
        // One top-level switch on the enum holds the three variant rules.
        let top_matches = block
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Match { .. }))
            .count();
        assert_eq!(top_matches, 1);
    }
}
