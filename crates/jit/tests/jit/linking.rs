//! Relocations, imports and symbol resolution.

use crate::common::{assemble, define, here, sig};
use iced_x86::code_asm::*;
use kestrel_ir::Type;
use kestrel_jit::{
    CompiledFunction, DeclError, JitBuilder, JitError, JitModule, Linkage, Reloc, RelocKind,
    RelocTarget, Value,
};

/// `push rax; call rel32 <target>; <after>; pop rcx; ret`, with the call relocated.
fn call_then(
    target: RelocTarget,
    s: kestrel_ir::Signature,
    after: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> CompiledFunction {
    let asm = assemble(|a| {
        a.push(rax)?; // realign the stack to 16 for the call
        let call = here(a)?;
        a.db(&[0xe8, 0, 0, 0, 0])?;
        after(a)?;
        a.pop(rcx)?;
        a.ret()?;
        Ok(vec![call])
    });
    CompiledFunction {
        relocs: vec![Reloc {
            offset: asm.labels[0] + 1,
            kind: RelocKind::CallPcRel4,
            target,
            addend: -4,
        }],
        ..CompiledFunction::new(asm.code, s)
    }
}

fn times3() -> CompiledFunction {
    let asm = assemble(|a| {
        a.lea(rax, qword_ptr(rdi + rdi * 2))?;
        a.ret()?;
        Ok(vec![])
    });
    CompiledFunction::new(asm.code, sig(&[Type::I64], &[Type::I64]))
}

fn plus_one(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.add(rax, 1)
}

fn i64_fn() -> kestrel_ir::Signature {
    sig(&[Type::I64], &[Type::I64])
}

#[test]
fn call_between_module_functions_by_rel32() {
    let mut m = JitModule::new();
    // The caller is defined before the callee: relocations resolve at finalize.
    let caller = define(
        &mut m,
        "caller",
        call_then(RelocTarget::Function("times3".into()), i64_fn(), plus_one),
    );
    let callee = define(&mut m, "times3", times3());
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(caller, &[Value::I64(5)]) }.unwrap(),
        [Value::I64(16)]
    );
    assert_eq!(
        unsafe { m.call(callee, &[Value::I64(5)]) }.unwrap(),
        [Value::I64(15)]
    );

    // A later batch calls into the earlier region (direct or through a stub).
    let late = define(
        &mut m,
        "late",
        call_then(RelocTarget::Function("caller".into()), i64_fn(), plus_one),
    );
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(late, &[Value::I64(5)]) }.unwrap(),
        [Value::I64(17)]
    );
}

/// A callee named by its id (as `compiled_from_codegen` names the module's functions) links
/// like one named by its name, in the same batch and from a later one; an id declared but
/// never defined, or never declared, is an error naming it.
#[test]
fn call_between_module_functions_by_id() {
    let mut m = JitModule::new();
    let callee = m
        .declare_function("times3", Linkage::Local, &i64_fn())
        .unwrap();
    let caller = define(
        &mut m,
        "caller",
        call_then(RelocTarget::Declared(callee), i64_fn(), plus_one),
    );
    m.define_function(callee, times3()).unwrap();
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(caller, &[Value::I64(5)]) }.unwrap(),
        [Value::I64(16)]
    );
    let late = define(
        &mut m,
        "late",
        call_then(RelocTarget::Declared(caller), i64_fn(), plus_one),
    );
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(late, &[Value::I64(5)]) }.unwrap(),
        [Value::I64(17)]
    );

    let mut m = JitModule::new();
    let missing = m
        .declare_function("never_defined", Linkage::Local, &i64_fn())
        .unwrap();
    define(
        &mut m,
        "f",
        call_then(RelocTarget::Declared(missing), i64_fn(), |_| Ok(())),
    );
    let e = m.finalize_definitions().unwrap_err();
    assert!(
        matches!(e, JitError::UndefinedFunction { ref name } if name == "never_defined"),
        "{e}"
    );

    // An id from another module that this one never declared.
    let mut other = JitModule::new();
    for name in ["a", "b", "c"] {
        other
            .declare_function(name, Linkage::Local, &i64_fn())
            .unwrap();
    }
    let foreign = other.get_name("c").unwrap();
    let mut m = JitModule::new();
    define(
        &mut m,
        "f",
        call_then(RelocTarget::Declared(foreign), i64_fn(), |_| Ok(())),
    );
    let e = m.finalize_definitions().unwrap_err();
    assert!(
        matches!(e, JitError::Decl(DeclError::BadFuncId { .. })),
        "{e}"
    );
}

