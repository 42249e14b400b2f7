//! Print case INDEX of campaign SEED as a test file (expected outcomes from the interpreter):
//! `cargo run --release -p kestrel-difftest --example show_case -- SEED INDEX`.
use kestrel_difftest::campaign::regenerate;
use kestrel_difftest::coverage::Coverage;
use kestrel_difftest::{GenConfig, InterpreterOracle, Oracle};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("SEED and INDEX are integers"))
        .collect();
    let [seed, index] = args[..] else {
        eprintln!("usage: show_case SEED INDEX");
        std::process::exit(1);
    };
    let Some(case) = regenerate(seed, index, &GenConfig::default()) else {
        eprintln!("the generator produced no case");
        std::process::exit(1);
    };
    let outcomes = InterpreterOracle
        .run(&case, 0, &mut Coverage::default())
        .unwrap_or_default();
    eprintln!("{} instructions", case.inst_count());
    print!("{}", case.to_test_file(&outcomes));
}
