//! Redundant load elimination and the hoisting of movable loads, on IR text: each case is
//! a function before and the function expected after the pass (printed text, compared
//! exactly), including the cases that must not merge.

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::Function;
use kestrel_opt::{eliminate_redundant_loads, hoist_loop_invariants};

fn parse(text: &str) -> Function {
    let mut funcs = kestrel_ir::parse_functions(text, "loads.rs").expect("the case parses");
    assert_eq!(funcs.len(), 1);
    funcs.remove(0)
}

fn analyses(func: &Function) -> (ControlFlowGraph, DominatorTree) {
    let cfg = ControlFlowGraph::compute(func);
    let domtree = DominatorTree::compute(func, &cfg);
    (cfg, domtree)
}

/// Run the load pass on `before`: it must remove `removed` loads, verify, and print as
/// `after`.
fn check_loads(before: &str, removed: usize, after: &str) {
    let mut func = parse(before);
    let (_, domtree) = analyses(&func);
    assert_eq!(eliminate_redundant_loads(&mut func, &domtree), removed);
    kestrel_ir::verify_function(&func).expect("the result verifies");
    assert_eq!(func.to_string().trim(), after.trim(), "\nbefore:\n{before}");
}

/// A case that must come out unchanged.
fn check_kept(text: &str) {
    let printed = parse(text).to_string();
    check_loads(text, 0, &printed);
}

#[test]
fn an_equal_load_in_the_same_block_is_reused() {
    check_loads(
        "function %f(i64) -> i64 {
block0(v0: i64):
    v1 = load.i64 v0+8
    v2 = load.i64 v0+8
    v3 = iadd v1, v2
    return v3
}",
        1,
        "function %f(i64) -> i64 system_v {
block0(v0: i64):
    v1 = load.i64 v0+8
    v2 -> v1
    v3 = iadd v1, v1
    return v3
}",
    );
}

#[test]
fn a_store_between_keeps_the_second_load() {
    check_kept(
        "function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = load.i64 v0+8
    store v1, v1
    v3 = load.i64 v0+8
    v4 = iadd v2, v3
    return v4
}",
    );
}

#[test]
fn a_call_between_keeps_the_second_load() {
    check_kept(
        "function %f(i64) -> i64 {
    fn0 = %g()
block0(v0: i64):
    v1 = load.i64 notrap aligned v0+8
    call fn0()
    v2 = load.i64 notrap aligned v0+8
    v3 = iadd v1, v2
    return v3
}",
    );
}

#[test]
fn a_fence_or_an_atomic_between_keeps_the_second_load() {
    check_kept(
        "function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = load.i64 heap v0
    fence
    v3 = load.i64 heap v0
    v4 = atomic_load.i64 v1
    v5 = load.i64 heap v0
    v6 = iadd v2, v3
    v7 = iadd v6, v5
    v8 = iadd v7, v4
    return v8
}",
    );
}

#[test]
fn different_flags_offsets_types_or_addresses_do_not_merge() {
    check_kept(
        "function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = load.i64 v0+8
    v3 = load.i64 notrap v0+8
    v4 = load.i64 v0+16
    v5 = load.i64 v1+8
    v6 = uload32.i64 v0+8
    v7 = load.i64 readonly v0+8
    v8 = iadd v2, v3
    v9 = iadd v8, v4
    v10 = iadd v9, v5
    v11 = iadd v10, v6
    v12 = iadd v11, v7
    return v12
}",
    );
}

#[test]
fn a_store_in_another_region_keeps_the_load_available() {
    check_loads(
        "function %f(i64, i64, i32) -> i32 {
block0(v0: i64, v1: i64, v2: i32):
    v3 = load.i32 notrap aligned vmctx v0+8
    store.i32 heap v2, v1
    v4 = load.i32 notrap aligned vmctx v0+8
    v5 = iadd v3, v4
    return v5
}",
        1,
        "function %f(i64, i64, i32) -> i32 system_v {
block0(v0: i64, v1: i64, v2: i32):
    v3 = load.i32 notrap aligned vmctx v0+8
    v4 -> v3
    store heap v2, v1
    v5 = iadd v3, v3
    return v5
}",
    );
}

#[test]
fn a_store_in_the_same_region_or_without_one_clobbers() {
    check_kept(
        "function %f(i64, i64, i32) -> i32 {
block0(v0: i64, v1: i64, v2: i32):
    v3 = load.i32 vmctx v0+8
    store.i32 vmctx v2, v1
    v4 = load.i32 vmctx v0+8
    store.i32 v2, v1
    v5 = load.i32 vmctx v0+8
    v6 = load.i32 v0+12
    store.i32 heap v2, v1
    v7 = load.i32 v0+12
    v8 = iadd v3, v4
    v9 = iadd v8, v5
    v10 = iadd v9, v6
    v11 = iadd v10, v7
    return v11
}",
    );
}

