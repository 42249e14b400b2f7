//! Fuzzing support for the text front end: the check the fuzz target runs, and a seeded
//! mutation smoke that runs the same check inside `cargo test`.
//!
//! The check: arbitrary bytes go through the parser; nothing may panic. Every function that
//! parses is verified; every function that verifies is printed, parsed back, verified again
//! and printed again, and the two printouts must be identical (the printer round trip).
//! A violation panics, which is how a fuzzer reports it.

use crate::text::parse_bytes;
use crate::verifier::verify_function;

/// Run the parse → verify → print → parse round trip on `data`. Panics on a bug.
pub fn check_parse_verify(data: &[u8]) {
    let Ok(funcs) = parse_bytes(data, "fuzz.clif") else {
        return;
    };
    for f in &funcs {
        if verify_function(f).is_err() {
            continue;
        }
        let printed = f.to_string();
        let again = match parse_bytes(printed.as_bytes(), "printed.clif") {
            Ok(mut g) if g.len() == 1 => g.remove(0),
            Ok(g) => panic!("printed text holds {} functions:\n{printed}", g.len()),
            Err(e) => panic!("printed text does not parse: {e}\n{printed}"),
        };
        if let Err(e) = verify_function(&again) {
            panic!("printed text does not verify: {e}\n{printed}");
        }
        let reprinted = again.to_string();
        assert_eq!(printed, reprinted, "printing is not stable");
    }
}

/// A small deterministic generator (xorshift64*), so smoke runs repeat exactly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Tokens that make mutations likely to reach deep parser and verifier paths.
const DICTIONARY: &[&str] = &[
    "v0",
    "v1",
    "v99",
    "block0",
    "block1",
    "block7",
    "ss0",
    "fn0",
    "sig0",
    "gv0",
    "jt0",
    "i8",
    "i32",
    "i64",
    "i128",
    "f32",
    "f64",
    "iconst.i64",
    "iadd",
    "brif",
    "jump",
    "return",
    "br_table",
    "call",
    "load.i32",
    "store",
    "notrap",
    "aligned",
    "0x",
    "-",
    "+",
    ",",
    "(",
    ")",
    "[",
    "]",
    ":",
    "=",
    "->",
    "%f",
    "\n",
    " ",
    "0x1.8p3",
    "NaN",
    "-NaN:0x1",
    "Inf",
    "@0004",
    "; run: %f(1) == 2",
    "function",
    "{",
    "}",
    "explicit_slot",
    "uext",
    "cold",
    "system_v",
];

/// Mutate `input` in place: byte flips, insertions, deletions, dictionary splices, and
/// crossover with `other`.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        let len = input.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(len + 1);
                input.insert(i, rng.next_u64() as u8);
            }
            2 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below(8.min(len - i));
                input.drain(i..i + n);
            }
            3 | 4 => {
                let i = rng.below(len + 1);
                let word = DICTIONARY[rng.below(DICTIONARY.len())];
                input.splice(i..i, word.bytes());
            }
            _ if !other.is_empty() => {
                let i = rng.below(len + 1);
                let a = rng.below(other.len());
                let n = rng.below((other.len() - a).min(64)) + 1;
                input.splice(i..i, other[a..a + n].iter().copied());
            }
            _ => {}
        }
    }
}

/// Run `iterations` mutated inputs derived from `corpus` through [`check_parse_verify`].
pub fn smoke(seed: u64, iterations: usize, corpus: &[Vec<u8>]) {
    assert!(!corpus.is_empty(), "the smoke needs a corpus");
    let mut rng = Rng::new(seed);
    for seed_input in corpus {
        check_parse_verify(seed_input);
    }
    for _ in 0..iterations {
        let mut input = corpus[rng.below(corpus.len())].clone();
        let other = &corpus[rng.below(corpus.len())];
        mutate(&mut rng, &mut input, other);
        check_parse_verify(&input);
    }
}
