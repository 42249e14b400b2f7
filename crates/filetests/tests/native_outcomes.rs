//! How `test run` files are judged natively: a pass, an unsupported feature (a failure that
//! names it, never a silent fallback to the interpreter), a native trap reported like the
//! interpreter's, and `--interpret-only` still interpreting.

use kestrel_filetests::{run_bytes, Options, Outcome};

fn run(text: &str, interpret_only: bool) -> Outcome {
    let opts = Options {
        interpret_only,
        ..Options::default()
    };
    run_bytes(text.as_bytes(), "test.clif", &opts, &mut Vec::new())
}

const ADD: &str = "test run
target x86_64
function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
; run: %f(2, 3) == 5
";

#[test]
fn supported_file_passes_natively() {
    assert_eq!(run(ADD, false), Outcome::Pass);
}

#[test]
fn wrong_expectation_fails_with_the_lead_format() {
    let text = ADD.replace("== 5", "== 6");
    match run(&text, false) {
        // Once per opt level, the mid-end's run prefixed.
        Outcome::Fail(why) => assert_eq!(
            why,
            [
                "%f: line 8: expected 6, got 5",
                "opt_level=speed: %f: line 8: expected 6, got 5"
            ]
        ),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn unsupported_feature_fails_and_names_it() {
    let text = "test run
target x86_64
function %f(i64) -> i64 probestack {
block0(v0: i64):
    return v0
}
; run: %f(1) == 1
";
    match run(text, false) {
        Outcome::Fail(why) => {
            assert!(
                why[0].contains("unsupported") && why[0].contains("probestack"),
                "{why:?}"
            )
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    // The interpreter runs it when asked to.
    assert_eq!(run(text, true), Outcome::Pass);
}

#[test]
fn native_trap_is_reported_like_the_interpreter() {
    let text = "test run
target x86_64
function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = udiv v0, v1
    return v2
}
; run: %f(1, 0) == 0
";
    for interpret_only in [false, true] {
        match run(text, interpret_only) {
            Outcome::Fail(why) => assert!(why[0].contains("trap int_divz"), "{why:?}"),
            other => panic!("expected a trap failure, got {other:?}"),
        }
    }
}

#[test]
fn run_without_a_target_is_skipped() {
    let text = ADD.replace("target x86_64\n", "");
    assert!(matches!(run(&text, false), Outcome::Skip(_)));
}

#[test]
fn aarch64_target_runs_under_qemu() {
    let text = ADD.replace("target x86_64", "target aarch64");
    assert_eq!(run(&text, false), Outcome::Pass);
    match run(&text.replace("== 5", "== 6"), false) {
        Outcome::Fail(why) => assert_eq!(why, ["aarch64: %f: line 8: expected 6, got 5"]),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn target_flags_turn_cpu_features_off() {
    // `clz` without LZCNT (and the other counts without theirs) compiles to the BSR/BSF/SWAR
    // fallbacks and passes, zero inputs included; `nearest` without SSE4.1 calls its libcall.
    let text = "test run
target x86_64 has_lzcnt=false has_bmi1=false has_popcnt=false has_sse41=false
function %f(i32) -> i32 {
block0(v0: i32):
    v1 = clz v0
    return v1
}
; run: %f(1) == 31
; run: %f(0) == 32
function %g(i64) -> i64 {
block0(v0: i64):
    v1 = ctz v0
    v2 = popcnt v0
    v3 = iadd v1, v2
    return v3
}
; run: %g(0) == 64
; run: %g(0xf0) == 8
function %h(f64) -> f64 {
block0(v0: f64):
    v1 = nearest v0
    return v1
}
; run: %h(0x1.cp1) == 0x1.0p2
; run: %h(0x1.4p1) == 0x1.0p1
";
    assert_eq!(run(text, false), Outcome::Pass);
    if std::is_x86_feature_detected!("lzcnt") {
        let text = text.replace(
            "has_lzcnt=false has_bmi1=false has_popcnt=false has_sse41=false",
            "has_avx",
        );
        assert_eq!(run(&text, false), Outcome::Pass, "unused flags are ignored");
    }
    // A 128-bit atomic needs CMPXCHG16B and has no fallback: an error naming it, not code.
    let text = "test run
target x86_64 has_cmpxchg16b=false
function %f(i64) -> i128 {
block0(v0: i64):
    v1 = atomic_load.i128 v0
    return v1
}
; run: %f(0) == 0
";
    match run(text, false) {
        Outcome::Fail(why) => assert!(why[0].contains("CMPXCHG16B"), "{why:?}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// A probe interval that is not a number is reported as such, naming the setting (it used
/// to surface as an out-of-range interval of 255).
#[test]
fn probestack_size_that_is_not_a_number_is_named() {
    let text = "test run
set enable_probestack
set probestack_size_log2=abc
target aarch64
function %f(i64) -> i64 {
block0(v0: i64):
    return v0
}
; run: %f(2) == 2
";
    match run(text, false) {
        Outcome::Fail(why) => assert!(
            why.iter()
                .any(|w| w.contains("probestack_size_log2=abc") && w.contains("not a number")),
            "{why:?}"
        ),
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// `target x86_64` lines take the probe settings above them: an interval out of x86-64's
/// range fails compiling, naming the setting; without `enable_probestack` it is not read.
#[test]
fn x86_64_honours_the_probe_settings_above_its_target_line() {
    let with = |settings: &str| {
        format!(
            "test run
{settings}
target x86_64
function %f(i64) -> i64 {{
    ss0 = explicit_slot 20000
block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store.i64 v0, v1
    v2 = load.i64 v1
    return v2
}}
; run: %f(2) == 2
"
        )
    };
    match run(
        &with("set enable_probestack\nset probestack_size_log2=3"),
        false,
    ) {
        Outcome::Fail(why) => assert!(
            why.iter().any(|w| w.contains("probestack_size_log2=3")),
            "{why:?}"
        ),
        other => panic!("expected a failure, got {other:?}"),
    }
    match run(
        &with("set enable_probestack\nset probestack_size_log2=x"),
        false,
    ) {
        Outcome::Fail(why) => assert!(
            why.iter()
                .any(|w| w.contains("probestack_size_log2=x") && w.contains("not a number")),
            "{why:?}"
        ),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(
        run(&with("set probestack_size_log2=3"), false),
        Outcome::Pass
    );
    assert_eq!(
        run(
            &with("set enable_probestack\nset probestack_size_log2=12"),
            false
        ),
        Outcome::Pass
    );
}
