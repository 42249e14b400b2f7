//! Builder tests: SSA construction across loops, trivial phi removal, switches (checked by a
//! tiny evaluator), and every misuse.

use super::*;
use crate::function::AbiParam;
use crate::immediates::IntCC;
use crate::verifier::verify_function;

fn sig(params: &[Type], returns: &[Type]) -> Signature {
    Signature {
        params: params.iter().map(|&t| AbiParam::new(t)).collect(),
        returns: returns.iter().map(|&t| AbiParam::new(t)).collect(),
        ..Signature::default()
    }
}

fn builder(params: &[Type], returns: &[Type]) -> FunctionBuilder {
    FunctionBuilder::new(FunctionName::Named("t".into()), sig(params, returns))
}

/// Evaluate the integer/control subset the tests emit; returns the returned values.
fn eval(f: &Function, args: &[i64]) -> Vec<i64> {
    let mut vals: SecondaryMap<Value, i64> = SecondaryMap::new();
    let mut block = f.entry_block().unwrap();
    let mut incoming = args.to_vec();
    let mask = |ty: Type, x: i64| -> i64 {
        if ty.bits() >= 64 {
            x
        } else {
            x & ((1i64 << ty.bits()) - 1)
        }
    };
    for _ in 0..10_000 {
        for (&p, &a) in f.dfg.block_params(block).iter().zip(&incoming) {
            vals[p] = a;
        }
        let mut next = None;
        for inst in f.layout.block_insts(block) {
            let data = *f.dfg.inst(inst);
            let ty = f.dfg.first_result(inst).map(|r| f.dfg.value_type(r));
            let ops: Vec<i64> = data.fixed_args().iter().map(|&v| vals[v]).collect();
            let a = |i: usize| ops[i];
            let result = match data {
                InstructionData::UnaryImm { imm, .. } => Some(mask(ty.unwrap(), imm)),
                InstructionData::Binary { opcode, .. } => Some(mask(
                    ty.unwrap(),
                    match opcode {
                        Opcode::Iadd => a(0).wrapping_add(a(1)),
                        Opcode::Isub => a(0).wrapping_sub(a(1)),
                        Opcode::Imul => a(0).wrapping_mul(a(1)),
                        other => panic!("eval: {other}"),
                    },
                )),
                InstructionData::Unary { .. } => Some(mask(ty.unwrap(), a(0))),
                InstructionData::IntCompare { cond, .. } => {
                    let (x, y) = (a(0) as u64, a(1) as u64);
                    Some(match cond {
                        IntCC::Equal => (x == y) as i64,
                        IntCC::UnsignedLessThan => (x < y) as i64,
                        IntCC::SignedLessThan => (a(0) < a(1)) as i64,
                        other => panic!("eval: {other}"),
                    })
                }
                InstructionData::MultiAry { args, .. } => {
                    return f.dfg.pool.get(args).iter().map(|&v| vals[v]).collect();
                }
                _ => None,
            };
            if let Some(r) = result {
                vals[f.dfg.first_result(inst).unwrap()] = r;
            }
            let call = match data {
                InstructionData::Jump { destination, .. } => Some(destination),
                InstructionData::Brif { blocks, .. } => Some(blocks[(a(0) == 0) as usize]),
                InstructionData::BranchTable { table, .. } => {
                    let jt = &f.jump_tables[table];
                    Some(*jt.entries.get(a(0) as u64 as usize).unwrap_or(&jt.default))
                }
                _ => None,
            };
            if let Some(c) = call {
                next = Some((
                    c.block,
                    f.dfg.block_call_args(&c).iter().map(|&v| vals[v]).collect(),
                ));
            }
        }
        let (b, args) = next.expect("block without branch or return");
        block = b;
        incoming = args;
    }
    panic!("eval: too many steps");
}

fn count_opcode(f: &Function, op: Opcode) -> usize {
    f.layout
        .blocks()
        .iter()
        .flat_map(|&b| f.layout.block_insts(b))
        .filter(|&i| f.dfg.inst(i).opcode() == op)
        .count()
}

