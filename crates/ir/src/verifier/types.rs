//! Type checks: controlling type, results and operands per opcode, calls against their
//! signature, `return` against the function's signature, branch arguments against the
//! destination's parameters.
//!
//! The controlling type comes from [`Opcode::ctrl`]: an operand's type, or the first result's
//! type for opcodes whose type is written as a suffix. It must lie in
//! [`typing::ctrl_type_set`], the results must be [`typing::result_types`], and each operand
//! must satisfy the opcode's operand constraint ([`operand_wants`]). The builder runs the same
//! checks on each instruction it emits, so these functions assume nothing about reference
//! validity: a value that does not exist is skipped (the entity checks report it).

use super::Verifier;
use crate::entity::{Inst, Value};
use crate::function::{AbiParam, CallConv, Function, GlobalValueData, Signature};
use crate::instructions::InstructionData;
use crate::opcode::{Ctrl, Opcode};
use crate::types::Type;
use crate::typing::{ctrl_type_set, result_types, TypeSet};

impl Verifier<'_> {
    pub(super) fn check_types(&mut self, inst: Inst) {
        let mut msgs = Vec::new();
        inst_type_errors(self.func, inst, &mut msgs);
        for m in msgs {
            self.report_inst(inst, m);
        }
    }

    pub(super) fn check_branch_args(&mut self, inst: Inst) {
        let mut msgs = Vec::new();
        branch_arg_errors(self.func, inst, &mut msgs);
        for m in msgs {
            self.report_inst(inst, m);
        }
    }
}

/// What an operand must be.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Want {
    Exactly(Type),
    Int,
    Float,
    /// An address: `i32` or `i64`.
    Addr,
    /// An integer strictly narrower than the given type.
    IntNarrowerThan(Type),
    /// An integer strictly wider than the given type.
    IntWiderThan(Type),
    /// Any scalar or vector of this many bits.
    Bits(u32),
    /// A float strictly narrower than the given type.
    FloatNarrowerThan(Type),
    /// A float strictly wider than the given type.
    FloatWiderThan(Type),
    /// Any vector.
    Vector,
}

impl Want {
    fn accepts(self, t: Type) -> bool {
        match self {
            Want::Exactly(w) => t == w,
            Want::Int => t.is_int(),
            Want::Float => t.is_float(),
            Want::Addr => t == Type::I32 || t == Type::I64,
            Want::IntNarrowerThan(w) => t.is_int() && t.bits() < w.bits(),
            Want::IntWiderThan(w) => t.is_int() && t.bits() > w.bits(),
            Want::Bits(b) => {
                (t.is_int() || t.is_float() || TypeSet::Vector.contains(t)) && t.bits() == b
            }
            Want::FloatNarrowerThan(w) => t.is_float() && t.bits() < w.bits(),
            Want::FloatWiderThan(w) => t.is_float() && t.bits() > w.bits(),
            Want::Vector => TypeSet::Vector.contains(t),
        }
    }

    fn describe(self) -> String {
        match self {
            Want::Exactly(t) => t.to_string(),
            Want::Int => "an integer type".into(),
            Want::Float => "a float type".into(),
            Want::Addr => "an address type (i32 or i64)".into(),
            Want::IntNarrowerThan(t) => format!("an integer type narrower than {t}"),
            Want::IntWiderThan(t) => format!("an integer type wider than {t}"),
            Want::Bits(b) => format!("a {b}-bit type"),
            Want::FloatNarrowerThan(t) => format!("a float type narrower than {t}"),
            Want::FloatWiderThan(t) => format!("a float type wider than {t}"),
            Want::Vector => "a vector type".into(),
        }
    }
}

fn value_type(func: &Function, v: Value) -> Option<Type> {
    func.dfg.value_is_valid(v).then(|| func.dfg.value_type(v))
}

fn list_types(func: &Function, vals: &[Value]) -> String {
    let tys: Vec<String> = vals
        .iter()
        .map(|&v| value_type(func, v).map_or_else(|| "?".to_string(), |t| t.to_string()))
        .collect();
    format!("({})", tys.join(", "))
}

