//! Random control-flow shapes for the compile-only property: every function the verifier
//! accepts compiles, on every backend, without a panic or an internal error.
//!
//! The case generator (`kestrel-fuzzgen`) makes programs that must run and terminate, so its
//! control flow is forward branches and counted loops. This module makes functions that are
//! only compiled, so the CFG can be anything: back edges to any block, self loops, branches
//! to the entry block (which the verifier must reject), blocks unreachable from the entry,
//! `br_table`s with many targets, many exits, values of every scalar class live across the
//! whole function and across calls.
//!
//! Contract. [`generate`] requires nothing of the bytes (any input gives a function's text)
//! and is deterministic. The text always parses; whether it verifies depends on the shape
//! (an edge into the entry block, drawn rarely, does not). SSA is kept by construction: a
//! block uses only its own parameters, its own results and the entry block's values (the
//! entry dominates every reachable block; the verifier checks no dominance in unreachable
//! ones). [`check`] parses, verifies and, for a verified function, compiles it for x86-64
//! and AArch64 with the allocation checker on at opt levels `none` and `speed`.
//! [`campaign`] runs [`check`] over seeded cases (`kestrel fuzz --cfg-shapes`).
//!
//! Cost: generation is linear in the function drawn (at most [`MAX_BLOCKS`] blocks).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arbitrary::Unstructured;
use kestrel_codegen::settings::Flags;
use kestrel_ir::parse_functions;
use kestrel_opt::OptLevel;

use crate::campaign::{case_bytes, Limit};

/// Blocks in one generated function, at most.
pub const MAX_BLOCKS: usize = 40;

/// The scalar types values are drawn from.
const TYPES: [&str; 6] = ["i8", "i32", "i64", "i128", "f32", "f64"];

/// What [`check`] found for one function.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The verifier rejected it (the message is the verifier's).
    Rejected(String),
    /// It verified and compiled on every backend and opt level.
    Compiled,
}

/// One function, drawn from `u`; see the module contract.
pub fn generate(u: &mut Unstructured) -> String {
    Gen::new(u).function()
}

/// Parse, verify and compile `text` (see the module contract). `Err` is a finding: a
/// panic, or an error from a backend on a function the verifier accepted.
pub fn check(text: &str) -> Result<Verdict, String> {
    let funcs = parse_functions(text, "cfg-shape.clif")
        .map_err(|e| format!("generated text does not parse: {e}"))?;
    let func = &funcs[0];
    if let Err(e) = kestrel_ir::verify_function(func) {
        return Ok(Verdict::Rejected(e.to_string()));
    }
    for opt_level in [OptLevel::None, OptLevel::Speed] {
        let flags = Flags {
            check_regalloc: true,
            opt_level,
            ..Flags::default()
        };
        for name in kestrel_codegen::isa::names() {
            let isa = kestrel_codegen::isa::lookup(name).map_err(|e| e.to_string())?;
            let isa = isa.finish();
            let compiled = caught(|| isa.compile_function(func, &flags).map(drop));
            compiled.map_err(|e| format!("{name} at opt {opt_level:?}: {e}"))?;
        }
    }
    Ok(Verdict::Compiled)
}

/// What a [`campaign`] did.
#[derive(Debug, Default)]
pub struct CampaignSummary {
    pub cases: u64,
    pub compiled: u64,
    pub rejected: u64,
    /// Each failing case's file, written into the output directory.
    pub failures: Vec<PathBuf>,
}

/// Check cases `0..` of campaign `seed` until `limit`, writing each failing function (with
/// the finding as a comment) into `out_dir` and a progress line to `progress` every ten
/// seconds. Panics are caught per case (the compile state is per call, so nothing is
/// left half-built) and the campaign goes on.
pub fn campaign(
    seed: u64,
    limit: &Limit,
    out_dir: &Path,
    progress: &mut dyn std::io::Write,
) -> std::io::Result<CampaignSummary> {
    let start = Instant::now();
    let mut last_report = start;
    let mut summary = CampaignSummary::default();
    let mut bytes = Vec::new();
    let quiet = crate::panics::QuietPanics::install();
    loop {
        let done = match *limit {
            Limit::Cases(n) => summary.cases >= n,
            Limit::Time(t) => start.elapsed() >= t,
        };
        if done {
            break;
        }
        case_bytes(seed, summary.cases, &mut bytes);
        let text = generate(&mut Unstructured::new(&bytes));
        match check(&text) {
            Ok(Verdict::Compiled) => summary.compiled += 1,
            Ok(Verdict::Rejected(_)) => summary.rejected += 1,
            Err(finding) => {
                std::fs::create_dir_all(out_dir)?;
                let path = out_dir.join(format!("cfg-shape-{seed}-{}.clif", summary.cases));
                let comment: String = finding.lines().map(|l| format!("; {l}\n")).collect();
                std::fs::write(&path, format!("{comment}{text}"))?;
                writeln!(
                    progress,
                    "case {}: {finding} (written to {})",
                    summary.cases,
                    path.display()
                )?;
                summary.failures.push(path);
            }
        }
        summary.cases += 1;
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            writeln!(
                progress,
                "{} cases ({} compiled, {} rejected), {} failures, {:.0} s",
                summary.cases,
                summary.compiled,
                summary.rejected,
                summary.failures.len(),
                start.elapsed().as_secs_f64()
            )?;
        }
    }
    drop(quiet);
    Ok(summary)
}

