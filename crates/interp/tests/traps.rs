//! Trapping semantics, fuel and recursion limits: the outcomes a `; run:` line cannot state.

use kestrel_interp::{DataValue, InterpError, Interpreter};
use kestrel_ir::TrapCode;

fn run(text: &str, name: &str, args: &[DataValue]) -> Result<Vec<DataValue>, InterpError> {
    let funcs = kestrel_ir::parse_functions(text, "test.clif").expect("parses");
    for f in &funcs {
        kestrel_ir::verify_function(f).expect("verifies");
    }
    Interpreter::new(&funcs)
        .with_fuel(Some(1_000_000))
        .call(name, args)
}

fn binary(op: &str, ty: &str) -> String {
    format!("function %f({ty}, {ty}) -> {ty} {{\nblock0(v0: {ty}, v1: {ty}):\n    v2 = {op} v0, v1\n    return v2\n}}\n")
}

fn trap_code(r: Result<Vec<DataValue>, InterpError>) -> Option<TrapCode> {
    r.err().and_then(|e| e.trap_code())
}

use DataValue::{I32, I64, I8};

#[test]
fn division_traps() {
    for op in ["udiv", "sdiv", "urem", "srem"] {
        let r = run(&binary(op, "i32"), "f", &[I32(7), I32(0)]);
        assert_eq!(
            trap_code(r),
            Some(TrapCode::INTEGER_DIVISION_BY_ZERO),
            "{op} by zero"
        );
    }
    let r = run(&binary("sdiv", "i8"), "f", &[I8(i8::MIN), I8(-1)]);
    assert_eq!(trap_code(r), Some(TrapCode::INTEGER_OVERFLOW));
    // srem MIN, -1 is defined: 0.
    assert_eq!(
        run(&binary("srem", "i8"), "f", &[I8(i8::MIN), I8(-1)]),
        Ok(vec![I8(0)])
    );
}

#[test]
fn conversion_traps() {
    let text = "function %f(f64) -> i32 {\nblock0(v0: f64):\n    v1 = fcvt_to_sint.i32 v0\n    return v1\n}\n";
    let nan = DataValue::F64(f64::NAN.to_bits());
    assert_eq!(
        trap_code(run(text, "f", &[nan])),
        Some(TrapCode::BAD_CONVERSION_TO_INTEGER)
    );
    let big = DataValue::F64(3e9f64.to_bits());
    assert_eq!(
        trap_code(run(text, "f", &[big])),
        Some(TrapCode::INTEGER_OVERFLOW)
    );
    let edge = DataValue::F64((-2147483648.9f64).to_bits());
    assert_eq!(
        run(text, "f", &[edge]),
        Ok(vec![I32(i32::MIN)]),
        "truncation first"
    );
}

