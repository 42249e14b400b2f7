//! A 20,000-block function, and one block of long dependency chains, through the whole
//! pipeline with every check on (the allocation checker, the `MachBuffer` validator), then
//! run natively.
//!
//! Size only: no timing is asserted. A phase whose cost is quadratic in the number of
//! blocks (the old dense liveness needed gigabytes at this size) shows up as this test
//! hanging or running out of memory in CI; a phase that recurses along a chain of operands
//! (address folding, rewrite rules, value numbering) shows up as a stack overflow on the
//! test thread's 2 MiB debug-build stack.

use std::fmt::Write;

use kestrel_codegen::settings::{Flags, OptLevel};
use kestrel_jit::{JitModule, Value};

/// Segments of five blocks each; with the split critical edges, about 20,000 blocks.
const SEGMENTS: usize = 4_000;
/// Values defined at the entry and read all over the function (live across every block).
const KEPT: usize = 6;
/// Times the outer loop runs over all segments.
const ROUNDS: u64 = 3;

/// The CLIF text: `entry(n)` defines the kept values, then `ROUNDS` times through
/// `SEGMENTS` segments, each a four-way `br_table` dispatch on the accumulator's low bits
/// (two entries share a target, so those edges are critical) joined in one block that
/// mixes in a kept value.
fn large_function() -> String {
    let mut s = String::from("function %large(i64) -> i64 {\nblock0(v0: i64):\n");
    let mut v = 0;
    let mut next = || {
        v += 1;
        format!("v{v}")
    };
    let mut kept = Vec::new();
    for k in 0..KEPT {
        let (c, x) = (next(), next());
        let _ = write!(
            s,
            "    {c} = iconst.i64 {}\n    {x} = imul v0, {c}\n",
            3 + 2 * k
        );
        kept.push(x);
    }
    let zero = next();
    let _ = write!(
        s,
        "    {zero} = iconst.i64 0\n    jump block1(v0, {zero})\n"
    );
    // block1(acc, round): the loop header over all segments.
    let (acc, round) = (next(), next());
    let _ = writeln!(s, "block1({acc}: i64, {round}: i64):");
    let _ = writeln!(s, "    jump block2({acc})");
    let mut block = 2;
    for i in 0..SEGMENTS {
        let (a, b, c, d, e) = (block, block + 1, block + 2, block + 3, block + 4);
        let (x, three, t, t32) = (next(), next(), next(), next());
        let _ = write!(
            s,
            "block{a}({x}: i64):\n    {three} = iconst.i64 3\n    {t} = band {x}, {three}\n    {t32} = ireduce.i32 {t}\n    br_table {t32}, block{d}, [block{b}, block{c}, block{d}, block{d}]\n"
        );
        let (k1, y1) = (next(), next());
        let _ = write!(
            s,
            "block{b}:\n    {k1} = iconst.i64 {}\n    {y1} = iadd {x}, {k1}\n    jump block{e}({y1})\n",
            i + 1
        );
        let (k2, y2) = (next(), next());
        let _ = write!(
            s,
            "block{c}:\n    {k2} = iconst.i64 5\n    {y2} = imul {x}, {k2}\n    jump block{e}({y2})\n"
        );
        let (k3, y3) = (next(), next());
        let _ = write!(
            s,
            "block{d}:\n    {k3} = iconst.i64 {}\n    {y3} = isub {x}, {k3}\n    jump block{e}({y3})\n",
            2 * i + 1
        );
        let (y, z) = (next(), next());
        let _ = write!(
            s,
            "block{e}({y}: i64):\n    {z} = iadd {y}, {}\n    jump block{}({z})\n",
            kept[i % KEPT],
            e + 1
        );
        block += 5;
    }
    // block{block}(acc): next round or return.
    let (fin, one, r1, limit, more) = (next(), next(), next(), next(), next());
    let _ = write!(
        s,
        "block{block}({fin}: i64):\n    {one} = iconst.i64 1\n    {r1} = iadd {round}, {one}\n    {limit} = iconst.i64 {ROUNDS}\n    {more} = icmp ult {r1}, {limit}\n    brif {more}, block{}, block{}\n",
        block + 1,
        block + 2
    );
    let _ = write!(
        s,
        "block{}:\n    jump block1({fin}, {r1})\nblock{}:\n    return {fin}\n}}\n",
        block + 1,
        block + 2
    );
    s
}

