//! Fuzzing support: the checks live here so fuzz targets stay thin.
//!
//! [`check_no_panic`] feeds arbitrary bytes through the whole compiler (as one or two
//! files) with both backends; the only requirement is that it returns. [`smoke`]
//! mutates a corpus deterministically, for a quick run inside `cargo test`.

use crate::{compile, Backend, Options, SourceMap};

/// Compiles `data` as rule text; must never panic, whatever the bytes.
pub fn check_no_panic(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut sources = SourceMap::new();
    // A NUL byte splits the input into two files, exercising multi-file programs.
    match text.split_once('\0') {
        Some((a, b)) => {
            sources.add("fuzz_a.rules", a);
            sources.add("fuzz_b.rules", b);
        }
        None => {
            sources.add("fuzz.rules", text.into_owned());
        }
    }
    for backend in [Backend::Tree, Backend::Naive] {
        let mut options = Options::default();
        options.codegen.backend = backend;
        options.codegen.log = backend == Backend::Naive;
        match compile(&sources, &options) {
            Ok(c) => assert!(c.code.contains("pub trait Context")),
            Err(diags) => {
                assert!(diags.has_errors());
                let _ = diags.render();
            }
        }
    }
    // Without checks, any well-typed rule set must still generate code.
    let options = Options {
        checks: false,
        ..Options::default()
    };
    let _ = compile(&sources, &options).map(|c| c.code);
}

/// A small deterministic PRNG (xorshift64*), so runs are reproducible.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Applies one random mutation to `data`: delete, duplicate or swap a span, insert a
/// token-ish snippet, or splice in part of another corpus entry.
pub fn mutate(data: &mut Vec<u8>, other: &[u8], rng: &mut Rng) {
    const SNIPPETS: &[&str] = &[
        "(",
        ")",
        " _ ",
        " x ",
        " @ ",
        " 0 ",
        " -1 ",
        "(and ",
        "(rule ",
        "(decl ",
        "(if-let ",
        "(if ",
        "(let ((",
        " partial ",
        " multi ",
        " rec ",
        " pure ",
        "(convert ",
        "(extractor (",
        "(type T (enum (A) (B (f u32))))",
        " extern ",
        " copy ",
        " infallible ",
        ".",
        "\0",
        ";",
        "\n",
    ];
    let len = data.len();
    let pos = if len == 0 { 0 } else { rng.below(len + 1) };
    match rng.below(5) {
        0 if len > 0 => {
            let end = (pos + 1 + rng.below(16)).min(len);
            data.drain(pos.min(len)..end);
        }
        1 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(64)).min(len);
            let chunk = data[start..end].to_vec();
            data.splice(pos..pos, chunk);
        }
        2 if !other.is_empty() => {
            let start = rng.below(other.len());
            let end = (start + 1 + rng.below(128)).min(other.len());
            data.splice(pos..pos, other[start..end].iter().copied());
        }
        3 if len > 1 => {
            let (a, b) = (rng.below(len), rng.below(len));
            data.swap(a, b);
        }
        _ => {
            let s = SNIPPETS[rng.below(SNIPPETS.len())];
            data.splice(pos..pos, s.bytes());
        }
    }
}

/// Runs `iterations` mutated inputs derived from `corpus` through [`check_no_panic`].
pub fn smoke(corpus: &[Vec<u8>], iterations: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    if corpus.is_empty() {
        return;
    }
    for _ in 0..iterations {
        let mut input = corpus[rng.below(corpus.len())].clone();
        let other = &corpus[rng.below(corpus.len())];
        for _ in 0..1 + rng.below(4) {
            mutate(&mut input, other, &mut rng);
        }
        check_no_panic(&input);
    }
}
