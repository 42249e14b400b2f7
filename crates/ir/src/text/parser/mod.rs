//! The CLIF parser: tokens in, [`Function`]s out.
//!
//! Contract. Requires UTF-8 text. Guarantees for every function returned:
//! - value and block numbers are the ones written in the text (sparse numbering: numbers that
//!   are never defined stay `ValueDef::Unused` / unplaced blocks);
//! - instructions and blocks are appended in textual order, so the layout is compact and
//!   `Inst(n)` is the `n`-th instruction of the text;
//! - every entity an instruction names (value, block, stack slot, global value, signature,
//!   function reference) exists and is defined, so later passes may index without checks;
//! - `source_map` holds the position of the `function` keyword, each block header and each
//!   instruction (its first token after any `@srcloc`).
//!
//! Semantic checks (dominance, operand types, argument counts against signatures, terminators)
//! are the verifier's. The parser checks only what it needs to build the function: the
//! controlling type of each instruction (from its suffix or its typevar operand, which must be
//! defined earlier in the text) and the number of results. Any failure is a [`ParseError`]
//! with a position; no input panics.
//!
//! The grammar is Cranelift's and, like Cranelift's reader, is not line-sensitive: an
//! instruction ends when its format's operands have been read.
//!
//! Split: this file holds the token plumbing, the top level, function headers and signatures;
//! `preamble.rs` the entity declarations; `insts.rs` blocks and instructions; `try_call.rs` the
//! operands of `try_call` and `try_call_indirect`.
//!
//! Cost: one pass over the text, O(length), with O(1) work per token (entities are numbered
//! arrays, not maps); forward references are checked once at the end of each function.

mod insts;
mod preamble;
mod try_call;

use super::error::{column, ParseError};
use super::lexer::{Lexer, Pos, Tok, Token};
use crate::entity::{Block, Value};
use crate::function::{
    AbiParam, ArgumentExtension, ArgumentPurpose, CallConv, Function, FunctionName, Signature,
    SourceMap, TextPos,
};
use crate::types::Type;

pub(crate) type PResult<T> = Result<T, ParseError>;

/// Entity numbers above this (plus the text length) are refused: sparse numbering fills the
/// gaps with placeholders, so an absurd number would otherwise allocate absurd memory.
const ENTITY_SLACK: usize = 1 << 16;

pub(crate) struct Parser<'a> {
    text: &'a str,
    file: &'a str,
    lex: Lexer<'a>,
    tok: Token<'a>,
    /// Largest entity number accepted.
    limit: u32,
    /// Scratch for value lists, reused across instructions.
    values: Vec<Value>,
    /// Scratch for result values and where they were written.
    results: Vec<(Value, Pos)>,
    /// `file`, shared by the source maps of the functions parsed.
    file_name: std::sync::Arc<str>,
}

/// Per-function parsing state.
pub(crate) struct FuncCtx {
    pub func: Function,
    pub map: SourceMap,
    /// Declaration positions of preamble entities (`None`: a gap filled by a placeholder).
    pub ss_pos: Vec<Option<Pos>>,
    pub const_pos: Vec<Option<Pos>>,
    pub gv_pos: Vec<Option<Pos>>,
    pub sig_pos: Vec<Option<Pos>>,
    pub fn_pos: Vec<Option<Pos>>,
    /// Aliases defined so far and where.
    pub alias_pos: Vec<(Value, Pos)>,
    /// Uses of values not defined when they were read; checked at the end.
    pub pending_values: Vec<(Value, Pos)>,
    /// References to blocks not defined when they were read; checked at the end.
    pub pending_blocks: Vec<(Block, Pos)>,
    /// `try_call`s whose results and block calls are made at the end of the function.
    pub pending_try_calls: Vec<try_call::PendingTryCall>,
}

impl<'a> Parser<'a> {
    pub fn new(text: &'a str, file: &'a str) -> PResult<Self> {
        let mut lex = Lexer::new(text);
        let first = lex.next_token();
        let limit = u32::try_from(text.len().saturating_add(ENTITY_SLACK)).unwrap_or(u32::MAX);
        let mut p = Parser {
            text,
            file,
            lex,
            tok: Token {
                tok: Tok::Eof,
                pos: Pos::default(),
            },
            limit,
            values: Vec::new(),
            results: Vec::new(),
            file_name: std::sync::Arc::from(file),
        };
        p.tok = first.map_err(|e| p.error_at(e.pos, e.message))?;
        Ok(p)
    }

