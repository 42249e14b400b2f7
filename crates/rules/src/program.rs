//! The analyzed program: resolved types and terms, and each internal term's rules
//! lowered to *bindings* and *tests*.
//!
//! This is the representation every later phase reads (checks, match trees, both code
//! generators), so they agree by construction on what a rule means.
//!
//! A rule's left-hand side and clauses become:
//! - **bindings**: values the matcher may compute (an argument, an extractor call on a
//!   binding, a field of an enum variant, the payload of a successful partial call, …).
//!   Bindings are hash-consed per term: two rules that apply the same extractor to the
//!   same value share one [`BindingId`]. That sharing is what lets the overlap and
//!   shadow checks compare rules, and what lets the match tree evaluate a call once.
//! - **tests**: conditions on bindings (is this variant, equals this integer, the
//!   partial call succeeded, two bindings are equal). A rule matches exactly when all
//!   its tests hold.
//!
//! Invariant: a binding's value is well defined whenever the tests it depends on hold
//! ([`Binding::sources`] and [`Binding::guard`]).

use crate::diagnostics::Span;
use std::collections::HashMap;

pub type TypeId = usize;
pub type TermId = usize;
pub type BindingId = usize;
pub type LocalId = usize;

#[derive(Clone, Debug)]
pub struct TypeInfo {
    pub name: String,
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeKind {
    /// A Rust type used as is; must be `Copy`.
    Primitive { rust: String },
    /// A Rust enum, generated unless `is_extern`; must be `Clone`, and `Copy` when `copy`.
    Enum {
        variants: Vec<VariantInfo>,
        is_extern: bool,
        copy: bool,
    },
}

#[derive(Clone, Debug)]
pub struct VariantInfo {
    pub name: String,
    pub fields: Vec<(String, TypeId)>,
}

impl TypeInfo {
    /// Whether values are copied (primitives, `copy` enums) rather than cloned.
    pub fn is_copy(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Primitive { .. } | TypeKind::Enum { copy: true, .. }
        )
    }

    /// Whether this is a primitive (integers apply), not an enum.
    pub fn is_primitive(&self) -> bool {
        matches!(self.kind, TypeKind::Primitive { .. })
    }

    pub fn rust_name(&self) -> &str {
        match &self.kind {
            TypeKind::Primitive { rust } => rust,
            TypeKind::Enum { .. } => &self.name,
        }
    }

    pub fn variants(&self) -> &[VariantInfo] {
        match &self.kind {
            TypeKind::Enum { variants, .. } => variants,
            TypeKind::Primitive { .. } => &[],
        }
    }
}

/// How an extern term is reached from generated code.
#[derive(Clone, Debug)]
pub struct ExternFn {
    pub func: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct TermInfo {
    pub name: String,
    pub args: Vec<TypeId>,
    pub ret: TypeId,
    pub pure: bool,
    pub partial: bool,
    pub multi: bool,
    pub rec: bool,
    pub span: Span,
    pub constructor: Option<ExternFn>,
    pub extractor: Option<(ExternFn, bool)>,
    /// Index into [`Program::macros`] of its `(extractor …)` macro.
    pub macro_def: Option<usize>,
    /// Whether any rule defines this term (it is then an internal constructor).
    pub has_rules: bool,
}

impl TermInfo {
    pub fn can_construct(&self) -> bool {
        self.has_rules || self.constructor.is_some()
    }
}

/// A value the matcher can compute for one term's rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// The term's `n`th argument.
    Arg(usize),
    /// An integer literal of a primitive type (if-let operands).
    Const { ty: TypeId, value: i128 },
    /// An extern extractor applied to a value: `Option` of its outputs unless
    /// infallible.
    Extract { term: TermId, input: BindingId },
    /// A constructor call (internal or extern) from an `if-let` or `if`: `Option` of
    /// the result if the term is partial.
    Construct { term: TermId, args: Vec<BindingId> },
    /// An enum value built in an `if-let` operand.
    MakeVariant { ty: TypeId, variant: usize, args: Vec<BindingId> },
    /// The payload of an `Option` binding; guarded by [`Test::Some`].
    Some(BindingId),
    /// Field `field` of `source`; guarded by the test that `source` is `variant`.
    Field { source: BindingId, variant: usize, field: usize },
    /// Element `index` of a tuple-valued binding (multi-output extractor).
    Tuple { source: BindingId, index: usize },
}

