//! Preamble declarations: memory regions, stack slots, global values, the stack limit,
//! signatures, external functions.
//!
//! Entities may be declared in any order and with gaps, as in Cranelift's reader: a gap is
//! filled with a placeholder (`explicit_slot 0`, `vmctx`, `() system_v`) that no instruction
//! may name, because only declared numbers resolve. Function references must not have gaps
//! (a placeholder would need a signature). After the preamble, global values' bases must be
//! declared and acyclic.

use super::{FuncCtx, PResult, Parser};
use crate::entity::{EntityRef, FuncRef, GlobalValue, PrimaryMap, SigRef, StackSlot};
use crate::function::{ExtFuncData, FunctionName, GlobalValueData, Signature, StackSlotData};
use crate::immediates::MemFlags;
use crate::literal;
use crate::text::lexer::{Pos, Tok};
use crate::types::Type;

/// Record a declaration of entity `n`, filling gaps with `placeholder`.
fn declare<K: EntityRef, V: Clone>(
    map: &mut PrimaryMap<K, V>,
    positions: &mut Vec<Option<Pos>>,
    n: usize,
    data: V,
    placeholder: V,
    pos: Pos,
) -> Result<(), Pos> {
    if let Some(Some(first)) = positions.get(n) {
        return Err(*first);
    }
    while map.len() <= n {
        map.push(placeholder.clone());
        positions.push(None);
    }
    map[K::new(n)] = data;
    positions[n] = Some(pos);
    Ok(())
}

impl<'a> Parser<'a> {
    /// `[ w w … ]`: the literal words between the brackets (numbers, `NaN`, `Inf`, …).
    pub(super) fn bracketed_words(&mut self) -> PResult<Vec<&'a str>> {
        self.expect(Tok::LBracket, "'['")?;
        let mut words = Vec::new();
        loop {
            match self.tok.tok {
                Tok::RBracket => {
                    self.bump()?;
                    return Ok(words);
                }
                Tok::Number(w) | Tok::Ident(w) => {
                    words.push(w);
                    self.bump()?;
                }
                Tok::Comma => {
                    self.bump()?;
                }
                _ => return Err(self.expected("a lane literal or ']'")),
            }
        }
    }
}

