//! Descriptor calls: reading, writing, seeking, status, closing.
//!
//! One read or write moves at most [`MAX_TRANSFER`] bytes (a short count, which the guest's
//! libc loops on, as with a POSIX `readv`/`writev`), so a call's host buffer stays bounded
//! whatever iovecs the guest passes. Every buffer is checked before any data moves: a bad
//! pointer is `FAULT` with nothing consumed from the source.

use std::fs::{File, FileTimes};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cap_fs_ext::SystemTimeSpec;
use cap_std::fs::{FileType, FileTypeExt, Metadata, MetadataExt};

use super::{Args, CallResult, Cx};
use crate::wasi::abi::{fdflags, filetype, fstflags, layout, rights, whence, Errno};
use crate::wasi::fds::{Entry, FdTable, OpenFile};
use crate::wasi::guest::Guest;

/// Bytes one call reads or writes at most.
pub(crate) const MAX_TRANSFER: usize = 16 << 20;

fn io(e: std::io::Error) -> Errno {
    Errno::from_io(&e)
}

/// The buffers of an iovec array, truncated to [`MAX_TRANSFER`] bytes in total.
fn bounded_iovecs(g: &Guest, iovs: u32, count: u32) -> Result<Vec<(u32, u32)>, Errno> {
    let mut budget = MAX_TRANSFER as u32;
    let mut vecs = g.iovecs(iovs, count)?;
    for v in &mut vecs {
        v.1 = v.1.min(budget);
        budget -= v.1;
    }
    Ok(vecs)
}

fn gather(g: &Guest, vecs: &[(u32, u32)]) -> Result<Vec<u8>, Errno> {
    let mut data = Vec::new();
    for &(buf, len) in vecs {
        data.extend_from_slice(&g.read(buf, len)?);
    }
    Ok(data)
}

fn total(vecs: &[(u32, u32)]) -> usize {
    vecs.iter().map(|v| v.1 as usize).sum()
}

pub(super) fn fd_write(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, iovs, count, written_out) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?);
    let g = cx.guest()?;
    let data = gather(&g, &bounded_iovecs(&g, iovs, count)?)?;
    g.check(written_out, 4)?;
    cx.state.fds.get(fd)?.write(&data)?;
    g.write_u32(written_out, data.len() as u32)?;
    Ok(())
}

pub(super) fn fd_read(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, iovs, count, read_out) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?);
    let g = cx.guest()?;
    let vecs = bounded_iovecs(&g, iovs, count)?;
    g.check(read_out, 4)?;
    let data = cx.state.fds.get(fd)?.read(total(&vecs))?;
    g.scatter(&vecs, &data)?;
    g.write_u32(read_out, data.len() as u32)?;
    Ok(())
}

/// The open file of `fd`, for positioned I/O and seeking (`SPIPE` on a stream).
fn file(fds: &mut FdTable, fd: u32) -> Result<&mut OpenFile, Errno> {
    match fds.get(fd)? {
        Entry::File(f) => Ok(f),
        Entry::Dir(_) => Err(Errno::ISDIR),
        Entry::Stdin { .. } | Entry::Output { .. } => Err(Errno::SPIPE),
    }
}

pub(super) fn fd_pread(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, iovs, count, offset, read_out) =
        (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u64(3)?, a.u32(4)?);
    let g = cx.guest()?;
    let vecs = bounded_iovecs(&g, iovs, count)?;
    g.check(read_out, 4)?;
    let f = file(&mut cx.state.fds, fd)?;
    if !f.readable {
        return Err(Errno::BADF.into());
    }
    let mut data = vec![0; total(&vecs)];
    let mut filled = 0;
    while filled < data.len() {
        match f
            .file
            .read_at(&mut data[filled..], offset.saturating_add(filled as u64))
        {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e).into()),
        }
    }
    g.scatter(&vecs, &data[..filled])?;
    g.write_u32(read_out, filled as u32)?;
    Ok(())
}

pub(super) fn fd_pwrite(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, iovs, count, offset, written_out) =
        (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u64(3)?, a.u32(4)?);
    let g = cx.guest()?;
    let data = gather(&g, &bounded_iovecs(&g, iovs, count)?)?;
    g.check(written_out, 4)?;
    let f = file(&mut cx.state.fds, fd)?;
    if !f.writable {
        return Err(Errno::BADF.into());
    }
    f.file.write_all_at(&data, offset).map_err(io)?;
    g.write_u32(written_out, data.len() as u32)?;
    Ok(())
}