/// Functions start 16-byte aligned, and the padding between them is `int3`.
#[test]
fn padding_between_functions_is_int3() {
    let mut m = JitModule::new();
    let first = define(&mut m, "first", times3());
    let len = times3().code.len();
    let second = define(&mut m, "second", times3());
    m.finalize_definitions().unwrap();
    let a = m.get_finalized_function(first).unwrap() as usize;
    let b = m.get_finalized_function(second).unwrap() as usize;
    assert!(
        len % 16 != 0 && b == a + len.next_multiple_of(16),
        "{a:#x} {b:#x} {len}"
    );
    // SAFETY: both functions lie in one finalized, readable region; the bytes between
    // them belong to it.
    let padding = unsafe { std::slice::from_raw_parts((a + len) as *const u8, b - a - len) };
    assert!(padding.iter().all(|&x| x == 0xcc), "{padding:x?}");
    assert_eq!(
        unsafe { m.call(second, &[Value::I64(2)]) }.unwrap(),
        [Value::I64(6)]
    );
}

#[test]
fn func_addr_by_abs8() {
    // movabs rax, <times3>; push rax(align); call rax; pop rcx; ret
    let mut code = vec![0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0];
    code.extend([0x51, 0xff, 0xd0, 0x59, 0xc3]);
    let f = CompiledFunction {
        relocs: vec![Reloc {
            offset: 2,
            kind: RelocKind::Abs8,
            target: RelocTarget::Function("times3".into()),
            addend: 0,
        }],
        ..CompiledFunction::new(code, i64_fn())
    };
    let mut m = JitModule::new();
    let id = define(&mut m, "indirect", f);
    let callee = define(&mut m, "times3", times3());
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(id, &[Value::I64(7)]) }.unwrap(),
        [Value::I64(21)]
    );
    let addr = m.get_finalized_function(callee).unwrap();
    assert_eq!(addr as usize % 16, 0, "functions are 16-byte aligned");
}

extern "C" fn host_square_minus(x: i64) -> i64 {
    x * x - 1
}

#[test]
fn imported_host_function_from_the_symbol_table() {
    let mut b = JitBuilder::new();
    b.symbol("host_square_minus", host_square_minus as *const u8);
    let mut m = b.build();
    let import = m
        .declare_function("host_square_minus", Linkage::Import, &i64_fn())
        .unwrap();
    let f = define(
        &mut m,
        "f",
        call_then(
            RelocTarget::Function("host_square_minus".into()),
            i64_fn(),
            plus_one,
        ),
    );
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(f, &[Value::I64(9)]) }.unwrap(),
        [Value::I64(81)]
    );
    // The import itself is callable through the trampoline too.
    assert_eq!(
        m.get_finalized_function(import).unwrap(),
        host_square_minus as *const u8
    );
    assert_eq!(
        unsafe { m.call(import, &[Value::I64(3)]) }.unwrap(),
        [Value::I64(8)]
    );
}

#[test]
fn symbol_table_shadows_the_process() {
    extern "C" fn fake_labs(_: i64) -> i64 {
        -99
    }
    let mut b = JitBuilder::new();
    b.symbol("labs", fake_labs as *const u8);
    let mut m = b.build();
    let labs = m
        .declare_function("labs", Linkage::Import, &i64_fn())
        .unwrap();
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(labs, &[Value::I64(5)]) }.unwrap(),
        [Value::I64(-99)]
    );
}

