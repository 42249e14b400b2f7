//! Rule lowering: type-checks one rule at a time and turns it into tests over shared
//! bindings plus a typed right-hand side.
//!
//! Contract: requires complete type and term environments. For each rule, either
//! appends a [`Rule`] to its term's [`RuleSet`] or reports why not. Implicit
//! conversions are inserted here: in a pattern, a sub-pattern of type `From` where `To`
//! is expected is wrapped in the `(convert From To term)` term used as an extractor; on
//! the right-hand side, an expression of type `From` is passed through the term used as
//! a constructor. Extractor macros are expanded here too.

use crate::ast::{self, Clause, Expr, Ident, Pattern};
use crate::diagnostics::{Code, Diagnostic, Diagnostics, Span};
use crate::program::*;
use crate::sema::env::{unknown_term, Callee, Names};
use std::collections::{HashMap, HashSet};

/// Deepest nesting of extractor macros before expansion is declared recursive.
const MAX_MACRO_DEPTH: usize = 32;

pub fn lower_rules(
    defs: &[&ast::Def],
    program: &mut Program,
    names: &Names,
    diags: &mut Diagnostics,
) {
    let mut sets: Vec<Option<RuleSet>> = vec![None; program.terms.len()];
    let rules = defs.iter().filter_map(|d| match d {
        ast::Def::Rule(r) => Some(r),
        _ => None,
    });
    for (index, rule) in rules.enumerate() {
        let Some(term) = root_term(rule, program, names, diags) else {
            continue;
        };
        let set = sets[term].get_or_insert_with(RuleSet::default);
        let mut lowerer = Lowerer {
            program,
            names,
            set,
            diags,
            term,
            vars: HashMap::new(),
            locals: Vec::new(),
            next_local: 0,
            tests: Vec::new(),
            ok: true,
            macro_depth: 0,
            poisoned: HashSet::new(),
        };
        if let Some(lowered) = lowerer.lower(rule, index) {
            set.rules.push(lowered);
        }
    }
    for (term, set) in sets.into_iter().enumerate() {
        if let Some(mut set) = set {
            set.rules
                .sort_by_key(|r| (std::cmp::Reverse(r.prio), r.index));
            program.rulesets.push((term, set));
        }
    }
}

/// The term a rule defines, if its left-hand side names a term that may have rules.
fn root_term(
    rule: &ast::Rule,
    program: &Program,
    names: &Names,
    diags: &mut Diagnostics,
) -> Option<TermId> {
    let Pattern::Term { name, .. } = &rule.lhs else {
        diags.push(
            Diagnostic::error(
                Code::Syntax,
                "a rule's left-hand side must be a term application",
            )
            .at(rule.lhs.span(), "expected `(term pats…)`"),
        );
        return None;
    };
    match names.resolve(program, &name.name) {
        Some(Callee::Term(t)) => {
            let info = &program.terms[t];
            if info.constructor.is_some() {
                diags.push(
                    Diagnostic::error(
                        Code::InvalidExtern,
                        format!(
                            "term `{}` is an extern constructor; it cannot have rules",
                            info.name
                        ),
                    )
                    .at(name.span, "rule for an extern term"),
                );
                return None;
            }
            Some(t)
        }
        Some(Callee::Variant(..)) => {
            diags.push(
                Diagnostic::error(Code::UnknownName, "rules define terms, not enum variants")
                    .at(name.span, "an enum variant cannot have rules"),
            );
            None
        }
        None => {
            diags.push(unknown_term(&name.name, name.span));
            None
        }
    }
}

struct Lowerer<'a> {
    program: &'a Program,
    names: &'a Names,
    set: &'a mut RuleSet,
    diags: &'a mut Diagnostics,
    /// The term whose rule this is.
    term: TermId,
    /// Pattern variables in scope: name, binding, type.
    vars: HashMap<String, (BindingId, TypeId)>,
    /// Right-hand side `let` locals in scope (innermost last).
    locals: Vec<(String, LocalId, TypeId)>,
    next_local: LocalId,
    tests: Vec<Test>,
    ok: bool,
    macro_depth: usize,
    /// Variables of patterns that failed to check; their uses are not reported again.
    poisoned: HashSet<String>,
}

