//! The IR as instruction-selection rules see it, generated from the IR's opcode table
//! (`kestrel_ir::Opcode::ALL`), so there is one opcode list: a new opcode appears in every
//! backend's `Op` at the next build, and a backend without a rule for it reports it as
//! unsupported (the lowering coverage test lists such pairs).
//!
//! Two outputs, kept in step by construction:
//! - `ir_ops.rules`: the DSL declarations of the IR's operand types and of `Op`, one variant
//!   per opcode whose fields are the operands of its instruction format;
//! - `ir_ops.rs`: the same `Op` in Rust and `op_of`, which flattens an `InstructionData`.
//!
//! Cost: O(opcodes), once per build.

use std::fmt::Write as _;

use kestrel_ir::opcode::InstructionFormat as F;
use kestrel_ir::Opcode;

/// An operand field: its name and its type (the same name in the DSL and in Rust, where it
/// is a `kestrel_ir` type unless primitive).
type Field = (&'static str, &'static str);

/// The fields of an instruction format, and the Rust pattern that binds them from the
/// `InstructionData` variant (`opcode` is bound too).
fn format_spec(format: F) -> (&'static [Field], &'static str) {
    const V: &str = "Value";
    match format {
        F::Unary => (&[("a", V)], "Unary { opcode, arg: a }"),
        F::UnaryImm => (&[("imm", "i64")], "UnaryImm { opcode, imm }"),
        F::UnaryIeee32 => (&[("bits", "u64")], "UnaryIeee32 { opcode, imm }"),
        F::UnaryIeee64 => (&[("bits", "u64")], "UnaryIeee64 { opcode, imm: bits }"),
        F::UnaryGlobalValue => (
            &[("gv", "GlobalValue")],
            "UnaryGlobalValue { opcode, global_value: gv }",
        ),
        F::Binary => (&[("a", V), ("b", V)], "Binary { opcode, args: [a, b] }"),
        F::Ternary => (
            &[("a", V), ("b", V), ("c", V)],
            "Ternary { opcode, args: [a, b, c] }",
        ),
        F::MultiAry => (&[], "MultiAry { opcode, .. }"),
        F::NullAry => (&[], "NullAry { opcode }"),
        F::IntCompare => (
            &[("cc", "IntCC"), ("a", V), ("b", V)],
            "IntCompare { opcode, cond: cc, args: [a, b] }",
        ),
        F::FloatCompare => (
            &[("cc", "FloatCC"), ("a", V), ("b", V)],
            "FloatCompare { opcode, cond: cc, args: [a, b] }",
        ),
        F::Jump => (&[], "Jump { opcode, .. }"),
        F::Brif => (&[("c", V)], "Brif { opcode, arg: c, .. }"),
        F::BranchTable => (&[("a", V)], "BranchTable { opcode, arg: a, .. }"),
        F::Call => (&[], "Call { opcode, .. }"),
        F::CallIndirect => (&[], "CallIndirect { opcode, .. }"),
        F::FuncAddr => (
            &[("func", "FuncRef")],
            "FuncAddr { opcode, func_ref: func }",
        ),
        F::Load => (
            &[("flags", "MemFlags"), ("a", V), ("offset", "i32")],
            "Load { opcode, flags, arg: a, offset }",
        ),
        F::Store => (
            &[("flags", "MemFlags"), ("v", V), ("a", V), ("offset", "i32")],
            "Store { opcode, flags, args: [v, a], offset }",
        ),
        F::LoadNoOffset => (
            &[("flags", "MemFlags"), ("a", V)],
            "LoadNoOffset { opcode, flags, arg: a }",
        ),
        F::StoreNoOffset => (
            &[("flags", "MemFlags"), ("v", V), ("a", V)],
            "StoreNoOffset { opcode, flags, args: [v, a] }",
        ),
        F::AtomicRmw => (
            &[
                ("flags", "MemFlags"),
                ("op", "AtomicRmwOp"),
                ("a", V),
                ("b", V),
            ],
            "AtomicRmw { opcode, flags, op, args: [a, b] }",
        ),
        F::AtomicCas => (
            &[("flags", "MemFlags"), ("a", V), ("b", V), ("c", V)],
            "AtomicCas { opcode, flags, args: [a, b, c] }",
        ),
        F::StackLoad => (
            &[("slot", "StackSlot"), ("offset", "i32")],
            "StackLoad { opcode, stack_slot: slot, offset }",
        ),
        F::StackStore => (
            &[("a", V), ("slot", "StackSlot"), ("offset", "i32")],
            "StackStore { opcode, arg: a, stack_slot: slot, offset }",
        ),
        F::Trap => (&[("code", "TrapCode")], "Trap { opcode, code }"),
        F::CondTrap => (
            &[("c", V), ("code", "TrapCode")],
            "CondTrap { opcode, arg: c, code }",
        ),
        F::IntAddTrap => (
            &[("a", V), ("b", V), ("code", "TrapCode")],
            "IntAddTrap { opcode, args: [a, b], code }",
        ),
    }
}

