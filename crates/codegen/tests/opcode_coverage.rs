//! Every pair of IR opcode and controlling type that the verifier accepts either compiles
//! for x86-64 (and for AArch64) or is on the short list of known gaps below. The pairs come from the IR's own
//! tables (`Opcode::ALL`, `ctrl_type_set`), so a new opcode, or a new type for one, that the
//! backend has no rule for fails this test with the missing pairs listed.
//!
//! Each pair is tried as a one-instruction function: operands are function parameters (the
//! first operand types the verifier accepts: all of the controlling type, else all of one
//! scalar type, else any mix), results are stored to memory so they are live, and memory,
//! stack, call and branch operands come from a fixed preamble.

use kestrel_codegen::isa::aarch64::Aarch64Isa;
use kestrel_codegen::isa::x64::X64Isa;
use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::machinst::CodegenError;
use kestrel_codegen::settings::Flags;
use kestrel_ir::opcode::InstructionFormat as F;
use kestrel_ir::typing::{ctrl_type_set, TypeSet};
use kestrel_ir::{Opcode, Type};

/// Pairs the backend does not compile yet, each with the reason (all on the README's "not
/// yet" list). Keep it exact: a pair that starts compiling must leave the list.
const KNOWN_GAPS: &[(&str, &str)] = &[
    ("get_frame_pointer.i32", "x86-64 addresses are i64"),
    ("get_stack_pointer.i32", "x86-64 addresses are i64"),
    ("get_return_address.i32", "x86-64 addresses are i64"),
    (
        "get_pinned_reg.i32",
        "x86-64's pinned register holds an i64",
    ),
    (
        "set_pinned_reg.i32",
        "x86-64's pinned register holds an i64",
    ),
];

/// How many value operands an instruction of `op` takes from the parameters.
fn value_operands(op: Opcode) -> usize {
    match op.format() {
        F::Unary | F::CondTrap | F::Store | F::StoreNoOffset | F::AtomicRmw | F::StackStore => 1,
        F::Brif | F::BranchTable => 1,
        F::LoadNoOffset if !op.name().starts_with("atomic") => 1,
        F::Binary | F::IntCompare | F::FloatCompare | F::IntAddTrap | F::AtomicCas => 2,
        F::Ternary => 3,
        _ => 0,
    }
}

/// The instruction's text (after `results =`), or `None` for formats tried elsewhere.
fn inst_text(op: Opcode, ctrl: Option<Type>) -> Option<String> {
    let name = op.name();
    let sfx = ctrl.map_or(String::new(), |t| format!(".{t}"));
    Some(match op.format() {
        F::Unary | F::Binary | F::Ternary => {
            let args: Vec<String> = (0..value_operands(op)).map(|i| format!("v{i}")).collect();
            format!("{name}{sfx} {}", args.join(", "))
        }
        F::UnaryImm => format!("{name}{sfx} 1"),
        F::UnaryIeee32 | F::UnaryIeee64 => format!("{name} 0x1.0p0"),
        // Vector-only formats: their opcodes are interpreter-only (see `interpreter_only`).
        F::UnaryIeee16 | F::UnaryConst | F::BinaryImm8 | F::TernaryImm8 | F::Shuffle => {
            return None
        }
        F::UnaryGlobalValue => format!("{name}{sfx} gv0"),
        F::IntCompare | F::FloatCompare => format!("{name} eq v0, v1"),
        F::Trap => format!("{name} user1"),
        F::CondTrap => format!("{name} v0, user1"),
        F::IntAddTrap => format!("{name}{sfx} v0, v1, user1"),
        F::Load => format!("{name}{sfx} notrap aligned v100+8"),
        F::Store => format!("{name} notrap aligned v0, v100+8"),
        F::LoadNoOffset if name.starts_with("atomic") => format!("{name}{sfx} notrap v100"),
        F::LoadNoOffset => format!("{name}{sfx} v0"),
        F::StoreNoOffset => format!("{name} notrap v0, v100"),
        F::AtomicRmw => format!("{name}{sfx} notrap add v100, v0"),
        F::AtomicCas => format!("{name}{sfx} notrap v100, v0, v1"),
        F::StackLoad => format!("{name}{sfx} ss0+8"),
        F::StackStore => format!("{name} v0, ss0+8"),
        F::NullAry => format!("{name}{sfx}"),
        F::Call => format!("{name} fn0()"),
        F::CallIndirect => format!("{name} sig0, v100()"),
        F::TryCall => format!("{name} fn0(), sig0, block1, []"),
        F::TryCallIndirect => format!("{name} v100(), sig0, block1, []"),
        F::FuncAddr => format!("{name}{sfx} fn0"),
        F::Jump => "jump block1".to_string(),
        F::Brif => format!("{name} v0, block1, block1"),
        F::BranchTable => format!("{name} v0, block1, [block1, block1]"),
        F::MultiAry => return None,
    })
}

