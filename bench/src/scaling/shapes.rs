//! CLIF generators for the scaling benchmark: one function per shape and size, in text
//! both Kestrel's and Cranelift's parsers take. Each shape stresses one dimension while the
//! others stay bounded, so a superlinear phase shows up as growth on that shape alone.

use std::fmt::Write;

/// A shape: its name, what its size counts, the three sizes measured, and its generator.
pub struct Shape {
    pub name: &'static str,
    pub unit: &'static str,
    pub base: usize,
    pub generate: fn(usize) -> String,
}

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "chain",
        unit: "blocks",
        base: 10_000,
        generate: chain,
    },
    Shape {
        name: "diamonds",
        unit: "diamonds",
        base: 5_000,
        generate: diamonds,
    },
    Shape {
        name: "empty blocks",
        unit: "blocks",
        base: 10_000,
        generate: empty_chain,
    },
    Shape {
        name: "fan-in",
        unit: "branches",
        base: 10_000,
        generate: fan_in,
    },
    Shape {
        name: "br_table",
        unit: "targets",
        base: 5_000,
        generate: br_table,
    },
    Shape {
        name: "br_table shared",
        unit: "entries",
        base: 5_000,
        generate: br_table_shared,
    },
    Shape {
        name: "one block",
        unit: "insts",
        base: 50_000,
        generate: one_block,
    },
    Shape {
        name: "loop nests",
        unit: "loops",
        base: 1_000,
        generate: loop_nests,
    },
    Shape {
        name: "calls",
        unit: "calls",
        base: 5_000,
        generate: calls,
    },
    Shape {
        name: "live values",
        unit: "values",
        base: 2_000,
        generate: live_values,
    },
];

/// Hands out fresh value numbers.
struct Values(usize);

impl Values {
    fn next(&mut self) -> String {
        self.0 += 1;
        format!("v{}", self.0)
    }
}

/// `n` blocks in a chain, each adding one to the value it is passed.
fn chain(n: usize) -> String {
    let mut s =
        String::from("function %chain(i64) -> i64 {\nblock0(v0: i64):\n    jump block1(v0)\n");
    let mut v = Values(0);
    for b in 1..n {
        let (x, one, sum) = (v.next(), v.next(), v.next());
        let _ = write!(
            s,
            "block{b}({x}: i64):\n    {one} = iconst.i64 1\n    {sum} = iadd {x}, {one}\n    jump block{}({sum})\n",
            b + 1
        );
    }
    let x = v.next();
    let _ = write!(s, "block{n}({x}: i64):\n    return {x}\n}}\n");
    s
}

/// `n` if/else diamonds in a chain (three blocks each, the join being the next diamond's
/// head), as generated code is full of: each tests the running value's low bit, one arm
/// adds a constant, the other halves it, and the join takes the arm's value as a block
/// parameter. Dominator-tree depth, joins and edge moves all grow with `n`.
fn diamonds(n: usize) -> String {
    let mut s =
        String::from("function %diamonds(i64) -> i64 {\nblock0(v0: i64):\n    jump block1(v0)\n");
    let mut v = Values(0);
    for d in 0..n {
        let (head, then, other, join) = (3 * d + 1, 3 * d + 2, 3 * d + 3, 3 * d + 4);
        let [x, one, bit, k, sum, half] = [(); 6].map(|()| v.next());
        let _ = write!(
            s,
            "block{head}({x}: i64):\n    {one} = iconst.i64 1\n    {bit} = band {x}, {one}\n    \
             brif {bit}, block{then}, block{other}\n\
             block{then}:\n    {k} = iconst.i64 {c}\n    {sum} = iadd {x}, {k}\n    jump block{join}({sum})\n\
             block{other}:\n    {half} = ushr {x}, {one}\n    jump block{join}({half})\n",
            c = d % 7 + 1
        );
    }
    let x = v.next();
    let _ = write!(s, "block{}({x}: i64):\n    return {x}\n}}\n", 3 * n + 1);
    s
}

/// `n` blocks that only jump to the next one (the MachBuffer's branch simplification
/// removes every jump; their labels all end up at one offset).
fn empty_chain(n: usize) -> String {
    let mut s =
        String::from("function %empty_chain(i64) -> i64 {\nblock0(v0: i64):\n    jump block1\n");
    for b in 1..n {
        let _ = write!(s, "block{b}:\n    jump block{}\n", b + 1);
    }
    let _ = write!(s, "block{n}:\n    return v0\n}}\n");
    s
}