/// Every format, in a fixed order (the generated `match` has one arm each).
const FORMATS: &[F] = &[
    F::Unary,
    F::UnaryImm,
    F::UnaryIeee32,
    F::UnaryIeee64,
    F::UnaryGlobalValue,
    F::Binary,
    F::Ternary,
    F::MultiAry,
    F::NullAry,
    F::IntCompare,
    F::FloatCompare,
    F::Jump,
    F::Brif,
    F::BranchTable,
    F::Call,
    F::CallIndirect,
    F::FuncAddr,
    F::Load,
    F::Store,
    F::LoadNoOffset,
    F::StoreNoOffset,
    F::AtomicRmw,
    F::AtomicCas,
    F::StackLoad,
    F::StackStore,
    F::Trap,
    F::CondTrap,
    F::IntAddTrap,
];

/// IR types the fields use, declared to the DSL as primitives.
const IR_TYPES: &[&str] = &[
    "Value",
    "TrapCode",
    "MemFlags",
    "GlobalValue",
    "FuncRef",
    "StackSlot",
];

/// The IR's condition and operation enums, declared to the DSL with every variant, so rules
/// match and build them by name.
fn ir_enums() -> [(&'static str, Vec<String>); 3] {
    fn names<T: std::fmt::Debug>(all: &[T]) -> Vec<String> {
        all.iter().map(|v| format!("{v:?}")).collect()
    }
    use kestrel_ir::{AtomicRmwOp, FloatCC, IntCC};
    [
        ("IntCC", names(IntCC::ALL)),
        ("FloatCC", names(FloatCC::ALL)),
        ("AtomicRmwOp", names(AtomicRmwOp::ALL)),
    ]
}
const PRIMITIVES: &[&str] = &["i32", "i64", "u64"];

fn variant(op: Opcode) -> String {
    format!("{op:?}")
}

/// `ir_ops.rules`.
pub fn rules() -> String {
    let mut s = String::from(
        ";; Generated by build.rs from the IR's opcode table: do not edit.\n\
         ;; `Op` is an IR instruction as the rules see it (`inst_op`): one variant per opcode,\n\
         ;; whose fields are its format's operands.\n\n",
    );
    for t in PRIMITIVES.iter().chain(IR_TYPES) {
        writeln!(s, "(type {t} (primitive {t}))").unwrap();
    }
    for (name, variants) in ir_enums() {
        let variants: Vec<String> = variants.iter().map(|v| format!("({v})")).collect();
        writeln!(s, "(type {name} extern copy (enum {}))", variants.join(" ")).unwrap();
    }
    s.push_str("\n(type Op extern\n  (enum");
    for &op in Opcode::ALL {
        let (fields, _) = format_spec(op.format());
        write!(s, "\n    ({}", variant(op)).unwrap();
        for (name, ty) in fields {
            write!(s, " ({name} {ty})").unwrap();
        }
        write!(s, ")").unwrap();
    }
    s.push_str("\n    (Malformed)))\n");
    s
}

/// `ir_ops.rs`.
pub fn rust() -> String {
    let mut s = String::from(
        "// Generated by build.rs from the IR's opcode table: do not edit.\n\n\
         /// An IR instruction as the rules see it: one variant per opcode, with its format's\n\
         /// operands (generated from the IR's opcode table).\n\
         #[derive(Clone, Debug)]\n\
         pub enum Op {\n",
    );
    let rust_ty = |t: &str| {
        if PRIMITIVES.contains(&t) {
            t.to_string()
        } else {
            format!("kestrel_ir::{t}")
        }
    };
    for &op in Opcode::ALL {
        let (fields, _) = format_spec(op.format());
        if fields.is_empty() {
            // A variant without fields is a unit variant, as the DSL expects.
            writeln!(s, "    {},", variant(op)).unwrap();
            continue;
        }
        let fields: Vec<String> = fields
            .iter()
            .map(|(n, t)| format!("{n}: {}", rust_ty(t)))
            .collect();
        writeln!(s, "    {} {{ {} }},", variant(op), fields.join(", ")).unwrap();
    }
    s.push_str(
        "    /// Operands that do not have the opcode's format (the parser and the function\n\
         \x20   /// builder never make one): no rule matches it.\n\
         \x20   Malformed,\n}\n\n\
         /// The rules' view of `data`.\n\
         pub fn op_of(data: &kestrel_ir::InstructionData) -> Op {\n\
         \x20   use kestrel_ir::InstructionData as D;\n\
         \x20   use kestrel_ir::Opcode as O;\n\
         \x20   match *data {\n",
    );
    for &format in FORMATS {
        let (fields, pattern) = format_spec(format);
        let ops: Vec<Opcode> = Opcode::ALL
            .iter()
            .copied()
            .filter(|o| o.format() == format)
            .collect();
        let inits: Vec<String> = fields
            .iter()
            .map(|&(n, _)| match (format, n) {
                (F::UnaryIeee32, "bits") => "bits: u64::from(imm)".to_string(),
                _ => n.to_string(),
            })
            .collect();
        let value = |v: &str| match inits.is_empty() {
            true => format!("Op::{v}"),
            false => format!("Op::{v} {{ {} }}", inits.join(", ")),
        };
        if ops.is_empty() {
            writeln!(
                s,
                "        D::{pattern} => {{ let _ = opcode; Op::Malformed }}"
            )
            .unwrap();
            continue;
        }
        writeln!(s, "        D::{pattern} => match opcode {{").unwrap();
        for op in ops {
            let v = variant(op);
            writeln!(s, "            O::{v} => {},", value(&v)).unwrap();
        }
        s.push_str("            _ => Op::Malformed,\n        },\n");
    }
    s.push_str("    }\n}\n");
    s
}
