//! Functions compile in parallel; the result must be exactly a serial compile's.

use kestrel_codegen::isa::x64::{Flags, OptLevel};
use kestrel_wasm::module::{compile_functions, release_compile_memory, translate_and_compile};
use kestrel_wasm::module_info::ModuleInfo;
use kestrel_wasm::translate_module;

/// A module of `n` functions of different shapes (loops, calls, memory, floats), so the
/// compiles take different times and finish out of order.
fn many_functions(n: usize) -> Vec<u8> {
    let mut text = String::from("(module (memory 1)\n");
    for k in 0..n {
        let body = match k % 4 {
            0 => format!(
                "(local $i i32) (local $acc i32)
                 (loop $l (local.set $acc (i32.add (local.get $acc) (i32.mul (local.get $i) (i32.const {k}))))
                   (local.set $i (i32.add (local.get $i) (i32.const 1)))
                   (br_if $l (i32.lt_u (local.get $i) (local.get 0))))
                 (local.get $acc)"
            ),
            1 => format!("(i32.load offset={k} (local.get 0))"),
            2 => format!(
                "(i32.trunc_f64_s (f64.mul (f64.convert_i32_s (local.get 0)) (f64.const {k}.5)))"
            ),
            _ => format!("(call $f{} (i32.add (local.get 0) (i32.const 1)))", k - 1),
        };
        text.push_str(&format!(
            "(func $f{k} (export \"f{k}\") (param i32) (result i32) {body})\n"
        ));
    }
    text.push(')');
    wat::parse_str(&text).expect("valid text")
}

#[test]
fn a_parallel_compile_equals_a_serial_one() {
    let bytes = many_functions(96);
    let (_, funcs) =
        translate_module(&bytes, kestrel_wasm::BoundsChecks::Guard).expect("valid module");
    let flags = Flags::default();
    let parallel = compile_functions(&funcs, &flags);
    assert_eq!(parallel.len(), funcs.len());
    for (k, (f, code)) in funcs.iter().zip(parallel).enumerate() {
        let serial = kestrel_jit::host_isa()
            .compile(f, &flags)
            .expect("compiles");
        assert_eq!(code.expect("compiles"), serial, "function {k}");
    }
}

/// The module pipeline translates and compiles each function on the worker that takes it,
/// reusing one translation and one compile context per worker (and, at opt level `speed`,
/// leaving the builder's compaction to the mid-end): the code must be what a fresh serial
/// translation and compile of each function gives, at both opt levels. The pool's threads
/// keep that memory from one module to the next: each level comes twice, after the other
/// level's compile and after the kept memory was released. Set
/// `KESTREL_PARALLEL_WASM=FILE.wasm` to check a real module as well.
#[test]
fn translating_and_compiling_in_kept_contexts_equals_a_fresh_serial_compile() {
    let mut modules = vec![many_functions(96)];
    if let Ok(path) = std::env::var("KESTREL_PARALLEL_WASM") {
        modules.push(std::fs::read(&path).expect("KESTREL_PARALLEL_WASM names a readable file"));
    }
    let checks = kestrel_wasm::BoundsChecks::Guard;
    for bytes in &modules {
        let (info, funcs) = translate_module(bytes, checks).expect("valid module");
        let levels = [
            OptLevel::None,
            OptLevel::Speed,
            OptLevel::Speed,
            OptLevel::None,
        ];
        for (round, opt_level) in levels.into_iter().enumerate() {
            if round == 2 {
                release_compile_memory();
            }
            let flags = Flags {
                opt_level,
                ..Flags::default()
            };
            let fused = translate_and_compile(&info, bytes, checks, &flags);
            assert_eq!(fused.len(), funcs.len());
            for (k, (f, code)) in funcs.iter().zip(fused).enumerate() {
                let serial = kestrel_jit::host_isa()
                    .compile(f, &flags)
                    .expect("compiles");
                assert_eq!(
                    code.expect("compiles"),
                    serial,
                    "function {k} at {opt_level:?}"
                );
            }
        }
        // Decoding again gives the same canonical type ids (taken in type order).
        let again = ModuleInfo::decode(bytes).expect("decodes");
        assert_eq!(again.type_ids, info.type_ids);
    }
}

