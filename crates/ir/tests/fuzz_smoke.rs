//! A seeded, deterministic smoke run of the parser/verifier fuzz target
//! (`fuzz/fuzz_targets/parse_verify.rs`): mutated CLIF files must never panic the parser or
//! the verifier, and whatever verifies must survive the printer round trip.

use std::path::Path;

fn corpus() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["tests", "examples"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    let mut corpus: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    // Always include a few inputs of our own, so the smoke has a corpus on any checkout.
    corpus.push(
        b"function %f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = iadd v0, v0\n    return v1\n}\n"
            .to_vec(),
    );
    corpus.push(
        b"function %g(i64) -> i64 {\n    ss0 = explicit_slot 8\nblock0(v0: i64):\n    stack_store v0, ss0\n    v1 = stack_load.i64 ss0\n    brif v1, block1(v1), block2\nblock1(v2: i64):\n    return v2\nblock2:\n    v3 = iconst.i64 -1\n    return v3\n}\n"
            .to_vec(),
    );
    corpus
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "clif") {
            out.push(p);
        }
    }
}

#[test]
fn parse_verify_smoke() {
    kestrel_ir::fuzzing::smoke(0x006b_6573_7472_656c, 20_000, &corpus());
}

#[test]
fn hostile_inputs_do_not_panic() {
    for input in [
        &b""[..],
        b"\0",
        b"\xff\xfe",
        b"function",
        b"function %f(",
        b"function %f() {",
        b"function %f() {\nblock0:\n",
        b"function %f() -> i32 {\nblock0:\n    v0 = iconst.i32 99999999999999999999999999999\n    return v0\n}",
        b"function %f() {\nblock0:\n    jump block4294967295\n}",
        b"function %f() {\nblock0:\n    v4294967295 = iconst.i8 0\n    return\n}",
    ] {
        kestrel_ir::fuzzing::check_parse_verify(input);
    }
}