#[test]
fn explicit_traps_report_their_code_and_instruction() {
    let text = "function %f(i32) -> i32 {\nblock0(v0: i32):\n    trapz v0, user7\n    v1 = uadd_overflow_trap v0, v0, user9\n    trapnz v1, int_ovf\n    return v1\n}\n";
    match run(text, "f", &[I32(0)]) {
        Err(InterpError::Trap {
            code,
            inst,
            function,
        }) => {
            assert_eq!(code, TrapCode::user(7).unwrap());
            assert_eq!(inst.as_u32(), 0);
            assert_eq!(function, "f");
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    assert_eq!(
        trap_code(run(text, "f", &[I32(i32::MIN)])),
        TrapCode::user(9)
    );
    assert_eq!(
        trap_code(run(text, "f", &[I32(1)])),
        Some(TrapCode::INTEGER_OVERFLOW)
    );
    let text = "function %g() {\nblock0:\n    trap user1\n}\n";
    assert_eq!(trap_code(run(text, "g", &[])), TrapCode::user(1));
}

#[test]
fn out_of_bounds_memory_traps_with_the_access_code() {
    let text = "function %f(i64) -> i32 {\n    ss0 = explicit_slot 4\nblock0(v0: i64):\n    v1 = stack_addr.i64 ss0\n    v2 = iadd v1, v0\n    v3 = load.i32 v2\n    v4 = load.i32 int_divz v2+4\n    return v3\n}\n";
    assert_eq!(
        run(text, "f", &[I64(0)]).map(|_| ()),
        Err(InterpError::Trap {
            code: TrapCode::INTEGER_DIVISION_BY_ZERO,
            function: "f".into(),
            inst: kestrel_ir::Inst::from_u32(3),
        })
        .map(|_: Vec<DataValue>| ())
    );
    assert_eq!(
        trap_code(run(text, "f", &[I64(-1_000_000)])),
        Some(TrapCode::HEAP_OUT_OF_BOUNDS)
    );
}

#[test]
fn runaway_loops_run_out_of_fuel() {
    let text = "function %spin() {\nblock0:\n    jump block1\nblock1:\n    jump block1\n}\n";
    assert_eq!(
        run(text, "spin", &[]),
        Err(InterpError::OutOfFuel { limit: 1_000_000 })
    );
}

#[test]
fn unbounded_recursion_traps_with_stack_overflow() {
    let text = "function %r(i64) -> i64 {\n    fn0 = %r(i64) -> i64\nblock0(v0: i64):\n    v1 = call fn0(v0)\n    return v1\n}\n";
    // Interpreted recursion uses the host stack; give it room.
    let outcome = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || trap_code(run(text, "r", &[I64(1)])))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(outcome, Some(TrapCode::STACK_OVERFLOW));
}

#[test]
fn bad_calls_are_errors_not_panics() {
    let text = binary("iadd", "i32");
    assert!(matches!(
        run(&text, "nope", &[]),
        Err(InterpError::UnknownFunction(_))
    ));
    assert!(matches!(
        run(&text, "f", &[I32(1)]),
        Err(InterpError::BadArguments { .. })
    ));
    assert!(matches!(
        run(&text, "%f", &[I64(1), I32(1)]),
        Err(InterpError::BadArguments { .. })
    ));
}

#[test]
fn block_parameters_are_assigned_simultaneously() {
    // Swap two values across a back edge three times: (1, 2) -> (2, 1) -> (1, 2) -> (2, 1).
    let text = "function %swap(i32, i32) -> i32, i32 {\nblock0(v0: i32, v1: i32):\n    v2 = iconst.i32 3\n    jump block1(v0, v1, v2)\nblock1(v3: i32, v4: i32, v5: i32):\n    brif v5, block2, block3\nblock2:\n    v6 = iconst.i32 1\n    v7 = isub v5, v6\n    jump block1(v4, v3, v7)\nblock3:\n    return v3, v4\n}\n";
    assert_eq!(
        run(text, "swap", &[I32(1), I32(2)]),
        Ok(vec![I32(2), I32(1)])
    );
}

/// A tail call ends its frame before the callee's begins: a chain far deeper than
/// `MAX_CALL_DEPTH` finishes, where the same chain of ordinary calls traps.
#[test]
fn tail_calls_do_not_nest_frames() {
    let chain = |call: &str| {
        format!(
            "function %down(i64, i64) -> i64 tail {{
    fn0 = %down(i64, i64) -> i64 tail
block0(v0: i64, v1: i64):
    brif v0, block1, block2
block1:
    v2 = iconst.i64 -1
    v3 = iadd v0, v2
    v4 = iadd v1, v0
    {call}
block2:
    return v1
}}
"
        )
    };
    let n = 10 * i64::from(kestrel_interp::MAX_CALL_DEPTH);
    let tail = chain("return_call fn0(v3, v4)");
    assert_eq!(
        run(&tail, "down", &[I64(n), I64(0)]).unwrap(),
        [I64(n * (n + 1) / 2)]
    );
    let nested = chain("v5 = call fn0(v3, v4)\n    return v5");
    assert_eq!(
        trap_code(run(&nested, "down", &[I64(n), I64(0)])),
        Some(TrapCode::STACK_OVERFLOW)
    );
}
