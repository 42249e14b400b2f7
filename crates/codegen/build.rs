//! Compiles the instruction-selection rules into `$OUT_DIR`, with rule coverage (the
//! `RULE_SITES` list and a `rule_fired` call per firing; see `isa::x64::lowering_rules`).
fn main() {
    let mut options = kestrel_rules::Options::default();
    options.codegen.coverage = true;
    kestrel_rules::build::compile_rules_with(
        &["src/isa/x64/lower.rules"],
        "x64_lower.rs",
        &options,
    );
}
