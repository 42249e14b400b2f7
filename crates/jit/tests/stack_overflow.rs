//! Stack overflow in JIT code is a trap: runaway recursion and a frame larger than the
//! stack come back from `JitModule::call` as `stk_ovf`, and the thread keeps working.

use kestrel_ir::TrapCode;
use kestrel_jit::{CallError, JitModule, Module, Value};

/// `%rec(n)` calls itself with `n + 1` forever (the add after the call keeps it a real
/// call, not a tail call).
const RECURSE: &str = "function %rec(i64) -> i64 {
    fn0 = colocated %rec(i64) -> i64
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iadd v0, v1
    v3 = call fn0(v2)
    v4 = iadd v3, v0
    return v4
}
";

/// `%big(v)` stores `v` at the bottom of a `size`-byte frame and loads it back.
fn big_frame(size: u32) -> String {
    format!(
        "function %big(i64) -> i64 {{
    ss0 = explicit_slot {size}
block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store.i64 v0, v1
    v2 = load.i64 v1
    return v2
}}
"
    )
}

/// A module with the functions of `text`, compiled with the module's default flags.
fn module(text: &str) -> (JitModule, kestrel_jit::FuncId) {
    let funcs = kestrel_ir::parse_functions(text, "t.clif").unwrap();
    let mut module = JitModule::new();
    let mut ids = Vec::new();
    for f in &funcs {
        let name = kestrel_jit::ir_name(&f.name);
        let id = module
            .declare_function(&name, kestrel_jit::Linkage::Local, &f.signature)
            .unwrap();
        ids.push(id);
    }
    for (f, &id) in funcs.iter().zip(&ids) {
        Module::define_function(&mut module, id, f).unwrap();
    }
    module.finalize_definitions().unwrap();
    (module, ids[0])
}

/// Run `f` on a fresh thread with a `stack`-byte stack.
fn on_thread<T: Send + 'static>(stack: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn expect_stack_overflow(result: Result<Vec<Value>, CallError>) -> kestrel_jit::Trap {
    match result {
        Err(CallError::Trap(t)) if t.code == TrapCode::STACK_OVERFLOW => t,
        other => panic!("expected a stk_ovf trap, got {other:?}"),
    }
}

#[test]
fn infinite_recursion_traps_and_the_thread_goes_on() {
    on_thread(1 << 20, || {
        let (module, rec) = module(RECURSE);
        // Three times on the same thread: the stack and the handler are usable after each.
        for _ in 0..3 {
            let trap = expect_stack_overflow(unsafe { module.call(rec, &[Value::I64(0)]) });
            assert_eq!(trap.func, rec);
        }
        // Ordinary host work on the same stack still runs, deep enough to need its pages.
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([n; 64]);
            if n == 0 {
                0
            } else {
                1 + depth(n - 1) + pad[0] - n
            }
        }
        assert_eq!(depth(1000), 1000);
    });
}

#[test]
fn infinite_recursion_traps_on_a_large_stack_too() {
    // 64 MiB of frames before the guard: the same trap, not a dead process.
    on_thread(64 << 20, || {
        let (module, rec) = module(RECURSE);
        expect_stack_overflow(unsafe { module.call(rec, &[Value::I64(0)]) });
    });
}

#[test]
fn a_frame_larger_than_the_stack_traps_with_probes() {
    // A 64 MiB frame on a 4 MiB stack: without probes its store would land far below the
    // guard page; with the JIT's default probes the first probe below the stack traps.
    on_thread(4 << 20, || {
        let (module, big) = module(&big_frame(64 << 20));
        let trap = expect_stack_overflow(unsafe { module.call(big, &[Value::I64(7)]) });
        assert_eq!(trap.func, big);
    });
}

#[test]
fn a_large_frame_that_fits_runs_with_probes() {
    on_thread(64 << 20, || {
        let (module, big) = module(&big_frame(16 << 20));
        let out = unsafe { module.call(big, &[Value::I64(7)]) }.unwrap();
        assert_eq!(out, [Value::I64(7)]);
    });
}
