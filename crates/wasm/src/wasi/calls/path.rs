//! Path calls: every guest path is resolved below its directory descriptor by
//! `sandbox::resolve` (confined: no `..` past the directory, no absolute paths, no symbolic
//! links leading out) before the host sees it.
//!
//! `path_open` opens a directory as a directory descriptor (read-only) and anything else as
//! a file with the access its rights ask for: readable with `FD_READ`, writable with
//! `FD_WRITE`, `FD_ALLOCATE` or `FD_FILESTAT_SET_SIZE` (what wasi-libc asks for `O_RDONLY`,
//! `O_WRONLY` and `O_RDWR`). A final symbolic link opened without `SYMLINK_FOLLOW` is
//! `LOOP`, like `O_NOFOLLOW`.

use std::fs::OpenOptions;
use std::os::unix::ffi::OsStrExt;

use super::fd::filestat;
use super::{Args, CallResult, Cx, Failure};
use crate::wasi::abi::{fdflags, oflags, rights, Errno, LOOKUP_SYMLINK_FOLLOW};
use crate::wasi::fds::{Entry, OpenDir, OpenFile};
use crate::wasi::sandbox::{resolve, Resolved};

fn io(e: std::io::Error) -> Errno {
    Errno::from_io(&e)
}

/// The guest path at (`ptr`, `len`), resolved below directory `fd`.
fn resolve_at(cx: &mut Cx, fd: u32, ptr: u32, len: u32, follow: bool) -> Result<Resolved, Failure> {
    let path = cx.guest()?.read_str(ptr, len)?;
    let root = &cx.state.fds.dir(fd)?.host;
    Ok(resolve(root, &path, follow)?)
}

pub(super) fn path_open(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, lookup, path, path_len) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?);
    let (open, base, flags, fd_out) = (a.u32(4)? as u16, a.u64(5)?, a.u32(7)? as u16, a.u32(8)?);
    cx.guest()?.check(fd_out, 4)?;
    let r = resolve_at(cx, fd, path, path_len, lookup & LOOKUP_SYMLINK_FOLLOW != 0)?;
    let creat = open & oflags::CREAT != 0;
    let excl = open & oflags::EXCL != 0;
    let trunc = open & oflags::TRUNC != 0;
    let want_dir = open & oflags::DIRECTORY != 0 || r.trailing_slash;
    let readable = base & rights::FD_READ != 0;
    let writable =
        base & (rights::FD_WRITE | rights::FD_ALLOCATE | rights::FD_FILESTAT_SET_SIZE) != 0;
    let entry = match std::fs::symlink_metadata(&r.host) {
        Ok(_) if creat && excl => return Err(Errno::EXIST.into()),
        Ok(m) if m.file_type().is_symlink() => return Err(Errno::LOOP.into()),
        Ok(m) if m.is_dir() => {
            if writable || trunc {
                return Err(Errno::ISDIR.into());
            }
            Entry::Dir(OpenDir {
                host: r.host,
                preopen: None,
            })
        }
        Ok(_) if want_dir => return Err(Errno::NOTDIR.into()),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e).into()),
        Err(_) if !creat => return Err(Errno::NOENT.into()),
        Err(_) if want_dir => return Err(Errno::INVAL.into()),
        _ => {
            if (creat || trunc) && !writable {
                // The host wants write access to create or truncate; do that first, then
                // open with the access asked for.
                OpenOptions::new()
                    .write(true)
                    .create(creat)
                    .create_new(creat && excl)
                    .truncate(trunc)
                    .open(&r.host)
                    .map_err(io)?;
            }
            let file = OpenOptions::new()
                .read(readable || !writable)
                .write(writable)
                .create(creat && writable)
                .create_new(creat && excl && writable)
                .truncate(trunc && writable)
                .open(&r.host)
                .map_err(io)?;
            Entry::File(OpenFile {
                file,
                readable,
                writable,
                append: flags & fdflags::APPEND != 0,
            })
        }
    };
    let new_fd = cx.state.fds.insert(entry)?;
    cx.guest()?.write_u32(fd_out, new_fd)?;
    Ok(())
}

pub(super) fn path_filestat_get(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, lookup, path, len, out) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?, a.u32(4)?);
    let r = resolve_at(cx, fd, path, len, lookup & LOOKUP_SYMLINK_FOLLOW != 0)?;
    let meta = std::fs::symlink_metadata(&r.host).map_err(io)?;
    if r.trailing_slash && !meta.is_dir() {
        return Err(Errno::NOTDIR.into());
    }
    cx.guest()?.write(out, &filestat(&meta))?;
    Ok(())
}

pub(super) fn path_create_directory(cx: &mut Cx, a: &Args) -> CallResult {
    let r = resolve_at(cx, a.u32(0)?, a.u32(1)?, a.u32(2)?, false)?;
    if r.names_a_directory_itself {
        return Err(Errno::EXIST.into());
    }
    std::fs::create_dir(&r.host).map_err(io)?;
    Ok(())
}

pub(super) fn path_remove_directory(cx: &mut Cx, a: &Args) -> CallResult {
    let r = resolve_at(cx, a.u32(0)?, a.u32(1)?, a.u32(2)?, false)?;
    if r.names_a_directory_itself {
        return Err(Errno::INVAL.into());
    }
    std::fs::remove_dir(&r.host).map_err(io)?;
    Ok(())
}

pub(super) fn path_unlink_file(cx: &mut Cx, a: &Args) -> CallResult {
    let r = resolve_at(cx, a.u32(0)?, a.u32(1)?, a.u32(2)?, false)?;
    if r.names_a_directory_itself {
        return Err(Errno::ISDIR.into());
    }
    if r.trailing_slash {
        return Err(Errno::NOTDIR.into());
    }
    std::fs::remove_file(&r.host).map_err(io)?;
    Ok(())
}

pub(super) fn path_rename(cx: &mut Cx, a: &Args) -> CallResult {
    let from = resolve_at(cx, a.u32(0)?, a.u32(1)?, a.u32(2)?, false)?;
    let to = resolve_at(cx, a.u32(3)?, a.u32(4)?, a.u32(5)?, false)?;
    if from.names_a_directory_itself || to.names_a_directory_itself {
        return Err(Errno::BUSY.into());
    }
    std::fs::rename(&from.host, &to.host).map_err(io)?;
    Ok(())
}

pub(super) fn path_readlink(cx: &mut Cx, a: &Args) -> CallResult {
    let r = resolve_at(cx, a.u32(0)?, a.u32(1)?, a.u32(2)?, false)?;
    let (buf, len, used_out) = (a.u32(3)?, a.u32(4)?, a.u32(5)?);
    let target = std::fs::read_link(&r.host).map_err(io)?;
    let bytes = target.as_os_str().as_bytes();
    let n = bytes.len().min(len as usize);
    let g = cx.guest()?;
    g.check(used_out, 4)?;
    g.write(buf, &bytes[..n])?;
    g.write_u32(used_out, n as u32)?;
    Ok(())
}
