//! The Rust bodies of the prelude externs (`prelude.rules`) that read the same on every ISA.
//!
//! # Contract
//!
//! `isel_prelude_externs!()` expands, inside an ISA's `impl generated::Context for
//! IselCtx<…>`, to those externs' methods. They describe the IR to the rules (read-only),
//! build results, pairs and compares, emit what the rules built, and consume merged
//! producers: `shift_count` records the merge of its `iconst`, `cond_of`/`fcond_of` that of
//! their compare, and nothing else here merges. Calls and returns go through the ISA's ABI
//! and keep an ABI error for the driver ([`IselCtx::result`]).
//!
//! The expansion names what each ISA has by the same name, resolved where it is invoked:
//! the generated module `generated` (its `constructor_icmp_parts`, `constructor_fcmp_parts`,
//! `constructor_cmp_cond`, `constructor_float_cond`, `Runtime`), the instruction type `Inst`
//! and families `AluInst`, `ControlInst` (`CondBr`, `Jmp`), `AtomicInst`, `MemInst`, the
//! condition `Cond` (with `invert`), the call target `CallDest` (`Direct`, `Indirect`), the
//! ABI module `abi` (`gen_return`, `gen_call`), the context's `runtime_call`, and its
//! [`GlobalValueSteps`](super::global_value::GlobalValueSteps).
//!
//! Cost: O(1) per call, but for calls and returns (linear in their arguments).
//!
//! [`IselCtx::result`]: super::IselCtx::result

