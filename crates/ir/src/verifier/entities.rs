//! Entity references: everything an instruction or preamble entity names must exist.

use super::Verifier;
use crate::dfg::ValueDef;
use crate::entity::{EntityRef, GlobalValue, Inst, Value};
use crate::function::GlobalValueData;
use crate::immediates::{AliasRegion, MemFlags};
use crate::instructions::{BlockCall, InstructionData};

impl Verifier<'_> {
    /// External functions name existing signatures; global values name existing bases, and
    /// their base chains end (a cycle would make `global_value` loop forever).
    pub(super) fn check_preamble(&mut self) {
        let func = self.func;
        for (fref, ext) in func.ext_funcs.iter() {
            if !func.signatures.is_valid(ext.signature) {
                self.report_func(format!(
                    "{fref} uses signature {}, which does not exist",
                    ext.signature
                ));
            }
        }
        if let Some(gv) = func.stack_limit {
            if !func.global_values.is_valid(gv) {
                self.report_func(format!("the stack limit is {gv}, which does not exist"));
            }
        }
        for (gv, data) in func.global_values.iter() {
            if let GlobalValueData::Load { flags, .. } = data {
                if let Some(region) = self.undeclared_region(*flags) {
                    self.report_func(format!("{gv} names {region}, which is not declared"));
                }
            }
        }
        for (gv, _) in func.global_values.iter() {
            let mut cur = gv;
            for _ in 0..=func.global_values.len() {
                match func.global_values.get(cur) {
                    None => {
                        self.report_func(format!("{gv} is based on {cur}, which does not exist"));
                        break;
                    }
                    Some(GlobalValueData::VMContext | GlobalValueData::Symbol { .. }) => break,
                    Some(GlobalValueData::Load { base, .. })
                    | Some(GlobalValueData::IAddImm { base, .. }) => cur = *base,
                }
                if cur == gv {
                    self.report_func(format!("{gv} is defined in terms of itself"));
                    break;
                }
            }
        }
    }

    /// Check every reference of every placed instruction. Returns, per instruction number,
    /// whether all its references are valid; later checks skip the others.
    pub(super) fn check_entities(&mut self) -> Vec<bool> {
        let func = self.func;
        let mut ok = vec![false; func.dfg.num_insts()];
        for &b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                ok[inst.index()] = self.check_inst_refs(inst);
            }
        }
        ok
    }

    fn check_inst_refs(&mut self, inst: Inst) -> bool {
        let func = self.func;
        let data = func.dfg.inst(inst);
        let op = data.opcode();
        if data.format() != op.format() {
            self.report_inst(
                inst,
                format!(
                    "`{op}` needs operands of format {:?}, but they are of format {:?}",
                    op.format(),
                    data.format()
                ),
            );
            return false;
        }
        let mut ok = true;
        if let Some(region) = data.mem_flags().and_then(|f| self.undeclared_region(f)) {
            self.report_inst(inst, format!("{region} is not declared in the preamble"));
            ok = false;
        }
        for v in data.arguments(&func.dfg.pool) {
            ok &= self.check_use(inst, v);
        }
        for &r in func.dfg.inst_results(inst) {
            ok &= func.dfg.value_is_valid(r); // reported by check_value_defs
        }
        match *data {
            InstructionData::BranchTable { table, .. } => match func.jump_tables.get(table) {
                None => {
                    self.report_inst(inst, format!("{table} does not exist"));
                    ok = false;
                }
                Some(jt) => {
                    for call in jt.all_branches() {
                        ok &= self.check_block_call(inst, call);
                    }
                }
            },
            InstructionData::Call { func_ref, .. } | InstructionData::FuncAddr { func_ref, .. } => {
                match func.ext_funcs.get(func_ref) {
                    None => {
                        self.report_inst(inst, format!("{func_ref} does not exist"));
                        ok = false;
                    }
                    // A dangling signature is reported once, by check_preamble.
                    Some(ext) => ok &= func.signatures.is_valid(ext.signature),
                }
            }
            InstructionData::CallIndirect { sig_ref, .. } => {
                if !func.signatures.is_valid(sig_ref) {
                    self.report_inst(inst, format!("{sig_ref} does not exist"));
                    ok = false;
                }
            }
            InstructionData::TryCall { table, .. }
            | InstructionData::TryCallIndirect { table, .. } => {
                let sig = match *data {
                    InstructionData::TryCall { func_ref, .. } => match func.ext_funcs.get(func_ref)
                    {
                        None => {
                            self.report_inst(inst, format!("{func_ref} does not exist"));
                            None
                        }
                        Some(ext) => Some(ext.signature),
                    },
                    InstructionData::TryCallIndirect { sig_ref, .. } => Some(sig_ref),
                    _ => None,
                };
                match sig {
                    Some(s) if !func.signatures.is_valid(s) => {
                        self.report_inst(inst, format!("{s} does not exist"));
                        ok = false;
                    }
                    None => ok = false,
                    Some(_) => {}
                }
                match func.exception_tables.get(table) {
                    None => {
                        self.report_inst(inst, format!("{table} does not exist"));
                        ok = false;
                    }
                    Some(et) => {
                        if !func.signatures.is_valid(et.sig) {
                            self.report_inst(inst, format!("{} does not exist", et.sig));
                            ok = false;
                        }
                        for call in et.all_branches() {
                            ok &= self.check_block_call(inst, call);
                        }
                    }
                }
            }
            InstructionData::StackLoad { stack_slot, .. }
            | InstructionData::StackStore { stack_slot, .. } => {
                if !func.stack_slots.is_valid(stack_slot) {
                    self.report_inst(inst, format!("{stack_slot} does not exist"));
                    ok = false;
                }
            }
            InstructionData::UnaryGlobalValue { global_value, .. } => {
                ok &= self.check_global_value(inst, global_value);
            }
            _ => {
                for call in data.branch_destinations() {
                    ok &= self.check_block_call(inst, call);
                }
            }
        }
        ok
    }

    /// The region `flags` name, if it is a `regionN` the function does not declare.
    fn undeclared_region(&self, flags: MemFlags) -> Option<AliasRegion> {
        match flags.alias_region {
            Some(AliasRegion::Declared(n)) if n as usize >= self.func.alias_regions.len() => {
                flags.alias_region
            }
            _ => None,
        }
    }

    fn check_global_value(&mut self, inst: Inst, gv: GlobalValue) -> bool {
        if self.func.global_values.is_valid(gv) {
            true
        } else {
            self.report_inst(inst, format!("{gv} does not exist"));
            false
        }
    }

    fn check_block_call(&mut self, inst: Inst, call: &BlockCall) -> bool {
        let func = self.func;
        let mut ok = true;
        let dest = call.block;
        if !func.dfg.block_is_valid(dest) {
            self.report_inst(inst, format!("branch to {dest}, which does not exist"));
            ok = false;
        } else if !func.layout.is_block_inserted(dest) {
            self.report_inst(
                inst,
                format!("branch to {dest}, which is not in the layout"),
            );
            ok = false;
        }
        for &v in func.dfg.block_call_args(call) {
            ok &= self.check_use(inst, v);
        }
        ok
    }

    /// A used value exists and resolves to a definition.
    fn check_use(&mut self, inst: Inst, v: Value) -> bool {
        let dfg = &self.func.dfg;
        if !dfg.value_is_valid(v) {
            self.report_inst(inst, format!("uses {v}, which does not exist"));
            return false;
        }
        match self.resolve(v) {
            None => {
                self.report_inst(
                    inst,
                    format!("uses {v}, whose alias chain does not resolve"),
                );
                false
            }
            Some(r) if matches!(dfg.value_def(r), ValueDef::Unused) => {
                let through = if r == v {
                    String::new()
                } else {
                    format!(" (through alias {r})")
                };
                self.report_inst(inst, format!("uses {v}, which is never defined{through}"));
                false
            }
            Some(_) => true,
        }
    }
}
