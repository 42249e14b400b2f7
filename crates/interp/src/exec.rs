//! The execution loop: one frame per call, one `match` per instruction.
//!
//! A frame's value slots are `regs[base .. base + num_values]`, indexed by value number.
//! Because the layout is compact, block `b`'s instructions are `Inst(start..end)` and the
//! program counter is just an instruction number. Branches read all their arguments into
//! `scratch` before writing any block parameter, which gives block parameters their
//! simultaneous-assignment semantics (seed 004: phis at block entry read on the edge).

use kestrel_ir::immediates::Endianness;
use kestrel_ir::{
    AtomicRmwOp, Block, Function, GlobalValueData, Inst, InstructionData as D, MemFlags, Opcode,
    TrapCode, Type, Value,
};

use crate::libcall::Libcall;
use crate::ops::{self, FloatKind};
use crate::{Callee, InterpError, Interpreter};

/// Base of the addresses `func_addr` hands out; function `i` is at `FUNC_BASE + 16 * i`.
const FUNC_BASE: u64 = 0x7f00_0000;
/// Base of library-call addresses.
const LIBCALL_BASE: u64 = 0x7e00_0000;
/// The value `get_return_address` produces (the interpreter has no real return addresses).
const FAKE_RETURN_ADDRESS: u128 = 0x7d00_0000;
/// The address `func_addr` gives `%__cranelift_throw`.
const THROW_ADDRESS: u64 = LIBCALL_BASE - 16;
/// Addresses from here to the last function's are code: readable, every byte zero (the
/// interpreter's functions have no machine code; native code is readable too).
const CODE_START: u64 = FAKE_RETURN_ADDRESS as u64;

/// Where control goes after an instruction.
enum Flow {
    Next,
    Goto(Block),
    Return,
    /// A tail call of function `.0` with arguments `.1`: this frame ends first.
    TailCall(usize, Vec<u128>),
}

fn trap_of(t: ops::Trap) -> TrapCode {
    match t {
        ops::Trap::IntegerDivisionByZero => TrapCode::INTEGER_DIVISION_BY_ZERO,
        ops::Trap::IntegerOverflow => TrapCode::INTEGER_OVERFLOW,
        ops::Trap::BadConversionToInteger => TrapCode::BAD_CONVERSION_TO_INTEGER,
    }
}

fn endian(flags: MemFlags) -> Endianness {
    flags.endianness.unwrap_or(Endianness::Little)
}

impl<'f> Interpreter<'f> {
    /// Run function `index` with `args` (taken by value so the buffer can be recycled);
    /// its results are left in `ret_buf`. A tail call ends its frame before the callee's
    /// begins (this loop runs it), so a chain of tail calls of any length takes one frame's
    /// host stack and interpreter memory.
    pub(crate) fn invoke(
        &mut self,
        mut index: usize,
        mut args: Vec<u128>,
    ) -> Result<(), InterpError> {
        loop {
            match self.invoke_frame(index, args)? {
                None => return Ok(()),
                Some((next, next_args)) => (index, args) = (next, next_args),
            }
        }
    }

