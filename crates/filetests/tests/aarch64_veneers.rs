//! Functions too large for AArch64's short branches run correctly under `qemu-aarch64`: a
//! `brif` over 1.2 MiB of code in each direction, and a `br_table` whose targets and table
//! lie further than `b.cond` and `adr` reach. The MachBuffer must put veneers (and the jump
//! table) in islands inside the code; the disassembly shows that it did: the `brif` goes
//! through a `b` veneer, the `adr` of the table points inside the code.

use std::fmt::Write as _;
use std::process::Command;

use kestrel_codegen::settings::Flags;
use kestrel_filetests::object_run::{run_via_object_on, ObjectTarget};
use kestrel_filetests::Outcome;

/// A deterministic stream of constants (xorshift), with a bit set in every halfword so
/// that each takes four instructions (`movz` + 3 `movk`).
struct Constants(u64);

impl Iterator for Constants {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Some(self.0 | 0x0001_0001_0001_0001)
    }
}

/// Appends a block body that xors `pairs` constants into `acc` and returns the result;
/// returns the expected value for a given `acc` as the xor of those constants.
fn fill(text: &mut String, next: &mut u32, acc: &str, pairs: usize, k: &mut Constants) -> u64 {
    let mut cur = acc.to_string();
    let mut xor = 0;
    for _ in 0..pairs {
        let c = k.next().unwrap();
        xor ^= c;
        let (kv, nv) = (*next, *next + 1);
        *next += 2;
        writeln!(text, "    v{kv} = iconst.i64 {c:#x}").unwrap();
        writeln!(text, "    v{nv} = bxor {cur}, v{kv}").unwrap();
        cur = format!("v{nv}");
    }
    writeln!(text, "    return {cur}").unwrap();
    xor
}

/// The test program and its run lines.
fn program() -> String {
    let mut k = Constants(0x9E37_79B9_7F4A_7C15);
    let mut next = 10;
    let mut t = String::from("test run\ntarget aarch64\n\n");
    t.push_str("function %far_brif(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n");
    t.push_str("    brif v0, block1, block2\nblock1:\n");
    let x1 = fill(&mut t, &mut next, "v1", 60_000, &mut k);
    t.push_str("block2:\n");
    let x2 = fill(&mut t, &mut next, "v1", 60_000, &mut k);
    t.push_str("}\n");
    writeln!(t, "; run: %far_brif(1, 0) == {}", x1 as i64).unwrap();
    writeln!(t, "; run: %far_brif(0, 0) == {}", x2 as i64).unwrap();
    writeln!(t, "; run: %far_brif(-1, 5) == {}", (x1 ^ 5) as i64).unwrap();
    t.push_str("\nfunction %far_table(i32, i64) -> i64 {\nblock0(v0: i32, v1: i64):\n");
    t.push_str("    br_table v0, block4, [block1, block2, block3]\n");
    let mut xs = Vec::new();
    for b in 1..=4 {
        writeln!(t, "block{b}:").unwrap();
        xs.push(fill(&mut t, &mut next, "v1", 18_000, &mut k));
    }
    t.push_str("}\n");
    for (idx, x) in [(0, xs[0]), (1, xs[1]), (2, xs[2]), (3, xs[3]), (-1, xs[3])] {
        writeln!(t, "; run: %far_table({idx}, 7) == {}", (x ^ 7) as i64).unwrap();
    }
    t
}

/// `(address, mnemonic, branch target)` of each instruction objdump prints for `code`.
fn disassemble(code: &[u8], name: &str) -> Vec<(u64, String, Option<u64>)> {
    let path = std::env::temp_dir().join(format!("kestrel-veneers-{name}-{}", std::process::id()));
    std::fs::write(&path, code).unwrap();
    let out = Command::new("aarch64-linux-gnu-objdump")
        .args(["-D", "-z", "-b", "binary", "-m", "aarch64"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "aarch64-linux-gnu-objdump: {e}; install the Debian package \
                 binutils-aarch64-linux-gnu"
            )
        });
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let (addr, rest) = line.trim_start().split_once(":\t")?;
            let addr = u64::from_str_radix(addr, 16).ok()?;
            let (_, asm) = rest.split_once(" \t")?;
            let mut words = asm.split(['\t', ' ', ',']).filter(|w| !w.is_empty());
            let mnemonic = words.next()?.to_string();
            let target = asm
                .split(['\t', ' ', ','])
                .rev()
                .find_map(|w| u64::from_str_radix(w.strip_prefix("0x")?, 16).ok());
            Some((addr, mnemonic, target))
        })
        .collect()
}

#[test]
fn functions_larger_than_branch_reach_run_under_qemu() {
    let text = program();
    let funcs = kestrel_ir::parse_functions(&text, "veneers.clif").unwrap();
    let a64 = kestrel_codegen::isa::lookup("aarch64").unwrap().finish();
    for f in &funcs {
        let code = a64
            .compile_function(f, &Flags::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert!(code.code.len() > 1 << 20, "{}: big enough", f.name);
        let insts = disassemble(&code.code, &f.name.to_string());
        let at = |addr: u64| insts.iter().find(|(a, _, _)| *a == addr);
        // A conditional branch (or `adr`) whose target is a `b` to somewhere beyond its own
        // reach: a veneer.
        let veneered = insts.iter().any(|(addr, m, t)| {
            let conditional = m.starts_with("b.") || m == "cbz" || m == "cbnz";
            let Some((v, vm, Some(dest))) = t.and_then(at) else {
                return false;
            };
            conditional && vm == "b" && v != addr && dest.abs_diff(*addr) > 1 << 20
        });
        // The jump table's `adr` reaches 1 MiB: its table lands in an island inside the
        // code, not in the constant pool at the end.
        let table_in_island = insts.iter().any(|(_, m, t)| {
            m == "adr" && t.is_some_and(|t| t < u64::from(code.code_size_without_constants))
        });
        if f.name.to_string() == "%far_brif" {
            assert!(
                veneered,
                "{}: no conditional branch went through a veneer",
                f.name
            );
        } else {
            assert!(
                table_in_island,
                "{}: the jump table is not in an island",
                f.name
            );
        }
    }
    let dir = std::env::temp_dir().join(format!("kestrel-veneers-{}", std::process::id()));
    let outcome = run_via_object_on(ObjectTarget::Aarch64, &text, "veneers.clif", &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(outcome, Outcome::Pass);
}
