//! Running a native build of a test program: the oracle the C and Rust program tests compare
//! Kestrel's runs with.

use std::io::Write;
use std::process::{Command, Stdio};

/// What a run produced.
#[derive(Debug, PartialEq, Eq)]
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `cmd` (its program, arguments, environment and directory already set) with `input`
/// on stdin, fed from another thread so a program that writes before reading cannot block
/// on a full pipe; stdout and stderr captured.
pub fn run_native(mut cmd: Command, input: Vec<u8>) -> Run {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut stdin = child.stdin.take().expect("piped");
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("native run");
    feeder.join().unwrap();
    Run {
        status: out
            .status
            .code()
            .expect("the native program exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
