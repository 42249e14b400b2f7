//! What a campaign exercised: opcodes in the generated cases and lowering rules fired by the
//! x86-64 backend and, in campaigns with the AArch64 oracle, by the AArch64 backend, so
//! untested rules and opcodes are visible. Rules written in Rust rather than in the
//! `.rules` files (calls, returns, memory, `br_table`) are not in the rule lists.

use kestrel_codegen::machinst::CompiledCode;
use kestrel_fuzzgen::TestCase;
use kestrel_ir::Opcode;
use kestrel_opt::simplification_rules;

/// The lowering rules of the native oracles' target (the host's ISA).
fn lowering_rules() -> &'static [&'static str] {
    kestrel_codegen::isa::host().map_or(&[], |b| b.finish().lowering_rules())
}

/// The lowering rules of the `aarch64` object oracle's target.
fn aarch64_lowering_rules() -> &'static [&'static str] {
    kestrel_codegen::isa::lookup("aarch64").map_or(&[], |b| b.finish().lowering_rules())
}

/// Counters accumulated over a campaign.
#[derive(Clone, Debug)]
pub struct Coverage {
    /// Instructions seen per opcode, indexed like [`Opcode::ALL`].
    opcode_counts: Vec<u64>,
    /// Compilations in which each lowering rule fired, indexed like [`lowering_rules`].
    rule_counts: Vec<u64>,
    /// Firings of each mid-end rule, indexed like [`simplification_rules`] (only campaigns
    /// with the mid-end's oracles record them).
    simplify_counts: Vec<u64>,
    /// Compilations in which each AArch64 lowering rule fired, indexed like the AArch64
    /// backend's rule list (empty until an AArch64 compilation is recorded).
    aarch64_rule_counts: Vec<u64>,
    /// Branches the mid-end if-converted (only campaigns with the mid-end's oracles).
    if_converted: u64,
}

impl Default for Coverage {
    fn default() -> Self {
        Coverage {
            opcode_counts: vec![0; Opcode::ALL.len()],
            rule_counts: vec![0; lowering_rules().len()],
            simplify_counts: vec![0; simplification_rules().len()],
            aarch64_rule_counts: Vec::new(),
            if_converted: 0,
        }
    }
}

impl Coverage {
    /// Count the opcodes of a generated case (once per case, before any oracle runs).
    pub fn record_case(&mut self, case: &TestCase) {
        for f in &case.functions {
            for &block in f.layout.blocks() {
                for inst in f.layout.block_insts(block) {
                    let op = f.dfg.inst(inst).opcode();
                    self.opcode_counts[opcode_index(op)] += 1;
                }
            }
        }
    }

    /// Note what one compilation fired.
    pub fn record_compiled(&mut self, code: &CompiledCode) {
        for &rule in &code.rules_fired {
            if let Some(n) = self.rule_counts.get_mut(usize::from(rule)) {
                *n += 1;
            }
        }
    }

    /// Note the rules one AArch64 compilation fired (indices into the AArch64 rule list).
    pub fn record_aarch64_rules(&mut self, fired: &[u16]) {
        let counts = &mut self.aarch64_rule_counts;
        if counts.is_empty() {
            counts.resize(aarch64_lowering_rules().len(), 0);
        }
        for &rule in fired {
            if let Some(n) = counts.get_mut(usize::from(rule)) {
                *n += 1;
            }
        }
    }

    /// AArch64 lowering rules `(fired, total)`, if an AArch64 compilation was recorded.
    pub fn aarch64_rule_summary(&self) -> Option<(usize, usize)> {
        let hit = self.aarch64_rule_counts.iter().filter(|&&n| n > 0).count();
        (!self.aarch64_rule_counts.is_empty()).then_some((hit, self.aarch64_rule_counts.len()))
    }

    /// Note the simplification rules one optimization fired (counts per rule).
    pub fn record_simplified(&mut self, fired: &[u32]) {
        for (n, &k) in self.simplify_counts.iter_mut().zip(fired) {
            *n += u64::from(k);
        }
    }

    /// Note the branches one optimization if-converted.
    pub fn record_if_converted(&mut self, branches: usize) {
        self.if_converted += branches as u64;
    }

    /// Branches if-converted over the campaign.
    pub fn if_converted(&self) -> u64 {
        self.if_converted
    }

    /// Mid-end rules `(fired, total)`, if any optimization was recorded.
    pub fn simplify_summary(&self) -> Option<(usize, usize)> {
        let hit = self.simplify_counts.iter().filter(|&&n| n > 0).count();
        (hit > 0).then_some((hit, self.simplify_counts.len()))
    }

    /// The named mid-end rules that never fired (every rule of `simplify.rules` but the
    /// helpers, which have no name).
    pub fn unfired_simplifications(&self) -> Vec<&'static str> {
        let rules = simplification_rules().iter().zip(&self.simplify_counts);
        rules
            .filter(|&(name, &n)| n == 0 && name.contains(' '))
            .map(|(&name, _)| name)
            .collect()
    }

    /// `(exercised, total)` over all opcodes.
    pub fn opcode_summary(&self) -> (usize, usize) {
        let hit = self.opcode_counts.iter().filter(|&&n| n > 0).count();
        (hit, self.opcode_counts.len())
    }

    /// Lowering rules `(fired, total)`.
    pub fn rule_summary(&self) -> Option<(usize, usize)> {
        let hit = self.rule_counts.iter().filter(|&&n| n > 0).count();
        Some((hit, self.rule_counts.len()))
    }

    /// The full report: every opcode and rule with its count, the unexercised ones first.
    pub fn report(&self) -> String {
        let mut out = String::new();
        let (hit, total) = self.opcode_summary();
        out += &format!("opcodes exercised: {hit}/{total}\n");
        let mut rows: Vec<(u64, &str)> = Opcode::ALL
            .iter()
            .map(|&op| (self.opcode_counts[opcode_index(op)], op.name()))
            .collect();
        rows.sort_by_key(|&(n, name)| (n, name));
        for (n, name) in rows {
            out += &format!("  {n:>10}  {name}\n");
        }
        if let Some((hit, total)) = self.rule_summary() {
            out += &format!(
                "lowering rules fired: {hit}/{total} (compilations in which each fired)\n"
            );
            out += &rule_rows(lowering_rules(), &self.rule_counts);
        }
        if let Some((hit, total)) = self.aarch64_rule_summary() {
            out += &format!(
                "aarch64 lowering rules fired: {hit}/{total} (compilations in which each fired)\n"
            );
            out += &rule_rows(aarch64_lowering_rules(), &self.aarch64_rule_counts);
        }
        if let Some((hit, total)) = self.simplify_summary() {
            out += &format!("mid-end rules fired: {hit}/{total} (firings of each)\n");
            out += &rule_rows(simplification_rules(), &self.simplify_counts);
            out += &format!("mid-end if-conversions: {}\n", self.if_converted);
        }
        out
    }
}

/// One line per rule with its count, the least exercised first.
fn rule_rows(names: &[&str], counts: &[u64]) -> String {
    let mut rows: Vec<(u64, &str)> = names
        .iter()
        .zip(counts)
        .map(|(&name, &n)| (n, name))
        .collect();
    rows.sort_by_key(|&(n, _)| n);
    rows.iter()
        .map(|(n, name)| format!("  {n:>10}  {name}\n"))
        .collect()
}

fn opcode_index(op: Opcode) -> usize {
    op as usize
}
