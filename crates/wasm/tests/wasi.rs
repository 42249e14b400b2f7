//! WASI preview 1 through `tests/wat/wasi_probe.wat`, whose exports forward to the WASI
//! imports: the host writes guest memory, calls, and checks errnos, memory and effects.
//! The sandbox's escapes, bad guest pointers, `proc_exit`, unknown functions, linking,
//! and where traps are reported.

use std::path::{Path, PathBuf};

use kestrel_wasm::wasi::{Capture, Input, Output, Wasi, WasiCtx};
use kestrel_wasm::{Imports, Instance, InvokeError, Memory, Module, Trap, Val, WasmError};

const ESUCCESS: i32 = 0;
const EBADF: i32 = 8;
const EFAULT: i32 = 21;
const EINVAL: i32 = 28;
const ELOOP: i32 = 32;
const ENOENT: i32 = 44;
const ENOSYS: i32 = 52;
const ENOTDIR: i32 = 54;
/// What a path leaving its preopen gets: `EPERM`, as under Wasmtime.
const EPERM: i32 = 63;

const FD_READ: i64 = 1 << 1;
const FD_WRITE: i64 = 1 << 6;
const O_CREAT: i32 = 1;
const FOLLOW: i32 = 1;
/// Where the tests put paths, and where calls put their results.
const PATH: u32 = 1024;
const OUT: u32 = 2048;

fn probe_module() -> Module {
    let path = format!("{}/tests/wat/wasi_probe.wat", env!("CARGO_MANIFEST_DIR"));
    let wasm = wat::parse_file(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Module::new(&wasm).unwrap_or_else(|e| panic!("{path}: {e}"))
}

struct Probe {
    module: Module,
    wasi: Wasi,
    instance: Instance,
    memory: Memory,
    stdout: Capture,
}

impl Probe {
    /// The probe with `ctx`, its stdout captured.
    fn new(ctx: WasiCtx) -> Probe {
        let stdout = Capture::new();
        let module = probe_module();
        let wasi = Wasi::new(ctx.stdout(Output::Capture(stdout.clone()))).unwrap();
        let instance = wasi.instantiate(&module, &Imports::new()).unwrap();
        let memory = instance.memory().expect("the probe has a memory");
        Probe {
            module,
            wasi,
            instance,
            memory,
            stdout,
        }
    }

    /// Call export `name` (a WASI call) and return its errno.
    fn call(&self, name: &str, args: &[Val]) -> i32 {
        match self.instance.invoke(name, args) {
            Ok(results) => match results[..] {
                [Val::I32(errno)] => errno,
                _ => panic!("{name}: expected an errno, got {results:?}"),
            },
            Err(e) => panic!("{name}: {e}"),
        }
    }

    fn put(&self, addr: u32, bytes: &[u8]) {
        assert!(self.memory.write(addr as u64, bytes));
    }

    fn get(&self, addr: u32, len: usize) -> Vec<u8> {
        self.memory.read(addr as u64, len).unwrap()
    }

    fn u32_at(&self, addr: u32) -> u32 {
        u32::from_le_bytes(self.get(addr, 4).try_into().unwrap())
    }

    /// `path_open` below fd 3: the new fd, or the errno.
    fn open(&self, path: &str, lookup: i32, oflags: i32, rights: i64) -> Result<u32, i32> {
        self.put(PATH, path.as_bytes());
        let errno = self.call(
            "path_open",
            &[
                Val::I32(3),
                Val::I32(lookup),
                Val::I32(PATH as i32),
                Val::I32(path.len() as i32),
                Val::I32(oflags),
                Val::I64(rights),
                Val::I64(0),
                Val::I32(0),
                Val::I32(OUT as i32),
            ],
        );
        if errno == ESUCCESS {
            Ok(self.u32_at(OUT))
        } else {
            Err(errno)
        }
    }

    /// Read up to `len` bytes from `fd` through one iovec at 4096 (buffer at 4200).
    fn read(&self, fd: u32, len: u32) -> Result<Vec<u8>, i32> {
        self.put(4096, &4200u32.to_le_bytes());
        self.put(4100, &len.to_le_bytes());
        let errno = self.call("fd_read", &[fd as i32, 4096, 1, OUT as i32].map(Val::I32));
        if errno != ESUCCESS {
            return Err(errno);
        }
        Ok(self.get(4200, self.u32_at(OUT) as usize))
    }
}

/// A scratch directory `root` (with `inside.txt`, `sub/file`, and links: `in` -> sub/file,
/// `up` -> .., `out` -> ../outside/secret, `abs` -> /etc/passwd) next to
/// `outside/secret`.
fn tree(name: &str) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::symlink;
    let base = std::env::temp_dir().join(format!("kestrel-wasi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/secret"), "secret").unwrap();
    std::fs::write(root.join("inside.txt"), "inside").unwrap();
    std::fs::write(root.join("sub/file"), "sub file").unwrap();
    symlink("sub/file", root.join("in")).unwrap();
    symlink("..", root.join("up")).unwrap();
    symlink("../outside/secret", root.join("out")).unwrap();
    symlink("/etc/passwd", root.join("abs")).unwrap();
    (base, root)
}

