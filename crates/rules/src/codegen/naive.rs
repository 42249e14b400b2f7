//! Naive backend: every rule is tried on its own, in priority order, as a labeled
//! block that evaluates the rule's tests one after another and breaks out at the first
//! failure. It shares nothing between rules, so it is a direct reading of the rules'
//! meaning; tests compare it against the decision-tree backend.

use super::emit::TermEmitter;
use crate::program::{Binding, Test};

pub fn emit_term(e: &mut TermEmitter) {
    e.open_function();
    let count = e.set.rules.len();
    for rule in 0..count {
        emit_rule(e, rule, rule + 1 == count);
    }
    let falls_through = e.set.rules.last().is_none_or(|r| !r.tests.is_empty());
    e.close_function(falls_through);
}

/// Emits one rule; `last` marks the function's final rule, which, if it has no tests,
/// is written as the function's tail rather than as a block.
fn emit_rule(e: &mut TermEmitter, rule: usize, last: bool) {
    let tests = e.set.rules[rule].tests.clone();
    let label = format!("'rule{}", e.set.rules[rule].index);
    let labeled = !tests.is_empty();
    let tail = last && !labeled && !e.info().multi;
    if !tail {
        e.w.line(&if labeled {
            format!("{label}: {{")
        } else {
            "{".to_string()
        });
        e.w.indent();
    }
    let mut scope = e.initial_scope();
    for test in &tests {
        let deps: Vec<usize> = match test {
            Test::Eq(a, b) => vec![*a, *b],
            other => vec![other.subject()],
        };
        for b in deps {
            bind(e, b, &mut scope);
        }
        match *test {
            Test::Int(b, value) => {
                let differs = match e.is_bool(b) {
                    true => e.literal_test(b, value == 0),
                    false => format!("v{b} != {value}"),
                };
                e.w.line(&format!("if {differs} {{ break {label}; }}"))
            }
            Test::Eq(a, b) => e.w.line(&format!("if v{a} != v{b} {{ break {label}; }}")),
            Test::Some(b) => {
                let payload = e.set.interned.get(&Binding::Some(b)).copied();
                let payload = payload.filter(|p| e.uses[rule].contains(p));
                match payload {
                    Some(p) => e.w.line(&format!(
                        "let Some(v{p}) = &v{b} else {{ break {label}; }};"
                    )),
                    None => e.w.line(&format!("if v{b}.is_none() {{ break {label}; }}")),
                }
                if let Some(p) = payload {
                    scope[p] = true;
                    e.own_bound_ref(p);
                }
            }
            Test::Variant(b, variant) => {
                let fields: Vec<(usize, usize)> = e.uses[rule]
                    .iter()
                    .filter_map(|&f| match e.set.bindings[f] {
                        Binding::Field {
                            source,
                            variant: v,
                            field,
                        } if source == b && v == variant => Some((field, f)),
                        _ => None,
                    })
                    .collect();
                let pattern = e.variant_pattern(b, variant, &fields);
                if e.variant_count(b) == 1 {
                    e.w.line(&format!("let {pattern} = &v{b};"));
                } else {
                    e.w.line(&format!("let {pattern} = &v{b} else {{ break {label}; }};"));
                }
                for &(_, f) in &fields {
                    scope[f] = true;
                    e.own_bound_ref(f);
                }
            }
        }
    }
    let mut needed = Vec::new();
    crate::matchtree::rhs_bindings(&e.set.rules[rule].rhs, &mut needed);
    for b in needed {
        bind(e, b, &mut scope);
    }
    e.leaf(rule, tail);
    if !tail {
        e.w.dedent();
        e.w.line("}");
    }
}

/// Computes `b` (and what it is computed from) if not yet in scope.
fn bind(e: &mut TermEmitter, b: usize, scope: &mut Vec<bool>) {
    if scope[b] {
        return;
    }
    for s in e.set.bindings[b].sources() {
        bind(e, s, scope);
    }
    scope[b] = true;
    e.let_binding(b);
}
