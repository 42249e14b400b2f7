//! Throughput of the front half of Kestrel, reported as rates (not a test):
//! parse+verify of a large generated CLIF file (MB/s, instructions/s) and interpreter speed
//! on a loop-heavy function (executed instructions/s).
//!
//! `cargo bench -p kestrel-interp --bench throughput`

use std::fmt::Write;
use std::time::Instant;

use kestrel_interp::{DataValue, Interpreter};

/// A file of `funcs` functions, each a chain of `blocks` diamonds of integer arithmetic.
fn generate(funcs: usize, blocks: usize) -> (String, usize) {
    let mut s = String::new();
    let mut insts = 0;
    for f in 0..funcs {
        writeln!(s, "function %f{f}(i64, i64) -> i64 system_v {{").unwrap();
        writeln!(s, "block0(v0: i64, v1: i64):").unwrap();
        writeln!(s, "    jump block1(v0, v1)").unwrap();
        insts += 1;
        let mut v = 2;
        for b in 0..blocks {
            let head = 1 + 3 * b;
            writeln!(s, "block{head}(v{v}: i64, v{}: i64):", v + 1).unwrap();
            let (x, y) = (v, v + 1);
            writeln!(s, "    v{} = iadd v{x}, v{y}", v + 2).unwrap();
            writeln!(s, "    v{} = imul v{}, v{x}", v + 3, v + 2).unwrap();
            writeln!(s, "    v{} = bxor v{}, v{y}", v + 4, v + 3).unwrap();
            writeln!(s, "    v{} = icmp ult v{}, v{y}", v + 5, v + 4).unwrap();
            writeln!(
                s,
                "    brif v{}, block{}(v{}), block{}(v{})",
                v + 5,
                head + 1,
                v + 4,
                head + 2,
                v + 3
            )
            .unwrap();
            writeln!(s, "block{}(v{}: i64):", head + 1, v + 6).unwrap();
            writeln!(s, "    v{} = ishl v{}, v{y}", v + 7, v + 6).unwrap();
            writeln!(s, "    jump block{}(v{}, v{x})", head + 3, v + 7).unwrap();
            writeln!(s, "block{}(v{}: i64):", head + 2, v + 8).unwrap();
            writeln!(s, "    v{} = isub v{}, v{x}", v + 9, v + 8).unwrap();
            writeln!(s, "    jump block{}(v{}, v{y})", head + 3, v + 9).unwrap();
            insts += 9;
            v += 10;
        }
        let last = 1 + 3 * blocks;
        writeln!(s, "block{last}(v{v}: i64, v{}: i64):", v + 1).unwrap();
        writeln!(s, "    v{} = iadd v{v}, v{}", v + 2, v + 1).unwrap();
        writeln!(s, "    return v{}", v + 2).unwrap();
        writeln!(s, "}}\n").unwrap();
        insts += 2;
    }
    (s, insts)
}

fn main() {
    // Parse + verify.
    let (text, insts) = generate(200, 400);
    let mb = text.len() as f64 / 1e6;
    let reps = 5;
    let mut parse_secs = 0.0;
    let mut verify_secs = 0.0;
    for _ in 0..reps {
        let start = Instant::now();
        let funcs =
            kestrel_ir::parse_functions(&text, "generated.clif").expect("generated text parses");
        parse_secs += start.elapsed().as_secs_f64();
        let start = Instant::now();
        for f in &funcs {
            kestrel_ir::verify_function(f).expect("generated text verifies");
        }
        verify_secs += start.elapsed().as_secs_f64();
    }
    let (parse_secs, verify_secs) = (parse_secs / reps as f64, verify_secs / reps as f64);
    let both = parse_secs + verify_secs;
    println!(
        "parse+verify: {mb:.1} MB, {insts} instructions in {both:.3} s = {:.1} MB/s, {:.2} M instructions/s \
         (parse {parse_secs:.3} s, verify {verify_secs:.3} s)",
        mb / both,
        insts as f64 / both / 1e6
    );

    // Interpreter: the Collatz step counts of 1..=n, summed.
    let collatz = collatz_source();
    let funcs = kestrel_ir::parse_functions(&collatz, "collatz.clif").expect("parses");
    kestrel_ir::verify_function(&funcs[0]).expect("verifies");
    let mut interp = Interpreter::new(&funcs);
    let start = Instant::now();
    let out = interp
        .call("collatz_total", &[DataValue::I64(30_000)])
        .expect("runs");
    let secs = start.elapsed().as_secs_f64();
    let executed = interp.fuel_used();
    println!(
        "interpreter: {} instructions in {:.3} s = {:.1} M instructions/s (result {})",
        executed,
        secs,
        executed as f64 / secs / 1e6,
        out[0]
    );
}

/// Sum over i in 1..=n of the number of Collatz steps from i to 1.
fn collatz_source() -> String {
    "function %collatz_total(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    v2 = iconst.i64 1
    jump block1(v2, v1)
block1(v3: i64, v4: i64):
    v5 = icmp ugt v3, v0
    brif v5, block6(v4), block2(v3, v4)
block2(v6: i64, v7: i64):
    v8 = icmp eq v6, v2
    brif v8, block5(v7), block3(v6, v7)
block3(v9: i64, v10: i64):
    v11 = band v9, v2
    v12 = iadd v10, v2
    brif v11, block4(v9, v12), block7(v9, v12)
block4(v13: i64, v14: i64):
    v15 = imul v13, v2
    v16 = ishl v13, v2
    v17 = iadd v16, v15
    v18 = iadd v17, v2
    jump block2(v18, v14)
block7(v19: i64, v20: i64):
    v21 = ushr v19, v2
    jump block2(v21, v20)
block5(v22: i64):
    v23 = iadd v3, v2
    jump block1(v23, v22)
block6(v24: i64):
    return v24
}
"
    .to_string()
}
