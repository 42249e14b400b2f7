//! Unit tests of the Lower driver and VCode: structure (final order, split critical edges,
//! predecessor lists), merging (compares into branches, constants into immediates), dead
//! pure values, and typed errors for unsupported input.

use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::x64::features::CpuFeatures;
use kestrel_codegen::isa::x64::inst::Inst;
use kestrel_codegen::isa::x64::{X64Backend, X64Isa};
use kestrel_codegen::isa::{IsaFeatures, TargetIsa};
use kestrel_codegen::machinst::blockorder::BlockLoweringOrder;
use kestrel_codegen::machinst::lower::{lower, Lower, LowerBackend, Results};
use kestrel_codegen::machinst::vcode::VCode;
use kestrel_codegen::machinst::{BlockIndex, CodegenError, MachInst};
use kestrel_codegen::settings::Flags;
use kestrel_ir::{Opcode, Type, Value};
use kestrel_regalloc::{Block, Function as _, RegClass};

fn parse(text: &str) -> kestrel_ir::Function {
    let mut funcs = kestrel_ir::parse_functions(text, "test").expect("parses");
    funcs.remove(0)
}

fn vcode(text: &str) -> VCode<Inst> {
    let f = parse(text);
    let order = BlockLoweringOrder::new(&f, &mut Chaos::disabled());
    lower(&X64Backend::default(), &f, &order).expect("lowers")
}

fn vcode_text(text: &str) -> String {
    vcode(text).pretty(None)
}

/// Lower `text` (not verified) with `backend`: what the driver makes of the ISA's answers.
fn lower_with(backend: &impl LowerBackend<MInst = Inst>, text: &str) -> Result<(), CodegenError> {
    let f = parse(text);
    let order = BlockLoweringOrder::new(&f, &mut Chaos::disabled());
    lower(backend, &f, &order).map(|_| ())
}

/// The `Unsupported` error's opcode, type and text (panics on anything else).
fn unsupported(result: Result<(), CodegenError>) -> (Option<Opcode>, Option<Type>, String) {
    match result {
        Err(CodegenError::Unsupported { opcode, ty, what }) => (opcode, ty, what),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// Every block ends in a terminator, successor and predecessor lists mirror each other, and
/// no edge is critical.
fn check_shape(code: &VCode<Inst>) {
    for b in 0..code.num_blocks() {
        let b = Block(b as u32);
        let range = code.block_insns(b);
        assert!(!range.is_empty());
        assert!(code.insts()[range.last().index()].is_term());
        for &s in code.block_succs(b) {
            assert!(
                code.block_preds(s).contains(&b),
                "{b:?} -> {s:?} not mirrored"
            );
            assert!(
                code.block_succs(b).len() == 1 || code.block_preds(s).len() == 1,
                "critical edge {b:?} -> {s:?}"
            );
        }
    }
}

#[test]
fn compare_merges_into_branch_and_constant_into_immediate() {
    let text = vcode_text(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             v1 = iconst.i32 10
             v2 = icmp slt v0, v1
             brif v2, block1, block2
         block1:
             return v0
         block2:
             v3 = iconst.i32 7
             v4 = iadd v0, v3
             return v4
         }",
    );
    assert!(text.contains("br cmp32 v0, 10 ?L"), "{text}");
    assert!(
        !text.contains("set "),
        "the compare must not be materialized:\n{text}"
    );
    assert!(!text.contains("mov 0x"), "constants must fold:\n{text}");
    // `v0` is used elsewhere too, so the sum goes to a third register (`lea`), the constant
    // folded into its displacement.
    assert!(text.contains("lea.32 [v0+7]"), "{text}");
}

#[test]
fn adding_a_constant_is_an_add_when_the_operand_dies_and_a_lea_when_it_lives_on() {
    let text = vcode_text(
        "function %f(i64) -> i64 {
         block0(v0: i64):
             v1 = iconst.i64 3
             v2 = imul v0, v0
             v3 = iadd v2, v1
             v4 = iconst.i64 -5
             v5 = isub v3, v4
             v6 = imul v5, v3
             return v6
         }",
    );
    // (VCode names its own vregs.) `v2` is used only by the add: `add` overwrites it.
    let line = |pat: &str| text.lines().any(|l| l.contains(pat));
    assert!(
        text.lines()
            .any(|l| l.contains("= add64 ") && l.ends_with(", 3")),
        "{text}"
    );
    // `v3` is used again after the subtraction: `lea` keeps it, `- -5` as `+5`.
    assert!(line("= lea.64 [") && line("+5]"), "{text}");
    assert!(!line("sub64"), "{text}");
}

