//! The module driver: plan every function's signature, generate the functions from the last
//! (a leaf) to the entry so each caller knows its callees' dynamic cost, then draw the
//! entry's argument sets.

use arbitrary::Unstructured;
use kestrel_ir::{AbiParam, CallConv, FunctionName, Signature, Type};

use crate::draw::Draw;
use crate::func::{Callee, FuncGen, FuncSpec};
use crate::ops::{types_in, Ctx};
use crate::values::data_value;
use crate::{GenConfig, TestCase};

/// Name of the `i`-th function of a generated module.
fn func_name(i: usize) -> FunctionName {
    FunctionName::Named(format!("f{i}"))
}

pub(crate) fn generate_module(
    u: &mut Unstructured,
    cfg: &GenConfig,
    ctx: &Ctx,
) -> arbitrary::Result<TestCase> {
    let n = u.range(1, cfg.max_functions.max(1));
    let sigs: Vec<Signature> = (0..n).map(|i| signature(u, cfg, ctx, i == 0)).collect();
    // The entry gets the biggest share of the instructions.
    let weights: Vec<usize> = (0..n).map(|i| if i == 0 { 3 } else { 2 }).collect();
    let total_weight: usize = weights.iter().sum();
    let mut funcs = Vec::with_capacity(n);
    let mut costs = vec![0u64; n];
    for i in (0..n).rev() {
        let callees: Vec<Callee> = (i + 1..n)
            .map(|j| Callee {
                name: func_name(j),
                sig: sigs[j].clone(),
                cost: costs[j],
            })
            .collect();
        let target = cfg.target_insts * weights[i] / total_weight;
        let spec = FuncSpec {
            name: func_name(i),
            sig: sigs[i].clone(),
            callees,
            target,
            is_entry: i == 0,
        };
        let gen = FuncGen::new(u, cfg, ctx, spec);
        let (func, cost) = gen.run();
        costs[i] = cost;
        funcs.push(func);
    }
    funcs.reverse();
    let params: Vec<Type> = sigs[0].params.iter().map(|p| p.value_type).collect();
    let args = (0..cfg.arg_sets)
        .map(|_| params.iter().map(|&t| data_value(u, t)).collect())
        .collect();
    Ok(TestCase {
        functions: funcs,
        args,
    })
}

/// A random signature over usable types: 0–6 parameters (sometimes up to 10), 1–4 results
/// (sometimes 5–8, which need the return area; the entry rarely has none).
fn signature(u: &mut Unstructured, cfg: &GenConfig, ctx: &Ctx, entry: bool) -> Signature {
    let mut types = [Type::INVALID; 7];
    let n_types = types_in(ctx.usable, &mut types);
    let call_conv = if entry {
        CallConv::SystemV
    } else {
        match u.below(8) {
            0 => CallConv::Fast,
            1 if cfg.cold_convention => CallConv::Cold,
            _ => CallConv::SystemV,
        }
    };
    let mut sig = Signature::new(call_conv);
    let n_params = if u.chance(10) {
        u.range(7, 10)
    } else {
        u.range(0, 6)
    };
    let n_returns = if u.chance(12) {
        u.range(5, 8)
    } else if entry && u.chance(3) {
        0
    } else {
        u.range(1, 4)
    };
    let all_i64 = u.chance(30);
    for _ in 0..n_params {
        sig.params.push(AbiParam::new(types[u.below(n_types)]));
    }
    for _ in 0..n_returns {
        let t = if all_i64 && ctx.is_usable(Type::I64) {
            Type::I64
        } else {
            types[u.below(n_types)]
        };
        sig.returns.push(AbiParam::new(t));
    }
    sig
}
