//! Instruction helpers: one method per common opcode, each a thin wrapper around
//! [`FunctionBuilder::build`] (which does all checking). Opcodes without a helper are emitted
//! with `build` directly, or with the generic [`InstBuilder::unary`], [`InstBuilder::binary`]
//! and [`InstBuilder::ternary`].

use super::{BuilderError, FunctionBuilder};
use crate::entity::{Block, FuncRef, GlobalValue, Inst, SigRef, StackSlot, Value};
use crate::function::{ExceptionTableData, JumpTableData, EXCEPTION_PAYLOAD_TYPES};
use crate::immediates::{FloatCC, IntCC, MemFlags, TrapCode};
use crate::instructions::{BlockCall, InstructionData as D};
use crate::opcode::Opcode;
use crate::types::Type;

type Res<T> = Result<T, BuilderError>;

/// A block-call argument of a `try_call` destination: a value, the callee's return value
/// `Ret(n)` (normal destination only) or the exception payload `Exn(n)` (handlers only).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum TryCallArg {
    Value(Value),
    Ret(u32),
    Exn(u32),
}

/// A `try_call` handler: the tag it catches (`None`: any), its block and arguments.
#[derive(Clone, Debug)]
pub struct Handler<'a> {
    pub tag: Option<u32>,
    pub block: Block,
    pub args: &'a [TryCallArg],
}

/// Emits instructions at the end of the builder's current block.
pub struct InstBuilder<'a> {
    b: &'a mut FunctionBuilder,
}

impl<'a> InstBuilder<'a> {
    pub(super) fn new(b: &'a mut FunctionBuilder) -> Self {
        InstBuilder { b }
    }

    /// Emit `data` with controlling type `ty` (see [`FunctionBuilder::build`]).
    pub fn build(self, data: D, ty: Type) -> Res<Inst> {
        self.b.build(data, ty)
    }

    /// Emit and return the single (first) result.
    fn one(self, data: D, ty: Type) -> Res<Value> {
        let opcode = data.opcode();
        let inst = self.b.build(data, ty)?;
        self.b
            .func
            .dfg
            .first_result(inst)
            .ok_or_else(|| BuilderError::InvalidInstruction {
                opcode,
                message: "it has no result".into(),
            })
    }

    /// Emit and return both results (`*_overflow`, `isplit`).
    fn two(self, data: D, ty: Type) -> Res<(Value, Value)> {
        let opcode = data.opcode();
        let inst = self.b.build(data, ty)?;
        match *self.b.func.dfg.inst_results(inst) {
            [a, b] => Ok((a, b)),
            _ => Err(BuilderError::InvalidInstruction {
                opcode,
                message: "it does not have two results".into(),
            }),
        }
    }

    fn call_to(&mut self, block: Block, args: &[Value]) -> BlockCall {
        BlockCall::new(block, args, &mut self.b.func.dfg.pool)
    }

    // ---- Generic shapes ------------------------------------------------------------------

    /// A one-operand opcode; `ty` is the result type for suffix-typed opcodes (`uextend`, …).
    pub fn unary(self, opcode: Opcode, ty: Type, arg: Value) -> Res<Value> {
        self.one(D::Unary { opcode, arg }, ty)
    }

    pub fn binary(self, opcode: Opcode, x: Value, y: Value) -> Res<Value> {
        self.one(
            D::Binary {
                opcode,
                args: [x, y],
            },
            Type::INVALID,
        )
    }

    pub fn ternary(self, opcode: Opcode, x: Value, y: Value, z: Value) -> Res<Value> {
        self.one(
            D::Ternary {
                opcode,
                args: [x, y, z],
            },
            Type::INVALID,
        )
    }

    // ---- Constants -----------------------------------------------------------------------