#[test]
fn stored_constants_are_immediates_truncated_to_the_stored_width() {
    let text = vcode_text(
        "function %f(i64) {
         block0(v0: i64):
             v1 = iconst.i32 300
             istore8 v1, v0
             istore16 v1, v0+2
             v2 = iconst.i64 -5
             store v2, v0+8
             v3 = iconst.i64 0x1_0000_0000
             store v3, v0+16
             v4 = f64const 0x1.0
             store v4, v0+24
             return
         }",
    );
    let line = |pat: &str| text.lines().any(|l| l.contains(pat));
    // (VCode names its own vregs. The printed immediate is the constant; emission keeps
    // the stored width's low bits.)
    assert!(line("store.8 300, [v") && line("+0]"), "{text}");
    assert!(line("store.16 300, [v") && line("+2]"), "{text}");
    assert!(line("store.64 -5, [v") && line("+8]"), "{text}");
    // Beyond a sign-extended 32-bit immediate, and for floats, the value goes via a register.
    assert!(line("mov 0x100000000") && line("store.Int(S64) "), "{text}");
    assert!(line("store.Float(F64) "), "{text}");
}

#[test]
fn masking_to_a_byte_or_word_is_a_zero_extending_move() {
    let text = vcode_text(
        "function %f(i64, i32) -> i64 {
         block0(v0: i64, v1: i32):
             v2 = iconst.i64 255
             v3 = band v0, v2
             v4 = iconst.i32 0xffff
             v5 = band v4, v1
             v6 = uextend.i64 v5
             v7 = iconst.i64 0xfff
             v8 = band v0, v7
             v9 = iadd v3, v6
             v10 = iadd v9, v8
             return v10
         }",
    );
    let line = |pat: &str| text.lines().any(|l| l.contains(pat));
    assert!(line("= movzx.BL v") && line("= movzx.WL v"), "{text}");
    // Any other mask stays an `and` with an immediate.
    assert!(line("= and64 v") && line(", 4095"), "{text}");
    assert!(!line("mov 0xff"), "the masks are not materialized:\n{text}");
}

#[test]
fn zero_extending_a_value_already_zero_extended_is_free() {
    let text = vcode_text(
        "function %f(i64, i32) -> i64 {
         block0(v0: i64, v1: i32):
             v2 = load.i8 v0
             v3 = uextend.i32 v2
             v4 = uextend.i64 v3
             v5 = iadd v1, v1
             v6 = uextend.i64 v5
             v7 = iadd v4, v6
             v8 = ireduce.i32 v0
             v9 = uextend.i64 v8
             v10 = iadd v7, v9
             return v10
         }",
    );
    // One zero extension: of `v8`, whose upper bits `ireduce` leaves as they were.
    assert_eq!(text.matches("movzx").count(), 1, "{text}");
    assert!(text.contains("movzx.LQ"), "{text}");
}

#[test]
fn extending_a_single_use_i32_load_is_one_extending_load() {
    let text = vcode_text(
        "function %f(i64) -> i64 {
         block0(v0: i64):
             v1 = load.i32 v0+4
             v2 = sextend.i64 v1
             v3 = load.i32 v0+8
             v4 = uextend.i64 v3
             v5 = iadd v2, v4
             v6 = load.i32 v0+12
             v7 = sextend.i64 v6
             v8 = iadd.i32 v6, v6
             v9 = sextend.i64 v8
             v10 = iadd v7, v9
             v11 = iadd v5, v10
             return v11
         }",
    );
    let line = |a: &str, b: &str| text.lines().any(|l| l.contains(a) && l.ends_with(b));
    // (VCode names its own vregs.)
    assert!(line("= load.Sext(LQ) [v", "+4]"), "{text}");
    assert!(line("= load.Int(S32) [v", "+8]"), "{text}");
    // `v6` has two uses: loaded once, extended apart.
    assert!(line("= load.Int(S32) [v", "+12]"), "{text}");
    assert!(line("= movsx.LQ v", ""), "{text}");
    assert_eq!(text.matches("load.").count(), 3, "{text}");
}

