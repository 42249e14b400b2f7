//! Build-script integration: compile rule files from `build.rs` into `OUT_DIR`.
//!
//! ```text
//! // build.rs
//! fn main() {
//!     kestrel_rules::build::compile_rules(&["src/lower.rules"], "lower.rs");
//! }
//! // lib.rs
//! mod lower { include!(concat!(env!("OUT_DIR"), "/lower.rs")); }
//! ```
//!
//! Rule errors become a failed build whose output is the rendered diagnostics. Set
//! `KESTREL_RULES_DUMP=DIR` to also copy the generated Rust to `DIR` for reading.

use crate::{compile, read_sources, Options};
use std::path::{Path, PathBuf};

/// Why a build-script compilation failed.
#[derive(Debug)]
pub enum BuildError {
    Io(std::io::Error),
    /// The rendered diagnostics.
    Rules(String),
    NoOutDir,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Io(e) => write!(f, "{e}"),
            BuildError::Rules(text) => write!(f, "rule compilation failed:\n{text}"),
            BuildError::NoOutDir => write!(f, "OUT_DIR is not set (call this from build.rs)"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Compiles `files` into `dir/out_name`; returns the path written.
pub fn compile_to<P: AsRef<Path>>(
    files: &[P],
    dir: &Path,
    out_name: &str,
    options: &Options,
) -> Result<PathBuf, BuildError> {
    let sources = read_sources(files).map_err(BuildError::Io)?;
    let compiled = compile(&sources, options).map_err(|d| BuildError::Rules(d.render()))?;
    if !compiled.diagnostics.list.is_empty() {
        // Warnings: show them without failing the build.
        for line in compiled.diagnostics.render().lines() {
            println!("cargo:warning={line}");
        }
    }
    let out = dir.join(out_name);
    std::fs::write(&out, &compiled.code).map_err(BuildError::Io)?;
    if let Some(dump) = std::env::var_os("KESTREL_RULES_DUMP") {
        let dump = PathBuf::from(dump);
        std::fs::create_dir_all(&dump).map_err(BuildError::Io)?;
        std::fs::write(dump.join(out_name), &compiled.code).map_err(BuildError::Io)?;
    }
    Ok(out)
}

/// Compiles `files` into `$OUT_DIR/out_name`, asking Cargo to rerun when they change.
pub fn try_compile_rules<P: AsRef<Path>>(
    files: &[P],
    out_name: &str,
    options: &Options,
) -> Result<PathBuf, BuildError> {
    for f in files {
        println!("cargo:rerun-if-changed={}", f.as_ref().display());
    }
    println!("cargo:rerun-if-env-changed=KESTREL_RULES_DUMP");
    let dir = std::env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?;
    compile_to(files, Path::new(&dir), out_name, options)
}

/// Like [`try_compile_rules`] with default options; on failure prints the
/// diagnostics and exits, which fails the build with a readable message.
pub fn compile_rules<P: AsRef<Path>>(files: &[P], out_name: &str) -> PathBuf {
    compile_rules_with(files, out_name, &Options::default())
}

/// [`compile_rules`] with `options` (e.g. rule coverage).
pub fn compile_rules_with<P: AsRef<Path>>(
    files: &[P],
    out_name: &str,
    options: &Options,
) -> PathBuf {
    match try_compile_rules(files, out_name, options) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
