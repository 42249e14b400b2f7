//! S-expression reader: tokens to a tree of lists and atoms.
//!
//! Contract: accepts any token stream. Unbalanced parentheses are reported (an
//! unclosed list is closed at end of input, a stray `)` is skipped), so the result is
//! always a well-formed forest that the parser can walk.

use crate::diagnostics::{Code, Diagnostic, Diagnostics, Span};
use crate::lexer::{Token, TokenKind};

#[derive(Clone, Debug)]
pub enum SExpr {
    Symbol(String, Span),
    Int(i128, Span),
    At(Span),
    List(Vec<SExpr>, Span),
}

impl SExpr {
    pub fn span(&self) -> Span {
        match self {
            SExpr::Symbol(_, s) | SExpr::Int(_, s) | SExpr::At(s) | SExpr::List(_, s) => *s,
        }
    }
}

/// Deepest list nesting accepted; deeper parentheses are reported and flattened, so
/// later (recursive) phases never see unbounded depth.
pub const MAX_DEPTH: usize = 128;

/// Reads all top-level forms of one file.
pub fn read(tokens: Vec<Token>, diags: &mut Diagnostics) -> Vec<SExpr> {
    // Each open list: its opening span and the items read so far.
    let mut stack: Vec<(Span, Vec<SExpr>)> = Vec::new();
    let mut top = Vec::new();
    // Parentheses opened beyond `MAX_DEPTH` and not yet closed.
    let mut flattened = 0usize;
    for token in tokens {
        let item = match token.kind {
            TokenKind::LParen if stack.len() >= MAX_DEPTH => {
                if flattened == 0 {
                    diags.push(
                        Diagnostic::error(Code::Syntax, "lists nested too deeply").at(
                            token.span,
                            format!("more than {MAX_DEPTH} levels of parentheses"),
                        ),
                    );
                }
                flattened += 1;
                continue;
            }
            TokenKind::LParen => {
                stack.push((token.span, Vec::new()));
                continue;
            }
            TokenKind::RParen if flattened > 0 => {
                flattened -= 1;
                continue;
            }
            TokenKind::RParen => match stack.pop() {
                Some((open, items)) => SExpr::List(items, open.to(token.span)),
                None => {
                    diags.push(
                        Diagnostic::error(Code::Syntax, "unmatched `)`")
                            .at(token.span, "no `(` opens this list"),
                    );
                    continue;
                }
            },
            TokenKind::At => SExpr::At(token.span),
            TokenKind::Int(v) => SExpr::Int(v, token.span),
            TokenKind::Symbol(s) => SExpr::Symbol(s, token.span),
        };
        match stack.last_mut() {
            Some((_, items)) => items.push(item),
            None => top.push(item),
        }
    }
    if let Some(&(outermost, _)) = stack.first() {
        // One report for the outermost unclosed list; the inner ones close with it.
        diags.push(
            Diagnostic::error(Code::Syntax, "unclosed `(`")
                .at(outermost, "this list is never closed"),
        );
    }
    while let Some((open, items)) = stack.pop() {
        let end = items.last().map_or(open, |i| i.span());
        let list = SExpr::List(items, open.to(end));
        match stack.last_mut() {
            Some((_, outer)) => outer.push(list),
            None => top.push(list),
        }
    }
    top
}