/// sum = 0; i = 0; while i < n { sum += i; i += 1 }; return sum — sealing the header only
/// after the back edge.
fn sum_loop() -> Result<Function, BuilderError> {
    let mut b = builder(&[Type::I32], &[Type::I32]);
    let (entry, header, body, exit) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    let (i, sum) = (b.declare_var(Type::I32), b.declare_var(Type::I32));
    b.switch_to_block(entry)?;
    b.seal_block(entry)?;
    let n = b.append_block_params_for_function_params(entry)?[0];
    let zero = b.ins().iconst(Type::I32, 0)?;
    b.def_var(i, zero)?;
    b.def_var(sum, zero)?;
    b.ins().jump(header, &[])?;

    b.switch_to_block(header)?;
    let iv = b.use_var(i)?;
    let c = b.ins().icmp(IntCC::SignedLessThan, iv, n)?;
    b.ins().brif(c, body, &[], exit, &[])?;

    b.switch_to_block(body)?;
    b.seal_block(body)?;
    let (iv, sv) = (b.use_var(i)?, b.use_var(sum)?);
    let s2 = b.ins().iadd(sv, iv)?;
    b.def_var(sum, s2)?;
    let one = b.ins().iconst(Type::I32, 1)?;
    let i2 = b.ins().iadd(iv, one)?;
    b.def_var(i, i2)?;
    b.ins().jump(header, &[])?;
    b.seal_block(header)?;

    b.switch_to_block(exit)?;
    b.seal_block(exit)?;
    let result = b.use_var(sum)?;
    b.ins().return_(&[result])?;
    b.finalize()
}

#[test]
fn loop_variables_become_header_phis() {
    let f = sum_loop().unwrap();
    verify_function(&f).unwrap();
    let header = f.layout.blocks()[1];
    // `i` and `sum` change in the loop; `n` is read in the header but is loop-invariant, so
    // its phi was trivial and removed.
    assert_eq!(f.dfg.block_params(header).len(), 2);
    assert_eq!(eval(&f, &[5]), [10]);
    assert_eq!(eval(&f, &[0]), [0]);
    assert_eq!(eval(&f, &[100]), [4950]);
}

#[test]
fn trivial_phis_are_removed_including_cascades() {
    // x is defined once in the entry and read in the inner loop of a loop nest and after it:
    // every phi the reads create is trivial.
    let mut b = builder(&[Type::I64], &[Type::I64]);
    let blocks: Vec<Block> = (0..6).map(|_| b.create_block()).collect();
    let (entry, outer, inner, inner_latch, outer_latch, exit) = (
        blocks[0], blocks[1], blocks[2], blocks[3], blocks[4], blocks[5],
    );
    let x = b.declare_var(Type::I64);
    let k = b.declare_var(Type::I64);
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    b.def_var(x, p).unwrap();
    let zero = b.ins().iconst(Type::I64, 0).unwrap();
    b.def_var(k, zero).unwrap();
    b.ins().jump(outer, &[]).unwrap();

    b.switch_to_block(outer).unwrap();
    b.ins().jump(inner, &[]).unwrap();

    b.switch_to_block(inner).unwrap();
    let xv = b.use_var(x).unwrap(); // incomplete phis in inner and outer
    let kv = b.use_var(k).unwrap();
    let k2 = b.ins().iadd(kv, xv).unwrap();
    b.def_var(k, k2).unwrap();
    let c = b.ins().icmp(IntCC::UnsignedLessThan, k2, xv).unwrap();
    b.ins().brif(c, inner_latch, &[], outer_latch, &[]).unwrap();

    b.switch_to_block(inner_latch).unwrap();
    b.seal_block(inner_latch).unwrap();
    b.ins().jump(inner, &[]).unwrap();
    b.seal_block(inner).unwrap();

    b.switch_to_block(outer_latch).unwrap();
    b.seal_block(outer_latch).unwrap();
    let kv = b.use_var(k).unwrap();
    let c = b.ins().icmp(IntCC::UnsignedLessThan, kv, zero).unwrap();
    b.ins().brif(c, outer, &[], exit, &[]).unwrap();
    b.seal_block(outer).unwrap();

    b.switch_to_block(exit).unwrap();
    b.seal_block(exit).unwrap();
    let xv = b.use_var(x).unwrap();
    b.ins().return_(&[xv]).unwrap();
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    // Only `k` needs phis (in outer and inner); every phi for `x` is gone.
    let outer_params = f.dfg.block_params(f.layout.blocks()[1]).len();
    let inner_params = f.dfg.block_params(f.layout.blocks()[2]).len();
    assert_eq!((outer_params, inner_params), (1, 1));
    assert_eq!(f.dfg.block_params(f.layout.blocks()[5]).len(), 0);
    assert_eq!(eval(&f, &[7]), [7]);
}

