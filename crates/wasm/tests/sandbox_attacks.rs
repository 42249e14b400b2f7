//! The WASI sandbox under attack: `tests/sandbox/attacks.c`, compiled once to `wasm32-wasi`
//! with clang and wasi-libc, runs one attack per run (chosen by its first argument) against
//! a fresh box — a scratch directory preopened as `/box` inside a parent that holds a
//! secret file, a secret directory and a link. Each run must:
//! - exit 0 (the program's own checks: every escape refused, every in-box step working);
//! - print nothing of the secrets (everything the program reads is printed);
//! - leave the parent, all but the box, exactly as it was (names, kinds, contents, link
//!   targets, sizes, modification times — so nothing outside was created, deleted, moved,
//!   written or touched);
//! - leave in the box what its legitimate steps made.
//!
//! `race_swap` also runs a host thread that swaps a directory of the box for a link leading
//! out (absolute, then relative), in a bounded loop, while the guest opens, creates and
//! deletes through it. Needs clang with the wasm32-wasi target and wasi-libc (see
//! `c_programs.rs`).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use kestrel_wasm::wasi::{Capture, Output, Wasi, WasiCtx};
use kestrel_wasm::{Imports, Module};

const INSTALL_HINT: &str = "the sandbox attack tests need clang with the wasm32-wasi target \
     and wasi-libc: on Debian/Ubuntu `apt-get install clang lld wasi-libc \
     libclang-rt-14-dev-wasm32`";

/// What every secret outside the box contains.
const SECRET: &str = "OUTSIDE-SECRET";

/// The attack program, built once per test process.
fn wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox");
        let out = tempfile::tempdir().unwrap();
        let wasm = out.path().join("attacks.wasm");
        let src = dir.join("attacks.c");
        let result = Command::new("clang")
            .args([
                "--target=wasm32-wasi",
                "-O2",
                "-Wall",
                "-Werror",
                "-Wl,--strip-all",
            ])
            .arg(&src)
            .arg("-o")
            .arg(&wasm)
            .output()
            .unwrap_or_else(|e| panic!("cannot run clang ({e}); {INSTALL_HINT}"));
        assert!(
            result.status.success(),
            "clang {} failed:\n{}\n{INSTALL_HINT}",
            src.display(),
            String::from_utf8_lossy(&result.stderr)
        );
        std::fs::read(&wasm).unwrap()
    })
}

/// A fresh parent directory: `secret.txt`, `secretdir/{inner.txt, inner_victim.txt}`,
/// `outlink -> secret.txt`, and the box with in-box files and links — some that stay
/// inside, some that lead out (relative, absolute, chained, dangling).
fn layout() -> tempfile::TempDir {
    use std::os::unix::fs::symlink;
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    let write = |path: &str, text: &str| std::fs::write(p.join(path), text).unwrap();
    let link = |target: &str, path: &str| symlink(target, p.join(path)).unwrap();
    let abs = |path: &str| p.join(path).to_str().unwrap().to_owned();
    write("secret.txt", &format!("{SECRET} file"));
    std::fs::create_dir(p.join("secretdir")).unwrap();
    write("secretdir/inner.txt", &format!("{SECRET} inner"));
    write("secretdir/inner_victim.txt", &format!("{SECRET} victim"));
    link("secret.txt", "outlink");
    for dir in ["box", "box/sub", "box/swap"] {
        std::fs::create_dir(p.join(dir)).unwrap();
    }
    write("box/file.txt", "INBOX file");
    write("box/sub/file2.txt", "INBOX sub");
    write("box/swap/inner.txt", "INBOX swap");
    link("..", "box/sub/up");
    link("../..", "box/sub/upup");
    link("..", "box/escape");
    link(&abs("secretdir"), "box/abs");
    link(&abs("secret.txt"), "box/absfile");
    link("b/..", "box/a");
    link("../secretdir", "box/b");
    link("sub/l2", "box/l1");
    link("../../secret.txt", "box/sub/l2");
    link("sub/ok2", "box/ok1");
    link("../file.txt", "box/sub/ok2");
    link("sub", "box/insub");
    link("../created_by_guest.txt", "box/dangle");
    link(&abs("created_abs.txt"), "box/dangleabs");
    parent
}

/// Everything under `parent` but the box: path -> kind, size, modification time and
/// contents (a file's bytes, a link's target).
fn outside(parent: &Path) -> BTreeMap<PathBuf, String> {
    let mut seen = BTreeMap::new();
    let mut pending = vec![parent.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path == parent.join("box") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                pending.push(path.clone());
                "dir".to_owned()
            } else {
                format!(
                    "file {:?}",
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap())
                )
            };
            let stamp = format!(
                "{what}, {} bytes, mtime {}.{}",
                meta.size(),
                meta.mtime(),
                meta.mtime_nsec()
            );
            seen.insert(path.strip_prefix(parent).unwrap().to_path_buf(), stamp);
        }
    }
    seen
}

