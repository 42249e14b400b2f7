//! The embedder's path: build IR with `FunctionBuilder` (or parse CLIF), compile it with the
//! host's backend through `JitModule::define_ir`, and call it; traps come back as errors.

use kestrel_codegen::settings::Flags;
use kestrel_ir::builder::FunctionBuilder;
use kestrel_ir::{AbiParam, CallConv, FunctionName, Signature, TrapCode, Type};
use kestrel_jit::{CallError, JitModule, Value};

/// `sum_to(n)` = n + (n-1) + … + 1, with two variables across a loop.
fn sum_to() -> kestrel_ir::Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(Type::I64));
    sig.returns.push(AbiParam::new(Type::I64));
    let mut b = FunctionBuilder::new(FunctionName::Named("sum_to".into()), sig);
    let (entry, head, body, exit) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    let (n, acc) = (b.declare_var(Type::I64), b.declare_var(Type::I64));
    b.switch_to_block(entry).unwrap();
    let arg = b.append_block_params_for_function_params(entry).unwrap()[0];
    let zero = b.ins().iconst(Type::I64, 0).unwrap();
    b.def_var(n, arg).unwrap();
    b.def_var(acc, zero).unwrap();
    b.ins().jump(head, &[]).unwrap();
    b.switch_to_block(head).unwrap();
    let nv = b.use_var(n).unwrap();
    b.ins().brif(nv, body, &[], exit, &[]).unwrap();
    b.switch_to_block(body).unwrap();
    let (nv, av) = (b.use_var(n).unwrap(), b.use_var(acc).unwrap());
    let sum = b.ins().iadd(av, nv).unwrap();
    let one = b.ins().iconst(Type::I64, 1).unwrap();
    let next = b.ins().isub(nv, one).unwrap();
    b.def_var(acc, sum).unwrap();
    b.def_var(n, next).unwrap();
    b.ins().jump(head, &[]).unwrap();
    b.switch_to_block(exit).unwrap();
    let result = b.use_var(acc).unwrap();
    b.ins().return_(&[result]).unwrap();
    b.seal_all_blocks().unwrap();
    b.finalize().unwrap()
}

#[test]
fn builder_function_runs_natively() {
    let mut module = JitModule::new();
    let id = module.define_ir(&sum_to(), &Flags::default()).unwrap();
    module.finalize_definitions().unwrap();
    for (n, want) in [(0, 0), (1, 1), (100, 5050), (100_000, 5_000_050_000)] {
        let out = unsafe { module.call(id, &[Value::I64(n)]) }.unwrap();
        assert_eq!(out, [Value::I64(want)]);
    }
}

#[test]
fn builder_function_runs_at_opt_level_speed() {
    let flags = Flags {
        opt_level: kestrel_jit::OptLevel::Speed,
        check_regalloc: true,
        ..Flags::default()
    };
    let mut module = JitModule::new();
    let id = module.define_ir(&sum_to(), &flags).unwrap();
    module.finalize_definitions().unwrap();
    for (n, want) in [(0, 0), (1, 1), (100, 5050), (100_000, 5_000_050_000)] {
        let out = unsafe { module.call(id, &[Value::I64(n)]) }.unwrap();
        assert_eq!(out, [Value::I64(want)]);
    }
}

