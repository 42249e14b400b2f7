//! Adaptive, alternating timing of one function under both compilers.
//!
//! After a warm-up compile per engine, each engine gets a batch size `n` such that a batch
//! lasts about `batch` of wall time. Batches then alternate Kestrel, Cranelift, Kestrel, …
//! for at least `min_batches` rounds and until each engine has accumulated `min_total`.
//! The result per engine is the median over batches of the time per compile.
//!
//! Only compilation is inside the clock: Cranelift's contexts (each with its own copy of the
//! function, since `Context::compile` rewrites it) are built before a batch starts, and both
//! engines' results are dropped after it stops.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::engines::{self, Cranelift, Target};

pub struct Config {
    pub batch: Duration,
    pub min_batches: usize,
    pub min_total: Duration,
}

/// Median time per compile of each engine, and the Kestrel batch size (for reuse).
pub struct Sample {
    pub kestrel: Duration,
    pub cranelift: Duration,
    pub kestrel_batch: usize,
}

fn kestrel_batch(f: &kestrel_ir::Function, target: Target, n: usize) -> Duration {
    let mut out = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        out.push(black_box(engines::kestrel(black_box(f), target, None)));
    }
    let elapsed = start.elapsed();
    drop(out);
    elapsed
}

fn cranelift_batch(cl: &Cranelift, f: &cranelift_codegen::ir::Function, n: usize) -> Duration {
    let mut contexts: Vec<_> = (0..n).map(|_| Cranelift::context(f)).collect();
    let start = Instant::now();
    for ctx in contexts.iter_mut() {
        let _ = black_box(cl.compile(ctx));
    }
    let elapsed = start.elapsed();
    drop(contexts);
    elapsed
}

/// How many compiles of about `one` each fill `batch`.
fn batch_size(one: Duration, batch: Duration) -> usize {
    let one = one.as_nanos().max(1);
    (batch.as_nanos() / one).clamp(1, 20_000) as usize
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

pub fn measure(
    cfg: &Config,
    cl: &Cranelift,
    kf: &kestrel_ir::Function,
    cf: &cranelift_codegen::ir::Function,
) -> Sample {
    // Warm up (caches, allocator) and calibrate on the second run.
    let target = cl.target();
    kestrel_batch(kf, target, 1);
    let nk = batch_size(kestrel_batch(kf, target, 1), cfg.batch);
    cranelift_batch(cl, cf, 1);
    let nc = batch_size(cranelift_batch(cl, cf, 1), cfg.batch);
    let (mut ks, mut cs) = (Vec::new(), Vec::new());
    let (mut kt, mut ct) = (Duration::ZERO, Duration::ZERO);
    while ks.len() < cfg.min_batches || kt < cfg.min_total || ct < cfg.min_total {
        let k = kestrel_batch(kf, target, nk);
        let c = cranelift_batch(cl, cf, nc);
        kt += k;
        ct += c;
        ks.push(k / nk as u32);
        cs.push(c / nc as u32);
    }
    Sample {
        kestrel: median(ks),
        cranelift: median(cs),
        kestrel_batch: nk,
    }
}