#[test]
fn opened_paths_stay_inside_the_preopened_directory() {
    let (base, root) = tree("escape");
    let p = Probe::new(WasiCtx::new().preopen_dir(&root, "."));
    let read_all = |path: &str| {
        let fd = p.open(path, FOLLOW, 0, FD_READ)?;
        let data = p.read(fd, 100);
        assert_eq!(p.call("fd_close", &[Val::I32(fd as i32)]), ESUCCESS);
        data
    };
    assert_eq!(read_all("inside.txt"), Ok(b"inside".to_vec()));
    assert_eq!(read_all("sub/../inside.txt"), Ok(b"inside".to_vec()));
    assert_eq!(read_all("./sub/file"), Ok(b"sub file".to_vec()));
    assert_eq!(read_all("in"), Ok(b"sub file".to_vec()), "a link inside");
    // Escapes: `..` past the root, absolute paths, links leading out (followed or not).
    assert_eq!(read_all("../outside/secret"), Err(EPERM));
    assert_eq!(read_all("sub/../../outside/secret"), Err(EPERM));
    assert_eq!(read_all("/etc/passwd"), Err(EPERM));
    assert_eq!(read_all("up/outside/secret"), Err(EPERM));
    assert_eq!(read_all("out"), Err(EPERM));
    assert_eq!(read_all("abs"), Err(EPERM));
    assert_eq!(
        p.open("out", 0, 0, FD_READ),
        Err(ELOOP),
        "a final link, not followed"
    );
    // Creation through an escape creates nothing.
    assert_eq!(p.open("up/created", FOLLOW, O_CREAT, FD_WRITE), Err(EPERM));
    assert!(!base.join("created").exists());
    // Removing through an escape removes nothing.
    p.put(PATH, b"up/outside/secret");
    let unlink = [3, PATH as i32, 17].map(Val::I32);
    assert_eq!(p.call("path_unlink_file", &unlink), EPERM);
    p.put(PATH, b"../root");
    let rmdir = [3, PATH as i32, 7].map(Val::I32);
    assert_eq!(p.call("path_remove_directory", &rmdir), EPERM);
    assert!(base.join("outside/secret").exists() && root.exists());
    // Other errors keep their meaning.
    assert_eq!(read_all("missing/x"), Err(ENOENT));
    assert_eq!(read_all("inside.txt/x"), Err(ENOTDIR));
    assert_eq!(p.open("x", FOLLOW, 0, FD_READ).unwrap_err(), ENOENT);
    std::fs::remove_dir_all(base).unwrap();
}

/// The modification time of `path` (not following a final link), in seconds.
fn mtime(path: &Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).unwrap().mtime()
}

