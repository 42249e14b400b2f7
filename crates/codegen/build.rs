//! Writes the IR's view for the rules (`kestrel_ir::rules_view`: one `Op` variant per IR opcode)
//! and compiles each ISA's instruction-selection rules, after the shared prelude
//! (`machinst/isel/prelude.rules`), into `$OUT_DIR` (`x64_lower.rs`,
//! `aarch64_lower.rs`), with rule coverage (the `RULE_SITES` list and a `rule_fired` call
//! per firing; see `isa::x64::lowering_rules`).

/// The declarations every ISA's rules share (`machinst::isel`).
const PRELUDE: &str = "src/machinst/isel/prelude.rules";
/// The vector declarations every ISA's rules share (`machinst::isel::vec`).
const PRELUDE_VEC: &str = "src/machinst/isel/prelude_vec.rules";

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let ops_rules = out.join("ir_ops.rules");
    write_if_changed(&ops_rules, &kestrel_ir::rules_view::rules());
    write_if_changed(&out.join("ir_ops.rs"), &kestrel_ir::rules_view::rust());

    let mut options = kestrel_rules::Options::default();
    options.codegen.coverage = true;
    let ops_rules = ops_rules.to_str().expect("OUT_DIR is UTF-8");
    kestrel_rules::build::compile_rules_with(
        &[
            ops_rules,
            PRELUDE,
            PRELUDE_VEC,
            "src/isa/x64/inst.rules",
            "src/isa/x64/lower.rules",
            "src/isa/x64/lower_vec.rules",
            "src/isa/x64/lower_vec_ops.rules",
        ],
        "x64_lower.rs",
        &options,
    );
    kestrel_rules::build::compile_rules_with(
        &[
            ops_rules,
            PRELUDE,
            PRELUDE_VEC,
            "src/isa/aarch64/inst.rules",
            "src/isa/aarch64/lower.rules",
            "src/isa/aarch64/lower_i128.rules",
            "src/isa/aarch64/lower_vec.rules",
        ],
        "aarch64_lower.rs",
        &options,
    );
}

fn write_if_changed(path: &std::path::Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("OUT_DIR is writable");
    }
}
