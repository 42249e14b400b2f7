//! Structural checks: the layout, value definitions and alias chains, terminators, and the
//! entry block's parameters.

use super::Verifier;
use crate::dfg::{ValueDef, MAX_VALUES_PER_DEF};
use crate::entity::{EntityRef, Inst, Value};

impl Verifier<'_> {
    /// Check the layout and record layout ranks. Returns false when the layout is unusable
    /// (edits queued for compaction, or naming blocks or instructions that do not exist);
    /// nothing else is checked then, because every later check walks the layout. Removed
    /// instructions (tombstones) are fine: the walk skips them, as every reader does.
    pub(super) fn check_layout(&mut self) -> bool {
        let func = self.func;
        if func.layout.has_queued_edits() {
            self.report_func(
                "the layout has queued insertions or block edits; call Function::compact \
                 before verifying"
                    .into(),
            );
            return false;
        }
        self.block_rank = vec![0; func.dfg.num_blocks()];
        self.inst_rank = vec![0; func.dfg.num_insts()];
        let mut ok = true;
        let mut next_inst_rank = 1u32;
        for (rank, &b) in func.layout.blocks().iter().enumerate() {
            match self.block_rank.get_mut(b.index()) {
                None => {
                    self.report_func(format!("the layout names {b}, which does not exist"));
                    ok = false;
                    continue;
                }
                Some(r) if *r != 0 => {
                    self.report_func(format!("{b} appears twice in the layout"));
                    ok = false;
                    continue;
                }
                Some(r) => *r = rank as u32 + 1,
            }
            for inst in func.layout.block_insts(b) {
                match self.inst_rank.get_mut(inst.index()) {
                    None => {
                        self.report_block(b, format!("{inst} is placed but does not exist"));
                        ok = false;
                    }
                    Some(r) if *r != 0 => {
                        self.report_block(b, format!("{inst} is placed twice"));
                        ok = false;
                    }
                    Some(r) => {
                        *r = next_inst_rank;
                        next_inst_rank += 1;
                        if func.layout.inst_block(inst) != Some(b) {
                            self.report_inst(
                                inst,
                                format!("the layout disagrees on which block holds {inst}"),
                            );
                        }
                    }
                }
            }
        }
        ok
    }

    /// Every value's definition agrees with the list holding it; alias chains resolve.
    pub(super) fn check_value_defs(&mut self) {
        let func = self.func;
        let dfg = &func.dfg;
        // Parameter and result numbers are 16-bit: past the limit they wrap, so say that
        // once rather than a misleading mismatch per value.
        let mut over_limit = false;
        for &b in func.layout.blocks() {
            let n = dfg.block_params(b).len();
            if n > MAX_VALUES_PER_DEF {
                self.report_block(
                    b,
                    format!("{b} has {n} parameters; at most {MAX_VALUES_PER_DEF} are supported"),
                );
                over_limit = true;
            }
        }
        for n in 0..dfg.num_insts() {
            let inst = Inst::new(n);
            let results = dfg.inst_results(inst).len();
            if results > MAX_VALUES_PER_DEF {
                self.report_inst(
                    inst,
                    format!("{results} results; at most {MAX_VALUES_PER_DEF} are supported"),
                );
                over_limit = true;
            }
        }
        if over_limit {
            return;
        }
        for n in 0..dfg.num_values() {
            let v = Value::new(n);
            match dfg.value_def(v) {
                ValueDef::Result(inst, i) => {
                    let ok = dfg.inst_is_valid(inst)
                        && dfg.inst_results(inst).get(i as usize) == Some(&v);
                    if !ok {
                        self.report_func(format!(
                            "{v} claims to be result {i} of {inst}, which does not list it"
                        ));
                    }
                }
                ValueDef::Param(b, i) => {
                    let ok =
                        dfg.block_is_valid(b) && dfg.block_params(b).get(i as usize) == Some(&v);
                    if !ok {
                        self.report_func(format!(
                            "{v} claims to be parameter {i} of {b}, which does not list it"
                        ));
                    }
                }
                ValueDef::Alias(to) => match self.resolve(v) {
                    None if !dfg.value_is_valid(to) => {
                        self.report_func(format!("{v} is an alias of {to}, which does not exist"))
                    }
                    None => self.report_func(format!(
                        "the alias chain of {v} is cyclic or leads to a value that does not exist"
                    )),
                    Some(r) => {
                        if matches!(dfg.value_def(r), ValueDef::Unused) {
                            self.report_func(format!(
                                "{v} is an alias of {r}, which is not defined"
                            ));
                        } else if dfg.value_type(r) != dfg.value_type(v) {
                            self.report_func(format!(
                                "{v} has type {} but is an alias of {r} of type {}",
                                dfg.value_type(v),
                                dfg.value_type(r)
                            ));
                        }
                    }
                },
                ValueDef::Unused => {}
            }
        }
        // The other direction: each listed result or parameter points back at its list. With
        // the loop above this means no value is listed in two places.
        for &b in func.layout.blocks() {
            for (i, &p) in dfg.block_params(b).iter().enumerate() {
                let def = dfg.value_is_valid(p).then(|| dfg.value_def(p));
                match def {
                    None => self.report_block(b, format!("parameter {p} does not exist")),
                    Some(ValueDef::Param(pb, pi)) if pb == b && pi as usize == i => {}
                    Some(ValueDef::Alias(_)) => {}
                    Some(other) => self.report_block(b, describe_double_def(p, other)),
                }
            }
            for inst in func.layout.block_insts(b) {
                for (i, &r) in dfg.inst_results(inst).iter().enumerate() {
                    let def = dfg.value_is_valid(r).then(|| dfg.value_def(r));
                    match def {
                        None => self.report_inst(inst, format!("result {r} does not exist")),
                        Some(ValueDef::Result(ri, n)) if ri == inst && n as usize == i => {}
                        Some(ValueDef::Alias(_)) => {}
                        Some(other) => self.report_inst(inst, describe_double_def(r, other)),
                    }
                }
            }
        }
    }

    /// Each block ends with exactly one terminator and has no other.
    pub(super) fn check_terminators(&mut self) {
        let func = self.func;
        for &b in func.layout.blocks() {
            let Some(last) = func.layout.last_inst(b) else {
                self.report_block(
                    b,
                    format!("{b} is empty; a block must end with a terminator"),
                );
                continue;
            };
            for inst in func.layout.block_insts(b) {
                let op = func.dfg.inst(inst).opcode();
                if inst != last && op.is_terminator() {
                    self.report_inst(
                        inst,
                        format!("terminator `{op}` before the end of {b}; only the last instruction may be a terminator"),
                    );
                }
            }
            let op = func.dfg.inst(last).opcode();
            if !op.is_terminator() {
                self.report_inst(
                    last,
                    format!("{b} does not end with a terminator (its last instruction is `{op}`)"),
                );
            }
        }
    }

    /// The entry block's parameters match the signature's parameters.
    pub(super) fn check_entry_params(&mut self) {
        let func = self.func;
        let Some(entry) = func.layout.entry_block() else {
            return;
        };
        let params = func.dfg.block_params(entry);
        let sig = &func.signature.params;
        if params.len() != sig.len() {
            self.report_block(
                entry,
                format!(
                    "entry block {entry} has {} parameter(s) but the signature has {}",
                    params.len(),
                    sig.len()
                ),
            );
            return;
        }
        for (i, (&p, abi)) in params.iter().zip(sig).enumerate() {
            if !func.dfg.value_is_valid(p) {
                continue; // reported by check_value_defs
            }
            let ty = func.dfg.value_type(p);
            if ty != abi.value_type {
                self.report_block(
                    entry,
                    format!(
                        "entry block parameter {i} ({p}) has type {ty} but the signature says {}",
                        abi.value_type
                    ),
                );
            }
        }
    }
}

fn describe_double_def(v: Value, other: ValueDef) -> String {
    match other {
        ValueDef::Result(i, n) => {
            format!("{v} is defined more than once (also as result {n} of {i})")
        }
        ValueDef::Param(b, n) => {
            format!("{v} is defined more than once (also as parameter {n} of {b})")
        }
        ValueDef::Alias(to) => format!("{v} is listed as a definition but is an alias of {to}"),
        ValueDef::Unused => format!("{v} is listed as a definition but is marked unused"),
    }
}