    /// One frame of [`Self::invoke`]: `Some` is the tail call it ended with.
    fn invoke_frame(
        &mut self,
        index: usize,
        mut args: Vec<u128>,
    ) -> Result<Option<(usize, Vec<u128>)>, InterpError> {
        let func: &'f Function = self.funcs[index];
        let name = || crate::name_key(&func.name);
        if !func.layout.is_compact() {
            return Err(InterpError::NotCompact { function: name() });
        }
        let entry = func
            .layout
            .entry_block()
            .ok_or_else(|| InterpError::Invalid {
                function: name(),
                inst: Inst::from_u32(0),
                message: "function has no blocks".into(),
            })?;
        self.depth += 1;
        let mem_mark = self.memory.top();
        let info = &self.info[index];
        let frame_addr = match self
            .memory
            // 16 bytes below each frame (where a native frame keeps its frame record), so
            // nested frames have distinct frame pointers even when empty: a throw finds its
            // entry frame by it.
            .push_frame_bytes(16, 1)
            .and_then(|_| {
                self.memory
                    .push_frame_bytes(info.frame_size as usize, info.frame_align as usize)
            }) {
            Some(a) if self.depth <= crate::MAX_CALL_DEPTH => a,
            _ => {
                self.depth -= 1;
                return Err(InterpError::Trap {
                    code: TrapCode::STACK_OVERFLOW,
                    function: name(),
                    inst: Inst::from_u32(0),
                });
            }
        };
        let base = self.regs.len();
        self.regs.resize(base + func.dfg.num_values(), 0);
        for (&p, &a) in func.dfg.block_params(entry).iter().zip(args.iter()) {
            self.regs[base + p.as_u32() as usize] = a;
        }
        args.clear();
        self.arg_buf = args;

        let result = match self.check_stack_limit(index, func, base) {
            Ok(()) => self.run_frame(index, func, base, frame_addr, entry),
            Err(e) => Err(e),
        };
        let result = match result {
            // The unwind stops at the entry frame: the exception was not caught.
            Err(InterpError::Exception { tag, entry_fp, .. }) if entry_fp == frame_addr => {
                Err(InterpError::Invalid {
                    function: name(),
                    inst: Inst::from_u32(0),
                    message: format!(
                        "an exception with tag {tag} reached this frame (the throw's entry \
                         frame) without meeting a handler"
                    ),
                })
            }
            r => r,
        };
        self.regs.truncate(base);
        self.memory.pop_to(mem_mark);
        self.depth -= 1;
        result
    }

    fn run_frame(
        &mut self,
        index: usize,
        func: &'f Function,
        base: usize,
        frame_addr: u64,
        entry: Block,
    ) -> Result<Option<(usize, Vec<u128>)>, InterpError> {
        let mut range = func.layout.block_range(entry);
        loop {
            let Some(pc) = range.next() else {
                return Err(self.invalid(
                    func,
                    Inst::from_u32(range.start),
                    "fell off the end of a block",
                ));
            };
            if self.fuel_left == 0 {
                return Err(InterpError::OutOfFuel {
                    limit: self.fuel_limit.unwrap_or(u64::MAX),
                });
            }
            self.fuel_left -= 1;
            let inst = Inst::from_u32(pc);
            match self.step(index, func, base, frame_addr, inst)? {
                Flow::Next => {}
                Flow::Goto(b) => range = func.layout.block_range(b),
                Flow::Return => return Ok(None),
                Flow::TailCall(next, args) => return Ok(Some((next, args))),
            }
        }
    }

    fn invalid(&self, func: &Function, inst: Inst, message: &str) -> InterpError {
        InterpError::Invalid {
            function: crate::name_key(&func.name),
            inst,
            message: message.to_string(),
        }
    }

    fn trap(&self, func: &Function, inst: Inst, code: TrapCode) -> InterpError {
        InterpError::Trap {
            code,
            function: crate::name_key(&func.name),
            inst,
        }
    }

    #[inline]
    fn get(&self, base: usize, v: Value) -> u128 {
        self.regs[base + v.as_u32() as usize]
    }

    #[inline]
    fn set(&mut self, base: usize, v: Value, x: u128) {
        self.regs[base + v.as_u32() as usize] = x;
    }

    /// Pass branch arguments to `dest`'s parameters, all reads before any write.
    fn branch(&mut self, func: &Function, base: usize, dest: &kestrel_ir::BlockCall) -> Flow {
        let args = func.dfg.block_call_args(dest);
        self.scratch.clear();
        for &a in args {
            let x = self.get(base, a);
            self.scratch.push(x);
        }
        for (i, &p) in func.dfg.block_params(dest.block).iter().enumerate() {
            let x = self.scratch[i];
            self.set(base, p, x);
        }
        Flow::Goto(dest.block)
    }

    /// Compute an address operand plus offset, wrapping at the address type's width.
    fn address(&self, func: &Function, base: usize, p: Value, offset: i32) -> u64 {
        let width = func.dfg.value_type(p).bits();
        let sum = self.get(base, p).wrapping_add(offset as i128 as u128);
        ops::truncate(sum, width.clamp(8, 128)) as u64
    }

