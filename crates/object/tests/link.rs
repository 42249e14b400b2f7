//! Objects from `kestrel-object`, linked by `cc` with C code and run as separate processes;
//! their sections and symbols read back by `readelf`, their code by `objdump`, their
//! frames walked by glibc's `backtrace` and by `gdb`. The tools are required: `.ci/run`
//! installs them when missing, and a missing tool fails the test with what to install.

use std::path::{Path, PathBuf};
use std::process::Command;

use kestrel_codegen::disasm::disassemble;
use kestrel_codegen::settings::Flags;
use kestrel_ir::text::parse_functions;
use kestrel_object::{ir_name, DataDescription, Linkage, Module, ObjectBuilder, ObjectModule};

mod shared {
    pub mod tools;
}
use shared::tools::{run, tool};

/// A scratch directory for one test, removed when the test ends.
fn scratch(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("kestrel-object-{test}-"))
        .tempdir()
        .expect("a scratch directory")
}

/// Every function of `clif` exported, plus `extra` definitions, into `dir/name.o`.
fn object_from(
    dir: &Path,
    name: &str,
    clif: &str,
    extra: impl FnOnce(&mut ObjectModule),
) -> PathBuf {
    let mut m = ObjectModule::new(ObjectBuilder::new(format!("{name}.clif")));
    extra(&mut m);
    let funcs = parse_functions(clif, "test.clif").expect("valid CLIF");
    for f in &funcs {
        let id = m
            .declare_function(&ir_name(&f.name), Linkage::Export, &f.signature)
            .unwrap();
        m.define_function(id, f).expect("compiles");
    }
    let path = dir.join(format!("{name}.o"));
    std::fs::write(&path, m.finish().expect("writes")).unwrap();
    path
}

fn link(dir: &Path, c: &str, objects: &[&Path], extra: &[&str]) -> PathBuf {
    let c_path = dir.join("main.c");
    std::fs::write(&c_path, c).unwrap();
    let exe = dir.join("prog");
    run(tool("cc", "gcc")
        .arg("-g")
        .arg("-O0")
        .args(extra)
        .arg(&c_path)
        .args(objects)
        .arg("-o")
        .arg(&exe));
    exe
}

const CALLS: &str = include_str!("../../../tests/programs/call_chain.clif");

#[test]
fn functions_data_and_imports_link_with_cc_and_run() {
    let tmp = scratch("data");
    let dir = tmp.path();
    let clif = "
function %sum_table(i64) -> i64 {
    gv0 = symbol colocated %table
    gv1 = symbol %counter
    gv2 = symbol %c_offset
    fn0 = %labs(i64) -> i64
block0(v0: i64):
    v1 = symbol_value.i64 gv0
    v2 = load.i64 v1
    v3 = load.i64 v1+8
    v4 = load.i64 v3
    v5 = iadd v2, v4
    v6 = global_value.i64 gv1
    v7 = load.i64 v6
    v8 = iadd v5, v7
    v10 = iconst.i64 1
    v11 = iadd v7, v10
    store v11, v6
    v12 = symbol_value.i64 gv2
    v13 = load.i64 v12
    v14 = iadd v8, v13
    v15 = call fn0(v0)
    v16 = iadd v14, v15
    return v16
}
";
    let obj = object_from(dir, "data", clif, |m| {
        let value = m.declare_data("value", Linkage::Local, false).unwrap();
        m.define_data(value, &DataDescription::bytes(1000i64.to_le_bytes()))
            .unwrap();
        let table = m.declare_data("table", Linkage::Local, false).unwrap();
        // table = { 7, &value } (read-only data holding an address: .data.rel.ro)
        let mut bytes = 7i64.to_le_bytes().to_vec();
        bytes.extend([0; 8]);
        m.define_data(
            table,
            &DataDescription::bytes(bytes).with_reloc(8, "value", 0),
        )
        .unwrap();
        let counter = m.declare_data("counter", Linkage::Export, true).unwrap();
        m.define_data(counter, &DataDescription::zeros(8)).unwrap();
    });
    let sections = run(tool("readelf", "binutils").arg("-SW").arg(&obj));
    for s in [
        ".text",
        ".rodata",
        ".data.rel.ro",
        ".bss",
        ".eh_frame",
        ".note.GNU-stack",
    ] {
        assert!(sections.contains(s), "no {s} in\n{sections}");
    }
    let symbols = run(tool("readelf", "binutils").arg("-sW").arg(&obj));
    let line = |name: &str| {
        symbols
            .lines()
            .find(|l| l.split_whitespace().last() == Some(name))
            .unwrap_or_else(|| panic!("no symbol {name} in\n{symbols}"))
            .to_string()
    };
    assert!(
        line("sum_table").contains("FUNC    GLOBAL"),
        "{}",
        line("sum_table")
    );
    assert!(line("table").contains("LOCAL"), "{}", line("table"));
    assert!(line("counter").contains("GLOBAL"), "{}", line("counter"));
    assert!(line("labs").contains("UND"), "{}", line("labs"));
    assert!(line("c_offset").contains("UND"), "{}", line("c_offset"));

    let c = r#"
#include <stdio.h>
long sum_table(long);
extern long counter;
const long c_offset = 50000;
int main(void) {
    long a = sum_table(-3);
    long b = sum_table(4);
    printf("%ld %ld %ld\n", a, b, counter);
    return 0;
}
"#;
    let exe = link(dir, c, &[&obj], &[]);
    let out = run(&mut Command::new(&exe));
    // 7 + 1000 + counter + 50000 + |x|
    assert_eq!(out, "51010 51012 2\n");
}

