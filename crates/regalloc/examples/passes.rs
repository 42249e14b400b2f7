//! Time per pass over stress cases: `cargo run --release --example passes -- SEED COUNT REPS`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let reps = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let cases: Vec<_> = (0..count)
        .map(|i| kestrel_regalloc::stress::case(seed, i))
        .collect();
    let mut total = [std::time::Duration::ZERO; 6];
    for _ in 0..reps {
        for c in &cases {
            let t = kestrel_regalloc::pass_times(&c.func, &c.env);
            total[..5].iter_mut().zip(t).for_each(|(a, b)| *a += b);
            let out = kestrel_regalloc::allocate(&c.func, &c.env, Default::default()).unwrap();
            let start = std::time::Instant::now();
            kestrel_regalloc::checker::check(&c.func, &c.env, &out).unwrap();
            total[5] += start.elapsed();
        }
    }
    let names = [
        "validate",
        "liveness",
        "intervals",
        "scan",
        "resolve",
        "checker",
    ];
    for (n, t) in names.iter().zip(total) {
        println!("{n:<10} {:?}", t);
    }
}
