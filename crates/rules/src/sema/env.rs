//! Type and term environments: `type`, `decl`, `extern`, `convert` and `extractor`
//! definitions.
//!
//! Contract: fills [`Program::types`], [`Program::terms`], [`Program::converters`] and
//! [`Program::macros`]; reports duplicates, unknown names and malformed conversions.
//! Each enum variant is also reachable as the term-like name `Type.Variant`.

use crate::ast::{Def, ExternKind, TypeValue};
use crate::diagnostics::{Code, Diagnostic, Diagnostics, SourceMap, Span};
use crate::program::*;
use std::collections::HashMap;

/// Name tables, kept apart from [`Program`] because only analysis needs them.
#[derive(Default)]
pub struct Names {
    pub types: HashMap<String, TypeId>,
    pub terms: HashMap<String, TermId>,
    /// Rust function name -> the term that first claimed it.
    rust_fns: HashMap<String, (TermId, Span)>,
}

/// What a name in call position resolves to.
pub enum Callee {
    Term(TermId),
    Variant(TypeId, usize),
}

impl Names {
    pub fn resolve(&self, program: &Program, name: &str) -> Option<Callee> {
        if let Some(&t) = self.terms.get(name) {
            return Some(Callee::Term(t));
        }
        let (ty_name, variant) = name.split_once('.')?;
        let &ty = self.types.get(ty_name)?;
        let index = program.types[ty]
            .variants()
            .iter()
            .position(|v| v.name == variant)?;
        Some(Callee::Variant(ty, index))
    }
}

fn duplicate(what: &str, name: &str, span: Span, first: Span, sources: &SourceMap) -> Diagnostic {
    Diagnostic::error(Code::Duplicate, format!("duplicate {what} `{name}`"))
        .at(span, "defined again here")
        .also(first, "first defined here")
        .note(format!(
            "note: first defined at {}",
            sources.location(first)
        ))
}