fn abi_types(params: &[AbiParam]) -> String {
    let tys: Vec<String> = params.iter().map(|p| p.value_type.to_string()).collect();
    format!("({})", tys.join(", "))
}

/// The controlling type of `inst`: `None` when it cannot be determined (a missing operand or
/// result), `Some(Type::INVALID)` for opcodes that are not polymorphic.
fn controlling_type(func: &Function, inst: Inst) -> Option<Type> {
    let data = func.dfg.inst(inst);
    match data.opcode().ctrl() {
        Ctrl::None => Some(Type::INVALID),
        Ctrl::Operand(n) | Ctrl::OperandPrinted(n) => {
            let v = *data.fixed_args().get(n as usize)?;
            value_type(func, v)
        }
        Ctrl::Suffix => value_type(func, func.dfg.first_result(inst)?),
    }
}

/// Constraints on an instruction's fixed operands: a short list (operands past its end are
/// not checked here), or one constraint for all of them. Inline, so checking allocates
/// nothing.
#[derive(Clone, Copy)]
enum Wants {
    Listed([Want; 3], u8),
    AllSame(Want),
}

impl Wants {
    fn listed(wants: &[Want]) -> Wants {
        let mut list = [Want::Int; 3];
        list[..wants.len()].copy_from_slice(wants);
        Wants::Listed(list, wants.len() as u8)
    }

    /// The constraint on operand `k`, if any.
    fn get(self, k: usize) -> Option<Want> {
        match self {
            Wants::Listed(list, len) => list[..usize::from(len)].get(k).copied(),
            Wants::AllSame(w) => Some(w),
        }
    }
}

/// The constraints on the fixed operands of a non-call instruction with controlling type
/// `ctrl`, in the order of `fixed_args`.
fn operand_wants(data: &InstructionData, ctrl: Type) -> Wants {
    use Opcode::*;
    let same = Want::Exactly(ctrl);
    match data.opcode() {
        Uextend | Sextend => Wants::listed(&[Want::IntNarrowerThan(ctrl)]),
        Ireduce => Wants::listed(&[Want::IntWiderThan(ctrl)]),
        Bmask if ctrl.is_vector() => Wants::AllSame(same),
        Bmask => Wants::listed(&[Want::Int]),
        Fpromote => Wants::listed(&[Want::FloatNarrowerThan(ctrl)]),
        Fdemote => Wants::listed(&[Want::FloatWiderThan(ctrl)]),
        // Vector conversions keep the lane count and width and change the lane kind.
        FcvtToUintSat | FcvtToSintSat if ctrl.is_vector() => {
            let float = float_lanes(ctrl);
            Wants::listed(&[Want::Exactly(float)])
        }
        FcvtFromUint | FcvtFromSint if ctrl.is_vector() => {
            Wants::listed(&[Want::Exactly(ctrl.as_int())])
        }
        FcvtToUint | FcvtToSint | FcvtToUintSat | FcvtToSintSat => Wants::listed(&[Want::Float]),
        FcvtFromUint | FcvtFromSint => Wants::listed(&[Want::Int]),
        Splat | ScalarToVector => Wants::listed(&[Want::Exactly(ctrl.lane_type())]),
        Insertlane => Wants::listed(&[same, Want::Exactly(ctrl.lane_type())]),
        VhighBits => Wants::listed(&[Want::Vector]),
        Uload8x8 | Sload8x8 | Uload16x4 | Sload16x4 | Uload32x2 | Sload32x2 => {
            Wants::listed(&[Want::Addr])
        }
        Bitcast => Wants::listed(&[Want::Bits(ctrl.bits())]),
        Ishl | Ushr | Sshr | Rotl | Rotr => Wants::listed(&[same, Want::Int]),
        Select | SelectSpectreGuard => Wants::listed(&[Want::Int, same, same]),
        UaddOverflowCin | SaddOverflowCin | UsubOverflowBin | SsubOverflowBin => {
            Wants::listed(&[same, same, Want::Exactly(Type::I8)])
        }
        Brif | Trapz | Trapnz => Wants::listed(&[Want::Int]),
        BrTable => Wants::listed(&[Want::Exactly(Type::I32)]),
        Load | Uload8 | Sload8 | Uload16 | Sload16 | Uload32 | Sload32 | AtomicLoad => {
            Wants::listed(&[Want::Addr])
        }
        Store | Istore8 | Istore16 | Istore32 | AtomicStore => Wants::listed(&[same, Want::Addr]),
        AtomicRmw => Wants::listed(&[Want::Addr, same]),
        AtomicCas => Wants::listed(&[Want::Addr, same, same]),
        // Everything else takes operands of the controlling type (iadd, icmp, fma, …).
        _ => Wants::AllSame(same),
    }
}

