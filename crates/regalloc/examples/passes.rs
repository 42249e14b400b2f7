//! Time per pass over stress cases: `cargo run --release --example passes -- SEED COUNT REPS`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let reps = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let cases: Vec<_> = (0..count)
        .map(|i| kestrel_regalloc::stress::case(seed, i))
        .collect();
    let mut total = [std::time::Duration::ZERO; 5];
    for _ in 0..reps {
        for c in &cases {
            let t = kestrel_regalloc::pass_times(&c.func, &c.env);
            for k in 0..5 {
                total[k] += t[k];
            }
        }
    }
    let names = ["validate", "liveness", "intervals", "scan", "resolve"];
    for (n, t) in names.iter().zip(total) {
        println!("{n:<10} {:?}", t);
    }
}
