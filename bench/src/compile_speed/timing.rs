//! Adaptive, alternating timing of one function under both compilers.
//!
//! After a warm-up compile per engine, each engine gets a batch size `n` such that a batch
//! lasts about `batch` of wall time. Batches then alternate Kestrel, Cranelift, Kestrel, …
//! for at least `min_batches` rounds and until each engine has accumulated `min_total`.
//! The result per engine is the median over batches of the time per compile.
//!
//! Only compilation is inside the clock: Cranelift's copies of the function (one per
//! compile, since `Context::compile` rewrites it) are made before a batch starts, and both
//! engines' results (Kestrel's code sizes: its code stays in its context, see `engines`;
//! Cranelift's compiled code and used copies) are dropped after it stops.
//!
//! Each engine keeps one context for all batches of a function (made fresh per function,
//! filled by the warm-up), unless `fresh_contexts`: then every compile gets a new one (for
//! Cranelift, built before the clock starts, as before).

use std::hint::black_box;
use std::time::{Duration, Instant};

use cranelift_codegen::Context;
use kestrel_codegen::machinst::compile::CompileContext;

use super::engines::{self, Cranelift, OptLevel, Target};

pub struct Config {
    pub batch: Duration,
    pub min_batches: usize,
    pub min_total: Duration,
    /// New memory for every compile instead of a context kept across compiles.
    pub fresh_contexts: bool,
}

/// The contexts kept across the batches of one function.
struct Contexts {
    kestrel: CompileContext,
    cranelift: Context,
}

/// Median time per compile of each engine, and the Kestrel batch size (for reuse).
pub struct Sample {
    pub kestrel: Duration,
    pub cranelift: Duration,
    pub kestrel_batch: usize,
}

fn kestrel_batch(
    cfg: &Config,
    ctx: &mut CompileContext,
    f: &kestrel_ir::Function,
    (target, level): (Target, OptLevel),
    n: usize,
) -> Duration {
    let mut out = Vec::with_capacity(n);
    let mut fresh: Vec<CompileContext> = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        let ctx = if cfg.fresh_contexts {
            fresh.push(CompileContext::new());
            fresh.last_mut().expect("just pushed")
        } else {
            &mut *ctx
        };
        out.push(black_box(engines::kestrel_in_place(
            ctx,
            black_box(f),
            target,
            level,
        )));
    }
    let elapsed = start.elapsed();
    drop(out);
    drop(fresh);
    elapsed
}

fn cranelift_batch(
    cfg: &Config,
    cl: &Cranelift,
    ctx: &mut Context,
    f: &cranelift_codegen::ir::Function,
    n: usize,
) -> Duration {
    if cfg.fresh_contexts {
        let mut contexts: Vec<_> = (0..n).map(|_| Cranelift::context(f)).collect();
        let start = Instant::now();
        for ctx in contexts.iter_mut() {
            let _ = black_box(cl.compile(ctx));
        }
        let elapsed = start.elapsed();
        drop(contexts);
        return elapsed;
    }
    let mut copies: Vec<_> = (0..n).map(|_| f.clone()).collect();
    let mut out = Vec::with_capacity(n);
    let start = Instant::now();
    for copy in copies.iter_mut() {
        out.push(black_box(cl.compile_reusing(ctx, copy)));
    }
    let elapsed = start.elapsed();
    drop((copies, out));
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
    let mut ctx = Contexts {
        kestrel: CompileContext::new(),
        cranelift: Context::new(),
    };
    // Warm up (caches, allocator, contexts) and calibrate on the second run.
    let target = (cl.target(), cl.level());
    kestrel_batch(cfg, &mut ctx.kestrel, kf, target, 1);
    let nk = batch_size(
        kestrel_batch(cfg, &mut ctx.kestrel, kf, target, 1),
        cfg.batch,
    );
    cranelift_batch(cfg, cl, &mut ctx.cranelift, cf, 1);
    let nc = batch_size(
        cranelift_batch(cfg, cl, &mut ctx.cranelift, cf, 1),
        cfg.batch,
    );
    let (mut ks, mut cs) = (Vec::new(), Vec::new());
    let (mut kt, mut ct) = (Duration::ZERO, Duration::ZERO);
    while ks.len() < cfg.min_batches || kt < cfg.min_total || ct < cfg.min_total {
        let k = kestrel_batch(cfg, &mut ctx.kestrel, kf, target, nk);
        let c = cranelift_batch(cfg, cl, &mut ctx.cranelift, cf, nc);
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
