//! Parser: S-expressions to the AST.
//!
//! Contract: accepts any forest from [`crate::sexpr::read`]. Each malformed top-level
//! form is reported once (the first problem in it) and dropped; the other forms are
//! still parsed, so one typo does not hide the rest of the file's errors.

use crate::ast::*;
use crate::diagnostics::{Code, Diagnostic, Diagnostics, Span};
use crate::sexpr::SExpr;

type PResult<T> = Result<T, Diagnostic>;

/// Parses the top-level forms of one file.
pub fn parse(forms: &[SExpr], diags: &mut Diagnostics) -> Vec<Def> {
    let mut defs = Vec::new();
    for form in forms {
        match parse_def(form) {
            Ok(def) => defs.push(def),
            Err(d) => diags.push(d),
        }
    }
    defs
}

fn err(span: Span, message: impl Into<String>, label: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::Syntax, message).at(span, label)
}

fn ident(e: &SExpr, what: &str) -> PResult<Ident> {
    match e {
        SExpr::Symbol(name, span) => Ok(Ident {
            name: name.clone(),
            span: *span,
        }),
        other => Err(err(
            other.span(),
            format!("expected {what}"),
            format!("expected {what} here"),
        )),
    }
}

fn list<'a>(e: &'a SExpr, what: &str) -> PResult<&'a [SExpr]> {
    match e {
        SExpr::List(items, _) => Ok(items),
        other => Err(err(
            other.span(),
            format!("expected {what}"),
            format!("expected a parenthesized {what}"),
        )),
    }
}

fn keyword(e: &SExpr) -> Option<&str> {
    match e {
        SExpr::Symbol(s, _) => Some(s),
        _ => None,
    }
}

