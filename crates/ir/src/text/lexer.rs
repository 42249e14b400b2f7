//! The CLIF lexer: text in, tokens out, one at a time, without allocating.
//!
//! Contract. Requires valid UTF-8 (the caller checks bytes first). Guarantees: every token
//! borrows its text from the input; positions are byte offsets plus the line number and the
//! offset of the line's start, so the parser can turn any token into a 1-based line:column
//! cheaply; comments (`;` to end of line) and whitespace are skipped; any byte that cannot
//! start a token (NUL, `#`, a non-ASCII character outside a comment, …) is a [`LexError`].
//! The lexer never looks at more than the current token, so an error is reported where the
//! parser is, not ahead of it.
//!
//! Token classes follow Cranelift's reader: words with a known entity prefix and a decimal
//! number without leading zeros (`v12`, `block3`, `ss0`, `gv1`, `sig2`, `fn0`, `jt4`, `u1`) are
//! entity tokens; `i8`…`i128`, `f32`, `f64` are types; other words are identifiers; numbers
//! (including signs, hex floats, `NaN:0x…`, `Inf`) are one token whose text the parser
//! interprets with [`crate::literal`].

use std::fmt;

use crate::types::Type;

/// Where a token starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    /// Byte offset into the text.
    pub offset: u32,
    /// 1-based line number.
    pub line: u32,
    /// Byte offset of the start of the line.
    pub line_start: u32,
}

/// A token's kind and, for words and numbers, its text.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    Eof,
    LPar,
    RPar,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Colon,
    Equal,
    Arrow,
    /// A lone `+` or `-` not followed by a number.
    Plus,
    Minus,
    /// Integer or float literal text, sign included.
    Number(&'a str),
    Value(u32),
    Block(u32),
    StackSlot(u32),
    GlobalValue(u32),
    SigRef(u32),
    FuncRef(u32),
    JumpTable(u32),
    /// `const2`, a constant-pool entry.
    Constant(u32),
    /// `region3`, a declared memory region.
    Region(u32),
    /// `"text"`, without the quotes (no escapes; ends at the next `"` on the line).
    Str(&'a str),
    /// `u1` in a user name `u1:2`.
    UserRef(u32),
    Type(Type),
    Ident(&'a str),
    /// `%name`, without the `%`.
    Name(&'a str),
    /// `@00a4`, the hex digits only.
    SrcLoc(&'a str),
}

impl fmt::Display for Tok<'_> {
    /// Describes the token for error messages ("`v3`", "end of file", …).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let punct = match self {
            Tok::Eof => return f.write_str("end of file"),
            Tok::LPar => "(",
            Tok::RPar => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Colon => ":",
            Tok::Equal => "=",
            Tok::Arrow => "->",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Number(s) | Tok::Ident(s) => return write!(f, "`{s}`"),
            Tok::Value(n) => return write!(f, "`v{n}`"),
            Tok::Block(n) => return write!(f, "`block{n}`"),
            Tok::StackSlot(n) => return write!(f, "`ss{n}`"),
            Tok::Region(n) => return write!(f, "`region{n}`"),
            Tok::Str(text) => return write!(f, "string \"{text}\""),
            Tok::GlobalValue(n) => return write!(f, "`gv{n}`"),
            Tok::SigRef(n) => return write!(f, "`sig{n}`"),
            Tok::FuncRef(n) => return write!(f, "`fn{n}`"),
            Tok::JumpTable(n) => return write!(f, "`jt{n}`"),
            Tok::Constant(n) => return write!(f, "`const{n}`"),
            Tok::UserRef(n) => return write!(f, "`u{n}`"),
            Tok::Type(t) => return write!(f, "type `{t}`"),
            Tok::Name(s) => return write!(f, "`%{s}`"),
            Tok::SrcLoc(s) => return write!(f, "`@{s}`"),
        };
        write!(f, "`{punct}`")
    }
}

/// A token and where it starts.
#[derive(Copy, Clone, Debug)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    pub pos: Pos,
}

/// A character that cannot start a token, or a malformed token.
#[derive(Clone, Debug)]
pub struct LexError {
    pub pos: Pos,
    pub message: String,
}

