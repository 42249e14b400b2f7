//! Native traps at registered trap sites come back as `Err(Trap)`; others are not caught.

use std::sync::Arc;

use crate::common::{assemble, define, here, sig, single};
use iced_x86::code_asm::*;
use kestrel_ir::{TrapCode, Type};
use kestrel_jit::{
    CallError, CompiledFunction, JitModule, Reloc, RelocKind, RelocTarget, Trap, TrapSite, Value,
};

/// `f(x) = if x == 0 { ud2 } else { x + 1 }`, with the `ud2` a `user7` trap site.
fn trap_if_zero() -> (CompiledFunction, u32) {
    let asm = assemble(|a| {
        let mut trap = a.create_label();
        a.test(rdi, rdi)?;
        a.je(trap)?;
        a.lea(rax, qword_ptr(rdi + 1))?;
        a.ret()?;
        a.set_label(&mut trap)?;
        a.ud2()?;
        Ok(vec![trap])
    });
    let site = asm.labels[0];
    let f = CompiledFunction {
        traps: vec![TrapSite {
            offset: site,
            code: TrapCode::user(7).unwrap(),
        }],
        ..CompiledFunction::new(asm.code, sig(&[Type::I64], &[Type::I64]))
    };
    (f, site)
}

fn expect_trap(r: Result<Vec<Value>, CallError>) -> Trap {
    match r {
        Err(CallError::Trap(t)) => t,
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn ud2_at_a_trap_site_returns_err_repeatedly() {
    let (f, site) = trap_if_zero();
    let (m, id) = single(f);
    for i in 0..1000 {
        let t = expect_trap(unsafe { m.call(id, &[Value::I64(0)]) });
        assert_eq!(
            t,
            Trap {
                code: TrapCode::user(7).unwrap(),
                offset: site,
                func: id,
                srcloc: None
            }
        );
        // The thread goes on normally between traps.
        let r = unsafe { m.call(id, &[Value::I64(i)]) };
        if i != 0 {
            assert_eq!(r.unwrap(), [Value::I64(i + 1)]);
        }
    }
}

#[test]
fn traps_from_several_threads() {
    let (f, site) = trap_if_zero();
    let (m, id) = single(f);
    let m = Arc::new(m);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                for i in 0..300i64 {
                    let arg = if (i + t) % 3 == 0 { 0 } else { i + 1 };
                    let r = unsafe { m.call(id, &[Value::I64(arg)]) };
                    if arg == 0 {
                        assert_eq!(expect_trap(r).offset, site);
                    } else {
                        assert_eq!(r.unwrap(), [Value::I64(arg + 1)]);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// A thread not made by Rust's runtime has no alternate signal stack; the JIT gives it one.
#[test]
fn traps_on_a_raw_pthread() {
    extern "C" fn body(arg: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: `arg` is the `&JitModule` passed below, alive until the join.
        let m = unsafe { &*(arg as *const (JitModule, kestrel_jit::FuncId)) };
        let r = unsafe { m.0.call(m.1, &[Value::I64(0)]) };
        matches!(r, Err(CallError::Trap(_))) as usize as *mut libc::c_void
    }
    let (f, _) = trap_if_zero();
    let pair = single(f);
    let mut thread: libc::pthread_t = 0;
    let mut ret: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: `pair` outlives the thread, which is joined before returning.
    unsafe {
        let arg = &pair as *const _ as *mut libc::c_void;
        assert_eq!(
            libc::pthread_create(&mut thread, std::ptr::null(), body, arg),
            0
        );
        assert_eq!(libc::pthread_join(thread, &mut ret), 0);
    }
    assert_eq!(ret as usize, 1);
}

#[test]
fn division_by_zero_is_a_trap() {
    // sdiv: mov rax, rdi; cqo; idiv rsi; ret — the idiv is an int_divz trap site.
    let asm = assemble(|a| {
        a.mov(rax, rdi)?;
        a.cqo()?;
        let div = here(a)?;
        a.idiv(rsi)?;
        a.ret()?;
        Ok(vec![div])
    });
    let site = asm.labels[0];
    let f = CompiledFunction {
        traps: vec![TrapSite {
            offset: site,
            code: TrapCode::INTEGER_DIVISION_BY_ZERO,
        }],
        ..CompiledFunction::new(asm.code, sig(&[Type::I64, Type::I64], &[Type::I64]))
    };
    let (m, id) = single(f);
    for _ in 0..100 {
        let t = expect_trap(unsafe { m.call(id, &[Value::I64(7), Value::I64(0)]) });
        assert_eq!(
            (t.code, t.offset),
            (TrapCode::INTEGER_DIVISION_BY_ZERO, site)
        );
        let r = unsafe { m.call(id, &[Value::I64(-7), Value::I64(2)]) }.unwrap();
        assert_eq!(r, [Value::I64(-3)]);
    }
}

#[test]
fn faulting_load_is_a_heap_oob_trap() {
    let asm = assemble(|a| {
        let load = here(a)?;
        a.mov(rax, qword_ptr(rdi))?;
        a.ret()?;
        Ok(vec![load])
    });
    let f = CompiledFunction {
        traps: vec![TrapSite {
            offset: asm.labels[0],
            code: TrapCode::HEAP_OUT_OF_BOUNDS,
        }],
        ..CompiledFunction::new(asm.code, sig(&[Type::I64], &[Type::I64]))
    };
    let (m, id) = single(f);
    let t = expect_trap(unsafe { m.call(id, &[Value::I64(8)]) });
    assert_eq!(t.code, TrapCode::HEAP_OUT_OF_BOUNDS);
    let x = 1234i64;
    let r = unsafe { m.call(id, &[Value::I64(&x as *const i64 as i64)]) }.unwrap();
    assert_eq!(r, [Value::I64(1234)]);
}

/// A trap in a callee unwinds through the caller's frame to the host; the trap names the
/// callee and its offset.
#[test]
fn trap_in_a_callee_names_the_callee() {
    let (callee, site) = trap_if_zero();
    let asm = assemble(|a| {
        a.push(rbx)?;
        a.mov(rbx, 0x5555_i64)?; // a callee-saved register the trap must not leak
        let call = here(a)?;
        a.db(&[0xe8, 0, 0, 0, 0])?;
        a.pop(rbx)?;
        a.ret()?;
        Ok(vec![call])
    });
    let caller = CompiledFunction {
        relocs: vec![Reloc {
            offset: asm.labels[0] + 1,
            kind: RelocKind::CallPcRel4,
            target: RelocTarget::Function("callee".into()),
            addend: -4,
        }],
        ..CompiledFunction::new(asm.code, sig(&[Type::I64], &[Type::I64]))
    };
    let mut m = JitModule::new();
    let caller = define(&mut m, "caller", caller);
    let callee = define(&mut m, "callee", callee);
    m.finalize_definitions().unwrap();
    let t = expect_trap(unsafe { m.call(caller, &[Value::I64(0)]) });
    assert_eq!((t.func, t.offset), (callee, site));
    assert_eq!(
        unsafe { m.call(caller, &[Value::I64(1)]) }.unwrap(),
        [Value::I64(2)]
    );
}

/// A fault that is not at a registered trap site is reported on stderr (signal, function,
/// offset) and left to the previous handler (here the default action, which kills the
/// process with SIGILL). Checked in a child process.
#[test]
fn unregistered_fault_is_not_caught() {
    const CHILD: &str = "KESTREL_JIT_UNREGISTERED_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let (mut f, _) = trap_if_zero();
        f.traps.clear();
        let (m, id) = single(f);
        // Runs the handler (installed by the first call) and must die of SIGILL.
        let _ = unsafe { m.call(id, &[Value::I64(1)]) };
        let _ = unsafe { m.call(id, &[Value::I64(0)]) };
        std::process::exit(0);
    }
    use std::os::unix::process::ExitStatusExt;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "traps::unregistered_fault_is_not_caught",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGILL), "{:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kestrel-jit: fatal SIGILL"))
        .unwrap_or_else(|| panic!("no fatal-fault line in: {stderr}"));
    assert!(
        line.contains(" of JIT function `") && line.contains("no trap is recorded there"),
        "{line}"
    );
}

/// Dropping a module unregisters its trap sites while other modules keep working.
#[test]
fn modules_come_and_go() {
    for _ in 0..50 {
        let (f, _) = trap_if_zero();
        let (m, id) = single(f);
        expect_trap(unsafe { m.call(id, &[Value::I64(0)]) });
    }
}

/// A trap restores every callee-saved register the JIT code clobbered before faulting.
#[test]
fn trap_restores_callee_saved_registers() {
    let asm = assemble(|a| {
        for r in [rbx, rbp, r12, r13, r14, r15] {
            a.mov(r, -1i64)?;
        }
        let trap = here(a)?;
        a.ud2()?;
        Ok(vec![trap])
    });
    let f = CompiledFunction {
        traps: vec![TrapSite {
            offset: asm.labels[0],
            code: TrapCode::user(1).unwrap(),
        }],
        ..CompiledFunction::new(asm.code, sig(&[], &[]))
    };
    let (m, id) = single(f);
    let mut live = [0u64; 8];
    for (i, slot) in live.iter_mut().enumerate() {
        *slot = std::hint::black_box(i as u64 * 0x1111);
        expect_trap(unsafe { m.call(id, &[]) });
    }
    let expected: Vec<u64> = (0..8).map(|i| i * 0x1111).collect();
    assert_eq!(live.to_vec(), expected);
}

std::thread_local! {
    static INNER: std::cell::Cell<Option<(*const JitModule, kestrel_jit::FuncId)>> =
        const { std::cell::Cell::new(None) };
}

/// Host code called from JIT code calls JIT code again, which traps: the inner call
/// returns the trap, and the outer call completes.
extern "C" fn reenter(x: i64) -> i64 {
    let Some((m, id)) = INNER.with(|c| c.get()) else {
        return -1;
    };
    // SAFETY: the test keeps the module alive during the outer call.
    let r = unsafe { (*m).call(id, &[Value::I64(0)]) };
    match r {
        Err(CallError::Trap(_)) => 100 + x,
        _ => -2,
    }
}

#[test]
fn nested_host_calls_trap_independently() {
    let mut b = kestrel_jit::JitBuilder::new();
    b.symbol("reenter", reenter as *const u8);
    let mut m = b.build();
    let s = sig(&[Type::I64], &[Type::I64]);
    m.declare_function("reenter", kestrel_jit::Linkage::Import, &s)
        .unwrap();
    let asm = assemble(|a| {
        a.push(rax)?;
        let call = here(a)?;
        a.db(&[0xe8, 0, 0, 0, 0])?;
        a.add(rax, 1)?;
        a.pop(rcx)?;
        a.ret()?;
        Ok(vec![call])
    });
    let outer = CompiledFunction {
        relocs: vec![Reloc {
            offset: asm.labels[0] + 1,
            kind: RelocKind::CallPcRel4,
            target: RelocTarget::Function("reenter".into()),
            addend: -4,
        }],
        ..CompiledFunction::new(asm.code, s)
    };
    let outer = define(&mut m, "outer", outer);
    let inner = define(&mut m, "inner", trap_if_zero().0);
    m.finalize_definitions().unwrap();
    INNER.with(|c| c.set(Some((&m as *const JitModule, inner))));
    for x in 0..10 {
        let r = unsafe { m.call(outer, &[Value::I64(x)]) }.unwrap();
        assert_eq!(r, [Value::I64(101 + x)]);
    }
    INNER.with(|c| c.set(None));
}

/// Modules are created, trapped in and dropped on several threads at once, so trap-table
/// registration and removal race with the handler's lookups.
#[test]
fn concurrent_module_churn() {
    let threads: Vec<_> = (0..3)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..40 {
                    let (f, site) = trap_if_zero();
                    let (m, id) = single(f);
                    assert_eq!(
                        expect_trap(unsafe { m.call(id, &[Value::I64(0)]) }).offset,
                        site
                    );
                    drop(m);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
