//! Random CFG shapes for the scaling check, as CLIF text: a function is a chain of *units*
//! (a straight block, a diamond, a `br_table` switch, a loop nest, an early exit, a call),
//! each passing a running value to the next, with a pool of values defined in the entry and
//! read by units and exits, so that many values stay live across the whole function.
//!
//! A [`Shape`] fixes the unit mix and the pool from a seed; [`Shape::function`] of `n`
//! units repeats the shape's first [`Shape::period`] units, so the function of `2n` units
//! is the one of `n` units twice over: any phase whose work more than doubles with it is
//! superlinear in the function, not unlucky in its draw.
//!
//! Guarantees: the text parses and verifies (the scaling tests check it), every unit
//! leaves by a branch to the next unit's head or to an exit that returns, loops run a
//! bounded number of times, and no block passes arguments over a critical edge (the
//! block order splits the rest).
//!
//! Cost: O(units × (unit size + pool)) text.

use std::fmt::Write;

/// The allocator's seedable generator (SplitMix64): the shapes need no stronger one.
pub use kestrel_regalloc::exec::Rng;

/// The kinds of unit, in the order of [`Shape::weights`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// One block: arithmetic on the running value, a jump.
    Straight,
    /// An if/else whose arms join in the next unit's head.
    Diamond,
    /// A `br_table` over a few targets, all joining in the next unit's head.
    Switch,
    /// Counted loops nested [`Shape::loop_depth`] deep.
    Loops,
    /// A branch to an exit block of its own that returns (an early return).
    Exit,
    /// A call of the callee with the running value.
    Call,
}

const UNITS: [Unit; 6] = [
    Unit::Straight,
    Unit::Diamond,
    Unit::Switch,
    Unit::Loops,
    Unit::Exit,
    Unit::Call,
];

/// A random shape: everything about its functions but their size.
#[derive(Clone, Debug)]
pub struct Shape {
    /// A name for reports.
    pub name: String,
    /// The seed of the unit sequence.
    pub seed: u64,
    /// Relative weight of each unit kind (as [`UNITS`]).
    pub weights: [u32; 6],
    /// Values defined in the entry and read by units and exits (live across them).
    pub pool: usize,
    /// Exits are marked cold (laid out at the end, in order).
    pub cold_exits: bool,
    /// The exit is the branch's first destination (else the chain goes on first).
    pub exit_first: bool,
    /// Values each exit receives as block arguments (besides those it reads directly).
    pub exit_args: usize,
    /// Exits read the running value of their unit's head (live across the rest of the
    /// chain when exits come last).
    pub exit_reads_head: bool,
    /// Exits call the callee before returning.
    pub exit_calls: bool,
    /// Targets of each switch.
    pub switch_targets: usize,
    /// Depth of each loop nest.
    pub loop_depth: usize,
    /// Units drawn before the sequence repeats.
    pub period: usize,
}

impl Shape {
    /// A random shape from `seed`.
    pub fn random(seed: u64, period: usize) -> Shape {
        let mut rng = Rng::new(seed ^ 0x5ca1_ab1e);
        let mut weights = [0u32; 6];
        for w in &mut weights {
            *w = if rng.chance(3) {
                0
            } else {
                1 + rng.below(4) as u32
            };
        }
        if weights.iter().all(|&w| w == 0) {
            weights[0] = 1;
        }
        Shape {
            name: format!("random#{seed}"),
            seed,
            weights,
            pool: [0, 2, 8, 24][rng.below(4)],
            cold_exits: rng.chance(2),
            exit_first: rng.chance(2),
            exit_args: rng.below(4),
            exit_reads_head: rng.chance(2),
            exit_calls: rng.chance(3),
            switch_targets: 2 + rng.below(7),
            loop_depth: 1 + rng.below(3),
            period,
        }
    }

    /// The exit chain: every unit an early exit, the exits reading their head's value
    /// (each live from its unit to its exit) and laid out last, hot or cold.
    pub fn exit_chain(cold: bool, exit_first: bool, period: usize) -> Shape {
        Shape {
            name: format!(
                "exit chain ({}{})",
                if cold { "cold" } else { "hot" },
                if exit_first { ", exit first" } else { "" }
            ),
            seed: 0,
            weights: [0, 0, 0, 0, 1, 0],
            pool: 1,
            cold_exits: cold,
            exit_first,
            exit_args: 1,
            exit_reads_head: true,
            exit_calls: false,
            switch_targets: 2,
            loop_depth: 1,
            period,
        }
    }