impl Parser<'_> {
    pub(super) fn parse_preamble(&mut self, ctx: &mut FuncCtx) -> PResult<()> {
        loop {
            let pos = self.tok.pos;
            let (prefix, n) = match self.tok.tok {
                Tok::Region(n) => {
                    self.parse_region_decl(ctx, n)?;
                    continue;
                }
                Tok::Ident("stack_limit") => {
                    self.parse_stack_limit_decl(ctx)?;
                    continue;
                }
                Tok::Constant(n) => {
                    self.parse_constant_decl(ctx, n)?;
                    continue;
                }
                Tok::StackSlot(n) => ("ss", n),
                Tok::GlobalValue(n) => ("gv", n),
                Tok::SigRef(n) => ("sig", n),
                Tok::FuncRef(n) => ("fn", n),
                Tok::JumpTable(_) => {
                    return Err(self.error_here(
                        "jump table declarations are not supported; write the table inline: \
                         br_table v0, block1, [block2, block3]",
                    ))
                }
                _ => break,
            };
            let index = self.check_number(n, prefix, pos)?;
            self.bump()?;
            self.expect(Tok::Equal, &format!("'=' after {prefix}{n}"))?;
            let result = match prefix {
                "ss" => {
                    let data = self.parse_stack_slot_decl()?;
                    let filler = StackSlotData {
                        size: 0,
                        align_shift: 0,
                    };
                    let f = &mut ctx.func;
                    declare(
                        &mut f.stack_slots,
                        &mut ctx.ss_pos,
                        index,
                        data,
                        filler,
                        pos,
                    )
                }
                "gv" => {
                    let data = self.parse_global_value_decl(ctx)?;
                    let f = &mut ctx.func;
                    let filler = GlobalValueData::VMContext;
                    declare(
                        &mut f.global_values,
                        &mut ctx.gv_pos,
                        index,
                        data,
                        filler,
                        pos,
                    )
                }
                "sig" => {
                    let data = self.parse_signature()?;
                    let f = &mut ctx.func;
                    let filler = Signature::default();
                    declare(
                        &mut f.signatures,
                        &mut ctx.sig_pos,
                        index,
                        data,
                        filler,
                        pos,
                    )
                }
                _ => {
                    let data = self.parse_function_decl(ctx, pos)?;
                    let filler = ExtFuncData {
                        name: FunctionName::default(),
                        signature: SigRef::from_u32(0),
                        colocated: false,
                    };
                    let f = &mut ctx.func;
                    declare(&mut f.ext_funcs, &mut ctx.fn_pos, index, data, filler, pos)
                }
            };
            if let Err(first) = result {
                let line = first.line;
                return Err(self.error_at(
                    pos,
                    format!("{prefix}{n} is already declared (at line {line})"),
                ));
            }
        }
        self.check_preamble(ctx)
    }

    /// `regionN = USER_ID "DESCRIPTION"`; regions are declared in order from `region0`.
    fn parse_region_decl(&mut self, ctx: &mut FuncCtx, n: u32) -> PResult<()> {
        let next = ctx.func.alias_regions.len();
        if n as usize != next {
            let why = if (n as usize) < next {
                "is already declared"
            } else {
                "is out of order"
            };
            return Err(self.error_here(format!(
                "region{n} {why}: memory regions are declared in order, region{next} comes next"
            )));
        }
        self.bump()?;
        self.expect(Tok::Equal, &format!("'=' after region{n}"))?;
        let user_id = self.parse_u32("the region's user id (an integer)")?;
        let Tok::Str(description) = self.tok.tok else {
            return Err(self.expected("the region's description in quotes"));
        };
        self.bump()?;
        ctx.func
            .alias_regions
            .push(crate::function::AliasRegionData {
                user_id,
                description: description.to_string(),
            });
        Ok(())
    }

    /// `constN = 0x…` (the most significant byte first) or `constN = [b0 b1 …]` (bytes, the
    /// first at the lowest address).
    fn parse_constant_decl(&mut self, ctx: &mut FuncCtx, n: u32) -> PResult<()> {
        let pos = self.tok.pos;
        let index = self.check_number(n, "const", pos)?;
        self.bump()?;
        self.expect(Tok::Equal, &format!("'=' after const{n}"))?;
        let data = self.parse_constant_data()?;
        let f = &mut ctx.func;
        let placeholder = crate::dfg::ConstantData::default();
        if let Err(first) = declare(
            &mut f.dfg.constants,
            &mut ctx.const_pos,
            index,
            data,
            placeholder,
            pos,
        ) {
            let line = first.line;
            return Err(self.error_at(
                pos,
                format!("const{n} is already declared (at line {line})"),
            ));
        }
        Ok(())
    }

    /// The data of a constant declaration: a hex literal or a bracketed list of bytes.
    pub(super) fn parse_constant_data(&mut self) -> PResult<crate::dfg::ConstantData> {
        match self.tok.tok {
            Tok::Number(text) if text.starts_with("0x") => {
                let bytes = crate::literal::hex_byte_len(text);
                if bytes == 0 || bytes > 16 {
                    return Err(self.error_here(format!(
                        "constant `{text}` has {bytes} bytes; constants hold 1 to 16"
                    )));
                }
                let bits =
                    crate::literal::parse_hex_bytes(text, bytes).map_err(|e| self.error_here(e))?;
                self.bump()?;
                Ok(crate::dfg::ConstantData {
                    bits,
                    bytes: bytes as u8,
                })
            }
            Tok::LBracket => {
                let start = self.tok.pos;
                let words = self.bracketed_words()?;
                if words.is_empty() || words.len() > 16 {
                    return Err(self.error_at(start, "a constant holds 1 to 16 bytes"));
                }
                let mut bits = 0u128;
                for (i, w) in words.iter().enumerate() {
                    let b = crate::literal::parse_lane(w, Type::I8).map_err(|e| {
                        self.error_at(start, format!("byte {i} `{w}` of the constant: {e}"))
                    })?;
                    bits |= b << (8 * i);
                }
                Ok(crate::dfg::ConstantData {
                    bits,
                    bytes: words.len() as u8,
                })
            }
            _ => Err(self.expected("constant data (0x… or [b0 b1 …])")),
        }
    }

    /// `stack_limit = gvN`, at most once.
    fn parse_stack_limit_decl(&mut self, ctx: &mut FuncCtx) -> PResult<()> {
        if ctx.func.stack_limit.is_some() {
            return Err(self.error_here("the stack limit is already declared"));
        }
        self.bump()?;
        self.expect(Tok::Equal, "'=' after stack_limit")?;
        let gv = self.global_value_ref(ctx)?;
        ctx.func.stack_limit = Some(gv);
        Ok(())
    }

    fn check_preamble(&self, ctx: &FuncCtx) -> PResult<()> {
        if let Some(gap) = ctx.fn_pos.iter().position(Option::is_none) {
            let later = ctx
                .fn_pos
                .iter()
                .flatten()
                .next_back()
                .copied()
                .unwrap_or_default();
            return Err(self.error_at(
                later,
                format!(
                    "fn{gap} is never declared; function references must be numbered without gaps"
                ),
            ));
        }
        for (gv, data) in ctx.func.global_values.iter() {
            let Some(pos) = ctx.gv_pos[gv.index()] else {
                continue;
            };
            // Follow the chain of bases; it must reach a declared `vmctx` within `len` steps.
            let mut cur = data.clone();
            let mut steps = 0;
            while let GlobalValueData::Load { base, .. } | GlobalValueData::IAddImm { base, .. } =
                cur
            {
                if !matches!(ctx.gv_pos.get(base.index()), Some(Some(_))) {
                    return Err(self.error_at(
                        pos,
                        format!("{gv} is based on undeclared global value {base}"),
                    ));
                }
                steps += 1;
                if steps > ctx.func.global_values.len() {
                    return Err(self.error_at(pos, format!("{gv} is defined in terms of itself")));
                }
                cur = ctx.func.global_values[base].clone();
            }
        }
        Ok(())
    }

    /// `explicit_slot SIZE [, align = N]`
    fn parse_stack_slot_decl(&mut self) -> PResult<StackSlotData> {
        match self.tok.tok {
            Tok::Ident("explicit_slot") => {
                self.bump()?;
            }
            Tok::Ident(kind) => {
                return Err(self.error_here(format!(
                    "unsupported stack slot kind `{kind}` (only explicit_slot)"
                )))
            }
            _ => return Err(self.expected("a stack slot kind (explicit_slot)")),
        }
        let size = self.parse_u32("the stack slot size in bytes")?;
        let mut align_shift = 0;
        while self.eat(Tok::Comma)? {
            if self.tok.tok != Tok::Ident("align") {
                return Err(self.expected("a stack slot flag (align = N)"));
            }
            self.bump()?;
            self.expect(Tok::Equal, "'=' after align")?;
            let pos = self.tok.pos;
            let align = self.parse_u32("the alignment in bytes")?;
            if !align.is_power_of_two() {
                return Err(self.error_at(pos, format!("alignment {align} is not a power of two")));
            }
            align_shift = align.trailing_zeros() as u8;
        }
        Ok(StackSlotData { size, align_shift })
    }

    /// A non-negative integer literal that fits in 32 bits.
    pub(crate) fn parse_u32(&mut self, what: &str) -> PResult<u32> {
        let Tok::Number(text) = self.tok.tok else {
            return Err(self.expected(what));
        };
        let value = literal::parse_int(text)
            .map_err(|e| self.error_here(format!("bad integer `{text}`: {e}")))?;
        if value.negative && value.magnitude != 0 {
            return Err(self.error_here(format!("{what} must not be negative")));
        }
        let n = u32::try_from(value.magnitude)
            .map_err(|_| self.error_here(format!("{what} `{text}` does not fit in 32 bits")))?;
        self.bump()?;
        Ok(n)
    }

    /// A signed 64-bit immediate (any literal that fits 64 bits signed or unsigned).
    pub(crate) fn parse_imm64(&mut self, what: &str) -> PResult<i64> {
        let Tok::Number(text) = self.tok.tok else {
            return Err(self.expected(what));
        };
        let bits = literal::parse_int_bits(text, 64)
            .map_err(|e| self.error_here(format!("bad integer `{text}`: {e}")))?;
        self.bump()?;
        Ok(bits as u64 as i64)
    }

    /// `vmctx` | `load.T flags gvN[+off]` | `iadd_imm[.T] gvN, imm` |
    /// `symbol [colocated] name[+off]`
    fn parse_global_value_decl(&mut self, ctx: &FuncCtx) -> PResult<GlobalValueData> {
        let kind = match self.tok.tok {
            Tok::Ident(s) => s,
            _ => return Err(self.expected("a global value kind (vmctx, load, iadd_imm)")),
        };
        let kind_pos = self.tok.pos;
        self.bump()?;
        match kind {
            "vmctx" => Ok(GlobalValueData::VMContext),
            "load" => {
                self.expect(Tok::Dot, "'.' and a type after load")?;
                let global_type = self.expect_type("the loaded type")?;
                let flags = self.parse_mem_flags()?;
                let base = self.parse_gv_name()?;
                let offset = self.parse_offset()?;
                if flags.trap_code.is_some() || !flags.aligned {
                    return Err(
                        self.error_at(kind_pos, "a global value load must be `notrap aligned`")
                    );
                }
                Ok(GlobalValueData::Load {
                    base,
                    offset,
                    global_type,
                    flags,
                })
            }
            "iadd_imm" => {
                let explicit = if self.eat(Tok::Dot)? {
                    Some(self.expect_type("a type after iadd_imm.")?)
                } else {
                    None
                };
                let base_pos = self.tok.pos;
                let base = self.parse_gv_name()?;
                self.expect(Tok::Comma, "',' before the immediate")?;
                let offset = self.parse_imm64("an integer immediate")?;
                let global_type = match explicit {
                    Some(t) => t,
                    None => self.gv_type(ctx, base).ok_or_else(|| {
                        self.error_at(
                            base_pos,
                            format!(
                                "cannot infer the type of iadd_imm from {base}; \
                                 declare {base} first or write iadd_imm.i64"
                            ),
                        )
                    })?,
                };
                Ok(GlobalValueData::IAddImm {
                    base,
                    offset,
                    global_type,
                })
            }
            "symbol" => {
                let colocated = self.eat(Tok::Ident("colocated"))?;
                if matches!(self.tok.tok, Tok::Ident("tls")) {
                    return Err(self.error_here(
                        "thread-local symbols (`symbol tls`) are not supported yet".to_string(),
                    ));
                }
                let name = self.parse_function_name("a symbol name (%name or uN:M)")?;
                let offset = i64::from(self.parse_offset()?);
                Ok(GlobalValueData::Symbol {
                    name,
                    offset,
                    colocated,
                })
            }
            _ => Err(self.error_at(
                kind_pos,
                format!(
                    "unknown global value kind `{kind}` (expected vmctx, load, iadd_imm or symbol)"
                ),
            )),
        }
    }

    /// The type of a declared global value (`vmctx` is a 64-bit pointer).
    fn gv_type(&self, ctx: &FuncCtx, gv: GlobalValue) -> Option<Type> {
        ctx.gv_pos.get(gv.index())?.as_ref()?;
        Some(match ctx.func.global_values[gv] {
            GlobalValueData::VMContext | GlobalValueData::Symbol { .. } => Type::I64,
            GlobalValueData::Load { global_type, .. }
            | GlobalValueData::IAddImm { global_type, .. } => global_type,
        })
    }

    /// A `gvN` token (declaration is checked by the caller or after the preamble).
    fn parse_gv_name(&mut self) -> PResult<GlobalValue> {
        let Tok::GlobalValue(n) = self.tok.tok else {
            return Err(self.expected("a global value (gvN)"));
        };
        self.check_number(n, "gv", self.tok.pos)?;
        self.bump()?;
        Ok(GlobalValue::from_u32(n))
    }

    /// `[colocated] name (sigN | signature)`
    fn parse_function_decl(&mut self, ctx: &mut FuncCtx, decl_pos: Pos) -> PResult<ExtFuncData> {
        let colocated = self.eat(Tok::Ident("colocated"))?;
        let name = self.parse_function_name("a function name (%name or uN:M)")?;
        let signature = match self.tok.tok {
            Tok::LPar => {
                // An inline signature declares the next signature number.
                let sig = self.parse_signature()?;
                let r = ctx.func.signatures.push(sig);
                ctx.sig_pos.push(Some(decl_pos));
                r
            }
            Tok::SigRef(_) => self.sig_ref(ctx)?,
            _ => return Err(self.expected("a signature (sigN or an inline signature)")),
        };
        Ok(ExtFuncData {
            name,
            signature,
            colocated,
        })
    }

    /// A reference to a declared `sigN`.
    pub(crate) fn sig_ref(&mut self, ctx: &FuncCtx) -> PResult<SigRef> {
        let Tok::SigRef(n) = self.tok.tok else {
            return Err(self.expected("a signature (sigN)"));
        };
        if !matches!(ctx.sig_pos.get(n as usize), Some(Some(_))) {
            return Err(self.error_here(format!("undeclared signature sig{n}")));
        }
        self.bump()?;
        Ok(SigRef::from_u32(n))
    }

    /// A reference to a declared `fnN`.
    pub(crate) fn func_ref(&mut self, ctx: &FuncCtx) -> PResult<FuncRef> {
        let Tok::FuncRef(n) = self.tok.tok else {
            return Err(self.expected("a function reference (fnN)"));
        };
        if !matches!(ctx.fn_pos.get(n as usize), Some(Some(_))) {
            return Err(self.error_here(format!("undeclared function reference fn{n}")));
        }
        self.bump()?;
        Ok(FuncRef::from_u32(n))
    }

    /// A reference to a declared `ssN`.
    pub(crate) fn stack_slot_ref(&mut self, ctx: &FuncCtx) -> PResult<StackSlot> {
        let Tok::StackSlot(n) = self.tok.tok else {
            return Err(self.expected("a stack slot (ssN)"));
        };
        if !matches!(ctx.ss_pos.get(n as usize), Some(Some(_))) {
            return Err(self.error_here(format!("undeclared stack slot ss{n}")));
        }
        self.bump()?;
        Ok(StackSlot::from_u32(n))
    }

    /// A reference to a declared `gvN`.
    pub(crate) fn global_value_ref(&mut self, ctx: &FuncCtx) -> PResult<GlobalValue> {
        let Tok::GlobalValue(n) = self.tok.tok else {
            return Err(self.expected("a global value (gvN)"));
        };
        if !matches!(ctx.gv_pos.get(n as usize), Some(Some(_))) {
            return Err(self.error_here(format!("undeclared global value gv{n}")));
        }
        self.bump()?;
        Ok(GlobalValue::from_u32(n))
    }

    /// Zero or more memory flag words.
    pub(crate) fn parse_mem_flags(&mut self) -> PResult<MemFlags> {
        let mut flags = MemFlags::new();
        loop {
            match self.tok.tok {
                Tok::Ident(word) => match flags.set_by_name(word) {
                    Ok(true) => {
                        self.bump()?;
                    }
                    Ok(false) => break,
                    Err(msg) => return Err(self.error_here(msg)),
                },
                // Whether the region is declared is the verifier's question.
                Tok::Region(n) => {
                    if flags.alias_region.is_some() {
                        return Err(self.error_here("an access names at most one memory region"));
                    }
                    flags.alias_region = Some(crate::immediates::AliasRegion::Declared(n));
                    self.bump()?;
                }
                _ => break,
            }
        }
        Ok(flags)
    }

    /// An optional signed offset written right after an operand: `+8`, `-16`, `+0x10`.
    pub(crate) fn parse_offset(&mut self) -> PResult<i32> {
        let Tok::Number(text) = self.tok.tok else {
            return Ok(0);
        };
        if !text.starts_with(['+', '-']) {
            return Ok(0);
        }
        let value = literal::parse_int(text)
            .map_err(|e| self.error_here(format!("bad offset `{text}`: {e}")))?;
        let fits = if value.negative {
            value.magnitude <= 1 << 31
        } else {
            value.magnitude < 1 << 31
        };
        if !fits {
            return Err(self.error_here(format!("offset `{text}` does not fit in 32 bits")));
        }
        self.bump()?;
        Ok(value.wrapping_bits() as u32 as i32)
    }
}
