//! Unwinding through JIT frames, data objects and symbol addresses, freeing single functions,
//! the perf map, and the `Module` trait, on code compiled from CLIF.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use kestrel_ir::text::parse_functions;
use kestrel_jit::{
    DataDescription, DeclError, JitBuilder, JitError, JitModule, Linkage, Module, Value,
};

fn parse(text: &str) -> Vec<kestrel_ir::Function> {
    parse_functions(text, "test.clif").expect("valid CLIF")
}

/// Declare and define every function of `text` through the `Module` trait, as a front end
/// would; returns the functions.
fn define_all<M: Module>(m: &mut M, text: &str) -> Result<Vec<kestrel_ir::Function>, M::Error> {
    let funcs = parse(text);
    let ids = funcs
        .iter()
        .map(|f| {
            m.declare_function(
                &kestrel_jit::ir_name(&f.name),
                Linkage::Export,
                &f.signature,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (f, id) in funcs.iter().zip(ids) {
        m.define_function(id, f)?;
    }
    Ok(funcs)
}

/// Kestrel `outer` → Kestrel `inner` → the host function `host_cb(x)`.
const CALL_CHAIN: &str = include_str!("../../../tests/programs/call_chain.clif");

/// The model of `outer` when `host_cb` returns `h(y)`.
fn outer_model(x: i64, h: impl Fn(i64) -> i64) -> i64 {
    let v1 = x + 1;
    let y = v1 * 3;
    let inner = h(y) + y + v1;
    inner + v1 + x
}

type UnwindFn = extern "C" fn(*mut c_void, *mut c_void) -> i32;
extern "C" {
    fn _Unwind_Backtrace(trace: UnwindFn, arg: *mut c_void) -> i32;
    fn _Unwind_GetIP(ctx: *mut c_void) -> usize;
}

extern "C" fn collect_ip(ctx: *mut c_void, arg: *mut c_void) -> i32 {
    // SAFETY: `arg` is the `Vec<usize>` passed by `backtrace_ips`, `ctx` the unwinder's.
    let ips = unsafe { &mut *(arg as *mut Vec<usize>) };
    ips.push(unsafe { _Unwind_GetIP(ctx) });
    0 // _URC_NO_REASON: keep going
}

fn backtrace_ips() -> Vec<usize> {
    let mut ips: Vec<usize> = Vec::new();
    // SAFETY: `collect_ip` only pushes into `ips`, which outlives the call.
    unsafe { _Unwind_Backtrace(collect_ip, &mut ips as *mut Vec<usize> as *mut c_void) };
    ips
}

static BACKTRACE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

extern "C" fn host_backtrace(x: i64) -> i64 {
    *BACKTRACE.lock().unwrap() = backtrace_ips();
    x * 2
}

extern "C-unwind" fn host_panics(_x: i64) -> i64 {
    panic!("unwinding through Kestrel frames")
}

fn module_with(host: *const u8) -> JitModule {
    let mut b = JitBuilder::new();
    b.symbol("host_cb", host);
    b.build()
}

fn code_range(m: &JitModule, name: &str, len: usize) -> std::ops::Range<usize> {
    let id = m.get_name(name).expect("declared");
    let start = m.get_finalized_function(id).expect("finalized") as usize;
    start..start + len
}

#[test]
fn a_backtrace_from_a_host_function_walks_through_kestrel_frames_to_the_caller() {
    let mut m = module_with(host_backtrace as *const u8);
    define_all(&mut m, CALL_CHAIN).expect("compiles");
    m.finalize_definitions().expect("links");
    let outer = m.get_name("outer").unwrap();
    // Called directly (no trampoline): the next frame is this test function.
    let f: extern "C" fn(i64) -> i64 =
        unsafe { std::mem::transmute(m.get_finalized_function(outer).unwrap()) };
    assert_eq!(f(5), outer_model(5, |y| y * 2));
    let ips = BACKTRACE.lock().unwrap().clone();
    // A return address points after the call, inside the caller (never at its first byte).
    let (inner_code, outer_code) = (code_range(&m, "inner", 256), code_range(&m, "outer", 256));
    let inner_at = ips
        .iter()
        .position(|ip| inner_code.contains(ip) && *ip > inner_code.start);
    let outer_at = ips
        .iter()
        .position(|ip| outer_code.contains(ip) && *ip > outer_code.start);
    let (Some(i), Some(o)) = (inner_at, outer_at) else {
        panic!("the Kestrel frames are missing from the backtrace {ips:x?}");
    };
    assert!(i < o, "inner must be below outer: {ips:x?}");
    // Unwinding went on past `outer` into Rust code (the test, the harness, `main`...).
    assert!(
        ips.len() > o + 2,
        "the backtrace stops at the Kestrel frames: {ips:x?}"
    );

    // And through the trampoline of `JitModule::call`.
    let r = unsafe { m.call(outer, &[Value::I64(7)]) }.expect("runs");
    assert_eq!(r, vec![Value::I64(outer_model(7, |y| y * 2))]);
    let ips = BACKTRACE.lock().unwrap().clone();
    let o = ips
        .iter()
        .position(|ip| outer_code.contains(ip))
        .expect("outer in the backtrace");
    assert!(ips.len() > o + 2, "stopped at the trampoline: {ips:x?}");
}

#[test]
fn unwinding_still_works_after_freeing_other_functions_of_the_batch() {
    // The call chain and 40 more functions in one batch: more than one unwind group
    // (`frames.rs` registers 32 functions per section), the chain's among them.
    let mut m = module_with(host_panics as *const u8);
    define_all(&mut m, CALL_CHAIN).expect("compiles");
    let fillers: String = (0..40)
        .map(|i| format!("function %filler{i}(i64) -> i64 {{ block0(v0: i64): return v0 }}\n"))
        .collect();
    define_all(&mut m, &fillers).expect("compiles");
    m.finalize_definitions().expect("links");
    for i in 0..36 {
        let id = m.get_name(&format!("filler{i}")).unwrap();
        unsafe { m.free_function(id) }.unwrap();
    }
    let outer = m.get_name("outer").unwrap();
    let f: extern "C-unwind" fn(i64) -> i64 =
        unsafe { std::mem::transmute(m.get_finalized_function(outer).unwrap()) };
    // Without the chain's records the unwinder could not pass its frames and would abort.
    let caught = std::panic::catch_unwind(|| f(1));
    assert!(caught.is_err());
    let last = m.get_name("filler39").unwrap();
    assert_eq!(
        unsafe { m.call(last, &[Value::I64(3)]) }.unwrap(),
        vec![Value::I64(3)]
    );
}

#[test]
fn a_rust_panic_unwinds_through_kestrel_frames_and_is_caught() {
    let mut m = module_with(host_panics as *const u8);
    define_all(&mut m, CALL_CHAIN).expect("compiles");
    m.finalize_definitions().expect("links");
    let outer = m.get_name("outer").unwrap();
    let f: extern "C-unwind" fn(i64) -> i64 =
        unsafe { std::mem::transmute(m.get_finalized_function(outer).unwrap()) };
    let caught = std::panic::catch_unwind(|| f(1));
    let message = caught.expect_err("the panic reaches the test");
    assert_eq!(
        message.downcast_ref::<&str>(),
        Some(&"unwinding through Kestrel frames")
    );
    // The module is still usable afterwards.
    let mut m2 = module_with(host_backtrace as *const u8);
    define_all(&mut m2, CALL_CHAIN).expect("compiles");
    m2.finalize_definitions().expect("links");
    let r = unsafe { m2.call(m2.get_name("outer").unwrap(), &[Value::I64(2)]) }.unwrap();
    assert_eq!(r, vec![Value::I64(outer_model(2, |y| y * 2))]);
}

static COUNTER_CALLS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn bump(x: i64) -> i64 {
    COUNTER_CALLS.fetch_add(1, Ordering::SeqCst);
    x + 100
}

#[test]
fn data_objects_hold_addresses_and_are_reached_pc_relative_or_through_the_got() {
    let text = "
function %read_table(i64) -> i64 {
    gv0 = symbol colocated %table
    gv1 = symbol %counter
    sig0 = (i64) -> i64
block0(v0: i64):
    v1 = symbol_value.i64 gv0
    v2 = load.i64 v1            ; table[0]: the address of `bump`
    v3 = load.i64 v1+8          ; table[1]: the address of `counter`
    v4 = load.i64 v3
    v10 = iconst.i64 1
    v5 = iadd v4, v10
    store v5, v3                ; counter += 1 (writable data)
    v6 = global_value.i64 gv1
    v7 = load.i64 v6            ; the same counter, through the GOT
    v8 = iadd v0, v7
    v9 = call_indirect sig0, v2(v8)
    return v9
}
";
    let mut b = JitBuilder::new();
    b.symbol("bump", bump as *const u8);
    let mut m = b.build();
    let table = m.declare_data("table", Linkage::Local, false).unwrap();
    let counter = m.declare_data("counter", Linkage::Export, true).unwrap();
    m.define_data(counter, &DataDescription::bytes(41i64.to_le_bytes()))
        .unwrap();
    m.define_data(
        table,
        &DataDescription::bytes([0u8; 16])
            .with_reloc(0, "bump", 0)
            .with_reloc(8, "counter", 0),
    )
    .unwrap();
    define_all(&mut m, text).expect("compiles");
    m.finalize_definitions().expect("links");
    let f = m.get_name("read_table").unwrap();
    let r = unsafe { m.call(f, &[Value::I64(1)]) }.unwrap();
    assert_eq!(r, vec![Value::I64(1 + 42 + 100)]);
    let r = unsafe { m.call(f, &[Value::I64(1)]) }.unwrap();
    assert_eq!(r, vec![Value::I64(1 + 43 + 100)]);
    let addr = m.get_finalized_data(counter).unwrap() as *const i64;
    assert_eq!(unsafe { *addr }, 43);
    // Read-only data and code really are read-only, writable data next to them is not:
    // checked by the kernel, which fails a `read(2)` into memory the process may not write
    // with EFAULT (no signal). `/proc/self/maps` would say the same on Linux, but qemu's
    // user-mode emulation reports a read-only page next to code as `r-x`.
    let table_addr = m.get_finalized_data(table).unwrap() as usize;
    let code_addr = m.get_finalized_function(f).unwrap() as usize;
    assert_eq!(read_one_byte_into(table_addr), Err(libc::EFAULT));
    assert_eq!(read_one_byte_into(code_addr), Err(libc::EFAULT));
    assert_eq!(read_one_byte_into(addr as usize), Ok(()));
    // /dev/zero wrote the counter's low byte.
    assert_eq!(unsafe { *addr }, 0);
}

/// Read one byte of `/dev/zero` into `addr`: `Err(errno)` when the kernel refuses.
fn read_one_byte_into(addr: usize) -> Result<(), i32> {
    let zero = std::fs::File::open("/dev/zero").unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: the kernel checks that `addr` is writable; a write there changes one byte
    // the test owns (the counter) or fails with EFAULT.
    let n = unsafe { libc::read(zero.as_raw_fd(), addr as *mut libc::c_void, 1) };
    match n {
        1 => Ok(()),
        _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap()),
    }
}

#[test]
fn bad_data_is_an_error_naming_the_object() {
    let mut m = JitModule::new();
    let d = m.declare_data("d", Linkage::Local, false).unwrap();
    let e = m
        .define_data(d, &DataDescription::bytes([0u8; 4]).with_reloc(0, "x", 0))
        .unwrap_err();
    assert!(e.to_string().contains("`d`"), "{e}");
    assert!(matches!(
        m.declare_function(
            "d",
            Linkage::Local,
            &kestrel_ir::Signature::new(kestrel_ir::CallConv::SystemV)
        ),
        Err(JitError::Decl(DeclError::NameKind { .. }))
    ));
}

#[test]
fn a_freed_function_can_be_defined_again_and_its_old_registrations_are_gone() {
    let v1 =
        "function %f(i64) -> i64 { block0(v0: i64): v2 = iconst.i64 1 v1 = iadd v0, v2 return v1 }";
    let v2 = "function %f(i64) -> i64 { block0(v0: i64): v2 = iconst.i64 10 v1 = imul v0, v2 return v1 }";
    let mut m = JitModule::new();
    define_all(&mut m, v1).unwrap();
    m.finalize_definitions().unwrap();
    let f = m.get_name("f").unwrap();
    assert_eq!(
        unsafe { m.call(f, &[Value::I64(4)]) }.unwrap(),
        vec![Value::I64(5)]
    );
    // Freeing twice, or freeing something never finalized, is an error, not a crash.
    unsafe { m.free_function(f) }.unwrap();
    assert!(matches!(
        unsafe { m.free_function(f) },
        Err(JitError::NotFreeable { .. })
    ));
    assert!(matches!(
        m.get_finalized_function(f),
        Err(JitError::NotFinalized { .. })
    ));
    for round in 0..50 {
        let funcs = parse(v2);
        m.define_ir_as(f, &funcs[0], &Default::default()).unwrap();
        m.finalize_definitions().unwrap();
        let r = unsafe { m.call(f, &[Value::I64(round)]) }.unwrap();
        assert_eq!(r, vec![Value::I64(round * 10)]);
        unsafe { m.free_function(f) }.unwrap();
    }
    // Each round's batch was released (only live ones count), and its slot reused.
    assert!(format!("{m:?}").contains("batches: 0"), "{m:?}");
    assert!(format!("{m:?}").contains("batch_slots: 1"), "{m:?}");
    assert_eq!(m.code_bytes_mapped(), 0);
}

#[test]
fn the_perf_map_names_each_finalized_function() {
    let mut b = JitBuilder::new();
    b.perf_map(true);
    let mut m = b.build();
    let text = "function %perf_map_probe_fn(i64) -> i64 { block0(v0: i64): return v0 }";
    define_all(&mut m, text).unwrap();
    m.finalize_definitions().unwrap();
    let addr = m
        .get_finalized_function(m.get_name("perf_map_probe_fn").unwrap())
        .unwrap() as usize;
    let map = std::fs::read_to_string(kestrel_jit::perf_map::path()).expect("map written");
    let line = map
        .lines()
        .find(|l| l.ends_with(" perf_map_probe_fn"))
        .expect("the function is in the map");
    let mut fields = line.split(' ');
    let start = usize::from_str_radix(fields.next().unwrap(), 16).unwrap();
    let size = usize::from_str_radix(fields.next().unwrap(), 16).unwrap();
    assert_eq!(start, addr);
    assert!(size > 0);
}
