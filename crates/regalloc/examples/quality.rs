//! Prints Kestrel's depth-weighted edit cost on stress cases (as the bench computes it):
//! `cargo run --release --example quality -- SEED COUNT`.
use kestrel_regalloc::{allocate, loop_depths, Function, Options};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let (mut moves, mut spills, mut reloads) = (0u64, 0u64, 0u64);
    for i in 0..count {
        let case = kestrel_regalloc::stress::case(seed, i);
        let out = allocate(&case.func, &case.env, Options::default()).unwrap();
        let depths = loop_depths(&case.func);
        let mut block_of = vec![0; case.func.num_insts()];
        for (b, block) in case.func.blocks.iter().enumerate() {
            for i in block.insts.iter() {
                block_of[i.index()] = b;
            }
        }
        for (p, e) in &out.edits {
            let w = 10u64.pow(depths[block_of[p.inst().index()]].min(4));
            match (e.from.is_stack(), e.to.is_stack()) {
                (false, true) => spills += w,
                (true, false) => reloads += w,
                _ => moves += w,
            }
        }
    }
    println!(
        "weighted: moves {moves} spills {spills} reloads {reloads} total {}",
        moves + spills + reloads
    );
}
