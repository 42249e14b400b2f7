//! Random label/branch/byte sequences through the MachBuffer: naive, optimized and chaos
//! builds must run the same on the toy interpreter (invariants checked along the way).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kestrel_codegen::machinst::buffer::fuzzing::check_random_sequence(data);
});
