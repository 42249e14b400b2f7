//! Time per phase over stress cases, checker on:
//! `cargo run --release --example passes -- SEED COUNT REPS`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let reps = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let cases: Vec<_> = (0..count)
        .map(|i| kestrel_regalloc::stress::case(seed, i))
        .collect();
    let options = kestrel_regalloc::Options {
        check: true,
        timing: true,
        ..Default::default()
    };
    let mut total = kestrel_regalloc::PhaseTimes::default();
    for _ in 0..reps {
        for c in &cases {
            let out = kestrel_regalloc::allocate(&c.func, &c.env, options).unwrap();
            total += out.times;
        }
    }
    println!("{total:#?}");
}
