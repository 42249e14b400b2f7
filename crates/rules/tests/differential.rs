//! Differential test of the two backends on random rule programs.
//!
//! Many random programs (see `kestrel_rules::gen`) are compiled with checks off, so
//! their rules overlap and shadow each other freely, by both the decision-tree and
//! the naive backend with rule logging. One generated driver includes them all,
//! runs every program on every input of a small exhaustive domain, and checks that
//! both backends fire the same rules in the same order and build the same results.
//! (Rules of the pure term `sub` are left out of the comparison: the tree may
//! evaluate a pure call once where the naive matcher evaluates it per rule.)

use kestrel_rules::{compile, gen, Backend, Options, SourceMap};
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

const PROGRAMS: u64 = 24;
const RULES: usize = 24;

const DRIVER_HEAD: &str = r#"
#[derive(Clone, Debug, PartialEq)]
pub enum S { P { x: u8, y: u8 }, Q { x: u8 }, R }
#[derive(Clone, Debug, PartialEq)]
pub enum T { A { s: S, n: u8 }, B { n: u8 }, C { s1: S, s2: S } }

#[derive(Default)]
pub struct Ctx { log: Vec<&'static str> }

macro_rules! impl_context {
    ($m:path) => {
        impl $m for Ctx {
            fn half(&mut self, x: u8) -> Option<u8> { (x % 2 == 0).then_some(x / 2) }
            fn odd(&mut self, x: u8) -> Option<u8> { (x % 2 == 1).then_some(x / 2) }
            fn split(&mut self, x: u8) -> (u8, u8) { (x % 2, x / 2) }
            fn mk(&mut self, a: u8, b: u8) -> u8 { a.wrapping_mul(31).wrapping_add(b) }
            fn log_rule(&mut self, rule: &'static str) { self.log.push(rule); }
        }
    };
}

fn all_s() -> Vec<S> {
    let mut out = vec![S::R];
    for x in 0..4 {
        out.push(S::Q { x });
        for y in 0..4 {
            out.push(S::P { x, y });
        }
    }
    out
}

fn all_t() -> Vec<T> {
    let ss = all_s();
    let mut out = Vec::new();
    for n in 0..4 {
        out.push(T::B { n });
        for s in &ss {
            out.push(T::A { s: s.clone(), n });
        }
    }
    for a in &ss {
        for b in &ss {
            out.push(T::C { s1: a.clone(), s2: b.clone() });
        }
    }
    out
}
"#;

fn driver(programs: u64) -> String {
    let mut d = String::from(DRIVER_HEAD);
    for p in 0..programs {
        for backend in ["tree", "naive"] {
            let _ = writeln!(
                d,
                "mod p{p}_{backend} {{ use super::*; include!(\"p{p}_{backend}.rs\"); }}\nimpl_context!(p{p}_{backend}::Context);"
            );
        }
    }
    d.push_str("fn main() {\n    let ts = all_t();\n    let mut compared = 0u64;\n    let mut fired = 0u64;\n");
    for p in 0..programs {
        let _ = writeln!(
            d,
            "    for t in &ts {{ for n in 0..8u8 {{
        let (mut a, mut b) = (Ctx::default(), Ctx::default());
        let ra = p{p}_tree::constructor_top(&mut a, t.clone(), n);
        let rb = p{p}_naive::constructor_top(&mut b, t.clone(), n);
        // `sub` is pure: the tree may call it fewer times than the naive matcher.
        a.log.retain(|r| !r.contains(\" sub_\"));
        b.log.retain(|r| !r.contains(\" sub_\"));
        assert_eq!((ra, &a.log), (rb, &b.log), \"program {p}: top({{t:?}}, {{n}})\");
        let ma = p{p}_tree::constructor_many(&mut a, t.clone(), n);
        let mb = p{p}_naive::constructor_many(&mut b, t.clone(), n);
        a.log.retain(|r| !r.contains(\" sub_\"));
        b.log.retain(|r| !r.contains(\" sub_\"));
        assert_eq!((ma, &a.log), (mb, &b.log), \"program {p}: many({{t:?}}, {{n}})\");
        compared += 1;
        fired += a.log.len() as u64;
    }} }}"
        );
    }
    d.push_str("    println!(\"compared {compared} inputs, {fired} rule firings\");\n}\n");
    d
}

/// `KESTREL_DIFF_SEED` picks another family of programs for a local run.
fn base_seed() -> u64 {
    std::env::var("KESTREL_DIFF_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0xD1FF)
}

#[test]
fn tree_and_naive_backends_agree_on_random_programs() {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential");
    std::fs::create_dir_all(&work).unwrap();
    for p in 0..PROGRAMS {
        let text = gen::random_program(base_seed() + p, RULES);
        let mut sources = SourceMap::new();
        sources.add(format!("p{p}.rules"), text.clone());
        for (backend, name) in [(Backend::Tree, "tree"), (Backend::Naive, "naive")] {
            let mut options = Options {
                checks: false,
                ..Options::default()
            };
            options.codegen.backend = backend;
            options.codegen.log = true;
            let compiled = compile(&sources, &options).unwrap_or_else(|d| {
                panic!("generated program {p} is invalid:\n{}\n{text}", d.render())
            });
            std::fs::write(work.join(format!("p{p}_{name}.rs")), compiled.code).unwrap();
        }
    }
    std::fs::write(work.join("driver.rs"), driver(PROGRAMS)).unwrap();
    let exe = work.join("driver");
    let status = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args([
            "--edition",
            "2021",
            "-A",
            "warnings",
            "-C",
            "debuginfo=0",
            "-C",
            "opt-level=1",
            "-o",
        ])
        .arg(&exe)
        .arg(work.join("driver.rs"))
        .status()
        .expect("run rustc");
    assert!(
        status.success(),
        "generated code does not compile (see {})",
        work.display()
    );
    let out = Command::new(&exe).output().expect("run driver");
    assert!(
        out.status.success(),
        "backends disagree:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("compared"), "{stdout}");
    println!("{stdout}");
}