/// Type errors of `inst` other than branch arguments, as messages.
pub(crate) fn inst_type_errors(func: &Function, inst: Inst, out: &mut Vec<String>) {
    let data = func.dfg.inst(inst);
    let op = data.opcode();
    if op.is_call() {
        call_type_errors(func, inst, out);
        return;
    }
    let Some(ctrl) = controlling_type(func, inst) else {
        if op.ctrl() == Ctrl::Suffix {
            out.push(format!("`{op}` needs a result to carry its type"));
        }
        return;
    };
    let set = ctrl_type_set(op);
    if !set.contains(ctrl) {
        out.push(format!(
            "`{op}` cannot have controlling type {ctrl}; it needs {}",
            set.describe()
        ));
        return;
    }
    let results = func.dfg.inst_results(inst);
    let want = result_types(op, ctrl);
    let want = want.as_slice();
    let results_ok = results.len() == want.len()
        && results
            .iter()
            .zip(want)
            .all(|(&r, &t)| value_type(func, r).is_none_or(|rt| rt == t));
    if !results_ok {
        let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
        out.push(format!(
            "`{op}` with controlling type {ctrl} produces ({}), but the results are {}",
            want.join(", "),
            list_types(func, results)
        ));
    }
    let wants = operand_wants(data, ctrl);
    for (i, &v) in data.fixed_args().iter().enumerate() {
        let Some(w) = wants.get(i) else { break };
        if let Some(t) = value_type(func, v) {
            if !w.accepts(t) {
                out.push(format!(
                    "operand {i} ({v}) of `{op}` has type {t}; it needs {}",
                    w.describe()
                ));
            }
        }
    }
    match *data {
        InstructionData::MultiAry {
            opcode: Opcode::Return,
            args,
        } => {
            let vals = func.dfg.pool.get(args);
            let sig = &func.signature.returns;
            if !types_match(func, vals, sig) {
                out.push(format!(
                    "`return` passes {} but the function returns {}",
                    list_types(func, vals),
                    abi_types(sig)
                ));
            }
        }
        InstructionData::UnaryGlobalValue { global_value, .. } => {
            match func.global_values.get(global_value) {
                Some(GlobalValueData::Symbol { .. }) if ctrl != Type::I64 => {
                    out.push(format!(
                        "{global_value} is a symbol address; `global_value` must be i64, not {ctrl}"
                    ));
                }
                Some(GlobalValueData::VMContext) if !Want::Addr.accepts(ctrl) => {
                    out.push(format!(
                        "{global_value} is the vmctx pointer; `global_value` must be i32 or i64, not {ctrl}"
                    ));
                }
                Some(
                    GlobalValueData::Load { global_type, .. }
                    | GlobalValueData::IAddImm { global_type, .. },
                ) if *global_type != ctrl => {
                    out.push(format!(
                        "{global_value} has type {global_type}, but `global_value` produces {ctrl}"
                    ));
                }
                _ => {}
            }
        }
        InstructionData::BinaryImm8 { imm, .. } | InstructionData::TernaryImm8 { imm, .. }
            if u32::from(imm) >= ctrl.lane_count() =>
        {
            out.push(format!(
                "lane index {imm} of `{op}` is out of range: {ctrl} has lanes 0 to {}",
                ctrl.lane_count() - 1
            ));
        }
        InstructionData::Shuffle { mask, .. } => match func.dfg.immediates.get(mask) {
            None => out.push(format!("`shuffle` names the missing lane mask {mask}")),
            Some(&bits) => {
                let lanes = 2 * ctrl.lane_count();
                for (i, byte) in bits.to_le_bytes().into_iter().enumerate() {
                    if u32::from(byte) >= lanes {
                        out.push(format!(
                            "`shuffle` mask byte {i} selects lane {byte}; the two operands have lanes 0 to {}",
                            lanes - 1
                        ));
                        break;
                    }
                }
            }
        },
        InstructionData::UnaryConst { constant, .. } => {
            let want_bytes = match op {
                Opcode::F128const => 16,
                _ => ctrl.bytes(),
            };
            match func.dfg.constants.get(constant) {
                None => out.push(format!("`{op}` names the missing constant {constant}")),
                Some(data) if u32::from(data.bytes) != want_bytes => out.push(format!(
                    "{constant} has {} bytes, but `{op}` of {} needs {want_bytes}",
                    data.bytes,
                    if op == Opcode::F128const {
                        Type::F128
                    } else {
                        ctrl
                    }
                )),
                Some(_) => {}
            }
        }
        _ => {}
    }
}

