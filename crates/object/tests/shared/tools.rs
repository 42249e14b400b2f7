//! External tools for the object tests: a required tool (missing: the test fails naming its
//! Debian package) and a command run to success (failing: the test fails with its output).

use std::process::Command;

/// `name` as a command; fails the test when it is not installed.
pub fn tool(name: &str, package: &str) -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "`{name}` is required (Debian package `{package}`)");
    Command::new(name)
}

/// Run `cmd`; its standard output, or the test fails with both outputs.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("starts");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