    /// The named shapes the scaling check always runs, then random ones.
    pub fn fixed(period: usize) -> Vec<Shape> {
        let mut shapes = vec![
            Shape::exit_chain(false, false, period),
            Shape::exit_chain(false, true, period),
            Shape::exit_chain(true, true, period),
        ];
        let mut calls = Shape::exit_chain(true, false, period);
        calls.name = "exits with calls and 3 arguments".into();
        calls.exit_calls = true;
        calls.exit_args = 3;
        calls.pool = 8;
        shapes.push(calls);
        shapes
    }

    fn unit_at(&self, i: usize) -> (Unit, Rng) {
        let k = (i % self.period.max(1)) as u64;
        let mut rng = Rng::new(self.seed.wrapping_mul(0x100_0000_01b3) ^ k.wrapping_mul(0x9e37));
        let total: u32 = self.weights.iter().sum();
        let mut pick = rng.below(total as usize) as u32;
        for (u, &w) in UNITS.iter().zip(&self.weights) {
            if pick < w {
                return (*u, rng);
            }
            pick -= w;
        }
        (Unit::Straight, rng)
    }

    /// The function of `units` units, with its callee first.
    pub fn function(&self, units: usize) -> String {
        let mut g = Gen {
            s: String::new(),
            next_value: 1,
            next_block: units as u64 + 2,
            pool: Vec::new(),
            shape: self,
        };
        g.s.push_str("function %callee(i64) -> i64 {\nblock0(v0: i64):\n    return v0\n}\n\n");
        g.s.push_str(
            "function %f(i64) -> i64 {\n    sig0 = (i64) -> i64\n    fn0 = %callee sig0\n",
        );
        g.s.push_str("block0(v0: i64):\n");
        for j in 0..self.pool {
            let k = g.konst(j as i64 + 3);
            let p = g.value();
            g.line(format!("{p} = imul v0, {k}"));
            g.pool.push(p);
        }
        g.line("jump block1(v0)".into());
        for i in 0..units {
            let (unit, mut rng) = self.unit_at(i);
            let head = format!("block{}", i + 1);
            let next = format!("block{}", i + 2);
            g.unit(unit, &head, &next, &mut rng);
        }
        // The last block reads the pool, so every pool value is live to the end.
        let acc = g.value();
        let _ = writeln!(g.s, "block{}({acc}: i64):", units + 1);
        let mut sum = acc;
        for p in g.pool.clone() {
            let s = g.value();
            g.line(format!("{s} = iadd {sum}, {p}"));
            sum = s;
        }
        g.line(format!("return {sum}"));
        g.s.push_str("}\n");
        g.s
    }
}

/// Text being generated, with fresh value and block numbers.
struct Gen<'a> {
    s: String,
    next_value: u64,
    next_block: u64,
    pool: Vec<String>,
    shape: &'a Shape,
}

