//! Verifier errors on functions parsed from text: messages carry the source `line:col`.

use kestrel_ir::{parse_functions, verify_function};

fn verify_text(text: &str) -> Result<(), String> {
    let funcs = parse_functions(text, "t.clif").map_err(|e| format!("parse: {e}"))?;
    let mut out = String::new();
    for f in &funcs {
        if let Err(e) = verify_function(f) {
            out.push_str(&e.to_string());
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out)
    }
}

#[test]
fn valid_loop_passes() {
    let text = "function %sum(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1, v1)

block1(v2: i32, v3: i32):
    v4 = icmp slt v2, v0
    brif v4, block2, block3

block2:
    v5 = iadd v3, v2
    v6 = iconst.i32 1
    v7 = iadd v2, v6
    jump block1(v7, v5)

block3:
    return v3
}
";
    assert_eq!(verify_text(text), Ok(()));
}

#[test]
fn errors_carry_source_positions() {
    let text = "function %f(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2

block1:
    v1 = iconst.i32 1
    jump block2

block2:
    v2 = iconst.i64 2
    v3 = iadd v0, v2
    return v1
}
";
    let err = verify_text(text).unwrap_err();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("11:")
            && lines[0].contains("%f, block2")
            && lines[0].contains("(iadd): operand 1 (v2) of `iadd` has type i64; it needs i32"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("12:")
            && lines[1].contains("(return): uses v1, but its definition")
            && lines[1].contains("does not dominate this use"),
        "{err}"
    );
}

#[test]
fn undeclared_memory_regions_are_rejected() {
    let text = "function %f(i64) -> i64 {
    region0 = 1 \"the one region\"
block0(v0: i64):
    v1 = load.i64 notrap region0 v0
    v2 = load.i64 notrap region1 v0+8
    v3 = iadd v1, v2
    return v3
}
";
    let err = verify_text(text).unwrap_err();
    assert!(
        err.starts_with("5:") && err.contains("region1 is not declared in the preamble"),
        "{err}"
    );
    let gv = "function %g(i64 vmctx) -> i64 {
    gv0 = vmctx
    gv1 = load.i64 notrap aligned region3 gv0
    stack_limit = gv1
block0(v0: i64):
    return v0
}
";
    let err = verify_text(gv).unwrap_err();
    assert!(
        err.contains("gv1 names region3, which is not declared"),
        "{err}"
    );
}

#[test]
fn vector_errors_name_the_problem() {
    let lane = "function %f(i32x4) -> i32 {
block0(v0: i32x4):
    v1 = extractlane v0, 4
    return v1
}
";
    let e = verify_text(lane).unwrap_err();
    assert!(
        e.contains("lane index 4 of `extractlane` is out of range: i32x4 has lanes 0 to 3"),
        "{e}"
    );
    assert!(e.starts_with("3:5:"), "the message names the line: {e}");

    let mask = "function %f(i8x16) -> i8x16 {
block0(v0: i8x16):
    v1 = shuffle v0, v0, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 32]
    return v1
}
";
    let e = verify_text(mask).unwrap_err();
    assert!(e.contains("mask byte 15 selects lane 32"), "{e}");

    let splat = "function %f(i64) -> i32x4 {
block0(v0: i64):
    v1 = splat.i32x4 v0
    return v1
}
";
    let e = verify_text(splat).unwrap_err();
    assert!(
        e.contains("operand 0 (v0) of `splat` has type i64; it needs i32"),
        "{e}"
    );

    let lanes = "function %f(i32x4) -> i32x4 {
block0(v0: i32x4):
    v1 = fadd v0, v0
    return v1
}
";
    let e = parse_functions(lanes, "t.clif").unwrap_err().to_string();
    assert!(e.contains("`fadd` does not accept type i32x4"), "{e}");

    let size = "function %f() -> i32x4 {
    const0 = 0x0001
block0:
    v0 = vconst.i32x4 const0
    return v0
}
";
    let e = verify_text(size).unwrap_err();
    assert!(
        e.contains("const0 has 2 bytes, but `vconst` of i32x4 needs 16"),
        "{e}"
    );

    let ok = "function %f(f32x4, i8x16) -> f64x2, i16x8 {
block0(v0: f32x4, v1: i8x16):
    v2 = fvpromote_low v0
    v3 = swiden_low v1
    return v2, v3
}
";
    verify_text(ok).unwrap();
}

#[test]
fn try_call_destinations_and_signature() {
    let wrap = |sigs: &str, inst: &str| {
        format!(
            "function %f(i64) -> i64 {{
{sigs}
    fn0 = %g(i64) -> i64
block0(v0: i64):
    {inst}
block1(v1: i64):
    return v1
block2(v2: i64, v3: i64):
    return v3
}}
"
        )
    };
    let sig = "    sig0 = (i64) -> i64";
    verify_text(&wrap(
        sig,
        "try_call fn0(v0), sig0, block1(ret0), [ tag7: block2(exn0, exn1), default: block2(v0, exn1) ]",
    ))
    .unwrap();
    let e = verify_text(&wrap(sig, "try_call fn0(v0), sig0, block1(ret0, v0), []")).unwrap_err();
    assert!(
        e.contains("5:5: %f, block0, inst0 (try_call): branch to block1 passes 2 argument(s), but block1 has 1 parameter(s)"),
        "{e}"
    );
    let e = verify_text(&wrap(
        sig,
        "try_call fn0(v0), sig0, block1(ret0), [ tag1: block2(exn0) ]",
    ))
    .unwrap_err();
    assert!(
        e.contains("branch to block2 passes 1 argument(s), but block2 has 2 parameter(s)"),
        "{e}"
    );
    let e = verify_text(&wrap(
        "    sig0 = (i64) -> i64\n    sig1 = (i32) -> i64",
        "try_call fn0(v0), sig1, block1(ret0), []",
    ))
    .unwrap_err();
    assert!(
        e.contains("`try_call` names sig1, which is not the callee's signature"),
        "{e}"
    );
    // try_call_indirect's signature is the one written.
    let e = verify_text(&wrap(
        "    sig0 = (i64) -> i32",
        "try_call_indirect v0(v0), sig0, block1(ret0), []",
    ))
    .unwrap_err();
    assert!(
        e.contains("passes ret0 of type i32 as parameter 0 (v1), which has type i64"),
        "{e}"
    );
}
