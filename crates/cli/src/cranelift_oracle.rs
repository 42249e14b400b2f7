//! Oracle 3: Cranelift 0.135.8's interpreter reading the same CLIF text.
//!
//! Built only with the `cranelift` feature, so no library of Kestrel depends on Cranelift.
//! The case is printed by Kestrel's printer and parsed by `cranelift-reader`: the comparison
//! covers the text format as well as the semantics.
//!
//! Where Cranelift cannot take part, the generator avoids the feature through named rules
//! (see [`cranelift_allows`]); a disagreement is never silenced in the comparison itself.

use std::panic::{catch_unwind, AssertUnwindSafe};

use cranelift_codegen::data_value::DataValue as ClifValue;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::{ControlFlow, CraneliftTrap};
use kestrel_difftest::campaign::Campaign;
use kestrel_difftest::coverage::Coverage;
use kestrel_difftest::{Oracle, Outcome, TestCase};
use kestrel_interp::DataValue;
use kestrel_ir::{Opcode, TrapCode, Type};

/// Add the Cranelift oracle to `campaign` and restrict its generator to what Cranelift reads.
pub fn install(campaign: &mut Campaign) {
    campaign.extra.push(Box::new(CraneliftOracle));
    campaign.gen.allow = Some(cranelift_allows);
    // Rule `no-cold-convention`.
    campaign.gen.cold_convention = false;
    // Rule `no-negative-access-offsets`.
    campaign.gen.negative_offsets = false;
    // Rule `no-aligned-flag`.
    campaign.gen.aligned_flags = false;
}

/// The generator rules of the Cranelift comparison; each names why it exists.
///
/// - `not-in-cranelift-0.135`: `band_not`, `bor_not`, `bxor_not`, `stack_load` and
///   `stack_store` are Kestrel's (older CLIF) opcodes that release 0.135's reader rejects.
/// - `not-in-cranelift-interpreter`: its interpreter has no `get_frame_pointer`,
///   `get_stack_pointer`, `get_return_address` or `sequence_point` (it panics with "not
///   implemented"), implements `iconcat`/`isplit` only between i64 and i128, and has no
///   128-bit `umulhi`/`smulhi` ("Unsupported integer length 128").
/// - `cranelift-interpreter-i128-fcvt`: its interpreter saturates float-to-i128 conversions
///   at `i128::MAX` even for unsigned ones (`fcvt_to_uint_sat.i128 +Inf` gives 2^127-1, not
///   2^128-1); the same reading makes conformance file `i128-conversion.clif` disagree with
///   the documented semantics. All `fcvt_to_*.i128` are left out.
/// - `no-cold-convention`: release 0.135's reader no longer knows the `cold` convention.
/// - `no-negative-access-offsets`: Cranelift's interpreter panics (or reports `heap_oob`) on
///   an access whose own offset is negative, e.g. `load v1-4` with `v1 = stack_addr ss0+7`,
///   although the address is inside the slot.
/// - `no-aligned-flag`: its interpreter does not align stack slots as declared, so a truly
///   aligned access (by the slot's `align`) traps there with "heap is misaligned".
/// - `cranelift-interpreter-carry-chains`: its interpreter computes the overflow flag of
///   `sadd_overflow_cin`/`ssub_overflow_bin` (and the unsigned forms) in two steps and ORs
///   them, so `0 - i64::MIN - 1` reports an overflow although the exact result `i64::MAX`
///   fits; Kestrel follows the documented single-operation reading, which is also what
///   x86's `adc`/`sbb` (and Cranelift's own x86 backend) compute. All four are left out.
/// - `cranelift-interpreter-srem-overflow`: its interpreter traps `int_ovf` on
///   `srem i8::MIN, -1`; the documented result is 0 (only division by zero traps). `srem`
///   is left out.
pub fn cranelift_allows(op: Opcode, ty: Type) -> bool {
    use Opcode::*;
    match op {
        BandNot | BorNot | BxorNot | StackLoad | StackStore => false,
        GetFramePointer | GetStackPointer | GetReturnAddress | SequencePoint => false,
        // The controlling type is the halves' type for `iconcat`, the whole for `isplit`.
        Iconcat => ty == Type::I64,
        Isplit => ty == Type::I128,
        Umulhi | Smulhi => ty != Type::I128,
        UaddOverflowCin | SaddOverflowCin | UsubOverflowBin | SsubOverflowBin => false,
        Srem => false,
        FcvtToUint | FcvtToSint | FcvtToUintSat | FcvtToSintSat => ty != Type::I128,
        _ => true,
    }
}