#[test]
fn links_and_times_go_through_the_directory_handle() {
    let (base, root) = tree("links-times");
    let p = Probe::new(WasiCtx::new().preopen_dir(&root, "."));
    let at = |path: &str, addr: u32| {
        p.put(addr, path.as_bytes());
        [Val::I32(addr as i32), Val::I32(path.len() as i32)]
    };
    // path_symlink: an absolute target is refused; a relative one is made as it is.
    let symlink = |target: &str, name: &str| {
        let [t, tl] = at(target, PATH);
        let [n, nl] = at(name, PATH + 256);
        p.call("path_symlink", &[t, tl, Val::I32(3), n, nl])
    };
    assert_eq!(symlink("/etc/passwd", "new"), EPERM);
    assert_eq!(symlink("x", "../new"), EPERM);
    assert!(!root.join("new").exists() && !base.join("new").exists());
    assert_eq!(symlink("inside.txt", "new"), ESUCCESS);
    assert_eq!(std::fs::read(root.join("new")).unwrap(), b"inside");
    // path_readlink: relative targets are read; an absolute one is refused.
    let readlink = |name: &str| {
        let [n, nl] = at(name, PATH);
        let args = [
            Val::I32(3),
            n,
            nl,
            Val::I32(OUT as i32),
            Val::I32(64),
            Val::I32(OUT as i32 + 128),
        ];
        match p.call("path_readlink", &args) {
            ESUCCESS => Ok(p.get(OUT, p.u32_at(OUT + 128) as usize)),
            errno => Err(errno),
        }
    };
    assert_eq!(readlink("new"), Ok(b"inside.txt".to_vec()));
    assert_eq!(readlink("out"), Ok(b"../outside/secret".to_vec()));
    assert_eq!(readlink("abs"), Err(EPERM));
    assert_eq!(readlink("inside.txt"), Err(EINVAL), "not a link");
    // fd_filestat_set_times on the preopen itself; a time both given and "now", or an
    // unknown flag, is EINVAL.
    const ATIM: i32 = 1;
    const ATIM_NOW: i32 = 2;
    const MTIM: i32 = 4;
    let set_fd = |atim: i64, mtim: i64, flags: i32| {
        let args = [Val::I32(3), Val::I64(atim), Val::I64(mtim), Val::I32(flags)];
        p.call("fd_filestat_set_times", &args)
    };
    assert_eq!(set_fd(0, 0, ATIM | ATIM_NOW), EINVAL);
    assert_eq!(set_fd(0, 0, 16), EINVAL);
    assert_eq!(set_fd(5_000_000_000, 7_000_000_000, ATIM | MTIM), ESUCCESS);
    assert_eq!(mtime(&root), 7);
    // path_filestat_set_times: through links inside; a link leading out is refused when
    // followed, and its own times are set when not.
    let secret_mtime = mtime(&base.join("outside/secret"));
    let set_path = |path: &str, lookup: i32| {
        let [n, nl] = at(path, PATH);
        let args = [
            Val::I32(3),
            Val::I32(lookup),
            n,
            nl,
            Val::I64(0),
            Val::I64(9_000_000_000),
            Val::I32(MTIM),
        ];
        p.call("path_filestat_set_times", &args)
    };
    assert_eq!(set_path("in", FOLLOW), ESUCCESS);
    assert_eq!(mtime(&root.join("sub/file")), 9);
    assert_eq!(set_path("out", FOLLOW), EPERM);
    assert_eq!(set_path("up/outside/secret", 0), EPERM);
    assert_eq!(set_path("out", 0), ESUCCESS);
    assert_eq!(mtime(&root.join("out")), 9);
    assert_eq!(mtime(&base.join("outside/secret")), secret_mtime);
    std::fs::remove_dir_all(base).unwrap();
}