#[test]
fn libc_symbols_by_dlsym() {
    let mut m = JitModule::new();
    let labs = m
        .declare_function("labs", Linkage::Import, &i64_fn())
        .unwrap();
    // Declared import called from JIT code, and an undeclared libcall by symbol.
    let f = define(
        &mut m,
        "f",
        call_then(RelocTarget::Function("labs".into()), i64_fn(), plus_one),
    );
    let g = define(
        &mut m,
        "g",
        call_then(RelocTarget::Symbol("labs".into()), i64_fn(), |_| Ok(())),
    );
    m.finalize_definitions().unwrap();
    assert_eq!(
        unsafe { m.call(labs, &[Value::I64(-12)]) }.unwrap(),
        [Value::I64(12)]
    );
    assert_eq!(
        unsafe { m.call(f, &[Value::I64(-12)]) }.unwrap(),
        [Value::I64(13)]
    );
    assert_eq!(
        unsafe { m.call(g, &[Value::I64(-4)]) }.unwrap(),
        [Value::I64(4)]
    );
}

#[test]
fn missing_symbol_is_a_typed_error() {
    let mut m = JitModule::new();
    m.declare_function("kestrel_no_such_symbol_xyz", Linkage::Import, &i64_fn())
        .unwrap();
    match m.finalize_definitions() {
        Err(JitError::UndefinedSymbol { name }) => assert_eq!(name, "kestrel_no_such_symbol_xyz"),
        other => panic!("expected UndefinedSymbol, got {other:?}"),
    }

    let mut m = JitModule::new();
    define(
        &mut m,
        "f",
        call_then(
            RelocTarget::Symbol("kestrel_missing_libcall".into()),
            i64_fn(),
            |_| Ok(()),
        ),
    );
    let e = m.finalize_definitions().unwrap_err();
    assert!(matches!(e, JitError::UndefinedSymbol { .. }), "{e}");
    assert!(e.to_string().contains("kestrel_missing_libcall"), "{e}");
}

#[test]
fn undefined_and_undeclared_functions_are_typed_errors() {
    let mut m = JitModule::new();
    m.declare_function("never_defined", Linkage::Local, &i64_fn())
        .unwrap();
    let f = define(
        &mut m,
        "f",
        call_then(
            RelocTarget::Function("never_defined".into()),
            i64_fn(),
            |_| Ok(()),
        ),
    );
    let e = m.finalize_definitions().unwrap_err();
    assert!(
        matches!(e, JitError::UndefinedFunction { ref name } if name == "never_defined"),
        "{e}"
    );
    assert!(matches!(
        m.get_finalized_function(f),
        Err(JitError::NotFinalized { .. })
    ));

    let mut m = JitModule::new();
    define(
        &mut m,
        "f",
        call_then(RelocTarget::Function("nobody".into()), i64_fn(), |_| Ok(())),
    );
    let e = m.finalize_definitions().unwrap_err();
    assert!(matches!(e, JitError::UnknownFunction { .. }), "{e}");
}

