//! Confined path resolution: a guest path, relative to a directory descriptor, becomes a
//! host path that cannot leave that directory.
//!
//! Contract. [`resolve`] walks the guest path one component at a time below `root` (the
//! directory's host path), keeping the stack of real directories walked so far:
//! - `.` and empty components are skipped; `..` pops the stack, and popping past `root`
//!   is [`Errno::PERM`] (what Wasmtime answers, so programs print the same error under
//!   both; WASI preview 1 also defines `NOTCAPABLE`, which older runtimes used);
//! - an absolute guest path is `PERM` (wasi-libc only ever passes paths relative to a
//!   preopen);
//! - a symbolic link met on the way (or at the end, when following) is read and its target's
//!   components are walked in its place, from the link's directory, under the same rules —
//!   so a relative link that climbs out of `root` is `PERM` when followed, and an
//!   absolute link target is `PERM`; more than [`MAX_LINKS`] links is `LOOP`;
//! - an intermediate component that is missing is `NOENT`, one that is not a directory is
//!   `NOTDIR`; the final component may be missing (the caller may create it).
//!
//! Guarantee: the result is `root` joined with components that each named, when checked, a
//! directory (or, for the last, an entry) that is not a symbolic link, unless the caller
//! asked not to follow a final link. Limitation: the check and the caller's later use of
//! the host path are separate system calls, so another host process that swaps a checked
//! directory for a symbolic link in between could redirect the access (the guest alone
//! cannot: it runs single-threaded and every path it passes is resolved here).
//!
//! Cost: one `lstat` per component, one `readlink` per link.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::abi::Errno;

/// Symbolic links one resolution may follow.
pub const MAX_LINKS: u32 = 40;

/// A resolved path; see the module docs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The host path.
    pub host: PathBuf,
    /// The guest path's last component was `.` or `..` (or it resolved to `root` itself):
    /// operations on the entry itself (unlink, remove, rename, create) refuse it.
    pub names_a_directory_itself: bool,
    /// The guest path ended with `/`: the entry must be a directory.
    pub trailing_slash: bool,
}

/// Resolve `path` below `root`; see the module docs. `follow_final`: whether a symbolic link
/// as the last component is followed (a trailing `/` always follows).
pub(crate) fn resolve(root: &Path, path: &str, follow_final: bool) -> Result<Resolved, Errno> {
    if path.is_empty() {
        return Err(Errno::NOENT);
    }
    if path.starts_with('/') {
        return Err(Errno::PERM);
    }
    if path.contains('\0') {
        return Err(Errno::INVAL);
    }
    let trailing_slash = path.ends_with('/');
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let mut pending: VecDeque<OsString> = components(OsStr::new(path)).collect();
    let mut stack: Vec<OsString> = Vec::new();
    let mut links = 0;
    while let Some(c) = pending.pop_front() {
        if c == ".." {
            // Post-invariant: `stack` only ever holds names below `root`.
            stack.pop().ok_or(Errno::PERM)?;
            continue;
        }
        let is_last = pending.is_empty();
        let candidate = join(root, &stack).join(&c);
        if is_last && !follow_final && !trailing_slash {
            stack.push(c);
            break;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Errno::LOOP);
                }
                let target = std::fs::read_link(&candidate).map_err(|e| Errno::from_io(&e))?;
                if target.is_absolute() {
                    return Err(Errno::PERM);
                }
                // The link's components replace it, resolved from its directory (`stack`).
                for part in components(target.as_os_str())
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    pending.push_front(part);
                }
            }
            Ok(meta) => {
                if !is_last && !meta.is_dir() {
                    return Err(Errno::NOTDIR);
                }
                stack.push(c);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !is_last {
                    return Err(Errno::NOENT);
                }
                stack.push(c);
            }
            Err(e) => return Err(Errno::from_io(&e)),
        }
    }
    Ok(Resolved {
        names_a_directory_itself: last == "." || last == ".." || stack.is_empty(),
        host: join(root, &stack),
        trailing_slash,
    })
}

/// The non-empty, non-`.` components of a `/`-separated path.
fn components(path: &OsStr) -> impl Iterator<Item = OsString> + '_ {
    path.as_bytes()
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(|c| OsStr::from_bytes(c).to_os_string())
}

fn join(root: &Path, stack: &[OsString]) -> PathBuf {
    let mut p = root.to_path_buf();
    p.extend(stack);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A scratch tree: root/{sub/file, file, in -> sub, out -> .., abs -> /etc, loop -> loop}
    /// next to outside/secret.
    fn tree(name: &str) -> (PathBuf, PathBuf) {
        let base =
            std::env::temp_dir().join(format!("kestrel-sandbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret"), "s").unwrap();
        std::fs::write(root.join("sub/file"), "f").unwrap();
        std::fs::write(root.join("file"), "f").unwrap();
        symlink("sub", root.join("in")).unwrap();
        symlink("..", root.join("out")).unwrap();
        symlink("../../outside/secret", root.join("sub/secret")).unwrap();
        symlink("/etc", root.join("abs")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        (base, root)
    }

    #[test]
    fn paths_stay_inside_the_root() {
        let (base, root) = tree("inside");
        let r = |p: &str, follow: bool| resolve(&root, p, follow).map(|r| r.host);
        assert_eq!(r("sub/file", true), Ok(root.join("sub/file")));
        assert_eq!(r("./sub/../file", true), Ok(root.join("file")));
        assert_eq!(r("in/file", true), Ok(root.join("sub/file")));
        assert_eq!(
            r("in", false),
            Ok(root.join("in")),
            "a final link not followed"
        );
        assert_eq!(r("new-file", true), Ok(root.join("new-file")));
        assert_eq!(r(".", true), Ok(root.clone()));
        assert!(
            resolve(&root, "sub/..", true)
                .unwrap()
                .names_a_directory_itself
        );
        assert!(
            !resolve(&root, "sub/file", true)
                .unwrap()
                .names_a_directory_itself
        );
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn escapes_are_refused() {
        let (base, root) = tree("escape");
        let r = |p: &str, follow: bool| resolve(&root, p, follow).map(|r| r.host);
        assert_eq!(r("..", true), Err(Errno::PERM));
        assert_eq!(r("../outside/secret", true), Err(Errno::PERM));
        assert_eq!(r("sub/../../root/file", true), Err(Errno::PERM));
        assert_eq!(r("/etc/passwd", true), Err(Errno::PERM));
        assert_eq!(r("out/outside/secret", true), Err(Errno::PERM));
        assert_eq!(r("out", true), Err(Errno::PERM), "a final link followed");
        assert_eq!(r("sub/secret", true), Err(Errno::PERM));
        assert_eq!(r("abs/passwd", true), Err(Errno::PERM));
        assert_eq!(r("loop", true), Err(Errno::LOOP));
        assert_eq!(r("missing/file", true), Err(Errno::NOENT));
        assert_eq!(r("file/x", true), Err(Errno::NOTDIR));
        assert_eq!(r("", true), Err(Errno::NOENT));
        assert_eq!(r("a\0b", true), Err(Errno::INVAL));
        std::fs::remove_dir_all(base).unwrap();
    }
}