    fn load(
        &self,
        func: &Function,
        inst: Inst,
        addr: u64,
        bytes: u32,
        flags: MemFlags,
    ) -> Result<u128, InterpError> {
        let code_end = FUNC_BASE + 16 * self.funcs.len() as u64;
        if addr >= CODE_START && addr.saturating_add(bytes as u64) <= code_end {
            return Ok(0);
        }
        self.memory
            .load(addr, bytes as usize, endian(flags))
            .map_err(|_| {
                self.trap(
                    func,
                    inst,
                    flags.trap_code.unwrap_or(TrapCode::HEAP_OUT_OF_BOUNDS),
                )
            })
    }

    /// A load of a value of type `ty`: a big-endian vector is loaded lane by lane, each lane
    /// big-endian, lane 0 at the lowest address.
    fn load_typed(
        &self,
        func: &Function,
        inst: Inst,
        addr: u64,
        bytes: u32,
        ty: Type,
        flags: MemFlags,
    ) -> Result<u128, InterpError> {
        if !(ty.is_vector() && endian(flags) == Endianness::Big) {
            return self.load(func, inst, addr, bytes, flags);
        }
        let x = self.load(
            func,
            inst,
            addr,
            bytes,
            MemFlags {
                endianness: Some(Endianness::Little),
                ..flags
            },
        )?;
        Ok(swap_lane_bytes(x, ty))
    }

    /// A store of a value of type `ty` (see [`Self::load_typed`] for vectors).
    #[allow(clippy::too_many_arguments)]
    fn store_typed(
        &mut self,
        func: &Function,
        inst: Inst,
        addr: u64,
        bytes: u32,
        ty: Type,
        value: u128,
        flags: MemFlags,
    ) -> Result<(), InterpError> {
        if !(ty.is_vector() && endian(flags) == Endianness::Big) {
            return self.store(func, inst, addr, bytes, value, flags);
        }
        let x = swap_lane_bytes(value, ty);
        self.store(
            func,
            inst,
            addr,
            bytes,
            x,
            MemFlags {
                endianness: Some(Endianness::Little),
                ..flags
            },
        )
    }

    fn store(
        &mut self,
        func: &Function,
        inst: Inst,
        addr: u64,
        bytes: u32,
        value: u128,
        flags: MemFlags,
    ) -> Result<(), InterpError> {
        self.memory
            .store(addr, bytes as usize, value, endian(flags))
            .map_err(|_| {
                self.trap(
                    func,
                    inst,
                    flags.trap_code.unwrap_or(TrapCode::HEAP_OUT_OF_BOUNDS),
                )
            })
    }

    /// `stack_limit = gvN`: traps with `stk_ovf` when the limit lies above the stack
    /// pointer. The interpreter's stack pointer is modelled as
    /// [`crate::memory::VIRTUAL_STACK_TOP`] minus the bytes of all live frames (this one's
    /// included): the interpreter's own addresses are not a machine's, so only limits far
    /// from any real stack (none at all, or one above every stack) mean the same here and
    /// natively.
    fn check_stack_limit(
        &self,
        index: usize,
        func: &Function,
        base: usize,
    ) -> Result<(), InterpError> {
        let Some(gv) = func.stack_limit else {
            return Ok(());
        };
        let at = Inst::from_u32(0);
        let limit = self.global_value(index, func, at, base, gv, 0)? as u64;
        let sp = crate::memory::VIRTUAL_STACK_TOP - self.memory.top() as u64;
        if sp < limit {
            return Err(InterpError::Trap {
                code: TrapCode::STACK_OVERFLOW,
                function: crate::name_key(&func.name),
                inst: at,
            });
        }
        Ok(())
    }