/// `f()`, a panic and an error both as a message.
fn caught<E: std::fmt::Display>(f: impl FnOnce() -> Result<(), E>) -> Result<(), String> {
    crate::panics::caught(f)?.map_err(|e| format!("error: {e}"))
}

/// A value in scope: its number and type index.
#[derive(Clone, Copy)]
struct Val {
    n: u32,
    ty: usize,
}

struct Gen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    out: String,
    next_value: u32,
    /// Per block, its parameters' type indices (block 0's are the signature's).
    params: Vec<Vec<usize>>,
    /// The entry block's values: in scope in every block.
    entry_vals: Vec<Val>,
    /// Whether this function may branch to its entry block (drawn for one in twelve).
    entry_edges: bool,
}

impl<'u, 'a> Gen<'u, 'a> {
    fn new(u: &'u mut Unstructured<'a>) -> Self {
        Gen {
            u,
            out: String::new(),
            next_value: 0,
            params: Vec::new(),
            entry_vals: Vec::new(),
            entry_edges: false,
        }
    }

    /// A draw in `0..n` (0 once the bytes run out).
    fn below(&mut self, n: usize) -> usize {
        self.u.choose_index(n).unwrap_or(0)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn value(&mut self, ty: usize) -> Val {
        let v = Val {
            n: self.next_value,
            ty,
        };
        self.next_value += 1;
        v
    }

    fn function(mut self) -> String {
        let blocks = 1 + self.below(MAX_BLOCKS);
        self.entry_edges = self.below(12) == 0;
        for _ in 0..blocks {
            let count = self.below(5);
            let tys = (0..count).map(|_| self.below(TYPES.len())).collect();
            self.params.push(tys);
        }
        let sig: Vec<&str> = self.params[0].iter().map(|&t| TYPES[t]).collect();
        let _ = writeln!(self.out, "function %shape({}) -> i64 {{", sig.join(", "));
        self.out.push_str("    fn0 = %ext(i64, f64) -> i64\n");
        for b in 0..blocks {
            self.block(b, blocks);
        }
        self.out.push_str("}\n");
        self.out
    }

    fn block(&mut self, b: usize, blocks: usize) {
        let params: Vec<Val> = self.params[b]
            .clone()
            .into_iter()
            .map(|t| self.value(t))
            .collect();
        let decl: Vec<String> = params
            .iter()
            .map(|v| format!("v{}: {}", v.n, TYPES[v.ty]))
            .collect();
        let _ = writeln!(self.out, "block{b}({}):", decl.join(", "));
        let mut scope = if b == 0 {
            Vec::new()
        } else {
            self.entry_vals.clone()
        };
        scope.extend(&params);
        for _ in 0..self.below(8) {
            let v = self.instruction(&scope);
            scope.push(v);
        }
        if b == 0 {
            self.entry_vals = scope.clone();
        }
        self.terminator(&mut scope, b, blocks);
    }

    /// Any value of type `ty` from `scope`, made with a constant when there is none.
    fn operand(&mut self, scope: &mut Vec<Val>, ty: usize) -> Val {
        let candidates: Vec<Val> = scope.iter().copied().filter(|v| v.ty == ty).collect();
        if !candidates.is_empty() && !self.chance(10) {
            return candidates[self.below(candidates.len())];
        }
        let v = self.constant(ty);
        scope.push(v);
        v
    }

    fn constant(&mut self, ty: usize) -> Val {
        let v = self.value(ty);
        let bits = self.below(1000) as i64 - 500;
        let bits = if TYPES[ty] == "i8" { bits % 128 } else { bits };
        match TYPES[ty] {
            "f32" => {
                let _ = writeln!(self.out, "    v{} = f32const {bits}.5", v.n);
            }
            "f64" => {
                let _ = writeln!(self.out, "    v{} = f64const {bits}.25", v.n);
            }
            "i128" => {
                let c = self.value(2);
                let _ = writeln!(self.out, "    v{} = iconst.i64 {bits}", c.n);
                let _ = writeln!(self.out, "    v{} = sextend.i128 v{}", v.n, c.n);
            }
            t => {
                let _ = writeln!(self.out, "    v{} = iconst.{t} {bits}", v.n);
            }
        }
        v
    }

    /// One non-terminator instruction over `scope`; its result.
    fn instruction(&mut self, scope: &[Val]) -> Val {
        let mut scope = scope.to_vec();
        let ty = self.below(TYPES.len());
        let float = TYPES[ty].starts_with('f');
        match self.below(6) {
            0 => self.constant(ty),
            1 | 2 => {
                let (x, y) = (self.operand(&mut scope, ty), self.operand(&mut scope, ty));
                let ops: &[&str] = if float {
                    &["fadd", "fsub", "fmul", "fmin"]
                } else {
                    &["iadd", "isub", "imul", "band", "bor", "bxor"]
                };
                let op = ops[self.below(ops.len())];
                let v = self.value(ty);
                let _ = writeln!(self.out, "    v{} = {op} v{}, v{}", v.n, x.n, y.n);
                v
            }
            3 => {
                let (x, y) = (self.operand(&mut scope, ty), self.operand(&mut scope, ty));
                let v = self.value(0);
                if float {
                    let _ = writeln!(self.out, "    v{} = fcmp lt v{}, v{}", v.n, x.n, y.n);
                } else {
                    let _ = writeln!(self.out, "    v{} = icmp slt v{}, v{}", v.n, x.n, y.n);
                }
                v
            }
            4 => {
                let c = self.operand(&mut scope, 0);
                let (x, y) = (self.operand(&mut scope, ty), self.operand(&mut scope, ty));
                let v = self.value(ty);
                let _ = writeln!(
                    self.out,
                    "    v{} = select v{}, v{}, v{}",
                    v.n, c.n, x.n, y.n
                );
                v
            }
            _ => {
                let (x, y) = (self.operand(&mut scope, 2), self.operand(&mut scope, 5));
                let v = self.value(2);
                let _ = writeln!(self.out, "    v{} = call fn0(v{}, v{})", v.n, x.n, y.n);
                v
            }
        }
    }

    /// A target block: in a function drawn for it, sometimes the entry (which the verifier
    /// rejects); often itself or the next block (self loops, chains); otherwise any block
    /// but the entry.
    fn target(&mut self, b: usize, blocks: usize) -> usize {
        if blocks == 1 || (self.entry_edges && self.chance(5)) {
            return 0;
        }
        match self.below(100) {
            0..=14 if b > 0 => b,
            15..=49 if b + 1 < blocks => b + 1,
            _ => 1 + self.below(blocks - 1),
        }
    }

    /// `blockT(args…)` with arguments of the target's parameter types.
    fn call(&mut self, scope: &mut Vec<Val>, t: usize) -> String {
        let tys = self.params[t].clone();
        let args: Vec<String> = tys
            .into_iter()
            .map(|ty| format!("v{}", self.operand(scope, ty).n))
            .collect();
        if args.is_empty() {
            format!("block{t}")
        } else {
            format!("block{t}({})", args.join(", "))
        }
    }

    fn terminator(&mut self, scope: &mut Vec<Val>, b: usize, blocks: usize) {
        // Arguments may need constants, which must come before the terminator: build the
        // destinations first, then write the instruction.
        // A lone block branches only to itself, the entry: leave that to functions drawn
        // for entry edges.
        let choice = if blocks == 1 && !self.entry_edges {
            self.below(3)
        } else {
            self.below(10)
        };
        let line = match choice {
            0..=1 => format!("return v{}", self.operand(scope, 2).n),
            2 => "trap user1".to_string(),
            3..=4 => {
                let t = self.target(b, blocks);
                format!("jump {}", self.call(scope, t))
            }
            5 => {
                let index = self.operand(scope, 1);
                let (t, e) = (self.target(b, blocks), self.target(b, blocks));
                let (t, e) = (self.call(scope, t), self.call(scope, e));
                let mut table = vec![t];
                for _ in 0..self.below(12) {
                    let x = self.target(b, blocks);
                    table.push(self.call(scope, x));
                }
                format!("br_table v{}, {e}, [{}]", index.n, table.join(", "))
            }
            _ => {
                let cond_ty = [0, 1, 2, 3][self.below(4)];
                let c = self.operand(scope, cond_ty);
                let (t, e) = (self.target(b, blocks), self.target(b, blocks));
                let (t, e) = (self.call(scope, t), self.call(scope, e));
                format!("brif v{}, {t}, {e}", c.n)
            }
        };
        let _ = writeln!(self.out, "    {line}");
    }
}