pub(super) fn fd_seek(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, offset, how, out) = (a.u32(0)?, a.u64(1)? as i64, a.u32(2)?, a.u32(3)?);
    let g = cx.guest()?;
    g.check(out, 8)?;
    let to = match u8::try_from(how) {
        Ok(whence::SET) => SeekFrom::Start(u64::try_from(offset).map_err(|_| Errno::INVAL)?),
        Ok(whence::CUR) => SeekFrom::Current(offset),
        Ok(whence::END) => SeekFrom::End(offset),
        _ => return Err(Errno::INVAL.into()),
    };
    let position = file(&mut cx.state.fds, fd)?.file.seek(to).map_err(io)?;
    g.write_u64(out, position)?;
    Ok(())
}

pub(super) fn fd_tell(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, out) = (a.u32(0)?, a.u32(1)?);
    let g = cx.guest()?;
    g.check(out, 8)?;
    let position = file(&mut cx.state.fds, fd)?
        .file
        .stream_position()
        .map_err(io)?;
    g.write_u64(out, position)?;
    Ok(())
}

pub(super) fn fd_close(cx: &mut Cx, a: &Args) -> CallResult {
    cx.state.fds.remove(a.u32(0)?)?;
    Ok(())
}

pub(super) fn fd_sync(cx: &mut Cx, a: &Args) -> CallResult {
    if let Entry::File(f) = cx.state.fds.get(a.u32(0)?)? {
        f.file.sync_all().map_err(io)?;
    }
    Ok(())
}

pub(super) fn fd_advise(cx: &mut Cx, a: &Args) -> CallResult {
    cx.state.fds.get(a.u32(0)?)?;
    Ok(())
}

pub(super) fn fd_renumber(cx: &mut Cx, a: &Args) -> CallResult {
    cx.state.fds.renumber(a.u32(0)?, a.u32(1)?)?;
    Ok(())
}

pub(super) fn fd_fdstat_get(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, out) = (a.u32(0)?, a.u32(1)?);
    let g = cx.guest()?;
    let (kind, flags, base, inheriting) = match cx.state.fds.get(fd)? {
        Entry::Stdin { .. } | Entry::Output { .. } => {
            (filetype::CHARACTER_DEVICE, 0, rights::STDIO, 0)
        }
        Entry::File(f) => {
            let kind = Metadata::from_file(&f.file)
                .map_or(filetype::REGULAR_FILE, |m| type_of(m.file_type()));
            let mut base = rights::FILE;
            if !f.readable {
                base &= !rights::FD_READ;
            }
            if !f.writable {
                base &= !(rights::FD_WRITE | rights::FD_ALLOCATE | rights::FD_FILESTAT_SET_SIZE);
            }
            let flags = if f.append { fdflags::APPEND } else { 0 };
            (kind, flags, base, 0)
        }
        Entry::Dir(_) => (
            filetype::DIRECTORY,
            0,
            rights::DIRECTORY,
            rights::FILE | rights::DIRECTORY,
        ),
    };
    let mut stat = [0u8; layout::FDSTAT_SIZE];
    stat[0] = kind;
    stat[2..4].copy_from_slice(&flags.to_le_bytes());
    stat[8..16].copy_from_slice(&base.to_le_bytes());
    stat[16..24].copy_from_slice(&inheriting.to_le_bytes());
    g.write(out, &stat)?;
    Ok(())
}

/// Only `APPEND` can change (and `NONBLOCK` is accepted and ignored: nothing blocks for
/// long); the synchronous-I/O flags are `NOTSUP`.
pub(super) fn fd_fdstat_set_flags(cx: &mut Cx, a: &Args) -> CallResult {
    const NONBLOCK: u32 = 1 << 2;
    let (fd, flags) = (a.u32(0)?, a.u32(1)?);
    if flags & !(fdflags::APPEND as u32 | NONBLOCK) != 0 {
        return Err(Errno::NOTSUP.into());
    }
    let append = flags & fdflags::APPEND as u32 != 0;
    match cx.state.fds.get(fd)? {
        Entry::File(f) => f.append = append,
        _ if append => return Err(Errno::NOTSUP.into()),
        _ => {}
    }
    Ok(())
}

pub(super) fn fd_filestat_get(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, out) = (a.u32(0)?, a.u32(1)?);
    let g = cx.guest()?;
    let stat = match cx.state.fds.get(fd)? {
        Entry::File(f) => filestat(&Metadata::from_file(&f.file).map_err(io)?),
        Entry::Dir(d) => filestat(&d.dir.dir_metadata().map_err(io)?),
        Entry::Stdin { .. } | Entry::Output { .. } => {
            let mut stat = [0u8; layout::FILESTAT_SIZE];
            stat[16] = filetype::CHARACTER_DEVICE;
            stat
        }
    };
    g.write(out, &stat)?;
    Ok(())
}

