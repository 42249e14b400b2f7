//! Compiles the instruction-selection rules into `$OUT_DIR`.
fn main() {
    kestrel_rules::build::compile_rules(&["src/isa/x64/lower.rules"], "x64_lower.rs");
}