    pub fn iconst(self, ty: Type, imm: i64) -> Res<Value> {
        self.one(
            D::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            },
            ty,
        )
    }

    pub fn f32const(self, x: f32) -> Res<Value> {
        let data = D::UnaryIeee32 {
            opcode: Opcode::F32const,
            imm: x.to_bits(),
        };
        self.one(data, Type::INVALID)
    }

    pub fn f64const(self, x: f64) -> Res<Value> {
        let data = D::UnaryIeee64 {
            opcode: Opcode::F64const,
            imm: x.to_bits(),
        };
        self.one(data, Type::INVALID)
    }

    // ---- Arithmetic and comparisons ------------------------------------------------------

    // ---- Vectors and the other float formats ---------------------------------------------

    /// `vconst.ty` of `bits` (lane 0 in the low bits), added to the constant pool.
    pub fn vconst(self, ty: Type, bits: u128) -> Res<Value> {
        let bytes = u8::try_from(ty.bytes()).unwrap_or(0);
        let constant = self
            .b
            .func
            .dfg
            .constants
            .push(crate::dfg::ConstantData { bits, bytes });
        self.one(
            D::UnaryConst {
                opcode: Opcode::Vconst,
                constant,
            },
            ty,
        )
    }

    /// `f16const` of IEEE bits.
    pub fn f16const(self, bits: u16) -> Res<Value> {
        self.one(
            D::UnaryIeee16 {
                opcode: Opcode::F16const,
                imm: bits,
            },
            Type::INVALID,
        )
    }

    /// `f128const` of IEEE bits, added to the constant pool.
    pub fn f128const(self, bits: u128) -> Res<Value> {
        let data = crate::dfg::ConstantData { bits, bytes: 16 };
        let constant = self.b.func.dfg.constants.push(data);
        self.one(
            D::UnaryConst {
                opcode: Opcode::F128const,
                constant,
            },
            Type::INVALID,
        )
    }

    /// `splat.ty x`: every lane of a `ty` vector set to `x`.
    pub fn splat(self, ty: Type, x: Value) -> Res<Value> {
        self.unary(Opcode::Splat, ty, x)
    }

    /// `extractlane x, lane`.
    pub fn extractlane(self, x: Value, lane: u8) -> Res<Value> {
        self.one(
            D::BinaryImm8 {
                opcode: Opcode::Extractlane,
                arg: x,
                imm: lane,
            },
            Type::INVALID,
        )
    }

    /// `insertlane x, y, lane`: `x` with lane `lane` replaced by `y`.
    pub fn insertlane(self, x: Value, y: Value, lane: u8) -> Res<Value> {
        self.one(
            D::TernaryImm8 {
                opcode: Opcode::Insertlane,
                args: [x, y],
                imm: lane,
            },
            Type::INVALID,
        )
    }

    /// `shuffle x, y, mask`: byte `i` of `mask` picks lane `i` of the result from the 32
    /// lanes of `x` then `y`.
    pub fn shuffle(self, x: Value, y: Value, mask: [u8; 16]) -> Res<Value> {
        let mask = self.b.func.dfg.immediates.push(u128::from_le_bytes(mask));
        self.one(
            D::Shuffle {
                opcode: Opcode::Shuffle,
                args: [x, y],
                mask,
            },
            Type::INVALID,
        )
    }

    pub fn iadd(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Iadd, x, y)
    }

    pub fn isub(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Isub, x, y)
    }

    pub fn imul(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Imul, x, y)
    }

    pub fn udiv(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Udiv, x, y)
    }

    pub fn sdiv(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Sdiv, x, y)
    }

    pub fn band(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Band, x, y)
    }

    pub fn bor(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Bor, x, y)
    }

    pub fn bxor(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Bxor, x, y)
    }

    pub fn ishl(self, x: Value, amount: Value) -> Res<Value> {
        self.binary(Opcode::Ishl, x, amount)
    }

    pub fn ushr(self, x: Value, amount: Value) -> Res<Value> {
        self.binary(Opcode::Ushr, x, amount)
    }

    pub fn sshr(self, x: Value, amount: Value) -> Res<Value> {
        self.binary(Opcode::Sshr, x, amount)
    }

    pub fn fadd(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Fadd, x, y)
    }

    pub fn fsub(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Fsub, x, y)
    }

    pub fn fmul(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Fmul, x, y)
    }

    pub fn fdiv(self, x: Value, y: Value) -> Res<Value> {
        self.binary(Opcode::Fdiv, x, y)
    }

    pub fn iconcat(self, lo: Value, hi: Value) -> Res<Value> {
        self.binary(Opcode::Iconcat, lo, hi)
    }

    pub fn uadd_overflow(self, x: Value, y: Value) -> Res<(Value, Value)> {
        let data = D::Binary {
            opcode: Opcode::UaddOverflow,
            args: [x, y],
        };
        self.two(data, Type::INVALID)
    }

    pub fn isplit(self, x: Value) -> Res<(Value, Value)> {
        self.two(
            D::Unary {
                opcode: Opcode::Isplit,
                arg: x,
            },
            Type::INVALID,
        )
    }

    pub fn icmp(self, cond: IntCC, x: Value, y: Value) -> Res<Value> {
        let data = D::IntCompare {
            opcode: Opcode::Icmp,
            cond,
            args: [x, y],
        };
        self.one(data, Type::INVALID)
    }

    pub fn fcmp(self, cond: FloatCC, x: Value, y: Value) -> Res<Value> {
        let data = D::FloatCompare {
            opcode: Opcode::Fcmp,
            cond,
            args: [x, y],
        };
        self.one(data, Type::INVALID)
    }

    pub fn select(self, cond: Value, x: Value, y: Value) -> Res<Value> {
        self.ternary(Opcode::Select, cond, x, y)
    }

    // ---- Conversions ---------------------------------------------------------------------

    pub fn uextend(self, ty: Type, x: Value) -> Res<Value> {
        self.unary(Opcode::Uextend, ty, x)
    }

    pub fn sextend(self, ty: Type, x: Value) -> Res<Value> {
        self.unary(Opcode::Sextend, ty, x)
    }

    pub fn ireduce(self, ty: Type, x: Value) -> Res<Value> {
        self.unary(Opcode::Ireduce, ty, x)
    }

    pub fn bitcast(self, ty: Type, flags: MemFlags, x: Value) -> Res<Value> {
        let data = D::LoadNoOffset {
            opcode: Opcode::Bitcast,
            flags,
            arg: x,
        };
        self.one(data, ty)
    }

    // ---- Memory --------------------------------------------------------------------------

    pub fn load(self, ty: Type, flags: MemFlags, addr: Value, offset: i32) -> Res<Value> {
        let data = D::Load {
            opcode: Opcode::Load,
            flags,
            arg: addr,
            offset,
        };
        self.one(data, ty)
    }

    pub fn store(self, flags: MemFlags, value: Value, addr: Value, offset: i32) -> Res<Inst> {
        let data = D::Store {
            opcode: Opcode::Store,
            flags,
            args: [value, addr],
            offset,
        };
        self.build(data, Type::INVALID)
    }

    pub fn stack_load(self, ty: Type, slot: StackSlot, offset: i32) -> Res<Value> {
        let data = D::StackLoad {
            opcode: Opcode::StackLoad,
            stack_slot: slot,
            offset,
        };
        self.one(data, ty)
    }

    pub fn stack_store(self, value: Value, slot: StackSlot, offset: i32) -> Res<Inst> {
        let data = D::StackStore {
            opcode: Opcode::StackStore,
            arg: value,
            stack_slot: slot,
            offset,
        };
        self.build(data, Type::INVALID)
    }

    pub fn stack_addr(self, ty: Type, slot: StackSlot, offset: i32) -> Res<Value> {
        let data = D::StackLoad {
            opcode: Opcode::StackAddr,
            stack_slot: slot,
            offset,
        };
        self.one(data, ty)
    }

    pub fn global_value(self, ty: Type, gv: GlobalValue) -> Res<Value> {
        let data = D::UnaryGlobalValue {
            opcode: Opcode::GlobalValue,
            global_value: gv,
        };
        self.one(data, ty)
    }

    // ---- The pinned register (`enable_pinned_reg`) ---------------------------------------

    pub fn get_pinned_reg(self, ty: Type) -> Res<Value> {
        self.one(
            D::NullAry {
                opcode: Opcode::GetPinnedReg,
            },
            ty,
        )
    }

    pub fn set_pinned_reg(self, value: Value) -> Res<Inst> {
        let data = D::Unary {
            opcode: Opcode::SetPinnedReg,
            arg: value,
        };
        self.build(data, Type::INVALID)
    }

    // ---- Calls ---------------------------------------------------------------------------

    /// A direct call; returns the instruction (its results are `inst_results(inst)`).
    pub fn call(self, callee: FuncRef, args: &[Value]) -> Res<Inst> {
        let args = self.b.func.dfg.pool.alloc(args);
        self.build(
            D::Call {
                opcode: Opcode::Call,
                func_ref: callee,
                args,
            },
            Type::INVALID,
        )
    }

    /// An indirect call through `callee`, an address.
    pub fn call_indirect(self, sig: SigRef, callee: Value, args: &[Value]) -> Res<Inst> {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(callee);
        all.extend_from_slice(args);
        let args = self.b.func.dfg.pool.alloc(&all);
        let data = D::CallIndirect {
            opcode: Opcode::CallIndirect,
            sig_ref: sig,
            args,
        };
        self.build(data, Type::INVALID)
    }

    /// `try_call callee(args), sig, normal(normal_args), [handlers…]`: ends the block. `sig`
    /// must be the callee's signature.
    pub fn try_call(
        mut self,
        callee: FuncRef,
        sig: SigRef,
        args: &[Value],
        normal: (Block, &[TryCallArg]),
        handlers: &[Handler<'_>],
    ) -> Res<Inst> {
        let args = self.b.func.dfg.pool.alloc(args);
        let table = self.try_table(sig, normal, handlers)?;
        let data = D::TryCall {
            opcode: Opcode::TryCall,
            func_ref: callee,
            args,
            table,
        };
        self.build_try(data, normal, handlers)
    }

    /// [`Self::try_call`] through `callee`, an address, with signature `sig`.
    pub fn try_call_indirect(
        mut self,
        sig: SigRef,
        callee: Value,
        args: &[Value],
        normal: (Block, &[TryCallArg]),
        handlers: &[Handler<'_>],
    ) -> Res<Inst> {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(callee);
        all.extend_from_slice(args);
        let args = self.b.func.dfg.pool.alloc(&all);
        let table = self.try_table(sig, normal, handlers)?;
        let data = D::TryCallIndirect {
            opcode: Opcode::TryCallIndirect,
            sig_ref: sig,
            args,
            table,
        };
        self.build_try(data, normal, handlers)
    }

    /// A fresh exception table whose block calls get their arguments in `build_try`;
    /// refuses `Exn` on the normal destination and `Ret` on a handler.
    fn try_table(
        &mut self,
        sig: SigRef,
        normal: (Block, &[TryCallArg]),
        handlers: &[Handler<'_>],
    ) -> Res<crate::entity::ExceptionTable> {
        let bad = |message: &str| BuilderError::InvalidInstruction {
            opcode: Opcode::TryCall,
            message: message.into(),
        };
        if normal.1.iter().any(|a| matches!(a, TryCallArg::Exn(_))) {
            return Err(bad(
                "an exception payload (exnN) passed to the normal destination",
            ));
        }
        if handlers
            .iter()
            .any(|h| h.args.iter().any(|a| matches!(a, TryCallArg::Ret(_))))
        {
            return Err(bad("a return value (retN) passed to a handler"));
        }
        let call = |block| BlockCall {
            block,
            args: Default::default(),
        };
        Ok(self.b.func.exception_tables.push(ExceptionTableData {
            sig,
            normal: call(normal.0),
            tags: handlers.iter().map(|h| h.tag).collect(),
            handlers: handlers.iter().map(|h| call(h.block)).collect(),
        }))
    }

    fn build_try(
        self,
        data: D,
        normal: (Block, &[TryCallArg]),
        handlers: &[Handler<'_>],
    ) -> Res<Inst> {
        let Some(table) = data.exception_table() else {
            unreachable!("build_try is given a try_call");
        };
        self.b.build_with(data, Type::INVALID, |func, inst| {
            let results = func.dfg.inst_results(inst).to_vec();
            let rets = results.len().saturating_sub(EXCEPTION_PAYLOAD_TYPES.len());
            let lists = std::iter::once(normal.1).chain(handlers.iter().map(|h| h.args));
            let resolved: Vec<Vec<Value>> = lists
                .map(|args| {
                    args.iter()
                        .map(|&a| match a {
                            TryCallArg::Value(v) => v,
                            // Out of range: a value of no instruction, refused by the checks.
                            TryCallArg::Ret(n) => results
                                .get(n as usize)
                                .filter(|_| (n as usize) < rets)
                                .copied()
                                .unwrap_or(Value::from_u32(u32::MAX)),
                            TryCallArg::Exn(n) => results
                                .get(rets + n as usize)
                                .copied()
                                .unwrap_or(Value::from_u32(u32::MAX)),
                        })
                        .collect()
                })
                .collect();
            for (k, values) in resolved.iter().enumerate() {
                let list = func.dfg.pool.alloc(values);
                let et = &mut func.exception_tables[table];
                match k {
                    0 => et.normal.args = list,
                    _ => et.handlers[k - 1].args = list,
                }
            }
        })
    }

    /// A tail call of `callee` (`tail` convention): ends the block, and the function.
    pub fn return_call(self, callee: FuncRef, args: &[Value]) -> Res<Inst> {
        let args = self.b.func.dfg.pool.alloc(args);
        self.build(
            D::Call {
                opcode: Opcode::ReturnCall,
                func_ref: callee,
                args,
            },
            Type::INVALID,
        )
    }

    /// A tail call through `callee`, an address (`tail` convention).
    pub fn return_call_indirect(self, sig: SigRef, callee: Value, args: &[Value]) -> Res<Inst> {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(callee);
        all.extend_from_slice(args);
        let args = self.b.func.dfg.pool.alloc(&all);
        let data = D::CallIndirect {
            opcode: Opcode::ReturnCallIndirect,
            sig_ref: sig,
            args,
        };
        self.build(data, Type::INVALID)
    }

    pub fn func_addr(self, ty: Type, callee: FuncRef) -> Res<Value> {
        self.one(
            D::FuncAddr {
                opcode: Opcode::FuncAddr,
                func_ref: callee,
            },
            ty,
        )
    }

    // ---- Control flow --------------------------------------------------------------------

    pub fn jump(mut self, dest: Block, args: &[Value]) -> Res<Inst> {
        let destination = self.call_to(dest, args);
        self.build(
            D::Jump {
                opcode: Opcode::Jump,
                destination,
            },
            Type::INVALID,
        )
    }

    pub fn brif(
        mut self,
        cond: Value,
        then_block: Block,
        then_args: &[Value],
        else_block: Block,
        else_args: &[Value],
    ) -> Res<Inst> {
        let blocks = [
            self.call_to(then_block, then_args),
            self.call_to(else_block, else_args),
        ];
        self.build(
            D::Brif {
                opcode: Opcode::Brif,
                arg: cond,
                blocks,
            },
            Type::INVALID,
        )
    }

    /// `br_table index, default, [entries…]` with a fresh jump table; destinations take no
    /// arguments.
    pub fn br_table(mut self, index: Value, default: Block, entries: &[Block]) -> Res<Inst> {
        let default = self.call_to(default, &[]);
        let entries = entries.iter().map(|&b| self.call_to(b, &[])).collect();
        let table = self
            .b
            .func
            .jump_tables
            .push(JumpTableData { default, entries });
        self.build(
            D::BranchTable {
                opcode: Opcode::BrTable,
                arg: index,
                table,
            },
            Type::INVALID,
        )
    }

    pub fn return_(self, values: &[Value]) -> Res<Inst> {
        let args = self.b.func.dfg.pool.alloc(values);
        self.build(
            D::MultiAry {
                opcode: Opcode::Return,
                args,
            },
            Type::INVALID,
        )
    }

    pub fn trap(self, code: TrapCode) -> Res<Inst> {
        self.build(
            D::Trap {
                opcode: Opcode::Trap,
                code,
            },
            Type::INVALID,
        )
    }

    pub fn trapz(self, cond: Value, code: TrapCode) -> Res<Inst> {
        self.build(
            D::CondTrap {
                opcode: Opcode::Trapz,
                arg: cond,
                code,
            },
            Type::INVALID,
        )
    }

    pub fn trapnz(self, cond: Value, code: TrapCode) -> Res<Inst> {
        self.build(
            D::CondTrap {
                opcode: Opcode::Trapnz,
                arg: cond,
                code,
            },
            Type::INVALID,
        )
    }
}
