//! Prints a generated rule program: `cargo run --example gen_program -- random SEED`
//! or `-- bench TERMS RULES_PER_TERM`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let text = match args.first().map(String::as_str) {
        Some("bench") => {
            kestrel_rules::gen::bench_program(num(1, 200) as usize, num(2, 15) as usize)
        }
        _ => kestrel_rules::gen::random_program(num(1, 1), 24),
    };
    print!("{text}");
}
