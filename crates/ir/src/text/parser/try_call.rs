//! `try_call` and `try_call_indirect` operands.
//!
//! try_call    ::= fnN "(" args ")" "," sigN "," dest "," "[" [ entry { "," entry } ] "]"
//! indirect    ::= vN "(" args ")" "," sigN "," dest "," "[" … "]"
//! entry       ::= ( tagN | "default" ) ":" dest
//! dest        ::= blockN [ "(" arg { "," arg } ")" ]
//! arg         ::= vN | retN | exnN
//!
//! `retN` (the callee's N-th return value) may appear only in the normal destination and
//! `exnN` (the N-th exception payload) only in a handler's. Both stand for results of the
//! `try_call` (returns first, then payloads; see `ExceptionTableData`), which are created when
//! the function's text has been read, so that their numbers are above every number the text
//! uses; the block calls are built then.

use super::{FuncCtx, PResult, Parser};
use crate::entity::{Block, ExceptionTable, Inst, Value};
use crate::function::{ExceptionTableData, EXCEPTION_PAYLOAD_TYPES};
use crate::instructions::{BlockCall, InstructionData as D};
use crate::opcode::Opcode;
use crate::text::lexer::{Pos, Tok};

/// A block-call argument of a `try_call` destination, as written.
#[derive(Copy, Clone, Debug)]
pub(crate) enum TryArg {
    Value(Value),
    Ret(u32),
    Exn(u32),
}

/// A `try_call` whose block calls wait for its results.
#[derive(Debug)]
pub(crate) struct PendingTryCall {
    pub inst: Option<Inst>,
    pub table: ExceptionTable,
    /// Per destination (normal first, then the handlers), its arguments and where each is.
    pub dests: Vec<Vec<(TryArg, Pos)>>,
}

