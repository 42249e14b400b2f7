//! Path calls: every guest path is checked by `sandbox::parse` and then resolved by the
//! host kernel below the handle of its directory descriptor (`sandbox.rs` says what that
//! guarantees); no call turns a guest path into a host path string.
//!
//! `path_open` opens a directory as a directory descriptor (read-only) and anything else as
//! a file with the access its rights ask for: readable with `FD_READ`, writable with
//! `FD_WRITE`, `FD_ALLOCATE` or `FD_FILESTAT_SET_SIZE` (what wasi-libc asks for `O_RDONLY`,
//! `O_WRONLY` and `O_RDWR`). A final symbolic link opened without `SYMLINK_FOLLOW` is
//! `LOOP`, like `O_NOFOLLOW`. `path_rename` and `path_link` resolve each side below its own
//! handle. `path_link` with `SYMLINK_FOLLOW` is `INVAL` (the link is made to the entry
//! itself, as `linkat` without `AT_SYMLINK_FOLLOW` does).

use std::os::unix::ffi::OsStrExt;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

use super::fd::{filestat, times};
use super::{Args, CallResult, Cx, Failure};
use crate::wasi::abi::{fdflags, oflags, rights, Errno, LOOKUP_SYMLINK_FOLLOW};
use crate::wasi::fds::{Entry, OpenDir, OpenFile};
use crate::wasi::sandbox::{errno, parse, GuestPath};

/// The guest string at (`ptr`, `len`).
fn guest_str(cx: &Cx, ptr: u32, len: u32) -> Result<String, Failure> {
    Ok(cx.guest()?.read_str(ptr, len)?)
}

fn follow(lookup: u32) -> FollowSymlinks {
    FollowSymlinks::follow(lookup & LOOKUP_SYMLINK_FOLLOW != 0)
}

pub(super) fn path_open(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, lookup, path, path_len) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?);
    let (open, base, flags, fd_out) = (a.u32(4)? as u16, a.u64(5)?, a.u32(7)? as u16, a.u32(8)?);
    cx.guest()?.check(fd_out, 4)?;
    let text = guest_str(cx, path, path_len)?;
    let p = parse(&text)?;
    let dir = &cx.state.fds.dir(fd)?.dir;
    let request = Request {
        creat: open & oflags::CREAT != 0,
        excl: open & oflags::EXCL != 0,
        trunc: open & oflags::TRUNC != 0,
        want_dir: open & oflags::DIRECTORY != 0 || p.trailing_slash,
        readable: base & rights::FD_READ != 0,
        writable: base & (rights::FD_WRITE | rights::FD_ALLOCATE | rights::FD_FILESTAT_SET_SIZE)
            != 0,
        append: flags & fdflags::APPEND != 0,
        follow: follow(lookup),
    };
    let entry = if request.want_dir {
        open_directory(dir, &p, &request)?
    } else {
        open_file(dir, &p, &request)?
    };
    let new_fd = cx.state.fds.insert(entry)?;
    cx.guest()?.write_u32(fd_out, new_fd)?;
    Ok(())
}

/// What `path_open` was asked for.
struct Request {
    creat: bool,
    excl: bool,
    trunc: bool,
    want_dir: bool,
    readable: bool,
    writable: bool,
    append: bool,
    follow: FollowSymlinks,
}

/// `O_DIRECTORY` (or a trailing `/`): only an existing directory opens. The path is
/// resolved by `cap-std`'s own directory open, not by an open with an `O_DIRECTORY` custom
/// flag: where the kernel has no `openat2`, `cap-std` resolves the path itself and knows a
/// symbolic link by the `ELOOP` of an `O_NOFOLLOW` open, which `O_DIRECTORY` turns into
/// `ENOTDIR`. That handle is a path handle (no reads, no `futimens`), so the directory
/// descriptor is `.` opened below it, which crosses no link.
fn open_directory(dir: &Dir, p: &GuestPath, r: &Request) -> Result<Entry, Errno> {
    let resolved = match r.follow {
        FollowSymlinks::Yes => dir.open_dir(p.path),
        FollowSymlinks::No => dir.open_dir_nofollow(p.path),
    };
    let readable = resolved.and_then(|d| {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_DIRECTORY);
        d.open_with(".", &options)
    });
    match readable {
        Ok(_) if r.creat && r.excl => Err(Errno::EXIST),
        Ok(_) if r.writable || r.trunc => Err(Errno::ISDIR),
        Ok(file) => Ok(Entry::Dir(OpenDir {
            dir: Dir::from_std_file(file.into_std()),
            preopen: None,
        })),
        Err(e) => match errno(e) {
            Errno::NOENT if r.creat => Err(Errno::INVAL),
            e => Err(e),
        },
    }
}

