//! Generation speed: `cargo run --release -p kestrel-fuzzgen --example speed [cases [target_insts]]`.
//! Prints the time per case and the mean size; also the interpreter's dynamic instruction
//! counts (mean and max per run).

use std::time::Instant;

use kestrel_fuzzgen::{generate, GenConfig, Unstructured};
use kestrel_interp::Interpreter;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let inputs: Vec<Vec<u8>> = (0..n)
        .map(|_| {
            (0..8192)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect();
    let mut cfg = GenConfig::default();
    if let Some(t) = std::env::args().nth(2).and_then(|s| s.parse().ok()) {
        cfg.target_insts = t;
    }
    let start = Instant::now();
    let cases: Vec<_> = inputs
        .iter()
        .map(|b| generate(&mut Unstructured::new(b), &cfg).unwrap())
        .collect();
    let elapsed = start.elapsed();
    let insts: usize = cases.iter().map(|c| c.inst_count()).sum();
    println!(
        "{n} cases in {elapsed:?}: {:.1} us/case, mean {:.1} insts/case, {:.0} ns/inst",
        elapsed.as_secs_f64() * 1e6 / n as f64,
        insts as f64 / n as f64,
        elapsed.as_secs_f64() * 1e9 / insts as f64
    );
    let (mut runs, mut fuel, mut max) = (0u64, 0u64, 0u64);
    for c in &cases {
        let mut interp = Interpreter::new(&c.functions).with_fuel(Some(1_000_000));
        for a in &c.args {
            let _ = interp.call_index(0, a);
            runs += 1;
            fuel += interp.fuel_used();
            max = max.max(interp.fuel_used());
        }
    }
    println!(
        "dynamic instructions per run: mean {}, max {max}",
        fuel / runs
    );
}
