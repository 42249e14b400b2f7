//! The numbers of WASI preview 1 (`wasi_snapshot_preview1`), in one place: errno values,
//! file types, flags, rights, clock ids, and the byte layouts of the structures the calls
//! read and write in guest memory (little-endian, as in wasi-libc's `wasi/api.h`).

/// An errno value: what every preview-1 call returns (0 is success).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Errno(pub u16);

impl Errno {
    pub const SUCCESS: Errno = Errno(0);
    pub const TOOBIG: Errno = Errno(1);
    pub const ACCES: Errno = Errno(2);
    pub const AGAIN: Errno = Errno(6);
    pub const BADF: Errno = Errno(8);
    pub const BUSY: Errno = Errno(10);
    pub const EXIST: Errno = Errno(20);
    pub const FAULT: Errno = Errno(21);
    pub const FBIG: Errno = Errno(22);
    pub const ILSEQ: Errno = Errno(25);
    pub const INTR: Errno = Errno(27);
    pub const INVAL: Errno = Errno(28);
    pub const IO: Errno = Errno(29);
    pub const ISDIR: Errno = Errno(31);
    pub const LOOP: Errno = Errno(32);
    pub const MFILE: Errno = Errno(33);
    pub const MLINK: Errno = Errno(34);
    pub const NAMETOOLONG: Errno = Errno(37);
    pub const NFILE: Errno = Errno(41);
    pub const NOENT: Errno = Errno(44);
    pub const NOMEM: Errno = Errno(48);
    pub const NOSPC: Errno = Errno(51);
    pub const NOSYS: Errno = Errno(52);
    pub const NOTDIR: Errno = Errno(54);
    pub const NOTEMPTY: Errno = Errno(55);
    pub const NOTSUP: Errno = Errno(58);
    pub const NXIO: Errno = Errno(60);
    pub const OVERFLOW: Errno = Errno(61);
    pub const PERM: Errno = Errno(63);
    pub const PIPE: Errno = Errno(64);
    pub const ROFS: Errno = Errno(69);
    pub const SPIPE: Errno = Errno(70);
    pub const TXTBSY: Errno = Errno(74);
    pub const XDEV: Errno = Errno(75);
    pub const NOTCAPABLE: Errno = Errno(76);

    /// The WASI errno for a host I/O error: by its Linux errno when it has one, else by its
    /// kind; `IO` when nothing closer fits.
    pub fn from_io(e: &std::io::Error) -> Errno {
        if let Some(code) = e.raw_os_error() {
            return Errno::from_linux(code);
        }
        use std::io::ErrorKind as K;
        match e.kind() {
            K::NotFound => Errno::NOENT,
            K::PermissionDenied => Errno::ACCES,
            K::AlreadyExists => Errno::EXIST,
            K::InvalidInput | K::InvalidData => Errno::INVAL,
            K::BrokenPipe => Errno::PIPE,
            K::Interrupted => Errno::INTR,
            K::WouldBlock => Errno::AGAIN,
            K::OutOfMemory => Errno::NOMEM,
            K::Unsupported => Errno::NOTSUP,
            _ => Errno::IO,
        }
    }

    /// The WASI errno for a Linux errno (x86-64 numbering).
    fn from_linux(code: i32) -> Errno {
        match code {
            1 => Errno::PERM,
            2 => Errno::NOENT,
            4 => Errno::INTR,
            6 => Errno::NXIO,
            7 => Errno::TOOBIG,
            9 => Errno::BADF,
            11 => Errno::AGAIN,
            12 => Errno::NOMEM,
            13 => Errno::ACCES,
            14 => Errno::FAULT,
            16 => Errno::BUSY,
            17 => Errno::EXIST,
            18 => Errno::XDEV,
            20 => Errno::NOTDIR,
            21 => Errno::ISDIR,
            22 => Errno::INVAL,
            23 => Errno::NFILE,
            24 => Errno::MFILE,
            26 => Errno::TXTBSY,
            27 => Errno::FBIG,
            28 => Errno::NOSPC,
            29 => Errno::SPIPE,
            30 => Errno::ROFS,
            31 => Errno::MLINK,
            32 => Errno::PIPE,
            36 => Errno::NAMETOOLONG,
            38 => Errno::NOSYS,
            39 => Errno::NOTEMPTY,
            40 => Errno::LOOP,
            75 => Errno::OVERFLOW,
            95 => Errno::NOTSUP,
            _ => Errno::IO,
        }
    }
}

/// `filetype`.
pub mod filetype {
    pub const UNKNOWN: u8 = 0;
    pub const CHARACTER_DEVICE: u8 = 2;
    pub const DIRECTORY: u8 = 3;
    pub const REGULAR_FILE: u8 = 4;
    pub const SYMBOLIC_LINK: u8 = 7;
}

/// `fdflags`.
pub mod fdflags {
    pub const APPEND: u16 = 1 << 0;
}

/// `oflags` (of `path_open`).
pub mod oflags {
    pub const CREAT: u16 = 1 << 0;
    pub const DIRECTORY: u16 = 1 << 1;
    pub const EXCL: u16 = 1 << 2;
    pub const TRUNC: u16 = 1 << 3;
}