#[test]
fn diamond_merge_gets_a_phi_only_when_values_differ() {
    for differ in [false, true] {
        let mut b = builder(&[Type::I32], &[Type::I32]);
        let (entry, left, right, merge) = (
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
        );
        let v = b.declare_var(Type::I32);
        b.switch_to_block(entry).unwrap();
        let p = b.append_block_params_for_function_params(entry).unwrap()[0];
        b.def_var(v, p).unwrap();
        b.ins().brif(p, left, &[], right, &[]).unwrap();
        b.switch_to_block(left).unwrap();
        if differ {
            let c = b.ins().iconst(Type::I32, 42).unwrap();
            b.def_var(v, c).unwrap();
        }
        b.ins().jump(merge, &[]).unwrap();
        b.switch_to_block(right).unwrap();
        b.ins().jump(merge, &[]).unwrap();
        b.switch_to_block(merge).unwrap();
        let r = b.use_var(v).unwrap();
        b.ins().return_(&[r]).unwrap();
        b.seal_all_blocks().unwrap();
        let f = b.finalize().unwrap();
        verify_function(&f).unwrap();
        assert_eq!(f.dfg.block_params(merge).len(), differ as usize);
        assert_eq!(eval(&f, &[1]), [if differ { 42 } else { 1 }]);
        assert_eq!(eval(&f, &[0]), [0]);
    }
}

fn switch_fn(ty: Type, cases: &[u128]) -> Function {
    let mut b = builder(&[ty], &[Type::I64]);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let sel = b.append_block_params_for_function_params(entry).unwrap()[0];
    let default = b.create_block();
    let mut sw = Switch::new();
    let mut targets = Vec::new();
    for &c in cases {
        let t = b.create_block();
        sw.set_entry(c, t).unwrap();
        targets.push((c, t));
    }
    sw.emit(&mut b, sel, default).unwrap();
    for (c, t) in targets {
        b.switch_to_block(t).unwrap();
        let v = b.ins().iconst(Type::I64, c as i64 + 1000).unwrap();
        b.ins().return_(&[v]).unwrap();
    }
    b.switch_to_block(default).unwrap();
    let v = b.ins().iconst(Type::I64, -1).unwrap();
    b.ins().return_(&[v]).unwrap();
    b.seal_all_blocks().unwrap();
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    f
}

#[test]
fn dense_switch_uses_br_table() {
    for ty in [Type::I8, Type::I32, Type::I64] {
        let cases = [3u128, 4, 5, 7, 8];
        let f = switch_fn(ty, &cases);
        assert_eq!(count_opcode(&f, Opcode::BrTable), 1, "{ty}");
        for x in 0..12i64 {
            let want = if cases.contains(&(x as u128)) {
                x + 1000
            } else {
                -1
            };
            assert_eq!(eval(&f, &[x]), [want], "{ty} selector {x}");
        }
        if ty == Type::I64 {
            // Far out of range must not wrap into the table.
            assert_eq!(eval(&f, &[(1i64 << 32) + 4]), [-1]);
        }
    }
}

#[test]
fn sparse_switch_uses_compare_tree() {
    let cases = [1u128, 100, 1000, 5000, 70000, 1 << 20, 3 << 30];
    let f = switch_fn(Type::I64, &cases);
    assert_eq!(count_opcode(&f, Opcode::BrTable), 0);
    assert!(count_opcode(&f, Opcode::Icmp) >= cases.len());
    for &c in &cases {
        let c = c as i64;
        assert_eq!(eval(&f, &[c]), [c + 1000]);
        assert_eq!(eval(&f, &[c + 1]), [-1]);
        assert_eq!(eval(&f, &[c - 1]), [-1]);
    }
    // Few cases: a chain of equality tests; none: a jump to the default.
    let f = switch_fn(Type::I32, &[9, 2]);
    assert_eq!(eval(&f, &[2]), [1002]);
    assert_eq!(eval(&f, &[3]), [-1]);
    let f = switch_fn(Type::I32, &[]);
    assert_eq!(eval(&f, &[0]), [-1]);
}

#[test]
fn switch_misuse() {
    let mut sw = Switch::new();
    sw.set_entry(1, Block::from_u32(0)).unwrap();
    assert_eq!(
        sw.set_entry(1, Block::from_u32(0)),
        Err(BuilderError::DuplicateSwitchCase { index: 1 })
    );
    let mut b = builder(&[Type::I8], &[]);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    let sel = b.append_block_params_for_function_params(entry).unwrap()[0];
    let t = b.create_block();
    let mut sw = Switch::new();
    sw.set_entry(300, t).unwrap();
    let e = sw.emit(&mut b, sel, t).unwrap_err();
    assert_eq!(
        e,
        BuilderError::SwitchCaseOutOfRange {
            index: 300,
            ty: Type::I8
        }
    );
}

