//! Writes the IR's view for the rules (`kestrel_ir::rules_view`: `Op`, `op_of`, `data_of`)
//! and compiles the mid-end's rewrite rules into `$OUT_DIR/simplify.rs`, with rule coverage
//! (`RULE_SITES` and a `rule_fired` call per firing).

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let ops_rules = out.join("ir_ops.rules");
    write_if_changed(&ops_rules, &kestrel_ir::rules_view::rules());
    write_if_changed(&out.join("ir_ops.rs"), &kestrel_ir::rules_view::rust());
    write_if_changed(
        &out.join("ir_builders.rs"),
        &kestrel_ir::rules_view::rust_builders(),
    );
    let mut options = kestrel_rules::Options::default();
    options.codegen.coverage = true;
    let ops_rules = ops_rules.to_str().expect("OUT_DIR is UTF-8");
    kestrel_rules::build::compile_rules_with(
        &[ops_rules, "src/simplify.rules"],
        "simplify.rs",
        &options,
    );
}

fn write_if_changed(path: &std::path::Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("OUT_DIR is writable");
    }
}
