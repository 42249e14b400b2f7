//! Allocate a generated function and check it with the symbolic checker and the executor.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kestrel_regalloc::fuzzing::allocate_and_check(data);
});