#[test]
fn a_readonly_load_is_reused_in_dominated_blocks_across_calls() {
    check_loads(
        "function %f(i64, i32) -> i64 {
    fn0 = %g()
block0(v0: i64, v1: i32):
    v2 = load.i64 notrap aligned readonly v0+8
    v3 = load.i64 notrap aligned v0+16
    call fn0()
    brif v1, block1, block2
block1:
    v4 = load.i64 notrap aligned readonly v0+8
    v5 = load.i64 notrap aligned v0+16
    v6 = iadd v4, v5
    return v6
block2:
    return v2
}",
        1,
        "function %f(i64, i32) -> i64 system_v {
    sig0 = () system_v
    fn0 = %g sig0

block0(v0: i64, v1: i32):
    v2 = load.i64 notrap aligned readonly v0+8
    v4 -> v2
    v3 = load.i64 notrap aligned v0+16
    call fn0()
    brif v1, block1, block2

block1:
    v5 = load.i64 notrap aligned v0+16
    v6 = iadd.i64 v2, v5
    return v6

block2:
    return v2
}",
    );
}

#[test]
fn a_readonly_load_in_a_sibling_block_is_not_reused() {
    check_kept(
        "function %f(i64, i32) -> i64 {
block0(v0: i64, v1: i32):
    brif v1, block1, block2
block1:
    v2 = load.i64 notrap aligned readonly v0+8
    jump block3(v2)
block2:
    v3 = load.i64 notrap aligned readonly v0+8
    jump block3(v3)
block3(v4: i64):
    v5 = load.i64 notrap aligned readonly v0+8
    v6 = iadd v4, v5
    return v6
}",
    );
}

const LOOP: &str = "function %f(i64, i32) -> i64 {
block0(v0: i64, v1: i32):
    v2 = iconst.i64 0
    jump block1(v1, v2)
block1(v3: i32, v4: i64):
    v5 = load.i64 notrap aligned readonly can_move v0+8
    v6 = load.i64 notrap aligned readonly v0+16
    v7 = load.i64 aligned readonly can_move v0+24
    v8 = iadd v4, v5
    v9 = iadd v8, v6
    v10 = iadd v9, v7
    v11 = iconst.i32 1
    v12 = isub v3, v11
    brif v12, block1(v12, v10), block2
block2:
    return v10
}";

#[test]
fn licm_hoists_only_loads_that_are_readonly_notrap_and_can_move() {
    let mut func = parse(LOOP);
    let (cfg, domtree) = analyses(&func);
    assert_eq!(hoist_loop_invariants(&mut func, &cfg, &domtree), 1);
    kestrel_ir::verify_function(&func).expect("the result verifies");
    let printed = func.to_string();
    let preheader = printed
        .split("\nblock1(")
        .nth(1)
        .expect("block0 jumps to block1");
    let entry = &printed[..printed.len() - preheader.len()];
    assert!(entry.contains("readonly can_move v0+8"), "{printed}");
    assert!(
        !entry.contains("v0+16") && !entry.contains("v0+24"),
        "{printed}"
    );
}

/// Two arms of a loop compute the same address from invariant operands; neither arm
/// dominates the other, so GVN keeps both, and both move to the preheader.
const TWO_ARMS: &str = "function %f(i64, i32, i64) -> i64 {
block0(v0: i64, v1: i32, v2: i64):
    v3 = iconst.i64 0
    jump block1(v3)
block1(v4: i64):
    brif v4, block2, block3
block2:
    v5 = uextend.i64 v1
    v6 = iadd v0, v5
    v7 = load.i64 v6
    jump block4(v7)
block3:
    v8 = uextend.i64 v1
    v9 = iadd v0, v8
    v10 = load.i64 v9+8
    jump block4(v10)
block4(v11: i64):
    v12 = iadd v4, v11
    v13 = icmp ult v12, v2
    brif v13, block1(v12), block5
block5:
    return v12
}";

#[test]
fn licm_keeps_one_of_equal_instructions_moved_to_a_preheader() {
    let mut func = parse(TWO_ARMS);
    let (cfg, domtree) = analyses(&func);
    // Four instructions leave the loop; the second `uextend` and `iadd` merge into the
    // first ones.
    assert_eq!(hoist_loop_invariants(&mut func, &cfg, &domtree), 4);
    kestrel_ir::verify_function(&func).expect("the result verifies");
    let printed = func.to_string();
    let entry = printed.split("\nblock1(").next().expect("an entry block");
    // One of each is left, in the preheader (the other's results are aliases of it).
    assert_eq!(printed.matches("uextend.i64 v1").count(), 1, "{printed}");
    assert_eq!(printed.matches("= iadd v0, ").count(), 1, "{printed}");
    assert!(
        entry.contains("uextend.i64 v1") && entry.contains("= iadd v0, "),
        "{printed}"
    );
    // Both loads read through the one address left.
    let address = |load: &str| {
        let line = printed
            .lines()
            .find(|l| l.contains(load))
            .expect("the load is kept");
        line.split_whitespace()
            .last()
            .expect("an operand")
            .to_string()
    };
    let (a, b) = (address("load.i64 v"), address("+8"));
    assert_eq!(format!("{a}+8"), b, "{printed}");
}
