//! Source ranges of compiled code: every machine instruction lowered from an IR instruction
//! carries that instruction's line (its line in the CLIF text, or the front end's `@srcloc`),
//! and the ranges stay increasing, disjoint and inside the code even when the buffer deletes
//! or shortens branches.

use kestrel_codegen::isa::x64::X64Isa;
use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::settings::Flags;
use kestrel_ir::builder::FunctionBuilder;
use kestrel_ir::{AbiParam, FunctionName, Signature, Type};

const LOOP: &str = "function %sum(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v1, v0)

block1(v2: i64, v3: i64):
    v4 = iadd v2, v3
    v5 = iconst.i64 1
    v6 = isub v3, v5
    brif v6, block1(v4, v6), block2

block2:
    v7 = imul v4, v4
    return v7
}
";

/// Compile the first function of `text` and check its source ranges' shape.
fn compile_checked(text: &str, file: &str) -> kestrel_codegen::machinst::CompiledCode {
    let f = kestrel_ir::parse_functions(text, file).unwrap().remove(0);
    let code = X64Isa::default()
        .compile_function(&f, &Flags::default())
        .expect("compiles");
    check_ranges(&code.srclocs, code.code.len());
    code
}

fn check_ranges(ranges: &[(u32, u32, u32)], code_len: usize) {
    let mut last_end = 0;
    for &(start, end, line) in ranges {
        assert!(start < end && start >= last_end, "ranges {ranges:?}");
        assert!(end as usize <= code_len, "range past the code: {ranges:?}");
        assert_ne!(line, 0, "a range without a line: {ranges:?}");
        last_end = end;
    }
}

#[test]
fn clif_lines_map_to_machine_code() {
    let code = compile_checked(LOOP, "sum.clif");
    let lines: Vec<u32> = code.srclocs.iter().map(|r| r.2).collect();
    // The instructions with code of their own: add (7), sub (9), the branch (10), multiply
    // (13) and return (14); the constant folded into the sub (8) and the jump to the next
    // block (4) have none.
    for line in [7, 9, 10, 13, 14] {
        assert!(lines.contains(&line), "line {line} missing from {lines:?}");
    }
    assert!(!lines.contains(&4) && !lines.contains(&8), "{lines:?}");
    // The return's range reaches the end of the code (it holds the epilogue).
    assert_eq!(code.srclocs.last().unwrap().1 as usize, code.code.len());
}

#[test]
fn front_end_srclocs_map_to_machine_code() {
    let mut sig = Signature::default();
    sig.params.push(AbiParam::new(Type::I32));
    sig.returns.push(AbiParam::new(Type::I32));
    let mut b = FunctionBuilder::new(FunctionName::Named("square".into()), sig);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry).unwrap();
    b.switch_to_block(entry).unwrap();
    let x = b.block_params(entry)[0];
    b.set_srcloc(Some(100));
    let y = b.ins().imul(x, x).unwrap();
    b.set_srcloc(Some(200));
    b.ins().return_(&[y]).unwrap();
    b.seal_all_blocks().unwrap();
    let f = b.finalize().expect("builds");
    let code = X64Isa::default()
        .compile_function(&f, &Flags::default())
        .expect("compiles");
    check_ranges(&code.srclocs, code.code.len());
    let lines: Vec<u32> = code.srclocs.iter().map(|r| r.2).collect();
    assert_eq!(lines, [100, 200], "{:?}", code.srclocs);
}

#[test]
fn deleted_branches_cut_their_ranges() {
    // Each block ends in a jump to the next block, which the buffer deletes: no range may
    // keep covering bytes that no longer exist, and no empty range may remain.
    let mut text =
        String::from("function %chain(i32) -> i32 {\nblock0(v0: i32):\n    jump block1(v0)\n");
    for k in 1..40 {
        text += &format!(
            "block{k}(v{a}: i32):\n    v{b} = iadd v{a}, v{a}\n    jump block{n}(v{b})\n",
            a = 2 * k,
            b = 2 * k + 1,
            n = k + 1
        );
    }
    text += "block40(v80: i32):\n    return v80\n}\n";
    let code = compile_checked(&text, "chain.clif");
    // No jump survives, so no `jump` line has code.
    let jump_lines: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("jump"))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    for r in &code.srclocs {
        assert!(!jump_lines.contains(&r.2), "a deleted jump kept {r:?}");
    }
}