/// Instructions one call may run in Cranelift's interpreter.
const FUEL: u64 = 1_000_000;

struct CraneliftOracle;

impl Oracle for CraneliftOracle {
    fn name(&self) -> &'static str {
        "cranelift"
    }

    fn baseline(&self) -> Option<&'static str> {
        Some("interpreter")
    }

    fn run(&mut self, case: &TestCase, _: u64, _: &mut Coverage) -> Result<Vec<Outcome>, String> {
        let text: String = case
            .functions
            .iter()
            .map(|f| f.to_string() + "\n")
            .collect();
        let funcs = cranelift_reader::parse_functions(&text)
            .map_err(|e| format!("cranelift-reader rejects the case: {e}"))?;
        let mut store = FunctionStore::default();
        for f in &funcs {
            store.add(f.name.to_string(), f);
        }
        let entry = funcs
            .first()
            .ok_or("cranelift-reader found no function")?
            .name
            .to_string();
        case.args
            .iter()
            .map(|args| {
                let args: Vec<ClifValue> = args.iter().map(|&a| to_clif(a)).collect();
                let state = InterpreterState::default().with_function_store(store.clone());
                let mut interp = Interpreter::new(state).with_fuel(Some(FUEL));
                let flow = quietly(|| interp.call_by_name(&entry, &args))
                    .map_err(|why| format!("Cranelift's interpreter panicked: {why}"))?
                    .map_err(|e| format!("Cranelift's interpreter: {e}"))?;
                match flow {
                    ControlFlow::Return(values) => values
                        .iter()
                        .map(from_clif)
                        .collect::<Result<Vec<_>, _>>()
                        .map(Outcome::Returned),
                    ControlFlow::Trap(CraneliftTrap::User(code)) => {
                        let name = code.to_string();
                        TrapCode::from_name(&name)
                            .map(Outcome::Trapped)
                            .ok_or_else(|| format!("Cranelift trapped with unknown code {name}"))
                    }
                    ControlFlow::Trap(other) => Err(format!("Cranelift trapped: {other}")),
                    other => Err(format!("Cranelift ended with {other:?}")),
                }
            })
            .collect()
    }
}

/// Run `f`, turning a panic into its message without printing it.
fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into())
    })
}

fn to_clif(v: DataValue) -> ClifValue {
    match v {
        DataValue::I8(x) => ClifValue::I8(x),
        DataValue::I16(x) => ClifValue::I16(x),
        DataValue::I32(x) => ClifValue::I32(x),
        DataValue::I64(x) => ClifValue::I64(x),
        DataValue::I128(x) => ClifValue::I128(x),
        DataValue::F32(bits) => ClifValue::F32(Ieee32::with_bits(bits)),
        DataValue::F64(bits) => ClifValue::F64(Ieee64::with_bits(bits)),
    }
}

fn from_clif(v: &ClifValue) -> Result<DataValue, String> {
    Ok(match *v {
        ClifValue::I8(x) => DataValue::I8(x),
        ClifValue::I16(x) => DataValue::I16(x),
        ClifValue::I32(x) => DataValue::I32(x),
        ClifValue::I64(x) => DataValue::I64(x),
        ClifValue::I128(x) => DataValue::I128(x),
        ClifValue::F32(x) => DataValue::F32(x.bits()),
        ClifValue::F64(x) => DataValue::F64(x.bits()),
        ref other => return Err(format!("Cranelift returned an unsupported value {other}")),
    })
}
