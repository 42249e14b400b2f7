//! Golden tests for parse error messages.
//!
//! Each `tests/parse_errors/NAME.clif` must fail to parse; the error's `Display` (plus a
//! newline) must equal `NAME.err`. Run with `BLESS=1` to write the `.err` files from the
//! current output; review the diff before committing.

use std::path::Path;

use kestrel_ir::text::parse_bytes;

#[test]
fn parse_error_messages_match_golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parse_errors");
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/parse_errors exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "clif"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 12, "expected at least a dozen cases");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(case).expect("readable case");
        let actual = match parse_bytes(&bytes, &name) {
            Ok(_) => "unexpectedly parsed without error\n".to_string(),
            Err(e) => format!("{e}\n"),
        };
        let golden = case.with_extension("err");
        if bless {
            std::fs::write(&golden, &actual).expect("writable golden file");
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{name}:\n--- expected ({})\n{expected}--- actual\n{actual}",
                golden.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden mismatch(es) (rerun with BLESS=1 to update):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}