#[test]
fn preopens_are_listed_and_directories_read() {
    let (base, root) = tree("listing");
    let p = Probe::new(WasiCtx::new().preopen_dir(&root, "/data"));
    assert_eq!(
        p.call("fd_prestat_get", &[3, OUT as i32].map(Val::I32)),
        ESUCCESS
    );
    assert_eq!(
        p.get(OUT, 8),
        [0, 0, 0, 0, 5, 0, 0, 0],
        "a directory, name of 5 bytes"
    );
    let name = [3, OUT as i32, 5].map(Val::I32);
    assert_eq!(p.call("fd_prestat_dir_name", &name), ESUCCESS);
    assert_eq!(p.get(OUT, 5), b"/data");
    assert_eq!(
        p.call("fd_prestat_get", &[4, OUT as i32].map(Val::I32)),
        EBADF
    );
    assert_eq!(
        p.call("fd_prestat_get", &[1, OUT as i32].map(Val::I32)),
        EBADF
    );
    // fd_readdir: ., .., then sorted names; d_next cookies continue a listing.
    let readdir = |cookie: i64, len: i32| {
        let args = [
            Val::I32(3),
            Val::I32(8192),
            Val::I32(len),
            Val::I64(cookie),
            Val::I32(OUT as i32),
        ];
        assert_eq!(p.call("fd_readdir", &args), ESUCCESS);
        p.get(8192, p.u32_at(OUT) as usize)
    };
    let names = |buf: Vec<u8>| {
        let mut names = Vec::new();
        let mut at = 0;
        while at + 24 <= buf.len() {
            let len = u32::from_le_bytes(buf[at + 16..at + 20].try_into().unwrap()) as usize;
            let end = (at + 24 + len).min(buf.len());
            names.push(String::from_utf8_lossy(&buf[at + 24..end]).into_owned());
            at += 24 + len;
        }
        names
    };
    let all = names(readdir(0, 4096));
    assert_eq!(
        all,
        [".", "..", "abs", "in", "inside.txt", "out", "sub", "up"]
    );
    assert_eq!(names(readdir(6, 4096)), ["sub", "up"]);
    let small = readdir(0, 30);
    assert_eq!(
        small.len(),
        30,
        "a full buffer tells the guest to ask again"
    );
    std::fs::remove_dir_all(base).unwrap();
}

#[test]
fn bad_guest_pointers_are_efault_and_move_nothing() {
    let p = Probe::new(WasiCtx::new().stdin(Input::Bytes(b"abc".to_vec())));
    let write = |iovs: u32, count: u32, out: u32| {
        p.call(
            "fd_write",
            &[1, iovs as i32, count as i32, out as i32].map(Val::I32),
        )
    };
    assert_eq!(write(16, 1, 32), ESUCCESS);
    assert_eq!(p.u32_at(32), 6);
    assert_eq!(
        write(0xffff_fff0, 1, 32),
        EFAULT,
        "iovec array out of bounds"
    );
    assert_eq!(
        write(16, 0x2000_0000, 32),
        EFAULT,
        "iovec count past the end"
    );
    p.put(40, &[0xf0, 0xff, 0, 0, 0x20, 0, 0, 0]); // buffer at 65520, 32 bytes: past the end
    assert_eq!(write(40, 1, 32), EFAULT, "buffer out of bounds");
    assert_eq!(write(16, 1, 65535), EFAULT, "result pointer out of bounds");
    assert_eq!(p.stdout.text(), "hello\n", "nothing more was written");
    // A read into a bad buffer consumes nothing.
    p.put(4096, &65534u32.to_le_bytes());
    p.put(4100, &3u32.to_le_bytes());
    let read = [0, 4096, 1, OUT as i32].map(Val::I32);
    assert_eq!(p.call("fd_read", &read), EFAULT);
    assert_eq!(p.read(0, 10), Ok(b"abc".to_vec()));
    assert_eq!(p.read(0, 10), Ok(vec![]), "end of file");
    let sizes = [0x7fff_fff0, 0].map(Val::I32);
    assert_eq!(p.call("args_sizes_get", &sizes), EFAULT);
    assert_eq!(p.call("random_get", &[65530, 100].map(Val::I32)), EFAULT);
    assert_eq!(p.call("fd_write", &[99, 16, 1, 32].map(Val::I32)), EBADF);
}

