//! The two bounds-check modes: guard-page memories (no check in code; an out-of-bounds
//! access faults and the JIT's handler reports the Wasm trap) and explicit checks. The same
//! programs give the same results and traps in both; the IR shows which accesses carry a
//! check; memories of the wrong layout are refused at link time.

use kestrel_ir::{InstructionData, Opcode};
use kestrel_wasm::runtime::memory::{GUARD_BYTES, PAGE_SIZE};
use kestrel_wasm::{
    BoundsChecks, Config, Extern, Imports, Instance, InvokeError, Memory, Module, Trap, Val,
    WasmError,
};

const MODES: [BoundsChecks; 2] = [BoundsChecks::Guard, BoundsChecks::Explicit];

const ACCESSES: &str = r#"(module
    (memory (export "mem") 1 4)
    (func (export "load8") (param i32) (result i32) (i32.load8_u (local.get 0)))
    (func (export "load32") (param i32) (result i32) (i32.load offset=4 (local.get 0)))
    (func (export "load64") (param i32) (result i64) (i64.load (local.get 0)))
    (func (export "loadf64") (param i32) (result f64) (f64.load (local.get 0)))
    (func (export "store16") (param i32 i32) (i32.store16 (local.get 0) (local.get 1)))
    (func (export "store64") (param i32 i64) (i64.store offset=8 (local.get 0) (local.get 1)))
    (func (export "far") (param i32) (result i32) (i32.load offset=0xfffffff0 (local.get 0)))
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
    (func (export "size") (result i32) (memory.size)))"#;

fn instance(checks: BoundsChecks) -> Instance {
    let wasm = wat::parse_str(ACCESSES).unwrap();
    let module = Module::with_config(&wasm, &Config::with_bounds_checks(checks)).unwrap();
    assert_eq!(
        module.bounds_checks(),
        checks,
        "this host reserves guard memories"
    );
    Instance::new(&module, &Imports::new()).unwrap()
}

fn outcome(i: &Instance, name: &str, args: &[Val]) -> Result<Vec<Val>, Trap> {
    match i.invoke(name, args) {
        Ok(v) => Ok(v),
        Err(InvokeError::Trap { trap, .. }) => Err(trap),
        Err(e) => panic!("{name}({args:?}): {e}"),
    }
}

#[test]
fn accesses_at_every_edge_agree_in_both_modes() {
    use Val::{I32, I64};
    let oob = Err(Trap::MemoryOutOfBounds);
    for checks in MODES {
        let i = instance(checks);
        let page = PAGE_SIZE as i32;
        assert_eq!(
            outcome(&i, "store16", &[I32(page - 2), I32(0x1234)]),
            Ok(vec![])
        );
        assert_eq!(outcome(&i, "load8", &[I32(page - 1)]), Ok(vec![I32(0x12)]));
        assert_eq!(outcome(&i, "load8", &[I32(page)]), oob, "{checks}");
        assert_eq!(
            outcome(&i, "store16", &[I32(page - 1), I32(1)]),
            oob,
            "{checks}"
        );
        assert_eq!(
            outcome(&i, "load32", &[I32(page - 8)]),
            Ok(vec![I32(0x1234_0000)])
        );
        assert_eq!(outcome(&i, "load32", &[I32(page - 7)]), oob, "{checks}");
        assert_eq!(outcome(&i, "load64", &[I32(-1)]), oob, "{checks}");
        assert_eq!(outcome(&i, "loadf64", &[I32(page - 4)]), oob, "{checks}");
        assert_eq!(outcome(&i, "store64", &[I32(-8), I64(1)]), oob, "{checks}");
        assert_eq!(outcome(&i, "far", &[I32(0)]), oob, "{checks}");
        assert_eq!(outcome(&i, "far", &[I32(-1)]), oob, "{checks}");
        // A trap leaves the instance usable; growing makes the next page accessible.
        assert_eq!(outcome(&i, "grow", &[I32(1)]), Ok(vec![I32(1)]));
        assert_eq!(outcome(&i, "load8", &[I32(page)]), Ok(vec![I32(0)]));
        assert_eq!(outcome(&i, "load8", &[I32(2 * page)]), oob, "{checks}");
        assert_eq!(outcome(&i, "grow", &[I32(3)]), Ok(vec![I32(-1)]));
        assert_eq!(outcome(&i, "size", &[]), Ok(vec![I32(2)]));
        let mem = i.memory().unwrap();
        assert_eq!(mem.bounds_checks(), checks);
        assert_eq!(mem.read(page as u64 - 2, 2), Some(vec![0x34, 0x12]));
    }
}

