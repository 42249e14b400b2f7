//! Running test files in worker processes, so a file that crashes the process (a fault in
//! JIT code that is no trap, an abort) fails alone instead of ending the run.
//!
//! Contract. [`run_files_isolated`] keeps `jobs` worker processes (made by the caller's
//! `spawn`, which runs [`serve_stdio`] in a fresh process) busy with one file at a time: it
//! writes the file's path as one line to the worker's stdin and reads its report back as one
//! line (see `encode`). A worker that exits before answering crashed on that file: the file
//! fails with the way the worker ended (the signal named), and a fresh worker takes the
//! next file; so does one that answers with a line `encode` did not make, and one that has
//! not answered within the timeout (it is killed; the file fails as timed out). Reports are
//! emitted in path order and summed as [`crate::run_files`] does,
//! so the output is the same as in-process, crashes aside. A worker that cannot be started
//! fails the files it was meant to run, naming the error.
//!
//! Cost: one process start per job plus one per crash; per file, one line each way and,
//! with a timeout, one watchdog thread.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::{run_file, FileReport, Options, Outcome, Summary};

/// [`serve`] on this process's stdin and stdout. Anything else the process writes to stdout
/// while it runs the files goes to stderr instead, so it cannot garble the reports.
pub fn serve_stdio(opts: &Options) -> std::io::Result<()> {
    use std::os::fd::FromRawFd as _;
    // SAFETY: dup and dup2 on the standard descriptors, which stay open for the process's
    // life; the duplicate is owned by the `File` made from it and by nothing else.
    let reports = unsafe {
        let fd = libc::dup(libc::STDOUT_FILENO);
        if fd < 0 || libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        std::fs::File::from_raw_fd(fd)
    };
    let stdin = BufReader::new(std::io::stdin());
    serve(opts, stdin, std::io::BufWriter::new(reports))
}

/// Answer requests on `input` until it ends: each line is a file's path (its bytes), answered
/// with its encoded report on one line of `output`, flushed. Runs on a thread with a stack
/// as large as [`crate::run_files`]'s workers have. Returns the first I/O error.
pub fn serve(
    opts: &Options,
    input: impl BufRead + Send,
    output: impl Write + Send,
) -> std::io::Result<()> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(crate::WORKER_STACK)
            .spawn_scoped(s, move || serve_on_this_thread(opts, input, output))
            .expect("spawn the test worker thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn serve_on_this_thread(
    opts: &Options,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    for line in input.split(b'\n') {
        let report = run_file(Path::new(std::ffi::OsStr::from_bytes(&line?)), opts);
        writeln!(output, "{}", encode(&report.outcome, &report.notes))?;
        output.flush()?;
    }
    Ok(())
}

/// What a worker said to one request.
enum Answer {
    Report(Outcome, Vec<String>),
    /// It ended (closed its pipes) without answering.
    Ended,
    /// It answered with a line `encode` did not make.
    Garbled(String),
    /// It did not answer within the timeout and was killed.
    TimedOut(Duration),
}

/// One worker process and its pipes.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn start(spawn: &(dyn Fn() -> Command + Sync)) -> std::io::Result<Worker> {
        let mut child = spawn()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Ok(Worker {
            child,
            stdin,
            stdout,
        })
    }

    /// The worker's answer on `path` (a path without a newline), waiting at most `timeout`.
    fn ask(&mut self, path: &Path, timeout: Option<Duration>) -> Answer {
        use std::os::unix::ffi::OsStrExt as _;
        let sent = self
            .stdin
            .write_all(path.as_os_str().as_bytes())
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush());
        if sent.is_err() {
            return Answer::Ended;
        }
        let watchdog = timeout.map(|limit| Watchdog::arm(&self.child, limit));
        let mut line = String::new();
        let read = self.stdout.read_line(&mut line);
        if let Some(limit) = watchdog.and_then(Watchdog::disarm) {
            return Answer::TimedOut(limit);
        }
        match read {
            Ok(n) if n > 0 => match decode(line.trim_end_matches('\n')) {
                Some((outcome, notes)) => Answer::Report(outcome, notes),
                None => Answer::Garbled(line),
            },
            _ => Answer::Ended,
        }
    }

    /// Wait for a worker that stopped answering; how it ended.
    fn finish(mut self) -> String {
        drop(self.stdin);
        match self.child.wait() {
            Ok(status) => describe(status),
            Err(e) => format!("could not be waited for: {e}"),
        }
    }
}

