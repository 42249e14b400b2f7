//! Seeded smoke runs of the generator: every case verifies, runs in the interpreter without
//! running out of fuel or hitting an invalid instruction, covers the opcode set, prints as a
//! test file that parses back, and is deterministic.

use std::collections::HashSet;

use kestrel_fuzzgen::{generate, GenConfig, Outcome, TestCase, Unstructured};
use kestrel_interp::{InterpError, Interpreter};
use kestrel_ir::{parse_functions, verify_function, Opcode, Type};

/// Deterministic bytes (xorshift64*).
fn seeded_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn case(seed: u64, cfg: &GenConfig) -> TestCase {
    let bytes = seeded_bytes(seed, 16 * 1024);
    let mut u = Unstructured::new(&bytes);
    generate(&mut u, cfg).expect("the default filter allows everything")
}

fn run_all(case: &TestCase) -> Vec<Outcome> {
    let mut interp = Interpreter::new(&case.functions).with_fuel(Some(200_000));
    case.args
        .iter()
        .map(|args| {
            let out = match interp.call_index(0, args) {
                Ok(r) => Outcome::Returned(r),
                Err(InterpError::Trap { code, .. }) => Outcome::Trapped(code),
                Err(e) => panic!("interpreter: {e}\n{}", case.to_test_file(&[])),
            };
            // The dynamic budget is an estimate; allow it some slack.
            assert!(
                interp.fuel_used() < 10_000,
                "{} instructions",
                interp.fuel_used()
            );
            out
        })
        .collect()
}

fn opcodes(case: &TestCase, seen: &mut HashSet<Opcode>) {
    for f in &case.functions {
        for &b in f.layout.blocks() {
            for inst in f.layout.block_insts(b) {
                seen.insert(f.dfg.inst(inst).opcode());
            }
        }
    }
}

#[test]
fn cases_verify_run_and_cover_the_opcodes() {
    let cfg = GenConfig::default();
    let n = 2000;
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut traps = 0;
    for seed in 0..n {
        let c = case(seed, &cfg);
        for f in &c.functions {
            if let Err(e) = verify_function(f) {
                panic!("seed {seed}: {e}\n{f}");
            }
        }
        assert!(c.args.len() >= 4);
        total += c.inst_count();
        opcodes(&c, &mut seen);
        traps += run_all(&c)
            .iter()
            .filter(|o| matches!(o, Outcome::Trapped(_)))
            .count();
    }
    // The generator emits only what the backends compile; `try_call` (whose handlers no
    // backend compiles yet) is not among its opcodes.
    let emittable: Vec<_> = Opcode::ALL
        .iter()
        .filter(|&&op| {
            !kestrel_fuzzgen::interpreter_only(op)
                && !kestrel_fuzzgen::needs_setting(op)
                && !op.is_try_call()
        })
        .collect();
    let missing: Vec<_> = emittable.iter().filter(|op| !seen.contains(op)).collect();
    let mean = total as f64 / n as f64;
    eprintln!(
        "mean {mean:.1} insts, {} of {} opcodes, missing {missing:?}, {traps} trapping runs of {}",
        seen.len(),
        emittable.len(),
        n * 4
    );
    assert!(
        seen.iter()
            .all(|&op| !kestrel_fuzzgen::interpreter_only(op)),
        "an interpreter-only opcode was generated"
    );
    assert!(
        seen.len() * 100 >= emittable.len() * 95,
        "missing {missing:?}"
    );
    assert!(mean >= 40.0, "mean size {mean}");
}

#[test]
fn test_files_parse_back_identically() {
    let cfg = GenConfig::default();
    for seed in 0..200 {
        let c = case(seed, &cfg);
        let outcomes = run_all(&c);
        let text = c.to_test_file(&outcomes);
        let parsed = parse_functions(&text, "fuzz.clif")
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert_eq!(parsed.len(), c.functions.len());
        for (a, b) in parsed.iter().zip(&c.functions) {
            assert_eq!(a.to_string(), b.to_string(), "seed {seed}");
        }
        assert_eq!(
            text.matches("; run:").count() + text.matches("; trap:").count(),
            c.args.len()
        );
    }
}

#[test]
fn same_bytes_same_case() {
    let cfg = GenConfig::default();
    for seed in [1, 7, 42] {
        let (a, b) = (case(seed, &cfg), case(seed, &cfg));
        assert_eq!(a.to_test_file(&[]), b.to_test_file(&[]));
        assert_eq!(a.args, b.args);
    }
}

#[test]
fn exhausted_and_short_inputs_still_give_valid_cases() {
    let cfg = GenConfig::default();
    for len in [0, 1, 7, 64, 300] {
        let bytes = seeded_bytes(len as u64, len);
        let mut u = Unstructured::new(&bytes);
        let c = generate(&mut u, &cfg).unwrap();
        for f in &c.functions {
            verify_function(f).unwrap_or_else(|e| panic!("len {len}: {e}\n{f}"));
        }
        run_all(&c);
    }
}

/// A filter in the style the fuzzer passes: no i128, no `fma`, no `call_indirect`.
fn no_i128_fma_or_indirect(op: Opcode, ty: Type) -> bool {
    ty != Type::I128 && !matches!(op, Opcode::Fma | Opcode::CallIndirect)
}

#[test]
fn the_filter_is_obeyed() {
    let cfg = GenConfig {
        allow: Some(no_i128_fma_or_indirect),
        ..GenConfig::default()
    };
    for seed in 0..300 {
        let c = case(seed, &cfg);
        for f in &c.functions {
            verify_function(f).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{f}"));
            for &b in f.layout.blocks() {
                for inst in f.layout.block_insts(b) {
                    let op = f.dfg.inst(inst).opcode();
                    assert!(!matches!(op, Opcode::Fma | Opcode::CallIndirect), "{f}");
                    for &v in f.dfg.inst_results(inst) {
                        assert_ne!(f.dfg.value_type(v), Type::I128, "seed {seed}\n{f}");
                    }
                }
            }
        }
        run_all(&c);
    }
}
