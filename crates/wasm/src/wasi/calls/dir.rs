//! Preopened directories (`fd_prestat_*`) and directory listing (`fd_readdir`).
//!
//! `fd_prestat_get` answers `BADF` for every fd that is not a preopened directory: wasi-libc
//! scans fds from 3 until that answer to find the preopens.
//!
//! `fd_readdir` lists the directory its handle refers to (wherever that directory has been
//! moved since it was opened): `.`, `..`, then the entries sorted by name (a stable order, so a
//! cookie — the index of the next entry — means the same thing from call to call while the
//! directory is unchanged). Entries are packed as `dirent` headers each followed by its
//! name, as many as fit; the last may be cut short (the guest sees a full buffer and asks
//! again with a larger one). `..` is given the inode of `.`: the parent is not looked at
//! (for a preopen it is outside the sandbox). Cost: each call reads and sorts the whole
//! directory, O(n log n) for n entries.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirEntryExt;

use cap_std::fs::MetadataExt;

use super::fd::type_of;
use super::{Args, CallResult, Cx};
use crate::wasi::abi::{filetype, layout, Errno};
use crate::wasi::fds::Entry;

/// The guest name of preopened directory `fd`.
fn preopen_name(cx: &mut Cx, fd: u32) -> Result<String, Errno> {
    match cx.state.fds.get(fd)? {
        Entry::Dir(d) => d.preopen.clone().ok_or(Errno::BADF),
        _ => Err(Errno::BADF),
    }
}

pub(super) fn fd_prestat_get(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, out) = (a.u32(0)?, a.u32(1)?);
    let name = preopen_name(cx, fd)?;
    let mut prestat = [0u8; layout::PRESTAT_SIZE];
    prestat[4..8].copy_from_slice(&(name.len() as u32).to_le_bytes());
    cx.guest()?.write(out, &prestat)?;
    Ok(())
}

pub(super) fn fd_prestat_dir_name(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, path, len) = (a.u32(0)?, a.u32(1)?, a.u32(2)?);
    let name = preopen_name(cx, fd)?;
    if (len as usize) < name.len() {
        return Err(Errno::NAMETOOLONG.into());
    }
    cx.guest()?.write(path, name.as_bytes())?;
    Ok(())
}

/// One listed entry: name, inode, WASI type.
struct Listed(Vec<u8>, u64, u8);

pub(super) fn fd_readdir(cx: &mut Cx, a: &Args) -> CallResult {
    let (fd, buf, len, cookie, used_out) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u64(3)?, a.u32(4)?);
    let g = cx.guest()?;
    g.check(buf, len as u64)?;
    g.check(used_out, 4)?;
    let io = |e: std::io::Error| Errno::from_io(&e);
    let dir = &cx.state.fds.dir(fd)?.dir;
    let ino = dir.dir_metadata().map_err(io)?.ino();
    let mut entries = vec![
        Listed(b".".to_vec(), ino, filetype::DIRECTORY),
        Listed(b"..".to_vec(), ino, filetype::DIRECTORY),
    ];
    let mut found = Vec::new();
    for e in dir.entries().map_err(io)? {
        let e = e.map_err(io)?;
        let kind = type_of(e.file_type().map_err(io)?);
        found.push(Listed(e.file_name().as_bytes().to_vec(), e.ino(), kind));
    }
    found.sort_by(|x, y| x.0.cmp(&y.0));
    entries.extend(found);
    let mut out = Vec::new();
    let start = usize::try_from(cookie).unwrap_or(usize::MAX);
    for (i, Listed(name, ino, kind)) in entries.iter().enumerate().skip(start) {
        if out.len() >= len as usize {
            break;
        }
        let mut header = [0u8; layout::DIRENT_SIZE];
        header[0..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
        header[8..16].copy_from_slice(&ino.to_le_bytes());
        header[16..20].copy_from_slice(&(name.len() as u32).to_le_bytes());
        header[20] = *kind;
        out.extend_from_slice(&header);
        out.extend_from_slice(name);
    }
    out.truncate(len as usize);
    g.write(buf, &out)?;
    g.write_u32(used_out, out.len() as u32)?;
    Ok(())
}
