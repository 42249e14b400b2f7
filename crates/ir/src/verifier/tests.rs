//! One test per error class (message and location), plus valid functions, ordering, source
//! positions, and a corruption smoke test that the verifier never panics.

use super::*;
use crate::entity::{FuncRef, GlobalValue, JumpTable, SigRef, StackSlot};
use crate::function::{AbiParam, FunctionName, Signature, SourceMap};
use crate::immediates::{IntCC, MemFlags};
use crate::instructions::{BlockCall, InstructionData as D};
use crate::pool::ValueList;
use crate::types::Type;
use crate::ValueDef;

/// A function under construction with the raw core API (the builder refuses bad code).
///
/// Blocks enter the layout when they get their first instruction (or at verification), so
/// filling blocks in order keeps the layout compact and instruction numbers in layout order.
struct Raw {
    f: Function,
    blocks: Vec<Block>,
}

impl Raw {
    fn new(params: &[Type], returns: &[Type]) -> Self {
        let sig = Signature {
            params: params.iter().map(|&t| AbiParam::new(t)).collect(),
            returns: returns.iter().map(|&t| AbiParam::new(t)).collect(),
            ..Signature::default()
        };
        Raw {
            f: Function::with_name_signature(FunctionName::Named("f".into()), sig),
            blocks: Vec::new(),
        }
    }

    fn block(&mut self, params: &[Type]) -> (Block, Vec<Value>) {
        let b = self.f.dfg.make_block();
        self.blocks.push(b);
        let vals = params
            .iter()
            .map(|&t| self.f.dfg.append_block_param(b, t))
            .collect();
        (b, vals)
    }

    fn inst(&mut self, b: Block, data: D, ctrl: Type) -> Inst {
        let i = self.f.make_inst(data, ctrl);
        self.place(b);
        self.f.layout.append_inst(i, b);
        i
    }

    fn place(&mut self, b: Block) {
        if !self.f.layout.is_block_inserted(b) {
            self.f.layout.append_block(b);
        }
    }

    fn verify(&mut self) -> Result<(), VerifierErrors> {
        for b in self.blocks.clone() {
            self.place(b);
        }
        verify_function(&self.f)
    }

    fn val(&mut self, b: Block, data: D, ctrl: Type) -> Value {
        let i = self.inst(b, data, ctrl);
        self.f.dfg.first_result(i).unwrap()
    }

    fn iconst(&mut self, b: Block, ty: Type, imm: i64) -> Value {
        self.val(
            b,
            D::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            },
            ty,
        )
    }

    fn bin(&mut self, b: Block, opcode: Opcode, x: Value, y: Value) -> Value {
        let ty = self.f.dfg.value_type(x);
        self.val(
            b,
            D::Binary {
                opcode,
                args: [x, y],
            },
            ty,
        )
    }

    fn call(&mut self, to: Block, args: &[Value]) -> BlockCall {
        BlockCall::new(to, args, &mut self.f.dfg.pool)
    }

    fn jump(&mut self, b: Block, to: Block, args: &[Value]) -> Inst {
        let destination = self.call(to, args);
        self.inst(
            b,
            D::Jump {
                opcode: Opcode::Jump,
                destination,
            },
            Type::INVALID,
        )
    }

    fn brif(&mut self, b: Block, c: Value, t: Block, e: Block) -> Inst {
        let blocks = [self.call(t, &[]), self.call(e, &[])];
        self.inst(
            b,
            D::Brif {
                opcode: Opcode::Brif,
                arg: c,
                blocks,
            },
            Type::INVALID,
        )
    }

    fn ret(&mut self, b: Block, vals: &[Value]) -> Inst {
        let args = self.f.dfg.pool.alloc(vals);
        self.inst(
            b,
            D::MultiAry {
                opcode: Opcode::Return,
                args,
            },
            Type::INVALID,
        )
    }

    fn errors(&mut self) -> Vec<String> {
        match self.verify() {
            Ok(()) => Vec::new(),
            Err(e) => e.iter().map(|e| e.to_string()).collect(),
        }
    }

    /// Exactly one error, containing `needle`; returns it.
    fn one_error(&mut self, needle: &str) -> String {
        let errs = self.errors();
        assert_eq!(errs.len(), 1, "expected one error, got {errs:#?}");
        assert!(
            errs[0].contains(needle),
            "{:?} does not contain {needle:?}",
            errs[0]
        );
        errs[0].clone()
    }
}