/// With type checks off, the structural checks still run; an ill-typed instruction is then
/// refused only in debug builds (and the verifier still rejects what a release build let
/// through).
#[test]
fn type_checks_off_keeps_the_structural_checks() {
    let mut b = builder(&[], &[]);
    b.set_type_checks(false);
    let e = b.ins().iconst(Type::I32, 1).unwrap_err();
    assert!(matches!(e, BuilderError::NoCurrentBlock { .. }));
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let x = b.ins().iconst(Type::I32, 1).unwrap();
    let e = b.ins().iadd(x, Value::from_u32(77)).unwrap_err();
    assert!(matches!(e, BuilderError::UnknownValue { .. }));
    let y = b.ins().iconst(Type::I64, 1).unwrap();
    let ill_typed = b.ins().iadd(x, y);
    if cfg!(debug_assertions) {
        assert!(ill_typed.is_err(), "debug builds type-check regardless");
        return;
    }
    assert!(ill_typed.is_ok());
    b.ins().return_(&[]).unwrap();
    let f = b.finalize().unwrap();
    assert!(verify_function(&f).is_err());
}

#[test]
fn misuse_returns_errors_that_say_what_to_do() {
    let mut b = builder(&[], &[]);
    // No current block.
    let e = b.ins().iconst(Type::I32, 1).unwrap_err();
    assert!(matches!(e, BuilderError::NoCurrentBlock { .. }));
    assert!(e.to_string().contains("call switch_to_block first"));
    // Unknown block.
    assert_eq!(
        b.switch_to_block(Block::from_u32(5)),
        Err(BuilderError::UnknownBlock {
            block: Block::from_u32(5)
        })
    );
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    // Undeclared variable.
    let e = b.use_var(Variable::from_u32(3)).unwrap_err();
    assert_eq!(
        e,
        BuilderError::UndeclaredVariable {
            var: Variable::from_u32(3)
        }
    );
    assert!(e.to_string().contains("declare_var"));
    // Type mismatch in def_var.
    let v = b.declare_var(Type::I64);
    let x = b.ins().iconst(Type::I32, 1).unwrap();
    let e = b.def_var(v, x).unwrap_err();
    assert!(matches!(
        e,
        BuilderError::VariableTypeMismatch {
            expected: Type::I64,
            found: Type::I32,
            ..
        }
    ));
    // Ill-typed instruction.
    let y = b.ins().iconst(Type::I64, 1).unwrap();
    let e = b.ins().iadd(x, y).unwrap_err();
    assert!(
        e.to_string()
            .contains("operand 1 (v1) of `iadd` has type i64; it needs i32"),
        "{e}"
    );
    // Unknown value.
    let e = b.ins().iadd(x, Value::from_u32(77)).unwrap_err();
    assert_eq!(
        e,
        BuilderError::UnknownValue {
            value: Value::from_u32(77)
        }
    );
    // Branch argument count.
    let target = b.create_block();
    b.append_block_param(target, Type::I32).unwrap();
    let e = b.ins().jump(target, &[]).unwrap_err();
    assert_eq!(
        e,
        BuilderError::BranchArgCount {
            block: target,
            expected: 1,
            found: 0
        }
    );
    // Branch to a sealed block.
    let sealed = b.create_block();
    b.seal_block(sealed).unwrap();
    let e = b.ins().jump(sealed, &[]).unwrap_err();
    assert_eq!(
        e,
        BuilderError::BranchToSealedBlock {
            from: entry,
            to: sealed
        }
    );
    assert!(e
        .to_string()
        .contains("seal a block only after every branch to it"));
    // Unknown entities.
    let e = b
        .ins()
        .stack_load(Type::I32, StackSlot::from_u32(0), 0)
        .unwrap_err();
    assert!(matches!(e, BuilderError::UnknownEntity { .. }), "{e}");
    // Appending after a terminator; switching to a filled block.
    b.ins().jump(target, &[x]).unwrap();
    let e = b.ins().iconst(Type::I32, 2).unwrap_err();
    assert_eq!(
        e,
        BuilderError::BlockFilled {
            block: entry,
            opcode: Opcode::Iconst
        }
    );
    assert_eq!(
        b.switch_to_block(entry),
        Err(BuilderError::SwitchToFilledBlock { block: entry })
    );
    // Parameters after predecessors.
    assert_eq!(
        b.append_block_param(target, Type::I32),
        Err(BuilderError::ParamsAfterUse { block: target })
    );
}

