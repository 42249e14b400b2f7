//! An AArch64 `system_v` function that calls `winch` code must still preserve its own
//! callee-saved registers (`x19`–`x28`, `d8`–`d15`) for its caller, although a winch call
//! may overwrite `x19`–`x27` and `v8`–`v15`. The winch callee here is hand-written
//! assembly that really overwrites them (Kestrel's own winch functions save what they
//! use, which would hide a missing save). A probe written in assembly puts known values in
//! those registers, calls the Kestrel function, and records what it finds afterwards; the
//! program, linked statically by `aarch64-linux-gnu-gcc`, runs under `qemu-aarch64`. The
//! tools are required (`.ci/run` installs them); a missing one fails the test with the
//! package to install.

use kestrel_codegen::isa;
use kestrel_ir::text::parse_functions;
use kestrel_object::{ir_name, Linkage, Module, ObjectBuilder, ObjectModule};

mod shared {
    pub mod tools;
}
use shared::tools::{run, tool};

/// Integer and float values live across the winch call: `keep_live(5)` is
/// `(5 + 1) + 5 * 5 + clobber(5) + int(2.0 * 5.0)` = 6 + 25 + 6 + 10 = 47.
const CLIF: &str = "
function %keep_live(i64) -> i64 system_v {
    fn0 = %clobber(i64) -> i64 winch
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    v3 = imul v0, v0
    v4 = fcvt_from_sint.f64 v0
    v5 = call fn0(v0)
    v6 = iadd v2, v3
    v7 = iadd v6, v5
    v8 = fadd v4, v4
    v9 = fcvt_to_sint.i64 v8
    v10 = iadd v7, v9
    return v10
}
";

/// `clobber`: a winch function (one integer result, in x0) that overwrites `x19`–`x27` and
/// `d8`–`d15` and returns its argument plus one. `probe(x)`: saves the caller's registers,
/// puts `1000 + n` in `xn` (n = 19..27) and `800 + n` in `dn` (n = 8..15), calls
/// `keep_live(x)`, stores what those registers then hold in `seen_x` and `seen_d`, and
/// returns `keep_live`'s result.
const HARNESS: &str = r#"#include <stdio.h>
long probe(long);
long seen_x[9];
long seen_d[8];
__asm__(
    ".text\n"
    ".global clobber\n.type clobber, %function\nclobber:\n"
    "  mov x9, #0xdead\n"
    "  mov x19, x9\n mov x20, x9\n mov x21, x9\n mov x22, x9\n mov x23, x9\n"
    "  mov x24, x9\n mov x25, x9\n mov x26, x9\n mov x27, x9\n"
    "  fmov d8, x9\n fmov d9, x9\n fmov d10, x9\n fmov d11, x9\n"
    "  fmov d12, x9\n fmov d13, x9\n fmov d14, x9\n fmov d15, x9\n"
    "  add x0, x0, #1\n"
    "  ret\n"
    ".global probe\n.type probe, %function\nprobe:\n"
    "  stp x29, x30, [sp, #-160]!\n"
    "  mov x29, sp\n"
    "  stp x19, x20, [sp, #16]\n stp x21, x22, [sp, #32]\n stp x23, x24, [sp, #48]\n"
    "  stp x25, x26, [sp, #64]\n str x27, [sp, #80]\n"
    "  stp d8, d9, [sp, #96]\n stp d10, d11, [sp, #112]\n"
    "  stp d12, d13, [sp, #128]\n stp d14, d15, [sp, #144]\n"
    "  mov x19, #1019\n mov x20, #1020\n mov x21, #1021\n mov x22, #1022\n"
    "  mov x23, #1023\n mov x24, #1024\n mov x25, #1025\n mov x26, #1026\n"
    "  mov x27, #1027\n"
    "  mov x9, #808\n fmov d8, x9\n mov x9, #809\n fmov d9, x9\n"
    "  mov x9, #810\n fmov d10, x9\n mov x9, #811\n fmov d11, x9\n"
    "  mov x9, #812\n fmov d12, x9\n mov x9, #813\n fmov d13, x9\n"
    "  mov x9, #814\n fmov d14, x9\n mov x9, #815\n fmov d15, x9\n"
    "  bl keep_live\n"
    "  adrp x9, seen_x\n add x9, x9, :lo12:seen_x\n"
    "  stp x19, x20, [x9]\n stp x21, x22, [x9, #16]\n stp x23, x24, [x9, #32]\n"
    "  stp x25, x26, [x9, #48]\n str x27, [x9, #64]\n"
    "  adrp x9, seen_d\n add x9, x9, :lo12:seen_d\n"
    "  stp d8, d9, [x9]\n stp d10, d11, [x9, #16]\n"
    "  stp d12, d13, [x9, #32]\n stp d14, d15, [x9, #48]\n"
    "  ldp x19, x20, [sp, #16]\n ldp x21, x22, [sp, #32]\n ldp x23, x24, [sp, #48]\n"
    "  ldp x25, x26, [sp, #64]\n ldr x27, [sp, #80]\n"
    "  ldp d8, d9, [sp, #96]\n ldp d10, d11, [sp, #112]\n"
    "  ldp d12, d13, [sp, #128]\n ldp d14, d15, [sp, #144]\n"
    "  ldp x29, x30, [sp], #160\n"
    "  ret\n");
int main(void) {
    long r = probe(5);
    printf("result %ld\n", r);
    for (int i = 0; i < 9; i++) printf("x%d %ld\n", 19 + i, seen_x[i]);
    for (int i = 0; i < 8; i++) printf("d%d %ld\n", 8 + i, seen_d[i]);
    return 0;
}
"#;

#[test]
fn a_system_v_function_calling_winch_code_preserves_its_callee_saved_registers() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = ObjectModule::new(
        ObjectBuilder::new("winch.clif").target(isa::lookup("aarch64").unwrap().finish()),
    );
    for f in &parse_functions(CLIF, "winch.clif").unwrap() {
        let id = m
            .declare_function(&ir_name(&f.name), Linkage::Export, &f.signature)
            .unwrap();
        m.define_function(id, f).expect("compiles for aarch64");
    }
    let obj = dir.path().join("winch.o");
    std::fs::write(&obj, m.finish().expect("writes")).unwrap();
    let main = dir.path().join("main.c");
    std::fs::write(&main, HARNESS).unwrap();
    let exe = dir.path().join("prog");
    run(tool("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
        .arg("-static")
        .arg("-o")
        .arg(&exe)
        .arg(&main)
        .arg(&obj));
    let out = run(tool("qemu-aarch64", "qemu-user").arg(&exe));
    let mut expected = String::from("result 47\n");
    for n in 19..28 {
        expected.push_str(&format!("x{n} {}\n", 1000 + n));
    }
    for n in 8..16 {
        expected.push_str(&format!("d{n} {}\n", 800 + n));
    }
    assert_eq!(out, expected);
}