#[test]
fn arguments_environment_clocks_and_randomness() {
    let p = Probe::new(
        WasiCtx::new()
            .args(["prog", "a b", ""])
            .env("K", "v=1")
            .env("EMPTY", ""),
    );
    assert_eq!(
        p.call("args_sizes_get", &[100, 104].map(Val::I32)),
        ESUCCESS
    );
    assert_eq!((p.u32_at(100), p.u32_at(104)), (3, 5 + 4 + 1));
    assert_eq!(p.call("args_get", &[200, 300].map(Val::I32)), ESUCCESS);
    assert_eq!(p.get(300, 10), b"prog\0a b\0\0");
    assert_eq!(
        [p.u32_at(200), p.u32_at(204), p.u32_at(208)],
        [300, 305, 309]
    );
    assert_eq!(
        p.call("environ_sizes_get", &[100, 104].map(Val::I32)),
        ESUCCESS
    );
    assert_eq!((p.u32_at(100), p.u32_at(104)), (2, 6 + 7));
    assert_eq!(p.call("environ_get", &[200, 300].map(Val::I32)), ESUCCESS);
    assert_eq!(p.get(300, 13), b"K=v=1\0EMPTY=\0");
    let clock = |id: i32| {
        let args = [Val::I32(id), Val::I64(1), Val::I32(OUT as i32)];
        let errno = p.call("clock_time_get", &args);
        (errno, u64::from_le_bytes(p.get(OUT, 8).try_into().unwrap()))
    };
    let (errno, t1) = clock(1);
    std::thread::sleep(std::time::Duration::from_millis(2));
    let (_, t2) = clock(1);
    assert_eq!(errno, ESUCCESS);
    assert!(t2 >= t1 + 2_000_000, "monotonic: {t1} then {t2}");
    let (_, wall) = clock(0);
    assert!(
        wall > 1_600_000_000 * 1_000_000_000,
        "realtime is after 2020: {wall}"
    );
    assert_eq!(clock(9).0, EINVAL);
    assert_eq!(p.call("random_get", &[5000, 64].map(Val::I32)), ESUCCESS);
    let random = p.get(5000, 64);
    assert!(random.iter().any(|&b| b != 0) && random != p.get(5064, 64));
}

#[test]
fn poll_oneoff_sleeps_until_the_earliest_clock_and_reports_ready_descriptors() {
    let p = Probe::new(WasiCtx::new());
    // Subscriptions at 8192 (48 bytes each), events at 12288 (32 bytes each).
    let subscribe = |i: u32, userdata: u64, tag: u8, clock_or_fd: u32, timeout_ns: u64| {
        let mut sub = [0u8; 48];
        sub[0..8].copy_from_slice(&userdata.to_le_bytes());
        sub[8] = tag;
        sub[16..20].copy_from_slice(&clock_or_fd.to_le_bytes());
        sub[24..32].copy_from_slice(&timeout_ns.to_le_bytes());
        p.put(8192 + 48 * i, &sub);
    };
    let poll = |count: i32| {
        p.call(
            "poll_oneoff",
            &[8192, 12288, count, OUT as i32].map(Val::I32),
        )
    };
    let event = |i: u32| {
        let e = p.get(12288 + 32 * i, 32);
        let userdata = u64::from_le_bytes(e[0..8].try_into().unwrap());
        (userdata, u16::from_le_bytes([e[8], e[9]]), e[10])
    };
    const CLOCK: u8 = 0;
    const FD_READ: u8 = 1;
    subscribe(0, 11, CLOCK, 1, 30_000_000);
    subscribe(1, 22, CLOCK, 1, 10_000_000);
    let start = std::time::Instant::now();
    assert_eq!(poll(2), ESUCCESS);
    let waited = start.elapsed();
    assert_eq!(p.u32_at(OUT), 1, "only the earlier clock expired");
    assert_eq!(event(0), (22, 0, CLOCK));
    assert!(
        waited >= std::time::Duration::from_millis(10),
        "slept {waited:?}"
    );
    // A descriptor subscription is ready at once; a bad descriptor is reported in its event.
    subscribe(0, 33, CLOCK, 1, 10_000_000_000);
    subscribe(1, 44, FD_READ, 0, 0);
    subscribe(2, 55, FD_READ, 99, 0);
    let start = std::time::Instant::now();
    assert_eq!(poll(3), ESUCCESS);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "did not wait for the clock"
    );
    assert_eq!(p.u32_at(OUT), 2);
    assert_eq!(
        (event(0), event(1)),
        ((44, 0, FD_READ), (55, EBADF as u16, FD_READ))
    );
    assert_eq!(poll(0), EINVAL);
    subscribe(0, 1, 9, 0, 0);
    assert_eq!(poll(1), EINVAL, "an unknown subscription type");
}

#[test]
fn proc_exit_ends_the_run_with_its_code() {
    let p = Probe::new(WasiCtx::new());
    assert_eq!(p.wasi.run_start(&p.instance).unwrap(), 7);
    assert_eq!(
        p.stdout.text(),
        "hello\n",
        "the write after proc_exit never ran"
    );
    match p.instance.invoke("_start", &[]) {
        Err(InvokeError::Trap {
            trap: Trap::Exit(7),
            func: None,
            offset: None,
        }) => {}
        other => panic!("expected an exit trap, got {other:?}"),
    }
    // The instance stays usable after the unwinding.
    assert_eq!(p.call("fd_write", &[1, 16, 1, 32].map(Val::I32)), ESUCCESS);
    assert_eq!(p.stdout.text(), "hello\nhello\nhello\n");
}

