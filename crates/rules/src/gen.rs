//! Generators of rule programs, for differential tests and benchmarks.
//!
//! [`random_program`] writes a random, well-typed program over a fixed prelude (see
//! [`DIFF_PRELUDE`]) whose rules overlap and nest freely; compiled with checks off,
//! it exercises the match-tree construction far beyond hand-written rules.
//! [`bench_program`] writes a large program that passes every check.

use crate::fuzz::Rng;
use std::fmt::Write;

/// Types and extern terms shared by every random program. `S` and `T` are extern
/// enums so that a test driver can define them once for many programs.
pub const DIFF_PRELUDE: &str = "\
(type u8 (primitive u8))
(type S extern (enum (P (x u8) (y u8)) (Q (x u8)) (R)))
(type T extern (enum (A (s S) (n u8)) (B (n u8)) (C (s1 S) (s2 S))))
(decl pure partial half (u8) u8)
(extern constructor half half)
(decl odd (u8) u8)
(extern extractor odd odd)
(decl split (u8 u8) u8)
(extern extractor infallible split split)
(decl mk (u8 u8) u8)
(extern constructor mk mk)
(decl partial top (T u8) u8)
(decl multi many (T u8) u8)
(decl pure partial sub (S) u8)
";

struct RuleGen<'a> {
    rng: &'a mut Rng,
    u8_vars: Vec<String>,
    s_vars: Vec<String>,
    next_var: usize,
}

impl RuleGen<'_> {
    fn fresh(&mut self) -> String {
        self.next_var += 1;
        format!("v{}", self.next_var)
    }

    fn u8_pat(&mut self, depth: usize) -> String {
        let choice = self.rng.below(if depth == 0 { 4 } else { 7 });
        match choice {
            0 => "_".into(),
            1 if !self.u8_vars.is_empty() && self.rng.chance(30) => {
                // A repeated variable: an equality test.
                self.u8_vars[self.rng.below(self.u8_vars.len())].clone()
            }
            1 => {
                let v = self.fresh();
                self.u8_vars.push(v.clone());
                v
            }
            2 | 3 => self.rng.below(4).to_string(),
            4 => format!("(odd {})", self.u8_pat(depth - 1)),
            5 => format!(
                "(split {} {})",
                self.u8_pat(depth - 1),
                self.u8_pat(depth - 1)
            ),
            _ => {
                let v = self.fresh();
                self.u8_vars.push(v.clone());
                format!("{v} @ {}", self.u8_pat(depth - 1))
            }
        }
    }

    fn s_pat(&mut self, depth: usize) -> String {
        match self.rng.below(5) {
            0 => "_".into(),
            1 => {
                let v = self.fresh();
                self.s_vars.push(v.clone());
                v
            }
            2 => format!("(S.P {} {})", self.u8_pat(depth), self.u8_pat(depth)),
            3 => format!("(S.Q {})", self.u8_pat(depth)),
            _ => "(S.R)".into(),
        }
    }

    fn t_pat(&mut self) -> String {
        match self.rng.below(5) {
            0 => "_".into(),
            1 => format!("(T.A {} {})", self.s_pat(2), self.u8_pat(2)),
            2 => format!("(T.B {})", self.u8_pat(2)),
            3 => format!("(T.C {} {})", self.s_pat(1), self.s_pat(1)),
            _ => format!("(and (T.A {} _) (T.A _ {}))", self.s_pat(1), self.u8_pat(1)),
        }
    }

    fn u8_expr(&mut self, depth: usize, allow_sub: bool) -> String {
        match self.rng.below(if depth == 0 { 2 } else { 4 }) {
            0 => self.rng.below(50).to_string(),
            1 if !self.u8_vars.is_empty() => {
                self.u8_vars[self.rng.below(self.u8_vars.len())].clone()
            }
            1 => "7".into(),
            2 if allow_sub && !self.s_vars.is_empty() => {
                format!("(sub {})", self.s_vars[self.rng.below(self.s_vars.len())])
            }
            _ => format!(
                "(mk {} {})",
                self.u8_expr(depth - 1, allow_sub),
                self.u8_expr(depth - 1, allow_sub)
            ),
        }
    }

    fn clauses(&mut self, out: &mut String) {
        for _ in 0..self.rng.below(3) {
            if !self.s_vars.is_empty() && self.rng.chance(30) {
                // A pure internal partial term in a clause.
                let s = self.s_vars[self.rng.below(self.s_vars.len())].clone();
                let pat = self.u8_pat(1);
                let _ = write!(out, " (if-let {pat} (sub {s}))");
                continue;
            }
            if self.u8_vars.is_empty() {
                return;
            }
            let v = self.u8_vars[self.rng.below(self.u8_vars.len())].clone();
            if self.rng.chance(50) {
                let pat = self.u8_pat(1);
                let _ = write!(out, " (if-let {pat} (half {v}))");
            } else {
                let _ = write!(out, " (if (half {v}))");
            }
        }
    }
}