/// The float vector with the lane count and lane width of `ty` (`i32x4` → `f32x4`).
fn float_lanes(ty: Type) -> Type {
    let lane = match ty.lane_bits() {
        16 => Type::F16,
        32 => Type::F32,
        64 => Type::F64,
        128 => Type::F128,
        _ => return Type::INVALID,
    };
    ty.with_lane(lane).unwrap_or(Type::INVALID)
}

fn types_match(func: &Function, vals: &[Value], params: &[AbiParam]) -> bool {
    vals.len() == params.len()
        && vals
            .iter()
            .zip(params)
            .all(|(&v, p)| value_type(func, v).is_none_or(|t| t == p.value_type))
}

/// Call arguments and results against the callee's signature.
fn call_type_errors(func: &Function, inst: Inst, out: &mut Vec<String>) {
    let data = func.dfg.inst(inst);
    let op = data.opcode();
    let Some(sig) = func.call_signature(data) else {
        return; // a dangling reference, reported by the entity checks
    };
    let list = func.dfg.inst_value_list(inst);
    let args = match data {
        InstructionData::CallIndirect { .. } | InstructionData::TryCallIndirect { .. } => {
            let Some((&callee, rest)) = list.split_first() else {
                out.push(format!("`{op}` needs a callee address operand"));
                return;
            };
            if let Some(t) = value_type(func, callee) {
                if !Want::Addr.accepts(t) {
                    out.push(format!(
                        "the callee address {callee} has type {t}; it needs {}",
                        Want::Addr.describe()
                    ));
                }
            }
            rest
        }
        _ => list,
    };
    if !types_match(func, args, &sig.params) {
        out.push(format!(
            "`{op}` passes {} but the signature takes {}",
            list_types(func, args),
            abi_types(&sig.params)
        ));
    }
    if op.is_return_call() {
        tail_call_errors(func, op, sig, out);
        return;
    }
    let mut results = func.dfg.inst_results(inst);
    if let Some(table) = data.exception_table() {
        try_call_errors(func, op, sig, table, out);
        let payloads = crate::function::EXCEPTION_PAYLOAD_TYPES.len();
        results = &results[..results.len().saturating_sub(payloads)];
    }
    if !types_match(func, results, &sig.returns) {
        out.push(format!(
            "`{op}` has results {} but the signature returns {}",
            list_types(func, results),
            abi_types(&sig.returns)
        ));
    }
}