#[test]
fn finalize_checks_sealing_termination_and_targets() {
    let mut b = builder(&[], &[]);
    assert_eq!(
        builder(&[], &[]).finalize().unwrap_err(),
        BuilderError::EmptyFunction
    );
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    let e = b.finalize().unwrap_err();
    assert_eq!(e, BuilderError::UnterminatedBlock { block: entry });
    assert!(e.to_string().contains("end it with jump"));

    let mut b = builder(&[], &[]);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.ins().return_(&[]).unwrap();
    assert_eq!(
        b.finalize().unwrap_err(),
        BuilderError::UnsealedBlock { block: entry }
    );

    let mut b = builder(&[], &[]);
    let entry = b.create_block();
    let never = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.ins().jump(never, &[]).unwrap();
    b.seal_all_blocks().unwrap();
    assert_eq!(
        b.finalize().unwrap_err(),
        BuilderError::UnplacedBranchTarget { block: never }
    );
}

#[test]
fn variable_used_before_definition_poisons_the_builder() {
    let mut b = builder(&[], &[Type::I32]);
    let (entry, next) = (b.create_block(), b.create_block());
    let v = b.declare_var(Type::I32);
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let e = b.use_var(v).unwrap_err();
    assert_eq!(
        e,
        BuilderError::UndefinedVariable {
            var: v,
            block: entry
        }
    );
    assert!(e.to_string().contains("call def_var on every path"));
    // Later calls fail with the same error instead of working on half-built phis.
    assert_eq!(b.switch_to_block(next), Err(e.clone()));
    assert_eq!(b.finalize().unwrap_err(), e);

    // Found at sealing time: a loop header reads a variable defined only inside the loop.
    let mut b = builder(&[], &[]);
    let (entry, header) = (b.create_block(), b.create_block());
    let v = b.declare_var(Type::I32);
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    b.ins().jump(header, &[]).unwrap();
    b.switch_to_block(header).unwrap();
    let x = b.use_var(v).unwrap();
    let one = b.ins().iconst(Type::I32, 1).unwrap();
    let y = b.ins().iadd(x, one).unwrap();
    b.def_var(v, y).unwrap();
    b.ins().jump(header, &[]).unwrap();
    let e = b.seal_block(header).unwrap_err();
    assert_eq!(
        e,
        BuilderError::UndefinedVariable {
            var: v,
            block: entry
        }
    );
}

#[test]
fn calls_loads_and_stores() {
    let mut b = builder(&[Type::I64], &[Type::I32]);
    let callee_sig = b.import_signature(sig(&[Type::I32], &[Type::I32]));
    let callee = b.import_function(ExtFuncData {
        name: FunctionName::Named("g".into()),
        signature: callee_sig,
        colocated: true,
    });
    let slot = b.create_stack_slot(StackSlotData {
        size: 8,
        align_shift: 3,
    });
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    let x = b
        .ins()
        .load(Type::I32, crate::MemFlags::new(), p, 4)
        .unwrap();
    let call = b.ins().call(callee, &[x]).unwrap();
    let r = b.inst_results(call)[0];
    b.ins().stack_store(r, slot, 0).unwrap();
    b.ins().store(crate::MemFlags::new(), r, p, 0).unwrap();
    let e = b.ins().call(callee, &[p]).unwrap_err();
    assert!(
        e.to_string()
            .contains("`call` passes (i64) but the signature takes (i32)"),
        "{e}"
    );
    let back = b.ins().stack_load(Type::I32, slot, 0).unwrap();
    b.ins().return_(&[back]).unwrap();
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    assert_eq!(f.num_placed_insts(), 6);
}

#[test]
fn call_indirect_through_func_addr() {
    let mut b = builder(&[Type::I32], &[Type::I32]);
    let callee_sig = b.import_signature(sig(&[Type::I32], &[Type::I32]));
    let callee = b.import_function(ExtFuncData {
        name: FunctionName::Named("g".into()),
        signature: callee_sig,
        colocated: true,
    });
    let entry = b.create_block();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let addr = b.ins().func_addr(Type::I64, callee).unwrap();
    let call = b.ins().call_indirect(callee_sig, addr, &[p]).unwrap();
    let r = b.inst_results(call)[0];
    let e = b
        .ins()
        .call_indirect(callee_sig, addr, &[addr])
        .unwrap_err();
    assert!(e.to_string().contains("passes (i64)"), "{e}");
    b.ins().return_(&[r]).unwrap();
    verify_function(&b.finalize().unwrap()).unwrap();
}