fn expect_len(items: &[SExpr], span: Span, n: usize, form: &str) -> PResult<()> {
    if items.len() != n {
        return Err(err(
            span,
            format!("malformed `{form}`"),
            format!(
                "`{form}` takes {} item(s), found {}",
                n - 1,
                items.len().saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

fn parse_def(form: &SExpr) -> PResult<Def> {
    let span = form.span();
    let items = list(form, "a top-level form such as `(rule …)`")?;
    let Some(head) = items.first() else {
        return Err(err(
            span,
            "empty form",
            "expected `type`, `decl`, `rule`, …",
        ));
    };
    match keyword(head) {
        Some("type") => parse_type(items, span).map(Def::Type),
        Some("decl") => parse_decl(items, span).map(Def::Decl),
        Some("extern") => parse_extern(items, span).map(Def::Extern),
        Some("rule") => parse_rule(items, span).map(Def::Rule),
        Some("extractor") => parse_extractor(items, span).map(Def::Extractor),
        Some("convert") => {
            expect_len(items, span, 4, "convert")?;
            Ok(Def::Convert(Convert {
                from: ident(&items[1], "a type name")?,
                to: ident(&items[2], "a type name")?,
                term: ident(&items[3], "a term name")?,
                span,
            }))
        }
        _ => Err(err(
            head.span(),
            "unknown top-level form",
            "expected `type`, `decl`, `extern`, `rule`, `extractor` or `convert`",
        )),
    }
}

fn parse_type(items: &[SExpr], span: Span) -> PResult<TypeDef> {
    let name = ident(
        items.get(1).ok_or_else(|| missing(span, "a type name"))?,
        "a type name",
    )?;
    let mut rest = &items[2..];
    let is_extern = matches!(rest.first().and_then(keyword), Some("extern"));
    if is_extern {
        rest = &rest[1..];
    }
    let is_copy = matches!(rest.first().and_then(keyword), Some("copy"));
    if is_copy {
        rest = &rest[1..];
    }
    let [body] = rest else {
        return Err(err(
            span,
            "malformed `type`",
            "expected `(type Name [extern] (primitive T))` or `(type Name [extern] [copy] (enum …))`",
        ));
    };
    let body_items = list(body, "`(primitive …)` or `(enum …)`")?;
    let value = match body_items.first().and_then(keyword) {
        Some("primitive") if is_copy => {
            return Err(err(
                span,
                "malformed `type`",
                "`copy` marks an enum; primitives are always copied",
            ))
        }
        Some("primitive") => {
            expect_len(body_items, body.span(), 2, "primitive")?;
            TypeValue::Primitive(ident(&body_items[1], "a Rust type name")?)
        }
        Some("enum") => TypeValue::Enum(
            body_items[1..]
                .iter()
                .map(parse_variant)
                .collect::<PResult<_>>()?,
        ),
        _ => {
            return Err(err(
                body.span(),
                "unknown type definition",
                "expected `(primitive T)` or `(enum …)`",
            ))
        }
    };
    Ok(TypeDef {
        name,
        is_extern,
        is_copy,
        value,
        span,
    })
}

fn parse_variant(e: &SExpr) -> PResult<Variant> {
    let items = list(e, "an enum variant `(Name (field Type) …)`")?;
    let name = ident(
        items
            .first()
            .ok_or_else(|| missing(e.span(), "a variant name"))?,
        "a variant name",
    )?;
    let fields = items[1..]
        .iter()
        .map(|f| {
            let parts = list(f, "a field `(name Type)`")?;
            expect_len(parts, f.span(), 2, "field")?;
            Ok(Field {
                name: ident(&parts[0], "a field name")?,
                ty: ident(&parts[1], "a type name")?,
            })
        })
        .collect::<PResult<_>>()?;
    Ok(Variant { name, fields })
}

fn missing(span: Span, what: &str) -> Diagnostic {
    err(span, format!("missing {what}"), format!("expected {what}"))
}

fn parse_decl(items: &[SExpr], span: Span) -> PResult<Decl> {
    let mut flags = (false, false, false, false);
    let mut i = 1;
    while let Some(word) = items.get(i).and_then(keyword) {
        match word {
            "pure" => flags.0 = true,
            "partial" => flags.1 = true,
            "multi" => flags.2 = true,
            "rec" => flags.3 = true,
            _ => break,
        }
        i += 1;
    }
    if items.len() != i + 3 {
        return Err(err(
            span,
            "malformed `decl`",
            "expected `(decl [pure] [partial] [multi] [rec] name (ArgType …) RetType)`",
        ));
    }
    let name = ident(&items[i], "a term name")?;
    let args = list(&items[i + 1], "an argument type list")?
        .iter()
        .map(|a| ident(a, "a type name"))
        .collect::<PResult<_>>()?;
    let ret = ident(&items[i + 2], "a return type")?;
    Ok(Decl {
        name,
        args,
        ret,
        pure: flags.0,
        partial: flags.1,
        multi: flags.2,
        rec: flags.3,
        span,
    })
}

fn parse_extern(items: &[SExpr], span: Span) -> PResult<Extern> {
    let kind = match items.get(1).and_then(keyword) {
        Some("constructor") => ExternKind::Constructor,
        Some("extractor") => ExternKind::Extractor { infallible: false },
        _ => {
            return Err(err(
                span,
                "malformed `extern`",
                "expected `(extern constructor …)` or `(extern extractor …)`",
            ))
        }
    };
    let mut rest = &items[2..];
    let kind = match (kind, rest.first().and_then(keyword)) {
        (ExternKind::Extractor { .. }, Some("infallible")) if rest.len() == 3 => {
            rest = &rest[1..];
            ExternKind::Extractor { infallible: true }
        }
        (k, _) => k,
    };
    let [term, func] = rest else {
        return Err(err(
            span,
            "malformed `extern`",
            "expected a term name and a Rust function name",
        ));
    };
    Ok(Extern {
        kind,
        term: ident(term, "a term name")?,
        func: ident(func, "a Rust function name")?,
        span,
    })
}

fn parse_rule(items: &[SExpr], span: Span) -> PResult<Rule> {
    let mut i = 1;
    let mut name = None;
    if let Some(SExpr::Symbol(..)) = items.get(i) {
        name = Some(ident(&items[i], "a rule name")?);
        i += 1;
    }
    let mut prio = 0;
    if let Some(SExpr::Int(v, s)) = items.get(i) {
        prio = i64::try_from(*v)
            .map_err(|_| err(*s, "priority out of range", "must fit in 64 bits"))?;
        i += 1;
    }
    if items.len() < i + 2 {
        return Err(err(
            span,
            "malformed `rule`",
            "expected `(rule [name] [priority] (term pats…) [clauses…] expr)`",
        ));
    }
    let lhs_items = list(&items[i], "a left-hand side `(term pats…)`")?;
    let lhs = parse_term_pattern(lhs_items, items[i].span())?;
    let clauses = items[i + 1..items.len() - 1]
        .iter()
        .map(parse_clause)
        .collect::<PResult<_>>()?;
    let rhs = parse_expr(&items[items.len() - 1])?;
    Ok(Rule {
        name,
        prio,
        lhs,
        clauses,
        rhs,
        span,
    })
}

fn parse_clause(e: &SExpr) -> PResult<Clause> {
    let items = list(e, "an `(if-let pat expr)` or `(if expr)` clause")?;
    match items.first().and_then(keyword) {
        Some("if-let") if items.len() >= 3 => Ok(Clause::IfLet {
            pat: parse_pattern_one(&items[1..items.len() - 1])?,
            expr: parse_expr(&items[items.len() - 1])?,
            span: e.span(),
        }),
        Some("if") => {
            expect_len(items, e.span(), 2, "if")?;
            Ok(Clause::If {
                expr: parse_expr(&items[1])?,
                span: e.span(),
            })
        }
        _ => Err(err(
            e.span(),
            "expected a clause",
            "only `(if-let pat expr)` and `(if expr)` may appear between a rule's two sides",
        )),
    }
}

fn parse_extractor(items: &[SExpr], span: Span) -> PResult<ExtractorMacro> {
    if items.len() < 3 {
        return Err(err(
            span,
            "malformed `extractor`",
            "expected `(extractor (name params…) pattern)`",
        ));
    }
    let head = list(&items[1], "`(name params…)`")?;
    let term = ident(
        head.first()
            .ok_or_else(|| missing(items[1].span(), "a term name"))?,
        "a term name",
    )?;
    let params = head[1..]
        .iter()
        .map(|p| ident(p, "a parameter name"))
        .collect::<PResult<_>>()?;
    let body = parse_pattern_one(&items[2..])?;
    Ok(ExtractorMacro {
        term,
        params,
        body,
        span,
    })
}

/// Parses a sequence of patterns, where `name @ pat` spans three items (and chains:
/// `a @ b @ pat` binds both names).
fn parse_patterns(items: &[SExpr]) -> PResult<Vec<Pattern>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        out.push(parse_pattern_at(items, &mut i)?);
    }
    Ok(out)
}

/// Parses the pattern starting at `items[*i]`, advancing `*i` past it.
fn parse_pattern_at(items: &[SExpr], i: &mut usize) -> PResult<Pattern> {
    if let Some(SExpr::At(at)) = items.get(*i + 1) {
        let var = ident(&items[*i], "a variable before `@`")?;
        if *i + 2 >= items.len() {
            return Err(err(*at, "missing pattern after `@`", "expected a pattern"));
        }
        *i += 2;
        let sub = parse_pattern_at(items, i)?;
        return Ok(Pattern::Bind(var, Box::new(sub)));
    }
    let pat = parse_pattern(&items[*i])?;
    *i += 1;
    Ok(pat)
}

fn parse_pattern_one(items: &[SExpr]) -> PResult<Pattern> {
    let mut pats = parse_patterns(items)?;
    match pats.len() {
        1 => Ok(pats.remove(0)),
        _ => Err(err(
            items.first().map_or(Span::default(), SExpr::span),
            "expected one pattern",
            "expected a single pattern",
        )),
    }
}

fn parse_pattern(e: &SExpr) -> PResult<Pattern> {
    match e {
        SExpr::Symbol(s, span) if s == "_" => Ok(Pattern::Wildcard(*span)),
        SExpr::Symbol(s, span) if s.contains('.') => Ok(Pattern::Term {
            name: Ident {
                name: s.clone(),
                span: *span,
            },
            args: Vec::new(),
            span: *span,
        }),
        SExpr::Symbol(s, span) if bool_literal(s).is_some() => {
            Ok(Pattern::Int(Lit::Bool(bool_literal(s) == Some(1)), *span))
        }
        SExpr::Symbol(s, span) => Ok(Pattern::Var(Ident {
            name: s.clone(),
            span: *span,
        })),
        SExpr::Int(v, span) => Ok(Pattern::Int(Lit::Int(*v), *span)),
        SExpr::At(span) => Err(err(*span, "unexpected `@`", "write `name @ pattern`")),
        SExpr::List(items, span) => {
            if let Some("and") = items.first().and_then(keyword) {
                return Ok(Pattern::And(parse_patterns(&items[1..])?, *span));
            }
            parse_term_pattern(items, *span)
        }
    }
}

/// `true` and `false`: literals of a `bool` primitive (sema accepts them only where a `bool`
/// is expected; the generated code spells them `true` and `false`).
fn bool_literal(s: &str) -> Option<i128> {
    match s {
        "true" => Some(1),
        "false" => Some(0),
        _ => None,
    }
}

fn parse_term_pattern(items: &[SExpr], span: Span) -> PResult<Pattern> {
    let name = ident(
        items.first().ok_or_else(|| missing(span, "a term name"))?,
        "a term name",
    )?;
    Ok(Pattern::Term {
        name,
        args: parse_patterns(&items[1..])?,
        span,
    })
}

fn parse_expr(e: &SExpr) -> PResult<Expr> {
    match e {
        SExpr::Symbol(s, span) if s.contains('.') => Ok(Expr::Call {
            name: Ident {
                name: s.clone(),
                span: *span,
            },
            args: Vec::new(),
            span: *span,
        }),
        SExpr::Symbol(s, span) if bool_literal(s).is_some() => {
            Ok(Expr::Int(Lit::Bool(bool_literal(s) == Some(1)), *span))
        }
        SExpr::Symbol(s, span) => Ok(Expr::Var(Ident {
            name: s.clone(),
            span: *span,
        })),
        SExpr::Int(v, span) => Ok(Expr::Int(Lit::Int(*v), *span)),
        SExpr::At(span) => Err(err(*span, "unexpected `@`", "`@` only appears in patterns")),
        SExpr::List(items, span) => {
            let name = ident(
                items.first().ok_or_else(|| missing(*span, "a term name"))?,
                "a term name",
            )?;
            if name.name == "let" {
                return parse_let(items, *span);
            }
            Ok(Expr::Call {
                name,
                args: items[1..].iter().map(parse_expr).collect::<PResult<_>>()?,
                span: *span,
            })
        }
    }
}

fn parse_let(items: &[SExpr], span: Span) -> PResult<Expr> {
    expect_len(items, span, 3, "let")?;
    let bindings = list(&items[1], "a binding list `((x Type expr) …)`")?
        .iter()
        .map(|b| {
            let parts = list(b, "a binding `(x Type expr)`")?;
            expect_len(parts, b.span(), 3, "let binding")?;
            Ok(LetBinding {
                var: ident(&parts[0], "a variable name")?,
                ty: ident(&parts[1], "a type name")?,
                value: parse_expr(&parts[2])?,
            })
        })
        .collect::<PResult<_>>()?;
    Ok(Expr::Let {
        bindings,
        body: Box::new(parse_expr(&items[2])?),
        span,
    })
}
