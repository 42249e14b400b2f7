//! If-conversion on IR text: which branches become selects (counted, verified, and the
//! result free of the converted `brif`), and which shapes must stay branches.

use kestrel_ir::Function;
use kestrel_opt::{if_convert, ARM_BUDGET};

fn parse(text: &str) -> Function {
    let mut funcs = kestrel_ir::parse_functions(text, "if_convert.rs").expect("the case parses");
    assert_eq!(funcs.len(), 1);
    funcs.remove(0)
}

/// Convert `text`; it must convert `expected` branches and verify. Returns the printed result.
fn convert(text: &str, expected: usize) -> String {
    let mut func = parse(text);
    assert_eq!(if_convert(&mut func), expected, "\n{text}");
    kestrel_ir::verify_function(&func).expect("the result verifies");
    func.to_string()
}

const DIAMOND: &str = "
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = band v0, v1
    brif v2, block1, block2
block1:
    v3 = iconst.i64 3
    v4 = imul v0, v3
    v5 = iadd v4, v1
    jump block3(v5)
block2:
    v6 = ushr v0, v1
    jump block3(v6)
block3(v7: i64):
    return v7
}";

#[test]
fn a_diamond_of_cheap_sides_becomes_one_block_with_a_select() {
    let out = convert(DIAMOND, 1);
    assert!(!out.contains("brif"), "{out}");
    assert!(out.contains("select v2, v5, v6"), "{out}");
    assert!(!out.contains("block1") && !out.contains("block2("), "{out}");
}

#[test]
fn a_triangle_selects_between_the_arm_and_the_direct_edge() {
    let out = convert(
        "
function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = icmp sgt v0, v1
    brif v2, block1, block2(v1, v0)
block1:
    v3 = isub v0, v1
    jump block2(v1, v3)
block2(v4: i32, v5: i32):
    v6 = iadd v4, v5
    return v6
}",
        1,
    );
    // The first parameter is the same on both sides: no select for it.
    assert_eq!(out.matches("select").count(), 1, "{out}");
    assert!(out.contains("jump block2(v1, v"), "{out}");
}

#[test]
fn both_edges_to_the_join_make_a_select_without_arms() {
    let out = convert(
        "
function %f(i8, i64, i64) -> i64 {
block0(v0: i8, v1: i64, v2: i64):
    brif v0, block1(v1), block1(v2)
block1(v3: i64):
    return v3
}",
        1,
    );
    assert!(out.contains("select v0, v1, v2"), "{out}");
}

/// `brif c, block1, block2(v0)` where `block1` (headed `arm`, holding `body`) passes
/// `last` to `block2`: a triangle over a value of type `ty`, the condition an `i8`.
fn triangle(ty: &str, arm: &str, body: &str, last: &str) -> String {
    format!(
        "
function %f(i8, {ty}) -> {ty} {{
block0(v9: i8, v0: {ty}):
    brif v9, block1, block2(v0)
{arm}:
{body}
    jump block2({last})
block2(v3: {ty}):
    return v3
}}"
    )
}

#[test]
fn sides_that_trap_load_or_call_stay_branches() {
    for body in [
        "    v2 = udiv v0, v0",
        "    v1 = iconst.i64 0\n    v2 = load.i64 v1",
        "    v2 = sdiv v0, v0",
        "    v2 = call_indirect sig0, v0()",
    ] {
        let text = triangle("i64", "block1", body, "v2");
        let text = text.replace("{\nblock0", "{\n    sig0 = () -> i64\nblock0");
        convert(&text, 0);
    }
}

#[test]
fn costly_or_wide_sides_stay_branches() {
    // Float division and square root take many cycles; i128 values take several registers.
    for (ty, body) in [
        ("f64", "    v2 = fdiv v0, v0"),
        ("f64", "    v2 = sqrt v0"),
        ("i128", "    v2 = iadd v0, v0"),
    ] {
        convert(&triangle(ty, "block1", body, "v2"), 0);
    }
}

