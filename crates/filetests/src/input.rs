//! Reading input files with a size limit, so that a huge or endless input (`/dev/zero`, a
//! FIFO that never ends) is an error naming the file rather than memory exhausted.
//!
//! Cost: O(min(file size, limit)) bytes read, never more than the limit plus one.

use std::io::Read;
use std::path::Path;

/// The largest input file accepted (256 MiB: far above any real `.clif` or `.wasm` file).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The bytes of `path`, or an error naming it: unreadable, or over [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> Result<Vec<u8>, String> {
    read_limited(path, MAX_INPUT_BYTES)
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &Path) -> Result<String, String> {
    String::from_utf8(read_input(path)?)
        .map_err(|e| format!("{}: not UTF-8 text ({e})", path.display()))
}

/// The bytes of `path`, at most `limit` of them (more is an error).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{}: larger than the input limit of {} MiB",
            path.display(),
            limit >> 20
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_input_is_an_error_naming_it() {
        let e = read_limited(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(
            e.starts_with("/dev/zero: larger than the input limit of 1 MiB"),
            "{e}"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.clif");
        std::fs::write(&path, vec![b'x'; 4096]).unwrap();
        assert_eq!(read_limited(&path, 4096).unwrap().len(), 4096);
        assert!(read_limited(&path, 4095).is_err());
        let missing = read_input(&dir.path().join("missing.clif")).unwrap_err();
        assert!(missing.contains("missing.clif"), "{missing}");
    }
}