/// A random program over [`DIFF_PRELUDE`]; compile it with checks off.
pub fn random_program(seed: u64, rules: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::from(DIFF_PRELUDE);
    for (term, count, allow_sub) in [("top", rules, true), ("many", rules / 3 + 1, false)] {
        for i in 0..count {
            let mut g = RuleGen {
                rng: &mut rng,
                u8_vars: Vec::new(),
                s_vars: Vec::new(),
                next_var: 0,
            };
            let t = g.t_pat();
            let n = g.u8_pat(2);
            let mut clauses = String::new();
            g.clauses(&mut clauses);
            let rhs = g.u8_expr(2, allow_sub);
            let prio = g.rng.below(5) as i64 - 2;
            let _ = writeln!(
                out,
                "(rule {term}_{i} {prio} ({term} {t} {n}){clauses} (mk {i} {rhs}))"
            );
        }
    }
    for i in 0..4 {
        let mut g = RuleGen {
            rng: &mut rng,
            u8_vars: Vec::new(),
            s_vars: Vec::new(),
            next_var: 0,
        };
        let s = g.s_pat(2);
        let rhs = g.u8_expr(1, false);
        let _ = writeln!(out, "(rule sub_{i} (sub {s}) (mk {} {rhs}))", 100 + i);
    }
    out
}

/// A large valid program: `terms` internal terms with `rules_per_term` rules each,
/// using enum matching, nested extractors with conversions, `if-let` on a partial
/// constructor, priorities and calls between terms.
pub fn bench_program(terms: usize, rules_per_term: usize) -> String {
    let variants = 8;
    let mut out = String::new();
    out.push_str(
        "(type u32 (primitive u32))\n(type Val (primitive Val))\n(type Reg (primitive Reg))\n",
    );
    out.push_str("(type Op extern (enum");
    for v in 0..variants {
        let _ = write!(out, " (V{v} (a Val) (k u32))");
    }
    out.push_str("))\n");
    out.push_str(
        "(decl def (Op) Val)\n(extern extractor def def)\n(convert Op Val def)\n\
         (decl put (Val) Reg)\n(extern constructor put put)\n(convert Val Reg put)\n\
         (decl pure partial small (u32) u32)\n(extern constructor small small)\n\
         (decl emit (Reg u32) u32)\n(extern constructor emit emit)\n",
    );
    for t in 0..terms {
        let _ = writeln!(out, "(decl partial t{t} (Op u32) u32)");
    }
    for t in 0..terms {
        for i in 0..rules_per_term {
            // (variant, literal) pairs are distinct within a term, so no two rules
            // overlap; priorities vary but never shadow.
            let v = i % variants;
            let lit = i / variants;
            let inner = (i * 3 + t) % variants;
            let prio = (i % 3) as i64 - 1;
            let rhs = if t + 1 < terms && i % 4 == 0 {
                format!("(t{} (Op.V{inner} a m) n)", t + 1)
            } else {
                "(emit a (small_or n))".to_string()
            };
            let _ = writeln!(
                out,
                "(rule {prio} (t{t} (Op.V{v} (Op.V{inner} a _) {lit}) n) (if-let m (small n)) {rhs})"
            );
        }
    }
    out.push_str("(decl small_or (u32) u32)\n(extern constructor small_or small_or)\n");
    out
}
