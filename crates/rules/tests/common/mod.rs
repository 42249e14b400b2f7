//! Helpers shared by the integration tests.

use kestrel_rules::SourceMap;
use std::path::{Path, PathBuf};

/// Whether golden files should be rewritten instead of compared.
pub fn blessing() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| v != "0")
}

/// Compares `actual` with the golden file at `path`, or rewrites it under `BLESS=1`.
pub fn golden(path: &Path, actual: &str) {
    if blessing() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {} (run with BLESS=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        panic!(
            "{} differs from the output (run with BLESS=1 to update)\n{}",
            path.display(),
            diff(&expected, actual)
        );
    }
}

/// A minimal line diff: the lines that differ, marked `-` (expected) and `+` (actual).
pub fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("{:>4} - {x}\n", i + 1));
                }
                if let Some(y) = y {
                    out.push_str(&format!("{:>4} + {y}\n", i + 1));
                }
            }
        }
    }
    out
}

/// The `.rules` files of a directory, sorted, named by file name only.
pub fn load_dir_sources(dir: &Path) -> SourceMap {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    files.sort();
    let mut sources = SourceMap::new();
    for f in files {
        sources.add(
            f.file_name().unwrap().to_string_lossy(),
            std::fs::read_to_string(&f).unwrap(),
        );
    }
    sources
}