/// A whole function around one instruction with `results` results and these operand types.
fn function_text(
    op: Opcode,
    ctrl: Option<Type>,
    operands: &[Type],
    results: usize,
) -> Option<String> {
    let inst = inst_text(op, ctrl)?;
    let params: Vec<String> = std::iter::once("i64".to_string())
        .chain(operands.iter().map(|t| t.to_string()))
        .collect();
    let block_params: Vec<String> = std::iter::once("v100: i64".to_string())
        .chain(
            operands
                .iter()
                .enumerate()
                .map(|(i, t)| format!("v{i}: {t}")),
        )
        .collect();
    // A tail call needs the `tail` convention in the function and its callees.
    let conv = if op.is_return_call() {
        "tail"
    } else {
        "system_v"
    };
    let mut text = format!(
        "function %t({}) {conv} {{\n    ss0 = explicit_slot 32\n    gv0 = symbol %data\n    \
         sig0 = () {conv}\n    fn0 = %callee() {conv}\nblock0({}):\n",
        params.join(", "),
        block_params.join(", ")
    );
    let names: Vec<String> = (0..results).map(|i| format!("v{}", 200 + i)).collect();
    if results > 0 {
        text += &format!("    {} = {inst}\n", names.join(", "));
    } else {
        text += &format!("    {inst}\n");
    }
    if !op.is_terminator() {
        for n in &names {
            text += &format!("    store notrap {n}, v100\n");
        }
        text += "    return\n";
    }
    text += "block1:\n    return\n}\n";
    Some(text)
}

/// A backend under test: compiles a verified function.
type Compile = fn(&kestrel_ir::Function) -> Result<(), CodegenError>;

/// The flags of every pair's compile: `enable_pinned_reg`, so that the pinned-register
/// opcodes have their lowering.
fn pinned() -> Flags {
    Flags {
        enable_pinned_reg: true,
        ..Flags::default()
    }
}

fn x64(f: &kestrel_ir::Function) -> Result<(), CodegenError> {
    X64Isa::default().compile_function(f, &pinned()).map(|_| ())
}

fn a64(f: &kestrel_ir::Function) -> Result<(), CodegenError> {
    let flags = Flags {
        check_regalloc: true,
        ..pinned()
    };
    Aarch64Isa::default()
        .compile_function(f, &flags)
        .map(|_| ())
}

/// The first instance of `(op, ctrl)` the parser and verifier accept, compiled.
fn try_pair(compile: Compile, op: Opcode, ctrl: Option<Type>) -> Option<Result<(), CodegenError>> {
    let n = value_operands(op);
    let mut candidates: Vec<Vec<Type>> = Vec::new();
    if let Some(t) = ctrl {
        candidates.push(vec![t; n]);
    }
    candidates.extend(Type::SCALARS.iter().map(|&s| vec![s; n]));
    let mut mixes = vec![Vec::new()];
    for _ in 0..n {
        mixes = mixes
            .into_iter()
            .flat_map(|m: Vec<Type>| {
                Type::SCALARS.iter().map(move |&s| {
                    let mut m = m.clone();
                    m.push(s);
                    m
                })
            })
            .collect();
    }
    candidates.extend(mixes);
    for operands in &candidates {
        for results in [1, 0, 2, 3] {
            let text = function_text(op, ctrl, operands, results)?;
            let Ok(mut funcs) = kestrel_ir::parse_functions(&text, "pair.clif") else {
                continue;
            };
            let f = funcs.remove(0);
            if kestrel_ir::verify_function(&f).is_err() {
                continue;
            }
            return Some(compile(&f));
        }
    }
    None
}

/// Opcodes whose every form has a vector, `f16` or `f128` type: no backend lowers those
/// yet, and `interpreter_only_types_are_refused` checks that they are refused clearly.
fn interpreter_only(op: Opcode) -> bool {
    // `vhigh_bits` makes a scalar, from a vector.
    if op == Opcode::VhighBits {
        return true;
    }
    match ctrl_type_set(op) {
        TypeSet::Nothing => kestrel_ir::typing::result_types(op, Type::INVALID)
            .as_slice()
            .iter()
            .any(|t| t.is_interpreter_only()),
        set => !Type::SCALARS.iter().any(|&t| set.contains(t)),
    }
}

