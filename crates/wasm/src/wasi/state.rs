//! The state of one running WASI program: its arguments and environment (as the
//! NUL-terminated strings the guest receives), its descriptor table, its clocks' origin, and
//! the memory its calls use (bound after instantiation).

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Instant;

use cap_std::fs::Dir;

use super::ctx::WasiCtx;
use super::fds::{Entry, FdTable, OpenDir};
use crate::error::WasmError;
use crate::runtime::Memory;

pub(crate) struct WasiState {
    /// `argv` strings, each with its NUL.
    pub args: Vec<Vec<u8>>,
    /// `KEY=VALUE` strings, each with its NUL.
    pub env: Vec<Vec<u8>>,
    pub fds: FdTable,
    /// The origin of the monotonic and CPU-time clocks.
    pub started: Instant,
    /// `/dev/urandom`, opened on first use.
    pub random: Option<File>,
    /// Memory 0 of the instance, once bound.
    pub memory: Option<Memory>,
}

fn c_string(s: &str) -> Vec<u8> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    bytes
}

impl WasiState {
    /// The state for `ctx`: preopened directories are opened here (as handles, read-only,
    /// `O_DIRECTORY`: the host path is used this once and never kept), so a bad one is an
    /// error naming it before anything runs.
    pub fn new(ctx: WasiCtx) -> Result<WasiState, WasmError> {
        let mut fds = FdTable::new(ctx.stdin, ctx.stdout, ctx.stderr);
        for p in ctx.preopens {
            let bad = |why: String| {
                WasmError::Resource(format!(
                    "preopened directory `{}` (as `{}`): {why}",
                    p.host.display(),
                    p.guest
                ))
            };
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
                .open(&p.host)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ENOTDIR) => bad("not a directory".into()),
                    _ => bad(e.to_string()),
                })?;
            fds.insert(Entry::Dir(OpenDir {
                dir: Dir::from_std_file(file),
                preopen: Some(p.guest.clone()),
            }))
            .map_err(|_| bad("too many preopened directories".into()))?;
        }
        Ok(WasiState {
            args: ctx.args.iter().map(|a| c_string(a)).collect(),
            env: ctx
                .env
                .iter()
                .map(|(k, v)| c_string(&format!("{k}={v}")))
                .collect(),
            fds,
            started: Instant::now(),
            random: None,
            memory: None,
        })
    }
}
