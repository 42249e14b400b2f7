//! Generate a module from the input, run it in the interpreter and natively (with and without
//! the chaos control), and crash on any disagreement.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kestrel_difftest::fuzzing::differential(data);
});