    fn global_value(
        &self,
        index: usize,
        func: &Function,
        inst: Inst,
        base: usize,
        gv: kestrel_ir::GlobalValue,
        depth: u32,
    ) -> Result<u128, InterpError> {
        let bad = |m: &str| self.invalid(func, inst, m);
        if depth > 64 {
            return Err(bad("global values form a cycle"));
        }
        let data = func
            .global_values
            .get(gv)
            .ok_or_else(|| bad("unknown global value"))?;
        match *data {
            GlobalValueData::Symbol { ref name, .. } => Err(bad(&format!(
                "symbol {name} has no address in the interpreter (symbols are placed by a linker or the JIT)"
            ))),
            GlobalValueData::VMContext => {
                let index = self.info[index]
                    .vmctx_param
                    .ok_or_else(|| bad("function has no vmctx parameter"))?;
                let entry = func
                    .layout
                    .entry_block()
                    .ok_or_else(|| bad("no entry block"))?;
                let param = func.dfg.block_params(entry)[index];
                Ok(self.get(base, param))
            }
            GlobalValueData::Load {
                base: b,
                offset,
                global_type,
                flags,
            } => {
                let addr = self.global_value(index, func, inst, base, b, depth + 1)?;
                let addr = (addr as u64).wrapping_add(offset as i64 as u64);
                self.load(func, inst, addr, global_type.bytes(), flags)
            }
            GlobalValueData::IAddImm {
                base: b,
                offset,
                global_type,
            } => {
                let x = self.global_value(index, func, inst, base, b, depth + 1)?;
                Ok(ops::truncate(
                    x.wrapping_add(offset as i128 as u128),
                    global_type.bits(),
                ))
            }
        }
    }

    /// Call `callee` with arguments `args` and write its results to `results`.
    fn do_call(
        &mut self,
        func: &'f Function,
        inst: Inst,
        base: usize,
        callee: Callee,
        args: &[Value],
        results: &[Value],
    ) -> Result<(), InterpError> {
        match callee {
            Callee::Local(target) => {
                let mut buf = std::mem::take(&mut self.arg_buf);
                buf.clear();
                for &a in args {
                    buf.push(self.get(base, a));
                }
                let expected = self.funcs[target].signature.params.len();
                if expected != args.len()
                    || self.funcs[target].signature.returns.len() != results.len()
                {
                    return Err(self.invalid(
                        func,
                        inst,
                        "call does not match the callee's signature",
                    ));
                }
                self.invoke(target, buf)?;
                for (i, &r) in results.iter().enumerate() {
                    let x = self.ret_buf[i];
                    self.set(base, r, x);
                }
                Ok(())
            }
            Callee::Libcall(lc) => {
                if args.len() != lc.arity() || results.len() != 1 {
                    return Err(self.invalid(func, inst, "library call with the wrong signature"));
                }
                let mut vals = [0u128; 3];
                for (i, &a) in args.iter().enumerate() {
                    vals[i] = self.get(base, a);
                }
                let x = lc.apply(&vals[..args.len()]);
                self.set(base, results[0], x);
                Ok(())
            }
            Callee::Throw => {
                if args.len() != 6 || !results.is_empty() {
                    return Err(self.invalid(
                        func,
                        inst,
                        "%__cranelift_throw takes (i64, i64, i64, i32, i64, i64) and returns nothing",
                    ));
                }
                Err(InterpError::Exception {
                    entry_fp: self.get(base, args[0]) as u64,
                    tag: self.get(base, args[3]) as u32,
                    payloads: [self.get(base, args[4]), self.get(base, args[5])],
                })
            }
            Callee::Unknown => {
                Err(self.invalid(func, inst, "call to a function that is not in this module"))
            }
        }
    }

    /// `try_call`: the call, then the normal destination with the callee's results, or the
    /// first handler for a thrown exception's tag with its payloads.
    #[allow(clippy::too_many_arguments)]
    fn try_call(
        &mut self,
        func: &'f Function,
        inst: Inst,
        base: usize,
        callee: Callee,
        args: &[Value],
        results: &[Value],
        table: kestrel_ir::ExceptionTable,
    ) -> Result<Flow, InterpError> {
        let et = &func.exception_tables[table];
        let (rets, payloads) = results.split_at(results.len().saturating_sub(2));
        match self.do_call(func, inst, base, callee, args, rets) {
            Ok(()) => Ok(self.branch(func, base, &et.normal)),
            Err(InterpError::Exception {
                tag,
                payloads: values,
                entry_fp,
            }) => {
                let Some(k) = et.tags.iter().position(|t| t.is_none_or(|t| t == tag)) else {
                    return Err(InterpError::Exception {
                        tag,
                        payloads: values,
                        entry_fp,
                    });
                };
                for (&p, &x) in payloads.iter().zip(&values) {
                    self.set(base, p, x);
                }
                Ok(self.branch(func, base, &et.handlers[k]))
            }
            Err(e) => Err(e),
        }
    }