/// `n` blocks in a chain, each also branching to one shared exit block (which then has `n`
/// predecessors: a dominator computation's worst case for the iterative algorithm).
fn fan_in(n: usize) -> String {
    let mut s = String::from("function %fan_in(i64) -> i64 {\nblock0(v0: i64):\n    jump block1\n");
    for b in 1..n {
        let _ = write!(s, "block{b}:\n    brif v0, block{n}, block{}\n", b + 1);
    }
    let _ = write!(s, "block{n}:\n    return v0\n}}\n");
    s
}

/// A `br_table` with `n` targets, each returning its own constant.
fn br_table(n: usize) -> String {
    let targets: Vec<String> = (2..n + 2).map(|b| format!("block{b}")).collect();
    let mut s = format!(
        "function %br_table(i32) -> i64 {{\nblock0(v0: i32):\n    br_table v0, block1, [{}]\nblock1:\n    v1 = iconst.i64 -1\n    return v1\n",
        targets.join(", ")
    );
    for b in 2..n + 2 {
        let _ = write!(s, "block{b}:\n    v{b} = iconst.i64 {b}\n    return v{b}\n");
    }
    s.push_str("}\n");
    s
}

/// A `br_table` with `n` entries over `n / 16` targets (as Wasm's `br_table` often is):
/// every target has many predecessors, so every entry's edge is critical and split.
fn br_table_shared(n: usize) -> String {
    let targets = (n / 16).max(2);
    let entries: Vec<String> = (0..n)
        .map(|k| format!("block{}", 2 + k % targets))
        .collect();
    let mut s = format!(
        "function %br_table_shared(i32) -> i64 {{\nblock0(v0: i32):\n    br_table v0, block1, [{}]\nblock1:\n    v1 = iconst.i64 -1\n    return v1\n",
        entries.join(", ")
    );
    for b in 2..targets + 2 {
        let _ = write!(s, "block{b}:\n    v{b} = iconst.i64 {b}\n    return v{b}\n");
    }
    s.push_str("}\n");
    s
}

/// One block of `n` instructions: a running sum of loaded values plus constants.
fn one_block(n: usize) -> String {
    let mut s = String::from("function %one_block(i64) -> i64 {\nblock0(v0: i64):\n");
    let mut v = Values(0);
    let mut acc = "v0".to_string();
    for i in 0..n / 4 {
        let (x, c, t, sum) = (v.next(), v.next(), v.next(), v.next());
        let _ = writeln!(s, "    {x} = load.i64 v0+{}", 8 * (i % 64));
        let _ = writeln!(s, "    {c} = iconst.i64 {i}");
        let _ = writeln!(s, "    {t} = iadd {x}, {c}");
        let _ = writeln!(s, "    {sum} = iadd {acc}, {t}");
        acc = sum;
    }
    let _ = write!(s, "    return {acc}\n}}\n");
    s
}

/// Depth of every nest in [`loop_nests`].
const NEST_DEPTH: usize = 8;

