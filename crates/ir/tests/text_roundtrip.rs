//! Round trip of the CLIF printer and parser: printing a parsed function and parsing the output
//! gives a function that prints the same and has the same structure.
//!
//! Inputs: the samples below, every `tests/**/*.clif` of the repository (when the directory
//! exists), and, when `KESTREL_CONFORMANCE_DIR` is set, every `.clif` file under that
//! directory (used locally for Cranelift's run tests, which are never committed).

use std::path::{Path, PathBuf};

use kestrel_ir::dfg::ValueDef;
use kestrel_ir::entity::{EntityRef, Value};
use kestrel_ir::{parse_functions, Function, InstructionData};

/// A description of `f` that does not depend on where lists sit in the pool.
fn structure(f: &Function) -> String {
    let dfg = &f.dfg;
    let mut out = format!(
        "{} {:?}\n{:?}\n{:?}\n{:?}\n{:?}\n",
        f.name, f.signature, f.stack_slots, f.global_values, f.signatures, f.ext_funcs
    );
    for &block in f.layout.blocks() {
        let params: Vec<_> = dfg
            .block_params(block)
            .iter()
            .map(|&p| (p, dfg.value_type(p)))
            .collect();
        out += &format!("{block} {params:?} cold={}\n", dfg.block_data(block).cold);
        for inst in f.layout.block_insts(block) {
            let mut data: InstructionData = *dfg.inst(inst);
            let list = dfg.inst_value_list(inst).to_vec();
            if let Some(l) = data.value_list_mut() {
                *l = Default::default();
            }
            let dests: Vec<_> = f
                .branch_destinations(inst)
                .iter()
                .map(|d| (d.block, dfg.block_call_args(d).to_vec()))
                .collect();
            for d in data.branch_destinations_mut() {
                d.args = Default::default();
            }
            let results: Vec<_> = dfg
                .inst_results(inst)
                .iter()
                .map(|&r| (r, dfg.value_type(r)))
                .collect();
            out += &format!(
                "  {inst} {results:?} {data:?} {list:?} {dests:?} {:?}\n",
                f.srclocs[inst]
            );
        }
    }
    for i in 0..dfg.num_values() {
        let v = Value::new(i);
        if let ValueDef::Alias(to) = dfg.value_def(v) {
            out += &format!("alias {v} -> {to}: {}\n", dfg.value_type(v));
        }
    }
    out
}

/// Parse `text`, print, reparse, print again; both prints and structures must agree.
fn round_trip(text: &str, file: &str) -> Result<usize, String> {
    let first = parse_functions(text, file).map_err(|e| format!("parse: {e}"))?;
    let printed: String = first.iter().map(|f| format!("{f}\n")).collect();
    let second = parse_functions(&printed, file).map_err(|e| format!("reparse: {e}\n{printed}"))?;
    let reprinted: String = second.iter().map(|f| format!("{f}\n")).collect();
    if printed != reprinted {
        return Err(format!("print differs:\n{printed}\n---\n{reprinted}"));
    }
    for (a, b) in first.iter().zip(&second) {
        let (sa, sb) = (structure(a), structure(b));
        if sa != sb {
            return Err(format!("structure differs:\n{sa}\n---\n{sb}"));
        }
        if !a.layout.is_compact() || !b.layout.is_compact() {
            return Err("a parsed function is not compact".into());
        }
    }
    Ok(first.len())
}

fn clif_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            clif_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "clif") {
            out.push(path);
        }
    }
}

