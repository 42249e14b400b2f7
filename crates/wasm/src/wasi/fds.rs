//! The descriptor table of one WASI program: what each fd number refers to.
//!
//! Contract. Fds 0, 1 and 2 start as the standard streams (as configured in the
//! [`WasiCtx`](super::WasiCtx)), then the preopened directories in order from 3; a new
//! descriptor takes the lowest free number. A closed number is free for reuse, the
//! standard ones included. At most [`MAX_FDS`] are open (`MFILE` beyond).
//!
//! Files are host `File`s opened with the access the guest asked for; append mode is kept
//! here (every write seeks to the end first) so `fd_fdstat_set_flags` can change it.
//! Directories are OS handles ([`Dir`]), never host path strings: path calls resolve below
//! the handle, which is the boundary `..` may not cross (see `sandbox.rs`), and the handle
//! keeps naming the same directory whatever is renamed or replaced around it.
//!
//! Cost: lookups are O(1); opening is O(open descriptors) for the free-slot search.

use std::fs::File;
use std::io::{Read, Write};

use cap_std::fs::Dir;

use super::abi::Errno;
use super::ctx::{Input, Output};

/// Descriptors a program may have open at once.
pub const MAX_FDS: usize = 1024;

/// Bytes one read of the host's stdin asks for at most.
const STREAM_READ: usize = 64 << 10;

/// Which host stream an inherited output writes to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// What an fd refers to.
pub(crate) enum Entry {
    Stdin { input: Input, consumed: usize },
    Output { sink: Output, stream: Stream },
    File(OpenFile),
    Dir(OpenDir),
}

pub(crate) struct OpenFile {
    pub file: File,
    pub readable: bool,
    pub writable: bool,
    pub append: bool,
}

pub(crate) struct OpenDir {
    /// The directory's handle.
    pub dir: Dir,
    /// The guest name, for a preopened directory (what `fd_prestat_dir_name` tells).
    pub preopen: Option<String>,
}

impl Entry {
    /// Read up to `len` bytes (fewer at end of file, or when a stream has less ready).
    pub fn read(&mut self, len: usize) -> Result<Vec<u8>, Errno> {
        match self {
            Entry::Stdin {
                input: Input::Bytes(bytes),
                consumed,
            } => {
                let rest = &bytes[*consumed..];
                let n = rest.len().min(len);
                let out = rest[..n].to_vec();
                // Post-invariant: `consumed <= bytes.len()`.
                *consumed += n;
                Ok(out)
            }
            Entry::Stdin {
                input: Input::Inherit,
                ..
            } => {
                // One read of a stream returns what is ready; a bounded buffer is enough.
                let mut buf = vec![0; len.min(STREAM_READ)];
                let n = std::io::stdin()
                    .read(&mut buf)
                    .map_err(|e| Errno::from_io(&e))?;
                buf.truncate(n);
                Ok(buf)
            }
            Entry::File(f) if f.readable => read_fully(&mut f.file, len),
            Entry::File(_) | Entry::Output { .. } => Err(Errno::BADF),
            Entry::Dir(_) => Err(Errno::ISDIR),
        }
    }

    /// Write all of `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Errno> {
        let io = |e: std::io::Error| Errno::from_io(&e);
        match self {
            Entry::Output { sink, stream } => match sink {
                Output::Discard => Ok(()),
                Output::Capture(c) => {
                    c.append(bytes);
                    Ok(())
                }
                Output::Inherit => match stream {
                    Stream::Stdout => {
                        let mut out = std::io::stdout().lock();
                        out.write_all(bytes).and_then(|_| out.flush()).map_err(io)
                    }
                    Stream::Stderr => std::io::stderr().lock().write_all(bytes).map_err(io),
                },
            },
            Entry::File(f) if f.writable => {
                if f.append {
                    use std::io::Seek;
                    f.file.seek(std::io::SeekFrom::End(0)).map_err(io)?;
                }
                f.file.write_all(bytes).map_err(io)
            }
            Entry::File(_) | Entry::Stdin { .. } => Err(Errno::BADF),
            Entry::Dir(_) => Err(Errno::ISDIR),
        }
    }
}