#[test]
fn declaration_and_definition_misuse() {
    let mut m = JitModule::new();
    let f = m.declare_function("f", Linkage::Local, &i64_fn()).unwrap();
    assert_eq!(
        m.declare_function("f", Linkage::Local, &i64_fn()).unwrap(),
        f
    );
    let e = m
        .declare_function("f", Linkage::Local, &sig(&[], &[]))
        .unwrap_err();
    assert!(
        matches!(e, JitError::Decl(DeclError::IncompatibleSignature { .. })),
        "{e}"
    );
    let e = m
        .define_function(f, CompiledFunction::new(vec![0xc3], sig(&[], &[])))
        .unwrap_err();
    assert!(
        matches!(e, JitError::Decl(DeclError::SignatureMismatch { .. })),
        "{e}"
    );
    let bad_reloc = CompiledFunction {
        relocs: vec![Reloc {
            offset: 0,
            kind: RelocKind::Abs8,
            target: RelocTarget::Symbol("labs".into()),
            addend: 0,
        }],
        ..CompiledFunction::new(vec![0xc3], i64_fn())
    };
    let e = m.define_function(f, bad_reloc).unwrap_err();
    assert!(matches!(e, JitError::OutOfBounds { .. }), "{e}");
    m.define_function(f, CompiledFunction::new(vec![0xc3], i64_fn()))
        .unwrap();
    let e = m
        .define_function(f, CompiledFunction::new(vec![0xc3], i64_fn()))
        .unwrap_err();
    assert!(
        matches!(e, JitError::Decl(DeclError::AlreadyDefined { .. })),
        "{e}"
    );
    let imp = m
        .declare_function("labs", Linkage::Import, &i64_fn())
        .unwrap();
    let e = m
        .define_function(imp, CompiledFunction::new(vec![0xc3], i64_fn()))
        .unwrap_err();
    assert!(
        matches!(e, JitError::Decl(DeclError::DefineImport { .. })),
        "{e}"
    );
}

/// W^X: after finalize the code's mapping is read-execute, not writable.
#[test]
fn finalized_code_is_not_writable() {
    let mut m = JitModule::new();
    let f = define(&mut m, "times3", times3());
    m.finalize_definitions().unwrap();
    let addr = m.get_finalized_function(f).unwrap() as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let line = maps
        .lines()
        .find(|l| {
            let range = l.split_whitespace().next().unwrap();
            let (lo, hi) = range.split_once('-').unwrap();
            let lo = usize::from_str_radix(lo, 16).unwrap();
            let hi = usize::from_str_radix(hi, 16).unwrap();
            (lo..hi).contains(&addr)
        })
        .expect("the code is mapped");
    let perms = line.split_whitespace().nth(1).unwrap();
    assert_eq!(&perms[..3], "r-x", "{line}");
}

/// A call to a target out of rel32 reach (the test binary's code is usually far from the
/// mapped code) goes through a `movabs r11; jmp r11` stub; a near one is direct.
#[test]
fn far_calls_go_through_a_stub() {
    let mut b = JitBuilder::new();
    b.symbol("host_square_minus", host_square_minus as *const u8);
    let mut m = b.build();
    m.declare_function("host_square_minus", Linkage::Import, &i64_fn())
        .unwrap();
    let f = define(
        &mut m,
        "f",
        call_then(
            RelocTarget::Function("host_square_minus".into()),
            i64_fn(),
            plus_one,
        ),
    );
    m.finalize_definitions().unwrap();
    // `call_then` starts with `push rax` (one byte), then the 5-byte call.
    let call_at = m.get_finalized_function(f).unwrap() as usize + 1;
    // SAFETY: finalized code is mapped readable; the call's 5 bytes are inside it.
    let call = unsafe { std::slice::from_raw_parts(call_at as *const u8, 5) };
    assert_eq!(call[0], 0xe8);
    let disp = i32::from_le_bytes(call[1..5].try_into().unwrap());
    let dest = (call_at + 5).wrapping_add_signed(disp as isize);
    let host = host_square_minus as *const u8 as usize;
    if dest != host {
        // SAFETY: `dest` is inside the region (a rel32 from it), where stubs are 16 bytes.
        let stub = unsafe { std::slice::from_raw_parts(dest as *const u8, 13) };
        assert_eq!(stub[..2], [0x49, 0xbb]);
        assert_eq!(stub[2..10], (host as u64).to_le_bytes());
        assert_eq!(stub[10..13], [0x41, 0xff, 0xe3]);
    }
    assert_eq!(
        unsafe { m.call(f, &[Value::I64(-4)]) }.unwrap(),
        [Value::I64(16)]
    );
}
