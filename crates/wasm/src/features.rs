//! Which WebAssembly proposals Kestrel accepts, and how a rejected module is told apart as
//! "unsupported" rather than "invalid".
//!
//! Supported: the Wasm 2.0 core without SIMD — the 1.0 core plus mutable-global imports,
//! sign-extension operators, non-trapping float-to-int conversions, multi-value, reference
//! types (`funcref`/`externref`, multiple tables, `table.*`) and bulk memory — plus
//! extended constant expressions, multiple memories and tail calls. Everything else — SIMD,
//! threads, exceptions, memory64, GC, function references — is refused by validation,
//! and the error names it.
//!
//! Cost: [`classify`] validates the module again (once per refused proposal at most), only
//! when the first validation failed.

use wasmparser::{
    FuncToValidate, FuncValidatorAllocations, FunctionBody, Operator, OperatorsReader, Parser,
    ValidPayload, Validator, ValidatorResources, WasmFeatures,
};

use crate::error::WasmError;

/// The proposals Kestrel translates.
pub const SUPPORTED: WasmFeatures = WasmFeatures::WASM1
    .union(WasmFeatures::SIGN_EXTENSION)
    .union(WasmFeatures::SATURATING_FLOAT_TO_INT)
    .union(WasmFeatures::MULTI_VALUE)
    .union(WasmFeatures::REFERENCE_TYPES)
    .union(WasmFeatures::BULK_MEMORY)
    .union(WasmFeatures::EXTENDED_CONST)
    .union(WasmFeatures::MULTI_MEMORY)
    .union(WasmFeatures::TAIL_CALL);

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

/// A function body's validator, for [`validate_body`].
pub type BodyValidator = FuncToValidate<ValidatorResources>;

/// [`validate`] without the function bodies: everything else is checked, and each body's
/// validator is returned, in function order, for the caller to run where it translates the
/// body ([`validate_body`], in parallel). Running them all in order, stopping at the first
/// failure, gives exactly [`validate`]'s result (which also checks the module first and the
/// bodies after).
pub fn validate_declarations(bytes: &[u8]) -> Result<Vec<BodyValidator>, WasmError> {
    let mut validator = validator();
    let mut bodies = Vec::new();
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| classify(bytes, e))?;
        if let ValidPayload::Func(body, _) = validator
            .payload(&payload)
            .map_err(|e| classify(bytes, e))?
        {
            bodies.push(body);
        }
    }
    Ok(bodies)
}

/// A body's operators with their byte offsets in the module, as validation decoded them.
pub type DecodedOps<'a> = Vec<(Operator<'a>, usize)>;

/// An empty operator list in `ops`' memory, for a body of another lifetime: validation and
/// translation keep one list per worker instead of allocating one per function. (Collecting
/// a cleared list through `map` reuses its allocation: the element types have one layout.)
pub fn reuse_decoded<'b>(mut ops: DecodedOps<'_>) -> DecodedOps<'b> {
    ops.clear();
    ops.into_iter()
        .map(|_| unreachable!("the list was emptied"))
        .collect()
}

/// Validate one function body of the module `bytes` with its validator from
/// [`validate_declarations`], reusing `allocs`; an error is the one [`validate`] gives.
/// The same decoding of the operators fills `facts`: `written` (emptied first, grown as
/// needed) marks every local the body assigns (`local.set`, `local.tee`), which the
/// translator reads the others as their entry value; `loops` lists per loop the locals it
/// reads and never assigns, which the translator seeds at the loop's header. `decoded`
/// (emptied first) receives every operator with its byte offset, in order, so that the
/// translation replays them instead of decoding the body again.
pub fn validate_body<'a>(
    bytes: &[u8],
    validator: BodyValidator,
    body: &FunctionBody<'a>,
    allocs: &mut FuncValidatorAllocations,
    facts: &mut crate::translate::BodyFacts,
    decoded: &mut DecodedOps<'a>,
) -> Result<(), WasmError> {
    let crate::translate::BodyFacts { written, loops } = facts;
    written.clear();
    decoded.clear();
    let mut v = validator.into_validator(std::mem::take(allocs));
    // As `FuncValidator::validate` does, with each operator decoded once for both uses.
    let mut check = || -> wasmparser::Result<()> {
        let mut reader = body.get_binary_reader();
        v.read_locals(&mut reader)?;
        loops.begin(v.len_locals() as usize);
        reader.set_features(*v.features());
        let mut ops = OperatorsReader::new(reader);
        while !ops.eof() {
            let (op, offset) = ops.read_with_offset()?;
            loops.op(&op);
            if let Operator::LocalSet { local_index } | Operator::LocalTee { local_index } = op {
                let k = local_index as usize;
                if written.len() <= k {
                    written.resize(k + 1, false);
                }
                written[k] = true;
            }
            v.op(offset, &op)?;
            decoded.push((op, offset));
        }
        let end = ops.get_binary_reader();
        end.finish_expression(&v.visitor(end.original_position()))
    };
    let result = check();
    *allocs = v.into_allocations();
    result.map_err(|e| classify(bytes, e))
}

/// The proposals Kestrel refuses, by name; each set is what the proposal needs on top of
/// [`SUPPORTED`].
const REFUSED: &[(WasmFeatures, &str)] = &[
    (WasmFeatures::SIMD, "SIMD"),
    (
        WasmFeatures::SIMD.union(WasmFeatures::RELAXED_SIMD),
        "relaxed SIMD",
    ),
    (WasmFeatures::THREADS, "threads"),
    (WasmFeatures::EXCEPTIONS, "exception handling"),
    (WasmFeatures::MEMORY64, "memory64"),
    (
        WasmFeatures::EXTENDED_CONST,
        "extended constant expressions",
    ),
    (
        WasmFeatures::FUNCTION_REFERENCES,
        "typed function references",
    ),
    (
        WasmFeatures::GC.union(WasmFeatures::FUNCTION_REFERENCES),
        "GC",
    ),
];

fn validates_with(bytes: &[u8], features: WasmFeatures) -> bool {
    Validator::new_with_features(features)
        .validate_all(bytes)
        .is_ok()
}

/// The error for a module Kestrel's validator rejected with `e`: unsupported, naming the
/// proposal that makes it valid when one alone does, or invalid.
pub fn classify(bytes: &[u8], e: wasmparser::BinaryReaderError) -> WasmError {
    if !validates_with(bytes, STANDARD) {
        return WasmError::from_parser(e);
    }
    let proposal = REFUSED
        .iter()
        .find(|(f, _)| validates_with(bytes, SUPPORTED.union(*f)))
        .map_or("several refused proposals".to_string(), |(_, name)| {
            format!("the {name} proposal")
        });
    WasmError::Unsupported {
        offset: e.offset(),
        feature: format!("{proposal} ({})", e.message()),
    }
}

/// Whether a validation message says a refused proposal is needed (as opposed to the
/// module being wrong under every feature set).
pub fn is_feature_gate(message: &str) -> bool {
    const GATES: [&str; 5] = [
        "enabled",
        "required for",
        "requires",
        "without the",
        "multiple memories",
    ];
    GATES.iter().any(|g| message.contains(g))
}