/// Anything else: a file with the access asked for, or a directory if it is one (and
/// neither write access nor truncation was asked for).
fn open_file(dir: &Dir, p: &GuestPath, r: &Request) -> Result<Entry, Errno> {
    if (r.creat || r.trunc) && !r.writable {
        // The host wants write access to create or truncate; do that first, then open with
        // the access asked for. An existing directory is left to the open below.
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create(r.creat)
            .create_new(r.creat && r.excl)
            .truncate(r.trunc)
            .follow(r.follow);
        match dir.open_with(p.path, &options).map_err(errno) {
            Ok(_) => {}
            Err(Errno::ISDIR) if !r.trunc => {}
            Err(e) => return Err(e),
        }
    }
    let mut options = OpenOptions::new();
    options
        .read(r.readable || !r.writable)
        .write(r.writable)
        .create(r.creat && r.writable)
        .create_new(r.creat && r.excl && r.writable)
        .truncate(r.trunc && r.writable)
        .maybe_dir(true)
        .follow(r.follow);
    let file = dir.open_with(p.path, &options).map_err(errno)?.into_std();
    let is_dir = file.metadata().map_err(|e| Errno::from_io(&e))?.is_dir();
    Ok(if is_dir {
        Entry::Dir(OpenDir {
            dir: Dir::from_std_file(file),
            preopen: None,
        })
    } else {
        Entry::File(OpenFile {
            file,
            readable: r.readable,
            writable: r.writable,
            append: r.append,
        })
    })
}

pub(super) fn path_filestat_get(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, lookup, path, len, out) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?, a.u32(4)?);
    let text = guest_str(cx, path, len)?;
    let p = parse(&text)?;
    let dir = &cx.state.fds.dir(fd)?.dir;
    let meta = match follow(lookup) {
        FollowSymlinks::Yes => dir.metadata(p.path),
        FollowSymlinks::No => dir.symlink_metadata(p.path),
    }
    .map_err(errno)?;
    if p.trailing_slash && !meta.is_dir() {
        return Err(Errno::NOTDIR.into());
    }
    cx.guest()?.write(out, &filestat(&meta))?;
    Ok(())
}

pub(super) fn path_filestat_set_times(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, lookup, path, len) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?);
    let (atime, mtime) = times(a.u64(4)?, a.u64(5)?, a.u32(6)?)?;
    let text = guest_str(cx, path, len)?;
    let p = parse(&text)?;
    let dir = &cx.state.fds.dir(fd)?.dir;
    match follow(lookup) {
        FollowSymlinks::Yes => dir.set_times(p.path, atime, mtime),
        FollowSymlinks::No => dir.set_symlink_times(p.path, atime, mtime),
    }
    .map_err(errno)?;
    Ok(())
}

/// The directory of `fd` and the checked guest path at (`ptr`, `len`), for the calls that
/// work on an entry itself.
fn entry_at<'t>(cx: &'t Cx, fd: u32, text: &'t str) -> Result<(&'t Dir, GuestPath<'t>), Failure> {
    let p = parse(text)?;
    Ok((&cx.state.fds.dir(fd)?.dir, p))
}

pub(super) fn path_create_directory(cx: &mut Cx, a: &Args) -> CallResult {
    let text = guest_str(cx, a.u32(1)?, a.u32(2)?)?;
    let (dir, p) = entry_at(cx, a.u32(0)?, &text)?;
    if p.names_a_directory_itself {
        return Err(Errno::EXIST.into());
    }
    dir.create_dir(p.path).map_err(errno)?;
    Ok(())
}