/// Round-trip every `.clif` under `dir` that parses; returns (files, failures).
fn round_trip_dir(dir: &Path) -> (usize, Vec<String>) {
    let mut files = Vec::new();
    clif_files(dir, &mut files);
    files.sort();
    let mut failures = Vec::new();
    for path in &files {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if let Err(e) = round_trip(&text, &path.display().to_string()) {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    (files.len(), failures)
}

#[test]
fn repository_clif_files_round_trip() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let (count, failures) = round_trip_dir(&dir);
    assert!(
        failures.is_empty(),
        "{} of {count} files failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn conformance_dir_round_trips() {
    let Ok(dir) = std::env::var("KESTREL_CONFORMANCE_DIR") else {
        return;
    };
    let (count, failures) = round_trip_dir(Path::new(&dir));
    eprintln!(
        "round trip: {} of {count} files passed",
        count - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {count} files failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

const SAMPLES: &[&str] = &[
    // Wasmtime's preamble: memory regions, `can_move` and region flags, a stack limit, and
    // `uload32` without its (only possible) type suffix.
    "function u0:1(i64 vmctx, i64) -> i64 tail {
        region0 = 8 \"VMContext+0x8\"
        region1 = 67108888 \"VMStoreContext+0x18\"
        gv0 = vmctx
        gv1 = load.i64 notrap aligned readonly can_move region0 gv0+8
        gv2 = load.i64 notrap aligned region1 gv1+24
        stack_limit = gv2
    block0(v0: i64, v1: i64):
        v2 = uload32 notrap aligned region0 can_move v0+96
        v3 = sload32 notrap aligned v0+100
        v4 = iadd v2, v3
        store notrap aligned region1 v4, v0+8
        return v4
    }",
    // Header forms, parameter attributes, every calling convention.
    "function %f(i32 uext, i64 sext, i64 sret, i64 vmctx) -> i8 sext, f64 fast { block0(v0: i32, v1: i64, v2: i64, v3: i64): v4 = iconst.i8 -1\n v5 = f64const 0x1.8p3\n return v4, v5 }",
    "function u1:2() system_v { block0: return }",
    "function %c() cold { block0: return }\nfunction %t() tail { block0: return }\nfunction %w() windows_fastcall { block0: return }\nfunction %x() winch { block0: return }",
    // Preamble.
    "function %p(i64 vmctx) -> i64 {
        ss0 = explicit_slot 8
        ss2 = explicit_slot 16, align = 16
        gv0 = vmctx
        gv1 = load.i64 notrap aligned gv0+8
        gv2 = iadd_imm gv1, -16
        sig0 = (i64) -> i64 system_v
        fn0 = colocated %g sig0
        fn1 = %CeilF32(f32) -> f32
        fn2 = u0:7(i64) -> i64 tail
    block0(v0: i64):
        v1 = global_value.i64 gv2
        v2 = stack_addr.i64 ss2+8
        v3 = stack_load.i32 ss0+4
        stack_store v3, ss0-4
        v4 = func_addr.i64 fn0
        v5 = call_indirect sig0, v4(v1)
        v6 = call fn2(v5)
        v7 = f32const -NaN:0x1
        v8 = call fn1(v7)
        return v6
    }",
    // Control flow, sparse numbering, aliases, forward references, srclocs, comments.
    "test interpret
    set opt_level=speed
    target x86_64 has_avx
    ; a comment
    function %cf(i32) -> i32 { ; trailing
    block0(v0: i32):
        @0004 v10 = iconst.i32 0xffff_ffff
        v11 -> v10
        v12 -> v11
        brif v0, block3(v12), block1
    block1 cold:
        v20 = iconst.i32 7
        br_table v20, block2(v20), [block3(v20), block2(v0)]
    block2(v30: i32):
        jump block3(v30)
    block3(v40: i32):
        v41 = iadd v40, v12 ; run: %cf(1) == 0
        return v41
    }",
    // Type suffixes that cannot be inferred: the operand is defined in a later block.
    "function %late() -> i64 {
    block0:
        jump block2
    block1:
        v5 = iadd.i64 v9, v9
        return v5
    block2:
        v9 = iconst.i64 3
        jump block1
    }",
    // Every memory and atomic form.
    "function %mem(i64, i32) -> i32 {
    block0(v0: i64, v1: i32):
        v2 = load.i32 notrap aligned little v0+16
        v3 = uload8.i32 v0-1
        store big v1, v0
        istore16 heap v1, v0+0x10
        v4 = atomic_load.i32 little v0
        atomic_store little v1, v0
        v5 = atomic_rmw.i32 little add v0, v1
        v6 = atomic_cas little v0, v1, v2
        v7 = bitcast.f32 little v6
        v8 = load.i32 user5 can_move readonly v0
        fence
        nop
        return v5
    }",
    // Compares, selects, overflow and traps.
    "function %ops(i32, i32, f64) -> i32 {
    block0(v0: i32, v1: i32, v2: f64):
        v3 = icmp ult v0, v1
        v4 = fcmp uno v2, v2
        v5 = select v3, v0, v1
        v6, v7 = uadd_overflow v0, v1
        v8 = uadd_overflow_trap v0, v1, user1
        trapz v0, user1
        trapnz v4, int_divz
        v9 = iconcat v0, v1
        v10, v11 = isplit v9
        v12 = get_frame_pointer.i64
        v13 = uextend.i64 v0
        v14 = fcvt_to_sint_sat.i32 v2
        v15 = f32const +sNaN:0x1
        v16 = f64const -Inf
        v17 = f32const 0x0.5
        trap user1
    }",
];

#[test]
fn samples_round_trip() {
    for (i, text) in SAMPLES.iter().enumerate() {
        if let Err(e) = round_trip(text, &format!("sample{i}")) {
            panic!("sample {i}: {e}");
        }
    }
}