#[test]
fn an_arm_over_the_budget_stays_a_branch() {
    let chain = |n: usize| {
        let mut body = Vec::new();
        let mut last = 0;
        for k in 0..n {
            body.push(format!("    v{} = iadd v{last}, v0", 10 + k));
            last = 10 + k;
        }
        triangle("i64", "block1", &body.join("\n"), &format!("v{last}"))
    };
    convert(&chain(ARM_BUDGET), 1);
    convert(&chain(ARM_BUDGET + 1), 0);
}

#[test]
fn arms_with_other_predecessors_cold_arms_and_different_joins_stay_branches() {
    // block1 is also reached from block3.
    convert(
        "
function %f(i64) -> i64 {
block0(v0: i64):
    brif v0, block1, block3
block1:
    v1 = iadd v0, v0
    jump block2(v1)
block3:
    brif v0, block1, block2(v0)
block2(v3: i64):
    return v3
}",
        0,
    );
    // A cold arm: the branch is taken as predicted.
    convert(
        &triangle("i64", "block1 cold", "    v1 = iadd v0, v0", "v1"),
        0,
    );
    // The sides reach different blocks.
    convert(
        "
function %f(i64) -> i64 {
block0(v0: i64):
    brif v0, block1, block2
block1:
    v1 = iadd v0, v0
    jump block3(v1)
block2:
    return v0
block3(v3: i64):
    return v3
}",
        0,
    );
    // The same arm passes the budget as a triangle: the shapes above fail only for their
    // reason.
    convert(&triangle("i64", "block1", "    v1 = iadd v0, v0", "v1"), 1);
}

#[test]
fn a_converted_block_is_not_an_arm_of_another_conversion_in_the_same_run() {
    // block1 heads a diamond and comes first in the layout; once converted it ends in a
    // jump to block4 and looks like an arm of block5's branch, whose conversion must wait
    // for a later run (block1's new instructions are still queued).
    let text = "
function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    jump block5
block1:
    brif v1, block2, block3
block2:
    v2 = iadd v0, v1
    jump block4(v2)
block3:
    v3 = isub v0, v1
    jump block4(v3)
block5:
    brif v0, block1, block4(v1)
block4(v5: i64):
    return v5
}";
    let out = convert(text, 1);
    assert_eq!(out.matches("brif").count(), 1, "{out}");
    // A second run converts the outer branch.
    let mut func = parse(&out);
    assert_eq!(if_convert(&mut func), 1);
    kestrel_ir::verify_function(&func).expect("the result verifies");
}

/// In the pipeline, if-conversion's moves stay queued until simplification's walk; hoisting,
/// which runs in between, still sees the moved instructions in their new block and moves the
/// loop-invariant ones out of the loop (here `imul v0, v1`, from an arm inside the loop).
#[test]
fn hoisting_sees_what_if_conversion_moved_before_it_is_placed() {
    let mut func = parse(
        "
function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    jump block1(v2, v2)
block1(v3: i64, v4: i64):
    v11 = iconst.i64 1
    v5 = band v3, v11
    brif v5, block2, block3(v4)
block2:
    v6 = imul v0, v1
    v7 = iadd v4, v6
    jump block3(v7)
block3(v8: i64):
    v12 = iconst.i64 1
    v9 = iadd v3, v12
    v13 = iconst.i64 100
    v10 = icmp ult v9, v13
    brif v10, block1(v9, v8), block4
block4:
    return v8
}",
    );
    let stats = kestrel_opt::optimize(&mut func, kestrel_opt::OptLevel::Speed, true)
        .expect("the pipeline's result verifies");
    assert_eq!(stats.if_converted, 1);
    assert_eq!(stats.hoisted, 1);
    let out = func.to_string();
    let entry = &out[..out.find("block1(").expect("the loop header stays")];
    assert!(
        entry.contains("imul v0, v1"),
        "hoisted to the preheader:\n{out}"
    );
    assert_eq!(out.matches("imul").count(), 1, "{out}");
    assert!(out.contains("select"), "{out}");
}