pub(super) fn path_remove_directory(cx: &mut Cx, a: &Args) -> CallResult {
    let text = guest_str(cx, a.u32(1)?, a.u32(2)?)?;
    let (dir, p) = entry_at(cx, a.u32(0)?, &text)?;
    if p.names_a_directory_itself {
        return Err(Errno::INVAL.into());
    }
    dir.remove_dir(p.entry).map_err(errno)?;
    Ok(())
}

pub(super) fn path_unlink_file(cx: &mut Cx, a: &Args) -> CallResult {
    let text = guest_str(cx, a.u32(1)?, a.u32(2)?)?;
    let (dir, p) = entry_at(cx, a.u32(0)?, &text)?;
    if p.names_a_directory_itself {
        return Err(Errno::ISDIR.into());
    }
    if p.trailing_slash {
        return Err(Errno::NOTDIR.into());
    }
    dir.remove_file(p.path).map_err(errno)?;
    Ok(())
}

pub(super) fn path_rename(cx: &mut Cx, a: &Args) -> CallResult {
    let from_text = guest_str(cx, a.u32(1)?, a.u32(2)?)?;
    let to_text = guest_str(cx, a.u32(4)?, a.u32(5)?)?;
    let (from_dir, from) = entry_at(cx, a.u32(0)?, &from_text)?;
    let (to_dir, to) = entry_at(cx, a.u32(3)?, &to_text)?;
    if from.names_a_directory_itself || to.names_a_directory_itself {
        return Err(Errno::BUSY.into());
    }
    // A trailing `/` on either side says the entry moved is a directory.
    if (from.trailing_slash || to.trailing_slash)
        && !from_dir
            .symlink_metadata(from.entry)
            .map_err(errno)?
            .is_dir()
    {
        return Err(Errno::NOTDIR.into());
    }
    from_dir
        .rename(from.entry, to_dir, to.entry)
        .map_err(errno)?;
    Ok(())
}

pub(super) fn path_link(cx: &mut Cx, a: &Args) -> CallResult {
    if a.u32(1)? & LOOKUP_SYMLINK_FOLLOW != 0 {
        return Err(Errno::INVAL.into());
    }
    let from_text = guest_str(cx, a.u32(2)?, a.u32(3)?)?;
    let to_text = guest_str(cx, a.u32(5)?, a.u32(6)?)?;
    let (from_dir, from) = entry_at(cx, a.u32(0)?, &from_text)?;
    let (to_dir, to) = entry_at(cx, a.u32(4)?, &to_text)?;
    if from.names_a_directory_itself || to.names_a_directory_itself {
        return Err(Errno::PERM.into());
    }
    from_dir
        .hard_link(from.path, to_dir, to.path)
        .map_err(errno)?;
    Ok(())
}

pub(super) fn path_symlink(cx: &mut Cx, a: &Args) -> CallResult {
    let target = guest_str(cx, a.u32(0)?, a.u32(1)?)?;
    let text = guest_str(cx, a.u32(3)?, a.u32(4)?)?;
    let (dir, p) = entry_at(cx, a.u32(2)?, &text)?;
    if target.is_empty() {
        return Err(Errno::NOENT.into());
    }
    if target.contains('\0') {
        return Err(Errno::INVAL.into());
    }
    if p.names_a_directory_itself {
        return Err(Errno::EXIST.into());
    }
    // `Dir::symlink` refuses an absolute target (an escape, `PERM`).
    dir.symlink(target.as_str(), p.path).map_err(errno)?;
    Ok(())
}

pub(super) fn path_readlink(cx: &mut Cx, a: &Args) -> CallResult {
    let text = guest_str(cx, a.u32(1)?, a.u32(2)?)?;
    let (buf, len, used_out) = (a.u32(3)?, a.u32(4)?, a.u32(5)?);
    let (dir, p) = entry_at(cx, a.u32(0)?, &text)?;
    // `Dir::read_link` refuses to read an absolute target (`PERM`).
    let target = dir.read_link(p.path).map_err(errno)?;
    let bytes = target.as_os_str().as_bytes();
    let n = bytes.len().min(len as usize);
    let g = cx.guest()?;
    g.check(used_out, 4)?;
    g.write(buf, &bytes[..n])?;
    g.write_u32(used_out, n as u32)?;
    Ok(())
}