    /// `return_call callee(args)`: a function of this module runs after this frame ends
    /// ([`Flow::TailCall`]); a library routine's result is this function's.
    fn tail_call(
        &mut self,
        func: &'f Function,
        inst: Inst,
        base: usize,
        callee: Callee,
        args: &[Value],
    ) -> Result<Flow, InterpError> {
        match callee {
            Callee::Local(target) => {
                let sig = &self.funcs[target].signature;
                if sig.params.len() != args.len()
                    || sig.returns.len() != func.signature.returns.len()
                {
                    return Err(self.invalid(
                        func,
                        inst,
                        "tail call does not match the callee's signature",
                    ));
                }
                let vals = args.iter().map(|&a| self.get(base, a)).collect();
                Ok(Flow::TailCall(target, vals))
            }
            Callee::Libcall(lc) => {
                if args.len() != lc.arity() || func.signature.returns.len() != 1 {
                    return Err(self.invalid(func, inst, "library call with the wrong signature"));
                }
                let mut vals = [0u128; 3];
                for (i, &a) in args.iter().enumerate() {
                    vals[i] = self.get(base, a);
                }
                self.ret_buf.clear();
                self.ret_buf.push(lc.apply(&vals[..args.len()]));
                Ok(Flow::Return)
            }
            Callee::Throw => Err(self.invalid(func, inst, "a tail call to %__cranelift_throw")),
            Callee::Unknown => {
                Err(self.invalid(func, inst, "call to a function that is not in this module"))
            }
        }
    }

    fn callee_at_address(&self, addr: u128) -> Callee {
        let addr = addr as u64;
        if addr >= FUNC_BASE && (addr - FUNC_BASE) % 16 == 0 {
            let i = ((addr - FUNC_BASE) / 16) as usize;
            if i < self.funcs.len() {
                return Callee::Local(i);
            }
        }
        if addr == THROW_ADDRESS {
            return Callee::Throw;
        }
        if (LIBCALL_BASE..FUNC_BASE).contains(&addr) && (addr - LIBCALL_BASE) % 16 == 0 {
            if let Some(lc) = LIBCALLS.get(((addr - LIBCALL_BASE) / 16) as usize) {
                return Callee::Libcall(*lc);
            }
        }
        Callee::Unknown
    }

    fn address_of_callee(&self, callee: Callee) -> Option<u128> {
        match callee {
            Callee::Local(i) => Some((FUNC_BASE + 16 * i as u64) as u128),
            Callee::Libcall(lc) => LIBCALLS
                .iter()
                .position(|&l| l == lc)
                .map(|i| (LIBCALL_BASE + 16 * i as u64) as u128),
            Callee::Throw => Some(THROW_ADDRESS as u128),
            Callee::Unknown => None,
        }
    }

    /// Execute an instruction whose results depend only on its operands, with the shared
    /// arithmetic of [`ops::eval_pure`].
    #[inline]
    fn pure(
        &mut self,
        func: &Function,
        base: usize,
        inst: Inst,
        ty: Type,
        results: &[Value],
    ) -> Result<(), InterpError> {
        let data = func.dfg.inst(inst);
        let args = data.fixed_args();
        let mut x = [0u128; 3];
        for (slot, &a) in x.iter_mut().zip(args) {
            *slot = self.get(base, a);
        }
        let in_ty = args
            .first()
            .map_or(Type::INVALID, |&a| func.dfg.value_type(a));
        match ops::eval_pure(data, ty, in_ty, &x[..args.len()]) {
            Some(Ok(ops::Evaluated::One(r))) => self.set(base, results[0], r),
            Some(Ok(ops::Evaluated::Two(r, f))) => {
                self.set(base, results[0], r);
                self.set(base, results[1], f);
            }
            Some(Err(t)) => return Err(self.trap(func, inst, trap_of(t))),
            None => return Err(self.invalid(func, inst, "opcode does not fit its format")),
        }
        Ok(())
    }