/// A `try_call`'s table: the signature written must be the callee's, and the payload results
/// must be there with their types.
fn try_call_errors(
    func: &Function,
    op: Opcode,
    callee: &Signature,
    table: crate::entity::ExceptionTable,
    out: &mut Vec<String>,
) {
    let Some(et) = func.exception_tables.get(table) else {
        return; // reported by the entity checks
    };
    if op == Opcode::TryCall && func.signatures.get(et.sig) != Some(callee) {
        out.push(format!(
            "`{op}` names {}, which is not the callee's signature",
            et.sig
        ));
    }
    if et.tags.len() != et.handlers.len() {
        out.push(format!(
            "`{op}` has {} handler tags for {} handlers",
            et.tags.len(),
            et.handlers.len()
        ));
    }
}

/// A tail call against its function (as Cranelift checks it): both use the `tail`
/// convention, and the callee returns exactly the caller's result types, which it returns
/// to the caller's caller in the caller's place.
fn tail_call_errors(func: &Function, op: Opcode, callee: &Signature, out: &mut Vec<String>) {
    let caller = &func.signature;
    if caller.call_conv != CallConv::Tail || callee.call_conv != CallConv::Tail {
        out.push(format!(
            "`{op}` needs the `tail` calling convention in both the function (`{}`) and \
             the callee (`{}`)",
            caller.call_conv.name(),
            callee.call_conv.name()
        ));
    }
    let same = caller.returns.len() == callee.returns.len()
        && caller
            .returns
            .iter()
            .zip(&callee.returns)
            .all(|(a, b)| a.value_type == b.value_type);
    if !same {
        out.push(format!(
            "`{op}` callee returns {} but the function returns {}",
            abi_types(&callee.returns),
            abi_types(&caller.returns)
        ));
    }
}

/// How a branch argument is written: `retN` / `exnN` for a result of the `try_call` `inst`.
fn arg_name(func: &Function, inst: Inst, a: Value) -> String {
    let results = func.dfg.inst_results(inst);
    let rets = results
        .len()
        .saturating_sub(crate::function::EXCEPTION_PAYLOAD_TYPES.len());
    match results.iter().position(|&r| r == a) {
        Some(n) if n < rets => format!("ret{n}"),
        Some(n) => format!("exn{}", n - rets),
        None => a.to_string(),
    }
}

/// Branch arguments against the destinations' parameters (count and types).
pub(crate) fn branch_arg_errors(func: &Function, inst: Inst, out: &mut Vec<String>) {
    let data = func.dfg.inst(inst);
    let calls: Vec<_> = match *data {
        InstructionData::BranchTable { table, .. } => match func.jump_tables.get(table) {
            Some(jt) => jt.all_branches().copied().collect(),
            None => return,
        },
        InstructionData::TryCall { table, .. } | InstructionData::TryCallIndirect { table, .. } => {
            match func.exception_tables.get(table) {
                Some(et) => et.all_branches().copied().collect(),
                None => return,
            }
        }
        _ => data.branch_destinations().to_vec(),
    };
    let entry = func.layout.entry_block();
    for call in calls {
        let dest = call.block;
        if !func.dfg.block_is_valid(dest) {
            continue;
        }
        if Some(dest) == entry {
            // As in Cranelift: the entry block's parameters are the function's arguments, so
            // no edge may enter it; later stages (lowering, allocation) rely on that.
            out.push(format!(
                "branch to the entry block {dest}: the entry block cannot be a branch target \
                 (put the loop in a new block that the entry block jumps to)"
            ));
            continue;
        }
        let args = func.dfg.block_call_args(&call);
        let params = func.dfg.block_params(dest);
        if args.len() != params.len() {
            out.push(format!(
                "branch to {dest} passes {} argument(s), but {dest} has {} parameter(s)",
                args.len(),
                params.len()
            ));
            continue;
        }
        for (i, (&a, &p)) in args.iter().zip(params).enumerate() {
            if let (Some(at), Some(pt)) = (value_type(func, a), value_type(func, p)) {
                if at != pt {
                    let a = arg_name(func, inst, a);
                    out.push(format!(
                        "branch to {dest} passes {a} of type {at} as parameter {i} ({p}), which has type {pt}"
                    ));
                }
            }
        }
    }
}