/// A min or max reads its second operand twice (compare, then select): a load there is
/// loaded once into a register, not folded into the compare and loaded again, and its
/// address (folded into the load) is not counted as used twice (debug builds assert that).
#[test]
fn min_and_max_load_their_second_operand_once() {
    for op in ["smin", "smax", "umin", "umax"] {
        for ty in ["i32", "i64"] {
            let text = vcode_text(&format!(
                "function %f(i64, {ty}, i32) -> {ty} {{
                 block0(v0: i64, v1: {ty}, v2: i32):
                     v3 = uextend.i64 v2
                     v4 = iadd v0, v3
                     v5 = load.{ty} v4
                     v6 = {op} v1, v5
                     return v6
                 }}"
            ));
            assert_eq!(text.matches("load.").count(), 1, "{op}.{ty}: {text}");
            assert!(
                !text.contains("add64"),
                "{op}.{ty}: the address in a register: {text}"
            );
            assert!(text.contains("cmov cmp"), "{op}.{ty}: {text}");
        }
    }
}

#[test]
fn compare_with_two_uses_is_materialized() {
    let text = vcode_text(
        "function %f(i32) -> i8 {
         block0(v0: i32):
             v1 = iconst.i32 10
             v2 = icmp slt v0, v1
             brif v2, block1, block2
         block1:
             return v2
         block2:
             return v2
         }",
    );
    assert!(text.contains("set cmp32"), "{text}");
    assert!(text.contains("test8"), "{text}");
}

#[test]
fn dead_pure_values_produce_no_code() {
    let code = vcode(
        "function %f(i64) -> i64 {
         block0(v0: i64):
             v1 = imul v0, v0
             v2 = iconst.i64 99
             return v0
         }",
    );
    // args, ret.
    assert_eq!(code.insts().len(), 2, "{}", code.pretty(None));
}

#[test]
fn critical_edges_become_jump_blocks_with_the_arguments() {
    let code = vcode(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             brif v0, block1(v0), block2
         block1(v1: i32):
             return v1
         block2:
             brif v0, block1(v0), block3
         block3:
             return v0
         }",
    );
    check_shape(&code);
    let text = code.pretty(None);
    // block1 has two predecessors and both sources branch two ways: each edge gets a block
    // whose jump carries the argument.
    assert_eq!(text.matches("jmp block").count(), 2, "{text}");
}

#[test]
fn loops_keep_final_order_and_block_params() {
    let code = vcode(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             v1 = iconst.i32 0
             jump block1(v0, v1)
         block1(v2: i32, v3: i32):
             v4 = iadd v3, v2
             v5 = iconst.i32 1
             v6 = isub v2, v5
             brif v6, block1(v6, v4), block2
         block2:
             return v4
         }",
    );
    check_shape(&code);
    assert_eq!(code.block_params(Block(1)).len(), 2);
    assert!(code.block_params(Block(0)).is_empty());
}

#[test]
fn unsupported_instruction_is_a_typed_error() {
    // Every opcode has a lowering; what remains unsupported is an instruction the target CPU
    // cannot do: a 128-bit atomic without CMPXCHG16B.
    let f = parse(
        "function %f(i64, i128) -> i128 {
         block0(v0: i64, v1: i128):
             v2 = atomic_rmw.i128 add v0, v1
             return v2
         }",
    );
    let isa = X64Isa {
        features: CpuFeatures::none(),
    };
    match isa.compile_function(&f, &Flags::default()) {
        Err(CodegenError::Unsupported {
            opcode: Some(Opcode::AtomicRmw),
            ty: Some(Type::I128),
            what,
        }) => assert!(
            what.contains("cmpxchg16b") || what.contains("CMPXCHG16B"),
            "{what}"
        ),
        other => panic!("expected Unsupported(atomic_rmw.i128), got {other:?}"),
    }
}

#[test]
fn unsupported_calling_convention_is_a_typed_error() {
    let f = parse(
        "function %f(i64) -> i64 probestack {
         block0(v0: i64):
             return v0
         }",
    );
    let err = X64Isa::default()
        .compile_function(&f, &Flags::default())
        .unwrap_err();
    assert!(matches!(err, CodegenError::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("probestack"), "{err}");
}

