//! Blocks and instructions.
//!
//! block       ::= blockN [ "(" [ vN ":" type { "," vN ":" type } ] ")" ] [ "cold" ] ":" { line }
//! line        ::= [ "@" hex ] ( vN "->" vM  |  [ results "=" ] opcode [ "." type ] operands )
//!
//! Values may be used before their definition in the text (a loop's back edge); such uses are
//! recorded and checked at the end of the function. Blocks likewise. Only the typevar operand
//! of an instruction without a type suffix must already be defined, because its type is needed
//! to create the results.
//!
//! Immediates: an `iconst` immediate may be written in the signed or unsigned range of its type
//! and is stored zero-extended from the type's width (Cranelift's canonical form), so
//! `iconst.i8 -1` and `iconst.i8 0xff` are the same instruction (imm = 255). Float constants
//! are stored as IEEE bits. Offsets (`v0+8`, `ss0-4`) must carry a sign and fit in `i32`.

use super::{FuncCtx, PResult, Parser};
use crate::dfg::ValueDef;
use crate::dfg::MAX_VALUES_PER_DEF;
use crate::entity::{Block, EntityRef, Value};
use crate::function::JumpTableData;
use crate::immediates::{AtomicRmwOp, FloatCC, IntCC, TrapCode};
use crate::instructions::{BlockCall, InstructionData as D};
use crate::literal;
use crate::opcode::{Ctrl, InstructionFormat as F, Opcode};
use crate::text::lexer::{Pos, Tok};
use crate::types::Type;
use crate::typing::{ctrl_type_set, result_types};

