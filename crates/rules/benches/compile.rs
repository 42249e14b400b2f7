//! Compile-time benchmark (not a test): a generated program of 3,000 rules over 200
//! terms, compiled end to end (parse, analysis, checks, match trees, Rust code).
//!
//! Run: `cargo bench -p kestrel-rules --bench compile` (release profile).
//! Target: under one second per compilation.

use kestrel_rules::{compile, gen, Backend, Options, SourceMap};
use std::time::{Duration, Instant};

fn main() {
    let terms = 200;
    let rules_per_term = 15;
    let text = gen::bench_program(terms, rules_per_term);
    let mut sources = SourceMap::new();
    sources.add("bench.rules", text.clone());
    for backend in [Backend::Tree, Backend::Naive] {
        let mut options = Options::default();
        options.codegen.backend = backend;
        let mut times: Vec<Duration> = Vec::new();
        let mut out_len = 0;
        for _ in 0..7 {
            let start = Instant::now();
            match compile(&sources, &options) {
                Ok(c) => out_len = c.code.len(),
                Err(d) => panic!("benchmark program does not compile:\n{}", d.render()),
            }
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "{backend:?}: {} rules over {terms} terms ({} KiB in, {} KiB out): min {:.1} ms, median {:.1} ms",
            terms * rules_per_term,
            text.len() / 1024,
            out_len / 1024,
            times[0].as_secs_f64() * 1e3,
            times[times.len() / 2].as_secs_f64() * 1e3,
        );
    }
}