    /// Execute one instruction.
    fn step(
        &mut self,
        index: usize,
        func: &'f Function,
        base: usize,
        frame_addr: u64,
        inst: Inst,
    ) -> Result<Flow, InterpError> {
        let dfg = &func.dfg;
        let data = dfg.inst(inst);
        let results = dfg.inst_results(inst);
        // The controlling width: of the first result if there is one, else of the first operand.
        let ty = match results.first() {
            Some(&r) => dfg.value_type(r),
            None => data
                .fixed_args()
                .first()
                .map_or(Type::INVALID, |&a| dfg.value_type(a)),
        };
        let w = ty.bits();
        let op = data.opcode();
        let trap = |this: &Self, code| Err(this.trap(func, inst, code));
        match *data {
            D::UnaryGlobalValue { global_value, .. } => {
                let x = self.global_value(index, func, inst, base, global_value, 0)?;
                self.set(base, results[0], ops::truncate(x, w));
            }
            D::UnaryConst { constant, .. } => {
                let bits = dfg
                    .constants
                    .get(constant)
                    .map(|c| c.bits)
                    .ok_or_else(|| self.invalid(func, inst, "missing constant"))?;
                self.set(base, results[0], bits & ops::mask(w.clamp(8, 128)));
            }
            D::Shuffle {
                args: [a, b], mask, ..
            } => {
                let lanes = dfg
                    .immediates
                    .get(mask)
                    .copied()
                    .ok_or_else(|| self.invalid(func, inst, "missing shuffle mask"))?;
                let r = ops::shuffle(self.get(base, a), self.get(base, b), lanes);
                self.set(base, results[0], r);
            }
            D::Unary { arg, .. } if op == Opcode::SetPinnedReg => {
                self.pinned_reg = self.get(base, arg) as u64;
            }
            D::Unary { .. }
            | D::UnaryImm { .. }
            | D::UnaryIeee16 { .. }
            | D::BinaryImm8 { .. }
            | D::TernaryImm8 { .. }
            | D::UnaryIeee32 { .. }
            | D::UnaryIeee64 { .. }
            | D::Binary { .. }
            | D::Ternary { .. }
            | D::IntCompare { .. }
            | D::FloatCompare { .. } => self.pure(func, base, inst, ty, results)?,
            D::MultiAry { args, .. } => {
                // `return`: the only MultiAry opcode.
                self.ret_buf.clear();
                for &v in dfg.pool.get(args) {
                    let x = self.get(base, v);
                    self.ret_buf.push(x);
                }
                return Ok(Flow::Return);
            }
            D::NullAry { .. } => match op {
                Opcode::GetFramePointer | Opcode::GetStackPointer => {
                    self.set(base, results[0], ops::truncate(frame_addr as u128, w))
                }
                Opcode::GetReturnAddress => {
                    self.set(base, results[0], ops::truncate(FAKE_RETURN_ADDRESS, w))
                }
                Opcode::GetPinnedReg => {
                    self.set(base, results[0], ops::truncate(self.pinned_reg as u128, w))
                }
                // nop, fence, debugtrap, sequence_point: no effect in a single-threaded model.
                _ => {}
            },
            D::Jump { destination, .. } => return Ok(self.branch(func, base, &destination)),
            D::Brif { arg, blocks, .. } => {
                let taken = if self.get(base, arg) != 0 { 0 } else { 1 };
                return Ok(self.branch(func, base, &blocks[taken]));
            }
            D::BranchTable { arg, table, .. } => {
                let jt = &func.jump_tables[table];
                let i = self.get(base, arg);
                let dest = usize::try_from(i)
                    .ok()
                    .and_then(|i| jt.entries.get(i))
                    .unwrap_or(&jt.default);
                return Ok(self.branch(func, base, dest));
            }
            D::Call { func_ref, args, .. } if op == Opcode::ReturnCall => {
                let callee = self.info[index].callees[func_ref.as_u32() as usize];
                return self.tail_call(func, inst, base, callee, dfg.pool.get(args));
            }
            D::CallIndirect { args, .. } if op == Opcode::ReturnCallIndirect => {
                let args = dfg.pool.get(args);
                let callee = self.callee_at_address(self.get(base, args[0]));
                return self.tail_call(func, inst, base, callee, &args[1..]);
            }
            D::TryCall {
                func_ref,
                args,
                table,
                ..
            } => {
                let callee = self.info[index].callees[func_ref.as_u32() as usize];
                let args = dfg.pool.get(args);
                return self.try_call(func, inst, base, callee, args, results, table);
            }
            D::TryCallIndirect { args, table, .. } => {
                let args = dfg.pool.get(args);
                let callee = self.callee_at_address(self.get(base, args[0]));
                return self.try_call(func, inst, base, callee, &args[1..], results, table);
            }
            D::Call { func_ref, args, .. } => {
                let callee = self.info[index].callees[func_ref.as_u32() as usize];
                let args = dfg.pool.get(args);
                self.do_call(func, inst, base, callee, args, results)?;
            }
            D::CallIndirect { args, .. } => {
                let args = dfg.pool.get(args);
                let callee = self.callee_at_address(self.get(base, args[0]));
                self.do_call(func, inst, base, callee, &args[1..], results)?;
            }
            D::FuncAddr { func_ref, .. } => {
                let callee = self.info[index].callees[func_ref.as_u32() as usize];
                let addr = self.address_of_callee(callee).ok_or_else(|| {
                    self.invalid(func, inst, "address of a function not in this module")
                })?;
                self.set(base, results[0], ops::truncate(addr, w));
            }
            D::Load {
                flags, arg, offset, ..
            } => {
                let addr = self.address(func, base, arg, offset);
                if let Some((lane_bits, signed)) = extending_vector_load(op) {
                    let x = self.load(func, inst, addr, 8, flags)?;
                    let n = 64 / lane_bits;
                    let r = (0..n).fold(0u128, |acc, i| {
                        let v = ops::lane(x, i, lane_bits);
                        let v = if signed {
                            ops::sextend(v, lane_bits, 2 * lane_bits)
                        } else {
                            v
                        };
                        acc | (v << (i * 2 * lane_bits))
                    });
                    self.set(base, results[0], r);
                    return Ok(Flow::Next);
                }
                let (bytes, signed) = match op {
                    Opcode::Uload8 => (1, false),
                    Opcode::Sload8 => (1, true),
                    Opcode::Uload16 => (2, false),
                    Opcode::Sload16 => (2, true),
                    Opcode::Uload32 => (4, false),
                    Opcode::Sload32 => (4, true),
                    _ => (ty.bytes(), false),
                };
                let x = self.load_typed(func, inst, addr, bytes, ty, flags)?;
                let x = if signed {
                    ops::sextend(x, bytes * 8, w)
                } else {
                    x
                };
                self.set(base, results[0], x);
            }
            D::Store {
                flags,
                args: [v, p],
                offset,
                ..
            } => {
                let addr = self.address(func, base, p, offset);
                let bytes = match op {
                    Opcode::Istore8 => 1,
                    Opcode::Istore16 => 2,
                    Opcode::Istore32 => 4,
                    _ => dfg.value_type(v).bytes(),
                };
                let x = self.get(base, v);
                self.store_typed(func, inst, addr, bytes, dfg.value_type(v), x, flags)?;
            }
            D::LoadNoOffset { .. } if op == Opcode::Bitcast => {
                self.pure(func, base, inst, ty, results)?
            }
            D::LoadNoOffset { flags, arg, .. } => {
                let addr = self.address(func, base, arg, 0);
                let x = self.load(func, inst, addr, ty.bytes(), flags)?;
                self.set(base, results[0], x);
            }
            D::StoreNoOffset {
                flags,
                args: [v, p],
                ..
            } => {
                let addr = self.address(func, base, p, 0);
                let x = self.get(base, v);
                self.store(func, inst, addr, dfg.value_type(v).bytes(), x, flags)?;
            }
            D::AtomicRmw {
                flags,
                op: rmw,
                args: [p, v],
                ..
            } => {
                let addr = self.address(func, base, p, 0);
                let old = self.load(func, inst, addr, ty.bytes(), flags)?;
                let x = self.get(base, v);
                let new = match rmw {
                    AtomicRmwOp::Add => ops::iadd(old, x, w),
                    AtomicRmwOp::Sub => ops::isub(old, x, w),
                    AtomicRmwOp::And => ops::band(old, x),
                    AtomicRmwOp::Nand => ops::bnot(ops::band(old, x), w),
                    AtomicRmwOp::Or => ops::bor(old, x),
                    AtomicRmwOp::Xor => ops::bxor(old, x),
                    AtomicRmwOp::Xchg => x,
                    AtomicRmwOp::Umin => ops::umin(old, x),
                    AtomicRmwOp::Umax => ops::umax(old, x),
                    AtomicRmwOp::Smin => ops::smin(old, x, w),
                    AtomicRmwOp::Smax => ops::smax(old, x, w),
                };
                self.store(func, inst, addr, ty.bytes(), new, flags)?;
                self.set(base, results[0], old);
            }
            D::AtomicCas {
                flags,
                args: [p, e, r],
                ..
            } => {
                let addr = self.address(func, base, p, 0);
                let old = self.load(func, inst, addr, ty.bytes(), flags)?;
                if old == self.get(base, e) {
                    let x = self.get(base, r);
                    self.store(func, inst, addr, ty.bytes(), x, flags)?;
                }
                self.set(base, results[0], old);
            }
            D::StackLoad {
                stack_slot, offset, ..
            } => {
                let slot_offset = self.info[index]
                    .slot_offsets
                    .get(stack_slot.as_u32() as usize)
                    .copied()
                    .ok_or_else(|| self.invalid(func, inst, "unknown stack slot"))?;
                let addr = (frame_addr + slot_offset as u64).wrapping_add(offset as i64 as u64);
                if op == Opcode::StackAddr {
                    self.set(base, results[0], ops::truncate(addr as u128, w));
                } else {
                    let x = self.load(func, inst, addr, ty.bytes(), MemFlags::trusted())?;
                    self.set(base, results[0], x);
                }
            }
            D::StackStore {
                arg,
                stack_slot,
                offset,
                ..
            } => {
                let slot_offset = self.info[index]
                    .slot_offsets
                    .get(stack_slot.as_u32() as usize)
                    .copied()
                    .ok_or_else(|| self.invalid(func, inst, "unknown stack slot"))?;
                let addr = (frame_addr + slot_offset as u64).wrapping_add(offset as i64 as u64);
                let x = self.get(base, arg);
                let bytes = dfg.value_type(arg).bytes();
                self.store(func, inst, addr, bytes, x, MemFlags::trusted())?;
            }
            D::Trap { code, .. } => return trap(self, code),
            D::CondTrap { arg, code, .. } => {
                let nonzero = self.get(base, arg) != 0;
                if (op == Opcode::Trapnz) == nonzero {
                    return trap(self, code);
                }
            }
            D::IntAddTrap {
                args: [a, b], code, ..
            } => match ops::uadd_overflow_trap(self.get(base, a), self.get(base, b), w) {
                Some(r) => self.set(base, results[0], r),
                None => return trap(self, code),
            },
        }
        Ok(Flow::Next)
    }
}