/// Reading a variable first after two nested loops: the read walks a single-predecessor
/// chain (outer exit → inner exit) into the inner header, whose phi read comes back to the
/// inner exit through the outer header. That is not an undefined variable.
#[test]
fn read_after_nested_loops_reenters_a_single_predecessor_chain() {
    let mut b = builder(&[Type::I32], &[Type::I32]);
    let x = b.declare_var(Type::I32);
    let entry = b.create_block();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    let (outer, inner, inner_exit, outer_exit) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    b.def_var(x, p).unwrap();
    b.ins().jump(outer, &[]).unwrap();
    b.switch_to_block(outer).unwrap();
    b.ins().jump(inner, &[]).unwrap();
    b.switch_to_block(inner).unwrap();
    b.ins().brif(p, inner_exit, &[], inner, &[]).unwrap();
    b.seal_block(inner).unwrap();
    b.seal_block(inner_exit).unwrap();
    b.switch_to_block(inner_exit).unwrap();
    b.ins().brif(p, outer_exit, &[], outer, &[]).unwrap();
    b.seal_block(outer).unwrap();
    b.seal_block(outer_exit).unwrap();
    b.switch_to_block(outer_exit).unwrap();
    let v = b.use_var(x).unwrap();
    b.ins().return_(&[v]).unwrap();
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    assert_eq!(f.dfg.resolve(v), p, "every phi on the way is trivial");
}

/// A `br_table` naming 20,000 blocks, each twice, plus the default: every target has the
/// table as one predecessor (so a variable read there needs no phi), and building it is one
/// pass over the entries (a hang here means a quadratic destination check).
#[test]
fn large_br_table_gives_one_predecessor_per_target() {
    let n = 20_000;
    let mut b = builder(&[Type::I32], &[Type::I32]);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    b.append_block_params_for_function_params(entry).unwrap();
    let x = b.func().dfg.block_params(entry)[0];
    let var = b.declare_var(Type::I32);
    b.def_var(var, x).unwrap();
    let targets: Vec<Block> = (0..n).map(|_| b.create_block()).collect();
    let default = b.create_block();
    let entries: Vec<Block> = targets.iter().chain(&targets).copied().collect();
    b.ins().br_table(x, default, &entries).unwrap();
    for &t in targets.iter().chain([&default]) {
        b.switch_to_block(t).unwrap();
        b.seal_block(t).unwrap();
        assert_eq!(b.blocks[t].preds.len(), 1, "{t}");
        let v = b.use_var(var).unwrap();
        assert_eq!(v, x, "{t} reads the entry's value without a phi");
        b.ins().return_(&[v]).unwrap();
    }
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    assert_eq!(count_opcode(&f, Opcode::Return), n + 1);
}

