//! The abstract syntax of a rules program, as written (before name resolution).
//!
//! Every node keeps the span of the text it came from, so later phases can point at it.

use crate::diagnostics::Span;

/// A name with the place it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Def {
    Type(TypeDef),
    Decl(Decl),
    Extern(Extern),
    Rule(Rule),
    Extractor(ExtractorMacro),
    Convert(Convert),
}

/// `(type Name [extern] (primitive RustType))` or `(type Name [extern] [copy] (enum …))`.
#[derive(Clone, Debug)]
pub struct TypeDef {
    pub name: Ident,
    pub is_extern: bool,
    /// An enum whose Rust type is `Copy`: its values are copied, never cloned.
    pub is_copy: bool,
    pub value: TypeValue,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeValue {
    Primitive(Ident),
    Enum(Vec<Variant>),
}

#[derive(Clone, Debug)]
pub struct Variant {
    pub name: Ident,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug)]
pub struct Field {
    pub name: Ident,
    pub ty: Ident,
}

/// `(decl [pure] [partial] [multi] [rec] name (Arg …) Ret)`.
#[derive(Clone, Debug)]
pub struct Decl {
    pub name: Ident,
    pub args: Vec<Ident>,
    pub ret: Ident,
    pub pure: bool,
    pub partial: bool,
    pub multi: bool,
    pub rec: bool,
    pub span: Span,
}

/// `(extern constructor name rust_fn)` or `(extern extractor [infallible] name rust_fn)`.
#[derive(Clone, Debug)]
pub struct Extern {
    pub kind: ExternKind,
    pub term: Ident,
    pub func: Ident,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternKind {
    Constructor,
    Extractor { infallible: bool },
}

/// `(rule [name] [PRIO] (term pats…) clauses… expr)`.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: Option<Ident>,
    pub prio: i64,
    pub lhs: Pattern,
    pub clauses: Vec<Clause>,
    pub rhs: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Clause {
    /// `(if-let pat expr)`: evaluate `expr`, continue if it matches `pat`.
    IfLet { pat: Pattern, expr: Expr, span: Span },
    /// `(if expr)`: continue if the (partial) expression succeeds.
    If { expr: Expr, span: Span },
}

#[derive(Clone, Debug)]
pub enum Pattern {
    Wildcard(Span),
    Var(Ident),
    Bind(Ident, Box<Pattern>),
    Int(Lit, Span),
    Term { name: Ident, args: Vec<Pattern>, span: Span },
    And(Vec<Pattern>, Span),
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Wildcard(s) | Pattern::Int(_, s) | Pattern::And(_, s) => *s,
            Pattern::Var(id) => id.span,
            Pattern::Bind(id, p) => id.span.to(p.span()),
            Pattern::Term { span, .. } => *span,
        }
    }
}

/// A literal: an integer, or `true`/`false` (only for `bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lit {
    Int(i128),
    Bool(bool),
}

impl Lit {
    /// The value (`bool` literals are 1 and 0).
    pub fn value(self) -> i128 {
        match self {
            Lit::Int(v) => v,
            Lit::Bool(b) => i128::from(b),
        }
    }
}

#[derive(Clone, Debug)]
pub enum Expr {
    Var(Ident),
    Int(Lit, Span),
    Call {
        name: Ident,
        args: Vec<Expr>,
        span: Span,
    },
    Let {
        bindings: Vec<LetBinding>,
        body: Box<Expr>,
        span: Span,
    },
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Var(id) => id.span,
            Expr::Int(_, s) => *s,
            Expr::Call { span, .. } | Expr::Let { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug)]
pub struct LetBinding {
    pub var: Ident,
    pub ty: Ident,
    pub value: Expr,
}

/// `(extractor (name params…) pattern)`: a pattern macro.
#[derive(Clone, Debug)]
pub struct ExtractorMacro {
    pub term: Ident,
    pub params: Vec<Ident>,
    pub body: Pattern,
    pub span: Span,
}

/// `(convert From To term)`.
#[derive(Clone, Debug)]
pub struct Convert {
    pub from: Ident,
    pub to: Ident,
    pub term: Ident,
    pub span: Span,
}