impl Gen<'_> {
    fn value(&mut self) -> String {
        self.next_value += 1;
        format!("v{}", self.next_value)
    }

    fn block(&mut self) -> String {
        self.next_block += 1;
        format!("block{}", self.next_block)
    }

    fn line(&mut self, text: String) {
        let _ = writeln!(self.s, "    {text}");
    }

    fn konst(&mut self, c: i64) -> String {
        let v = self.value();
        self.line(format!("{v} = iconst.i64 {c}"));
        v
    }

    /// A pool value, if the shape has any.
    fn pooled(&self, rng: &mut Rng) -> Option<String> {
        (!self.pool.is_empty()).then(|| self.pool[rng.below(self.pool.len())].clone())
    }

    /// `acc` plus a constant and maybe a pool value: a fresh value.
    fn step(&mut self, acc: &str, rng: &mut Rng) -> String {
        let k = self.konst(1 + rng.below(9) as i64);
        let mut v = self.value();
        self.line(format!("{v} = iadd {acc}, {k}"));
        if let Some(p) = self.pooled(rng) {
            let w = self.value();
            self.line(format!("{w} = bxor {v}, {p}"));
            v = w;
        }
        v
    }

    /// Unit `unit` from block `head` (whose header this writes) to a jump to `next`.
    fn unit(&mut self, unit: Unit, head: &str, next: &str, rng: &mut Rng) {
        let acc = self.value();
        let _ = writeln!(self.s, "{head}({acc}: i64):");
        match unit {
            Unit::Straight => {
                let v = self.step(&acc, rng);
                self.line(format!("jump {next}({v})"));
            }
            Unit::Diamond => {
                let (then, other) = (self.block(), self.block());
                let one = self.konst(1);
                let bit = self.value();
                self.line(format!("{bit} = band {acc}, {one}"));
                self.line(format!("brif {bit}, {then}, {other}"));
                let _ = writeln!(self.s, "{then}:");
                let v = self.step(&acc, rng);
                self.line(format!("jump {next}({v})"));
                let _ = writeln!(self.s, "{other}:");
                let h = self.value();
                self.line(format!("{h} = ushr {acc}, {one}"));
                self.line(format!("jump {next}({h})"));
            }
            Unit::Switch => {
                let n = self.shape.switch_targets;
                let index = self.value();
                self.line(format!("{index} = ireduce.i32 {acc}"));
                let targets: Vec<String> = (0..n).map(|_| self.block()).collect();
                let default = self.block();
                self.line(format!(
                    "br_table {index}, {default}, [{}]",
                    targets.join(", ")
                ));
                for t in targets.iter().chain(std::iter::once(&default)) {
                    let _ = writeln!(self.s, "{t}:");
                    let v = self.step(&acc, rng);
                    self.line(format!("jump {next}({v})"));
                }
            }
            Unit::Loops => {
                let zero = self.konst(0);
                let v = self.loops(&acc, &zero, self.shape.loop_depth, rng);
                self.line(format!("jump {next}({v})"));
            }
            Unit::Exit => self.exit(&acc, next, rng),
            Unit::Call => {
                let r = self.value();
                self.line(format!("{r} = call fn0({acc})"));
                let v = self.step(&r, rng);
                self.line(format!("jump {next}({v})"));
            }
        }
    }

    /// A loop nest `depth` deep entered with `acc` from the current block (which this
    /// ends): returns the value it leaves with, in the current block (the nest's exit).
    /// `zero` is a constant 0 defined in the entering block.
    fn loops(&mut self, acc: &str, zero: &str, depth: usize, rng: &mut Rng) -> String {
        let (header, body, exit) = (self.block(), self.block(), self.block());
        self.line(format!("jump {header}({acc}, {zero})"));
        let (a, i) = (self.value(), self.value());
        let _ = writeln!(self.s, "{header}({a}: i64, {i}: i64):");
        let limit = self.konst(2);
        let done = self.value();
        self.line(format!("{done} = icmp sge {i}, {limit}"));
        let out = self.value();
        self.line(format!("brif {done}, {exit}({a}), {body}"));
        let _ = writeln!(self.s, "{body}:");
        let stepped = if depth > 1 {
            let z = self.konst(0);
            self.loops(&a, &z, depth - 1, rng)
        } else {
            self.step(&a, rng)
        };
        let one = self.konst(1);
        let i2 = self.value();
        self.line(format!("{i2} = iadd {i}, {one}"));
        self.line(format!("jump {header}({stepped}, {i2})"));
        let _ = writeln!(self.s, "{exit}({out}: i64):");
        out
    }

    /// An early exit: the unit's head tests `acc` and either goes on to `next` or leaves to
    /// an exit block of its own, which returns.
    fn exit(&mut self, acc: &str, next: &str, rng: &mut Rng) {
        let shape = self.shape;
        let v = self.step(acc, rng);
        let k = self.konst(77);
        let c = self.value();
        self.line(format!("{c} = icmp eq {v}, {k}"));
        let exit = self.block();
        let mut args = vec![v.clone()];
        args.extend((1..shape.exit_args).filter_map(|_| self.pooled(rng)));
        args.truncate(shape.exit_args);
        let to_exit = if args.is_empty() {
            exit.clone()
        } else {
            format!("{exit}({})", args.join(", "))
        };
        if shape.exit_first {
            self.line(format!("brif {c}, {to_exit}, {next}({v})"));
        } else {
            self.line(format!("brif {c}, {next}({v}), {to_exit}"));
        }
        let params: Vec<String> = args.iter().map(|_| self.value()).collect();
        let typed: Vec<String> = params.iter().map(|p| format!("{p}: i64")).collect();
        let cold = if shape.cold_exits { " cold" } else { "" };
        if typed.is_empty() {
            let _ = writeln!(self.s, "{exit}{cold}:");
        } else {
            let _ = writeln!(self.s, "{exit}({}){cold}:", typed.join(", "));
        }
        let mut sum = if shape.exit_reads_head {
            acc.to_string()
        } else {
            self.konst(5)
        };
        for p in params {
            let s = self.value();
            self.line(format!("{s} = iadd {sum}, {p}"));
            sum = s;
        }
        if let Some(p) = self.pooled(rng) {
            let s = self.value();
            self.line(format!("{s} = iadd {sum}, {p}"));
            sum = s;
        }
        if shape.exit_calls {
            let r = self.value();
            self.line(format!("{r} = call fn0({sum})"));
            sum = r;
        }
        self.line(format!("return {sum}"));
    }
}