/// A variable first read after its loop, every block sealed by then: the read's phis are
/// deferred, and the loop carries the variable through a merge inside the body, so one
/// cycle comes back to the deferred header (which must make its phi then) and the inner
/// merge's phi has operands that differ (made when finished). Both stay, with the right
/// operands; a merge whose predecessors agree gets none.
#[test]
fn deferred_phis_are_made_for_cycles_and_differing_operands_only() {
    let mut b = builder(&[Type::I32], &[Type::I32]);
    let (x, i) = (b.declare_var(Type::I32), b.declare_var(Type::I32));
    let [entry, header, body_a, body_b, latch, exit] = [(); 6].map(|_| b.create_block());
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    let zero = b.ins().iconst(Type::I32, 0).unwrap();
    b.def_var(x, p).unwrap();
    b.def_var(i, zero).unwrap();
    b.ins().jump(header, &[]).unwrap();
    // header: while i < 3
    b.switch_to_block(header).unwrap();
    let iv = b.use_var(i).unwrap();
    let three = b.ins().iconst(Type::I32, 3).unwrap();
    let c = b.ins().icmp(IntCC::SignedLessThan, iv, three).unwrap();
    b.ins().brif(c, body_a, &[], exit, &[]).unwrap();
    // body_a: i += 1; if old i == p { x = 7 }
    b.switch_to_block(body_a).unwrap();
    b.seal_block(body_a).unwrap();
    let iv = b.use_var(i).unwrap();
    let one = b.ins().iconst(Type::I32, 1).unwrap();
    let next = b.ins().iadd(iv, one).unwrap();
    b.def_var(i, next).unwrap();
    let hit = b.ins().icmp(IntCC::Equal, iv, p).unwrap();
    b.ins().brif(hit, body_b, &[], latch, &[]).unwrap();
    b.switch_to_block(body_b).unwrap();
    b.seal_block(body_b).unwrap();
    let seven = b.ins().iconst(Type::I32, 7).unwrap();
    b.def_var(x, seven).unwrap();
    b.ins().jump(latch, &[]).unwrap();
    b.switch_to_block(latch).unwrap();
    b.seal_block(latch).unwrap();
    b.ins().jump(header, &[]).unwrap();
    b.seal_block(header).unwrap();
    b.switch_to_block(exit).unwrap();
    b.seal_block(exit).unwrap();
    let params_before = (
        b.func().dfg.block_params(header).len(),
        b.func().dfg.block_params(latch).len(),
    );
    let result = b.use_var(x).unwrap();
    b.ins().return_(&[result]).unwrap();
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    // `i` had its header phi already (read there before sealing); `x` adds one at the
    // header (made by the cycle) and one at the latch (operands differ).
    assert_eq!(params_before, (1, 0));
    assert_eq!(f.dfg.block_params(f.layout.blocks()[1]).len(), 2);
    assert_eq!(f.dfg.block_params(f.layout.blocks()[4]).len(), 1);
    for (arg, expected) in [(0, 7), (1, 7), (2, 7), (3, 3), (9, 9)] {
        assert_eq!(eval(&f, &[arg]), [expected], "p = {arg}");
    }
}

/// A closed region: reads at its merge block of variables the region did not define come
/// from its entry (no phi), and a definition inside the region, up to the last one before
/// `close_region`, still gets its phi.
#[test]
fn a_closed_region_is_read_around_unless_it_defines_the_variable() {
    let mut b = builder(&[Type::I32], &[Type::I32, Type::I32, Type::I32]);
    let (x, y, w) = (
        b.declare_var(Type::I32),
        b.declare_var(Type::I32),
        b.declare_var(Type::I32),
    );
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    b.def_var(x, p).unwrap();
    b.def_var(y, p).unwrap();
    let mark = b.region_mark().unwrap();
    // The region's blocks are created after the mark.
    let [left, right, merge] = [(); 3].map(|_| b.create_block());
    // Inside the region from here: `w` in the entry block itself, `x` in one arm as the
    // very last definition before the region is closed.
    let five = b.ins().iconst(Type::I32, 5).unwrap();
    b.def_var(w, five).unwrap();
    b.ins().brif(p, left, &[], right, &[]).unwrap();
    b.switch_to_block(right).unwrap();
    b.seal_block(right).unwrap();
    b.ins().jump(merge, &[]).unwrap();
    b.switch_to_block(left).unwrap();
    b.seal_block(left).unwrap();
    let c = b.ins().iconst(Type::I32, 42).unwrap();
    b.def_var(x, c).unwrap();
    b.ins().jump(merge, &[]).unwrap();
    b.close_region(merge, mark).unwrap();
    b.switch_to_block(merge).unwrap();
    b.seal_block(merge).unwrap();
    let reads = [x, y, w].map(|v| b.use_var(v).unwrap());
    b.ins().return_(&reads).unwrap();
    let f = b.finalize().unwrap();
    verify_function(&f).unwrap();
    assert_eq!(f.dfg.block_params(merge).len(), 1, "only `x` needs a phi");
    assert_eq!(eval(&f, &[1]), [42, 1, 5]);
    assert_eq!(eval(&f, &[0]), [0, 0, 5]);
}

/// Closing a region whose merge block is reached from outside it is a front-end bug the
/// debug build reports.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "reached from outside the region")]
fn closing_a_region_entered_from_outside_is_caught_in_debug_builds() {
    let mut b = builder(&[Type::I32], &[]);
    let [entry, inside, merge] = [(); 3].map(|_| b.create_block());
    b.switch_to_block(entry).unwrap();
    let p = b.append_block_params_for_function_params(entry).unwrap()[0];
    // `entry` branches to `merge` before the mark is taken in `inside`, a block created
    // before the mark too: `merge` has a predecessor outside the region.
    b.ins().brif(p, inside, &[], merge, &[]).unwrap();
    b.switch_to_block(inside).unwrap();
    let mark = b.region_mark().unwrap();
    b.ins().jump(merge, &[]).unwrap();
    let _ = b.close_region(merge, mark);
}