/// What one run printed, and its exit code.
struct Run {
    status: i32,
    stdout: String,
}

/// Run attack `name` of the program compiled as `module` against `parent`'s box.
fn run(module: &Module, name: &str, parent: &Path) -> Run {
    let stdout = Capture::new();
    let ctx = WasiCtx::new()
        .args(["attacks", name, parent.to_str().unwrap()])
        .preopen_dir(parent.join("box"), "/box")
        .stdout(Output::Capture(stdout.clone()))
        .stderr(Output::Capture(stdout.clone()));
    let wasi = Wasi::new(ctx).unwrap();
    let instance = wasi.instantiate(module, &Imports::new()).unwrap();
    let status = wasi
        .run_start(&instance)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", stdout.text()));
    Run {
        status,
        stdout: stdout.text(),
    }
}

/// One attack: its name in `attacks.c`, and what its legitimate steps leave in the box.
struct Attack {
    name: &'static str,
    box_has: &'static [&'static str],
}

const fn attack(name: &'static str) -> Attack {
    Attack { name, box_has: &[] }
}

const fn makes(name: &'static str, box_has: &'static [&'static str]) -> Attack {
    Attack { name, box_has }
}

/// Run `attacks` one after another, each in a fresh box, on a thread with room for Wasm's
/// stack; every failure is collected and reported with its attack's name and output.
fn run_all(attacks: &[Attack]) {
    let wasm = wasm();
    let failures = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn_scoped(s, || {
                let module = Module::new(wasm).unwrap();
                attacks
                    .iter()
                    .filter_map(|a| check(&module, a).err())
                    .collect::<Vec<_>>()
            })
            .unwrap()
            .join()
            .expect("the attack runs panicked")
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Run `a` in a fresh box and check the host file system afterwards.
fn check(module: &Module, a: &Attack) -> Result<(), String> {
    let parent = layout();
    let before = outside(parent.path());
    let run = run(module, a.name, parent.path());
    // Shown with `--nocapture`: what each attack tried and what it got.
    println!("== {}\n{}", a.name, run.stdout);
    verify(a, parent.path(), &before, &run)
}

fn verify(
    a: &Attack,
    parent: &Path,
    before: &BTreeMap<PathBuf, String>,
    run: &Run,
) -> Result<(), String> {
    let fail = |why: String| Err(format!("{}: {why}\noutput:\n{}", a.name, run.stdout));
    if run.status != 0 {
        return fail(format!("exit status {}", run.status));
    }
    if run.stdout.contains(SECRET) {
        return fail("a secret from outside the box was read".into());
    }
    if !run.stdout.contains(&format!("{}: 0 failure(s)", a.name)) {
        return fail("the attack did not run to its end".into());
    }
    let after = outside(parent);
    if after != *before {
        return fail(format!(
            "outside the box changed:\nbefore {before:#?}\nafter {after:#?}"
        ));
    }
    for path in a.box_has {
        if std::fs::symlink_metadata(parent.join("box").join(path)).is_err() {
            return fail(format!("box/{path} was not made"));
        }
    }
    Ok(())
}

/// Every attack of `attacks.c` is run by one of the tests below.
#[test]
fn every_attack_in_the_program_is_run() {
    let listed = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn_scoped(s, || {
                let module = Module::new(wasm()).unwrap();
                let parent = layout();
                run(&module, "list", parent.path()).stdout
            })
            .unwrap()
            .join()
            .unwrap()
    });
    let mut listed: Vec<&str> = listed.lines().collect();
    let mut run: Vec<&str> = [
        MOVED_HANDLES,
        LINKS_OUT,
        DOTDOT_AND_ABSOLUTE,
        SLASHES_RENAMES_AND_LINKS,
    ]
    .iter()
    .flat_map(|group| group.iter().map(|a| a.name))
    .chain(["race_swap"])
    .collect();
    listed.sort_unstable();
    run.sort_unstable();
    assert_eq!(listed, run);
    assert!(run.len() >= 40, "{} attacks", run.len());
}