#[test]
fn objdump_decodes_the_same_instructions_as_kestrels_disassembler() {
    let tmp = scratch("objdump");
    let dir = tmp.path();
    let obj = object_from(dir, "calls", CALLS, |_| {});
    let dump = run(tool("objdump", "binutils")
        .args(["-d", "-M", "intel", "--no-show-raw-insn"])
        .arg(&obj));
    let funcs = parse_functions(CALLS, "t").unwrap();
    let x64 = kestrel_codegen::isa::lookup("x86_64").unwrap().finish();
    for f in &funcs {
        let code = x64.compile_function(f, &Flags::default()).unwrap();
        let ours: Vec<(usize, String)> =
            disassemble(&code.code, code.code_size_without_constants as usize)
                .iter()
                .map(|l| {
                    let (off, rest) = l.trim().split_once(':').unwrap();
                    let asm = rest.split_whitespace().nth(1).unwrap().to_string();
                    (usize::from_str_radix(off.trim(), 16).unwrap(), asm)
                })
                .collect();
        // objdump's section of this function: lines `  off:\tmnemonic operands`.
        let name = ir_name(&f.name);
        let start = dump
            .find(&format!("<{name}>:"))
            .unwrap_or_else(|| panic!("no {name} in\n{dump}"));
        let header = &dump[..start];
        let base = usize::from_str_radix(
            header
                .lines()
                .last()
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap(),
            16,
        )
        .unwrap();
        let theirs: Vec<(usize, String)> = dump[start..]
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| {
                let (off, rest) = l.trim().split_once(':')?;
                let mnemonic = rest.split_whitespace().next()?.to_string();
                Some((usize::from_str_radix(off.trim(), 16).ok()? - base, mnemonic))
            })
            .filter(|(off, _)| *off < code.code.len())
            .collect();
        assert!(ours.len() > 5, "{name}: {ours:?}");
        assert_eq!(ours, theirs, "{name}: Kestrel's disassembly vs objdump");
    }
}

const BACKTRACE_MAIN: &str = r#"
#include <execinfo.h>
#include <stdio.h>
long outer(long);
long host_cb(long x) {
    void *frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 1);
    fflush(stdout);
    return x * 2;
}
int main(void) {
    printf("result %ld\n", outer(5));
    return 0;
}
"#;