/// Read until `len` bytes or end of file.
fn read_fully(file: &mut File, len: usize) -> Result<Vec<u8>, Errno> {
    let mut buf = Vec::new();
    file.take(len as u64)
        .read_to_end(&mut buf)
        .map_err(|e| Errno::from_io(&e))?;
    Ok(buf)
}

/// The table; see the module docs.
pub(crate) struct FdTable {
    entries: Vec<Option<Entry>>,
}

impl FdTable {
    pub fn new(stdin: Input, stdout: Output, stderr: Output) -> FdTable {
        FdTable {
            entries: vec![
                Some(Entry::Stdin {
                    input: stdin,
                    consumed: 0,
                }),
                Some(Entry::Output {
                    sink: stdout,
                    stream: Stream::Stdout,
                }),
                Some(Entry::Output {
                    sink: stderr,
                    stream: Stream::Stderr,
                }),
            ],
        }
    }

    pub fn get(&mut self, fd: u32) -> Result<&mut Entry, Errno> {
        self.entries
            .get_mut(fd as usize)
            .and_then(Option::as_mut)
            .ok_or(Errno::BADF)
    }

    /// The directory `fd` refers to (`NOTDIR` if it is something else).
    pub fn dir(&self, fd: u32) -> Result<&OpenDir, Errno> {
        match self.entries.get(fd as usize).and_then(Option::as_ref) {
            Some(Entry::Dir(d)) => Ok(d),
            Some(_) => Err(Errno::NOTDIR),
            None => Err(Errno::BADF),
        }
    }

    /// Open `entry` under the lowest free number.
    pub fn insert(&mut self, entry: Entry) -> Result<u32, Errno> {
        let fd = match self.entries.iter().position(Option::is_none) {
            Some(free) => free,
            None if self.entries.len() < MAX_FDS => {
                self.entries.push(None);
                self.entries.len() - 1
            }
            None => return Err(Errno::MFILE),
        };
        // Post-invariant: slot `fd` was free, so no open descriptor changed.
        self.entries[fd] = Some(entry);
        Ok(fd as u32)
    }

    /// Close `fd`, returning what it referred to.
    pub fn remove(&mut self, fd: u32) -> Result<Entry, Errno> {
        self.entries
            .get_mut(fd as usize)
            .and_then(Option::take)
            .ok_or(Errno::BADF)
    }

    /// Move `from` to number `to`, closing what `to` referred to; both must be open.
    pub fn renumber(&mut self, from: u32, to: u32) -> Result<(), Errno> {
        self.get(to)?;
        let entry = self.remove(from)?;
        self.entries[to as usize] = Some(entry);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_reused_lowest_first_and_bounded() {
        let mut t = FdTable::new(
            Input::Bytes(b"abc".to_vec()),
            Output::Discard,
            Output::Discard,
        );
        let dir = || {
            Entry::Dir(OpenDir {
                dir: Dir::open_ambient_dir("/", cap_std::ambient_authority()).unwrap(),
                preopen: None,
            })
        };
        assert_eq!(t.insert(dir()), Ok(3));
        assert_eq!(t.insert(dir()), Ok(4));
        assert!(t.remove(3).is_ok());
        assert!(t.remove(3).is_err());
        assert_eq!(t.insert(dir()), Ok(3));
        assert_eq!(t.get(0).unwrap().read(2), Ok(b"ab".to_vec()));
        assert_eq!(t.get(0).unwrap().read(9), Ok(b"c".to_vec()));
        assert_eq!(t.get(0).unwrap().read(9), Ok(vec![]));
        assert_eq!(t.get(1).unwrap().read(1), Err(Errno::BADF));
        assert_eq!(t.dir(1).err(), Some(Errno::NOTDIR));
        t.renumber(4, 1).unwrap();
        assert!(t.dir(1).is_ok());
        assert_eq!(t.get(4).err(), Some(Errno::BADF));
        assert_eq!(t.dir(4).err(), Some(Errno::BADF));
        let stream = || Entry::Output {
            sink: Output::Discard,
            stream: Stream::Stdout,
        };
        while t.insert(stream()).is_ok() {}
        assert_eq!(t.insert(stream()), Err(Errno::MFILE));
    }
}