impl Parser<'_> {
    pub(super) fn parse_block(&mut self, ctx: &mut FuncCtx) -> PResult<()> {
        let Tok::Block(n) = self.tok.tok else {
            return Err(self.expected("a block header"));
        };
        let pos = self.tok.pos;
        let index = self.check_number(n, "block", pos)?;
        let block = Block::new(index);
        if ctx.func.layout.is_block_inserted(block) {
            let first = ctx.map.blocks[block].line;
            return Err(self.error_at(pos, format!("{block} is already defined (at line {first})")));
        }
        self.bump()?;
        ctx.func.dfg.ensure_block(block);
        ctx.func.layout.append_block(block);
        ctx.map.blocks[block] = self.text_pos(pos);
        if self.eat(Tok::LPar)? && !self.eat(Tok::RPar)? {
            loop {
                let (v, vpos) = self.value_def_token(ctx)?;
                self.expect(Tok::Colon, "':' and a type after the block parameter")?;
                let ty = self.expect_type("the block parameter's type")?;
                self.check_undefined(ctx, v, vpos)?;
                if ctx.func.dfg.block_params(block).len() == MAX_VALUES_PER_DEF {
                    return Err(self.error_at(
                        vpos,
                        format!("{block} has more than {MAX_VALUES_PER_DEF} parameters, the most a block may have"),
                    ));
                }
                ctx.func.dfg.attach_block_param(block, v, ty);
                if !self.eat(Tok::Comma)? {
                    break;
                }
            }
            self.expect(Tok::RPar, "',' or ')' after a block parameter")?;
        }
        if self.eat(Tok::Ident("cold"))? {
            ctx.func.dfg.set_block_cold(block, true);
        }
        self.expect(Tok::Colon, "':' at the end of the block header")?;
        while matches!(self.tok.tok, Tok::Value(_) | Tok::Ident(_) | Tok::SrcLoc(_)) {
            self.parse_line(ctx, block)?;
        }
        Ok(())
    }

    /// A `vN` token that is about to be defined (range-checked, slot created).
    fn value_def_token(&mut self, ctx: &mut FuncCtx) -> PResult<(Value, Pos)> {
        let Tok::Value(n) = self.tok.tok else {
            return Err(self.expected("a value (vN)"));
        };
        let pos = self.tok.pos;
        let v = Value::new(self.check_number(n, "v", pos)?);
        self.bump()?;
        ctx.func.dfg.ensure_value(v);
        Ok((v, pos))
    }

    /// Fail if `v` already has a definition.
    fn check_undefined(&self, ctx: &FuncCtx, v: Value, pos: Pos) -> PResult<()> {
        let dfg = &ctx.func.dfg;
        let first = match dfg.value_def(v) {
            ValueDef::Unused => return Ok(()),
            ValueDef::Result(inst, _) => ctx.map.insts[inst].line,
            ValueDef::Param(block, _) => ctx.map.blocks[block].line,
            ValueDef::Alias(_) => ctx
                .alias_pos
                .iter()
                .find(|(a, _)| *a == v)
                .map_or(0, |(_, p)| p.line),
        };
        Err(self.error_at(pos, format!("{v} is already defined (at line {first})")))
    }

    /// A value operand. Uses before the definition are allowed and checked at the end.
    pub(super) fn value_use(&mut self, ctx: &mut FuncCtx) -> PResult<Value> {
        let Tok::Value(n) = self.tok.tok else {
            return Err(self.expected("a value operand (vN)"));
        };
        let pos = self.tok.pos;
        let v = Value::new(self.check_number(n, "v", pos)?);
        self.bump()?;
        let dfg = &mut ctx.func.dfg;
        if !dfg.value_is_valid(v) || dfg.value_def(v) == ValueDef::Unused {
            dfg.ensure_value(v);
            ctx.pending_values.push((v, pos));
        }
        Ok(v)
    }

    /// A block reference. References before the header are allowed and checked at the end.
    pub(super) fn block_ref(&mut self, ctx: &mut FuncCtx) -> PResult<Block> {
        let Tok::Block(n) = self.tok.tok else {
            return Err(self.expected("a block (blockN)"));
        };
        let pos = self.tok.pos;
        let block = Block::new(self.check_number(n, "block", pos)?);
        self.bump()?;
        if !ctx.func.layout.is_block_inserted(block) {
            ctx.func.dfg.ensure_block(block);
            ctx.pending_blocks.push((block, pos));
        }
        Ok(block)
    }

    /// `blockN[(v, …)]`
    fn block_call(&mut self, ctx: &mut FuncCtx) -> PResult<BlockCall> {
        let block = self.block_ref(ctx)?;
        let mut args = std::mem::take(&mut self.values);
        args.clear();
        let parsed = self.opt_paren_values(ctx, &mut args);
        let call = BlockCall::new(block, &args, &mut ctx.func.dfg.pool);
        self.values = args;
        parsed.map(|_| call)
    }

    /// `[ "(" [ v { "," v } ] ")" ]` into `out`.
    fn opt_paren_values(&mut self, ctx: &mut FuncCtx, out: &mut Vec<Value>) -> PResult<()> {
        if self.eat(Tok::LPar)? && !self.eat(Tok::RPar)? {
            self.value_list(ctx, out)?;
            self.expect(Tok::RPar, "',' or ')' in the argument list")?;
        }
        Ok(())
    }

    /// `v { "," v }` (at least one) appended to `out`.
    fn value_list(&mut self, ctx: &mut FuncCtx, out: &mut Vec<Value>) -> PResult<()> {
        loop {
            out.push(self.value_use(ctx)?);
            if !self.eat(Tok::Comma)? {
                return Ok(());
            }
        }
    }

    fn comma(&mut self) -> PResult<()> {
        self.expect(Tok::Comma, "',' between operands").map(|_| ())
    }

    /// An identifier parsed by `from_name`, or "expected {what}".
    fn named<T>(&mut self, what: &str, from_name: fn(&str) -> Option<T>) -> PResult<T> {
        let found = match self.tok.tok {
            Tok::Ident(s) => from_name(s),
            _ => None,
        };
        match found {
            Some(x) => {
                self.bump()?;
                Ok(x)
            }
            None => Err(self.expected(what)),
        }
    }

    fn trap_code(&mut self) -> PResult<TrapCode> {
        self.named(
            "a trap code (e.g. user1, int_divz, heap_oob)",
            TrapCode::from_name,
        )
    }

    /// One instruction or alias line of `block`.
    fn parse_line(&mut self, ctx: &mut FuncCtx, block: Block) -> PResult<()> {
        let srcloc = match self.tok.tok {
            Tok::SrcLoc(hex) => {
                let loc = u32::from_str_radix(hex, 16).map_err(|_| {
                    self.error_here(format!("source location @{hex} does not fit in 32 bits"))
                })?;
                self.bump()?;
                Some(loc)
            }
            _ => None,
        };
        let start = self.tok.pos;
        let mut results = std::mem::take(&mut self.results);
        results.clear();
        if let Tok::Value(_) = self.tok.tok {
            let (v, pos) = self.value_def_token(ctx)?;
            if self.eat(Tok::Arrow)? {
                self.results = results;
                return self.parse_alias(ctx, v, pos);
            }
            results.push((v, pos));
            while self.eat(Tok::Comma)? {
                results.push(self.value_def_token(ctx)?);
            }
            self.expect(Tok::Equal, "'=' after the result values")?;
        }
        let outcome = self.parse_instruction(ctx, block, &results, start, srcloc);
        self.results = results;
        outcome
    }

    /// `vN -> vM`: the target must already be defined.
    fn parse_alias(&mut self, ctx: &mut FuncCtx, v: Value, pos: Pos) -> PResult<()> {
        let target_pos = self.tok.pos;
        let target = self.value_use(ctx)?;
        if !ctx.func.dfg.value_is_attached(target) {
            return Err(self.error_at(
                target_pos,
                format!("alias target {target} must be defined before the alias"),
            ));
        }
        self.check_undefined(ctx, v, pos)?;
        if !ctx.func.dfg.make_alias_at(v, target) {
            return Err(self.error_at(pos, format!("alias {v} -> {target} would be a cycle")));
        }
        ctx.alias_pos.push((v, pos));
        Ok(())
    }

    fn parse_instruction(
        &mut self,
        ctx: &mut FuncCtx,
        block: Block,
        results: &[(Value, Pos)],
        start: Pos,
        srcloc: Option<u32>,
    ) -> PResult<()> {
        let Tok::Ident(name) = self.tok.tok else {
            return Err(self.expected("an opcode"));
        };
        let op_pos = self.tok.pos;
        let Some(opcode) = Opcode::from_name(name) else {
            return Err(self.error_here(match later_feature(name) {
                Some(feature) => format!("`{name}` ({feature}) is not supported yet"),
                None => format!("unknown opcode `{name}`"),
            }));
        };
        self.bump()?;
        let suffix = if self.eat(Tok::Dot)? {
            Some(self.expect_type("a type after '.'")?)
        } else {
            None
        };
        if let Some(ty) = suffix {
            self.check_ctrl(opcode, ty, op_pos)?;
        }
        let data = self.parse_operands(ctx, opcode, suffix, op_pos)?;
        let ctrl = self.ctrl_type(ctx, opcode, suffix, &data, op_pos)?;

        let func = &mut ctx.func;
        let inst = func.dfg.make_inst(data);
        if data.exception_table().is_some() {
            if let Some(pending) = ctx.pending_try_calls.last_mut() {
                pending.inst = Some(inst);
            }
        }
        let func = &mut ctx.func;
        let mut types = [Type::INVALID; 2];
        let call_types: Vec<Type>;
        let want: &[Type] = match func.call_signature(&data) {
            // A tail call has no results; a `try_call`'s are made with its block calls.
            Some(_) if opcode.is_return_call() || opcode.is_try_call() => &[],
            Some(sig) => {
                call_types = sig.returns.iter().map(|p| p.value_type).collect();
                &call_types
            }
            None => {
                let r = result_types(opcode, ctrl);
                let n = r.as_slice().len();
                types[..n].copy_from_slice(r.as_slice());
                &types[..n]
            }
        };
        if opcode.is_try_call() && !results.is_empty() {
            return Err(self.error_at(
                start,
                format!("`{opcode}` has no results: the callee's return values are `retN` arguments of its normal destination"),
            ));
        }
        if want.len() != results.len() {
            let plural = if want.len() == 1 { "" } else { "s" };
            return Err(self.error_at(
                start,
                format!(
                    "`{opcode}` produces {} result{plural}, but {} {} written",
                    want.len(),
                    results.len(),
                    if results.len() == 1 { "is" } else { "are" }
                ),
            ));
        }
        for (&(v, pos), &ty) in results.iter().zip(want) {
            self.check_undefined(ctx, v, pos)?;
            ctx.func.dfg.attach_result(inst, v, ty);
        }
        ctx.func.layout.append_inst(inst, block);
        ctx.map.insts[inst] = self.text_pos(start);
        if srcloc.is_some() {
            ctx.func.srclocs[inst] = srcloc;
        }
        match self.tok.tok {
            Tok::Comma => Err(self.error_here(format!("too many operands for `{opcode}`"))),
            Tok::Value(_)
            | Tok::Ident(_)
            | Tok::SrcLoc(_)
            | Tok::Block(_)
            | Tok::RBrace
            | Tok::Eof => Ok(()),
            _ => Err(self.error_here(format!(
                "unexpected {} after the operands of `{opcode}`",
                self.tok.tok
            ))),
        }
    }

    /// Fail unless `ty` is an admissible controlling type of `opcode`.
    fn check_ctrl(&self, opcode: Opcode, ty: Type, pos: Pos) -> PResult<()> {
        let set = ctrl_type_set(opcode);
        if opcode.ctrl() == Ctrl::None {
            return Err(self.error_at(pos, format!("`{opcode}` does not take a type suffix")));
        }
        if !set.contains(ty) {
            return Err(self.error_at(
                pos,
                format!(
                    "`{opcode}` does not accept type {ty} (expected {})",
                    set.describe()
                ),
            ));
        }
        Ok(())
    }

    /// The controlling type: the suffix, or the typevar operand's type.
    fn ctrl_type(
        &self,
        ctx: &FuncCtx,
        opcode: Opcode,
        suffix: Option<Type>,
        data: &D,
        pos: Pos,
    ) -> PResult<Type> {
        let n = match (opcode.ctrl(), suffix) {
            (Ctrl::None, _) => return Ok(Type::INVALID),
            (_, Some(ty)) => return Ok(ty),
            (Ctrl::Suffix, None) if ctrl_type_set(opcode).only().is_some() => {
                // `uload32 p` means `uload32.i64 p`: the only type it admits.
                return Ok(ctrl_type_set(opcode).only().unwrap_or(Type::I64));
            }
            (Ctrl::Suffix, None) => {
                let example = Type::SCALARS
                    .into_iter()
                    .rev()
                    .find(|&t| ctrl_type_set(opcode).contains(t))
                    .unwrap_or(Type::I64);
                return Err(self.error_at(
                    pos,
                    format!("`{opcode}` needs a type suffix, e.g. `{opcode}.{example}`"),
                ));
            }
            (Ctrl::Operand(n) | Ctrl::OperandPrinted(n), None) => n as usize,
        };
        let dfg = &ctx.func.dfg;
        let Some(v) = data.arguments(&dfg.pool).nth(n) else {
            return Err(self.error_at(pos, format!("`{opcode}` is missing its typevar operand")));
        };
        if !dfg.value_is_attached(v) {
            return Err(self.error_at(
                pos,
                format!(
                    "cannot infer the type of `{opcode}`: {v} is not defined yet; \
                     write a type suffix such as `{opcode}.i32`"
                ),
            ));
        }
        let ty = dfg.value_type(v);
        self.check_ctrl(opcode, ty, pos)?;
        Ok(ty)
    }

    fn parse_operands(
        &mut self,
        ctx: &mut FuncCtx,
        opcode: Opcode,
        suffix: Option<Type>,
        op_pos: Pos,
    ) -> PResult<D> {
        Ok(match opcode.format() {
            F::Unary => D::Unary {
                opcode,
                arg: self.value_use(ctx)?,
            },
            F::UnaryImm => {
                let Some(ty) = suffix else {
                    return Err(self.error_at(
                        op_pos,
                        format!("`{opcode}` needs a type suffix, e.g. `{opcode}.i64`"),
                    ));
                };
                let Tok::Number(text) = self.tok.tok else {
                    return Err(self.expected("an integer immediate"));
                };
                let bits = literal::parse_int_bits(text, ty.bits())
                    .map_err(|e| self.error_here(format!("bad {ty} immediate `{text}`: {e}")))?;
                self.bump()?;
                D::UnaryImm {
                    opcode,
                    imm: bits as u64 as i64,
                }
            }
            F::UnaryIeee16 => {
                let Tok::Number(text) = self.tok.tok else {
                    return Err(self.expected("an f16 immediate"));
                };
                let imm = literal::parse_f16(text)
                    .map_err(|e| self.error_here(format!("bad f16 immediate `{text}`: {e}")))?;
                self.bump()?;
                D::UnaryIeee16 { opcode, imm }
            }
            F::UnaryConst => D::UnaryConst {
                opcode,
                constant: self.constant_operand(ctx, opcode, suffix, op_pos)?,
            },
            F::BinaryImm8 => {
                let arg = self.value_use(ctx)?;
                self.comma()?;
                D::BinaryImm8 {
                    opcode,
                    arg,
                    imm: self.lane_index()?,
                }
            }
            F::TernaryImm8 => {
                let args = self.values_n::<2>(ctx)?;
                self.comma()?;
                D::TernaryImm8 {
                    opcode,
                    args,
                    imm: self.lane_index()?,
                }
            }
            F::Shuffle => {
                let args = self.values_n::<2>(ctx)?;
                self.comma()?;
                let bits = self.vector_literal(Type::I8X16)?;
                D::Shuffle {
                    opcode,
                    args,
                    mask: ctx.func.dfg.immediates.push(bits),
                }
            }
            F::UnaryIeee32 => {
                let Tok::Number(text) = self.tok.tok else {
                    return Err(self.expected("an f32 immediate"));
                };
                let imm = literal::parse_f32(text)
                    .map_err(|e| self.error_here(format!("bad f32 immediate `{text}`: {e}")))?;
                self.bump()?;
                D::UnaryIeee32 { opcode, imm }
            }
            F::UnaryIeee64 => {
                let Tok::Number(text) = self.tok.tok else {
                    return Err(self.expected("an f64 immediate"));
                };
                let imm = literal::parse_f64(text)
                    .map_err(|e| self.error_here(format!("bad f64 immediate `{text}`: {e}")))?;
                self.bump()?;
                D::UnaryIeee64 { opcode, imm }
            }
            F::UnaryGlobalValue => D::UnaryGlobalValue {
                opcode,
                global_value: self.global_value_ref(ctx)?,
            },
            F::Binary => D::Binary {
                opcode,
                args: self.values_n::<2>(ctx)?,
            },
            F::Ternary => D::Ternary {
                opcode,
                args: self.values_n::<3>(ctx)?,
            },
            F::MultiAry => {
                let mut list = std::mem::take(&mut self.values);
                list.clear();
                let parsed = match self.tok.tok {
                    Tok::Value(_) => self.value_list(ctx, &mut list),
                    _ => Ok(()),
                };
                let args = ctx.func.dfg.pool.alloc(&list);
                self.values = list;
                parsed?;
                D::MultiAry { opcode, args }
            }
            F::NullAry => D::NullAry { opcode },
            F::IntCompare => D::IntCompare {
                opcode,
                cond: self.named(
                    "an integer condition code (eq, ne, slt, ult, …)",
                    IntCC::from_name,
                )?,
                args: self.values_n::<2>(ctx)?,
            },
            F::FloatCompare => D::FloatCompare {
                opcode,
                cond: self.named(
                    "a float condition code (eq, lt, uno, …)",
                    FloatCC::from_name,
                )?,
                args: self.values_n::<2>(ctx)?,
            },
            F::Jump => D::Jump {
                opcode,
                destination: self.block_call(ctx)?,
            },
            F::Brif => {
                let arg = self.value_use(ctx)?;
                self.comma()?;
                let then = self.block_call(ctx)?;
                self.comma()?;
                let els = self.block_call(ctx)?;
                D::Brif {
                    opcode,
                    arg,
                    blocks: [then, els],
                }
            }
            F::BranchTable => {
                let arg = self.value_use(ctx)?;
                self.comma()?;
                let default = self.block_call(ctx)?;
                self.comma()?;
                self.expect(Tok::LBracket, "'[' to start the jump table")?;
                let mut entries = Vec::new();
                if !self.eat(Tok::RBracket)? {
                    loop {
                        entries.push(self.block_call(ctx)?);
                        if !self.eat(Tok::Comma)? {
                            break;
                        }
                    }
                    self.expect(Tok::RBracket, "',' or ']' in the jump table")?;
                }
                let table = ctx
                    .func
                    .jump_tables
                    .push(JumpTableData { default, entries });
                D::BranchTable { opcode, arg, table }
            }
            F::Call => {
                let func_ref = self.func_ref(ctx)?;
                let args = self.call_args(ctx, None)?;
                D::Call {
                    opcode,
                    func_ref,
                    args,
                }
            }
            F::CallIndirect => {
                let sig_ref = self.sig_ref(ctx)?;
                self.comma()?;
                let callee = self.value_use(ctx)?;
                let args = self.call_args(ctx, Some(callee))?;
                D::CallIndirect {
                    opcode,
                    sig_ref,
                    args,
                }
            }
            F::TryCall | F::TryCallIndirect => self.parse_try_call(ctx, opcode)?,
            F::FuncAddr => D::FuncAddr {
                opcode,
                func_ref: self.func_ref(ctx)?,
            },
            F::Load => {
                let flags = self.parse_mem_flags()?;
                let arg = self.value_use(ctx)?;
                let offset = self.parse_offset()?;
                D::Load {
                    opcode,
                    flags,
                    arg,
                    offset,
                }
            }
            F::Store => {
                let flags = self.parse_mem_flags()?;
                let args = self.values_n::<2>(ctx)?;
                let offset = self.parse_offset()?;
                D::Store {
                    opcode,
                    flags,
                    args,
                    offset,
                }
            }
            F::LoadNoOffset => D::LoadNoOffset {
                opcode,
                flags: self.parse_mem_flags()?,
                arg: self.value_use(ctx)?,
            },
            F::StoreNoOffset => D::StoreNoOffset {
                opcode,
                flags: self.parse_mem_flags()?,
                args: self.values_n::<2>(ctx)?,
            },
            F::AtomicRmw => D::AtomicRmw {
                opcode,
                flags: self.parse_mem_flags()?,
                op: self.named(
                    "an atomic operation (add, sub, xchg, …)",
                    AtomicRmwOp::from_name,
                )?,
                args: self.values_n::<2>(ctx)?,
            },
            F::AtomicCas => D::AtomicCas {
                opcode,
                flags: self.parse_mem_flags()?,
                args: self.values_n::<3>(ctx)?,
            },
            F::StackLoad => {
                let stack_slot = self.stack_slot_ref(ctx)?;
                let offset = self.parse_offset()?;
                D::StackLoad {
                    opcode,
                    stack_slot,
                    offset,
                }
            }
            F::StackStore => {
                let arg = self.value_use(ctx)?;
                self.comma()?;
                let stack_slot = self.stack_slot_ref(ctx)?;
                let offset = self.parse_offset()?;
                D::StackStore {
                    opcode,
                    arg,
                    stack_slot,
                    offset,
                }
            }
            F::Trap => D::Trap {
                opcode,
                code: self.trap_code()?,
            },
            F::CondTrap => {
                let arg = self.value_use(ctx)?;
                self.comma()?;
                D::CondTrap {
                    opcode,
                    arg,
                    code: self.trap_code()?,
                }
            }
            F::IntAddTrap => {
                let args = self.values_n::<2>(ctx)?;
                self.comma()?;
                D::IntAddTrap {
                    opcode,
                    args,
                    code: self.trap_code()?,
                }
            }
        })
    }

    /// A lane index immediate (0 to 255; the verifier checks it against the lane count).
    fn lane_index(&mut self) -> PResult<u8> {
        let Tok::Number(text) = self.tok.tok else {
            return Err(self.expected("a lane index"));
        };
        let n = text
            .parse::<u8>()
            .map_err(|_| self.error_here(format!("bad lane index `{text}` (0 to 255)")))?;
        self.bump()?;
        Ok(n)
    }

    /// A vector literal of type `ty`: `[l0 l1 …]` (lane 0 first) or `0x…` (the most
    /// significant byte first).
    fn vector_literal(&mut self, ty: Type) -> PResult<u128> {
        match self.tok.tok {
            Tok::LBracket => {
                let start = self.tok.pos;
                let words = self.bracketed_words()?;
                literal::parse_vector_lanes(words, ty)
                    .map_err(|e| self.error_at(start, format!("bad {ty} literal: {e}")))
            }
            Tok::Number(text) if text.starts_with("0x") => {
                let bits = literal::parse_hex_bytes(text, ty.bytes())
                    .map_err(|e| self.error_here(format!("bad {ty} literal: {e}")))?;
                self.bump()?;
                Ok(bits)
            }
            _ => Err(self.expected(&format!("a {ty} literal ([l0 l1 …] or 0x…)"))),
        }
    }

    /// The constant of `vconst` (`constN`, or an inline literal added to the pool) or of
    /// `f128const` (a float literal added to the pool).
    fn constant_operand(
        &mut self,
        ctx: &mut FuncCtx,
        opcode: Opcode,
        suffix: Option<Type>,
        op_pos: Pos,
    ) -> PResult<crate::entity::Constant> {
        use crate::dfg::ConstantData;
        if opcode == Opcode::F128const {
            let Tok::Number(text) = self.tok.tok else {
                return Err(self.expected("an f128 immediate"));
            };
            let bits = literal::parse_f128(text)
                .map_err(|e| self.error_here(format!("bad f128 immediate `{text}`: {e}")))?;
            self.bump()?;
            return Ok(ctx
                .func
                .dfg
                .constants
                .push(ConstantData { bits, bytes: 16 }));
        }
        let Some(ty) = suffix else {
            return Err(self.error_at(
                op_pos,
                format!("`{opcode}` needs a type suffix, e.g. `{opcode}.i32x4`"),
            ));
        };
        if let Tok::Constant(n) = self.tok.tok {
            if !matches!(ctx.const_pos.get(n as usize), Some(Some(_))) {
                return Err(self.error_here(format!(
                    "const{n} is not declared (declare it before the first block: const{n} = 0x…)"
                )));
            }
            self.bump()?;
            return Ok(crate::entity::Constant::from_u32(n));
        }
        let bits = self.vector_literal(ty)?;
        Ok(ctx.func.dfg.constants.push(ConstantData {
            bits,
            bytes: ty.bytes() as u8,
        }))
    }

    /// `N` comma-separated value operands.
    fn values_n<const N: usize>(&mut self, ctx: &mut FuncCtx) -> PResult<[Value; N]> {
        let mut out = [Value::from_u32(0); N];
        for (i, slot) in out.iter_mut().enumerate() {
            if i > 0 {
                self.comma()?;
            }
            *slot = self.value_use(ctx)?;
        }
        Ok(out)
    }

    /// `"(" [ v { "," v } ] ")"` as a pool list, after an optional leading `first`.
    pub(super) fn call_args(
        &mut self,
        ctx: &mut FuncCtx,
        first: Option<Value>,
    ) -> PResult<crate::pool::ValueList> {
        let mut list = std::mem::take(&mut self.values);
        list.clear();
        list.extend(first);
        let parsed = self
            .expect(Tok::LPar, "'(' before the call arguments")
            .and_then(|_| self.opt_close_values(ctx, &mut list));
        let args = ctx.func.dfg.pool.alloc(&list);
        self.values = list;
        parsed.map(|_| args)
    }

    /// After a consumed `(`: `[ v { "," v } ] ")"`.
    fn opt_close_values(&mut self, ctx: &mut FuncCtx, out: &mut Vec<Value>) -> PResult<()> {
        if !self.eat(Tok::RPar)? {
            self.value_list(ctx, out)?;
            self.expect(Tok::RPar, "',' or ')' in the argument list")?;
        }
        Ok(())
    }
}

/// The feature a Cranelift opcode Kestrel does not have yet belongs to, for the error.
fn later_feature(name: &str) -> Option<&'static str> {
    Some(match name {
        "get_exception_handler_address" => "exception handling",
        "stack_switch" => "stack switching",
        "dynamic_stack_load" | "dynamic_stack_store" | "dynamic_stack_addr" => {
            "dynamic stack slots"
        }
        "tls_value" => "thread-local values",
        "extract_vector" => "dynamic vectors",
        _ if name.starts_with("x86_") => "x86-specific opcodes",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::text::parse_functions;

    #[test]
    fn forward_references_are_checked() {
        let ok = "function %f(i32) { block0(v0: i32): jump block1(v0) block1(v1: i32): return }";
        assert!(parse_functions(ok, "t").is_ok());
        let bad = "function %f() { block0: jump block1 }";
        let e = parse_functions(bad, "t").unwrap_err();
        assert!(e.message.contains("undefined block block1"), "{e}");
        let bad = "function %f() -> i32 { block0: return v9 }";
        let e = parse_functions(bad, "t").unwrap_err();
        assert!(e.message.contains("undefined value v9"), "{e}");
    }
}
