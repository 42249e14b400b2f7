//! Decision-tree backend: emits a term's [`crate::matchtree`] as nested `match`,
//! `if let` and `if` statements.

use super::emit::TermEmitter;
use crate::matchtree::{self, Arm, ArmValue, Block, Step};

pub fn emit_term(e: &mut TermEmitter) {
    let multi = e.info().multi;
    let counts: Vec<usize> = (0..e.set.bindings.len())
        .map(|b| e.variant_count(b))
        .collect();
    let mut tree = matchtree::build_with_scope(e.set, multi, |b| counts[b], e.initial_scope());
    e.open_function();
    emit_block(e, &mut tree, true);
    e.close_function(falls_through(&tree));
}

/// Whether control can reach the end of `block`: not when it ends in a leaf (which returns),
/// nor in an exhaustive match none of whose arms can reach their end.
fn falls_through(block: &Block) -> bool {
    match block.steps.last() {
        Some(Step::Leaf(_)) => false,
        Some(Step::Match {
            arms,
            exhaustive: true,
            ..
        }) => arms.iter().any(|arm| falls_through(&arm.body)),
        _ => true,
    }
}

/// Emits a block; `tail` is true when nothing follows it in the function, so that a
/// final leaf is written as the function's tail expression.
fn emit_block(e: &mut TermEmitter, block: &mut Block, tail: bool) {
    let count = block.steps.len();
    for (i, step) in block.steps.iter_mut().enumerate() {
        let tail = tail && i + 1 == count;
        match step {
            Step::Let(b) => e.let_binding(*b),
            Step::Leaf(rule) => e.leaf(*rule, tail),
            Step::IfSome {
                subject,
                payload: Some(p),
                body,
            } => {
                e.w.line(&format!("if let Some(v{p}) = &v{subject} {{"));
                e.w.indent();
                e.own_bound_ref(*p);
                emit_block(e, body, false);
                e.w.dedent();
                e.w.line("}");
            }
            Step::Match {
                subject,
                arms,
                exhaustive,
            } => emit_match(e, *subject, arms, *exhaustive, tail),
            // `IfEq` and a payload-free `IfSome`.
            plain => {
                if let Some((test, body)) = plain_test(plain) {
                    emit_plain_tests(e, &mut vec![test], body);
                }
            }
        }
    }
}

/// Emits `if tests… {` and `body`, joining into the tests each plain test that is all its
/// body holds (`a && b`): the same code, in the form clippy's `collapsible_if` asks of the
/// generated matcher.
fn emit_plain_tests(e: &mut TermEmitter, tests: &mut Vec<String>, body: &mut Block) {
    if let [only] = &mut body.steps[..] {
        if let Some((test, inner)) = plain_test(only) {
            tests.push(test);
            return emit_plain_tests(e, tests, inner);
        }
    }
    e.w.line(&format!("if {} {{", tests.join(" && ")));
    e.w.indent();
    emit_block(e, body, false);
    e.w.dedent();
    e.w.line("}");
}

/// The test of a step that only tests, binding nothing (`a == b`, `x.is_some()`), with
/// the block it guards.
fn plain_test(step: &mut Step) -> Option<(String, &mut Block)> {
    match step {
        Step::IfEq { a, b, body } => Some((format!("v{a} == v{b}"), body)),
        Step::IfSome {
            subject,
            payload: None,
            body,
        } => Some((format!("v{subject}.is_some()"), body)),
        _ => None,
    }
}

/// A switch: `if let` (or `if`) for a single arm that may fail, `match` otherwise. A match
/// in `tail` position that cannot fall through is the function's value: its arms end in
/// their values rather than in `return`.
fn emit_match(e: &mut TermEmitter, subject: usize, arms: &mut [Arm], exhaustive: bool, tail: bool) {
    let pattern = |e: &TermEmitter, arm: &Arm| match arm.value {
        ArmValue::Variant(variant) => e.variant_pattern(subject, variant, &arm.fields),
        ArmValue::Int(value) => e.literal_of(subject, value),
    };
    if let [arm] = arms {
        if !exhaustive {
            let head = match arm.value {
                ArmValue::Variant(_) => format!("if let {} = &v{subject} {{", pattern(e, arm)),
                ArmValue::Int(value) if e.is_bool(subject) => {
                    format!("if {} {{", e.literal_test(subject, value != 0))
                }
                ArmValue::Int(value) => format!("if v{subject} == {value} {{"),
            };
            e.w.line(&head);
            emit_arm_body(e, arm, false);
            e.w.line("}");
            return;
        }
    }
    let value_of_function = tail && exhaustive && !arms.iter().any(|a| falls_through(&a.body));
    let by_ref = if e.is_enum(subject) { "&" } else { "" };
    e.w.line(&format!("match {by_ref}v{subject} {{"));
    e.w.indent();
    for arm in arms.iter_mut() {
        e.w.line(&format!("{} => {{", pattern(e, arm)));
        emit_arm_body(e, arm, value_of_function);
        e.w.line("}");
    }
    if !exhaustive {
        e.w.line("_ => {}");
    }
    e.w.dedent();
    e.w.line("}");
}

fn emit_arm_body(e: &mut TermEmitter, arm: &mut Arm, tail: bool) {
    e.w.indent();
    for &(_, f) in &arm.fields {
        e.own_bound_ref(f);
    }
    emit_block(e, &mut arm.body, tail);
    e.w.dedent();
}