#[test]
fn backtraces_walk_through_kestrel_frames_in_a_linked_program() {
    let tmp = scratch("backtrace");
    let dir = tmp.path();
    let obj = object_from(dir, "calls", CALLS, |_| {});
    let exe = link(dir, BACKTRACE_MAIN, &[&obj], &["-rdynamic"]);
    let out = run(&mut Command::new(&exe));
    let pos = |name: &str| {
        out.find(&format!("({name}+"))
            .unwrap_or_else(|| panic!("{name} missing from the backtrace:\n{out}"))
    };
    assert!(pos("host_cb") < pos("inner"), "{out}");
    assert!(pos("inner") < pos("outer"), "{out}");
    assert!(pos("outer") < pos("main"), "{out}");
    // outer(5): v1 = 6, inner(6) = 2*18 + 18 + 6 = 60, 60 + 6 + 5 = 71
    assert!(out.ends_with("result 71\n"), "{out}");
}

/// `outer` calls `mid`, which tail-calls `leaf` with two stack arguments (more than it has
/// itself), which calls the host: `mid`'s frame was replaced, so the unwinder must find
/// `outer` right above `leaf`, through the frame the tail call rebuilt.
const TAIL_CALLS: &str = "
function %outer(i64) -> i64 {
    fn0 = %mid(i64) -> i64 tail
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iadd v1, v0
    return v2
}

function %mid(i64) -> i64 tail {
    fn0 = %leaf(i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    return_call fn0(v0, v0, v0, v0, v0, v0, v0, v2)
}

function %leaf(i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
    fn0 = %host_cb(i64) -> i64
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64):
    v8 = iadd v0, v7
    v9 = call fn0(v8)
    v10 = iadd v9, v6
    return v10
}
";

#[test]
fn backtraces_walk_through_frames_replaced_by_tail_calls() {
    let tmp = scratch("tail");
    let dir = tmp.path();
    let obj = object_from(dir, "tail", TAIL_CALLS, |_| {});
    let exe = link(dir, BACKTRACE_MAIN, &[&obj], &["-rdynamic"]);
    let out = run(&mut Command::new(&exe));
    let pos = |name: &str| out.find(&format!("({name}+"));
    let (cb, leaf, outer, main) = (pos("host_cb"), pos("leaf"), pos("outer"), pos("main"));
    assert!(
        cb.is_some() && cb < leaf && leaf < outer && outer < main,
        "{out}"
    );
    assert_eq!(pos("mid"), None, "the replaced frame is gone:\n{out}");
    // outer(5): leaf(5, …, 5, 6) = host_cb(11) + 5 = 27, plus 5.
    assert!(out.ends_with("result 32\n"), "{out}");
}

/// gdb's backtrace of `exe` stopped in the host callback `host_cb`.
fn gdb_backtrace_at_host_cb(exe: &Path) -> String {
    run(tool("gdb", "gdb")
        .args([
            "-batch",
            "-nx",
            "-ex",
            "break host_cb",
            "-ex",
            "run",
            "-ex",
            "bt",
        ])
        .arg(exe))
}

