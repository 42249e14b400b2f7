//! The library functions Kestrel-compiled code may call: Cranelift's named libcalls
//! (`%CeilF32`, … — also what the backend calls for rounding without SSE4.1, and for `fma`)
//! and the compiler-runtime helpers it uses for 128-bit division and 128-bit ↔ float
//! conversions (`__divti3`, `__floattidf`, …). Every [`crate::JitBuilder`] starts with them,
//! so code from [`crate::JitModule::define_ir`] links without the embedder knowing they exist;
//! a symbol registered by the embedder under the same name replaces the default.

// Cranelift's libcalls that test files call by name, implemented with Rust's float methods
// (which follow the same IEEE rules as the C library functions).
extern "C" fn ceil_f32(x: f32) -> f32 {
    x.ceil()
}
extern "C" fn ceil_f64(x: f64) -> f64 {
    x.ceil()
}
extern "C" fn floor_f32(x: f32) -> f32 {
    x.floor()
}
extern "C" fn floor_f64(x: f64) -> f64 {
    x.floor()
}
extern "C" fn trunc_f32(x: f32) -> f32 {
    x.trunc()
}
extern "C" fn trunc_f64(x: f64) -> f64 {
    x.trunc()
}
extern "C" fn nearest_f32(x: f32) -> f32 {
    x.round_ties_even()
}
extern "C" fn nearest_f64(x: f64) -> f64 {
    x.round_ties_even()
}
extern "C" fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}
extern "C" fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

// 128-bit division helpers the backend calls after checking for the trapping cases (so plain
// wrapping arithmetic is exact here).
extern "C" fn udivti3(a: u128, b: u128) -> u128 {
    a.wrapping_div(b)
}
extern "C" fn divti3(a: i128, b: i128) -> i128 {
    a.wrapping_div(b)
}
extern "C" fn umodti3(a: u128, b: u128) -> u128 {
    a.wrapping_rem(b)
}
extern "C" fn modti3(a: i128, b: i128) -> i128 {
    a.wrapping_rem(b)
}

// 128-bit integer to float conversions (Rust's `as` rounds to nearest, ties to even).
extern "C" fn floattisf(a: i128) -> f32 {
    a as f32
}
extern "C" fn floattidf(a: i128) -> f64 {
    a as f64
}
extern "C" fn floatuntisf(a: u128) -> f32 {
    a as f32
}
extern "C" fn floatuntidf(a: u128) -> f64 {
    a as f64
}

// Float to 128-bit integer conversions; the backend only passes in-range inputs.
extern "C" fn fixsfti(a: f32) -> i128 {
    a as i128
}
extern "C" fn fixdfti(a: f64) -> i128 {
    a as i128
}
extern "C" fn fixunssfti(a: f32) -> u128 {
    a as u128
}
extern "C" fn fixunsdfti(a: f64) -> u128 {
    a as u128
}

/// Cranelift libcall names and their implementations.
pub(crate) const LIBCALLS: &[(&str, *const u8)] = &[
    ("CeilF32", ceil_f32 as *const u8),
    ("CeilF64", ceil_f64 as *const u8),
    ("FloorF32", floor_f32 as *const u8),
    ("FloorF64", floor_f64 as *const u8),
    ("TruncF32", trunc_f32 as *const u8),
    ("TruncF64", trunc_f64 as *const u8),
    ("NearestF32", nearest_f32 as *const u8),
    ("NearestF64", nearest_f64 as *const u8),
    ("FmaF32", fma_f32 as *const u8),
    ("FmaF64", fma_f64 as *const u8),
    ("__udivti3", udivti3 as *const u8),
    ("__divti3", divti3 as *const u8),
    ("__umodti3", umodti3 as *const u8),
    ("__modti3", modti3 as *const u8),
    ("__floattisf", floattisf as *const u8),
    ("__floattidf", floattidf as *const u8),
    ("__floatuntisf", floatuntisf as *const u8),
    ("__floatuntidf", floatuntidf as *const u8),
    ("__fixsfti", fixsfti as *const u8),
    ("__fixdfti", fixdfti as *const u8),
    ("__fixunssfti", fixunssfti as *const u8),
    ("__fixunsdfti", fixunsdfti as *const u8),
];