impl Binding {
    /// The bindings this one is computed from.
    pub fn sources(&self) -> Vec<BindingId> {
        match self {
            Binding::Arg(_) | Binding::Const { .. } => vec![],
            Binding::Extract { input, .. } => vec![*input],
            Binding::Construct { args, .. } | Binding::MakeVariant { args, .. } => args.clone(),
            Binding::Some(s)
            | Binding::Field { source: s, .. }
            | Binding::Tuple { source: s, .. } => {
                vec![*s]
            }
        }
    }

    /// Whether the binding only exists inside a successful test (so it is bound by
    /// that test rather than computed on demand).
    pub fn is_guarded(&self) -> bool {
        matches!(self, Binding::Some(_) | Binding::Field { .. })
    }
}

/// The shape of a binding's Rust value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    Value(TypeId),
    Option(Box<Shape>),
    Tuple(Vec<TypeId>),
}

/// A condition a rule needs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Test {
    /// The enum binding is this variant.
    Variant(BindingId, usize),
    /// The primitive binding equals this integer.
    Int(BindingId, i128),
    /// The `Option` binding is `Some`.
    Some(BindingId),
    /// The two bindings are equal (a repeated variable); first < second.
    Eq(BindingId, BindingId),
}

impl Test {
    /// The binding this test switches on (the first one for `Eq`).
    pub fn subject(&self) -> BindingId {
        match self {
            Test::Variant(b, _) | Test::Int(b, _) | Test::Some(b) | Test::Eq(b, _) => *b,
        }
    }

    /// Whether no input can satisfy both tests.
    pub fn excludes(&self, other: &Test) -> bool {
        match (self, other) {
            (Test::Variant(a, x), Test::Variant(b, y)) => a == b && x != y,
            (Test::Int(a, x), Test::Int(b, y)) => a == b && x != y,
            _ => false,
        }
    }
}

/// A right-hand side expression, typed and with conversions made explicit.
#[derive(Clone, Debug)]
pub enum RhsExpr {
    Binding(BindingId),
    Local(LocalId, TypeId),
    Int {
        ty: TypeId,
        value: i128,
    },
    Call {
        term: TermId,
        args: Vec<RhsExpr>,
    },
    Variant {
        ty: TypeId,
        variant: usize,
        args: Vec<RhsExpr>,
    },
    Let {
        locals: Vec<(LocalId, TypeId, RhsExpr)>,
        body: Box<RhsExpr>,
    },
}

#[derive(Clone, Debug)]
pub struct Rule {
    /// Position in the whole program (source order across files).
    pub index: usize,
    pub name: Option<String>,
    pub prio: i64,
    pub span: Span,
    /// Tests, sorted and deduplicated.
    pub tests: Vec<Test>,
    pub rhs: RhsExpr,
    /// Number of `let` locals on the right-hand side.
    pub locals: usize,
}

impl Rule {
    /// A short name for logs and comments: the rule name if any, else `rule N`.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("rule{}", self.index),
        }
    }

    /// Whether no input can satisfy both rules, judged per binding (enum variants and
    /// integer constants), never through opaque extractors.
    pub fn disjoint(&self, other: &Rule) -> bool {
        self.tests
            .iter()
            .any(|a| other.tests.iter().any(|b| a.excludes(b)))
    }
}

/// One internal term's rules and the bindings they share.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    pub bindings: Vec<Binding>,
    pub shapes: Vec<Shape>,
    pub interned: HashMap<Binding, BindingId>,
    /// Rules in evaluation order: priority descending, then source order.
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// Returns the id of `binding`, adding it if new.
    pub fn intern(&mut self, binding: Binding, shape: Shape) -> BindingId {
        if let Some(&id) = self.interned.get(&binding) {
            return id;
        }
        let id = self.bindings.len();
        self.bindings.push(binding.clone());
        self.shapes.push(shape);
        self.interned.insert(binding, id);
        id
    }
}

/// The whole analyzed program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub types: Vec<TypeInfo>,
    pub terms: Vec<TermInfo>,
    pub macros: Vec<crate::ast::ExtractorMacro>,
    /// `(from, to) -> term` implicit conversions.
    pub converters: HashMap<(TypeId, TypeId), TermId>,
    /// Rules of each internal term, in term order.
    pub rulesets: Vec<(TermId, RuleSet)>,
}