#[test]
fn gdb_shows_kestrel_functions_in_a_backtrace() {
    let tmp = scratch("gdb");
    let dir = tmp.path();
    let obj = object_from(dir, "calls", CALLS, |_| {});
    let exe = link(dir, BACKTRACE_MAIN, &[&obj], &[]);
    let out = gdb_backtrace_at_host_cb(&exe);
    let frame = |name: &str| {
        out.lines()
            .position(|l| l.starts_with('#') && l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no frame {name} in the gdb backtrace:\n{out}"))
    };
    assert!(frame("host_cb") < frame("inner"), "{out}");
    assert!(frame("inner") < frame("outer"), "{out}");
    assert!(frame("outer") < frame("main"), "{out}");
}

/// The 1-based line of `clif` holding the `nth` (0-based) line that contains `needle`.
fn line_of(clif: &str, needle: &str, nth: usize) -> usize {
    clif.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .unwrap_or_else(|| panic!("no {needle} #{nth}"))
        .0
        + 1
}

#[test]
fn gdb_shows_kestrel_lines_from_debug_info() {
    let tmp = scratch("gdb-lines");
    let dir = tmp.path();
    let source = dir.join("call_chain.clif");
    std::fs::write(&source, CALLS).unwrap();
    let mut m = ObjectModule::new(ObjectBuilder::new("call_chain.clif").debug_info(true));
    for f in &parse_functions(CALLS, &source.display().to_string()).unwrap() {
        let id = m
            .declare_function(&ir_name(&f.name), Linkage::Export, &f.signature)
            .unwrap();
        m.define_function(id, f).unwrap();
    }
    let obj = dir.join("calls.o");
    std::fs::write(&obj, m.finish().unwrap()).unwrap();

    // The line table names the CLIF file and the lines of the instructions with code.
    let lines = run(tool("readelf", "binutils")
        .arg("--debug-dump=decodedline")
        .arg(&obj));
    let call_inner = line_of(CALLS, "call fn0", 0);
    let call_outer = line_of(CALLS, "call fn0", 1);
    for line in [call_inner, call_outer] {
        assert!(
            lines.lines().any(|l| l
                .split_whitespace()
                .next()
                .is_some_and(|f| f.ends_with(".clif"))
                && l.split_whitespace().nth(1) == Some(&line.to_string())),
            "no row for line {line}:\n{lines}"
        );
    }

    let exe = link(dir, BACKTRACE_MAIN, &[&obj], &[]);
    let out = gdb_backtrace_at_host_cb(&exe);
    for (name, line) in [("inner", call_inner), ("outer", call_outer)] {
        let at = format!(" {name} () at {}:{line}", source.display());
        assert!(out.contains(&at), "no `{at}` in the gdb backtrace:\n{out}");
    }
    // A breakpoint on a Kestrel function stops after its prologue, at its first line with
    // code: `inner`'s multiply (its constant folds into the instruction).
    let first = line_of(CALLS, "imul", 0);
    let out = run(tool("gdb", "gdb")
        .args([
            "-batch",
            "-nx",
            "-ex",
            "break inner",
            "-ex",
            "run",
            "-ex",
            "frame",
        ])
        .arg(&exe));
    let at = format!("inner () at {}:{first}", source.display());
    assert!(out.contains(&at), "no `{at}` in:\n{out}");
}

#[test]
fn front_end_source_locations_become_lines_of_the_builder_file() {
    use kestrel_ir::builder::FunctionBuilder;
    use kestrel_ir::{AbiParam, FunctionName, Signature, Type};
    let tmp = scratch("srcloc-lines");
    let dir = tmp.path();
    let mut sig = Signature::default();
    sig.params.push(AbiParam::new(Type::I64));
    sig.returns.push(AbiParam::new(Type::I64));
    let mut b = FunctionBuilder::new(FunctionName::Named("square".into()), sig.clone());
    let entry = b.create_block();
    let x = b.append_block_params_for_function_params(entry).unwrap()[0];
    b.switch_to_block(entry).unwrap();
    b.set_srcloc(Some(41));
    let y = b.ins().imul(x, x).unwrap();
    b.set_srcloc(Some(42));
    b.ins().return_(&[y]).unwrap();
    b.seal_all_blocks().unwrap();
    let f = b.finalize().unwrap();

    let mut m = ObjectModule::new(ObjectBuilder::new("program.src").debug_info(true));
    let id = m.declare_function("square", Linkage::Export, &sig).unwrap();
    m.define_function(id, &f).unwrap();
    let obj = dir.join("square.o");
    std::fs::write(&obj, m.finish().unwrap()).unwrap();
    let table = run(tool("readelf", "binutils")
        .arg("--debug-dump=decodedline")
        .arg(&obj));
    let rows: Vec<(String, String)> = table
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (file, line) = (w.next()?, w.next()?);
            (file == "program.src").then(|| (file.to_string(), line.to_string()))
        })
        .collect();
    let lines: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    assert!(lines.contains(&"41") && lines.contains(&"42"), "{table}");
}