pub fn declare_types(
    defs: &[&Def],
    program: &mut Program,
    names: &mut Names,
    diags: &mut Diagnostics,
) {
    let typedefs: Vec<_> = defs
        .iter()
        .filter_map(|d| match d {
            Def::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    // First the names, so enum fields may refer to any type.
    for t in &typedefs {
        if let Some(&first) = names.types.get(&t.name.name) {
            diags.push(duplicate(
                "type",
                &t.name.name,
                t.name.span,
                program.types[first].span,
                &diags.sources,
            ));
            continue;
        }
        names.types.insert(t.name.name.clone(), program.types.len());
        program.types.push(TypeInfo {
            name: t.name.name.clone(),
            kind: TypeKind::Primitive {
                rust: t.name.name.clone(),
            },
            span: t.name.span,
        });
    }
    for t in &typedefs {
        let id = names.types[&t.name.name];
        if program.types[id].span != t.name.span {
            continue; // a duplicate, already reported
        }
        program.types[id].kind = match &t.value {
            TypeValue::Primitive(rust) => TypeKind::Primitive {
                rust: rust.name.clone(),
            },
            TypeValue::Enum(variants) => {
                let mut infos: Vec<VariantInfo> = Vec::new();
                for v in variants {
                    if infos.iter().any(|i| i.name == v.name.name) {
                        diags.push(
                            Diagnostic::error(
                                Code::Duplicate,
                                format!("duplicate variant `{}`", v.name.name),
                            )
                            .at(v.name.span, "already a variant of this enum"),
                        );
                        continue;
                    }
                    let mut fields: Vec<(String, TypeId)> = Vec::new();
                    for f in &v.fields {
                        if fields.iter().any(|(n, _)| *n == f.name.name) {
                            diags.push(
                                Diagnostic::error(
                                    Code::Duplicate,
                                    format!("duplicate field `{}`", f.name.name),
                                )
                                .at(f.name.span, "already a field of this variant"),
                            );
                            continue;
                        }
                        match names.types.get(&f.ty.name) {
                            Some(&ty) => fields.push((f.name.name.clone(), ty)),
                            None => diags.push(unknown_type(&f.ty.name, f.ty.span)),
                        }
                    }
                    infos.push(VariantInfo {
                        name: v.name.name.clone(),
                        fields,
                    });
                }
                TypeKind::Enum {
                    variants: infos,
                    is_extern: t.is_extern,
                    copy: t.is_copy,
                }
            }
        };
    }
}

pub fn unknown_type(name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(Code::UnknownName, format!("unknown type `{name}`"))
        .at(span, "no `(type …)` defines this")
}

pub fn declare_terms(
    defs: &[&Def],
    program: &mut Program,
    names: &mut Names,
    diags: &mut Diagnostics,
) {
    for def in defs {
        let Def::Decl(d) = def else { continue };
        if let Some(&first) = names.terms.get(&d.name.name) {
            diags.push(duplicate(
                "term",
                &d.name.name,
                d.name.span,
                program.terms[first].span,
                &diags.sources,
            ));
            continue;
        }
        let mut ok = true;
        let mut lookup = |id: &crate::ast::Ident| match names.types.get(&id.name) {
            Some(&t) => t,
            None => {
                diags.push(unknown_type(&id.name, id.span));
                ok = false;
                0
            }
        };
        let args: Vec<TypeId> = d.args.iter().map(&mut lookup).collect();
        let ret = lookup(&d.ret);
        if !ok {
            continue;
        }
        names.terms.insert(d.name.name.clone(), program.terms.len());
        program.terms.push(TermInfo {
            name: d.name.name.clone(),
            args,
            ret,
            pure: d.pure,
            partial: d.partial,
            multi: d.multi,
            rec: d.rec,
            span: d.name.span,
            constructor: None,
            extractor: None,
            macro_def: None,
            has_rules: false,
        });
    }
    for def in defs {
        if let Def::Rule(r) = def {
            if let crate::ast::Pattern::Term { name, .. } = &r.lhs {
                if let Some(&t) = names.terms.get(&name.name) {
                    program.terms[t].has_rules = true;
                }
            }
        }
    }
}

pub fn declare_externs(
    defs: &[&Def],
    program: &mut Program,
    names: &mut Names,
    diags: &mut Diagnostics,
) {
    for def in defs {
        match def {
            Def::Extern(e) => declare_extern(e, program, names, diags),
            Def::Extractor(m) => {
                let Some(&t) = names.terms.get(&m.term.name) else {
                    diags.push(unknown_term(&m.term.name, m.term.span));
                    continue;
                };
                let term = &program.terms[t];
                if term.macro_def.is_some() || term.extractor.is_some() {
                    diags.push(
                        Diagnostic::error(
                            Code::Duplicate,
                            format!("term `{}` already has an extractor", term.name),
                        )
                        .at(m.term.span, "second extractor defined here"),
                    );
                    continue;
                }
                if m.params.len() != term.args.len() {
                    diags.push(
                        Diagnostic::error(
                            Code::Arity,
                            format!(
                                "extractor `{}` has {} parameter(s) but the term takes {}",
                                term.name,
                                m.params.len(),
                                term.args.len()
                            ),
                        )
                        .at(m.span, "parameter count differs from the `decl`"),
                    );
                    continue;
                }
                program.terms[t].macro_def = Some(program.macros.len());
                program.macros.push(m.clone());
            }
            Def::Convert(c) => declare_convert(c, program, names, diags),
            _ => {}
        }
    }
}

pub fn unknown_term(name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(Code::UnknownName, format!("unknown term `{name}`"))
        .at(span, "no `(decl …)` declares this")
}

fn declare_extern(
    e: &crate::ast::Extern,
    program: &mut Program,
    names: &mut Names,
    diags: &mut Diagnostics,
) {
    let Some(&t) = names.terms.get(&e.term.name) else {
        diags.push(unknown_term(&e.term.name, e.term.span));
        return;
    };
    if let Some(&(other, first)) = names.rust_fns.get(&e.func.name) {
        diags.push(
            Diagnostic::error(
                Code::Duplicate,
                format!("Rust function `{}` is bound twice", e.func.name),
            )
            .at(e.func.span, "bound again here")
            .also(
                first,
                format!("already bound to `{}` here", program.terms[other].name),
            )
            .note("note: each extern term needs its own `Context` method"),
        );
        return;
    }
    names.rust_fns.insert(e.func.name.clone(), (t, e.func.span));
    let term = &mut program.terms[t];
    let func = ExternFn {
        func: e.func.name.clone(),
        span: e.func.span,
    };
    let problem = match e.kind {
        _ if term.multi => Some("`multi` terms cannot be extern (declare their rules instead)"),
        ExternKind::Constructor if term.has_rules => {
            Some("this term already has rules; it cannot also be an extern constructor")
        }
        ExternKind::Constructor if term.constructor.is_some() => {
            Some("this term already has an extern constructor")
        }
        ExternKind::Extractor { .. } if term.extractor.is_some() || term.macro_def.is_some() => {
            Some("this term already has an extractor")
        }
        _ => None,
    };
    if let Some(problem) = problem {
        diags.push(
            Diagnostic::error(
                Code::InvalidExtern,
                format!("invalid extern for term `{}`", term.name),
            )
            .at(e.span, problem),
        );
        return;
    }
    match e.kind {
        ExternKind::Constructor => term.constructor = Some(func),
        ExternKind::Extractor { infallible } => term.extractor = Some((func, infallible)),
    }
}

fn declare_convert(
    c: &crate::ast::Convert,
    program: &mut Program,
    names: &Names,
    diags: &mut Diagnostics,
) {
    let mut ok = true;
    let mut ty = |id: &crate::ast::Ident| match names.types.get(&id.name) {
        Some(&t) => t,
        None => {
            diags.push(unknown_type(&id.name, id.span));
            ok = false;
            0
        }
    };
    let (from, to) = (ty(&c.from), ty(&c.to));
    let Some(&term) = names.terms.get(&c.term.name) else {
        diags.push(unknown_term(&c.term.name, c.term.span));
        return;
    };
    if !ok {
        return;
    }
    let info = &program.terms[term];
    if info.args != [from] || info.ret != to {
        diags.push(
            Diagnostic::error(
                Code::InvalidConversion,
                format!("conversion term `{}` has the wrong signature", info.name),
            )
            .at(
                c.term.span,
                format!(
                    "must be declared `({} ({}) {})`",
                    info.name, c.from.name, c.to.name
                ),
            )
            .also(info.span, "declared here"),
        );
        return;
    }
    if let Some(&first) = program.converters.get(&(from, to)) {
        diags.push(
            Diagnostic::error(
                Code::Duplicate,
                format!(
                    "duplicate conversion from `{}` to `{}`",
                    c.from.name, c.to.name
                ),
            )
            .at(
                c.span,
                format!("`{}` already converts these", program.terms[first].name),
            ),
        );
        return;
    }
    program.converters.insert((from, to), term);
}