/// The lane width and signedness of `uload8x8` and its kin (which load 64 bits and extend
/// each lane to twice its width).
fn extending_vector_load(op: Opcode) -> Option<(u32, bool)> {
    Some(match op {
        Opcode::Uload8x8 => (8, false),
        Opcode::Sload8x8 => (8, true),
        Opcode::Uload16x4 => (16, false),
        Opcode::Sload16x4 => (16, true),
        Opcode::Uload32x2 => (32, false),
        Opcode::Sload32x2 => (32, true),
        _ => return None,
    })
}

/// Reverse the bytes within each lane of a vector of type `ty`.
fn swap_lane_bytes(x: u128, ty: Type) -> u128 {
    let w = ty.lane_bits();
    (0..ty.lane_count()).fold(0u128, |acc, i| {
        let v = ops::lane(x, i, w);
        let swapped = if w == 8 { v } else { ops::bswap(v, w) };
        acc | (swapped << (i * w))
    })
}

/// Library calls in address order (for `func_addr` of a libcall).
const LIBCALLS: [Libcall; 10] = {
    use FloatKind::{F32, F64};
    [
        Libcall::Ceil(F32),
        Libcall::Ceil(F64),
        Libcall::Floor(F32),
        Libcall::Floor(F64),
        Libcall::Trunc(F32),
        Libcall::Trunc(F64),
        Libcall::Nearest(F32),
        Libcall::Nearest(F64),
        Libcall::Fma(F32),
        Libcall::Fma(F64),
    ]
};
