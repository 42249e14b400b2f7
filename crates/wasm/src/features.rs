//! Which WebAssembly proposals Kestrel accepts, and how a rejected module is told apart as
//! "unsupported" rather than "invalid".
//!
//! Supported: the 1.0 core (MVP) plus mutable-global imports, sign-extension operators,
//! non-trapping float-to-int conversions and multi-value. Everything else — SIMD, reference
//! types, bulk memory, threads, tail calls, exceptions, memory64, multi-memory, GC, function
//! references, extended constants — is refused by validation, and the error names it.
//!
//! Cost: [`classify`] validates the module a second time, only when the first validation
//! failed.

use wasmparser::{Validator, WasmFeatures};

use crate::error::WasmError;

/// The proposals Kestrel translates.
pub const SUPPORTED: WasmFeatures = WasmFeatures::WASM1
    .union(WasmFeatures::SIGN_EXTENSION)
    .union(WasmFeatures::SATURATING_FLOAT_TO_INT)
    .union(WasmFeatures::MULTI_VALUE)
    .union(WasmFeatures::CALL_INDIRECT_OVERLONG);

/// The reference feature set used to tell "unsupported" from "invalid": the Wasm 3.0
/// standard. A module valid under it but not under [`SUPPORTED`] needs a proposal Kestrel
/// does not have.
const STANDARD: WasmFeatures = WasmFeatures::WASM3;

/// A validator with Kestrel's feature set.
pub fn validator() -> Validator {
    Validator::new_with_features(SUPPORTED)
}

/// Validate `bytes` with Kestrel's features; on failure, say whether the module is invalid
/// or merely needs a proposal Kestrel lacks.
pub fn validate(bytes: &[u8]) -> Result<(), WasmError> {
    match validator().validate_all(bytes) {
        Ok(_) => Ok(()),
        Err(e) => Err(classify(bytes, e)),
    }
}

/// The error for a module Kestrel's validator rejected with `e`.
pub fn classify(bytes: &[u8], e: wasmparser::BinaryReaderError) -> WasmError {
    if Validator::new_with_features(STANDARD)
        .validate_all(bytes)
        .is_ok()
    {
        WasmError::Unsupported {
            offset: e.offset(),
            feature: e.message().to_string(),
        }
    } else {
        WasmError::from_parser(e)
    }
}