impl Lowerer<'_> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
        self.ok = false;
    }

    /// Reports an integer that does not fit its primitive type, when that type is one
    /// of Rust's integer types (other primitives are left to the Rust compiler).
    /// Whether literal `lit` may stand for a value of primitive type `ty`: `true`/`false`
    /// exactly for `bool`, integers in range for the others (reported otherwise).
    fn check_literal(&mut self, lit: ast::Lit, ty: TypeId, span: Span) -> bool {
        let is_bool = matches!(
            &self.program.types[ty].kind,
            TypeKind::Primitive { rust } if rust == "bool"
        );
        match (lit, is_bool) {
            (ast::Lit::Bool(_), true) => true,
            (ast::Lit::Int(v), false) => {
                self.check_int_range(v, ty, span);
                true
            }
            (ast::Lit::Bool(_), false) => {
                let msg = format!(
                    "`true`/`false` where a `{}` is expected",
                    self.type_name(ty)
                );
                self.error(Diagnostic::error(Code::TypeMismatch, msg).at(span, "not a `bool`"));
                false
            }
            (ast::Lit::Int(_), true) => {
                self.error(
                    Diagnostic::error(Code::TypeMismatch, "an integer where a `bool` is expected")
                        .at(span, "write `true` or `false`"),
                );
                false
            }
        }
    }

    fn check_int_range(&mut self, value: i128, ty: TypeId, span: Span) {
        let TypeKind::Primitive { rust } = &self.program.types[ty].kind else {
            return;
        };
        let range: Option<(i128, i128)> = match rust.as_str() {
            "u8" => Some((0, u8::MAX.into())),
            "u16" => Some((0, u16::MAX.into())),
            "u32" => Some((0, u32::MAX.into())),
            "u64" | "usize" => Some((0, u64::MAX.into())),
            "i8" => Some((i8::MIN.into(), i8::MAX.into())),
            "i16" => Some((i16::MIN.into(), i16::MAX.into())),
            "i32" => Some((i32::MIN.into(), i32::MAX.into())),
            "i64" | "isize" => Some((i64::MIN.into(), i64::MAX.into())),
            _ => None,
        };
        if let Some((lo, hi)) = range.filter(|(lo, hi)| value < *lo || value > *hi) {
            let msg = format!("integer {value} does not fit in `{rust}`");
            self.error(
                Diagnostic::error(Code::IntRange, msg)
                    .at(span, format!("must be within {lo}..={hi}")),
            );
        }
    }

    /// Records the variables of patterns that could not be checked.
    fn poison(&mut self, pats: &[Pattern]) {
        for p in pats {
            match p {
                Pattern::Var(id) => {
                    self.poisoned.insert(id.name.clone());
                }
                Pattern::Bind(id, sub) => {
                    self.poisoned.insert(id.name.clone());
                    self.poison(std::slice::from_ref(sub));
                }
                Pattern::And(ps, _) | Pattern::Term { args: ps, .. } => self.poison(ps),
                Pattern::Wildcard(_) | Pattern::Int(..) => {}
            }
        }
    }

    /// Reports an unbound variable unless an earlier error explains it.
    fn unbound(&mut self, id: &Ident) {
        if self.poisoned.contains(&id.name) {
            self.ok = false;
        } else {
            self.error(unbound(id));
        }
    }

    fn type_name(&self, ty: TypeId) -> &str {
        &self.program.types[ty].name
    }

    fn lower(&mut self, rule: &ast::Rule, index: usize) -> Option<Rule> {
        let Pattern::Term { args, span, .. } = &rule.lhs else {
            return None;
        };
        let term = &self.program.terms[self.term];
        if args.len() != term.args.len() {
            self.error(arity(&term.name, term.args.len(), args.len(), *span));
            return None;
        }
        for (i, (pat, &ty)) in args.iter().zip(&term.args).enumerate() {
            let b = self.set.intern(Binding::Arg(i), Shape::Value(ty));
            self.pattern(pat, ty, b);
        }
        for clause in &rule.clauses {
            match clause {
                Clause::IfLet { pat, expr, .. } => match self.operand(expr, None) {
                    Some((b, ty)) => self.pattern(pat, ty, b),
                    None => self.poison(std::slice::from_ref(pat)),
                },
                Clause::If { expr, span } => {
                    let before = self.tests.len();
                    if self.operand(expr, None).is_some() && self.tests.len() == before {
                        self.diags.push(
                            Diagnostic::warning(Code::UselessClause, "this `if` always succeeds")
                                .at(*span, "the expression cannot fail")
                                .note("note: `if` is for partial terms; this clause has no effect"),
                        );
                    }
                }
            }
        }
        let ret = term.ret;
        let rhs = self.expr(&rule.rhs, ret, true);
        let rhs = rhs.filter(|_| self.ok)?;
        let mut tests = std::mem::take(&mut self.tests);
        tests.retain(|t| !matches!(t, Test::Eq(a, b) if a == b));
        tests.sort_by_key(|t| (test_key(t), t.clone()));
        tests.dedup();
        Some(Rule {
            index,
            name: rule.name.as_ref().map(|n| n.name.clone()),
            prio: rule.prio,
            span: rule.span,
            tests,
            rhs,
            locals: self.next_local,
        })
    }

    // ---- Patterns -------------------------------------------------------------------

    /// Checks `pat` against a value `b` of type `ty`, adding tests and bindings.
    fn pattern(&mut self, pat: &Pattern, ty: TypeId, b: BindingId) {
        match pat {
            Pattern::Wildcard(_) => {}
            Pattern::Var(id) => self.bind_var(id, ty, b),
            Pattern::Bind(id, sub) => {
                self.bind_var(id, ty, b);
                self.pattern(sub, ty, b);
            }
            Pattern::Int(lit, span) => {
                if self.program.types[ty].is_primitive() {
                    if self.check_literal(*lit, ty, *span) {
                        self.tests.push(Test::Int(b, lit.value()));
                    }
                } else {
                    let msg = format!(
                        "integer pattern where a value of enum type `{}` is expected",
                        self.type_name(ty)
                    );
                    self.error(
                        Diagnostic::error(Code::TypeMismatch, msg)
                            .at(*span, "match a variant instead"),
                    );
                }
            }
            Pattern::And(pats, _) => {
                for p in pats {
                    self.pattern(p, ty, b);
                }
            }
            Pattern::Term { name, args, span } => self.term_pattern(name, args, *span, ty, b),
        }
    }

    fn bind_var(&mut self, id: &Ident, ty: TypeId, b: BindingId) {
        if let Some(&(first, first_ty)) = self.vars.get(&id.name) {
            if first_ty != ty {
                let msg = format!(
                    "variable `{}` is used with type `{}` here but `{}` before",
                    id.name,
                    self.type_name(ty),
                    self.type_name(first_ty)
                );
                self.error(
                    Diagnostic::error(Code::TypeMismatch, msg)
                        .at(id.span, "repeated variables must have one type"),
                );
                return;
            }
            self.tests.push(Test::Eq(first.min(b), first.max(b)));
            return;
        }
        self.vars.insert(id.name.clone(), (b, ty));
    }

    fn term_pattern(
        &mut self,
        name: &Ident,
        args: &[Pattern],
        span: Span,
        ty: TypeId,
        b: BindingId,
    ) {
        let Some(callee) = self.names.resolve(self.program, &name.name) else {
            self.error(unknown_term(&name.name, name.span));
            self.poison(args);
            return;
        };
        let natural = match callee {
            Callee::Term(t) => self.program.terms[t].ret,
            Callee::Variant(vty, _) => vty,
        };
        if natural != ty {
            // Implicit conversion: match `(conv <pat>)` instead.
            let Some(&conv) = self.program.converters.get(&(natural, ty)) else {
                let msg = format!(
                    "type mismatch: pattern has type `{}` but `{}` is expected",
                    self.type_name(natural),
                    self.type_name(ty)
                );
                let note = format!(
                    "note: no `(convert {} {} …)` is declared",
                    self.type_name(natural),
                    self.type_name(ty)
                );
                self.error(
                    Diagnostic::error(Code::TypeMismatch, msg)
                        .at(span, "wrong type here")
                        .note(note),
                );
                self.poison(args);
                return;
            };
            let inner = Pattern::Term {
                name: name.clone(),
                args: args.to_vec(),
                span,
            };
            let conv_name = Ident {
                name: self.program.terms[conv].name.clone(),
                span: name.span,
            };
            self.term_pattern(&conv_name, &[inner], span, ty, b);
            return;
        }
        match callee {
            Callee::Variant(vty, variant) => {
                let fields = self.program.types[vty].variants()[variant].fields.clone();
                if fields.len() != args.len() {
                    self.error(arity(&name.name, fields.len(), args.len(), span));
                    self.poison(args);
                    return;
                }
                self.tests.push(Test::Variant(b, variant));
                for (field, (arg, (_, fty))) in args.iter().zip(&fields).enumerate() {
                    let fb = self.set.intern(
                        Binding::Field {
                            source: b,
                            variant,
                            field,
                        },
                        Shape::Value(*fty),
                    );
                    self.pattern(arg, *fty, fb);
                }
            }
            Callee::Term(t) => self.extractor_pattern(t, name, args, span, b),
        }
    }

    fn extractor_pattern(
        &mut self,
        t: TermId,
        name: &Ident,
        args: &[Pattern],
        span: Span,
        b: BindingId,
    ) {
        let info = &self.program.terms[t];
        if args.len() != info.args.len() {
            self.error(arity(&info.name, info.args.len(), args.len(), span));
            self.poison(args);
            return;
        }
        if let Some(m) = info.macro_def {
            self.expand_macro(m, args, span, info.ret, b);
            return;
        }
        let Some((_, infallible)) = info.extractor else {
            let msg = format!(
                "term `{}` has no extractor, so it cannot be used in a pattern",
                info.name
            );
            let label = format!(
                "declare `(extern extractor {} …)` or `(extractor ({} …) …)`",
                info.name, info.name
            );
            self.error(Diagnostic::error(Code::NoExtractor, msg).at(name.span, label));
            self.poison(args);
            return;
        };
        let outs = info.args.clone();
        let payload_shape = match outs.as_slice() {
            [one] => Shape::Value(*one),
            many => Shape::Tuple(many.to_vec()),
        };
        let payload = if infallible {
            self.set.intern(
                Binding::Extract { term: t, input: b },
                payload_shape.clone(),
            )
        } else {
            let call = self.set.intern(
                Binding::Extract { term: t, input: b },
                Shape::Option(Box::new(payload_shape.clone())),
            );
            self.tests.push(Test::Some(call));
            self.set.intern(Binding::Some(call), payload_shape.clone())
        };
        match outs.as_slice() {
            [one] => self.pattern(&args[0], *one, payload),
            many => {
                for (index, (arg, &aty)) in args.iter().zip(many).enumerate() {
                    let eb = self.set.intern(
                        Binding::Tuple {
                            source: payload,
                            index,
                        },
                        Shape::Value(aty),
                    );
                    self.pattern(arg, aty, eb);
                }
            }
        }
    }

    fn expand_macro(&mut self, m: usize, args: &[Pattern], span: Span, ty: TypeId, b: BindingId) {
        let def = &self.program.macros[m];
        if self.macro_depth >= MAX_MACRO_DEPTH {
            let msg = format!("extractor `{}` expands into itself", def.term.name);
            self.error(
                Diagnostic::error(Code::Recursion, msg).at(span, "recursive extractor macro"),
            );
            self.poison(args);
            return;
        }
        let mut problems = Vec::new();
        let body = substitute(&def.body, &def.params, args, &mut problems);
        for (var, at) in problems {
            let msg = format!(
                "variable `{var}` in extractor `{}` is not one of its parameters",
                def.term.name
            );
            self.error(
                Diagnostic::error(Code::UnboundVariable, msg)
                    .at(at, "extractor bodies may only bind their parameters"),
            );
        }
        self.macro_depth += 1;
        self.pattern(&body, ty, b);
        self.macro_depth -= 1;
    }

    // ---- Clause operands ------------------------------------------------------------

    /// Lowers an `if-let`/`if` operand to a binding; returns it and its type.
    fn operand(&mut self, expr: &Expr, expected: Option<TypeId>) -> Option<(BindingId, TypeId)> {
        let (b, ty) = match expr {
            Expr::Var(id) => match self.vars.get(&id.name) {
                Some(&(b, ty)) => (b, ty),
                None => {
                    self.unbound(id);
                    return None;
                }
            },
            Expr::Int(lit, span) => {
                let Some(ty) = expected.filter(|&t| self.program.types[t].is_primitive()) else {
                    self.error(
                        Diagnostic::error(
                            Code::TypeMismatch,
                            "cannot tell the type of this integer",
                        )
                        .at(*span, "use it where a primitive type is expected"),
                    );
                    return None;
                };
                if !self.check_literal(*lit, ty, *span) {
                    return None;
                }
                let value = lit.value();
                (
                    self.set
                        .intern(Binding::Const { ty, value }, Shape::Value(ty)),
                    ty,
                )
            }
            Expr::Let { span, .. } => {
                self.error(
                    Diagnostic::error(Code::Syntax, "`let` is not allowed in a clause")
                        .at(*span, "move it to the right-hand side"),
                );
                return None;
            }
            Expr::Call { name, args, span } => self.operand_call(name, args, *span)?,
        };
        match expected {
            Some(want) if want != ty => {
                let Some(&conv) = self.program.converters.get(&(ty, want)) else {
                    self.error(mismatch(self.program, ty, want, expr.span()));
                    return None;
                };
                let b = self.construct_binding(conv, vec![b], expr.span())?;
                Some((b, want))
            }
            _ => Some((b, ty)),
        }
    }

    fn operand_call(
        &mut self,
        name: &Ident,
        args: &[Expr],
        span: Span,
    ) -> Option<(BindingId, TypeId)> {
        let Some(callee) = self.names.resolve(self.program, &name.name) else {
            self.error(unknown_term(&name.name, name.span));
            return None;
        };
        let params = match callee {
            Callee::Term(t) => self.program.terms[t].args.clone(),
            Callee::Variant(ty, v) => self.program.types[ty].variants()[v]
                .fields
                .iter()
                .map(|f| f.1)
                .collect(),
        };
        if params.len() != args.len() {
            self.error(arity(&name.name, params.len(), args.len(), span));
            return None;
        }
        let mut arg_bindings = Vec::new();
        for (arg, &pty) in args.iter().zip(&params) {
            arg_bindings.push(self.operand(arg, Some(pty)).map(|x| x.0));
        }
        let arg_bindings: Vec<BindingId> = arg_bindings.into_iter().collect::<Option<_>>()?;
        match callee {
            Callee::Variant(ty, variant) => Some((
                self.set.intern(
                    Binding::MakeVariant {
                        ty,
                        variant,
                        args: arg_bindings,
                    },
                    Shape::Value(ty),
                ),
                ty,
            )),
            Callee::Term(t) => {
                let b = self.construct_binding(t, arg_bindings, name.span)?;
                Some((b, self.program.terms[t].ret))
            }
        }
    }

    /// A constructor call in a clause: must be pure and single-valued; a partial call
    /// adds a test that it succeeds.
    fn construct_binding(
        &mut self,
        t: TermId,
        args: Vec<BindingId>,
        span: Span,
    ) -> Option<BindingId> {
        let info = &self.program.terms[t];
        let problem = if !info.can_construct() {
            Some(format!(
                "term `{}` has no constructor (no rules and no extern constructor)",
                info.name
            ))
        } else if info.multi {
            Some(format!(
                "`multi` term `{}` cannot be called in a clause",
                info.name
            ))
        } else if !info.pure {
            Some(format!(
                "clauses may only call pure terms; declare `{}` with `(decl pure …)`",
                info.name
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            self.error(Diagnostic::error(Code::InvalidCall, problem).at(span, "called here"));
            return None;
        }
        let ret = Shape::Value(info.ret);
        if info.partial {
            let call = self.set.intern(
                Binding::Construct { term: t, args },
                Shape::Option(Box::new(ret.clone())),
            );
            self.tests.push(Test::Some(call));
            Some(self.set.intern(Binding::Some(call), ret))
        } else {
            Some(self.set.intern(Binding::Construct { term: t, args }, ret))
        }
    }

    // ---- Right-hand side ------------------------------------------------------------

    /// Type-checks a right-hand side expression against `expected`. `whole` is true for
    /// the rule's entire right-hand side (where a `multi` rule may call a `multi` term).
    fn expr(&mut self, expr: &Expr, expected: TypeId, whole: bool) -> Option<RhsExpr> {
        let (lowered, ty) = match expr {
            Expr::Var(id) => {
                if let Some(&(_, local, ty)) = self.locals.iter().rev().find(|l| l.0 == id.name) {
                    (RhsExpr::Local(local, ty), ty)
                } else if let Some(&(b, ty)) = self.vars.get(&id.name) {
                    (RhsExpr::Binding(b), ty)
                } else {
                    self.unbound(id);
                    return None;
                }
            }
            Expr::Int(lit, span) => {
                if !self.program.types[expected].is_primitive() {
                    let msg = format!(
                        "integer where a value of enum type `{}` is expected",
                        self.type_name(expected)
                    );
                    self.error(
                        Diagnostic::error(Code::TypeMismatch, msg).at(*span, "not an integer type"),
                    );
                    return None;
                }
                if !self.check_literal(*lit, expected, *span) {
                    return None;
                }
                (
                    RhsExpr::Int {
                        ty: expected,
                        value: lit.value(),
                    },
                    expected,
                )
            }
            Expr::Let { bindings, body, .. } => {
                let mut locals = Vec::new();
                let depth = self.locals.len();
                for lb in bindings {
                    let Some(&ty) = self.names.types.get(&lb.ty.name) else {
                        self.error(crate::sema::env::unknown_type(&lb.ty.name, lb.ty.span));
                        continue;
                    };
                    if let Some(value) = self.expr(&lb.value, ty, false) {
                        let id = self.next_local;
                        self.next_local += 1;
                        locals.push((id, ty, value));
                        self.locals.push((lb.var.name.clone(), id, ty));
                    }
                }
                let body = self.expr(body, expected, whole);
                self.locals.truncate(depth);
                return Some(RhsExpr::Let {
                    locals,
                    body: Box::new(body?),
                });
            }
            Expr::Call { name, args, span } => {
                self.call_expr(name, args, *span, expected, whole)?
            }
        };
        if ty == expected {
            return Some(lowered);
        }
        let Some(&conv) = self.program.converters.get(&(ty, expected)) else {
            self.error(mismatch(self.program, ty, expected, expr.span()));
            return None;
        };
        self.check_callable(conv, expr.span(), false)?;
        Some(RhsExpr::Call {
            term: conv,
            args: vec![lowered],
        })
    }

    fn call_expr(
        &mut self,
        name: &Ident,
        args: &[Expr],
        span: Span,
        expected: TypeId,
        whole: bool,
    ) -> Option<(RhsExpr, TypeId)> {
        let Some(callee) = self.names.resolve(self.program, &name.name) else {
            self.error(unknown_term(&name.name, name.span));
            return None;
        };
        let (params, ret) = match callee {
            Callee::Term(t) => {
                self.check_callable(t, name.span, whole && self.program.terms[t].ret == expected)?;
                (
                    self.program.terms[t].args.clone(),
                    self.program.terms[t].ret,
                )
            }
            Callee::Variant(ty, v) => (
                self.program.types[ty].variants()[v]
                    .fields
                    .iter()
                    .map(|f| f.1)
                    .collect(),
                ty,
            ),
        };
        if params.len() != args.len() {
            self.error(arity(&name.name, params.len(), args.len(), span));
            return None;
        }
        let lowered: Vec<Option<RhsExpr>> = args
            .iter()
            .zip(&params)
            .map(|(a, &p)| self.expr(a, p, false))
            .collect();
        let args: Vec<RhsExpr> = lowered.into_iter().collect::<Option<_>>()?;
        Some(match callee {
            Callee::Term(term) => (RhsExpr::Call { term, args }, ret),
            Callee::Variant(ty, variant) => (RhsExpr::Variant { ty, variant, args }, ret),
        })
    }

    /// Whether term `t` may be called on this rule's right-hand side.
    fn check_callable(&mut self, t: TermId, span: Span, whole_multi_ok: bool) -> Option<()> {
        let info = &self.program.terms[t];
        let current = &self.program.terms[self.term];
        let problem = if !info.can_construct() {
            Some(format!(
                "term `{}` has no constructor (no rules and no extern constructor)",
                info.name
            ))
        } else if info.multi && !(whole_multi_ok && current.multi) {
            Some(format!(
                "`multi` term `{}` may only be called as the whole right-hand side of a `multi` term's rule",
                info.name
            ))
        } else if info.partial && (!current.partial || current.multi) {
            Some(format!(
                "partial term `{}` can fail; call it from an `if-let`, or declare `{}` partial",
                info.name, current.name
            ))
        } else {
            None
        };
        match problem {
            Some(p) => {
                self.error(Diagnostic::error(Code::InvalidCall, p).at(span, "called here"));
                None
            }
            None => Some(()),
        }
    }
}

/// Sort key that puts every test after the tests guarding the bindings it reads:
/// a binding's id is always larger than the ids of its sources and guards.
fn test_key(t: &Test) -> BindingId {
    match t {
        Test::Eq(_, b) => *b,
        other => other.subject(),
    }
}

fn arity(name: &str, want: usize, got: usize, span: Span) -> Diagnostic {
    Diagnostic::error(
        Code::Arity,
        format!("`{name}` takes {want} argument(s) but {got} were given"),
    )
    .at(span, "wrong number of arguments")
}

fn unbound(id: &Ident) -> Diagnostic {
    Diagnostic::error(
        Code::UnboundVariable,
        format!("unbound variable `{}`", id.name),
    )
    .at(id.span, "not bound by the pattern or a `let`")
}

fn mismatch(program: &Program, got: TypeId, want: TypeId, span: Span) -> Diagnostic {
    let (g, w) = (&program.types[got].name, &program.types[want].name);
    Diagnostic::error(
        Code::TypeMismatch,
        format!("type mismatch: expression has type `{g}` but `{w}` is expected"),
    )
    .at(span, "wrong type here")
    .note(format!("note: no `(convert {g} {w} …)` is declared"))
}

/// Replaces macro parameters by the call's argument patterns.
fn substitute(
    body: &Pattern,
    params: &[Ident],
    args: &[Pattern],
    problems: &mut Vec<(String, Span)>,
) -> Pattern {
    let lookup = |id: &Ident| {
        params
            .iter()
            .position(|p| p.name == id.name)
            .map(|i| args[i].clone())
    };
    match body {
        Pattern::Var(id) => lookup(id).unwrap_or_else(|| {
            problems.push((id.name.clone(), id.span));
            Pattern::Wildcard(id.span)
        }),
        Pattern::Bind(id, sub) => {
            let sub = substitute(sub, params, args, problems);
            match lookup(id) {
                Some(arg) => Pattern::And(vec![arg, sub], id.span),
                None => {
                    problems.push((id.name.clone(), id.span));
                    sub
                }
            }
        }
        Pattern::And(ps, s) => Pattern::And(
            ps.iter()
                .map(|p| substitute(p, params, args, problems))
                .collect(),
            *s,
        ),
        Pattern::Term {
            name,
            args: sub,
            span,
        } => Pattern::Term {
            name: name.clone(),
            args: sub
                .iter()
                .map(|p| substitute(p, params, args, problems))
                .collect(),
            span: *span,
        },
        Pattern::Wildcard(_) | Pattern::Int(..) => body.clone(),
    }
}
