//! Guard-mode memory accesses reuse the memory base and the native address computed by an
//! earlier access that dominates them (structured control flow tells which do): the IR
//! shows one address computation where reuse is allowed and one per arm or region where it
//! is not, every function passes the verifier (so each reused value dominates its uses),
//! and the programs compute what Wasm says.

use kestrel_ir::{Function, InstructionData, Opcode};
use kestrel_wasm::{BoundsChecks, Config, Imports, Instance, Module, Val};

const PROGRAM: &str = r#"(module
    (memory 1)
    ;; Straight-line code: one address for both loads.
    (func (export "same") (param i32) (result i32)
        (i32.add (i32.load (local.get 0)) (i32.load offset=4 (local.get 0))))
    ;; The then arm's address does not dominate the else arm.
    (func (export "arms") (param i32 i32) (result i32)
        (if (local.get 1)
            (then (i32.store (local.get 0) (i32.const 10)))
            (else (i32.store (local.get 0) (i32.const 20))))
        (i32.load (local.get 0)))
    ;; An address computed before the `if` serves both arms and what follows.
    (func (export "before") (param i32 i32) (result i32)
        (i32.store offset=8 (local.get 0) (i32.const 5))
        (if (local.get 1)
            (then (i32.store (local.get 0) (i32.const 1)))
            (else (i32.store (local.get 0) (i32.const 2))))
        (i32.add (i32.load (local.get 0)) (i32.load offset=8 (local.get 0))))
    ;; Inside a block that a branch may leave early: not reused after its end.
    (func (export "block") (param i32 i32) (result i32)
        (block
            (br_if 0 (local.get 1))
            (i32.store (local.get 0) (i32.const 7)))
        (i32.load (local.get 0)))
    ;; Before a loop: reused inside it and after it (the loop never assigns local 0, so
    ;; it reads as the value the address was computed from).
    (func (export "loop") (param i32) (result i32) (local i32)
        (i32.store (local.get 0) (i32.const 0))
        (loop
            (i32.store (local.get 0) (i32.add (i32.load (local.get 0)) (i32.const 3)))
            (local.set 1 (i32.add (local.get 1) (i32.const 1)))
            (br_if 0 (i32.lt_u (local.get 1) (i32.const 4))))
        (i32.load (local.get 0))))"#;

/// Per function: how many `uextend.i64` (one per address computed) and how many loads of
/// the memory base (through the `MemoryDef`: two loads each) the translation emitted.
fn address_computations(func: &Function) -> usize {
    func.layout
        .blocks()
        .iter()
        .flat_map(|&b| func.layout.block_insts(b))
        .filter(|&inst| {
            matches!(
                func.dfg.inst(inst),
                InstructionData::Unary {
                    opcode: Opcode::Uextend,
                    ..
                }
            ) && func.dfg.value_type(func.dfg.inst_results(inst)[0]) == kestrel_ir::Type::I64
        })
        .count()
}

#[test]
fn dominating_addresses_are_reused_and_others_recomputed() {
    let wasm = wat::parse_str(PROGRAM).unwrap();
    let (_, funcs) =
        kestrel_wasm::translate_module(&wasm, BoundsChecks::Guard).expect("translates");
    for f in &funcs {
        if let Err(e) = kestrel_ir::verify_function(f) {
            panic!("{}: {e}", f.name);
        }
    }
    let counts: Vec<usize> = funcs.iter().map(address_computations).collect();
    // same: 1; arms: then, else, after the `if` (3); before: 1; block: inside, after (2);
    // loop: before, also serving the loop and what follows (1).
    assert_eq!(counts, [1, 3, 1, 2, 1]);
}

#[test]
fn reused_addresses_compute_what_wasm_says() {
    let wasm = wat::parse_str(PROGRAM).unwrap();
    for checks in [BoundsChecks::Guard, BoundsChecks::Explicit] {
        let module = Module::with_config(&wasm, &Config::with_bounds_checks(checks)).unwrap();
        let i = Instance::new(&module, &Imports::new()).unwrap();
        let call = |name: &str, args: &[Val]| i.invoke(name, args).unwrap();
        assert_eq!(call("arms", &[Val::I32(16), Val::I32(1)]), [Val::I32(10)]);
        assert_eq!(call("arms", &[Val::I32(16), Val::I32(0)]), [Val::I32(20)]);
        assert_eq!(call("before", &[Val::I32(32), Val::I32(1)]), [Val::I32(6)]);
        assert_eq!(call("before", &[Val::I32(32), Val::I32(0)]), [Val::I32(7)]);
        assert_eq!(call("block", &[Val::I32(64), Val::I32(0)]), [Val::I32(7)]);
        assert_eq!(call("loop", &[Val::I32(80)]), [Val::I32(12)]);
        // `same` reads 80 (12) and 84 (0, untouched).
        assert_eq!(call("same", &[Val::I32(80)]), [Val::I32(12)]);
    }
}