#[test]
fn a_module_of_many_functions_runs() {
    let module = kestrel_wasm::Module::new(&many_functions(96)).expect("compiles");
    let instance =
        kestrel_wasm::Instance::new(&module, &kestrel_wasm::Imports::new()).expect("instantiates");
    // f0: sum of i * 0 for i < n is 0; f4 (a loop with factor 4): 4 * (0 + 1 + 2) = 12.
    use kestrel_wasm::Val;
    assert_eq!(
        instance.invoke("f0", &[Val::I32(3)]).unwrap(),
        [Val::I32(0)]
    );
    assert_eq!(
        instance.invoke("f4", &[Val::I32(3)]).unwrap(),
        [Val::I32(12)]
    );
    // f3 calls f2: trunc((4 + 1) * 2.5) = 12.
    assert_eq!(
        instance.invoke("f3", &[Val::I32(4)]).unwrap(),
        [Val::I32(12)]
    );
}

/// Validation keeps the operators it decodes and the translation replays them: the IR must
/// be what decoding the body again gives, with the same facts, for every function (loops,
/// branch tables, unreachable code, calls, memory, floats).
#[test]
fn replaying_the_validated_operators_translates_as_decoding_again() {
    use kestrel_wasm::features::{validate_body, validate_declarations, DecodedOps};
    use kestrel_wasm::translate::{translate_function_in, TranslateContext};
    use wasmparser::{BinaryReader, FuncValidatorAllocations, FunctionBody};

    let branches = wat::parse_str(
        "(module (memory 1)
           (func (param i32) (result i32)
             (block $b (block $a (br_table $a $b $a (local.get 0))) (return (i32.const 7)))
             (if (result i32) (local.get 0)
               (then (unreachable) (i32.const 1))
               (else (i32.load (local.get 0))))))",
    )
    .expect("valid text");
    for bytes in [many_functions(24), branches] {
        let info = ModuleInfo::decode(&bytes).expect("decodes");
        let checks = kestrel_wasm::BoundsChecks::Guard;
        let (mut replaying, mut decoding) = (TranslateContext::new(), TranslateContext::new());
        let mut allocs = FuncValidatorAllocations::default();
        let bodies = validate_declarations(&bytes).expect("valid declarations");
        for (k, validator) in bodies.into_iter().enumerate() {
            let index = info.num_imported_funcs + k as u32;
            let range = info.bodies[k].clone();
            let body = FunctionBody::new(BinaryReader::new(&bytes[range.clone()], range.start));
            let mut ops: DecodedOps = Vec::new();
            let facts = replaying.body_facts_for_next();
            validate_body(&bytes, validator, &body, &mut allocs, facts, &mut ops).expect("valid");
            assert!(
                !ops.is_empty(),
                "validation keeps the operators of function {k}"
            );
            // The other context learns the same facts from a second validation.
            let again = validate_declarations(&bytes).expect("valid declarations");
            let validator = again.into_iter().nth(k).expect("same bodies");
            let facts = decoding.body_facts_for_next();
            let mut unused: DecodedOps = Vec::new();
            validate_body(&bytes, validator, &body, &mut allocs, facts, &mut unused)
                .expect("valid");
            replaying.body_facts_known();
            decoding.body_facts_known();
            let replayed =
                translate_function_in(&mut replaying, &info, &bytes, index, checks, Some(&mut ops))
                    .expect("translates");
            assert!(ops.is_empty(), "the replay takes every operator");
            let decoded = translate_function_in(&mut decoding, &info, &bytes, index, checks, None)
                .expect("translates");
            assert_eq!(replayed.to_string(), decoded.to_string(), "function {k}");
        }
    }
}
