//! Arbitrary bytes through the CLIF parser, the verifier and the printer round trip.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    kestrel_ir::fuzzing::check_parse_verify(data);
});
