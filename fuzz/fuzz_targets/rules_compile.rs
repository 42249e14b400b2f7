//! Arbitrary text through the whole rules compiler (both backends); it must never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    kestrel_rules::fuzz::check_no_panic(data);
});