impl Parser<'_> {
    /// The operands after the opcode of `try_call` / `try_call_indirect`.
    pub(super) fn parse_try_call(&mut self, ctx: &mut FuncCtx, opcode: Opcode) -> PResult<D> {
        let (func_ref, callee) = if opcode == Opcode::TryCall {
            (Some(self.func_ref(ctx)?), None)
        } else {
            (None, Some(self.value_use(ctx)?))
        };
        let args = self.call_args(ctx, callee)?;
        self.expect(
            Tok::Comma,
            "',' and the signature (sigN) after the call arguments",
        )?;
        let sig_ref = self.sig_ref(ctx)?;
        self.expect(
            Tok::Comma,
            "',' and the normal destination after the signature",
        )?;
        let mut dests = Vec::new();
        let (normal, normal_args) = self.try_dest(ctx, true)?;
        dests.push(normal_args);
        self.expect(
            Tok::Comma,
            "',' and the handler list '[…]' after the normal destination",
        )?;
        self.expect(Tok::LBracket, "'[' to start the handler list")?;
        let mut tags = Vec::new();
        let mut handlers = Vec::new();
        if !self.eat(Tok::RBracket)? {
            loop {
                tags.push(self.handler_tag()?);
                self.expect(Tok::Colon, "':' after the handler's tag")?;
                let (block, args) = self.try_dest(ctx, false)?;
                handlers.push(BlockCall {
                    block,
                    args: Default::default(),
                });
                dests.push(args);
                if !self.eat(Tok::Comma)? {
                    break;
                }
            }
            self.expect(Tok::RBracket, "',' or ']' in the handler list")?;
        }
        let table = ctx.func.exception_tables.push(ExceptionTableData {
            sig: sig_ref,
            normal: BlockCall {
                block: normal,
                args: Default::default(),
            },
            tags,
            handlers,
        });
        ctx.pending_try_calls.push(PendingTryCall {
            inst: None,
            table,
            dests,
        });
        Ok(match func_ref {
            Some(func_ref) => D::TryCall {
                opcode,
                func_ref,
                args,
                table,
            },
            None => D::TryCallIndirect {
                opcode,
                sig_ref,
                args,
                table,
            },
        })
    }

    /// `tagN` or `default`.
    fn handler_tag(&mut self) -> PResult<Option<u32>> {
        let tag = match self.tok.tok {
            Tok::Ident("default") => None,
            Tok::Ident("context") => {
                return Err(self.error_here(
                    "exception-table context values (`context vN`) are not supported yet",
                ))
            }
            Tok::Ident(s) => match s.strip_prefix("tag").map(str::parse::<u32>) {
                Some(Ok(n)) => Some(n),
                _ => return Err(self.expected("a handler tag (tagN) or `default`")),
            },
            _ => return Err(self.expected("a handler tag (tagN) or `default`")),
        };
        self.bump()?;
        Ok(tag)
    }

    /// `blockN[(arg, …)]`; `normal` says which of `retN` / `exnN` is allowed.
    fn try_dest(
        &mut self,
        ctx: &mut FuncCtx,
        normal: bool,
    ) -> PResult<(Block, Vec<(TryArg, Pos)>)> {
        let block = self.block_ref(ctx)?;
        let mut args = Vec::new();
        if self.eat(Tok::LPar)? && !self.eat(Tok::RPar)? {
            loop {
                let pos = self.tok.pos;
                let special = match self.tok.tok {
                    Tok::Ident(s) => Some(s),
                    _ => None,
                };
                let arg = match special {
                    Some(s) => {
                        let arg = self.special_arg(s, normal)?;
                        self.bump()?;
                        arg
                    }
                    None => TryArg::Value(self.value_use(ctx)?),
                };
                args.push((arg, pos));
                if !self.eat(Tok::Comma)? {
                    break;
                }
            }
            self.expect(Tok::RPar, "',' or ')' in the argument list")?;
        }
        Ok((block, args))
    }

    /// `retN` or `exnN` (the current token), if allowed on this destination.
    fn special_arg(&self, s: &str, normal: bool) -> PResult<TryArg> {
        let number = |p: &str| s.strip_prefix(p).and_then(|n| n.parse::<u32>().ok());
        match (number("ret"), number("exn")) {
            (Some(n), _) if normal => Ok(TryArg::Ret(n)),
            (_, Some(n)) if !normal => Ok(TryArg::Exn(n)),
            (Some(_), _) => Err(self.error_here(format!(
                "`{s}` (a return value of the callee) may only be passed to the normal destination, not to a handler"
            ))),
            (_, Some(_)) => Err(self.error_here(format!(
                "`{s}` (an exception payload) may only be passed to a handler, not to the normal destination"
            ))),
            _ => Err(self.expected("a value (vN), retN or exnN")),
        }
    }

    /// Give every `try_call` of the function its results and its block calls.
    pub(super) fn finish_try_calls(&self, ctx: &mut FuncCtx) -> PResult<()> {
        for pending in std::mem::take(&mut ctx.pending_try_calls) {
            let Some(inst) = pending.inst else { continue };
            let func = &mut ctx.func;
            let data = *func.dfg.inst(inst);
            let returns: Vec<_> = match func.call_signature(&data) {
                Some(sig) => sig.returns.iter().map(|p| p.value_type).collect(),
                None => Vec::new(),
            };
            for &ty in returns.iter().chain(&EXCEPTION_PAYLOAD_TYPES) {
                func.dfg.append_result(inst, ty);
            }
            let mut calls = Vec::with_capacity(pending.dests.len());
            for args in &pending.dests {
                let mut values = Vec::with_capacity(args.len());
                for &(arg, pos) in args {
                    let results = func.dfg.inst_results(inst);
                    values.push(match arg {
                        TryArg::Value(v) => v,
                        TryArg::Ret(n) if (n as usize) < returns.len() => results[n as usize],
                        TryArg::Exn(n) if (n as usize) < EXCEPTION_PAYLOAD_TYPES.len() => {
                            results[returns.len() + n as usize]
                        }
                        TryArg::Ret(n) => {
                            return Err(self.error_at(
                                pos,
                                format!("ret{n}: the callee returns {} value(s)", returns.len()),
                            ))
                        }
                        TryArg::Exn(n) => {
                            return Err(self.error_at(
                                pos,
                                format!(
                                    "exn{n}: a handler receives {} exception payload values",
                                    EXCEPTION_PAYLOAD_TYPES.len()
                                ),
                            ))
                        }
                    });
                }
                calls.push(func.dfg.pool.alloc(&values));
            }
            let et = &mut func.exception_tables[pending.table];
            for (call, args) in et.all_branches_mut().zip(calls) {
                call.args = args;
            }
        }
        Ok(())
    }
}