/// `f(i32) -> i32`: a counting loop; valid.
fn counting_loop() -> Raw {
    let mut r = Raw::new(&[Type::I32], &[Type::I32]);
    let (entry, p) = r.block(&[Type::I32]);
    let (header, h) = r.block(&[Type::I32]);
    let (body, _) = r.block(&[]);
    let (exit, _) = r.block(&[]);
    let zero = r.iconst(entry, Type::I32, 0);
    r.jump(entry, header, &[zero]);
    let c = r.val(
        header,
        D::IntCompare {
            opcode: Opcode::Icmp,
            cond: IntCC::SignedLessThan,
            args: [h[0], p[0]],
        },
        Type::I32,
    );
    r.brif(header, c, body, exit);
    let one = r.iconst(body, Type::I32, 1);
    let next = r.bin(body, Opcode::Iadd, h[0], one);
    r.jump(body, header, &[next]);
    r.ret(exit, &[h[0]]);
    r
}

#[test]
fn valid_functions_pass() {
    assert_eq!(counting_loop().errors(), Vec::<String>::new());
    // A function with no blocks is a declaration and passes too.
    assert!(verify_function(&Function::default()).is_ok());
}

#[test]
fn queued_edits_are_one_error() {
    let mut r = counting_loop();
    r.verify().unwrap();
    let entry = r.f.layout.entry_block().unwrap();
    let i = r.f.make_inst(
        D::NullAry {
            opcode: Opcode::Nop,
        },
        Type::INVALID,
    );
    r.f.layout.append_inst(i, entry); // entry is not the last block: queued
    let e = r.one_error("queued insertions");
    assert!(e.starts_with("%f: "), "{e}");
    r.f.compact();
    assert!(r
        .errors()
        .iter()
        .any(|e| e.contains("terminator `jump` before the end of block0")));
}

/// A removed instruction (a tombstone, as dead-code elimination leaves) is skipped like any
/// layout walk skips it; its result may not be used.
#[test]
fn tombstones_verify_unless_their_results_are_used() {
    let mut r = Raw::new(&[], &[Type::I32]);
    let (b, _) = r.block(&[]);
    let x = r.iconst(b, Type::I32, 1);
    let dead = r.iconst(b, Type::I32, 2);
    r.ret(b, &[x]);
    let ValueDef::Result(dead_inst, _) = r.f.dfg.value_def(dead) else {
        unreachable!()
    };
    r.f.layout.remove_inst(dead_inst);
    assert!(!r.f.layout.is_compact());
    assert_eq!(r.errors(), Vec::<String>::new());
    let ValueDef::Result(x_inst, _) = r.f.dfg.value_def(x) else {
        unreachable!()
    };
    r.f.layout.remove_inst(x_inst);
    r.one_error("v0");
}

#[test]
fn dangling_value_reference() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    let x = r.iconst(b, Type::I32, 1);
    let add = r.inst(
        b,
        D::Binary {
            opcode: Opcode::Iadd,
            args: [x, Value::from_u32(99)],
        },
        Type::I32,
    );
    r.ret(b, &[]);
    let e = r.one_error("uses v99, which does not exist");
    assert!(e.starts_with(&format!("%f, block0, {add} (iadd): ")), "{e}");
}

#[test]
fn undefined_value_use() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    r.f.dfg.ensure_value(Value::from_u32(5));
    r.inst(
        b,
        D::Unary {
            opcode: Opcode::Ineg,
            arg: Value::from_u32(5),
        },
        Type::I32,
    );
    r.ret(b, &[]);
    r.one_error("uses v5, which is never defined");
}

