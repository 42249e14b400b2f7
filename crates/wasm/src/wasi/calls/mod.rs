//! The preview-1 functions: their names, Wasm types and implementations ([`CALLS`]).
//!
//! Contract. Each implementation takes the program's state and its arguments and either
//! succeeds (the import returns errno 0), fails with an errno (returned to the guest), or
//! ends the execution with a trap ([`Failure::Trap`]: `proc_exit`, or a call made before
//! the memory was bound). Guest pointers go through [`Guest`], so a bad one is `FAULT`.
//! Every function of preview 1 is listed; those Kestrel does not implement return `NOSYS`.
//! One file per group: `args_env`, `clock` (clocks, randomness, scheduling, process),
//! `fd` (descriptors), `dir` (preopens and directory listing), `path` (path operations).
//!
//! Cost: each call is O(its arguments and the bytes it moves), plus the host system call.

mod args_env;
mod clock;
mod dir;
mod fd;
mod path;

use wasmparser::ValType;

use super::abi::Errno;
use super::guest::Guest;
use super::state::WasiState;
use crate::runtime::memory::MemoryBox;
use crate::trap::Trap;
use crate::val::Val;

/// Why a call did not succeed.
pub(crate) enum Failure {
    /// Returned to the guest.
    Errno(Errno),
    /// Ends the execution.
    Trap(Trap),
}

impl From<Errno> for Failure {
    fn from(e: Errno) -> Failure {
        Failure::Errno(e)
    }
}

pub(crate) type CallResult = Result<(), Failure>;

/// What an implementation works on: the program's state and its memory.
pub(crate) struct Cx<'a> {
    pub state: &'a mut WasiState,
    pub memory: Option<&'a MemoryBox>,
    /// The function's name, for trap messages.
    pub name: &'static str,
}

impl<'a> Cx<'a> {
    /// The guest memory; a trap if the instance has none bound yet (a call from a start
    /// function runs before `Wasi::bind`).
    pub fn guest(&self) -> Result<Guest<'a>, Failure> {
        match self.memory {
            Some(memory) => Ok(Guest { memory }),
            None => Err(Failure::Trap(Trap::Host(format!(
                "WASI {}: the instance's memory is not bound (no exported `memory`, or \
                 called during instantiation)",
                self.name
            )))),
        }
    }
}

/// A call's arguments, typed by the import's signature (checked when linking).
pub(crate) struct Args<'a>(pub &'a [Val]);

impl Args<'_> {
    pub fn u32(&self, i: usize) -> Result<u32, Failure> {
        match self.0.get(i) {
            Some(Val::I32(v)) => Ok(*v as u32),
            other => Err(bad_argument(i, other)),
        }
    }

    pub fn u64(&self, i: usize) -> Result<u64, Failure> {
        match self.0.get(i) {
            Some(Val::I64(v)) => Ok(*v as u64),
            other => Err(bad_argument(i, other)),
        }
    }
}

fn bad_argument(i: usize, got: Option<&Val>) -> Failure {
    Failure::Trap(Trap::Host(format!(
        "WASI argument {i} has the wrong type ({got:?}); the import's type was checked, so \
         this is a bug"
    )))
}

/// One preview-1 function.
pub(crate) struct Call {
    pub name: &'static str,
    pub params: &'static [ValType],
    /// Whether it returns an errno (all but `proc_exit`).
    pub returns_errno: bool,
    pub run: fn(&mut Cx, &Args) -> CallResult,
}

impl Call {
    /// The Wasm type of the import.
    pub fn ty(&self) -> wasmparser::FuncType {
        let results: &[ValType] = if self.returns_errno {
            &[ValType::I32]
        } else {
            &[]
        };
        wasmparser::FuncType::new(self.params.iter().copied(), results.iter().copied())
    }
}

fn nosys(_: &mut Cx, _: &Args) -> CallResult {
    Err(Errno::NOSYS.into())
}

const I: ValType = ValType::I32;
const L: ValType = ValType::I64;

const fn call(
    name: &'static str,
    params: &'static [ValType],
    run: fn(&mut Cx, &Args) -> CallResult,
) -> Call {
    Call {
        name,
        params,
        returns_errno: true,
        run,
    }
}

