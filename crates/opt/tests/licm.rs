//! Loop-invariant code motion's register budget: a loop takes at most `LOOP_REGISTERS`
//! values per register class out of it, counting those its header carries.

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::domtree::DominatorTree;
use kestrel_opt::{hoist_loop_invariants, LOOP_REGISTERS};

/// `function %f(i64, i64, f64)` with one loop whose header carries `carried` i64 values
/// (all zero on entry), `before` ahead of the loop and `body` in it.
fn loop_text(carried: usize, before: &str, body: &str) -> String {
    let params: Vec<String> = (0..carried).map(|k| format!("v{}: i64", 100 + k)).collect();
    let zeros = vec!["v3"; carried].join(", ");
    let next: Vec<String> = (0..carried).map(|k| format!("v{}", 100 + k)).collect();
    format!(
        "function %f(i64, i64, f64) {{
block0(v0: i64, v1: i64, v2: f64):
    v3 = iconst.i64 0
{before}    jump block1({zeros})
block1({params}):
{body}    brif v0, block1({next}), block2
block2:
    return
}}",
        params = params.join(", "),
        next = next.join(", "),
    )
}

/// A loop whose header carries `carried` i64 values, with `invariant` distinct integer
/// additions of a parameter and a constant made before the loop and one float addition in
/// its body, each used by a store so it stays, and a movable load.
fn loop_with(carried: usize, invariant: usize) -> String {
    let (mut consts, mut body) = (String::new(), String::new());
    for k in 0..invariant {
        consts += &format!("    v{} = iconst.i64 {}\n", 300 + k, k + 1);
        body += &format!("    v{} = iadd v0, v{}\n", 200 + k, 300 + k);
        body += &format!("    store v{}, v1+{}\n", 200 + k, 8 * k);
    }
    body += "    v4 = fadd v2, v2
    store v4, v1
    v5 = load.i64 notrap aligned readonly can_move v1+800
    store v5, v1+808
";
    loop_text(carried, &consts, &body)
}

fn hoisted(text: &str) -> usize {
    let mut funcs = kestrel_ir::parse_functions(text, "licm.rs").expect("the case parses");
    let mut func = funcs.remove(0);
    let cfg = ControlFlowGraph::compute(&func);
    let domtree = DominatorTree::compute(&func, &cfg);
    let moved = hoist_loop_invariants(&mut func, &cfg, &domtree);
    kestrel_ir::verify_function(&func).expect("the result verifies");
    moved
}

#[test]
fn a_loop_gives_up_only_the_registers_its_header_leaves() {
    // Two carried values: room for LOOP_REGISTERS - 2 integers, the float separately, and
    // the movable load regardless.
    assert_eq!(hoisted(&loop_with(2, 20)), LOOP_REGISTERS - 2 + 1 + 1);
    // Few invariants: all of them move.
    assert_eq!(hoisted(&loop_with(2, 3)), 3 + 1 + 1);
    // A loop carrying as many integers as there are registers keeps its integer
    // invariants; its float one and its load still move.
    assert_eq!(hoisted(&loop_with(LOOP_REGISTERS, 5)), 2);
}

/// A loop with room for one more integer: an instruction with one integer result moves,
/// one with two (an overflow add) does not, since both its results would be carried.
#[test]
fn an_instruction_takes_a_place_per_result() {
    let case = |invariant: &str| {
        loop_text(
            LOOP_REGISTERS - 1,
            "",
            &format!("    {invariant}\n    store v10, v1\n"),
        )
    };
    assert_eq!(hoisted(&case("v10 = iadd v0, v1")), 1);
    assert_eq!(hoisted(&case("v10, v11 = uadd_overflow v0, v1")), 0);
}
