//! Lexer: source text to tokens.
//!
//! Contract: accepts any text. Produces parentheses, `@`, integers and symbols with
//! their spans; skips whitespace and `;` line comments. Characters that cannot start a
//! token and integers that do not fit in 128 bits are reported and skipped, so the
//! token stream is always well formed.

use crate::diagnostics::{Code, Diagnostic, Diagnostics, FileId, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    LParen,
    RParen,
    At,
    Int(i128),
    Symbol(String),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

fn is_symbol_char(c: char) -> bool {
    c.is_alphanumeric() || "_.$-+*/<>=!?:&|%^~#'".contains(c)
}

/// Splits `text` (file `file`) into tokens, reporting bad characters to `diags`.
pub fn lex(file: FileId, text: &str, diags: &mut Diagnostics) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == ';' {
            while chars.next_if(|&(_, c)| c != '\n').is_some() {}
            continue;
        }
        let single = match c {
            '(' => Some(TokenKind::LParen),
            ')' => Some(TokenKind::RParen),
            '@' => Some(TokenKind::At),
            _ => None,
        };
        if let Some(kind) = single {
            chars.next();
            tokens.push(Token {
                kind,
                span: Span::new(file, start, start + 1),
            });
            continue;
        }
        if !is_symbol_char(c) {
            chars.next();
            diags.push(
                Diagnostic::error(
                    Code::Syntax,
                    format!("unexpected character `{}`", c.escape_default()),
                )
                .at(
                    Span::new(file, start, start + c.len_utf8()),
                    "not valid here",
                ),
            );
            continue;
        }
        let mut end = start;
        while let Some((i, c)) = chars.next_if(|&(_, c)| is_symbol_char(c)) {
            end = i + c.len_utf8();
        }
        let word = &text[start..end];
        let span = Span::new(file, start, end);
        let kind = match parse_int(word) {
            IntLex::NotInt => TokenKind::Symbol(word.to_string()),
            IntLex::Int(v) => TokenKind::Int(v),
            IntLex::Bad => {
                diags.push(
                    Diagnostic::error(Code::Syntax, format!("invalid integer literal `{word}`"))
                        .at(span, "not a valid 128-bit integer"),
                );
                TokenKind::Int(0)
            }
        };
        tokens.push(Token { kind, span });
    }
    tokens
}

enum IntLex {
    NotInt,
    Int(i128),
    Bad,
}

/// Integers are decimal, or `0x`/`0o`/`0b` prefixed, optionally negative, with `_`
/// separators allowed.
fn parse_int(word: &str) -> IntLex {
    let (negative, digits) = match word.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return IntLex::NotInt;
    }
    let (radix, body) = match digits.get(..2) {
        Some("0x") | Some("0X") => (16, &digits[2..]),
        Some("0o") | Some("0O") => (8, &digits[2..]),
        Some("0b") | Some("0B") => (2, &digits[2..]),
        _ => (10, digits),
    };
    let cleaned: String = body.chars().filter(|&c| c != '_').collect();
    match u128::from_str_radix(&cleaned, radix) {
        Ok(v) if negative => {
            if v <= i128::MAX as u128 + 1 {
                IntLex::Int((v as i128).wrapping_neg())
            } else {
                IntLex::Bad
            }
        }
        // Values above i128::MAX keep their bit pattern (useful for u128 masks).
        Ok(v) => IntLex::Int(v as i128),
        Err(_) => IntLex::Bad,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::SourceMap;

    #[test]
    fn lexes_forms_comments_and_ints() {
        let mut diags = Diagnostics::new(SourceMap::new());
        let toks = lex(0, "(rule -5 ; c\n x@0x1_0 a.b)", &mut diags);
        let kinds: Vec<_> = toks.into_iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            vec![
                TokenKind::LParen,
                TokenKind::Symbol("rule".into()),
                TokenKind::Int(-5),
                TokenKind::Symbol("x".into()),
                TokenKind::At,
                TokenKind::Int(16),
                TokenKind::Symbol("a.b".into()),
                TokenKind::RParen,
            ]
        );
        assert!(!diags.has_errors());
    }

    #[test]
    fn reports_bad_characters() {
        let mut diags = Diagnostics::new(SourceMap::new());
        let toks = lex(0, "(a [ b)", &mut diags);
        assert_eq!(toks.len(), 4);
        assert_eq!(diags.error_count(), 1);
    }
}
