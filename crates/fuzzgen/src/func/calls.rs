//! Calls to the module's later functions: direct `call`, or `func_addr` + `call_indirect`
//! (rule addr-opaque: the address feeds only the call). A call is charged its callee's
//! dynamic cost at the current loop multiplier and is skipped when that would exceed the
//! budget (rule counted-loops).

use kestrel_ir::builder::FunctionBuilder;
use kestrel_ir::{ExtFuncData, FuncRef, FunctionName, Opcode, SigRef, Signature, Type};

use super::{FuncGen, OrBug};
use crate::draw::Draw;

/// A function this one may call.
pub(crate) struct Callee {
    pub name: FunctionName,
    pub sig: Signature,
    /// Its estimated dynamic instruction count per call.
    pub cost: u64,
}

/// A callee as imported into the function being built.
pub(crate) struct CalleeRef {
    func_ref: FuncRef,
    sig_ref: SigRef,
    params: Vec<Type>,
    cost: u64,
}

/// Import every callee's signature and name.
pub(super) fn import(b: &mut FunctionBuilder, callees: Vec<Callee>) -> Vec<CalleeRef> {
    callees
        .into_iter()
        .map(|c| {
            let params = c.sig.params.iter().map(|p| p.value_type).collect();
            let sig_ref = b.import_signature(c.sig);
            let func_ref = b.import_function(ExtFuncData {
                name: c.name,
                signature: sig_ref,
                colocated: true,
            });
            CalleeRef {
                func_ref,
                sig_ref,
                params,
                cost: c.cost,
            }
        })
        .collect()
}

impl FuncGen<'_, '_> {
    pub(super) fn call(&mut self) {
        let i = self.u.below(self.callees.len());
        let cost = self.callees[i].cost.saturating_add(2) * self.mult;
        if self.cost + cost > self.budget {
            return;
        }
        let indirect = self.u.chance(30)
            && self.ok(Opcode::FuncAddr, Type::I64)
            && self.ok(Opcode::CallIndirect, Type::I64);
        if !indirect && !self.ok(Opcode::Call, Type::INVALID) {
            return;
        }
        let (func_ref, sig_ref) = (self.callees[i].func_ref, self.callees[i].sig_ref);
        // The address is taken before the arguments, so it lives across their computation.
        let callee_addr = indirect.then(|| self.b.ins().func_addr(Type::I64, func_ref).bug());
        let params = self.callees[i].params.clone();
        let args: Vec<_> = params.iter().map(|&t| self.get(t)).collect();
        let inst = match callee_addr {
            Some(addr) => self.b.ins().call_indirect(sig_ref, addr, &args).bug(),
            None => self.b.ins().call(func_ref, &args).bug(),
        };
        self.cost += cost;
        let results = self.b.inst_results(inst).to_vec();
        for r in results {
            self.put(r);
        }
    }
}