/// Every preview-1 function, by name.
pub(crate) const CALLS: &[Call] = &[
    call("args_get", &[I, I], args_env::args_get),
    call("args_sizes_get", &[I, I], args_env::args_sizes_get),
    call("clock_res_get", &[I, I], clock::clock_res_get),
    call("clock_time_get", &[I, L, I], clock::clock_time_get),
    call("environ_get", &[I, I], args_env::environ_get),
    call("environ_sizes_get", &[I, I], args_env::environ_sizes_get),
    call("fd_advise", &[I, L, L, I], fd::fd_advise),
    call("fd_allocate", &[I, L, L], nosys),
    call("fd_close", &[I], fd::fd_close),
    call("fd_datasync", &[I], fd::fd_sync),
    call("fd_fdstat_get", &[I, I], fd::fd_fdstat_get),
    call("fd_fdstat_set_flags", &[I, I], fd::fd_fdstat_set_flags),
    call("fd_fdstat_set_rights", &[I, L, L], nosys),
    call("fd_filestat_get", &[I, I], fd::fd_filestat_get),
    call("fd_filestat_set_size", &[I, L], fd::fd_filestat_set_size),
    call(
        "fd_filestat_set_times",
        &[I, L, L, I],
        fd::fd_filestat_set_times,
    ),
    call("fd_pread", &[I, I, I, L, I], fd::fd_pread),
    call("fd_prestat_dir_name", &[I, I, I], dir::fd_prestat_dir_name),
    call("fd_prestat_get", &[I, I], dir::fd_prestat_get),
    call("fd_pwrite", &[I, I, I, L, I], fd::fd_pwrite),
    call("fd_read", &[I, I, I, I], fd::fd_read),
    call("fd_readdir", &[I, I, I, L, I], dir::fd_readdir),
    call("fd_renumber", &[I, I], fd::fd_renumber),
    call("fd_seek", &[I, L, I, I], fd::fd_seek),
    call("fd_sync", &[I], fd::fd_sync),
    call("fd_tell", &[I, I], fd::fd_tell),
    call("fd_write", &[I, I, I, I], fd::fd_write),
    call(
        "path_create_directory",
        &[I, I, I],
        path::path_create_directory,
    ),
    call(
        "path_filestat_get",
        &[I, I, I, I, I],
        path::path_filestat_get,
    ),
    call(
        "path_filestat_set_times",
        &[I, I, I, I, L, L, I],
        path::path_filestat_set_times,
    ),
    call("path_link", &[I, I, I, I, I, I, I], path::path_link),
    call("path_open", &[I, I, I, I, I, L, L, I, I], path::path_open),
    call("path_readlink", &[I, I, I, I, I, I], path::path_readlink),
    call(
        "path_remove_directory",
        &[I, I, I],
        path::path_remove_directory,
    ),
    call("path_rename", &[I, I, I, I, I, I], path::path_rename),
    call("path_symlink", &[I, I, I, I, I], path::path_symlink),
    call("path_unlink_file", &[I, I, I], path::path_unlink_file),
    call("poll_oneoff", &[I, I, I, I], clock::poll_oneoff),
    Call {
        name: "proc_exit",
        params: &[I],
        returns_errno: false,
        run: clock::proc_exit,
    },
    call("proc_raise", &[I], nosys),
    call("random_get", &[I, I], clock::random_get),
    call("sched_yield", &[], clock::sched_yield),
    call("sock_accept", &[I, I, I], nosys),
    call("sock_recv", &[I, I, I, I, I, I], nosys),
    call("sock_send", &[I, I, I, I, I], nosys),
    call("sock_shutdown", &[I, I], nosys),
];

/// The preview-1 function named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Call> {
    CALLS.iter().find(|c| c.name == name)
}

/// Run `call` on `args`: its Wasm results, or the trap that ends the execution.
pub(crate) fn dispatch(call: &Call, cx: &mut Cx, args: &[Val]) -> Result<Vec<Val>, Trap> {
    let errno = match (call.run)(cx, &Args(args)) {
        Ok(()) => Errno::SUCCESS,
        Err(Failure::Errno(e)) => e,
        Err(Failure::Trap(t)) => return Err(t),
    };
    Ok(if call.returns_errno {
        vec![Val::I32(errno.0 as i32)]
    } else {
        Vec::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_sorted() {
        for w in CALLS.windows(2) {
            assert!(w[0].name < w[1].name, "{} / {}", w[0].name, w[1].name);
        }
        assert_eq!(CALLS.len(), 46);
        assert_eq!(
            find("fd_write").unwrap().ty().to_string(),
            "(func (param i32 i32 i32 i32) (result i32))"
        );
    }
}