/// The prelude externs every ISA implements alike (see the module documentation).
macro_rules! isel_prelude_externs {
    () => {
        fn inst_op(&mut self, i: ::kestrel_ir::Inst) -> $crate::machinst::ir_ops::Op {
            $crate::machinst::ir_ops::op_of(self.lower.data(i))
        }

        fn result_type(&mut self, i: ::kestrel_ir::Inst) -> Option<::kestrel_ir::Type> {
            let v = self.lower.f.dfg.first_result(i)?;
            Some(self.lower.value_type(v))
        }

        fn int_ty(&mut self, ty: ::kestrel_ir::Type) -> Option<::kestrel_ir::Type> {
            (ty.is_int() && ty.bits() <= 64).then_some(ty)
        }

        fn float_ty(&mut self, ty: ::kestrel_ir::Type) -> Option<::kestrel_ir::Type> {
            (ty == ::kestrel_ir::Type::F32 || ty == ::kestrel_ir::Type::F64).then_some(ty)
        }

        fn i64_ty(&mut self, ty: ::kestrel_ir::Type) -> Option<::kestrel_ir::Type> {
            (ty == ::kestrel_ir::Type::I64).then_some(ty)
        }

        fn i128_ty(&mut self, ty: ::kestrel_ir::Type) -> Option<::kestrel_ir::Type> {
            (ty == ::kestrel_ir::Type::I128).then_some(ty)
        }

        fn i128_val(&mut self, v: ::kestrel_ir::Value) -> Option<::kestrel_ir::Value> {
            (self.lower.value_type(v) == ::kestrel_ir::Type::I128).then_some(v)
        }

        fn value_type(&mut self, v: ::kestrel_ir::Value) -> ::kestrel_ir::Type {
            self.lower.value_type(v)
        }

        fn ty_i64(&mut self) -> ::kestrel_ir::Type {
            ::kestrel_ir::Type::I64
        }

        fn pinned_reg_enabled(&mut self, i: ::kestrel_ir::Inst) -> Option<generated::Unit> {
            if self.lower.pinned_reg() {
                return Some(generated::Unit::Unit);
            }
            let f = self.lower.f;
            self.error = Some($crate::machinst::CodegenError::Unsupported {
                opcode: Some(f.dfg.inst(i).opcode()),
                ty: None,
                what: format!("{i} in {} needs the `enable_pinned_reg` setting:", f.name),
            });
            None
        }

        fn rule_fired(&mut self, rule: usize) {
            self.lower.rule_fired(rule);
        }

        fn put_in_reg(&mut self, v: ::kestrel_ir::Value) -> ::kestrel_regalloc::VReg {
            self.lower.value_vreg(v)
        }

        fn low_bits(&mut self, v: ::kestrel_ir::Value) -> ::kestrel_regalloc::VReg {
            self.lower.value_lo(v)
        }

        fn nothing(&mut self) -> $crate::machinst::isel::Out {
            $crate::machinst::isel::Out::none()
        }

        fn out_reg(&mut self, r: ::kestrel_regalloc::VReg) -> $crate::machinst::isel::Out {
            $crate::machinst::isel::Out::one(r)
        }

        fn out2(
            &mut self,
            a: ::kestrel_regalloc::VReg,
            b: ::kestrel_regalloc::VReg,
        ) -> $crate::machinst::isel::Out {
            $crate::machinst::isel::Out::two(a, b)
        }

        fn int_reg(&mut self) -> ::kestrel_regalloc::VReg {
            self.int()
        }

        fn float_reg(&mut self) -> ::kestrel_regalloc::VReg {
            self.lower.alloc_vreg(::kestrel_regalloc::RegClass::Float)
        }

        fn alu_inst(&mut self, i: AluInst) -> Inst {
            i.into()
        }

        fn control_inst(&mut self, i: ControlInst) -> Inst {
            i.into()
        }

        fn atomic_inst(&mut self, i: AtomicInst) -> Inst {
            i.into()
        }

        fn mem_inst(&mut self, i: MemInst) -> Inst {
            i.into()
        }

        fn def(&mut self, dst: ::kestrel_regalloc::VReg, inst: Inst) -> ::kestrel_regalloc::VReg {
            self.lower.emit(inst);
            dst
        }

        fn emit(&mut self, inst: Inst) -> $crate::machinst::isel::Out {
            self.lower.emit(inst);
            $crate::machinst::isel::Out::none()
        }

        fn shift_count(&mut self, ty: ::kestrel_ir::Type, k: $crate::machinst::isel::Imm) -> u8 {
            self.lower.merge(k.value);
            (k.imm as u64 & u64::from(ty.bits() - 1)) as u8
        }

        fn imm_bits(&mut self, ty: ::kestrel_ir::Type, n: i64) -> u64 {
            n as u64 & $crate::machinst::isel::width_mask(ty)
        }

        fn abs_mask(&mut self, ty: ::kestrel_ir::Type) -> u64 {
            $crate::machinst::isel::width_mask(ty) >> 1
        }

        fn icmp_merge(&mut self, v: ::kestrel_ir::Value) -> Option<$crate::machinst::isel::Cmp> {
            let inst = self.lower.mergeable_inst(v, self.inst)?;
            let cmp = generated::constructor_icmp_parts(self, v, inst)?;
            (!self.lower.should_skip($crate::chaos::Decision::IcmpFusion)).then_some(cmp)
        }

        fn fcmp_merge(&mut self, v: ::kestrel_ir::Value) -> Option<$crate::machinst::isel::FCmp> {
            let inst = self.lower.mergeable_inst(v, self.inst)?;
            let m = generated::constructor_fcmp_parts(self, v, inst)?;
            (!self.lower.should_skip($crate::chaos::Decision::FcmpFusion)).then_some(m)
        }

        fn make_cmp(
            &mut self,
            value: ::kestrel_ir::Value,
            cc: ::kestrel_ir::IntCC,
            a: ::kestrel_ir::Value,
            b: ::kestrel_ir::Value,
        ) -> $crate::machinst::isel::Cmp {
            $crate::machinst::isel::Cmp { value, cc, a, b }
        }

        fn make_fcmp(
            &mut self,
            value: ::kestrel_ir::Value,
            cc: ::kestrel_ir::FloatCC,
            a: ::kestrel_ir::Value,
            b: ::kestrel_ir::Value,
        ) -> $crate::machinst::isel::FCmp {
            $crate::machinst::isel::FCmp { value, cc, a, b }
        }

        fn cond_of(&mut self, m: $crate::machinst::isel::Cmp) -> Cond {
            self.lower.merge(m.value);
            generated::constructor_cmp_cond(self, m.cc, m.a, m.b)
        }

        fn fcond_of(&mut self, m: $crate::machinst::isel::FCmp) -> Cond {
            self.lower.merge(m.value);
            generated::constructor_float_cond(self, m.cc, m.a, m.b)
        }

        fn invert(&mut self, c: Cond) -> Cond {
            c.invert()
        }

        fn branch(&mut self, cond: Cond) -> $crate::machinst::isel::Out {
            self.lower.emit(ControlInst::CondBr {
                cond,
                taken: self.targets[0],
                not_taken: self.targets[1],
            });
            $crate::machinst::isel::Out::none()
        }

        fn jump(&mut self) -> $crate::machinst::isel::Out {
            self.lower.emit(ControlInst::Jmp {
                target: self.targets[0],
            });
            $crate::machinst::isel::Out::none()
        }

        fn int_overflow(&mut self) -> ::kestrel_ir::TrapCode {
            ::kestrel_ir::TrapCode::INTEGER_OVERFLOW
        }

        fn div_by_zero(&mut self) -> ::kestrel_ir::TrapCode {
            ::kestrel_ir::TrapCode::INTEGER_DIVISION_BY_ZERO
        }

        fn bad_toint(&mut self) -> ::kestrel_ir::TrapCode {
            ::kestrel_ir::TrapCode::BAD_CONVERSION_TO_INTEGER
        }

        fn ret(&mut self, i: ::kestrel_ir::Inst) -> Option<$crate::machinst::isel::Out> {
            let f = self.lower.f;
            let args: ::smallvec::SmallVec<[::kestrel_ir::Value; 8]> =
                f.dfg.inst(i).arguments(&f.dfg.pool).collect();
            let done = abi::gen_return(self.lower, &args);
            self.result(done.map(|()| $crate::machinst::lower::Results::new()))
        }

        fn call(&mut self, i: ::kestrel_ir::Inst) -> Option<$crate::machinst::isel::Out> {
            let f = self.lower.f;
            let ::kestrel_ir::InstructionData::Call { func_ref, args, .. } = *f.dfg.inst(i) else {
                return None;
            };
            let ext = &f.ext_funcs[func_ref];
            let sig = &f.signatures[ext.signature];
            let dest = CallDest::Direct(::std::sync::Arc::new(ext.name.clone()));
            let done = abi::gen_call(self.lower, dest, sig, f.dfg.pool.get(args));
            self.result(done)
        }

        fn call_indirect(&mut self, i: ::kestrel_ir::Inst) -> Option<$crate::machinst::isel::Out> {
            let f = self.lower.f;
            let ::kestrel_ir::InstructionData::CallIndirect { sig_ref, args, .. } = *f.dfg.inst(i)
            else {
                return None;
            };
            let args = f.dfg.pool.get(args);
            let target = self.lower.value_vreg(args[0]);
            let sig = &f.signatures[sig_ref];
            let done = abi::gen_call(self.lower, CallDest::Indirect(target), sig, &args[1..]);
            self.result(done)
        }

        fn try_call(&mut self, i: ::kestrel_ir::Inst) -> Option<$crate::machinst::isel::Out> {
            use ::kestrel_ir::InstructionData as D;
            let f = self.lower.f;
            let (dest, sig, args, table) = match *f.dfg.inst(i) {
                D::TryCall {
                    func_ref,
                    args,
                    table,
                    ..
                } => {
                    let ext = &f.ext_funcs[func_ref];
                    let dest = CallDest::Direct(::std::sync::Arc::new(ext.name.clone()));
                    (
                        dest,
                        &f.signatures[ext.signature],
                        f.dfg.pool.get(args),
                        table,
                    )
                }
                D::TryCallIndirect {
                    sig_ref,
                    args,
                    table,
                    ..
                } => {
                    let args = f.dfg.pool.get(args);
                    let target = self.lower.value_vreg(args[0]);
                    (
                        CallDest::Indirect(target),
                        &f.signatures[sig_ref],
                        &args[1..],
                        table,
                    )
                }
                _ => return None,
            };
            if !f.exception_tables[table].handlers.is_empty() {
                let why = "`try_call` with handlers in native code (exception tables and the \
                           throw path are not implemented yet; the interpreter runs them)";
                return self.result(Err($crate::machinst::CodegenError::unsupported(why)));
            }
            let results = match abi::gen_call(self.lower, dest, sig, args) {
                Ok(r) => r,
                Err(e) => return self.result(Err(e)),
            };
            let rets = &f.dfg.inst_results(i)[..sig.returns.len()];
            if let Err(why) = self.lower.define_values(rets, &results) {
                return self.result(Err($crate::machinst::CodegenError::unsupported(why)));
            }
            self.lower.emit(ControlInst::Jmp {
                target: self.targets[0],
            });
            Some($crate::machinst::isel::Out::none())
        }

        fn return_call(&mut self, i: ::kestrel_ir::Inst) -> Option<$crate::machinst::isel::Out> {
            let f = self.lower.f;
            let ::kestrel_ir::InstructionData::Call { func_ref, args, .. } = *f.dfg.inst(i) else {
                return None;
            };
            let ext = &f.ext_funcs[func_ref];
            let sig = &f.signatures[ext.signature];
            let dest = CallDest::Direct(::std::sync::Arc::new(ext.name.clone()));
            let done = abi::gen_return_call(self.lower, dest, sig, f.dfg.pool.get(args));
            self.result(done.map(|()| $crate::machinst::lower::Results::new()))
        }

        fn return_call_indirect(
            &mut self,
            i: ::kestrel_ir::Inst,
        ) -> Option<$crate::machinst::isel::Out> {
            let f = self.lower.f;
            let ::kestrel_ir::InstructionData::CallIndirect { sig_ref, args, .. } = *f.dfg.inst(i)
            else {
                return None;
            };
            let args = f.dfg.pool.get(args);
            let target = self.lower.value_vreg(args[0]);
            let sig = &f.signatures[sig_ref];
            let done =
                abi::gen_return_call(self.lower, CallDest::Indirect(target), sig, &args[1..]);
            self.result(done.map(|()| $crate::machinst::lower::Results::new()))
        }

        fn global_value(
            &mut self,
            gv: ::kestrel_ir::GlobalValue,
        ) -> Option<$crate::machinst::isel::Out> {
            let done = self.global_value_vreg(gv).map(|r| ::smallvec::smallvec![r]);
            self.result(done)
        }

        fn runtime_call1(
            &mut self,
            routine: generated::Runtime,
            a: ::kestrel_ir::Value,
        ) -> Option<$crate::machinst::isel::Out> {
            self.runtime_call(routine, &[a])
        }

        fn runtime_call2(
            &mut self,
            routine: generated::Runtime,
            a: ::kestrel_ir::Value,
            b: ::kestrel_ir::Value,
        ) -> Option<$crate::machinst::isel::Out> {
            self.runtime_call(routine, &[a, b])
        }

        fn slot_index(&mut self, slot: ::kestrel_ir::StackSlot) -> u32 {
            ::kestrel_ir::entity::EntityRef::index(slot) as u32
        }

        fn little(&mut self, flags: ::kestrel_ir::MemFlags) -> Option<::kestrel_ir::MemFlags> {
            let big = Some(::kestrel_ir::immediates::Endianness::Big);
            (flags.endianness != big).then_some(flags)
        }

        fn big(&mut self, flags: ::kestrel_ir::MemFlags) -> Option<::kestrel_ir::MemFlags> {
            let big = Some(::kestrel_ir::immediates::Endianness::Big);
            (flags.endianness == big).then_some(flags)
        }

        fn mem_trap(&mut self, flags: ::kestrel_ir::MemFlags) -> $crate::machinst::isel::MaybeTrap {
            flags.trap_code
        }

        fn no_trap(&mut self) -> $crate::machinst::isel::MaybeTrap {
            None
        }

        fn pair_of(&mut self, v: ::kestrel_ir::Value) -> $crate::machinst::isel::Pair {
            $crate::machinst::isel::Pair(self.lower.value_pair(v))
        }

        fn make_pair(
            &mut self,
            lo: ::kestrel_regalloc::VReg,
            hi: ::kestrel_regalloc::VReg,
        ) -> $crate::machinst::isel::Pair {
            $crate::machinst::isel::Pair([lo, hi])
        }

        fn pair_lo(&mut self, p: $crate::machinst::isel::Pair) -> ::kestrel_regalloc::VReg {
            p.0[0]
        }

        fn pair_hi(&mut self, p: $crate::machinst::isel::Pair) -> ::kestrel_regalloc::VReg {
            p.0[1]
        }

        fn out_pair(&mut self, p: $crate::machinst::isel::Pair) -> $crate::machinst::isel::Out {
            $crate::machinst::isel::Out::two(p.0[0], p.0[1])
        }
    };
}

pub(crate) use isel_prelude_externs;