#[test]
fn i128_met_by_a_scalar_rule_is_a_typed_error() {
    // Every instruction the verifier accepts that touches an i128 has a pair lowering, so
    // these functions are ones it rejects, lowered directly: each operand reaches a rule
    // written for the other shape, which must be an error naming the instruction, never
    // code that reads half of a pair.
    let cases = [
        // `put_in_reg` (`bitcast`'s same-class rule).
        (
            "function %f(i128) -> f64 {
             block0(v0: i128):
                 v1 = bitcast.f64 v0
                 return v1
             }",
            Opcode::Bitcast,
            Some(Type::F64),
            "i128 value v0 used as one register",
        ),
        // A Rust helper: the address of a load.
        (
            "function %f(i128) -> i64 {
             block0(v0: i128):
                 v1 = load.i64 notrap v0
                 return v1
             }",
            Opcode::Load,
            Some(Type::I64),
            "i128 value v0 used as one register",
        ),
        // A branch.
        (
            "function %f(i128) {
             block0(v0: i128):
                 br_table v0, block1, [block1]
             block1:
                 return
             }",
            Opcode::BrTable,
            Some(Type::I128),
            "i128 value v0 used as one register",
        ),
        // The other way round: a pair rule meeting a one-register value.
        (
            "function %f(i64) -> i128 {
             block0(v0: i64):
                 v1 = iadd.i128 v0, v0
                 return v1
             }",
            Opcode::Iadd,
            Some(Type::I128),
            "i64 value v0 used as a register pair",
        ),
    ];
    for (text, op, ty, why) in cases {
        let (opcode, t, what) = unsupported(lower_with(&X64Backend::default(), text));
        assert_eq!((opcode, t), (Some(op), ty), "{what}");
        assert!(what.contains(why), "{what}");
    }
}

/// x86-64 with two ways to misbehave, for what the driver makes of an ISA's answers:
/// `returns`, every instruction with results returns fresh registers of these classes (and
/// emits nothing; the others lower as on x86-64); `no_i16`, no register holds an `i16`.
struct Tweaked {
    returns: Option<&'static [RegClass]>,
    no_i16: bool,
}

/// Results in fresh registers of these classes.
fn returning(classes: &'static [RegClass]) -> Tweaked {
    Tweaked {
        returns: Some(classes),
        no_i16: false,
    }
}

/// No register holds an `i16`.
const NO_I16: Tweaked = Tweaked {
    returns: None,
    no_i16: true,
};

impl LowerBackend for Tweaked {
    type MInst = Inst;

    fn lower_inst(
        &self,
        ctx: &mut Lower<'_, Inst>,
        inst: kestrel_ir::Inst,
    ) -> Result<bool, CodegenError> {
        match self.returns {
            Some(classes) if !ctx.f.dfg.inst_results(inst).is_empty() => {
                let regs: Results = classes.iter().map(|&c| ctx.alloc_vreg(c)).collect();
                ctx.set_outputs(&regs);
                Ok(true)
            }
            _ => X64Backend::default().lower_inst(ctx, inst),
        }
    }

    fn lower_branch(
        &self,
        ctx: &mut Lower<'_, Inst>,
        inst: kestrel_ir::Inst,
        targets: &[BlockIndex],
    ) -> Result<Option<()>, CodegenError> {
        X64Backend::default().lower_branch(ctx, inst, targets)
    }

    fn gen_args(&self, ctx: &mut Lower<'_, Inst>, params: &[Value]) -> Result<(), CodegenError> {
        X64Backend::default().gen_args(ctx, params)
    }

    fn value_regs(&self, ty: Type) -> Option<(RegClass, usize)> {
        if self.no_i16 && ty == Type::I16 {
            return None;
        }
        X64Backend::default().value_regs(ty)
    }
}

#[test]
fn results_in_the_wrong_registers_are_a_typed_error() {
    let add128 = "function %f(i128) -> i128 {
         block0(v0: i128):
             v1 = iadd v0, v0
             return v1
         }";
    let add64 = "function %f(i64) -> i64 {
         block0(v0: i64):
             v1 = iadd v0, v0
             return v1
         }";
    let fadd = "function %f(f64) -> f64 {
         block0(v0: f64):
             v1 = fadd v0, v0
             return v1
         }";
    // Too few: one register for an i128.
    let (opcode, ty, what) = unsupported(lower_with(&returning(&[RegClass::Int]), add128));
    assert_eq!((opcode, ty), (Some(Opcode::Iadd), Some(Type::I128)));
    assert!(what.contains("result v1"), "{what}");
    // Too many: a pair for an i64.
    let (opcode, ty, what) = unsupported(lower_with(
        &returning(&[RegClass::Int, RegClass::Int]),
        add64,
    ));
    assert_eq!((opcode, ty), (Some(Opcode::Iadd), Some(Type::I64)));
    assert!(what.contains("beyond the results"), "{what}");
    // The wrong class: an integer register for an f64.
    let (opcode, ty, what) = unsupported(lower_with(&returning(&[RegClass::Int]), fadd));
    assert_eq!((opcode, ty), (Some(Opcode::Fadd), Some(Type::F64)));
    assert!(what.contains("result v1"), "{what}");
    // The right shape passes the driver.
    assert!(lower_with(&returning(&[RegClass::Int, RegClass::Int]), add128).is_ok());
}