#[test]
fn source_map_and_numbering() {
    let text =
        "function %f(i32) -> i32 {\nblock7(v3: i32):\n    v9 = iadd v3, v3\n    return v9\n}\n";
    let f = &parse_functions(text, "t").unwrap()[0];
    let sm = f.source_map.as_ref().unwrap();
    assert_eq!((sm.function.line, sm.function.col), (1, 1));
    let block = f.layout.blocks()[0];
    assert_eq!(block.to_string(), "block7");
    assert_eq!(f.block_pos(block).map(|p| (p.line, p.col)), Some((2, 1)));
    let insts: Vec<_> = f.layout.block_insts(block).collect();
    assert_eq!(f.inst_pos(insts[0]).map(|p| (p.line, p.col)), Some((3, 5)));
    assert_eq!(f.inst_pos(insts[1]).map(|p| (p.line, p.col)), Some((4, 5)));
    assert_eq!(f.dfg.inst_results(insts[0])[0].to_string(), "v9");
}

#[test]
fn immediates_are_canonical() {
    let text = "function %f() { block0: v0 = iconst.i8 -1\n v1 = iconst.i8 0xff\n v2 = iconst.i64 -1\n return }";
    let f = &parse_functions(text, "t").unwrap()[0];
    let insts: Vec<_> = f.layout.block_insts(f.layout.blocks()[0]).collect();
    let imm = |i: usize| match *f.dfg.inst(insts[i]) {
        InstructionData::UnaryImm { imm, .. } => imm,
        _ => unreachable!("iconst"),
    };
    assert_eq!((imm(0), imm(1), imm(2)), (0xff, 0xff, -1));
}

#[test]
fn symbol_global_values_round_trip_and_are_checked() {
    let text = "function %f() -> i64, i64 {
    gv0 = symbol colocated %table+8
    gv1 = symbol u1:7-16
block0:
    v0 = symbol_value.i64 gv0
    v1 = global_value.i64 gv1
    return v0, v1
}
";
    let funcs = parse_functions(text, "sym.clif").expect("parses");
    kestrel_ir::verify_function(&funcs[0]).expect("verifies");
    let printed = funcs[0].to_string();
    assert!(
        printed.contains("gv0 = symbol colocated %table+8"),
        "{printed}"
    );
    assert!(printed.contains("gv1 = symbol u1:7-16"), "{printed}");
    assert_eq!(round_trip(text, "sym.clif"), Ok(1));

    let narrow = text.replace("v1 = global_value.i64 gv1", "v1 = global_value.i32 gv1");
    let narrow = narrow.replace("-> i64, i64", "-> i64, i32");
    let funcs = parse_functions(&narrow, "sym.clif").expect("parses");
    let err = kestrel_ir::verify_function(&funcs[0]).expect_err("a symbol is 64 bits");
    assert!(err.to_string().contains("symbol address"), "{err}");

    let tls = "function %f() { gv0 = symbol tls %t block0: return }";
    let err = parse_functions(tls, "tls.clif").expect_err("not yet");
    assert!(err.to_string().contains("thread-local"), "{err}");
}

#[test]
fn tail_calls_parse_print_and_are_checked() {
    let ok = "function %f(i64) -> i64 tail {
    sig0 = (i64) -> i64 tail
    fn0 = %g sig0
block0(v0: i64):
    brif v0, block1, block2
block1:
    return_call fn0(v0)
block2:
    v1 = func_addr.i64 fn0
    return_call_indirect sig0, v1(v0)
}
";
    round_trip(ok, "tail.clif").expect("round trips");
    let funcs = parse_functions(ok, "tail.clif").expect("parses");
    kestrel_ir::verify_function(&funcs[0]).expect("verifies");
    let call = funcs[0]
        .layout
        .block_insts(funcs[0].layout.blocks()[1])
        .next();
    assert!(funcs[0].dfg.inst_results(call.unwrap()).is_empty());
    // A tail call writes no results of its own.
    let with_result = ok.replace("    return_call fn0(v0)", "    v9 = return_call fn0(v0)");
    assert!(parse_functions(&with_result, "tail.clif").is_err());
    // Both functions need the `tail` convention.
    let system_v = ok.replace(") -> i64 tail {", ") -> i64 {");
    let err = kestrel_ir::verify_function(&parse_functions(&system_v, "t.clif").unwrap()[0])
        .expect_err("a system_v caller");
    assert!(
        err.to_string().contains("`tail` calling convention"),
        "{err}"
    );
    // The callee returns what the function returns.
    let other_results = ok.replace("sig0 = (i64) -> i64 tail", "sig0 = (i64) -> i32 tail");
    let err = kestrel_ir::verify_function(&parse_functions(&other_results, "t.clif").unwrap()[0])
        .expect_err("different results");
    assert!(err.to_string().contains("callee returns"), "{err}");
}