#[test]
fn branch_to_missing_or_unplaced_block() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    r.jump(b, Block::from_u32(7), &[]);
    r.one_error("branch to block7, which does not exist");

    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    let floating = r.f.dfg.make_block();
    r.jump(b, floating, &[]);
    r.one_error("branch to block1, which is not in the layout");
}

#[test]
fn dangling_preamble_references() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    let idx = r.iconst(b, Type::I32, 0);
    r.inst(
        b,
        D::StackLoad {
            opcode: Opcode::StackLoad,
            stack_slot: StackSlot::from_u32(3),
            offset: 0,
        },
        Type::I32,
    );
    r.inst(
        b,
        D::UnaryGlobalValue {
            opcode: Opcode::GlobalValue,
            global_value: GlobalValue::from_u32(1),
        },
        Type::I64,
    );
    r.inst(
        b,
        D::Call {
            opcode: Opcode::Call,
            func_ref: FuncRef::from_u32(2),
            args: ValueList::EMPTY,
        },
        Type::INVALID,
    );
    r.inst(
        b,
        D::CallIndirect {
            opcode: Opcode::CallIndirect,
            sig_ref: SigRef::from_u32(4),
            args: ValueList::EMPTY,
        },
        Type::INVALID,
    );
    r.inst(
        b,
        D::BranchTable {
            opcode: Opcode::BrTable,
            arg: idx,
            table: JumpTable::from_u32(0),
        },
        Type::INVALID,
    );
    let errs = r.errors();
    let expected = [
        "ss3 does not exist",
        "gv1 does not exist",
        "fn2 does not exist",
        "sig4 does not exist",
        "jt0 does not exist",
    ];
    assert_eq!(errs.len(), expected.len(), "{errs:#?}");
    for (e, want) in errs.iter().zip(expected) {
        assert!(e.contains(want), "{e} / {want}");
    }

    // Preamble entities are checked too.
    let mut r = counting_loop();
    r.f.ext_funcs.push(crate::function::ExtFuncData {
        name: FunctionName::Named("g".into()),
        signature: SigRef::from_u32(9),
        colocated: false,
    });
    r.one_error("fn0 uses signature sig9, which does not exist");
}

#[test]
fn terminator_errors() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    r.iconst(b, Type::I32, 1);
    let e = r.one_error("block0 does not end with a terminator (its last instruction is `iconst`)");
    assert!(e.contains("inst0 (iconst)"), "{e}");

    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    r.ret(b, &[]);
    r.ret(b, &[]);
    let e = r.one_error("terminator `return` before the end of block0");
    assert!(e.contains("inst0 (return)"), "{e}");

    let mut r = Raw::new(&[], &[]);
    r.block(&[]);
    r.one_error("block0 is empty; a block must end with a terminator");
}

#[test]
fn entry_params_against_signature() {
    let mut r = Raw::new(&[Type::I32, Type::I64], &[]);
    let (b, _) = r.block(&[Type::I32]);
    r.ret(b, &[]);
    r.one_error("entry block block0 has 1 parameter(s) but the signature has 2");

    let mut r = Raw::new(&[Type::I64], &[]);
    let (b, _) = r.block(&[Type::I32]);
    r.ret(b, &[]);
    r.one_error("entry block parameter 0 (v0) has type i32 but the signature says i64");
}

#[test]
fn use_not_dominated_by_definition() {
    // block0: brif v0, block1, block2; block1: v1 = iconst; jump block2; block2: use v1.
    let mut r = Raw::new(&[Type::I32], &[Type::I32]);
    let (b0, p) = r.block(&[Type::I32]);
    let (b1, _) = r.block(&[]);
    let (b2, _) = r.block(&[]);
    r.brif(b0, p[0], b1, b2);
    let v = r.iconst(b1, Type::I32, 1);
    r.jump(b1, b2, &[]);
    let ret = r.ret(b2, &[v]);
    let e = r.one_error("uses v1, but its definition (inst1 in block1) does not dominate this use");
    assert!(e.starts_with(&format!("%f, block2, {ret} (return)")), "{e}");
}

