//! A short, seeded run of the `rules_compile` fuzz target's check over mutations of
//! the test corpus (every `.rules` file under `tests/`), plus a few random programs.

use std::path::{Path, PathBuf};

fn corpus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            corpus_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rules") {
            out.push(path);
        }
    }
}

#[test]
fn fuzz_smoke_never_panics() {
    let mut files = Vec::new();
    corpus_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        &mut files,
    );
    files.sort();
    let mut corpus: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for seed in 0..4 {
        corpus.push(kestrel_rules::gen::random_program(seed, 12).into_bytes());
    }
    assert!(corpus.len() > 20);
    // `KESTREL_FUZZ_ITERS` / `KESTREL_FUZZ_SEED` allow a longer campaign locally.
    let iters = std::env::var("KESTREL_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let seed = std::env::var("KESTREL_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED);
    kestrel_rules::fuzz::smoke(&corpus, iters, seed);
}

#[test]
fn fuzz_edge_inputs() {
    for input in [
        &b""[..],
        b"(",
        b")",
        b"((((((((((",
        b"(rule",
        b"(rule (f))",
        b"\xff\xfe(type",
        b"(type T (enum))(decl f (T) T)(rule (f x) x)",
        b"(type u (primitive u))(decl f (u) u)(rule (f x @ y @ z) (f x))",
        b"(type u (primitive u))(decl m (u) u)(extractor (m a) (m a))(decl f (u) u)(rule (f (m 1)) 1)",
        b"\0\0\0",
    ] {
        kestrel_rules::fuzz::check_no_panic(input);
    }
    // Deep nesting is reported, not a stack overflow.
    let deep = format!(
        "(rule (f {}x{}) 1)",
        "(g ".repeat(100_000),
        ")".repeat(100_000)
    );
    kestrel_rules::fuzz::check_no_panic(deep.as_bytes());
    let deep_and = format!("(rule (f {}) 1)", "(and ".repeat(20_000));
    kestrel_rules::fuzz::check_no_panic(deep_and.as_bytes());
}
