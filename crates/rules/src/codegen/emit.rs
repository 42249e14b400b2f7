//! Pieces of generated Rust shared by both backends: an indenting writer, binding
//! evaluation, enum field binding, right-hand sides and function framing.
//!
//! Naming: binding `n` of a term is the Rust local `v{n}`; right-hand side temporaries
//! are `e{n}`; `let` locals are `l{n}`. Parameters a term never reads are `_arg{i}`.

use super::CodegenOptions;
use crate::diagnostics::SourceMap;
use crate::matchtree::rule_uses;
use crate::program::*;

/// Appends indented lines.
#[derive(Default)]
pub struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    pub fn blank(&mut self) {
        self.out.push('\n');
    }

    pub fn indent(&mut self) {
        self.depth += 1;
    }

    pub fn dedent(&mut self) {
        self.depth -= 1;
    }

    pub fn append(&mut self, text: &str) {
        self.out.push_str(text);
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// Rust keywords that are valid as raw identifiers (`r#type`).
const RAW_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// A DSL name used whole as a Rust name (type, variant, field): sanitized, and a
/// keyword written as a raw identifier.
pub fn name_ident(name: &str) -> String {
    let ident = rust_ident(name);
    if RAW_KEYWORDS.contains(&ident.as_str()) {
        format!("r#{ident}")
    } else {
        ident
    }
}

/// A DSL name as part of a Rust identifier (`-` and other symbol characters become `_`).
pub fn rust_ident(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Emits one term's function.
pub struct TermEmitter<'a> {
    pub program: &'a Program,
    pub term: TermId,
    pub set: &'a RuleSet,
    pub sources: &'a SourceMap,
    pub options: CodegenOptions,
    pub w: Writer,
    next_temp: usize,
    /// Per rule, the bindings it reads.
    pub uses: Vec<std::collections::BTreeSet<BindingId>>,
}

impl<'a> TermEmitter<'a> {
    pub fn new(
        program: &'a Program,
        term: TermId,
        set: &'a RuleSet,
        sources: &'a SourceMap,
        options: CodegenOptions,
    ) -> Self {
        let uses = set.rules.iter().map(|r| rule_uses(set, r)).collect();
        TermEmitter {
            program,
            term,
            set,
            sources,
            options,
            w: Writer::default(),
            next_temp: 0,
            uses,
        }
    }

    pub fn finish(self) -> String {
        self.w.finish()
    }

    pub fn info(&self) -> &'a TermInfo {
        &self.program.terms[self.term]
    }

    fn ty(&self, ty: TypeId) -> &'a TypeInfo {
        &self.program.types[ty]
    }

    /// The Rust type of a value-shaped binding.
    fn value_type(&self, b: BindingId) -> Option<TypeId> {
        match self.set.shapes[b] {
            Shape::Value(t) => Some(t),
            _ => None,
        }
    }

    /// An owned copy of a value binding: primitives are `Copy`, enums are cloned.
    pub fn owned(&self, b: BindingId) -> String {
        match self.value_type(b) {
            Some(t) if !self.ty(t).is_copy() => format!("v{b}.clone()"),
            _ => format!("v{b}"),
        }
    }

    /// Which bindings are in scope when the function starts (its used parameters).
    pub fn initial_scope(&self) -> Vec<bool> {
        let mut scope = vec![false; self.set.bindings.len()];
        for (b, binding) in self.set.bindings.iter().enumerate() {
            if matches!(binding, Binding::Arg(_)) {
                scope[b] = true;
            }
        }
        scope
    }

    fn used_anywhere(&self, b: BindingId) -> bool {
        self.uses.iter().any(|u| u.contains(&b))
    }

    /// `pub fn constructor_x<C: Context + ?Sized>(ctx: &mut C, …) -> R {`
    pub fn open_function(&mut self) {
        let info = self.info();
        let params: Vec<String> = info
            .args
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let name = match self.set.interned.get(&Binding::Arg(i)) {
                    Some(&b) if self.used_anywhere(b) => format!("v{b}"),
                    _ => format!("_arg{i}"),
                };
                format!("{name}: {}", self.ty(a).rust_name())
            })
            .collect();
        let ret = self.ty(info.ret).rust_name();
        let ret = if info.multi {
            format!("Vec<{ret}>")
        } else if info.partial {
            format!("Option<{ret}>")
        } else {
            ret.to_string()
        };
        self.w
            .line(&format!("/// Generated from the rules of `{}`.", info.name));
        let mut params_text = String::from("ctx: &mut C");
        for p in params {
            params_text.push_str(", ");
            params_text.push_str(&p);
        }
        self.w.line(&format!(
            "pub fn constructor_{}<C: Context + ?Sized>({params_text}) -> {ret} {{",
            rust_ident(&info.name)
        ));
        self.w.indent();
        if info.multi {
            self.w.line("let mut results = Vec::new();");
        }
    }

    /// Closes the function; `falls_through` tells whether control can reach its end
    /// (it cannot when an unconditional rule returned last).
    pub fn close_function(&mut self, falls_through: bool) {
        let info = self.info();
        if !falls_through && !info.multi {
            // Nothing to add: the last statement already returned.
        } else if info.multi {
            self.w.line("results");
        } else if info.partial {
            self.w.line("None");
        } else {
            self.w.line(&format!(
                "panic!(\"no rule matched for term `{}`; should it be declared partial?\")",
                info.name
            ));
        }
        self.w.dedent();
        self.w.line("}");
    }

    /// `let vN = …;` for a binding that needs no test.
    pub fn let_binding(&mut self, b: BindingId) {
        let text = match &self.set.bindings[b] {
            Binding::Arg(_) | Binding::Some(_) | Binding::Field { .. } => return,
            Binding::Const { ty, value } => {
                let value = self.literal(*ty, *value);
                format!("let v{b}: {} = {value};", self.ty(*ty).rust_name())
            }
            Binding::Extract { term, input } => {
                let (ext, _) = self.program.terms[*term]
                    .extractor
                    .as_ref()
                    .expect("extractor term");
                format!("let v{b} = ctx.{}({});", ext.func, self.owned(*input))
            }
            Binding::Construct { term, args } => {
                let args: Vec<String> = args.iter().map(|&a| self.owned(a)).collect();
                format!("let v{b} = {};", self.call(*term, &args))
            }
            Binding::MakeVariant { ty, variant, args } => {
                let args: Vec<String> = args.iter().map(|&a| self.owned(a)).collect();
                format!("let v{b} = {};", self.variant_value(*ty, *variant, &args))
            }
            Binding::Tuple { source, index } => {
                let t = self.value_type(b).expect("tuple element is a value");
                if self.ty(t).is_copy() {
                    format!("let v{b} = v{source}.{index};")
                } else {
                    format!("let v{b} = v{source}.{index}.clone();")
                }
            }
        };
        self.w.line(&text);
    }

    /// A call of a constructor term with already-evaluated arguments.
    fn call(&self, term: TermId, args: &[String]) -> String {
        let info = &self.program.terms[term];
        match &info.constructor {
            Some(ext) => format!("ctx.{}({})", ext.func, args.join(", ")),
            None => {
                let mut all = vec!["ctx".to_string()];
                all.extend(args.iter().cloned());
                format!("constructor_{}({})", rust_ident(&info.name), all.join(", "))
            }
        }
    }

    fn variant_value(&self, ty: TypeId, variant: usize, args: &[String]) -> String {
        let info = self.ty(ty);
        let v = &info.variants()[variant];
        if v.fields.is_empty() {
            return format!("{}::{}", name_ident(&info.name), name_ident(&v.name));
        }
        let fields: Vec<String> = v
            .fields
            .iter()
            .zip(args)
            .map(|((f, _), a)| format!("{}: {a}", name_ident(f)))
            .collect();
        format!(
            "{}::{} {{ {} }}",
            name_ident(&info.name),
            name_ident(&v.name),
            fields.join(", ")
        )
    }

    /// The pattern `Ty::V { f: vN, .. }` binding `fields`, for `match &subject`.
    pub fn variant_pattern(
        &self,
        subject: BindingId,
        variant: usize,
        fields: &[(usize, BindingId)],
    ) -> String {
        let ty = self.value_type(subject).expect("enum subject");
        let info = self.ty(ty);
        let v = &info.variants()[variant];
        let mut parts: Vec<String> = fields
            .iter()
            .map(|&(f, b)| format!("{}: v{b}", name_ident(&v.fields[f].0)))
            .collect();
        if fields.len() < v.fields.len() {
            parts.push("..".to_string());
        }
        if v.fields.is_empty() {
            // A variant without fields is a unit variant (as in the enums generated here).
            return format!("{}::{}", name_ident(&info.name), name_ident(&v.name));
        }
        format!(
            "{}::{} {{ {} }}",
            name_ident(&info.name),
            name_ident(&v.name),
            parts.join(", ")
        )
    }

    /// After matching by reference, turns a bound reference into an owned value.
    pub fn own_bound_ref(&mut self, b: BindingId) {
        match self.value_type(b) {
            Some(t) if self.ty(t).is_copy() => self.w.line(&format!("let v{b} = *v{b};")),
            Some(_) => self.w.line(&format!("let v{b} = v{b}.clone();")),
            // Tuples stay references; their elements are copied or cloned one by one.
            None => {}
        }
    }

    /// Number of values a match over binding `b` can cover by listing them: the variants of
    /// an enum, the two literals of a `bool`; 0 for other primitives.
    pub fn variant_count(&self, b: BindingId) -> usize {
        if self.is_bool(b) {
            return 2;
        }
        self.value_type(b)
            .map_or(0, |t| self.ty(t).variants().len())
    }

    /// An integer literal of type `ty` as Rust source (`bool` literals are carried as 1 and 0).
    pub fn literal(&self, ty: TypeId, value: i128) -> String {
        match self.ty(ty).rust_name() {
            "bool" => (value != 0).to_string(),
            _ => value.to_string(),
        }
    }

    /// The literal `value` compared with binding `b` (of a primitive type).
    pub fn literal_of(&self, b: BindingId, value: i128) -> String {
        match self.value_type(b) {
            Some(ty) => self.literal(ty, value),
            None => value.to_string(),
        }
    }

    /// Whether binding `b` is a `bool`.
    pub fn is_bool(&self, b: BindingId) -> bool {
        self.value_type(b)
            .is_some_and(|t| self.ty(t).rust_name() == "bool")
    }

    /// Rust for "binding `b` is true" (`vN`) or "is false" (`!vN`), for a `bool` binding.
    pub fn literal_test(&self, b: BindingId, truth: bool) -> String {
        if truth {
            format!("v{b}")
        } else {
            format!("!v{b}")
        }
    }

    /// Whether a binding is an enum (matched by reference) rather than a primitive.
    pub fn is_enum(&self, b: BindingId) -> bool {
        self.value_type(b)
            .is_some_and(|t| !self.ty(t).is_primitive())
    }

    /// A rule's source location comment and, if enabled, its log and coverage calls; then its
    /// right-hand side and the return (or, for `multi`, the push of the result).
    /// `tail` marks the function's last statement, which yields its value directly.
    pub fn leaf(&mut self, rule: usize, tail: bool) {
        let r = &self.set.rules[rule];
        let mut at = self.sources.file_line(r.span);
        if let Some(name) = &r.name {
            at = format!("{at} {name}");
        }
        self.w.line(&format!("// rule at {at}"));
        if self.options.log {
            self.w.line(&format!("ctx.log_rule({at:?});"));
        }
        if self.options.coverage {
            self.w.line(&format!("ctx.rule_fired({});", r.index));
        }
        let info = self.info();
        if info.multi {
            if let RhsExpr::Call { term, args } = &r.rhs {
                if self.program.terms[*term].multi {
                    let args: Vec<String> = args.iter().map(|a| self.rhs(a, false)).collect();
                    let call = self.call(*term, &args);
                    self.w.line(&format!("results.extend({call});"));
                    return;
                }
            }
            let value = self.rhs(&r.rhs, true);
            self.w.line(&format!("results.push({value});"));
        } else {
            let mut value = self.rhs(&r.rhs, true);
            if info.partial {
                // `Some(f(…)?)` is just `f(…)` when the outermost call is partial.
                value = match value.strip_suffix('?') {
                    Some(call) if self.ends_in_partial_call(&r.rhs) => call.to_string(),
                    _ => format!("Some({value})"),
                };
            }
            if tail {
                self.w.line(&value);
            } else {
                self.w.line(&format!("return {value};"));
            }
        }
    }

    /// Emits the statements of a right-hand side; returns the final value's text.
    /// `top` marks the whole right-hand side, whose outermost call needs no temporary.
    fn rhs(&mut self, e: &RhsExpr, top: bool) -> String {
        match e {
            RhsExpr::Binding(b) => self.owned(*b),
            RhsExpr::Local(l, ty) if self.ty(*ty).is_copy() => format!("l{l}"),
            RhsExpr::Local(l, _) => format!("l{l}.clone()"),
            RhsExpr::Int { ty, value } => self.literal(*ty, *value),
            RhsExpr::Call { term, args } => {
                let args: Vec<String> = args.iter().map(|a| self.rhs(a, false)).collect();
                let mut call = self.call(*term, &args);
                if self.program.terms[*term].partial {
                    // Only partial terms may call partial terms here; failure is theirs.
                    call.push('?');
                }
                if top {
                    return call;
                }
                let t = self.temp();
                self.w.line(&format!("let {t} = {call};"));
                t
            }
            RhsExpr::Variant { ty, variant, args } => {
                let args: Vec<String> = args.iter().map(|a| self.rhs(a, false)).collect();
                let value = self.variant_value(*ty, *variant, &args);
                if top {
                    return value;
                }
                let t = self.temp();
                self.w.line(&format!("let {t} = {value};"));
                t
            }
            RhsExpr::Let { locals, body } => {
                for (i, (id, ty, value)) in locals.iter().enumerate() {
                    let v = self.rhs(value, false);
                    let rust = self.ty(*ty).rust_name();
                    // A local bound only for its effects (one step of a sequence) is never
                    // read: `_` says so to the compiler.
                    let read = locals[i + 1..].iter().any(|l| reads_local(&l.2, *id))
                        || reads_local(body, *id);
                    let name = if read {
                        format!("l{id}")
                    } else {
                        format!("_l{id}")
                    };
                    self.w.line(&format!("let {name}: {rust} = {v};"));
                }
                self.rhs(body, top)
            }
        }
    }

    /// Whether the value of `e` is the result of a partial term call.
    fn ends_in_partial_call(&self, e: &RhsExpr) -> bool {
        match e {
            RhsExpr::Call { term, .. } => self.program.terms[*term].partial,
            RhsExpr::Let { body, .. } => self.ends_in_partial_call(body),
            _ => false,
        }
    }

    fn temp(&mut self) -> String {
        self.next_temp += 1;
        format!("e{}", self.next_temp)
    }
}

/// Whether `e` reads local `id`.
fn reads_local(e: &RhsExpr, id: LocalId) -> bool {
    match e {
        RhsExpr::Local(l, _) => *l == id,
        RhsExpr::Binding(_) | RhsExpr::Int { .. } => false,
        RhsExpr::Call { args, .. } | RhsExpr::Variant { args, .. } => {
            args.iter().any(|a| reads_local(a, id))
        }
        RhsExpr::Let { locals, body } => {
            locals.iter().any(|l| reads_local(&l.2, id)) || reads_local(body, id)
        }
    }
}