#[test]
fn use_before_definition_in_block_and_own_result() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    // inst0 uses the result of inst1, which comes later.
    let later = Value::from_u32(1);
    r.f.dfg.ensure_value(Value::from_u32(0));
    let i0 = r.f.dfg.make_inst(D::Unary {
        opcode: Opcode::Ineg,
        arg: later,
    });
    r.f.dfg.attach_result(i0, Value::from_u32(0), Type::I32);
    r.place(b);
    r.f.layout.append_inst(i0, b);
    r.iconst(b, Type::I32, 3);
    r.ret(b, &[]);
    r.one_error("uses v1, but its definition (inst1 in block0) does not dominate this use");

    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    r.f.dfg.ensure_value(Value::from_u32(0));
    let i0 = r.f.dfg.make_inst(D::Unary {
        opcode: Opcode::Ineg,
        arg: Value::from_u32(0),
    });
    r.f.dfg.attach_result(i0, Value::from_u32(0), Type::I32);
    r.place(b);
    r.f.layout.append_inst(i0, b);
    r.ret(b, &[]);
    r.one_error("uses its own result v0");
}

#[test]
fn param_of_non_dominating_block() {
    let mut r = Raw::new(&[Type::I32], &[Type::I32]);
    let (b0, p) = r.block(&[Type::I32]);
    let (b1, q) = r.block(&[Type::I32]);
    let (b2, _) = r.block(&[]);
    let blocks = [r.call(b1, &[p[0]]), r.call(b2, &[])];
    r.inst(
        b0,
        D::Brif {
            opcode: Opcode::Brif,
            arg: p[0],
            blocks,
        },
        Type::INVALID,
    );
    r.jump(b1, b2, &[]);
    r.ret(b2, &[q[0]]);
    r.one_error("uses v1, a parameter of block1, but block1 does not dominate block2");
}

#[test]
fn unreachable_blocks_skip_dominance() {
    let mut r = Raw::new(&[], &[Type::I32]);
    let (b0, _) = r.block(&[]);
    let (b1, _) = r.block(&[]);
    let (b2, _) = r.block(&[]);
    r.jump(b0, b2, &[]);
    // block1 is unreachable and uses a value of block2, which does not dominate it.
    let v = r.iconst(b2, Type::I32, 4);
    r.ret(b2, &[v]);
    r.ret(b1, &[v]);
    assert_eq!(r.errors(), Vec::<String>::new());
}

