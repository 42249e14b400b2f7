//! Host calls of functions whose results do not fit in rax, rdx, xmm0 and xmm1: the JIT
//! allocates the return area, passes it in rdi and reads the results back. Every function is
//! compiled from CLIF with `define_ir` and checked against the interpreter.

use kestrel_codegen::settings::Flags;
use kestrel_interp::{DataValue, Interpreter};
use kestrel_ir::Function;
use kestrel_jit::{JitModule, Value};

const CLIF: &str = "
function %eight_i64(i64) -> i64, i64, i64, i64, i64, i64, i64, i64 {
block0(v0: i64):
    v1 = iconst.i64 3
    v2 = imul v0, v1
    v3 = iadd v2, v1
    v4 = isub v0, v3
    v5 = bxor v4, v2
    v6 = iconst.i64 -7
    v7 = imul v5, v6
    v8 = iadd v7, v0
    return v0, v2, v3, v4, v5, v6, v7, v8
}

function %mixed(i64, f64) -> i64, f64, i64, f64, i64, f64, i64, f64, i64, f64, i64, i64, i64 {
block0(v0: i64, v1: f64):
    v2 = fadd v1, v1
    v3 = fmul v2, v1
    v4 = fsub v3, v2
    v5 = fneg v4
    v6 = iconst.i64 11
    v7 = iadd v0, v6
    v8 = imul v7, v0
    v9 = isub v8, v6
    v10 = bxor v9, v0
    v12 = iconst.i64 -1
    v11 = ishl v0, v12
    return v0, v1, v7, v2, v8, v3, v9, v4, v10, v5, v11, v12, v6
}

function %wide(i128, i64, f32) -> i8, i128, i128, i8, i128, i16, i32, f32, f32, f32, i8 {
block0(v0: i128, v1: i64, v2: f32):
    v3 = sextend.i128 v1
    v4 = iadd v0, v3
    v5 = bxor v0, v3
    v6 = uextend.i128 v1
    v7 = isub v6, v0
    v8 = ireduce.i8 v1
    v9 = iconst.i8 -128
    v10 = ireduce.i16 v1
    v11 = ireduce.i32 v1
    v12 = fadd v2, v2
    v13 = fmul v12, v2
    v14 = fneg v13
    v15 = iadd v8, v9
    return v8, v4, v5, v9, v7, v10, v11, v12, v13, v14, v15
}

function %split_i128(i64, i128) -> i64, i128, i128 {
block0(v0: i64, v1: i128):
    v2 = sextend.i128 v0
    v3 = iadd v1, v2
    return v0, v1, v3
}

function %stack_and_area(i64, i64, i64, i64, i64, i64, i64, i128, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, i8, i128) -> i64, i64, i64, f64, f64, f64, i128, i8 {
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i128, v8: f64, v9: f64, v10: f64, v11: f64, v12: f64, v13: f64, v14: f64, v15: f64, v16: f64, v17: f64, v18: i8, v19: i128):
    v20 = iadd v0, v1
    v21 = iadd v20, v2
    v22 = iadd v21, v3
    v23 = iadd v22, v4
    v24 = iadd v23, v5
    v25 = imul v6, v0
    v26 = fadd v8, v9
    v27 = fadd v16, v17
    v28 = fsub v15, v10
    v29 = isub v7, v19
    v30 = sextend.i64 v18
    v31 = isub v24, v30
    return v24, v25, v31, v26, v27, v28, v29, v18
}

function %tail5(i64) -> i64, i64, i64, i64, i64 tail {
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    v3 = iadd v2, v1
    v4 = iadd v3, v1
    v5 = iadd v4, v1
    return v0, v2, v3, v4, v5
}

function %fast4(f64) -> f64, f64, f64, i32 fast {
block0(v0: f64):
    v1 = fadd v0, v0
    v2 = fmul v1, v0
    v3 = iconst.i32 -5
    return v0, v1, v2, v3
}

function %cold3(i32) -> i32, i32, i32 cold {
block0(v0: i32):
    v1 = iadd v0, v0
    v2 = imul v1, v0
    return v0, v1, v2
}

function %win(i64, f64, i32, i64, i64, f64) -> f64 windows_fastcall {
block0(v0: i64, v1: f64, v2: i32, v3: i64, v4: i64, v5: f64):
    v6 = iadd v0, v3
    v7 = isub v6, v4
    v8 = sextend.i64 v2
    v9 = iadd v7, v8
    v10 = fcvt_from_sint.f64 v9
    v11 = fadd v10, v1
    v12 = fmul v11, v5
    return v12
}

function %caller(i64, f64) -> i64, f64, i64 {
    fn0 = %mixed(i64, f64) -> i64, f64, i64, f64, i64, f64, i64, f64, i64, f64, i64, i64, i64
block0(v0: i64, v1: f64):
    v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14 = call fn0(v0, v1)
    v15 = iadd v2, v14
    v16 = fadd v11, v3
    return v15, v16, v12
}
";

fn to_data(v: Value) -> DataValue {
    match v {
        Value::I8(x) => DataValue::I8(x),
        Value::I16(x) => DataValue::I16(x),
        Value::I32(x) => DataValue::I32(x),
        Value::I64(x) => DataValue::I64(x),
        Value::I128(x) => DataValue::I128(x),
        Value::F32(x) => DataValue::F32(x.to_bits()),
        Value::F64(x) => DataValue::F64(x.to_bits()),
    }
}