/// Every pair for `compile`: the ones that compiled, those unsupported (any other error
/// panics), and those without an instance.
fn pairs(compile: Compile) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut missing = Vec::new();
    let mut no_instance = Vec::new();
    let mut compiled = Vec::new();
    for &op in Opcode::ALL.iter().filter(|&&op| !interpreter_only(op)) {
        let ctrls: Vec<Option<Type>> = match ctrl_type_set(op) {
            TypeSet::Nothing => vec![None],
            set => Type::SCALARS
                .iter()
                .filter(|&&t| set.contains(t))
                .map(|&t| Some(t))
                .collect(),
        };
        for ctrl in ctrls {
            let pair = match ctrl {
                Some(t) => format!("{}.{t}", op.name()),
                None => op.name().to_string(),
            };
            match try_pair(compile, op, ctrl) {
                None => no_instance.push(pair),
                Some(Ok(())) => compiled.push(pair),
                Some(Err(CodegenError::Unsupported { .. })) => missing.push(pair),
                Some(Err(e)) => panic!("{pair}: unexpected error: {e}"),
            }
        }
    }
    (compiled, missing, no_instance)
}

#[test]
fn every_opcode_and_type_the_verifier_accepts_compiles() {
    let (compiled, missing, no_instance) = pairs(x64);
    let compiled = compiled.len();
    let known: Vec<&str> = KNOWN_GAPS.iter().map(|&(p, _)| p).collect();
    let new: Vec<&String> = missing
        .iter()
        .filter(|p| !known.contains(&p.as_str()))
        .collect();
    let fixed: Vec<&&str> = known
        .iter()
        .filter(|p| !missing.iter().any(|m| m == *p))
        .collect();
    assert!(
        new.is_empty() && fixed.is_empty(),
        "opcode/type pairs without a lowering: {new:?}; pairs on the known-gap list that now \
         compile (remove them): {fixed:?}"
    );
    // Pairs with no instance are either invalid (`uextend.i8`: nothing is narrower) or
    // outside what the preamble offers (`global_value` of a symbol is i64); `return` ends
    // every instance anyway. A change here means the instance builder missed something.
    assert_eq!(
        no_instance,
        [
            "return",
            "uextend.i8",
            "sextend.i8",
            "ireduce.i128",
            // Narrower than f32 and wider than f64 are f16 and f128, interpreter-only.
            "fpromote.f32",
            "fdemote.f64",
            "global_value.i8",
            "global_value.i16",
            "global_value.i32",
            "global_value.i128",
            "global_value.f32",
            "global_value.f64",
        ],
        "pairs without an instance changed"
    );
    assert!(
        compiled > 400,
        "only {compiled} pairs compiled: the instance builder broke"
    );
}

/// Why AArch64 does not compile a pair yet, or `None` if it should.
fn aarch64_gap(pair: &str) -> Option<&'static str> {
    let op = pair.split('.').next().unwrap_or(pair);
    if pair.ends_with(".i32")
        && matches!(
            op,
            "func_addr"
                | "stack_addr"
                | "get_frame_pointer"
                | "get_stack_pointer"
                | "get_return_address"
                | "get_pinned_reg"
                | "set_pinned_reg"
        )
    {
        return Some("AArch64 addresses are i64");
    }
    None
}

/// The same for AArch64 (with the regalloc checker on): every pair compiles except the
/// gaps `aarch64_gap` names, and every error is an unsupported-feature error, never another
/// error or a panic.
#[test]
fn every_opcode_and_type_the_verifier_accepts_compiles_for_aarch64() {
    let (compiled, missing, _) = pairs(a64);
    let new: Vec<&String> = missing
        .iter()
        .filter(|p| aarch64_gap(p).is_none())
        .collect();
    assert!(
        new.is_empty(),
        "opcode/type pairs without an AArch64 lowering: {new:?}"
    );
    // Each gap is real: a pair that starts compiling must leave `aarch64_gap`.
    let fixed: Vec<&String> = compiled
        .iter()
        .filter(|p| aarch64_gap(p).is_some())
        .collect();
    assert!(
        fixed.is_empty(),
        "pairs `aarch64_gap` names that compile now: {fixed:?}"
    );
    assert!(
        compiled.len() > 360,
        "only {} pairs compiled for AArch64: a rule or the instance builder broke",
        compiled.len()
    );
}

