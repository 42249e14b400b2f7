//! [`WasiCtx`]: what a WASI program is given — arguments, environment, preopened
//! directories, and where its standard streams go. A plain builder; [`super::Wasi::new`]
//! turns it into the running state (and opens the directories).
//!
//! Defaults are closed: no arguments, no environment, no directories, stdin at end of file,
//! stdout and stderr discarded. The CLI asks for the host's streams
//! ([`WasiCtx::inherit_stdio`]); tests capture them ([`Capture`]).

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

/// Where a program's stdin comes from.
#[derive(Clone, Debug)]
pub enum Input {
    /// The host process's stdin.
    Inherit,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
}

/// Where a program's stdout or stderr goes.
#[derive(Clone, Debug)]
pub enum Output {
    /// The host process's stream of the same name (written through, unbuffered).
    Inherit,
    /// Nowhere (writes succeed).
    Discard,
    /// Into a buffer the host reads afterwards.
    Capture(Capture),
}

/// A buffer that collects what a program writes to a stream; cheap to clone (shared).
#[derive(Clone, Debug, Default)]
pub struct Capture(Rc<RefCell<Vec<u8>>>);

impl Capture {
    pub fn new() -> Capture {
        Capture::default()
    }

    /// Everything written so far.
    pub fn contents(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }

    /// Everything written so far, as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }

    pub(crate) fn append(&self, bytes: &[u8]) {
        self.0.borrow_mut().extend_from_slice(bytes);
    }
}

/// A host directory the program may use, under the name it sees.
#[derive(Clone, Debug)]
pub struct Preopen {
    pub host: PathBuf,
    pub guest: String,
}

/// What a WASI program is given; see the module docs.
#[derive(Clone, Debug)]
pub struct WasiCtx {
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) preopens: Vec<Preopen>,
    pub(crate) stdin: Input,
    pub(crate) stdout: Output,
    pub(crate) stderr: Output,
}

impl Default for WasiCtx {
    fn default() -> Self {
        WasiCtx {
            args: Vec::new(),
            env: Vec::new(),
            preopens: Vec::new(),
            stdin: Input::Bytes(Vec::new()),
            stdout: Output::Discard,
            stderr: Output::Discard,
        }
    }
}

impl WasiCtx {
    pub fn new() -> WasiCtx {
        WasiCtx::default()
    }

    /// Append one argument (the first is the program's name, `argv[0]`).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Append arguments.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Add the environment variable `key=value`.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Give the program the host directory `host` under the name `guest` (`.` makes it the
    /// program's working directory for relative paths, as wasi-libc resolves them). It is
    /// opened when the [`super::Wasi`] is made, and held as a handle from then on; paths the
    /// program opens through it cannot leave it (see `sandbox.rs`).
    pub fn preopen_dir(mut self, host: impl Into<PathBuf>, guest: impl Into<String>) -> Self {
        self.preopens.push(Preopen {
            host: host.into(),
            guest: guest.into(),
        });
        self
    }

    pub fn stdin(mut self, input: Input) -> Self {
        self.stdin = input;
        self
    }

    pub fn stdout(mut self, output: Output) -> Self {
        self.stdout = output;
        self
    }

    pub fn stderr(mut self, output: Output) -> Self {
        self.stderr = output;
        self
    }

    /// Connect all three streams to the host process's.
    pub fn inherit_stdio(self) -> Self {
        self.stdin(Input::Inherit)
            .stdout(Output::Inherit)
            .stderr(Output::Inherit)
    }
}