struct Compiled {
    funcs: Vec<Function>,
    module: JitModule,
}

fn compile() -> Compiled {
    let funcs = kestrel_ir::parse_functions(CLIF, "ret_area.clif").unwrap();
    let mut module = JitModule::new();
    for f in &funcs {
        module.define_ir(f, &Flags::default()).unwrap();
    }
    module.finalize_definitions().unwrap();
    Compiled { funcs, module }
}

impl Compiled {
    /// Call `name` natively and in the interpreter; the results must agree bit for bit.
    fn check(&self, name: &str, args: &[Value]) -> Vec<Value> {
        let id = self.module.get_name(name).unwrap();
        // SAFETY: the code was compiled by the backend from this function's own IR, and the
        // arguments match its signature (the module checks types and count).
        let native = unsafe { self.module.call(id, args) }.unwrap();
        let data: Vec<DataValue> = args.iter().map(|&a| to_data(a)).collect();
        let interp = Interpreter::new(&self.funcs).call(name, &data).unwrap();
        let got: Vec<DataValue> = native.iter().map(|&v| to_data(v)).collect();
        assert_eq!(got, interp, "%{name}({args:?})");
        let sig = self.module.signature(id).unwrap();
        assert_eq!(native.len(), sig.returns.len());
        for (v, r) in native.iter().zip(&sig.returns) {
            assert_eq!(v.ty(), r.value_type);
        }
        native
    }
}

#[test]
fn eight_i64_results() {
    let c = compile();
    for x in [0, 1, -1, 42, i64::MAX, i64::MIN, 0x0123_4567_89ab_cdef] {
        let out = c.check("eight_i64", &[Value::I64(x)]);
        assert_eq!(out[0], Value::I64(x));
        assert_eq!(out[5], Value::I64(-7));
    }
}

#[test]
fn eight_i64_and_five_f64_interleaved() {
    let c = compile();
    for (x, y) in [
        (0, 0.0),
        (3, 1.5),
        (-9, -2.25),
        (1 << 40, 1e300),
        (7, f64::NAN),
    ] {
        let out = c.check("mixed", &[Value::I64(x), Value::F64(y)]);
        assert_eq!(out[11], Value::I64(-1));
        assert_eq!(out[12], Value::I64(11));
    }
}

#[test]
fn i128_i8_i16_i32_and_f32_results() {
    let c = compile();
    for (a, b, f) in [
        (0i128, 0i64, 0.0f32),
        (-1, 1, 1.25),
        (i128::MAX, -2, -3.5),
        (0x1234_5678_9abc_def0_0fed_cba9_8765_4321, 0x7f_ff81, 1e30),
        (i128::MIN, i64::MIN, f32::MIN_POSITIVE),
    ] {
        let out = c.check("wide", &[Value::I128(a), Value::I64(b), Value::F32(f)]);
        assert_eq!(out[0], Value::I8(b as i8));
        assert_eq!(out[3], Value::I8(-128));
        assert_eq!(out[5], Value::I16(b as i16));
        assert_eq!(out[6], Value::I32(b as i32));
    }
}

#[test]
fn i128_split_between_rdx_and_the_area() {
    let c = compile();
    for (x, y) in [(1i64, -1i128), (-5, i128::MAX), (i64::MAX, 1 << 100)] {
        let out = c.check("split_i128", &[Value::I64(x), Value::I128(y)]);
        assert_eq!(out[1], Value::I128(y));
    }
}

#[test]
fn stack_arguments_and_a_return_area() {
    let c = compile();
    let mut args: Vec<Value> = (1..=7).map(|i| Value::I64(i * 1000 + i)).collect();
    args.push(Value::I128(-(1 << 90) + 77));
    args.extend((0..10).map(|i| Value::F64(i as f64 * 0.5 - 1.0)));
    args.push(Value::I8(-3));
    args.push(Value::I128(0x5555_0000_0000_0000_0000_0000_0000_aaaa));
    let out = c.check("stack_and_area", &args);
    assert_eq!(out[7], Value::I8(-3));
    args[18] = Value::I8(i8::MIN);
    args[7] = Value::I128(i128::MAX);
    c.check("stack_and_area", &args);
}

#[test]
fn tail_fast_and_cold_use_the_return_area_too() {
    let c = compile();
    let out = c.check("tail5", &[Value::I64(10)]);
    assert_eq!(out, (10..15).map(Value::I64).collect::<Vec<_>>());
    c.check("fast4", &[Value::F64(-0.75)]);
    c.check("cold3", &[Value::I32(-300)]);
}

#[test]
fn windows_fastcall_with_stack_arguments() {
    let c = compile();
    let out = c.check(
        "win",
        &[
            Value::I64(5),
            Value::F64(0.5),
            Value::I32(-2),
            Value::I64(100),
            Value::I64(40),
            Value::F64(3.0),
        ],
    );
    assert_eq!(out, [Value::F64(190.5)]);
}

#[test]
fn jit_caller_and_host_agree_on_the_area() {
    let c = compile();
    for (x, y) in [(2, 0.5), (-100, 8.0)] {
        c.check("caller", &[Value::I64(x), Value::F64(y)]);
    }
}
