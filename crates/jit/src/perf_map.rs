//! The perf map: `/tmp/perf-PID.map`, one `START SIZE NAME` line (hexadecimal, no `0x`)
//! per JIT function, which `perf report` reads to name samples in anonymous executable
//! memory. Appended at each finalize when the module has it on (`JitBuilder::perf_map`
//! or `KESTREL_PERF_MAP=1`). The map is append-only, so freeing a function releases nothing
//! here: its line stays and names a dead range, which is no longer sampled; if a later
//! finalize places code at the same addresses, that code's line comes later in the file,
//! and a sample there may be named after either line (perf's choice).
//!
//! Cost: one line per function per finalize, under a process-wide lock (modules in several
//! threads append whole lines).

use std::io::Write;
use std::sync::Mutex;

static LOCK: Mutex<()> = Mutex::new(());

/// The map's path for this process.
pub fn path() -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()))
}

/// Append `(address, size, name)` entries. Failures to write are ignored: profiling support
/// must never make a compile fail.
pub(crate) fn append<'a>(entries: impl Iterator<Item = (usize, usize, &'a str)>) {
    let mut text = String::new();
    for (addr, size, name) in entries {
        // perf takes the rest of the line as the name; keep it on one line.
        let name: String = name
            .chars()
            .map(|c| if c == '\n' { ' ' } else { c })
            .collect();
        text.push_str(&format!("{addr:x} {size:x} {name}\n"));
    }
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path())
    {
        let _ = file.write_all(text.as_bytes());
    }
}
