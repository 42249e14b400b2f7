//! Prints one generated case and its allocation: `cargo run --example dump -- SEED INDEX`.
use kestrel_regalloc::{allocate, Options};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let index = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let case = kestrel_regalloc::stress::case(seed, index);
    println!("{:?}", case.env);
    println!("{}", case.func);
    match allocate(&case.func, &case.env, Options::default()) {
        Ok(out) => {
            for i in 0..case.func.insts.len() {
                println!(
                    "inst{i}: {:?}",
                    out.inst_allocs(kestrel_regalloc::Inst(i as u32))
                );
            }
            for (p, e) in &out.edits {
                println!("{p:?}: {} -> {}", e.from, e.to);
            }
            println!(
                "{:?}",
                kestrel_regalloc::checker::check(&case.func, &case.env, &out)
            );
        }
        Err(e) => println!("error: {e}"),
    }
}