#[test]
fn values_no_register_holds_are_a_typed_error_naming_the_first() {
    // The first misfit in layout order: here an instruction's result.
    let param = "function %p(i32) -> i32 {
         block0(v0: i32):
             v1 = ireduce.i16 v0
             jump block1(v1)
         block1(v2: i16):
             v3 = uextend.i32 v2
             return v3
         }";
    let (opcode, ty, what) = unsupported(lower_with(&NO_I16, param));
    assert_eq!((opcode, ty), (Some(Opcode::Ireduce), Some(Type::I16)));
    assert!(what.contains("result type"), "{what}");
    // Here a block parameter (of a block no edge reaches: every block is checked).
    let param_first = "function %q(i32) -> i32 {
         block0(v0: i32):
             jump block1(v0)
         block1(v1: i32):
             return v1
         block2(v2: i16):
             v3 = uextend.i32 v2
             return v3
         }";
    let (opcode, ty, what) = unsupported(lower_with(&NO_I16, param_first));
    assert_eq!((opcode, ty), (None, Some(Type::I16)));
    assert!(what.contains("block parameter v2 in %q"), "{what}");
    // Without such values the same backend lowers.
    let fine = "function %r(i32) -> i32 {
         block0(v0: i32):
             return v0
         }";
    assert!(lower_with(&NO_I16, fine).is_ok());
}

/// The allocator sizes its per-vreg tables by `num_vregs`: lowering numbers exactly the
/// vregs the code names, densely, in order of first appearance (result aliases resolved,
/// so no alias and no unused temporary takes a number).
#[test]
fn vregs_are_numbered_densely_in_order_of_appearance() {
    let text = "function %f(i64, i64) -> i64 {
         block0(v0: i64, v1: i64):
             v2 = iconst.i64 5
             v3 = iadd v0, v2
             v4 = imul v3, v1
             brif v4, block1(v3), block2
         block1(v5: i64):
             v6 = isub v5, v1
             jump block2
         block2:
             v7 = band v0, v1
             return v7
         }";
    let code = vcode(text);
    let mut seen = Vec::new();
    for b in 0..code.num_blocks() {
        let block = Block(b as u32);
        seen.extend(code.block_params(block).iter().map(|v| v.index()));
        for i in code.block_insns(block).iter() {
            seen.extend(code.inst_operands(i).iter().map(|o| o.vreg().index()));
        }
        for k in 0..code.block_succs(block).len() {
            seen.extend(code.branch_blockparams(block, k).iter().map(|v| v.index()));
        }
    }
    let mut next = 0;
    for v in seen {
        assert!(
            v <= next,
            "v{v} named before v{next}:\n{}",
            code.pretty(None)
        );
        next = next.max(v + 1);
    }
    assert_eq!(next, code.num_vregs(), "{}", code.pretty(None));
}

/// Collection for the allocator (`visit`) reports exactly the operands `map` walks, in the
/// same order and with the same constraints: checked on every instruction lowered from the
/// x86-64 golden files.
#[test]
fn collected_operands_are_the_mapped_operands() {
    use kestrel_codegen::machinst::operands::Operands;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("golden directory") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("readable");
        if !text.contains("target x86_64") {
            continue;
        }
        for f in kestrel_ir::parse_functions(&text, "golden").expect("parses") {
            let order = BlockLoweringOrder::new(&f, &mut Chaos::disabled());
            let Ok(code) = lower(&X64Backend::default(), &f, &order) else {
                continue;
            };
            for inst in code.insts() {
                let mut collected = Vec::new();
                inst.collect_operands(&mut collected);
                let mut mapped = Vec::new();
                inst.map(&mut Operands::new(|op| mapped.push(op.operand())));
                assert_eq!(collected, mapped, "{}: {inst:?}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} instructions checked");
}