#[test]
fn operand_type_errors() {
    type Case = (Box<dyn Fn(&mut Raw, Block)>, &'static str);
    let cases: Vec<Case> = vec![
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I32, 1);
                let y = r.iconst(b, Type::I64, 1);
                r.bin(b, Opcode::Iadd, x, y);
            }),
            "operand 1 (v1) of `iadd` has type i64; it needs i32",
        ),
        (
            Box::new(|r, b| {
                let x = r.val(
                    b,
                    D::UnaryIeee32 {
                        opcode: Opcode::F32const,
                        imm: 0,
                    },
                    Type::INVALID,
                );
                r.bin(b, Opcode::Iadd, x, x);
            }),
            "`iadd` cannot have controlling type f32; it needs an integer or integer vector type",
        ),
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I32, 1);
                let y = r.val(
                    b,
                    D::UnaryIeee32 {
                        opcode: Opcode::F32const,
                        imm: 0,
                    },
                    Type::INVALID,
                );
                r.bin(b, Opcode::Ishl, x, y);
            }),
            "operand 1 (v1) of `ishl` has type f32; it needs an integer type",
        ),
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I64, 1);
                r.val(
                    b,
                    D::Unary {
                        opcode: Opcode::Uextend,
                        arg: x,
                    },
                    Type::I32,
                );
            }),
            "operand 0 (v0) of `uextend` has type i64; it needs an integer type narrower than i32",
        ),
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I32, 1);
                r.val(
                    b,
                    D::Unary {
                        opcode: Opcode::Ireduce,
                        arg: x,
                    },
                    Type::I32,
                );
            }),
            "operand 0 (v0) of `ireduce` has type i32; it needs an integer type wider than i32",
        ),
        (
            Box::new(|r, b| {
                let x = r.val(
                    b,
                    D::UnaryIeee64 {
                        opcode: Opcode::F64const,
                        imm: 0,
                    },
                    Type::INVALID,
                );
                r.val(
                    b,
                    D::Unary {
                        opcode: Opcode::FcvtFromSint,
                        arg: x,
                    },
                    Type::F64,
                );
            }),
            "operand 0 (v0) of `fcvt_from_sint` has type f64; it needs an integer type",
        ),
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I32, 1);
                r.val(
                    b,
                    D::Unary {
                        opcode: Opcode::FcvtToSint,
                        arg: x,
                    },
                    Type::I32,
                );
            }),
            "operand 0 (v0) of `fcvt_to_sint` has type i32; it needs a float type",
        ),
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I32, 1);
                let data = D::LoadNoOffset {
                    opcode: Opcode::Bitcast,
                    flags: MemFlags::new(),
                    arg: x,
                };
                r.val(b, data, Type::F64);
            }),
            "operand 0 (v0) of `bitcast` has type i32; it needs a 64-bit type",
        ),
        (
            Box::new(|r, b| {
                let x = r.iconst(b, Type::I16, 1);
                let data = D::Load {
                    opcode: Opcode::Load,
                    flags: MemFlags::new(),
                    arg: x,
                    offset: 0,
                };
                r.val(b, data, Type::I32);
            }),
            "operand 0 (v0) of `load` has type i16; it needs an address type (i32 or i64)",
        ),
        (
            Box::new(|r, b| {
                let c = r.val(
                    b,
                    D::UnaryIeee32 {
                        opcode: Opcode::F32const,
                        imm: 0,
                    },
                    Type::INVALID,
                );
                let x = r.iconst(b, Type::I32, 1);
                r.val(
                    b,
                    D::Ternary {
                        opcode: Opcode::Select,
                        args: [c, x, x],
                    },
                    Type::I32,
                );
            }),
            "operand 0 (v0) of `select` has type f32; it needs an integer type",
        ),
        (
            Box::new(|r, b| {
                r.val(
                    b,
                    D::UnaryImm {
                        opcode: Opcode::Iconst,
                        imm: 0,
                    },
                    Type::I128,
                );
            }),
            "`iconst` cannot have controlling type i128; it needs an integer type from i8 to i64",
        ),
    ];
    for (build, want) in cases {
        let mut r = Raw::new(&[], &[]);
        let (b, _) = r.block(&[]);
        build(&mut r, b);
        r.ret(b, &[]);
        r.one_error(want);
    }
}

#[test]
fn result_type_errors() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    let x = r.iconst(b, Type::I32, 1);
    // An icmp whose result was given type i32 instead of i8.
    let i = r.f.dfg.make_inst(D::IntCompare {
        opcode: Opcode::Icmp,
        cond: IntCC::Equal,
        args: [x, x],
    });
    r.f.dfg.append_result(i, Type::I32);
    r.place(b);
    r.f.layout.append_inst(i, b);
    r.ret(b, &[]);
    r.one_error("`icmp` with controlling type i32 produces (i8), but the results are (i32)");
}