/// Heap-bounds `trapnz` instructions in each function of `wat` compiled for `checks`.
fn checks_in_ir(wat: &str, checks: BoundsChecks) -> Vec<usize> {
    let (_, funcs) =
        kestrel_wasm::translate_module(&wat::parse_str(wat).unwrap(), checks).expect("translates");
    funcs
        .iter()
        .map(|f| {
            let insts = f
                .layout
                .blocks()
                .iter()
                .flat_map(|&b| f.layout.block_insts(b));
            insts
                .filter(|&inst| {
                    matches!(f.dfg.inst(inst), InstructionData::CondTrap { opcode, code, .. }
                        if *opcode == Opcode::Trapnz
                            && *code == kestrel_ir::TrapCode::HEAP_OUT_OF_BOUNDS)
                })
                .count()
        })
        .collect()
}

#[test]
fn only_offsets_past_the_guard_are_checked_in_guard_mode() {
    let within = GUARD_BYTES - 8;
    let past = GUARD_BYTES - 7;
    let wat = format!(
        r#"(module (memory 1)
            (func (param i32) (result i64) (i64.load offset={within} (local.get 0)))
            (func (param i32) (result i64) (i64.load offset={past} (local.get 0)))
            (func (param i32) (i32.store8 (local.get 0) (i32.const 1))))"#
    );
    assert_eq!(checks_in_ir(&wat, BoundsChecks::Guard), [0, 1, 0]);
    assert_eq!(checks_in_ir(&wat, BoundsChecks::Explicit), [1, 1, 1]);
}

#[test]
fn guard_modules_import_only_guard_memories() {
    let wat = r#"(module (import "env" "mem" (memory 1))
        (func (export "peek") (result i32) (i32.load8_u (i32.const 3))))"#;
    let wasm = wat::parse_str(wat).unwrap();
    for (module_checks, memory_checks, links) in [
        (BoundsChecks::Guard, BoundsChecks::Guard, true),
        (BoundsChecks::Guard, BoundsChecks::Explicit, false),
        (BoundsChecks::Explicit, BoundsChecks::Guard, true),
        (BoundsChecks::Explicit, BoundsChecks::Explicit, true),
    ] {
        let module = Module::with_config(&wasm, &Config::with_bounds_checks(module_checks))
            .expect("compiles");
        let memory = Memory::with_bounds_checks(1, None, memory_checks).unwrap();
        assert!(memory.write(3, &[42]));
        let mut imports = Imports::new();
        imports.define("env", "mem", Extern::Memory(memory));
        match Instance::new(&module, &imports) {
            Ok(i) => {
                assert!(
                    links,
                    "{module_checks} module, {memory_checks} memory linked"
                );
                assert_eq!(i.invoke("peek", &[]).unwrap(), [Val::I32(42)]);
            }
            Err(WasmError::Link { message, .. }) => {
                assert!(!links, "{module_checks}/{memory_checks}: {message}");
                assert!(message.contains("guard"), "{message}");
            }
            Err(e) => panic!("{module_checks}/{memory_checks}: {e}"),
        }
    }
}

#[test]
fn guard_memories_may_grow_past_one_gibibyte() {
    let wat = r#"(module (memory 0)
        (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
        (func (export "poke") (param i32) (i32.store8 (local.get 0) (i32.const 9)))
        (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0))))"#;
    let wasm = wat::parse_str(wat).unwrap();
    let pages = 16384 + 16; // one gibibyte and a mebibyte
    for (checks, grows) in [(BoundsChecks::Guard, true), (BoundsChecks::Explicit, false)] {
        let module = Module::with_config(&wasm, &Config::with_bounds_checks(checks)).unwrap();
        let i = Instance::new(&module, &Imports::new()).unwrap();
        let got = i.invoke("grow", &[Val::I32(pages)]).unwrap();
        assert_eq!(got, [Val::I32(if grows { 0 } else { -1 })], "{checks}");
        if grows {
            let last = (pages as i64 * PAGE_SIZE as i64 - 1) as i32;
            i.invoke("poke", &[Val::I32(last)]).unwrap();
            assert_eq!(i.invoke("peek", &[Val::I32(last)]).unwrap(), [Val::I32(9)]);
            assert!(matches!(
                i.invoke("peek", &[Val::I32(last + 1)]),
                Err(InvokeError::Trap {
                    trap: Trap::MemoryOutOfBounds,
                    ..
                })
            ));
        }
    }
}
