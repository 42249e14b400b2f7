//! What the `aarch64` object oracle needs beyond the x86-64 one: its tools and the test of
//! whether the backend supports a case at all (campaigns generate for it what they generate
//! for x86-64).
//!
//! Contract: [`check_tools`] fails, naming the Debian packages, when
//! `aarch64-linux-gnu-gcc` or `qemu-aarch64` cannot be started. [`unsupported_on_aarch64`]
//! is `Some` only when compiling some function of the case ends in
//! `CodegenError::Unsupported`; any other compile error is left for the oracle's run to
//! report as a finding.
//!
//! Cost: [`check_tools`] starts each tool once; [`unsupported_on_aarch64`] compiles the
//! case's functions once (no link, no process).

use std::process::{Command, Stdio};

use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::machinst::CodegenError;
use kestrel_filetests::native::Flags;
use kestrel_fuzzgen::TestCase;

/// The cross linker and the emulator, with the Debian package providing each.
const TOOLS: [(&str, &str); 2] = [
    ("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
    ("qemu-aarch64", "qemu-user"),
];

/// Whether every tool the `aarch64` oracle runs can be started.
pub fn check_tools() -> Result<(), String> {
    let missing: Vec<&(&str, &str)> = TOOLS
        .iter()
        .filter(|(tool, _)| {
            Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_err()
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let tools: Vec<&str> = missing.iter().map(|(t, _)| *t).collect();
    let packages: Vec<&str> = missing.iter().map(|(_, p)| *p).collect();
    Err(format!(
        "the aarch64 oracle needs {}: install the Debian package(s) {} (apt-get install {})",
        tools.join(" and "),
        packages.join(", "),
        packages.join(" ")
    ))
}

/// Why the AArch64 backend does not support `case` (the first unsupported function's
/// message), or `None` when it compiles every function or fails otherwise.
pub fn unsupported_on_aarch64(case: &TestCase, flags: &Flags) -> Option<String> {
    let isa = kestrel_codegen::isa::lookup("aarch64").ok()?.finish();
    unsupported_on_aarch64_noting(&*isa, case, flags, &mut |_| {})
}

/// [`unsupported_on_aarch64`] for the AArch64 target `isa` (its features), handing each
/// compiled function's rules (with `flags.coverage`) to `fired`.
pub fn unsupported_on_aarch64_noting(
    isa: &dyn TargetIsa,
    case: &TestCase,
    flags: &Flags,
    fired: &mut dyn FnMut(&[u16]),
) -> Option<String> {
    case.functions
        .iter()
        .find_map(|f| match isa.compile_function(f, flags) {
            Err(e @ CodegenError::Unsupported { .. }) => Some(e.to_string()),
            Ok(code) => {
                fired(&code.rules_fired);
                None
            }
            Err(_) => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(text: &str) -> TestCase {
        TestCase {
            functions: kestrel_ir::parse_functions(text, "case.clif").unwrap(),
            args: Vec::new(),
        }
    }

    #[test]
    fn only_unsupported_cases_are_declined() {
        let flags = Flags::default();
        let big = case(
            "function %f(i64, i32) -> i32 {
             block0(v0: i64, v1: i32):
                 v2 = atomic_rmw.i32 big add v0, v1
                 return v2
             }",
        );
        let why = unsupported_on_aarch64(&big, &flags).expect("big-endian rmw is unsupported");
        assert!(why.starts_with("unsupported"), "{why}");
        let wide = case(
            "function %f(i64, i128) -> i128 {
             block0(v0: i64, v1: i128):
                 v2 = atomic_rmw.i128 add v0, v1
                 return v2
             }",
        );
        assert_eq!(unsupported_on_aarch64(&wide, &flags), None);
        let narrow = case(
            "function %f(i64) -> i64 {
             block0(v0: i64):
                 return v0
             }",
        );
        assert_eq!(unsupported_on_aarch64(&narrow, &flags), None);
    }
}
