//! Decision-tree backend: emits a term's [`crate::matchtree`] as nested `match`,
//! `if let` and `if` statements.

use super::emit::TermEmitter;
use crate::matchtree::{self, ArmValue, Block, Step};

pub fn emit_term(e: &mut TermEmitter) {
    let multi = e.info().multi;
    let counts: Vec<usize> = (0..e.set.bindings.len())
        .map(|b| e.variant_count(b))
        .collect();
    let mut tree = matchtree::build_with_scope(e.set, multi, |b| counts[b], e.initial_scope());
    e.open_function();
    emit_block(e, &mut tree);
    let falls_through = !matches!(tree.steps.last(), Some(Step::Leaf(_)));
    e.close_function(falls_through);
}

fn emit_block(e: &mut TermEmitter, block: &mut Block) {
    for step in &mut block.steps {
        match step {
            Step::Let(b) => e.let_binding(*b),
            Step::Leaf(rule) => e.leaf(*rule),
            Step::IfEq { a, b, body } => {
                e.w.line(&format!("if v{a} == v{b} {{"));
                e.w.indent();
                emit_block(e, body);
                e.w.dedent();
                e.w.line("}");
            }
            Step::IfSome {
                subject,
                payload,
                body,
            } => {
                let bind = payload.map_or("_".to_string(), |p| format!("v{p}"));
                e.w.line(&format!("if let Some({bind}) = &v{subject} {{"));
                e.w.indent();
                if let Some(p) = payload {
                    e.own_bound_ref(*p);
                }
                emit_block(e, body);
                e.w.dedent();
                e.w.line("}");
            }
            Step::Match {
                subject,
                arms,
                exhaustive,
            } => {
                let subject = *subject;
                let by_ref = e.is_enum(subject);
                e.w.line(&format!(
                    "match {}v{subject} {{",
                    if by_ref { "&" } else { "" }
                ));
                e.w.indent();
                for arm in arms.iter_mut() {
                    let pattern = match arm.value {
                        ArmValue::Variant(variant) => {
                            e.variant_pattern(subject, variant, &arm.fields)
                        }
                        ArmValue::Int(value) => value.to_string(),
                    };
                    e.w.line(&format!("{pattern} => {{"));
                    e.w.indent();
                    for &(_, f) in &arm.fields {
                        e.own_bound_ref(f);
                    }
                    emit_block(e, &mut arm.body);
                    e.w.dedent();
                    e.w.line("}");
                }
                if !*exhaustive {
                    e.w.line("_ => {}");
                }
                e.w.dedent();
                e.w.line("}");
            }
        }
    }
}
