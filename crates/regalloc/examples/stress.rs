//! Runs the stress driver: `cargo run --example stress -- SEED COUNT [faults]`.
fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let inject_faults = args.get(3).is_some_and(|s| s == "faults");
    let options = kestrel_regalloc::stress::StressOptions {
        seed,
        count,
        inject_faults,
        perturb: None,
    };
    kestrel_regalloc::stress::run(&options, &mut std::io::stdout())?;
    Ok(())
}
