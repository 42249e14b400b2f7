//! Tail calls in the JIT: a tail-recursive loop of ten million iterations, with stack
//! arguments and with a call in its body, runs in constant stack (a frame per iteration
//! would need hundreds of megabytes, far past the thread's stack); a host call of a `tail`
//! function with stack arguments, which pops them, returns to a consistent host frame.

use kestrel_codegen::settings::Flags;
use kestrel_jit::{JitModule, Value};

const CLIF: &str = "
function %step(i64) -> i64 tail {
block0(v0: i64):
    v1 = iconst.i64 3
    v2 = iadd v0, v1
    return v2
}

function %loop(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
    fn0 = %loop(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
    fn1 = %step(i64) -> i64 tail
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64, v9: i64):
    brif v0, block1, block2
block1:
    v10 = iconst.i64 -1
    v11 = iadd v0, v10
    v12 = call fn1(v9)
    return_call fn0(v11, v2, v3, v4, v5, v6, v7, v8, v9, v12)
block2:
    v13 = iadd v1, v9
    return v13
}

function %regs_only(i64, i64) -> i64 tail {
    fn0 = %regs_only(i64, i64) -> i64 tail
block0(v0: i64, v1: i64):
    brif v0, block1, block2
block1:
    v2 = iconst.i64 -1
    v3 = iadd v0, v2
    v4 = iadd v1, v0
    return_call fn0(v3, v4)
block2:
    return v1
}
";

fn compile() -> JitModule {
    let funcs = kestrel_ir::parse_functions(CLIF, "tail_calls.clif").unwrap();
    let mut module = JitModule::new();
    let flags = Flags {
        check_regalloc: true,
        ..Flags::default()
    };
    for f in &funcs {
        module.define_ir(f, &flags).unwrap();
    }
    module.finalize_definitions().unwrap();
    module
}

/// `%loop(n, a1..a9)`: each iteration shifts a2..a9 down one place and appends `a9 + 3`.
fn expected_loop(n: i64, mut a: Vec<i64>) -> i64 {
    for _ in 0..n {
        let last = a[8] + 3;
        a.remove(0);
        a.push(last);
    }
    a[0] + a[8]
}

#[test]
fn ten_million_tail_calls_with_stack_arguments_run_in_constant_stack() {
    let module = compile();
    let id = module.get_name("loop").unwrap();
    let n = 10_000_000i64;
    let start: Vec<i64> = (1..=9).collect();
    let mut args = vec![Value::I64(n)];
    args.extend(start.iter().map(|&x| Value::I64(x)));
    // SAFETY: compiled from this file's IR; the arguments match the signature.
    let out = unsafe { module.call(id, &args) }.unwrap();
    assert_eq!(out, [Value::I64(expected_loop(n, start))]);
}

#[test]
fn ten_million_register_only_tail_calls_run_in_constant_stack() {
    let module = compile();
    let id = module.get_name("regs_only").unwrap();
    let n = 10_000_000i64;
    // SAFETY: as above.
    let out = unsafe { module.call(id, &[Value::I64(n), Value::I64(0)]) }.unwrap();
    assert_eq!(out, [Value::I64(n * (n + 1) / 2)]);
}
