//! Allocates the stress cases repeatedly (for profiling): `cargo run --release --example profile -- SEED COUNT REPS`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let reps = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let cases: Vec<_> = (0..count)
        .map(|i| kestrel_regalloc::stress::case(seed, i))
        .collect();
    let start = std::time::Instant::now();
    let mut edits = 0;
    for _ in 0..reps {
        for c in &cases {
            let out =
                kestrel_regalloc::allocate(&c.func, &c.env, kestrel_regalloc::Options::default())
                    .unwrap();
            edits += out.edits.len();
        }
    }
    println!("{:?} ({edits} edits)", start.elapsed());
}
