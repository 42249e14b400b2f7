//! Confinement: every guest path is resolved by the host kernel relative to an open
//! directory handle, and can never lead out of the tree below that handle.
//!
//! Contract. The WASI context holds every open directory as an OS handle
//! ([`cap_std::fs::Dir`]) and never a host path string. Each path call parses the guest's
//! string here ([`parse`]) and then hands it, with the handle of its directory descriptor, to
//! `cap-std`, which resolves it with `openat2(RESOLVE_BENEATH)` on Linux (or, where that
//! system call is missing, one component at a time with `O_NOFOLLOW` opens below the handle).
//! What that guarantees:
//! - a path, and every symbolic link met while resolving it, is resolved below the handle:
//!   `..` past the handle's directory, an absolute guest path, and a link (relative or
//!   absolute) whose target leads out are refused with [`Errno::PERM`] (what Wasmtime
//!   answers, so programs print the same error under both; preview 1 also defines
//!   `NOTCAPABLE`, which older runtimes used); links whose targets stay inside work;
//! - the handle names the directory itself, not the path it was opened by: renaming the
//!   directory, or putting a symbolic link where its name was, changes nothing about where
//!   later calls through the handle go — so a guest cannot walk a held handle out of its box
//!   by renames, and another host process swapping directories for links while the guest
//!   runs cannot redirect a resolution either (the kernel checks each step as it takes it;
//!   there is no separate check to race);
//! - `path_symlink` refuses an absolute target (`PERM`) and `path_readlink` refuses to
//!   read one (`PERM`), so a guest can neither plant nor learn host paths through links;
//! - more than the kernel's 40 links in one resolution is `LOOP`.
//!
//! The parse itself: an empty path is `NOENT`, an absolute one `PERM`, one with a NUL
//! `INVAL`; whether it ends with `/` (the entry must be a directory) and whether its last
//! component is `.` or `..` (operations on the entry itself — unlink, remove, rename,
//! create — refuse those) are noted for the caller, with the path less its trailing
//! slashes (the entry the remove and rename calls name).
//!
//! Cost: parsing is linear in the path; resolution is the kernel's (one lookup per
//! component).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::abi::Errno;

/// A guest path, checked; see the module docs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct GuestPath<'a> {
    /// The path as the host resolves it below a handle.
    pub path: &'a Path,
    /// The path without its trailing slashes: the entry itself, for the calls that remove
    /// or move one (the host's lookup of the entry's parent takes no trailing `/`).
    pub entry: &'a Path,
    /// The last component is `.` or `..`.
    pub names_a_directory_itself: bool,
    /// The path ends with `/`.
    pub trailing_slash: bool,
}

/// Check `path`; see the module docs.
pub(crate) fn parse<'a>(path: &'a str) -> Result<GuestPath<'a>, Errno> {
    if path.is_empty() {
        return Err(Errno::NOENT);
    }
    if path.starts_with('/') {
        return Err(Errno::PERM);
    }
    if path.contains('\0') {
        return Err(Errno::INVAL);
    }
    let entry = path.trim_end_matches('/');
    let last = entry.rsplit('/').next().unwrap_or("");
    let host = |s: &'a str| Path::new(OsStr::from_bytes(s.as_bytes()));
    Ok(GuestPath {
        path: host(path),
        entry: host(entry),
        names_a_directory_itself: last == "." || last == "..",
        trailing_slash: path.ends_with('/'),
    })
}

/// The WASI errno of a host error from a confined call. `cap-std` reports a refused escape
/// as `PermissionDenied` with no OS error number (a real `EACCES` always has one), and that
/// is `PERM`; everything else maps by [`Errno::from_io`].
pub(crate) fn errno(e: std::io::Error) -> Errno {
    if e.raw_os_error().is_none() && e.kind() == std::io::ErrorKind::PermissionDenied {
        Errno::PERM
    } else {
        Errno::from_io(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use cap_std::fs::Dir;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    #[test]
    fn guest_paths_are_checked_before_the_host_sees_them() {
        assert_eq!(parse(""), Err(Errno::NOENT));
        assert_eq!(parse("/etc/passwd"), Err(Errno::PERM));
        assert_eq!(parse("a\0b"), Err(Errno::INVAL));
        let p = parse("sub/dir/").unwrap();
        assert!(p.trailing_slash && !p.names_a_directory_itself);
        assert_eq!(p.path, Path::new("sub/dir/"));
        assert_eq!(p.entry, Path::new("sub/dir"));
        assert!(parse("sub/..").unwrap().names_a_directory_itself);
        assert!(parse("././/").unwrap().names_a_directory_itself);
        assert!(!parse("sub/..x").unwrap().names_a_directory_itself);
    }

    /// A scratch tree: root/{sub/file, in -> sub, out -> .., abs -> /etc, loop -> loop,
    /// sub/secret -> ../../outside/secret} next to outside/secret.
    fn tree(name: &str) -> (PathBuf, Dir) {
        let base =
            std::env::temp_dir().join(format!("kestrel-sandbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret"), "s").unwrap();
        std::fs::write(root.join("sub/file"), "f").unwrap();
        symlink("sub", root.join("in")).unwrap();
        symlink("..", root.join("out")).unwrap();
        symlink("../../outside/secret", root.join("sub/secret")).unwrap();
        symlink("/etc", root.join("abs")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        let dir = Dir::open_ambient_dir(&root, ambient_authority()).unwrap();
        (base, dir)
    }

    #[test]
    fn resolution_below_a_handle_stays_below_it() {
        let (base, dir) = tree("handle");
        let read = |p: &str| dir.read(p).map_err(errno);
        assert_eq!(read("sub/file"), Ok(b"f".to_vec()));
        assert_eq!(read("in/../sub/./file"), Ok(b"f".to_vec()), "a link inside");
        assert_eq!(read("../outside/secret"), Err(Errno::PERM));
        assert_eq!(read("out/outside/secret"), Err(Errno::PERM));
        assert_eq!(read("sub/secret"), Err(Errno::PERM));
        assert_eq!(read("abs/passwd"), Err(Errno::PERM));
        assert_eq!(read("loop"), Err(Errno::LOOP));
        assert_eq!(read("missing/file"), Err(Errno::NOENT));
        assert_eq!(read("sub/file/x"), Err(Errno::NOTDIR));
        std::fs::remove_dir_all(base).unwrap();
    }
}