#[test]
fn parsed_functions_call_each_other_and_trap_in_process() {
    let text = "function %div(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = udiv v0, v1
    return v2
}
function %twice_div(i32, i32) -> i32 {
    fn0 = %div(i32, i32) -> i32
block0(v0: i32, v1: i32):
    v2 = call fn0(v0, v1)
    v3 = iadd v2, v2
    return v3
}
";
    let funcs = kestrel_ir::parse_functions(text, "div.clif").unwrap();
    let mut module = JitModule::new();
    for f in &funcs {
        module
            .declare_function(
                &kestrel_jit::ir_name(&f.name),
                kestrel_jit::Linkage::Local,
                &f.signature,
            )
            .unwrap();
    }
    let ids: Vec<_> = funcs
        .iter()
        .map(|f| module.define_ir(f, &Flags::default()).unwrap())
        .collect();
    module.finalize_definitions().unwrap();
    let out = unsafe { module.call(ids[1], &[Value::I32(21), Value::I32(2)]) }.unwrap();
    assert_eq!(out, [Value::I32(20)]);
    match unsafe { module.call(ids[1], &[Value::I32(1), Value::I32(0)]) } {
        Err(CallError::Trap(t)) => {
            assert_eq!(t.code, TrapCode::INTEGER_DIVISION_BY_ZERO);
            // The trap names the faulting instruction: `%div`'s `udiv`, on line 3 of the
            // text, not the call in `%twice_div`.
            assert_eq!((t.func, t.srcloc), (ids[0], Some(3)));
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn traps_carry_the_builders_source_location() {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(Type::I64));
    sig.returns.push(AbiParam::new(Type::I64));
    let mut b = FunctionBuilder::new(FunctionName::Named("checked".into()), sig);
    let entry = b.create_block();
    b.switch_to_block(entry).unwrap();
    b.seal_block(entry).unwrap();
    let x = b.append_block_params_for_function_params(entry).unwrap()[0];
    b.set_srcloc(Some(0x41));
    let one = b.ins().iconst(Type::I64, 1).unwrap();
    let y = b.ins().iadd(x, one).unwrap();
    b.set_srcloc(Some(0x1234));
    b.ins().trapz(x, TrapCode::user(9).unwrap()).unwrap();
    b.set_srcloc(None);
    b.ins().return_(&[y]).unwrap();
    let f = b.finalize().unwrap();
    for level in ["none", "speed"] {
        let flags = Flags {
            opt_level: kestrel_codegen::settings::OptLevel::from_name(level).unwrap(),
            ..Flags::default()
        };
        let mut module = JitModule::new();
        let id = module.define_ir(&f, &flags).unwrap();
        module.finalize_definitions().unwrap();
        let out = unsafe { module.call(id, &[Value::I64(5)]) }.unwrap();
        assert_eq!(out, [Value::I64(6)]);
        match unsafe { module.call(id, &[Value::I64(0)]) } {
            Err(CallError::Trap(t)) => assert_eq!(t.srcloc, Some(0x1234), "{level}"),
            other => panic!("{level}: expected a trap, got {other:?}"),
        }
    }
}

#[test]
fn compile_errors_name_the_function() {
    let text = "function %w(i64) -> i64 probestack {\nblock0(v0: i64):\n    return v0\n}\n";
    let funcs = kestrel_ir::parse_functions(text, "w.clif").unwrap();
    let mut module = JitModule::new();
    let err = module.define_ir(&funcs[0], &Flags::default()).unwrap_err();
    assert!(
        err.to_string().contains("`w`") && err.to_string().contains("probestack"),
        "{err}"
    );
}

#[test]
fn runtime_library_calls_link_without_registration() {
    // i128 division and fma are library calls in the backend; a plain module provides them.
    let text = "function %q(i128, i128) -> i128 {
block0(v0: i128, v1: i128):
    v2 = sdiv v0, v1
    return v2
}
function %f(f64, f64, f64) -> f64 {
block0(v0: f64, v1: f64, v2: f64):
    v3 = fma v0, v1, v2
    return v3
}
";
    let funcs = kestrel_ir::parse_functions(text, "lib.clif").unwrap();
    let mut module = JitModule::new();
    let q = module.define_ir(&funcs[0], &Flags::default()).unwrap();
    let f = module.define_ir(&funcs[1], &Flags::default()).unwrap();
    module.finalize_definitions().unwrap();
    let big = -(1i128 << 100) - 7;
    let out = unsafe { module.call(q, &[Value::I128(big), Value::I128(3)]) }.unwrap();
    assert_eq!(out, [Value::I128(big / 3)]);
    let args = [Value::F64(0.1), Value::F64(10.0), Value::F64(-1.0)];
    let out = unsafe { module.call(f, &args) }.unwrap();
    assert_eq!(out, [Value::F64(0.1f64.mul_add(10.0, -1.0))]);
}

#[test]
fn a_module_for_another_isa_is_refused_before_any_code_is_placed() {
    let host = kestrel_codegen::isa::host().unwrap().name();
    let other = kestrel_codegen::isa::names()
        .find(|&n| n != host)
        .expect("two ISAs");
    let mut builder = kestrel_jit::JitBuilder::new();
    builder.isa(kestrel_codegen::isa::lookup(other).unwrap().finish());
    let mut module = builder.build();
    let err = module.define_ir(&sum_to(), &Flags::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, kestrel_jit::JitError::ForeignIsa { .. }),
        "{text}"
    );
    assert!(text.contains(other) && text.contains(host), "{text}");
}
