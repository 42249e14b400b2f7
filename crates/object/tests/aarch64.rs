//! AArch64 objects: their header, relocations and call-frame information read back by
//! `aarch64-linux-gnu-readelf`, and the object linked statically with C code by
//! `aarch64-linux-gnu-gcc` and run under `qemu-aarch64`. The tools are required (`.ci/run`
//! installs them); a missing one fails the test with the package to install.

use std::path::PathBuf;

use kestrel_codegen::isa;
use kestrel_codegen::settings::Flags;
use kestrel_ir::text::parse_functions;

mod shared {
    pub mod tools;
}
use kestrel_object::{
    ir_name, DataDescription, Linkage, Module, ObjectBuilder, ObjectError, ObjectModule,
};
use shared::tools::{run, tool};

/// An object builder for AArch64 (base ISA).
fn aarch64_object(name: &str) -> ObjectBuilder {
    ObjectBuilder::new(name).target(isa::lookup("aarch64").unwrap().finish())
}

const CLIF: &str = "
function %triple(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 3
    v2 = imul v0, v1
    return v2
}

function %call_triple(i64) -> i64 {
    fn0 = %triple(i64) -> i64
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iconst.i64 1
    v3 = iadd v1, v2
    return v3
}

function %triple_addr() -> i64 {
    fn0 = %triple(i64) -> i64
block0:
    v0 = func_addr.i64 fn0
    return v0
}

function %triple_addr_near() -> i64 {
    fn0 = colocated %triple(i64) -> i64
block0:
    v0 = func_addr.i64 fn0
    return v0
}

function %table_addr() -> i64 {
    gv0 = symbol colocated %table
block0:
    v0 = symbol_value.i64 gv0
    return v0
}
";

/// The test functions and a data object `table` holding `&triple + 8`, in an AArch64 object.
fn object(dir: &std::path::Path) -> PathBuf {
    let mut m = ObjectModule::new(aarch64_object("a64.clif"));
    let table = m.declare_data("table", Linkage::Export, false).unwrap();
    for f in &parse_functions(CLIF, "a64.clif").unwrap() {
        let id = m
            .declare_function(&ir_name(&f.name), Linkage::Export, &f.signature)
            .unwrap();
        m.define_function(id, f).expect("compiles for aarch64");
    }
    let desc = DataDescription::bytes(vec![0; 8]).with_reloc(0, "triple", 8);
    m.define_data(table, &desc).unwrap();
    let path = dir.join("a64.o");
    std::fs::write(&path, m.finish().expect("writes")).unwrap();
    path
}

#[test]
fn aarch64_objects_have_aarch64_relocations_and_frames() {
    let dir = std::env::temp_dir().join(format!("kestrel-object-a64-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = object(&dir);
    let readelf = || tool("aarch64-linux-gnu-readelf", "binutils-aarch64-linux-gnu");
    let header = run(readelf().arg("-h").arg(&obj));
    assert!(header.contains("AArch64"), "{header}");
    let relocs = run(readelf().arg("-rW").arg(&obj));
    for (kind, target) in [
        ("R_AARCH64_CALL26", "triple"),
        ("R_AARCH64_ADR_GOT_PAGE", "triple"),
        ("R_AARCH64_LD64_GOT_LO12_NC", "triple"),
        ("R_AARCH64_ADR_PREL_PG_HI21", "triple"),
        ("R_AARCH64_ADD_ABS_LO12_NC", "triple"),
        ("R_AARCH64_ADR_PREL_PG_HI21", "table"),
        ("R_AARCH64_ADD_ABS_LO12_NC", "table"),
        ("R_AARCH64_ABS64", "triple"),
        ("R_AARCH64_PREL32", "call_triple"),
    ] {
        assert!(
            relocs
                .lines()
                .any(|l| l.contains(kind) && l.contains(target)),
            "no {kind} against {target}:\n{relocs}"
        );
    }
    // The CIE's return address is x30 and the entry CFA sp; the caller's frame moves the CFA
    // to x29 + 16 after `stp x29, x30, [sp, #-16]!; mov x29, sp`.
    let frames = run(readelf().arg("--debug-dump=frames").arg(&obj));
    assert!(frames.contains("Return address column: 30"), "{frames}");
    assert!(
        frames.contains("DW_CFA_def_cfa: r31 (sp) ofs 0"),
        "{frames}"
    );
    assert!(frames.contains("DW_CFA_def_cfa_offset: 16"), "{frames}");
    assert!(frames.contains("DW_CFA_def_cfa_register: r29"), "{frames}");

    // Linked with C and run: calls, function addresses (through the GOT and directly) and
    // data relocations resolve.
    let main = dir.join("main.c");
    std::fs::write(
        &main,
        r#"#include <stdio.h>
long triple(long); long call_triple(long); long triple_addr(void); long triple_addr_near(void);
long table_addr(void);
extern const long table;
int main(void) {
    int ok = triple(5) == 15 && call_triple(5) == 16 && triple_addr() == (long)&triple
        && triple_addr_near() == (long)&triple && table_addr() == (long)&table
        && table == (long)&triple + 8;
    printf("%s\n", ok ? "ok" : "wrong");
    return !ok;
}
"#,
    )
    .unwrap();
    let exe = dir.join("prog");
    run(tool("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
        .arg("-static")
        .arg("-o")
        .arg(&exe)
        .arg(&main)
        .arg(&obj));
    let out = run(tool("qemu-aarch64", "qemu-user").arg(&exe));
    assert_eq!(out, "ok\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn relocations_of_the_other_target_are_errors() {
    let f = &parse_functions(CLIF, "a64.clif").unwrap()[1];
    let x64 = isa::lookup("x86_64").unwrap().finish();
    let x64 = x64.compile_function(f, &Flags::default()).unwrap();
    let mut m = ObjectModule::new(aarch64_object("mixed.clif"));
    let id = m
        .declare_function("call_triple", Linkage::Export, &f.signature)
        .unwrap();
    match m.define_compiled(id, &f.signature, x64) {
        Err(ObjectError::Reloc { name, target, .. }) => {
            assert_eq!((name.as_str(), target), ("call_triple", "aarch64"));
        }
        other => panic!("expected a relocation error, got {other:?}"),
    }
}