/// The same computation in Rust.
fn expected(n: u64) -> u64 {
    let kept: Vec<u64> = (0..KEPT as u64)
        .map(|k| n.wrapping_mul(3 + 2 * k))
        .collect();
    let mut acc = n;
    for _ in 0..ROUNDS {
        for i in 0..SEGMENTS as u64 {
            acc = match acc & 3 {
                0 => acc.wrapping_add(i + 1),
                1 => acc.wrapping_mul(5),
                _ => acc.wrapping_sub(2 * i + 1),
            };
            acc = acc.wrapping_add(kept[i as usize % KEPT]);
        }
    }
    acc
}

#[test]
fn twenty_thousand_blocks_compile_with_every_check_and_run() {
    let text = large_function();
    let funcs = kestrel_ir::text::parse_functions(&text, "large.clif").expect("parses");
    let f = &funcs[0];
    assert!(
        f.layout.blocks().len() >= 20_000,
        "{} blocks",
        f.layout.blocks().len()
    );
    let flags = Flags {
        check_regalloc: true,
        validate: true,
        ..Flags::default()
    };
    let mut module = JitModule::new();
    let id = module
        .define_ir(f, &flags)
        .expect("compiles with the checker on");
    module.finalize_definitions().unwrap();
    for n in [0u64, 1, 7, 0x1234_5678_9abc] {
        let out = unsafe { module.call(id, &[Value::I64(n as i64)]) }.unwrap();
        assert_eq!(out, [Value::I64(expected(n) as i64)], "n = {n}");
    }
}

/// Length of each dependency chain of [`chains`].
const CHAIN: usize = 30_000;

/// One block: `a` adds `x` to itself `CHAIN` times; a load's address is `p` plus a zero
/// constant `CHAIN` times (folding candidates all the way down); `m` is the running
/// unsigned maximum of `x` and itself through `CHAIN` compare-and-selects. Returns
/// `a + [p] + m`.
fn chains() -> String {
    let mut s = String::from(
        "function %chains(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = iconst.i64 0\n",
    );
    let mut v = 2;
    let mut next = || {
        v += 1;
        format!("v{v}")
    };
    let (mut a, mut p, mut m) = ("v1".to_string(), "v0".to_string(), "v2".to_string());
    for _ in 0..CHAIN {
        let (a2, p2, c, m2) = (next(), next(), next(), next());
        let _ = write!(
            s,
            "    {a2} = iadd {a}, v1\n    {p2} = iadd {p}, v2\n    {c} = icmp ult {m}, v1\n    {m2} = select {c}, v1, {m}\n"
        );
        (a, p, m) = (a2, p2, m2);
    }
    let (loaded, sum, total) = (next(), next(), next());
    let _ = write!(
        s,
        "    {loaded} = load.i64 {p}\n    {sum} = iadd {a}, {loaded}\n    {total} = iadd {sum}, {m}\n    return {total}\n}}\n"
    );
    s
}

#[test]
fn long_dependency_chains_compile_at_both_levels_with_every_check_and_run() {
    let text = chains();
    let funcs = kestrel_ir::text::parse_functions(&text, "chains.clif").expect("parses");
    let cell: Box<u64> = Box::new(0x0123_4567);
    for opt_level in [OptLevel::None, OptLevel::Speed] {
        let flags = Flags {
            check_regalloc: true,
            validate: true,
            opt_level,
            ..Flags::default()
        };
        let mut module = JitModule::new();
        let id = module
            .define_ir(&funcs[0], &flags)
            .unwrap_or_else(|e| panic!("{opt_level:?}: {e}"));
        module.finalize_definitions().unwrap();
        for x in [0u64, 3, u64::MAX / 5] {
            let ptr = &*cell as *const u64 as i64;
            let out = unsafe { module.call(id, &[Value::I64(ptr), Value::I64(x as i64)]) }.unwrap();
            let a = x.wrapping_mul(CHAIN as u64 + 1);
            let expected = a.wrapping_add(*cell).wrapping_add(x);
            assert_eq!(out, [Value::I64(expected as i64)], "{opt_level:?}, x = {x}");
        }
    }
}
