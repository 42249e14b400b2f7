//! Each translated feature, on committed `.wat` sources: concrete results and traps.

use kestrel_wasm::{Extern, Func, Imports, Instance, InvokeError, Module, Trap, Val, WasmError};
use wasmparser::{FuncType, ValType};

fn instantiate(file: &str, imports: &Imports) -> Instance {
    let path = format!("{}/tests/wat/{file}", env!("CARGO_MANIFEST_DIR"));
    let wasm = wat::parse_file(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let module = Module::new(&wasm).unwrap_or_else(|e| panic!("{path}: {e}"));
    Instance::new(&module, imports).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn call(i: &Instance, name: &str, args: &[Val]) -> Vec<Val> {
    i.invoke(name, args)
        .unwrap_or_else(|e| panic!("{name}({args:?}): {e}"))
}

fn trap(i: &Instance, name: &str, args: &[Val]) -> Trap {
    match i.invoke(name, args) {
        Err(InvokeError::Trap { trap, .. }) => trap,
        other => panic!("{name}({args:?}): expected a trap, got {other:?}"),
    }
}

use Val::{F32, F64, I32, I64};

fn f32v(x: f32) -> Val {
    F32(x.to_bits())
}

fn f64v(x: f64) -> Val {
    F64(x.to_bits())
}

#[test]
fn integer_operators_follow_wasm_rules() {
    let i = instantiate("numeric.wat", &Imports::new());
    assert_eq!(call(&i, "i32.div_s", &[I32(-7), I32(2)]), [I32(-3)]);
    assert_eq!(call(&i, "i32.div_u", &[I32(-1), I32(2)]), [I32(i32::MAX)]);
    assert_eq!(
        trap(&i, "i32.div_s", &[I32(1), I32(0)]),
        Trap::IntegerDivideByZero
    );
    assert_eq!(
        trap(&i, "i32.div_s", &[I32(i32::MIN), I32(-1)]),
        Trap::IntegerOverflow
    );
    assert_eq!(call(&i, "i32.rem_s", &[I32(i32::MIN), I32(-1)]), [I32(0)]);
    assert_eq!(call(&i, "i32.rem_s", &[I32(-7), I32(2)]), [I32(-1)]);
    assert_eq!(
        trap(&i, "i64.rem_u", &[I64(1), I64(0)]),
        Trap::IntegerDivideByZero
    );
    assert_eq!(call(&i, "i32.shl", &[I32(1), I32(33)]), [I32(2)]);
    assert_eq!(call(&i, "i64.shr_s", &[I64(-16), I64(66)]), [I64(-4)]);
    assert_eq!(call(&i, "i32.rotr", &[I32(1), I32(1)]), [I32(i32::MIN)]);
    assert_eq!(call(&i, "i32.clz", &[I32(0)]), [I32(32)]);
    assert_eq!(call(&i, "i64.ctz", &[I64(0x100)]), [I64(8)]);
    assert_eq!(call(&i, "i32.popcnt", &[I32(-1)]), [I32(32)]);
    assert_eq!(call(&i, "i64.lt_u", &[I64(1), I64(-1)]), [I32(1)]);
    assert_eq!(call(&i, "i32.eqz", &[I32(0)]), [I32(1)]);
    assert_eq!(call(&i, "i32.extend8_s", &[I32(0x80)]), [I32(-128)]);
    assert_eq!(call(&i, "i64.extend32_s", &[I64(0xffff_ffff)]), [I64(-1)]);
    assert_eq!(call(&i, "i32.wrap_i64", &[I64(0x1_0000_0005)]), [I32(5)]);
    assert_eq!(call(&i, "i64.extend_i32_u", &[I32(-1)]), [I64(0xffff_ffff)]);
    assert_eq!(call(&i, "select", &[I32(0), I64(1), I64(2)]), [I64(2)]);
    assert_eq!(call(&i, "select", &[I32(5), I64(1), I64(2)]), [I64(1)]);
}

#[test]
fn float_operators_follow_wasm_rules() {
    let i = instantiate("numeric.wat", &Imports::new());
    // min/max: -0 < +0, NaN wins.
    assert_eq!(call(&i, "f32.min", &[f32v(0.0), f32v(-0.0)]), [f32v(-0.0)]);
    let [F32(nan)] = call(&i, "f32.min", &[f32v(f32::NAN), f32v(1.0)])[..] else {
        panic!("one f32 result")
    };
    assert!(f32::from_bits(nan).is_nan());
    assert_eq!(call(&i, "f64.max", &[f64v(-0.0), f64v(0.0)]), [f64v(0.0)]);
    assert_eq!(call(&i, "f64.nearest", &[f64v(2.5)]), [f64v(2.0)]);
    assert_eq!(call(&i, "f64.nearest", &[f64v(-3.5)]), [f64v(-4.0)]);
    assert_eq!(
        call(&i, "f32.copysign", &[f32v(2.0), f32v(-0.0)]),
        [f32v(-2.0)]
    );
    assert_eq!(
        call(&i, "f64.ne", &[f64v(f64::NAN), f64v(f64::NAN)]),
        [I32(1)]
    );
    assert_eq!(call(&i, "f32.lt", &[f32v(f32::NAN), f32v(1.0)]), [I32(0)]);
    assert_eq!(
        call(&i, "typed-select", &[I32(1), f32v(1.5), f32v(2.5)]),
        [f32v(1.5)]
    );
    assert_eq!(
        call(&i, "typed-select", &[I32(0), f32v(1.5), f32v(2.5)]),
        [f32v(2.5)]
    );
    // Payloads survive reinterpretation.
    assert_eq!(
        call(&i, "f32.reinterpret_i32", &[I32(0x7fa0_0001)]),
        [F32(0x7fa0_0001)]
    );
    assert_eq!(
        call(&i, "i64.reinterpret_f64", &[F64(0xfff8_0000_0000_0001)]),
        [I64(0xfff8_0000_0000_0001u64 as i64)]
    );
}

#[test]
fn conversions_trap_or_saturate() {
    let i = instantiate("numeric.wat", &Imports::new());
    assert_eq!(call(&i, "i32.trunc_f32_s", &[f32v(-3.9)]), [I32(-3)]);
    assert_eq!(
        trap(&i, "i32.trunc_f32_s", &[f32v(f32::NAN)]),
        Trap::BadConversionToInteger
    );
    assert_eq!(
        trap(&i, "i32.trunc_f32_s", &[f32v(3e9)]),
        Trap::IntegerOverflow
    );
    assert_eq!(
        trap(&i, "i64.trunc_f64_u", &[f64v(-1.0)]),
        Trap::IntegerOverflow
    );
    assert_eq!(
        call(&i, "i64.trunc_f64_u", &[f64v(1.8e19)]),
        [I64(18_000_000_000_000_000_000u64 as i64)]
    );
    assert_eq!(
        call(&i, "i32.trunc_sat_f64_s", &[f64v(1e12)]),
        [I32(i32::MAX)]
    );
    assert_eq!(call(&i, "i32.trunc_sat_f64_s", &[f64v(f64::NAN)]), [I32(0)]);
    assert_eq!(call(&i, "i64.trunc_sat_f32_u", &[f32v(-5.0)]), [I64(0)]);
    assert_eq!(
        call(&i, "f32.convert_i64_u", &[I64(-1)]),
        [f32v(1.8446744e19)]
    );
    assert_eq!(call(&i, "f64.promote_f32", &[f32v(0.5)]), [f64v(0.5)]);
}

#[test]
fn control_flow_and_multi_value() {
    let i = instantiate("control.wat", &Imports::new());
    assert_eq!(
        call(&i, "fac", &[I64(20)]),
        [I64(2_432_902_008_176_640_000)]
    );
    assert_eq!(call(&i, "sum", &[I32(100)]), [I32(5050)]);
    for (x, want) in [(0, 100), (1, 101), (2, 102), (3, 103), (7, 103), (-1, 103)] {
        assert_eq!(
            call(&i, "classify", &[I32(x)]),
            [I32(want)],
            "classify({x})"
        );
    }
    assert_eq!(
        call(&i, "swap-sum", &[I32(3), I32(4)]),
        [I32(4), I32(3), I32(7)]
    );
    assert_eq!(call(&i, "count-down", &[I32(5)]), [I32(0)]);
    assert_eq!(call(&i, "maybe-double", &[I32(21), I32(1)]), [I32(42)]);
    assert_eq!(call(&i, "maybe-double", &[I32(21), I32(0)]), [I32(21)]);
    assert_eq!(call(&i, "early", &[I32(1)]), [I32(10)]);
    assert_eq!(call(&i, "early", &[I32(0)]), [I32(20)]);
    assert_eq!(trap(&i, "trap", &[]), Trap::Unreachable);
}

#[test]
fn runaway_recursion_traps_and_the_thread_goes_on() {
    let i = instantiate("control.wat", &Imports::new());
    assert_eq!(trap(&i, "deep", &[I32(0)]), Trap::StackOverflow);
    // The limit is reset: a later call runs normally, and traps again the same way.
    assert_eq!(call(&i, "fac", &[I64(5)]), [I64(120)]);
    assert_eq!(trap(&i, "deep", &[I32(0)]), Trap::StackOverflow);
}

#[test]
fn memory_accesses_bounds_and_growth() {
    let i = instantiate("memory.wat", &Imports::new());
    assert_eq!(call(&i, "i32.load", &[I32(0)]), [I32(0x0403_0201)]);
    assert_eq!(
        call(&i, "i64.load", &[I32(0)]),
        [I64(0x0807_0605_0403_0201)]
    );
    assert_eq!(call(&i, "i32.load8_s", &[I32(8)]), [I32(-1)]);
    assert_eq!(call(&i, "i32.load8_u", &[I32(8)]), [I32(255)]);
    assert_eq!(call(&i, "i64.load16_s", &[I32(8)]), [I64(-257)]);
    assert_eq!(call(&i, "i64.load32_u", &[I32(6)]), [I64(0xfeff_0807)]);
    assert_eq!(call(&i, "load-offset", &[I32(0)]), [I32(0x0807_0605)]);
    call(&i, "i32.store8", &[I32(100), I32(0x1ff)]);
    assert_eq!(call(&i, "i32.load", &[I32(100)]), [I32(0xff)]);
    call(&i, "i64.store32", &[I32(200), I64(-1)]);
    assert_eq!(call(&i, "i64.load", &[I32(200)]), [I64(0xffff_ffff)]);
    call(&i, "f64.store", &[I32(300), f64v(1.25)]);
    assert_eq!(call(&i, "f64.load", &[I32(300)]), [f64v(1.25)]);
    // The last in-bounds word, then one byte past the end, then a huge offset.
    assert_eq!(call(&i, "i32.load", &[I32(65532)]), [I32(0)]);
    assert_eq!(trap(&i, "i32.load", &[I32(65533)]), Trap::MemoryOutOfBounds);
    assert_eq!(trap(&i, "load-offset", &[I32(-4)]), Trap::MemoryOutOfBounds);
    assert_eq!(
        trap(&i, "i32.store8", &[I32(65536), I32(0)]),
        Trap::MemoryOutOfBounds
    );
    // Growth: old size back, new pages zeroed and addressable, maximum respected.
    assert_eq!(call(&i, "size", &[]), [I32(1)]);
    assert_eq!(call(&i, "grow", &[I32(1)]), [I32(1)]);
    assert_eq!(call(&i, "i32.load", &[I32(65533)]), [I32(0)]);
    assert_eq!(call(&i, "i32.load", &[I32(0)]), [I32(0x0403_0201)]);
    assert_eq!(call(&i, "grow", &[I32(2)]), [I32(-1)]);
    assert_eq!(call(&i, "size", &[]), [I32(2)]);
    assert_eq!(i.memory().unwrap().pages(), 2);
    assert_eq!(call(&i, "bump", &[]), [I64(-4)]);
    assert_eq!(call(&i, "bump", &[]), [I64(-3)]);
    assert_eq!(i.global("limit"), Some(I32(65536)));
}

fn host_imports() -> Imports {
    let mut imports = Imports::new();
    let add_ty = FuncType::new([ValType::I32, ValType::I32], [ValType::I32]);
    let add = Func::wrap(add_ty, |args| match args {
        [I32(a), I32(b)] => Ok(vec![I32(a.wrapping_add(*b))]),
        _ => Err(Trap::Host("bad arguments".into())),
    })
    .unwrap();
    let fail = Func::wrap(FuncType::new([], []), |_| Err(Trap::Host("refused".into()))).unwrap();
    imports.define("host", "add", Extern::Func(add));
    imports.define("host", "fail", Extern::Func(fail));
    imports
}

#[test]
fn indirect_and_imported_calls() {
    let i = instantiate("tables.wat", &host_imports());
    assert_eq!(call(&i, "apply", &[I32(0), I32(10), I32(3)]), [I32(7)]);
    // Entry 1 is the imported host function, called through the table.
    assert_eq!(call(&i, "apply", &[I32(1), I32(10), I32(3)]), [I32(13)]);
    assert_eq!(call(&i, "apply-unary", &[I32(2), I32(5)]), [I32(-5)]);
    assert_eq!(
        trap(&i, "apply", &[I32(2), I32(1), I32(1)]),
        Trap::BadSignature
    );
    assert_eq!(
        trap(&i, "apply", &[I32(3), I32(1), I32(1)]),
        Trap::UninitializedElement
    );
    assert_eq!(
        trap(&i, "apply", &[I32(4), I32(1), I32(1)]),
        Trap::UndefinedElement
    );
    assert_eq!(
        trap(&i, "apply", &[I32(-1), I32(1), I32(1)]),
        Trap::UndefinedElement
    );
    assert_eq!(call(&i, "call-host", &[I32(41)]), [I32(42)]);
    assert_eq!(trap(&i, "call-fail", &[]), Trap::Host("refused".into()));
}

#[test]
fn linking_errors_name_the_import() {
    let wasm = wat::parse_file(format!(
        "{}/tests/wat/tables.wat",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let module = Module::new(&wasm).unwrap();
    let err = Instance::new(&module, &Imports::new()).unwrap_err();
    assert!(
        matches!(&err, WasmError::Link { module, field, message }
            if module == "host" && field == "add" && message == "unknown import"),
        "{err}"
    );
    let mut wrong = host_imports();
    let f = Func::wrap(FuncType::new([], []), |_| Ok(vec![])).unwrap();
    wrong.define("host", "add", Extern::Func(f));
    let err = Instance::new(&module, &wrong).unwrap_err();
    assert!(
        err.to_string().contains("incompatible import type"),
        "{err}"
    );
}

#[test]
fn bad_input_is_an_error_naming_the_problem() {
    // Malformed: not a module at all.
    let err = Module::new(b"\0asm\x01\0\0\0\x01").unwrap_err();
    assert!(matches!(err, WasmError::Invalid { .. }), "{err}");
    // Invalid: a type error.
    let wasm = wat::parse_str("(module (func (result i32) (i64.const 1)))").unwrap();
    let err = Module::new(&wasm).unwrap_err();
    assert!(matches!(err, WasmError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("type mismatch"), "{err}");
    // Unsupported proposals are named.
    for (text, feature) in [
        (
            "(module (func (result v128) (v128.const i64x2 0 0)))",
            "SIMD",
        ),
        ("(module (memory i64 1))", "memory64"),
        ("(module (tag))", "exception handling"),
        ("(module (type (struct)))", "GC"),
        ("(module (memory 1 1 shared))", "threads"),
    ] {
        let wasm = wat::parse_str(text).unwrap();
        let err = Module::new(&wasm).unwrap_err();
        assert!(err.is_unsupported(), "{text}: {err}");
        assert!(
            err.to_string()
                .to_lowercase()
                .contains(&feature.to_lowercase()),
            "{text}: {err}"
        );
    }
}

#[test]
fn instantiation_applies_segments_and_runs_start() {
    let text = r#"(module
        (memory (export "mem") 1)
        (global $started (export "started") (mut i32) (i32.const 0))
        (data (i32.const 16) "hi")
        (func $start (global.set $started (i32.add (i32.load8_u (i32.const 16)) (i32.const 1))))
        (start $start))"#;
    let module = Module::new(&wat::parse_str(text).unwrap()).unwrap();
    let i = Instance::new(&module, &Imports::new()).unwrap();
    assert_eq!(i.global("started"), Some(I32(b'h' as i32 + 1)));
    assert_eq!(i.memory().unwrap().read(16, 2).unwrap(), b"hi");
    let oob = "(module (memory 1) (data (i32.const 65535) \"ab\"))";
    let module = Module::new(&wat::parse_str(oob).unwrap()).unwrap();
    let err = Instance::new(&module, &Imports::new()).unwrap_err();
    assert!(
        matches!(err, WasmError::Trap(Trap::MemoryOutOfBounds)),
        "{err}"
    );
    let trapping_start = "(module (func $s unreachable) (start $s))";
    let module = Module::new(&wat::parse_str(trapping_start).unwrap()).unwrap();
    let err = Instance::new(&module, &Imports::new()).unwrap_err();
    assert!(matches!(err, WasmError::Trap(Trap::Unreachable)), "{err}");
}

#[test]
fn translated_ir_verifies_and_names_the_vmctx() {
    let wasm = wat::parse_file(format!(
        "{}/tests/wat/control.wat",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let (_, funcs) =
        kestrel_wasm::translate_module(&wasm, kestrel_wasm::BoundsChecks::Explicit).unwrap();
    assert_eq!(funcs.len(), 9);
    for f in &funcs {
        kestrel_ir::verify_function(f).unwrap_or_else(|e| panic!("{}: {e}\n{f}", f.name));
        assert!(f.stack_limit.is_some());
        assert!(f.signature.params[0].purpose == kestrel_ir::ArgumentPurpose::VMContext);
    }
}

#[test]
fn references_tables_and_bulk_memory() {
    let i = instantiate("refs_bulk.wat", &Imports::new());
    // ref.func / ref.null / ref.is_null, and funcrefs through the host.
    let [Val::FuncRef(f)] = call(&i, "get-ref", &[I32(0)])[..] else {
        panic!("one funcref")
    };
    assert_ne!(f, 0);
    assert_eq!(call(&i, "is-null", &[Val::FuncRef(f)]), [I32(0)]);
    assert_eq!(call(&i, "is-null", &[Val::FuncRef(0)]), [I32(1)]);
    // table.get / set / size / grow / fill, and call_indirect on what they stored.
    assert_eq!(call(&i, "size", &[]), [I32(2)]);
    assert_eq!(call(&i, "call", &[I32(0)]), [I32(10)]);
    assert_eq!(trap(&i, "call", &[I32(1)]), Trap::UninitializedElement);
    call(&i, "set", &[I32(1), Val::FuncRef(f)]);
    assert_eq!(call(&i, "call", &[I32(1)]), [I32(10)]);
    assert_eq!(
        trap(&i, "set", &[I32(2), Val::FuncRef(f)]),
        Trap::TableOutOfBounds
    );
    assert_eq!(call(&i, "grow", &[I32(3)]), [I32(2)]);
    assert_eq!(call(&i, "size", &[]), [I32(5)]);
    assert_eq!(
        call(&i, "call", &[I32(4)]),
        [I32(20)],
        "grown entries hold the init"
    );
    assert_eq!(call(&i, "grow", &[I32(100)]), [I32(-1)], "past the maximum");
    assert_eq!(trap(&i, "fill", &[I32(4), I32(2)]), Trap::TableOutOfBounds);
    // Passive element segment: table.init, then elem.drop makes it empty.
    call(&i, "init", &[I32(2), I32(0), I32(1)]);
    assert_eq!(call(&i, "call", &[I32(2)]), [I32(20)]);
    call(&i, "drop-elem", &[]);
    assert_eq!(
        trap(&i, "init", &[I32(2), I32(0), I32(1)]),
        Trap::TableOutOfBounds
    );
    call(&i, "init", &[I32(2), I32(0), I32(0)]);
    // externref round trip through a table of externrefs.
    call(&i, "put-extern", &[I32(0), Val::ExternRef(Some(77))]);
    assert_eq!(
        call(&i, "get-extern", &[I32(0)]),
        [Val::ExternRef(Some(77))]
    );
    assert_eq!(call(&i, "get-extern", &[I32(1)]), [Val::ExternRef(None)]);
    // Bulk memory: fill, overlapping copy, init from a passive segment, data.drop.
    call(&i, "mem-fill", &[I32(10), I32(0xab), I32(4)]);
    assert_eq!(
        i.memory().unwrap().read(9, 6).unwrap(),
        [0, 0xab, 0xab, 0xab, 0xab, 0]
    );
    call(&i, "mem-copy", &[I32(11), I32(10), I32(4)]);
    assert_eq!(
        i.memory().unwrap().read(10, 6).unwrap(),
        [0xab, 0xab, 0xab, 0xab, 0xab, 0]
    );
    assert_eq!(
        trap(&i, "mem-copy", &[I32(65535), I32(0), I32(2)]),
        Trap::MemoryOutOfBounds
    );
    call(&i, "mem-init", &[I32(100), I32(1), I32(3)]);
    assert_eq!(i.memory().unwrap().read(100, 3).unwrap(), b"ell");
    call(&i, "drop-data", &[]);
    assert_eq!(
        trap(&i, "mem-init", &[I32(100), I32(0), I32(1)]),
        Trap::MemoryOutOfBounds
    );
}

#[test]
fn multiple_memories_and_extended_constants() {
    let i = instantiate("multi_memory.wat", &Imports::new());
    assert_eq!(call(&i, "load", &[I32(0)]), [I32(0x0403_0201)]);
    assert_eq!(call(&i, "load1", &[I32(0)]), [I32(0)]);
    // Memory 1 is 2 pages, memory 0 one: bounds are per memory.
    assert_eq!(call(&i, "load1", &[I32(70_000)]), [I32(0)]);
    assert_eq!(trap(&i, "load", &[I32(70_000)]), Trap::MemoryOutOfBounds);
    call(&i, "copy-0-to-1", &[I32(500), I32(0), I32(4)]);
    assert_eq!(call(&i, "load1", &[I32(500)]), [I32(0x0403_0201)]);
    assert_eq!(call(&i, "grow1", &[I32(1)]), [I32(2)]);
    assert_eq!(call(&i, "size1", &[]), [I32(3)]);
    assert_eq!(call(&i, "size0", &[]), [I32(1)]);
    // global $offset = 8 * 4 + 2 (extended constant), used by a data segment too.
    assert_eq!(i.global("offset"), Some(I32(34)));
    assert_eq!(call(&i, "load1", &[I32(34)]), [I32(0x6968)]);
}

#[test]
fn an_exported_table_outlives_its_instance() {
    let exporter = r#"(module
        (table (export "t") 2 funcref)
        (elem (i32.const 0) $seven)
        (func $seven (result i32) (i32.const 7)))"#;
    let user = r#"(module
        (import "a" "t" (table 2 funcref))
        (func (export "call0") (result i32) (call_indirect (result i32) (i32.const 0))))"#;
    let mut imports = Imports::new();
    {
        let a = Module::new(&wat::parse_str(exporter).unwrap()).unwrap();
        let a = Instance::new(&a, &Imports::new()).unwrap();
        imports.define_instance("a", &a);
        // `a` (the handle) is dropped here; the table handle in `imports` keeps it alive.
    }
    let b = Module::new(&wat::parse_str(user).unwrap()).unwrap();
    let b = Instance::new(&b, &imports).unwrap();
    drop(imports);
    assert_eq!(call(&b, "call0", &[]), [I32(7)]);
}

#[test]
fn host_functions_can_call_back_into_wasm() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let text = r#"(module
        (import "host" "twice-inner" (func $cb (param i32) (result i32)))
        (func (export "outer") (param i32) (result i32) (i32.add (call $cb (local.get 0)) (i32.const 1)))
        (func (export "inner") (param i32) (result i32)
            (if (i32.eqz (local.get 0)) (then unreachable))
            (i32.mul (local.get 0) (i32.const 10))))"#;
    let slot: Rc<RefCell<Option<Instance>>> = Rc::new(RefCell::new(None));
    let seen = slot.clone();
    let ty = FuncType::new([ValType::I32], [ValType::I32]);
    let cb = Func::wrap(ty, move |args| {
        let instance = seen.borrow().clone().expect("instance set before calls");
        let once = instance.invoke("inner", args).map_err(|e| match e {
            InvokeError::Trap { trap, .. } => trap,
            other => Trap::Host(other.to_string()),
        })?;
        let twice = instance
            .invoke("inner", &once)
            .map_err(|e| Trap::Host(e.to_string()))?;
        Ok(twice)
    })
    .unwrap();
    let mut imports = Imports::new();
    imports.define("host", "twice-inner", Extern::Func(cb));
    let module = Module::new(&wat::parse_str(text).unwrap()).unwrap();
    let i = Instance::new(&module, &imports).unwrap();
    *slot.borrow_mut() = Some(i.clone());
    assert_eq!(call(&i, "outer", &[I32(3)]), [I32(301)]);
    // A trap in the nested call comes back through the host function as its trap.
    assert_eq!(trap(&i, "outer", &[I32(0)]), Trap::Unreachable);
    assert_eq!(call(&i, "outer", &[I32(1)]), [I32(101)]);
    // Break the instance -> host function -> instance cycle.
    slot.borrow_mut().take();
}

#[test]
fn comparisons_feed_branches_directly() {
    let text = r#"(module (func (export "f") (param i32 i32) (result i32)
        (if (result i32) (i32.lt_s (local.get 0) (local.get 1))
            (then (i32.const 1)) (else (i32.const 2)))))"#;
    let (_, funcs) = kestrel_wasm::translate_module(
        &wat::parse_str(text).unwrap(),
        kestrel_wasm::BoundsChecks::Guard,
    )
    .unwrap();
    let f = &funcs[0];
    let mut brifs = 0;
    for &block in f.layout.blocks() {
        for inst in f.layout.block_insts(block) {
            if let kestrel_ir::InstructionData::Brif { arg, .. } = *f.dfg.inst(inst) {
                brifs += 1;
                assert_eq!(f.dfg.value_type(arg), kestrel_ir::Type::I8, "{f}");
            }
        }
    }
    assert_eq!(brifs, 1, "{f}");
}