/// Kills a worker that has not answered within its limit. The worker is not waited for
/// while the watchdog is armed, so its pid cannot have been reused when the kill is sent.
struct Watchdog {
    answered: mpsc::Sender<()>,
    fired: std::thread::JoinHandle<Option<Duration>>,
}

impl Watchdog {
    fn arm(child: &Child, limit: Duration) -> Watchdog {
        let pid = child.id() as libc::pid_t;
        let (answered, wait) = mpsc::channel::<()>();
        let fired = std::thread::spawn(move || match wait.recv_timeout(limit) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // SAFETY: kill has no memory effects; `pid` names our unreaped child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                Some(limit)
            }
            _ => None,
        });
        Watchdog { answered, fired }
    }

    /// Stops the watchdog; the limit when it had fired (the worker is then dead).
    fn disarm(self) -> Option<Duration> {
        let _ = self.answered.send(());
        self.fired.join().unwrap_or(None)
    }
}

/// Run every file in worker processes made by `spawn` (see the module doc), printing each
/// report through `emit` in path order; the summary counts a crashed or timed-out file as
/// failed. `timeout` bounds each file's run (`None`: no bound).
pub fn run_files_isolated(
    files: &[PathBuf],
    opts: &Options,
    spawn: &(dyn Fn() -> Command + Sync),
    timeout: Option<Duration>,
    emit: impl FnMut(&FileReport),
) -> Summary {
    let jobs = crate::job_count(opts, files.len());
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, FileReport)>();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || {
                let mut worker = None;
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= files.len() {
                        break;
                    }
                    let report = run_in_worker(&mut worker, spawn, timeout, &files[i]);
                    if tx.send((i, report)).is_err() {
                        break;
                    }
                }
                if let Some(w) = worker {
                    // Closing stdin ends `serve`; the status is of no interest then.
                    let _ = w.finish();
                }
            });
        }
        drop(tx);
        crate::emit_in_order(rx, emit)
    })
}

/// `path`'s report from `worker`, starting one if there is none; a worker that dies on the
/// file is waited for and dropped, and the file fails with how it ended.
fn run_in_worker(
    worker: &mut Option<Worker>,
    spawn: &(dyn Fn() -> Command + Sync),
    timeout: Option<Duration>,
    path: &Path,
) -> FileReport {
    let report = |outcome, notes| FileReport {
        path: path.to_path_buf(),
        outcome,
        notes,
    };
    if path.as_os_str().as_encoded_bytes().contains(&b'\n') {
        let why = "the path contains a newline, which the worker protocol cannot send; use \
                   --in-process"
            .to_string();
        return report(Outcome::Fail(vec![why]), Vec::new());
    }
    if worker.is_none() {
        match Worker::start(spawn) {
            Ok(w) => *worker = Some(w),
            Err(e) => {
                let why = format!("cannot start a test worker process: {e}");
                return report(Outcome::Fail(vec![why]), Vec::new());
            }
        }
    }
    let w = worker.as_mut().expect("started above");
    let why = match w.ask(path, timeout) {
        Answer::Report(outcome, notes) => return report(outcome, notes),
        Answer::Ended => {
            let how = worker.take().expect("asked above").finish();
            format!("the test process crashed: {how}")
        }
        Answer::Garbled(line) => {
            let w = worker.take().expect("asked above");
            // Not waited for: it may still be running; killing it ends it.
            let mut child = w.child;
            let _ = child.kill();
            let _ = child.wait();
            format!("the test process answered with a line that is no report: {line:?}")
        }
        Answer::TimedOut(limit) => {
            // Killed by the watchdog: reaping it returns at once.
            let _ = worker.take().expect("asked above").finish();
            format!(
                "timed out: no report within {} s (the test process was killed; raise the \
                 limit with --timeout)",
                limit.as_secs()
            )
        }
    };
    report(Outcome::Fail(vec![why]), Vec::new())
}