#[test]
fn functions_kestrel_lacks_return_enosys() {
    let p = Probe::new(WasiCtx::new());
    assert_eq!(p.call("sock_accept", &[3, 0, 0].map(Val::I32)), ENOSYS);
    assert_eq!(p.call("unknown", &[Val::I32(1)]), ENOSYS);
    match p.instance.invoke("unknown_no_errno", &[]) {
        Err(InvokeError::Trap {
            trap: Trap::Host(message),
            ..
        }) => assert!(message.contains("not_in_preview_1_either"), "{message}"),
        other => panic!("expected a host trap, got {other:?}"),
    }
}

#[test]
fn linking_checks_wasi_types_and_needs_a_bound_memory() {
    let mistyped = wat::parse_str(
        r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32))))"#,
    )
    .unwrap();
    let module = Module::new(&mistyped).unwrap();
    let wasi = Wasi::new(WasiCtx::new()).unwrap();
    match wasi.instantiate(&module, &Imports::new()) {
        Err(WasmError::Link { field, message, .. }) => {
            assert_eq!(field, "fd_write");
            assert!(message.contains("(param i32 i32 i32 i32)"), "{message}");
        }
        other => panic!("expected a link error, got {other:?}"),
    }
    // A start function runs before the memory is bound: its WASI call traps, saying so.
    let early = wat::parse_str(
        r#"(module
            (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
            (memory (export "memory") 1)
            (func $s (drop (call $w (i32.const 1) (i32.const 0) (i32.const 0) (i32.const 0))))
            (start $s))"#,
    )
    .unwrap();
    match wasi.instantiate(&Module::new(&early).unwrap(), &Imports::new()) {
        Err(WasmError::Trap(Trap::Host(message))) => {
            assert!(message.contains("not bound"), "{message}")
        }
        other => panic!("expected a host trap, got {other:?}"),
    }
    let missing = WasiCtx::new().preopen_dir("/nonexistent/kestrel-dir", ".");
    let e = Wasi::new(missing).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/kestrel-dir"), "{e}");
    let file = WasiCtx::new().preopen_dir(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"),
        ".",
    );
    let e = Wasi::new(file).unwrap_err().to_string();
    assert!(e.contains("not a directory"), "{e}");
}

