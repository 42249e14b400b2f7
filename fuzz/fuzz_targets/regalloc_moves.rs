//! Sequence an arbitrary parallel move and verify it by running the result.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kestrel_regalloc::fuzzing::parallel_moves(data);
});