/// How a worker ended, for a failure message: `killed by signal SIGSEGV (11)`, or its exit
/// code.
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(sig) = status.signal() {
        let core = if status.core_dumped() {
            ", core dumped"
        } else {
            ""
        };
        return format!("killed by signal {} ({sig}{core})", signal_name(sig));
    }
    match status.code() {
        Some(code) => format!("exited with status {code} before reporting"),
        None => format!("ended as {status}"),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        _ => "unknown",
    }
}

/// A report as one line: tab-separated fields, each escaped (`\\`, `\t`, `\n`): the kind
/// (`PASS`, `FAIL`, `SKIP`), the number of reasons, the reasons, then the notes.
fn encode(outcome: &Outcome, notes: &[String]) -> String {
    let (kind, reasons): (&str, &[String]) = match outcome {
        Outcome::Pass => ("PASS", &[]),
        Outcome::Fail(why) => ("FAIL", why),
        Outcome::Skip(why) => ("SKIP", std::slice::from_ref(why)),
    };
    let mut fields = vec![kind.to_string(), reasons.len().to_string()];
    fields.extend(reasons.iter().chain(notes).map(|s| escape(s)));
    fields.join("\t")
}

/// The inverse of [`encode`]; `None` for a line it did not make.
fn decode(line: &str) -> Option<(Outcome, Vec<String>)> {
    let mut fields = line.split('\t');
    let kind = fields.next()?;
    let count: usize = fields.next()?.parse().ok()?;
    let rest: Vec<String> = fields.map(unescape).collect::<Option<_>>()?;
    if rest.len() < count {
        return None;
    }
    let (reasons, notes) = rest.split_at(count);
    let outcome = match (kind, reasons) {
        ("PASS", []) => Outcome::Pass,
        ("FAIL", [_, ..]) => Outcome::Fail(reasons.to_vec()),
        ("SKIP", [why]) => Outcome::Skip(why.clone()),
        _ => return None,
    };
    Some((outcome, notes.to_vec()))
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            't' => '\t',
            'n' => '\n',
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip_through_their_line() {
        let cases = [
            (Outcome::Pass, vec![]),
            (Outcome::Pass, vec!["warning:\tline 3".to_string()]),
            (
                Outcome::Fail(vec!["a\nb".into(), "back\\slash".into()]),
                vec!["note".into()],
            ),
            (Outcome::Skip("no `test run`".into()), vec![]),
        ];
        for (outcome, notes) in cases {
            let line = encode(&outcome, &notes);
            assert!(!line.contains('\n'), "{line:?}");
            assert_eq!(decode(&line), Some((outcome, notes)));
        }
    }

    #[test]
    fn serve_answers_each_path_with_one_report_line() {
        let input: &[u8] = b"/nonexistent/a.clif\n/nonexistent/b.clif\n";
        let mut output = Vec::new();
        serve(&Options::default(), input, &mut output).unwrap();
        let text = String::from_utf8(output).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        for line in lines {
            match decode(line) {
                Some((Outcome::Fail(why), _)) => assert!(why[0].contains("cannot read"), "{why:?}"),
                other => panic!("expected a failure, got {other:?}"),
            }
        }
    }

    #[test]
    fn lines_not_made_by_encode_are_rejected() {
        for line in [
            "",
            "PASS",
            "FAIL\t0",
            "SKIP\t2\ta",
            "WHAT\t0",
            "PASS\t0\tbad\\x",
        ] {
            assert_eq!(decode(line), None, "{line:?}");
        }
    }
}