#[test]
fn vector_helpers_build_verified_code() {
    let mut sig = Signature::new(crate::CallConv::SystemV);
    sig.params.push(AbiParam::new(Type::I32));
    sig.returns.push(AbiParam::new(Type::I32X4));
    let mut b = FunctionBuilder::new(FunctionName::Named("v".into()), sig);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let x = b.append_block_params_for_function_params(entry).unwrap()[0];
    let splat = b.ins().splat(Type::I32X4, x).unwrap();
    let c = b.ins().vconst(Type::I32X4, 0x0000_0001_0000_0002).unwrap();
    let lane = b.ins().extractlane(c, 1).unwrap();
    let ins = b.ins().insertlane(splat, lane, 3).unwrap();
    let flags = crate::immediates::MemFlags::new();
    let bytes = b.ins().bitcast(Type::I8X16, flags, ins).unwrap();
    let mut mask = [0u8; 16];
    for (i, m) in mask.iter_mut().enumerate() {
        *m = 15 - i as u8;
    }
    let shuffled = b.ins().shuffle(bytes, bytes, mask).unwrap();
    let back = b.ins().bitcast(Type::I32X4, flags, shuffled).unwrap();
    b.ins().return_(&[back]).unwrap();
    let f = b.finalize().unwrap();
    crate::verify_function(&f).unwrap();
    let text = f.to_string();
    assert!(
        text.contains("const0 = 0x00000000000000000000000100000002"),
        "{text}"
    );
    assert!(text.contains("shuffle v"), "{text}");

    // A lane index out of range is refused when the instruction is built.
    let mut sig = Signature::new(crate::CallConv::SystemV);
    sig.params.push(AbiParam::new(Type::I64X2));
    let mut b = FunctionBuilder::new(FunctionName::Named("bad".into()), sig);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    let v = b.append_block_params_for_function_params(entry).unwrap()[0];
    assert!(b.ins().extractlane(v, 2).is_err());
}

#[test]
fn try_call_with_variables_across_its_edges() {
    let mut b = builder(&[Type::I64], &[Type::I64]);
    let callee_sig = sig(&[Type::I64], &[Type::I64]);
    let sig0 = b.import_signature(callee_sig.clone());
    let sig1 = b.import_signature(callee_sig);
    let callee = b.import_function(ExtFuncData {
        name: FunctionName::Named("g".into()),
        signature: sig1,
        colocated: true,
    });
    let entry = b.create_block();
    let normal = b.create_block();
    let join = b.create_block();
    b.append_block_params_for_function_params(entry).unwrap();
    b.switch_to_block(entry).unwrap();
    let x = b.block_params(entry)[0];
    let var = b.declare_var(Type::I64);
    b.def_var(var, x).unwrap();
    b.append_block_param(normal, Type::I64).unwrap();
    b.append_block_param(join, Type::I64).unwrap();
    // A return value on a handler is refused before anything is built.
    let wrong = [Handler {
        tag: None,
        block: join,
        args: &[TryCallArg::Ret(0)],
    }];
    assert!(b
        .ins()
        .try_call(callee, sig0, &[x], (normal, &[TryCallArg::Ret(0)]), &wrong)
        .is_err());
    let handlers = [Handler {
        tag: Some(3),
        block: join,
        args: &[TryCallArg::Exn(1)],
    }];
    b.ins()
        .try_call(
            callee,
            sig0,
            &[x],
            (normal, &[TryCallArg::Ret(0)]),
            &handlers,
        )
        .unwrap();
    // The normal path redefines the variable and joins the handler: the join's phi gets
    // its argument on the try_call's handler edge from the builder.
    b.switch_to_block(normal).unwrap();
    let r = b.block_params(normal)[0];
    b.def_var(var, r).unwrap();
    b.ins().jump(join, &[r]).unwrap();
    b.switch_to_block(join).unwrap();
    let p = b.block_params(join)[0];
    let v = b.use_var(var).unwrap();
    let s = b.ins().iadd(p, v).unwrap();
    b.ins().return_(&[s]).unwrap();
    b.seal_all_blocks().unwrap();
    let f = b.finish().unwrap();
    verify_function(&f).unwrap();
    let text = f.to_string();
    assert!(
        text.contains("try_call fn0(v0), sig0, block1(ret0), [ tag3: block2(exn1, v0) ]"),
        "{text}"
    );
}