#[test]
fn traps_name_the_wasm_function_they_happened_in() {
    let p = Probe::new(WasiCtx::new());
    let divide = p
        .module
        .info()
        .func_names
        .iter()
        .find(|(_, name)| *name == "divide")
        .map(|(&index, _)| index)
        .expect("the name section names $divide");
    match p.instance.invoke("calls_divide", &[Val::I32(0)]) {
        Err(InvokeError::Trap { trap, func, offset }) => {
            assert_eq!(trap, Trap::IntegerDivideByZero);
            assert_eq!(func, Some(divide));
            let described = p.module.info().describe_func(divide);
            assert_eq!(described, format!("$divide (function {divide})"));
            assert_eq!(offset, Some(operator_offset(divide, "I32DivU")));
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    // An instance whose calls may run another module's code (through an imported table)
    // does not guess.
    let text = r#"(module (import "t" "table" (table 1 funcref))
        (func (export "f") (result i32) (i32.div_u (i32.const 1) (i32.const 0))))"#;
    let module = Module::new(&wat::parse_str(text).unwrap()).unwrap();
    let table = kestrel_wasm::Table::new(wasmparser::RefType::FUNCREF, 1, None).unwrap();
    let mut imports = Imports::new();
    imports.define("t", "table", kestrel_wasm::Extern::Table(table));
    let instance = Instance::new(&module, &imports).unwrap();
    match instance.invoke("f", &[]) {
        Err(InvokeError::Trap { trap, func, offset }) => {
            assert_eq!(trap, Trap::IntegerDivideByZero);
            assert_eq!((func, offset), (None, None));
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

/// The byte offset in the probe module of the only operator of function `func` (an index
/// among all functions) whose debug name is `name`, found with `wasmparser` independently of
/// the translator.
fn operator_offset(func: u32, name: &str) -> u32 {
    let path = format!("{}/tests/wat/wasi_probe.wat", env!("CARGO_MANIFEST_DIR"));
    let wasm = wat::parse_file(&path).unwrap();
    let mut imported = 0;
    let mut defined = 0;
    let mut found = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&wasm) {
        match payload.unwrap() {
            wasmparser::Payload::ImportSection(imports) => {
                for import in imports.into_imports() {
                    if matches!(import.unwrap().ty, wasmparser::TypeRef::Func(_)) {
                        imported += 1;
                    }
                }
            }
            wasmparser::Payload::CodeSectionEntry(body) => {
                if imported + defined == func {
                    let mut ops = body.get_operators_reader().unwrap();
                    while !ops.eof() {
                        let (op, offset) = ops.read_with_offset().unwrap();
                        if format!("{op:?}").split([' ', '{']).next() == Some(name) {
                            found.push(offset as u32);
                        }
                    }
                }
                defined += 1;
            }
            _ => {}
        }
    }
    assert_eq!(found.len(), 1, "{name} in function {func}: {found:?}");
    found[0]
}

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// An argument value biased towards what calls take: descriptor numbers, lengths,
    /// addresses of the path area, in the one-page memory and near its end, and the
    /// extremes.
    fn arg(&mut self) -> u64 {
        match self.next() % 9 {
            0 | 1 => self.next() % 8,
            2 => self.next() % 16,
            3 => self.next() % 256,
            4 => self.next() % 65536,
            5 => 65536 - self.next() % 64,
            6 => u64::MAX,
            7 => 0x8000_0000 + self.next() % 16,
            _ => self.next(),
        }
    }

    /// Guest memory for one round: a path area of 256 bytes of `a`, `b` (mostly), `.` and `/`, 8
    /// iovecs at 256 (buffers of up to 64 bytes from 8192), then 4-byte words that are
    /// small numbers (lengths, counts), addresses, path characters or arbitrary.
    fn memory(&mut self) -> Vec<u8> {
        let mut bytes: Vec<u8> = (0..256)
            .map(|_| b"aaabbb./"[(self.next() % 8) as usize])
            .collect();
        for i in 0..8u32 {
            bytes.extend_from_slice(&(8192 + 64 * i).to_le_bytes());
            bytes.extend_from_slice(&((self.next() % 65) as u32).to_le_bytes());
        }
        while bytes.len() < 65536 {
            let word = match self.next() % 4 {
                0 => (self.next() % 16) as u32,
                1 => (self.next() % 65536) as u32,
                2 => u32::from_le_bytes([0; 4].map(|_| b"ab./\0"[(self.next() % 5) as usize])),
                _ => self.next() as u32,
            };
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes
    }
}

/// What each parameter of the path and I/O calls is, so that most calls are well formed
/// enough to do something: `f` a descriptor, `p`/`l` a path in the path area and its length,
/// `i`/`k` iovecs and their count, `b`/`n` a buffer and its length, `o` a result pointer,
/// `x` flags, `r` rights, `c` an offset or cookie.
fn roles(name: &str) -> Option<&'static str> {
    Some(match name {
        "path_open" => "fxplxrrxo",
        "path_create_directory" | "path_remove_directory" | "path_unlink_file" => "fpl",
        "path_filestat_get" => "fxplo",
        "path_readlink" => "fplbno",
        "path_rename" => "fplfpl",
        "fd_read" | "fd_write" => "fiko",
        "fd_pread" | "fd_pwrite" => "fikco",
        "fd_seek" => "fcxo",
        "fd_readdir" => "fbnco",
        "fd_filestat_get" | "fd_fdstat_get" | "fd_tell" => "fo",
        _ => return None,
    })
}

impl Rng {
    fn in_role(&mut self, role: u8) -> u64 {
        let n = self.next();
        match role {
            b'f' => [3, 3, 3, 4, 5, 6, 1, 0][(n % 8) as usize],
            b'p' => n % 240,
            b'l' => 1 + n % 16,
            b'i' => 256 + 8 * (n % 4),
            b'k' => n % 5,
            b'b' => 8192 + n % 4096,
            b'n' => n % 512,
            b'o' => 16384 + 8 * (n % 64),
            b'x' => n % 16,
            b'r' => [2, 64, 66, 0, u64::MAX][(n % 5) as usize],
            _ => n % 300,
        }
    }
}

/// Every preview-1 function, called thousands of times with arbitrary arguments over a
/// memory of arbitrary bytes, inside a scratch preopen: each call returns an errno (no host
/// panic, no other trap), and nothing outside the preopen changes.
#[test]
fn arbitrary_arguments_never_crash_the_host_or_leave_the_sandbox() {
    use std::fmt::Write as _;
    let (base, root) = tree("arbitrary");
    let outside_before = std::fs::read(base.join("outside/secret")).unwrap();
    // A module exporting each function under its own name (proc_exit, which ends the
    // run, and poll_oneoff, which may sleep as long as a clock asks, are left out).
    let (mut imports, mut exports) = (String::new(), String::new());
    let mut calls = Vec::new();
    for (i, (name, ty)) in kestrel_wasm::wasi::functions().enumerate() {
        if name == "proc_exit" || name == "poll_oneoff" {
            continue;
        }
        let types = |list: &[wasmparser::ValType]| {
            list.iter()
                .map(|t| {
                    if *t == wasmparser::ValType::I64 {
                        " i64"
                    } else {
                        " i32"
                    }
                })
                .collect::<String>()
        };
        let (params, results) = (types(ty.params()), types(ty.results()));
        let _ = writeln!(
            imports,
            "(import \"wasi_snapshot_preview1\" \"{name}\" (func $f{i} (param{params}) (result{results})))"
        );
        let gets: String = (0..ty.params().len())
            .map(|k| format!(" (local.get {k})"))
            .collect();
        let _ = writeln!(
            exports,
            "(func (export \"{name}\") (param{params}) (result{results}) (call $f{i}{gets}))"
        );
        calls.push((name, ty));
    }
    let text = format!("(module\n{imports}{exports}(memory (export \"memory\") 1))");
    let module = Module::new(&wat::parse_str(&text).unwrap()).unwrap();
    let stdout = Capture::new();
    let ctx = WasiCtx::new()
        .args(["fuzz", "x"])
        .env("A", "b")
        .preopen_dir(&root, ".")
        .stdin(Input::Bytes(vec![7; 1000]))
        .stdout(Output::Capture(stdout.clone()))
        .stderr(Output::Capture(stdout));
    let wasi = Wasi::new(ctx).unwrap();
    let instance = wasi.instantiate(&module, &Imports::new()).unwrap();
    let memory = instance.memory().unwrap();
    let mut rng = Rng(0x5eed);
    for _ in 0..100 {
        assert!(memory.write(0, &rng.memory()));
        for (name, ty) in &calls {
            // Closing and renumbering leave the standard streams and the preopen alone,
            // or every later call would see only EBADF.
            let keeps_fds = *name == "fd_close" || *name == "fd_renumber";
            let roles = roles(name).filter(|_| rng.next() % 4 != 0);
            let args: Vec<Val> = ty
                .params()
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let v = match roles {
                        _ if keeps_fds => 4 + rng.next() % 4,
                        Some(roles) => rng.in_role(roles.as_bytes()[k]),
                        None => rng.arg(),
                    };
                    if *t == wasmparser::ValType::I64 {
                        Val::I64(v as i64)
                    } else {
                        Val::I32(v as i32)
                    }
                })
                .collect();
            match instance.invoke(name, &args) {
                Ok(results) => assert!(
                    matches!(results[..], [Val::I32(e)] if (0..=76).contains(&e)),
                    "{name}({args:?}) returned {results:?}"
                ),
                Err(e) => panic!("{name}({args:?}) failed: {e}"),
            }
        }
    }
    assert_eq!(
        std::fs::read(base.join("outside/secret")).unwrap(),
        outside_before
    );
    let outside: Vec<_> = std::fs::read_dir(base.join("outside")).unwrap().collect();
    assert_eq!(outside.len(), 1, "nothing was created outside the preopen");
    let siblings: Vec<_> = std::fs::read_dir(&base).unwrap().collect();
    assert_eq!(
        siblings.len(),
        2,
        "only root/ and outside/ next to each other"
    );
    std::fs::remove_dir_all(base).unwrap();
}