#[test]
fn call_and_return_signatures() {
    let mut r = Raw::new(&[], &[Type::I64]);
    let callee = r.f.signatures.push(Signature {
        params: vec![AbiParam::new(Type::I32)],
        returns: vec![AbiParam::new(Type::I32)],
        ..Signature::default()
    });
    let fref = r.f.ext_funcs.push(crate::function::ExtFuncData {
        name: FunctionName::Named("g".into()),
        signature: callee,
        colocated: true,
    });
    let (b, _) = r.block(&[]);
    let x = r.iconst(b, Type::I64, 1);
    let args = r.f.dfg.pool.alloc(&[x, x]);
    r.inst(
        b,
        D::Call {
            opcode: Opcode::Call,
            func_ref: fref,
            args,
        },
        Type::INVALID,
    );
    let args = r.f.dfg.pool.alloc(&[x]);
    r.inst(
        b,
        D::CallIndirect {
            opcode: Opcode::CallIndirect,
            sig_ref: callee,
            args,
        },
        Type::INVALID,
    );
    let y = r.iconst(b, Type::I32, 1);
    r.ret(b, &[y]);
    let errs = r.errors();
    assert_eq!(errs.len(), 3, "{errs:#?}");
    assert!(errs[0].contains("`call` passes (i64, i64) but the signature takes (i32)"));
    assert!(errs[1].contains("`call_indirect` passes () but the signature takes (i32)"));
    assert!(errs[2].contains("`return` passes (i32) but the function returns (i64)"));
}

#[test]
fn branch_arguments_against_parameters() {
    let mut r = Raw::new(&[], &[]);
    let (b0, _) = r.block(&[]);
    let (b1, _) = r.block(&[Type::I32, Type::I64]);
    let x = r.iconst(b0, Type::I32, 1);
    r.jump(b0, b1, &[x]);
    r.ret(b1, &[]);
    r.one_error("branch to block1 passes 1 argument(s), but block1 has 2 parameter(s)");

    let mut r = Raw::new(&[], &[]);
    let (b0, _) = r.block(&[]);
    let (b1, _) = r.block(&[Type::I64]);
    let x = r.iconst(b0, Type::I32, 1);
    r.jump(b0, b1, &[x]);
    r.ret(b1, &[]);
    r.one_error("branch to block1 passes v1 of type i32 as parameter 0 (v0), which has type i64");
}

#[test]
fn br_table_index_must_be_i32() {
    let mut r = Raw::new(&[], &[]);
    let (b0, _) = r.block(&[]);
    let (b1, _) = r.block(&[]);
    let idx = r.iconst(b0, Type::I64, 0);
    let default = r.call(b1, &[]);
    let table = r.f.jump_tables.push(crate::function::JumpTableData {
        default,
        entries: vec![default],
    });
    r.inst(
        b0,
        D::BranchTable {
            opcode: Opcode::BrTable,
            arg: idx,
            table,
        },
        Type::INVALID,
    );
    r.ret(b1, &[]);
    r.one_error("operand 0 (v0) of `br_table` has type i64; it needs i32");
}

#[test]
fn value_defined_twice() {
    let mut r = Raw::new(&[], &[]);
    let (b, _) = r.block(&[]);
    let x = r.iconst(b, Type::I32, 1);
    // A second instruction claims the same value as its result.
    let i = r.f.dfg.make_inst(D::UnaryImm {
        opcode: Opcode::Iconst,
        imm: 2,
    });
    r.f.dfg.attach_result(i, x, Type::I32);
    r.place(b);
    r.f.layout.append_inst(i, b);
    r.ret(b, &[]);
    let errs = r.errors();
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].contains("v0 is defined more than once (also as result 0 of inst1)"),
        "{errs:?}"
    );
    assert!(errs[0].contains("inst0 (iconst)"), "{errs:?}");
}

#[test]
fn alias_chains_must_resolve() {
    let mut r = counting_loop();
    let a = Value::from_u32(40);
    let b = Value::from_u32(41);
    r.f.dfg.ensure_value(b);
    r.f.dfg.make_alias_at(a, b);
    r.f.dfg.values[b].def = crate::dfg::ValueDef::Alias(a); // the API refuses cycles

    let errs = r.errors();
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs
        .iter()
        .all(|e| e.contains("alias chain") && e.contains("cyclic")));
}