    // ---- Token plumbing -----------------------------------------------------------------

    pub(crate) fn error_at(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError::at(self.file, self.text, pos, message)
    }

    /// An error at the current token.
    pub(crate) fn error_here(&self, message: impl Into<String>) -> ParseError {
        self.error_at(self.tok.pos, message)
    }

    /// "expected X, found Y" at the current token.
    pub(crate) fn expected(&self, what: &str) -> ParseError {
        self.error_here(format!("expected {what}, found {}", self.tok.tok))
    }

    pub(crate) fn text_pos(&self, pos: Pos) -> TextPos {
        TextPos {
            line: pos.line,
            col: column(self.text, pos.line_start as usize, pos.offset as usize),
        }
    }

    /// Consume the current token and return it.
    pub(crate) fn bump(&mut self) -> PResult<Token<'a>> {
        let t = self.tok;
        match self.lex.next_token() {
            Ok(next) => self.tok = next,
            Err(e) => return Err(self.error_at(e.pos, e.message)),
        }
        Ok(t)
    }

    /// Consume `want` if it is the current token.
    pub(crate) fn eat(&mut self, want: Tok<'_>) -> PResult<bool> {
        if self.tok.tok == want {
            self.bump()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consume `want` or fail with "expected {what}".
    pub(crate) fn expect(&mut self, want: Tok<'_>, what: &str) -> PResult<Pos> {
        if self.tok.tok == want {
            Ok(self.bump()?.pos)
        } else {
            Err(self.expected(what))
        }
    }

    /// Check an entity number against the size limit.
    pub(crate) fn check_number(&self, n: u32, prefix: &str, pos: Pos) -> PResult<usize> {
        if n > self.limit {
            return Err(self.error_at(
                pos,
                format!(
                    "{prefix}{n}: entity number too large (at most {} in this file)",
                    self.limit
                ),
            ));
        }
        Ok(n as usize)
    }

    /// A type token, with a clear message for types Kestrel does not support.
    pub(crate) fn expect_type(&mut self, what: &str) -> PResult<Type> {
        match self.tok.tok {
            Tok::Type(t) => {
                self.bump()?;
                Ok(t)
            }
            Tok::Ident(s) if looks_like_type(s) && s.contains('x') => Err(self.error_here(format!(
                "type `{s}` is not a vector type (2 to 16 lanes of i8 … i64, f16 … f64, at most 128 bits)"
            ))),
            Tok::Ident(s) if looks_like_type(s) => Err(self.error_here(format!(
                "type `{s}` is not supported (scalar types are i8, i16, i32, i64, i128, f16, f32, f64, f128)"
            ))),
            _ => Err(self.expected(what)),
        }
    }

    // ---- Top level ----------------------------------------------------------------------

    /// Parse every function of the text.
    pub fn parse_all(&mut self) -> PResult<Vec<Function>> {
        let mut funcs = Vec::new();
        while let Some(f) = self.parse_next()? {
            funcs.push(f);
        }
        if funcs.is_empty() {
            return Err(self.error_here("expected 'function': the file defines no functions"));
        }
        Ok(funcs)
    }

    /// Parse the next function, skipping runner directives before it; `None` at the end.
    pub fn parse_next(&mut self) -> PResult<Option<Function>> {
        loop {
            match self.tok.tok {
                Tok::Eof => return Ok(None),
                // Test-runner directives; the runner reads them itself.
                Tok::Ident("test" | "set" | "target") => {
                    self.lex.skip_line();
                    self.bump()?;
                }
                Tok::Ident("function") => return self.parse_function().map(Some),
                _ => return Err(self.expected("'function'")),
            }
        }
    }

    fn parse_function(&mut self) -> PResult<Function> {
        let start = self.bump()?.pos;
        let name = self.parse_function_name("a function name (%name or uN:M)")?;
        let signature = self.parse_signature()?;
        let mut ctx = FuncCtx {
            func: Function::with_name_signature(name, signature),
            map: SourceMap {
                file: self.file_name.clone(),
                function: self.text_pos(start),
                ..SourceMap::default()
            },
            ss_pos: Vec::new(),
            const_pos: Vec::new(),
            gv_pos: Vec::new(),
            sig_pos: Vec::new(),
            fn_pos: Vec::new(),
            alias_pos: Vec::new(),
            pending_values: Vec::new(),
            pending_blocks: Vec::new(),
            pending_try_calls: Vec::new(),
        };
        self.expect(Tok::LBrace, "'{' before the function body")?;
        self.parse_preamble(&mut ctx)?;
        loop {
            match self.tok.tok {
                Tok::RBrace => break,
                Tok::Block(_) => self.parse_block(&mut ctx)?,
                Tok::Eof => {
                    return Err(self.error_here(
                        "unexpected end of file: missing '}' at the end of the function",
                    ))
                }
                _ => return Err(self.expected("a block header or '}'")),
            }
        }
        self.bump()?;
        self.finish_function(&mut ctx)?;
        let has_aliases = !ctx.alias_pos.is_empty();
        let mut func = ctx.func;
        func.source_map = Some(Box::new(ctx.map));
        if has_aliases {
            // Compaction rewrites every use of an alias (`v1 -> v0`) to the value it stands
            // for, so later stages never see aliases. The layout is already in text order, so
            // instruction numbers do not change.
            func.compact();
        }
        Ok(func)
    }

    /// Forward references must all have been defined by the end of the function.
    fn finish_function(&self, ctx: &mut FuncCtx) -> PResult<()> {
        for &(v, pos) in &ctx.pending_values {
            if !ctx.func.dfg.value_is_attached(v) {
                return Err(self.error_at(pos, format!("use of undefined value {v}")));
            }
        }
        for &(b, pos) in &ctx.pending_blocks {
            if !ctx.func.layout.is_block_inserted(b) {
                return Err(self.error_at(pos, format!("reference to undefined block {b}")));
            }
        }
        self.finish_try_calls(ctx)
    }

    /// `%name` or `uN:M`.
    pub(crate) fn parse_function_name(&mut self, what: &str) -> PResult<FunctionName> {
        match self.tok.tok {
            Tok::Name(s) => {
                self.bump()?;
                Ok(FunctionName::Named(s.to_string()))
            }
            Tok::UserRef(namespace) => {
                self.bump()?;
                self.expect(Tok::Colon, "':' in a user name uN:M")?;
                let index = match self.tok.tok {
                    Tok::Number(s) if s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
                    _ => None,
                };
                let Some(index) = index else {
                    return Err(self.expected("a decimal index in a user name uN:M"));
                };
                self.bump()?;
                Ok(FunctionName::User { namespace, index })
            }
            _ => Err(self.expected(what)),
        }
    }

    /// `(params) [-> returns] [callconv]`.
    pub(crate) fn parse_signature(&mut self) -> PResult<Signature> {
        let mut sig = Signature::new(CallConv::default());
        self.expect(Tok::LPar, "'(' to start the parameter list")?;
        if !self.eat(Tok::RPar)? {
            loop {
                sig.params.push(self.parse_abi_param()?);
                if !self.eat(Tok::Comma)? {
                    break;
                }
            }
            self.expect(Tok::RPar, "',' or ')' in the parameter list")?;
        }
        if self.eat(Tok::Arrow)? {
            loop {
                sig.returns.push(self.parse_abi_param()?);
                if !self.eat(Tok::Comma)? {
                    break;
                }
            }
        }
        if let Tok::Ident(s) = self.tok.tok {
            match CallConv::from_name(s) {
                Some(cc) => {
                    sig.call_conv = cc;
                    self.bump()?;
                }
                None => return Err(self.error_here(format!("unknown calling convention `{s}`"))),
            }
        }
        Ok(sig)
    }

    fn parse_abi_param(&mut self) -> PResult<AbiParam> {
        let mut param = AbiParam::new(self.expect_type("a parameter type")?);
        while let Tok::Ident(s) = self.tok.tok {
            match s {
                "uext" => param.extension = ArgumentExtension::Uext,
                "sext" => param.extension = ArgumentExtension::Sext,
                "sret" => param.purpose = ArgumentPurpose::StructReturn,
                "vmctx" => param.purpose = ArgumentPurpose::VMContext,
                _ => break,
            }
            self.bump()?;
        }
        Ok(param)
    }
}

/// `i32x4`, `f16`, `f128`, `i64x2`, … (for a helpful message).
fn looks_like_type(s: &str) -> bool {
    let rest = match s.strip_prefix(['i', 'f']) {
        Some(r) => r,
        None => return false,
    };
    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit() || b == b'x')
}
