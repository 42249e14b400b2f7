//! Bad input never panics the parser: every prefix of some valid files, and deterministic
//! byte-level mutations of them, either parse (and then round-trip through the printer) or
//! give an error with a position inside the input.

use kestrel_ir::text::parse_bytes;

const SEEDS: &[&str] = &[
    "test interpret\nfunction %f(i32, i64 sext) -> i32 fast {\n    ss0 = explicit_slot 8, align = 8\n    gv0 = vmctx\n    gv1 = load.i64 notrap aligned gv0+8\n    sig0 = (i32) -> i32\n    fn0 = colocated %g sig0\n    fn1 = %h(f32) -> f32\n\nblock0(v0: i32, v1: i64):\n    @0010 v2 = iadd v0, v0 ; c\n    v3 -> v2\n    v4 = call fn0(v3)\n    v5 = stack_load.i32 ss0+4\n    v6 = load.i32 notrap little v1-8\n    v7 = f32const -NaN:0x1\n    brif v4, block1(v5), block2\n\nblock1(v8: i32) cold:\n    br_table v8, block2, [block2, block1(v8)]\n\nblock2:\n    v9 = icmp ult v0, v0\n    trapnz v9, user3\n    return v6\n}\n",
    "function u0:1(f64) -> f64 {\nblock0(v0: f64):\n    v1 = f64const 0x1.8p3\n    v2 = fma v0, v1, v1\n    v3 = atomic_rmw.i64 little xchg v4, v4\n    v4 = iconst.i64 0xffff_ffff_ffff_ffff\n    return v2\n}\n",
];

fn check(bytes: &[u8]) {
    match parse_bytes(bytes, "fuzz.clif") {
        Ok(funcs) => {
            let printed: String = funcs.iter().map(|f| format!("{f}\n")).collect();
            let again = parse_bytes(printed.as_bytes(), "printed.clif")
                .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
            let reprinted: String = again.iter().map(|f| format!("{f}\n")).collect();
            assert_eq!(printed, reprinted);
        }
        Err(e) => {
            let lines = bytes.split(|&b| b == b'\n').count() as u32;
            assert!(e.line >= 1 && e.line <= lines.max(1), "{e}");
            assert!(e.col >= 1, "{e}");
            // Display never panics either.
            let _ = e.to_string();
        }
    }
}

#[test]
fn every_prefix_is_handled() {
    for seed in SEEDS {
        for end in 0..=seed.len() {
            check(&seed.as_bytes()[..end]);
        }
    }
}

#[test]
fn mutations_are_handled() {
    const REPLACEMENTS: &[&[u8]] = &[
        b"\0",
        b"\xff",
        b"v99999",
        b"block7",
        b"(",
        b")",
        b",",
        b"=",
        b"->",
        b"-",
        b"+",
        b"0x",
        b"NaN:",
        b"i128",
        b"ss9",
        b"fn5",
        b"sig3",
        b"gv8",
        b"@",
        b"%",
        b"}",
        b"\n",
        b"iconst",
        b"v0",
        b" ",
        b"4294967296",
        b"u1:",
        b"[",
        b"]",
        b";",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for seed in SEEDS {
        let seed = seed.as_bytes();
        for _ in 0..3000 {
            let mut bytes = seed.to_vec();
            for _ in 0..1 + next() % 3 {
                let at = (next() as usize) % bytes.len();
                let len = (next() as usize % 4).min(bytes.len() - at);
                let with = REPLACEMENTS[next() as usize % REPLACEMENTS.len()];
                bytes.splice(at..at + len, with.iter().copied());
            }
            check(&bytes);
        }
    }
}

/// A function with `n` parameters that returns its last one.
fn many_params(n: usize) -> String {
    let types = vec!["i32"; n].join(", ");
    let params: Vec<String> = (0..n).map(|i| format!("v{i}: i32")).collect();
    format!(
        "function %wide({types}) -> i32 {{\nblock0({}):\n    return v{}\n}}\n",
        params.join(", "),
        n - 1
    )
}

#[test]
fn parameter_counts_past_the_16_bit_limit_are_named() {
    // The most a block may have is accepted, and verifies.
    let funcs = parse_bytes(many_params(65536).as_bytes(), "wide.clif").unwrap();
    assert_eq!(
        funcs[0]
            .dfg
            .block_params(funcs[0].layout.entry_block().unwrap())
            .len(),
        65536
    );
    kestrel_ir::verify_function(&funcs[0]).unwrap();
    // One more is an error at that parameter, saying what the limit is (not a wrapped
    // parameter number).
    let e = parse_bytes(many_params(100_000).as_bytes(), "wide.clif").unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("block0 has more than 65536 parameters, the most a block may have"),
        "{text}"
    );
    assert_eq!(e.line, 2, "{text}");
}