#[test]
fn errors_are_all_reported_in_order_with_source_positions() {
    let mut r = Raw::new(&[], &[]);
    let (b0, _) = r.block(&[]);
    let (b1, _) = r.block(&[]);
    let x = r.iconst(b0, Type::I32, 1);
    let y = r.iconst(b0, Type::I64, 1);
    let add = r.bin(b0, Opcode::Iadd, x, y);
    r.jump(b0, b1, &[]);
    r.iconst(b1, Type::I32, 0); // no terminator
    let _ = add;
    let mut sm = SourceMap {
        function: crate::function::TextPos { line: 1, col: 1 },
        ..SourceMap::default()
    };
    sm.blocks[b0] = crate::function::TextPos { line: 2, col: 1 };
    sm.blocks[b1] = crate::function::TextPos { line: 7, col: 1 };
    for (n, line) in [(0u32, 3u32), (1, 4), (2, 5), (3, 6), (4, 8)] {
        sm.insts[Inst::from_u32(n)] = crate::function::TextPos { line, col: 5 };
    }
    r.f.source_map = Some(Box::new(sm));
    let errs = r.verify().unwrap_err();
    let text = errs.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        lines[0],
        "5:5: %f, block0, inst2 (iadd): operand 1 (v1) of `iadd` has type i64; it needs i32"
    );
    assert_eq!(
        lines[1],
        "8:5: %f, block1, inst4 (iconst): block1 does not end with a terminator (its last instruction is `iconst`)"
    );
}

/// Corrupt a valid function in many small ways; the verifier must answer, never panic.
#[test]
fn corrupted_functions_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..500 {
        let mut r = counting_loop();
        for _ in 0..(next() % 4 + 1) {
            let n_insts = r.f.dfg.num_insts() as u64;
            let inst = Inst::from_u32((next() % n_insts) as u32);
            let mut data = *r.f.dfg.inst(inst);
            let small = (next() % 12) as u32;
            match next() % 5 {
                0 => {
                    if let Some(a) = data.fixed_args_mut().first_mut() {
                        *a = Value::from_u32(small);
                    }
                }
                1 => {
                    for d in data.branch_destinations_mut() {
                        d.block = Block::from_u32(small % 6);
                    }
                }
                2 => {
                    let v = Value::from_u32(small % 8);
                    let to = Value::from_u32((small + 3) % 9);
                    if r.f.dfg.value_is_valid(v) && r.f.dfg.value_is_valid(to) {
                        r.f.dfg.make_alias_at(v, to);
                    }
                }
                3 => {
                    let b = Block::from_u32(small % 4);
                    if r.f.dfg.block_is_valid(b) && !r.f.dfg.block_params(b).is_empty() {
                        r.f.dfg.remove_block_param(b, 0);
                    }
                }
                _ => {
                    data = D::BranchTable {
                        opcode: Opcode::BrTable,
                        arg: Value::from_u32(small),
                        table: JumpTable::from_u32(small % 2),
                    };
                }
            }
            *r.f.dfg.inst_mut(inst) = data;
        }
        let _ = r.verify();
    }
}

#[test]
fn a_branch_to_the_entry_block_is_rejected() {
    // The entry block as a loop header: its parameter would be both the function's
    // argument and the back edge's value, which no later stage supports.
    let mut r = Raw::new(&[Type::I32], &[]);
    let (entry, p) = r.block(&[Type::I32]);
    r.jump(entry, entry, &[p[0]]);
    let e = r.one_error("the entry block cannot be a branch target");
    assert!(e.contains("branch to the entry block block0"), "{e}");
}

#[test]
fn too_many_block_parameters_are_one_error_naming_the_limit() {
    let mut r = Raw::new(&[], &[]);
    let (entry, _) = r.block(&[]);
    let (wide, _) = r.block(&[]);
    for _ in 0..crate::dfg::MAX_VALUES_PER_DEF + 10 {
        r.f.dfg.append_block_param(wide, Type::I32);
    }
    // `wide` is unreachable, so its parameter count is the only thing wrong.
    r.ret(entry, &[]);
    r.ret(wide, &[]);
    let e = r.one_error("block1 has 65546 parameters; at most 65536 are supported");
    assert!(!e.contains("claims to be"), "{e}");
}