pub struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn pos_at(&self, offset: usize) -> Pos {
        Pos {
            offset: offset as u32,
            line: self.line,
            line_start: self.line_start as u32,
        }
    }

    fn peek_byte(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn looking_at(&self, prefix: &str) -> bool {
        self.bytes[self.pos..].starts_with(prefix.as_bytes())
    }

    /// Skip the rest of the current line (used for `test`/`set`/`target` lines).
    pub fn skip_line(&mut self) {
        self.pos = match self.bytes[self.pos..].iter().position(|&b| b == b'\n') {
            Some(i) => self.pos + i,
            None => self.bytes.len(),
        };
    }

    /// The next token.
    pub fn next_token(&mut self) -> Result<Token<'a>, LexError> {
        loop {
            match self.bytes.get(self.pos) {
                None => {
                    return Ok(Token {
                        tok: Tok::Eof,
                        pos: self.pos_at(self.pos),
                    })
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                Some(b' ' | b'\t' | b'\r' | 0x0b | 0x0c) => self.pos += 1,
                Some(b';') => self.skip_line(),
                Some(_) => break,
            }
        }
        let start = self.pos;
        let pos = self.pos_at(start);
        let b = self.bytes[start];
        let punct = match b {
            b'(' => Some(Tok::LPar),
            b')' => Some(Tok::RPar),
            b'{' => Some(Tok::LBrace),
            b'}' => Some(Tok::RBrace),
            b'[' => Some(Tok::LBracket),
            b']' => Some(Tok::RBracket),
            b',' => Some(Tok::Comma),
            b'.' => Some(Tok::Dot),
            b':' => Some(Tok::Colon),
            b'=' => Some(Tok::Equal),
            _ => None,
        };
        if let Some(tok) = punct {
            self.pos += 1;
            return Ok(Token { tok, pos });
        }
        let tok = match b {
            b'-' if self.peek_byte(1) == b'>' => {
                self.pos += 2;
                Tok::Arrow
            }
            b'-' | b'+' => {
                self.pos += 1;
                if self.looking_at_number() {
                    self.scan_number(start)
                } else if b == b'-' {
                    Tok::Minus
                } else {
                    Tok::Plus
                }
            }
            b'0'..=b'9' => self.scan_number(start),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                if matches!(b, b'N' | b'I' | b's') && self.looking_at_number() {
                    self.scan_number(start)
                } else {
                    self.scan_word(start)?
                }
            }
            b'%' => {
                self.pos += 1;
                Tok::Name(self.scan_word_chars())
            }
            b'"' => {
                let begin = start + 1;
                let len = self.bytes[begin..]
                    .iter()
                    .position(|&c| c == b'"' || c == b'\n');
                match len.map(|n| (n, self.bytes[begin + n])) {
                    Some((n, b'"')) => {
                        self.pos = begin + n + 1;
                        Tok::Str(&self.text[begin..begin + n])
                    }
                    _ => {
                        return Err(LexError {
                            pos,
                            message: "unterminated string (a string ends with `\"` on its line)"
                                .into(),
                        })
                    }
                }
            }
            b'@' => {
                self.pos += 1;
                let begin = self.pos;
                while self.peek_byte(0).is_ascii_hexdigit() {
                    self.pos += 1;
                }
                if begin == self.pos {
                    return Err(LexError {
                        pos,
                        message: "expected a hexadecimal source location after '@'".into(),
                    });
                }
                Tok::SrcLoc(&self.text[begin..self.pos])
            }
            0 => {
                return Err(LexError {
                    pos,
                    message: "unexpected NUL byte".into(),
                })
            }
            _ => {
                let c = self.text[start..].chars().next().unwrap_or('?');
                return Err(LexError {
                    pos,
                    message: format!("unexpected character {c:?}"),
                });
            }
        };
        Ok(Token { tok, pos })
    }

    /// At the current position (after any sign): a digit, `.`, `Inf`, `NaN`, or `sNaN:`.
    fn looking_at_number(&self) -> bool {
        matches!(self.peek_byte(0), b'0'..=b'9' | b'.')
            || self.looking_at("NaN")
            || self.looking_at("Inf")
            || self.looking_at("sNaN:")
    }

    /// Scan the rest of a number that began at `start` (sign already consumed).
    fn scan_number(&mut self, start: usize) -> Tok<'a> {
        if self.looking_at("NaN:") || self.looking_at("sNaN:") {
            while self.peek_byte(0) != b':' {
                self.pos += 1;
            }
            self.pos += 1;
        }
        let hex = self.looking_at("0x") || self.looking_at("0X");
        let mut prev = 0u8;
        loop {
            let c = self.peek_byte(0);
            let exponent_sign = matches!(c, b'+' | b'-')
                && (matches!(prev, b'p' | b'P') || (!hex && matches!(prev, b'e' | b'E')));
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exponent_sign {
                self.pos += 1;
                prev = c;
            } else {
                break;
            }
        }
        Tok::Number(&self.text[start..self.pos])
    }

    fn scan_word_chars(&mut self) -> &'a str {
        let begin = self.pos;
        while matches!(self.peek_byte(0), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            self.pos += 1;
        }
        &self.text[begin..self.pos]
    }

    fn scan_word(&mut self, start: usize) -> Result<Tok<'a>, LexError> {
        let word = self.scan_word_chars();
        if let Some(ty) = Type::from_name(word) {
            return Ok(Tok::Type(ty));
        }
        let digits = word.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, number) = word.split_at(word.len() - digits);
        if digits == 0 || (digits > 1 && number.starts_with('0')) {
            return Ok(Tok::Ident(word));
        }
        let make: fn(u32) -> Tok<'a> = match prefix {
            "v" => Tok::Value,
            "block" => Tok::Block,
            "ss" => Tok::StackSlot,
            "gv" => Tok::GlobalValue,
            "sig" => Tok::SigRef,
            "fn" => Tok::FuncRef,
            "jt" => Tok::JumpTable,
            "const" => Tok::Constant,
            "region" => Tok::Region,
            "u" => Tok::UserRef,
            _ => return Ok(Tok::Ident(word)),
        };
        match number.parse::<u32>() {
            Ok(n) => Ok(make(n)),
            Err(_) => Err(LexError {
                pos: self.pos_at(start),
                message: format!("entity number in `{word}` is too large"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok<'_>> {
        let mut lex = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let t = lex.next_token().expect("lexes");
            if t.tok == Tok::Eof {
                return out;
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn classes() {
        assert_eq!(
            toks("v0 v00 block3 ss1 fn2 sig0 gv4 u1:2 iadd.i32 %f -> ; c\n@0a"),
            vec![
                Tok::Value(0),
                Tok::Ident("v00"),
                Tok::Block(3),
                Tok::StackSlot(1),
                Tok::FuncRef(2),
                Tok::SigRef(0),
                Tok::GlobalValue(4),
                Tok::UserRef(1),
                Tok::Colon,
                Tok::Number("2"),
                Tok::Ident("iadd"),
                Tok::Dot,
                Tok::Type(Type::I32),
                Tok::Name("f"),
                Tok::Arrow,
                Tok::SrcLoc("0a"),
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("-1 0x1.8p-3 -NaN:0x1 +sNaN:0x1 Inf ss0+8 v1-4 0xff_ff 1e-5"),
            vec![
                Tok::Number("-1"),
                Tok::Number("0x1.8p-3"),
                Tok::Number("-NaN:0x1"),
                Tok::Number("+sNaN:0x1"),
                Tok::Number("Inf"),
                Tok::StackSlot(0),
                Tok::Number("+8"),
                Tok::Value(1),
                Tok::Number("-4"),
                Tok::Number("0xff_ff"),
                Tok::Number("1e-5"),
            ]
        );
    }

    #[test]
    fn errors_and_positions() {
        let mut lex = Lexer::new("a\n  \0");
        assert!(lex.next_token().is_ok());
        let e = lex.next_token().unwrap_err();
        assert_eq!((e.pos.line, e.pos.offset, e.pos.line_start), (2, 4, 2));
        assert!(Lexer::new("v99999999999").next_token().is_err());
        assert!(Lexer::new("@x").next_token().is_err());
    }
}