/// Functions with `f16` or `f128` values are refused by both backends, 64-bit vectors by
/// AArch64 (which lowers the 128-bit ones; x86-64 lowers both widths) and 32-bit vectors by
/// both, with an unsupported-type error naming the type, the function and the ISA (never a
/// panic or code).
#[test]
fn interpreter_only_types_are_refused() {
    let both: &[(Compile, &str)] = &[(x64, "x86_64)"), (a64, "aarch64)")];
    let aarch64: &[(Compile, &str)] = &[(a64, "aarch64)")];
    let cases = [
        (
            "function %half(f16) -> f16 {\nblock0(v0: f16):\n    return v0\n}\n",
            "type f16 in function %half (f16/f128 lowering not implemented on",
            both,
        ),
        (
            "function %narrow(i16x4) -> i16x4 {\nblock0(v0: i16x4):\n    return v0\n}\n",
            "type i16x4 in function %narrow (vector lowering not implemented on",
            aarch64,
        ),
        (
            "function %narrower(i16x2) -> i16x2 {\nblock0(v0: i16x2):\n    return v0\n}\n",
            "type i16x2 in function %narrower (vector lowering not implemented on",
            both,
        ),
        (
            // A 128-bit vector of `f16` lanes: refused whole (its store once reached a
            // scalar store rule and panicked).
            "function %halves(i64) {\nblock0(v0: i64):\n    v1 = vconst.f16x8 [0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0]\n    store v1, v0\n    return\n}\n",
            "type f16x8 in function %halves (vector lowering not implemented on",
            both,
        ),
        (
            "function %q(i64) -> i64 {\nblock0(v0: i64):\n    v1 = f128const 0x1.0p0\n    return v0\n}\n",
            "type f128 in function %q (f16/f128 lowering not implemented on",
            both,
        ),
    ];
    for (text, want, compilers) in cases {
        let f = kestrel_ir::parse_functions(text, "t.clif")
            .unwrap()
            .remove(0);
        kestrel_ir::verify_function(&f).unwrap();
        for &(compile, isa) in compilers {
            match compile(&f) {
                Err(e @ CodegenError::Unsupported { .. }) => {
                    let msg = e.to_string();
                    assert!(msg.contains(want) && msg.contains(isa), "{msg}");
                }
                other => panic!("{text}: expected an unsupported-type error, got {other:?}"),
            }
        }
    }
    // Every interpreter-only opcode is one of the vector, f16 or f128 forms.
    let count = Opcode::ALL
        .iter()
        .filter(|&&op| interpreter_only(op))
        .count();
    assert!(count >= 30, "only {count} interpreter-only opcodes");
}

/// The 128-bit vector types.
const VECTORS: [Type; 6] = [
    Type::I8X16,
    Type::I16X8,
    Type::I32X4,
    Type::I64X2,
    Type::F32X4,
    Type::F64X2,
];

fn x64_checked(f: &kestrel_ir::Function) -> Result<(), CodegenError> {
    let flags = Flags {
        check_regalloc: true,
        ..Flags::default()
    };
    X64Isa::default().compile_function(f, &flags).map(|_| ())
}

/// Every pair of an opcode and a 128-bit vector type the verifier accepts (in the formats
/// the instance builder writes) compiles for x86-64 with the regalloc checker, or is refused
/// with an unsupported-feature error: never another error, never a panic.
#[test]
fn vector_pairs_compile_or_are_refused_on_x64() {
    vector_pairs_compile_or_are_refused(x64_checked, 100);
}

/// The same for AArch64 (NEON), which lowers more of them.
#[test]
fn vector_pairs_compile_or_are_refused_on_aarch64() {
    vector_pairs_compile_or_are_refused(a64, 150);
}

fn vector_pairs_compile_or_are_refused(compile: Compile, at_least: usize) {
    let (mut compiled, mut refused) = (Vec::new(), Vec::new());
    for &op in Opcode::ALL {
        let set = ctrl_type_set(op);
        for ty in VECTORS.iter().copied().filter(|&t| set.contains(t)) {
            let pair = format!("{}.{ty}", op.name());
            match try_pair(compile, op, Some(ty)) {
                None => {}
                Some(Ok(())) => compiled.push(pair),
                Some(Err(CodegenError::Unsupported { .. })) => refused.push(pair),
                Some(Err(e)) => panic!("{pair}: unexpected error: {e}"),
            }
        }
    }
    for pair in [
        "iadd.i8x16",
        "imul.i32x4",
        "icmp.i64x2",
        "fadd.f64x2",
        "bitselect.i16x8",
    ] {
        assert!(
            compiled.iter().any(|p| p == pair),
            "{pair} does not compile"
        );
    }
    assert!(
        compiled.len() > at_least,
        "only {} vector pairs compiled ({} refused): a rule or the instance builder broke",
        compiled.len(),
        refused.len()
    );
}

/// Without `enable_pinned_reg`, the pinned-register opcodes are refused by an error that
/// names the instruction and the setting, on both ISAs.
#[test]
fn pinned_register_needs_its_setting() {
    let text = "function %f(i64) -> i64 {\nblock0(v0: i64):\n    set_pinned_reg v0\n    v1 = get_pinned_reg.i64\n    return v1\n}\n";
    let funcs = kestrel_ir::parse_functions(text, "f.clif").expect("parses");
    let without = Flags::default();
    for isa in [&X64Isa::default() as &dyn TargetIsa, &Aarch64Isa::default()] {
        let err = isa
            .compile_function(&funcs[0], &without)
            .expect_err("refused");
        let text = err.to_string();
        assert!(
            text.contains("in %f needs the `enable_pinned_reg` setting: `"),
            "{text}"
        );
        isa.compile_function(&funcs[0], &pinned())
            .expect("compiles with the setting");
    }
}