/// `fstflags` (of the `*_set_times` calls): set a time to the value given, or to now.
pub mod fstflags {
    pub const ATIM: u32 = 1 << 0;
    pub const ATIM_NOW: u32 = 1 << 1;
    pub const MTIM: u32 = 1 << 2;
    pub const MTIM_NOW: u32 = 1 << 3;
}

/// `lookupflags`.
pub const LOOKUP_SYMLINK_FOLLOW: u32 = 1 << 0;

/// `rights`: only those Kestrel looks at are named; fdstat reports [`rights::FILE`] and
/// [`rights::DIRECTORY`] sets.
pub mod rights {
    pub const FD_READ: u64 = 1 << 1;
    pub const FD_SEEK: u64 = 1 << 2;
    pub const FD_TELL: u64 = 1 << 5;
    pub const FD_WRITE: u64 = 1 << 6;
    pub const FD_ALLOCATE: u64 = 1 << 8;
    pub const FD_FILESTAT_SET_SIZE: u64 = 1 << 22;
    pub const POLL_FD_READWRITE: u64 = 1 << 27;
    /// Every right of a regular file: the fd_* rights (datasync, read, seek, set flags,
    /// sync, tell, write, advise, allocate, filestat get/set size/set times) and polling.
    pub const FILE: u64 = 0b1_1111_1111 | (0b111 << 21) | POLL_FD_READWRITE;
    /// Every right of a directory: the path_* rights, readdir, and the fd_* rights that
    /// make sense on a directory (set flags, sync, advise, filestat get/set times).
    pub const DIRECTORY: u64 = (1 << 3)
        | (1 << 4)
        | (1 << 7)
        | (0b1_1111_1111_1111 << 9)
        | (1 << 21)
        | (1 << 23)
        | (0b111 << 24);
    /// Stdio: read or write, and poll; no seek or tell (which makes `isatty` true).
    pub const STDIO: u64 = FD_READ | FD_WRITE | POLL_FD_READWRITE;
}

/// Clock ids.
pub mod clock {
    pub const REALTIME: u32 = 0;
    pub const MONOTONIC: u32 = 1;
    pub const PROCESS_CPUTIME: u32 = 2;
    pub const THREAD_CPUTIME: u32 = 3;
}

/// `whence` of `fd_seek`.
pub mod whence {
    pub const SET: u8 = 0;
    pub const CUR: u8 = 1;
    pub const END: u8 = 2;
}

/// Byte layouts: sizes and field offsets.
pub mod layout {
    /// `iovec` / `ciovec`: buf u32 @0, len u32 @4.
    pub const IOVEC_SIZE: u32 = 8;
    /// `fdstat`: filetype u8 @0, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16.
    pub const FDSTAT_SIZE: usize = 24;
    /// `filestat`: dev u64 @0, ino u64 @8, filetype u8 @16, nlink u64 @24, size u64 @32,
    /// atim u64 @40, mtim u64 @48, ctim u64 @56.
    pub const FILESTAT_SIZE: usize = 64;
    /// `prestat`: tag u8 @0 (0: directory), name length u32 @4.
    pub const PRESTAT_SIZE: usize = 8;
    /// `dirent`: next cookie u64 @0, ino u64 @8, name length u32 @16, type u8 @20; the
    /// name follows.
    pub const DIRENT_SIZE: usize = 24;
    /// `subscription`: userdata u64 @0, tag u8 @8; clock: id u32 @16, timeout u64 @24,
    /// precision u64 @32, flags u16 @40; fd_read/fd_write: fd u32 @16.
    pub const SUBSCRIPTION_SIZE: u32 = 48;
    /// `event`: userdata u64 @0, error u16 @8, type u8 @10, nbytes u64 @16, flags u16 @24.
    pub const EVENT_SIZE: usize = 32;
}

/// `eventtype` (subscription and event tags).
pub mod eventtype {
    pub const CLOCK: u8 = 0;
    pub const FD_READ: u8 = 1;
    pub const FD_WRITE: u8 = 2;
}

/// `subclockflags`: the timeout is an absolute time of the clock.
pub const SUBCLOCK_ABSTIME: u16 = 1 << 0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_sets_match_the_specification_bits() {
        // Bits 0..=8 are fd rights a file has; 9..=20 path rights a directory has.
        assert_eq!(rights::FILE & rights::FD_READ, rights::FD_READ);
        assert_eq!(rights::FILE & (1 << 14), 0, "no readdir on a file");
        assert_eq!(rights::DIRECTORY & rights::FD_READ, 0);
        assert_ne!(rights::DIRECTORY & (1 << 13), 0, "path_open on a directory");
        assert_ne!(rights::DIRECTORY & (1 << 26), 0, "path_unlink_file");
        assert_eq!(rights::DIRECTORY >> 30, 0);
        assert_eq!(rights::STDIO & (rights::FD_SEEK | rights::FD_TELL), 0);
    }

    #[test]
    fn io_errors_map_to_their_wasi_numbers() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(Errno::from_io(&e), Errno::NOENT);
        let e = std::io::Error::from_raw_os_error(39);
        assert_eq!(Errno::from_io(&e), Errno::NOTEMPTY);
        let e = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "x");
        assert_eq!(Errno::from_io(&e), Errno::EXIST);
    }
}