/// A held directory renamed away and a link put in its place (the attack of the brief and
/// its variants through every call that takes a directory descriptor).
const MOVED_HANDLES: &[Attack] = &[
    attack("moved_openat"),
    attack("moved_openat_dotdot"),
    attack("moved_open_by_name"),
    makes("moved_create", &["x/created.txt"]),
    attack("moved_unlinkat"),
    makes("moved_renameat", &["mark2"]),
    makes("moved_mkdirat", &["x/newdir"]),
    makes("moved_symlinkat", &["x/lnk"]),
    attack("moved_readlinkat"),
    attack("moved_fstatat"),
    attack("moved_readdir"),
    attack("moved_utimensat"),
    makes("moved_linkat", &["hl"]),
    attack("moved_raw_calls"),
    makes("moved_deeper", &["sub/p/q/r"]),
    makes("moved_replaced_by_abs_link", &["x/planted.txt"]),
    attack("renumbered_handle"),
];

#[test]
fn moved_handles() {
    run_all(MOVED_HANDLES);
}

/// Links to absolute directories and files, and chains of links that climb.
const LINKS_OUT: &[Attack] = &[
    attack("abs_dir_open"),
    attack("abs_file_open"),
    attack("abs_dir_create"),
    attack("abs_dir_mkdir"),
    attack("abs_dir_unlink"),
    attack("abs_dir_rename"),
    attack("abs_dir_stat"),
    attack("abs_dir_opendir"),
    attack("abs_readlink"),
    attack("chain_climb"),
    attack("chain_two_hops"),
    attack("chain_in_box"),
    attack("chain_mkdir"),
    attack("dangling_creat"),
    attack("dangling_creat_excl"),
    attack("readdir_link_out"),
];

#[test]
fn links_out() {
    run_all(LINKS_OUT);
}

/// `..` past the root, and absolute guest paths given to the host as they are.
const DOTDOT_AND_ABSOLUTE: &[Attack] = &[
    attack("dotdot_open"),
    makes("dotdot_mkdir", &["made"]),
    makes("dotdot_rename_out", &["file.txt", "sub"]),
    attack("dotdot_rename_in"),
    attack("dotdot_unlink"),
    attack("dotdot_stat"),
    attack("absolute_open"),
    attack("absolute_create"),
    attack("absolute_remove"),
    attack("absolute_open_outside_preopen"),
];

#[test]
fn dotdot_and_absolute_paths() {
    run_all(DOTDOT_AND_ABSOLUTE);
}

/// Trailing slashes, links in intermediate components, renames and hard links out, and
/// links the guest makes itself.
const SLASHES_RENAMES_AND_LINKS: &[Attack] = &[
    attack("trailing_slash_link"),
    attack("trailing_slash_file"),
    attack("mid_link_out"),
    makes("mid_link_in", &["sub/made"]),
    makes("rename_out_via_link", &["escape2", "file.txt", "sub"]),
    makes("hardlink_out", &["hl"]),
    makes("hardlink_of_outside_link", &["hl"]),
    makes("symlink_then_open", &["mine", "updir"]),
    attack("symlink_absolute"),
    makes("symlink_in_box", &["mine", "s"]),
];

#[test]
fn trailing_slashes_renames_and_links() {
    run_all(SLASHES_RENAMES_AND_LINKS);
}

/// Host swaps performed at most by the racing thread.
const MAX_SWAPS: u64 = 1_000_000;

/// A host thread swaps `box/swap` for a link leading out, over and over, while the guest
/// opens, creates and unlinks through it: nothing outside may be read or changed.
#[test]
fn host_swapping_a_directory_for_a_link_out() {
    let wasm = wasm();
    let parent = layout();
    let p = parent.path();
    let before = outside(p);
    let stop = AtomicBool::new(false);
    let swaps = AtomicU64::new(0);
    let swap = p.join("box/swap");
    let real = p.join("box/swap.real");
    let targets = [p.join("secretdir"), PathBuf::from("../secretdir")];
    let run = std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..MAX_SWAPS {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // Invariant at the top of each turn: `swap` is the real directory.
                std::fs::rename(&swap, &real).unwrap();
                std::os::unix::fs::symlink(&targets[i as usize % 2], &swap).unwrap();
                std::thread::yield_now();
                std::fs::remove_file(&swap).unwrap();
                std::fs::rename(&real, &swap).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
                std::thread::yield_now();
            }
        });
        let guest = std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn_scoped(s, || {
                let module = Module::new(wasm).unwrap();
                run(&module, "race_swap", p)
            })
            .unwrap()
            .join();
        stop.store(true, Ordering::Relaxed);
        guest.expect("the guest run panicked")
    });
    println!(
        "{} host swaps; guest: {}",
        swaps.load(Ordering::Relaxed),
        run.stdout
            .lines()
            .find(|l| l.starts_with("race:"))
            .unwrap_or("")
    );
    let a = attack("race_swap");
    if let Err(why) = verify(&a, p, &before, &run) {
        panic!("{why}");
    }
    assert!(
        p.join("box/swap/inner.txt").exists(),
        "the host thread restored the box"
    );
}