pub(super) fn fd_filestat_set_size(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, size) = (a.u32(0)?, a.u64(1)?);
    let f = file(&mut cx.state.fds, fd)?;
    if !f.writable {
        return Err(Errno::BADF.into());
    }
    File::set_len(&f.file, size).map_err(io)?;
    Ok(())
}

/// Set the access and modification times of `fd` (a file or a directory, through its
/// handle).
pub(super) fn fd_filestat_set_times(cx: &mut Cx, a: &Args) -> CallResult {
    let fd = a.u32(0)?;
    let (atime, mtime) = times(a.u64(1)?, a.u64(2)?, a.u32(3)?)?;
    let now = SystemTime::now();
    let at = |spec: SystemTimeSpec| match spec {
        SystemTimeSpec::SymbolicNow => now,
        SystemTimeSpec::Absolute(t) => t.into_std(),
    };
    let mut set = FileTimes::new();
    if let Some(t) = atime {
        set = set.set_accessed(at(t));
    }
    if let Some(t) = mtime {
        set = set.set_modified(at(t));
    }
    match cx.state.fds.get(fd)? {
        Entry::File(f) => f.file.set_times(set).map_err(io)?,
        // A directory handle is a read-only `O_DIRECTORY` descriptor: its own times can be
        // set through a duplicate of it.
        Entry::Dir(d) => d
            .dir
            .try_clone()
            .map_err(io)?
            .into_std_file()
            .set_times(set)
            .map_err(io)?,
        Entry::Stdin { .. } | Entry::Output { .. } => return Err(Errno::BADF.into()),
    }
    Ok(())
}

/// The access and modification times `fstflags` asks to set (`None`: left as they are)
/// from the nanosecond times `atim` and `mtim`; `INVAL` for a time both given and "now",
/// or an unknown flag.
pub(super) fn times(
    atim: u64,
    mtim: u64,
    flags: u32,
) -> Result<(Option<SystemTimeSpec>, Option<SystemTimeSpec>), Errno> {
    let all = fstflags::ATIM | fstflags::ATIM_NOW | fstflags::MTIM | fstflags::MTIM_NOW;
    if flags & !all != 0 {
        return Err(Errno::INVAL);
    }
    let one = |ns: u64, set: u32, now: u32| match (flags & set != 0, flags & now != 0) {
        (true, true) => Err(Errno::INVAL),
        (true, false) => Ok(Some(SystemTimeSpec::Absolute(
            cap_std::time::SystemTime::from_std(UNIX_EPOCH + Duration::from_nanos(ns)),
        ))),
        (false, true) => Ok(Some(SystemTimeSpec::SymbolicNow)),
        (false, false) => Ok(None),
    };
    Ok((
        one(atim, fstflags::ATIM, fstflags::ATIM_NOW)?,
        one(mtim, fstflags::MTIM, fstflags::MTIM_NOW)?,
    ))
}

/// The WASI file type of a host file type.
pub(super) fn type_of(t: FileType) -> u8 {
    if t.is_file() {
        filetype::REGULAR_FILE
    } else if t.is_dir() {
        filetype::DIRECTORY
    } else if t.is_symlink() {
        filetype::SYMBOLIC_LINK
    } else {
        if t.is_char_device() {
            filetype::CHARACTER_DEVICE
        } else {
            filetype::UNKNOWN
        }
    }
}

/// A `filestat` from host metadata.
pub(super) fn filestat(m: &Metadata) -> [u8; layout::FILESTAT_SIZE] {
    let ns = |secs: i64, nsec: i64| {
        (secs as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(nsec as u64)
    };
    let mut stat = [0u8; layout::FILESTAT_SIZE];
    stat[0..8].copy_from_slice(&m.dev().to_le_bytes());
    stat[8..16].copy_from_slice(&m.ino().to_le_bytes());
    stat[16] = type_of(m.file_type());
    stat[24..32].copy_from_slice(&m.nlink().to_le_bytes());
    stat[32..40].copy_from_slice(&m.size().to_le_bytes());
    stat[40..48].copy_from_slice(&ns(m.atime(), m.atime_nsec()).to_le_bytes());
    stat[48..56].copy_from_slice(&ns(m.mtime(), m.mtime_nsec()).to_le_bytes());
    stat[56..64].copy_from_slice(&ns(m.ctime(), m.ctime_nsec()).to_le_bytes());
    stat
}
