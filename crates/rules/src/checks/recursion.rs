//! Recursion: a term whose rules can call back into itself (directly or through other
//! terms) must be declared `rec`.
//!
//! Edges of the call graph come from each rule's right-hand side and the constructor
//! calls in its clauses. Cycles are found with Tarjan's strongly connected components.

use crate::diagnostics::{Code, Diagnostic, Diagnostics};
use crate::program::{Binding, Program, RhsExpr, TermId};
use std::collections::BTreeSet;

pub fn check(program: &Program, diags: &mut Diagnostics) {
    let n = program.terms.len();
    let mut edges: Vec<BTreeSet<TermId>> = vec![BTreeSet::new(); n];
    for (term, set) in &program.rulesets {
        for rule in &set.rules {
            rhs_calls(&rule.rhs, &mut edges[*term]);
            for test in &rule.tests {
                collect_binding_calls(&set.bindings, test.subject(), &mut edges[*term]);
                if let crate::program::Test::Eq(_, b) = test {
                    collect_binding_calls(&set.bindings, *b, &mut edges[*term]);
                }
            }
        }
    }
    for component in strongly_connected(&edges) {
        let cyclic = component.len() > 1 || edges[component[0]].contains(&component[0]);
        if !cyclic {
            continue;
        }
        let names: Vec<&str> = component
            .iter()
            .map(|&t| program.terms[t].name.as_str())
            .collect();
        for &t in &component {
            let info = &program.terms[t];
            if !info.rec {
                diags.push(
                    Diagnostic::error(
                        Code::Recursion,
                        format!("term `{}` is recursive but not declared `rec`", info.name),
                    )
                    .at(info.span, "declared here")
                    .note(format!("note: call cycle through: {}", names.join(", ")))
                    .note("help: write `(decl rec …)` if the recursion is intended"),
                );
            }
        }
    }
}

fn rhs_calls(e: &RhsExpr, out: &mut BTreeSet<TermId>) {
    match e {
        RhsExpr::Binding(_) | RhsExpr::Local(..) | RhsExpr::Int { .. } => {}
        RhsExpr::Call { term, args } => {
            out.insert(*term);
            args.iter().for_each(|a| rhs_calls(a, out));
        }
        RhsExpr::Variant { args, .. } => args.iter().for_each(|a| rhs_calls(a, out)),
        RhsExpr::Let { locals, body } => {
            locals.iter().for_each(|(_, _, v)| rhs_calls(v, out));
            rhs_calls(body, out);
        }
    }
}

fn collect_binding_calls(bindings: &[Binding], b: usize, out: &mut BTreeSet<TermId>) {
    if let Binding::Construct { term, .. } = &bindings[b] {
        out.insert(*term);
    }
    for s in bindings[b].sources() {
        collect_binding_calls(bindings, s, out);
    }
}

/// Tarjan's algorithm, iterative; components come out in a deterministic order.
fn strongly_connected(edges: &[BTreeSet<TermId>]) -> Vec<Vec<TermId>> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // Each frame: node and its successors still to visit.
        let mut frames: Vec<(TermId, Vec<TermId>)> = Vec::new();
        let visit = |v: TermId, next: &mut usize, index: &mut Vec<usize>, low: &mut Vec<usize>| {
            index[v] = *next;
            low[v] = *next;
            *next += 1;
        };
        visit(root, &mut next, &mut index, &mut low);
        stack.push(root);
        on_stack[root] = true;
        frames.push((root, edges[root].iter().rev().copied().collect()));
        while let Some((v, pending)) = frames.last_mut() {
            let v = *v;
            if let Some(w) = pending.pop() {
                if index[w] == usize::MAX {
                    visit(w, &mut next, &mut index, &mut low);
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, edges[w].iter().rev().copied().collect()));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _)) = frames.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                out.push(component);
            }
        }
    }
    out
}