/// `n` loops, as `n / NEST_DEPTH` nests of depth `NEST_DEPTH` one after another; every
/// level counts to ten and the innermost adds all counters into an accumulator.
fn loop_nests(n: usize) -> String {
    let mut s = String::from("function %loop_nests(i64) -> i64 {\nblock0(v0: i64):\n");
    let mut v = Values(0);
    let mut next_block = 1;
    let mut block = || {
        next_block += 1;
        format!("block{}", next_block - 1)
    };
    let mut entry = block();
    let _ = writeln!(s, "    jump {entry}(v0)");
    for _ in 0..n / NEST_DEPTH {
        // `entry(acc)` starts the nest; its levels' blocks are named here so the exits
        // can jump back to the enclosing latch.
        let headers: Vec<String> = (0..NEST_DEPTH).map(|_| block()).collect();
        let bodies: Vec<String> = (0..NEST_DEPTH).map(|_| block()).collect();
        let exits: Vec<String> = (0..NEST_DEPTH).map(|_| block()).collect();
        let a = v.next();
        let zero = v.next();
        let _ = write!(
            s,
            "{entry}({a}: i64):\n    {zero} = iconst.i64 0\n    jump {}({zero}, {a})\n",
            headers[0]
        );
        // Per level: header(c, acc) tests c < 10; body enters the next level (or adds, at
        // the innermost); exit(acc) steps the enclosing counter.
        let mut counters = Vec::new();
        for l in 0..NEST_DEPTH {
            let (c, a, ten, cmp) = (v.next(), v.next(), v.next(), v.next());
            let _ = write!(
                s,
                "{}({c}: i64, {a}: i64):\n    {ten} = iconst.i64 10\n    {cmp} = icmp ult {c}, {ten}\n    brif {cmp}, {}, {}({a})\n",
                headers[l], bodies[l], exits[l]
            );
            counters.push(c.clone());
            let _ = writeln!(s, "{}:", bodies[l]);
            if l + 1 < NEST_DEPTH {
                let z = v.next();
                let _ = write!(
                    s,
                    "    {z} = iconst.i64 0\n    jump {}({z}, {a})\n",
                    headers[l + 1]
                );
            } else {
                let mut sum = a.clone();
                for c in &counters {
                    let t = v.next();
                    let _ = writeln!(s, "    {t} = iadd {sum}, {c}");
                    sum = t;
                }
                let one = v.next();
                let step = v.next();
                let _ = write!(
                    s,
                    "    {one} = iconst.i64 1\n    {step} = iadd {c}, {one}\n    jump {}({step}, {sum})\n",
                    headers[l]
                );
            }
        }
        // Exits, innermost first: step the enclosing counter; the outermost leaves.
        let after = block();
        for l in (0..NEST_DEPTH).rev() {
            let a = v.next();
            let _ = writeln!(s, "{}({a}: i64):", exits[l]);
            if l == 0 {
                let _ = writeln!(s, "    jump {after}({a})");
            } else {
                let (one, step) = (v.next(), v.next());
                let _ = write!(
                    s,
                    "    {one} = iconst.i64 1\n    {step} = iadd {}, {one}\n    jump {}({step}, {a})\n",
                    counters[l - 1],
                    headers[l - 1]
                );
            }
        }
        entry = after;
    }
    let last = v.next();
    let _ = write!(s, "{entry}({last}: i64):\n    return {last}\n}}\n");
    s
}

/// `n` calls, one per block, with four values live across each.
fn calls(n: usize) -> String {
    let mut s = String::from(
        "function %calls(i64, i64, i64, i64) -> i64 {\n    fn0 = %callee(i64, i64) -> i64\nblock0(v0: i64, v1: i64, v2: i64, v3: i64):\n    jump block1(v0, v1, v2, v3)\n",
    );
    let mut v = Values(3);
    for b in 1..=n {
        let (a, bb, c, d) = (v.next(), v.next(), v.next(), v.next());
        let (t, e) = (v.next(), v.next());
        let _ = write!(
            s,
            "block{b}({a}: i64, {bb}: i64, {c}: i64, {d}: i64):\n    {t} = call fn0({a}, {bb})\n    {e} = iadd {t}, {a}\n    jump block{}({bb}, {c}, {d}, {e})\n",
            b + 1
        );
    }
    let (a, bb, c, d) = (v.next(), v.next(), v.next(), v.next());
    let r = v.next();
    let _ = write!(
        s,
        "block{}({a}: i64, {bb}: i64, {c}: i64, {d}: i64):\n    {r} = iadd {a}, {d}\n    return {r}\n}}\n",
        n + 1
    );
    s
}

/// `n` values loaded up front and all live until a sum at the end reads them.
fn live_values(n: usize) -> String {
    let mut s = String::from("function %live_values(i64) -> i64 {\nblock0(v0: i64):\n");
    let mut v = Values(0);
    let loaded: Vec<String> = (0..n)
        .map(|i| {
            let x = v.next();
            let _ = writeln!(s, "    {x} = load.i64 v0+{}", 8 * (i % 512));
            x
        })
        .collect();
    let mut acc = "v0".to_string();
    for x in loaded.iter().rev() {
        let t = v.next();
        let _ = writeln!(s, "    {t} = iadd {acc}, {x}");
        acc = t;
    }
    let _ = write!(s, "    return {acc}\n}}\n");
    s
}
