//! Deterministic generator of CLIF functions for the compile-speed corpus.
//!
//! Each function works on one integer type (`i32` or `i64`) and mixes straight-line
//! arithmetic (`iadd`, `isub`, `imul`, bitwise ops, shifts and rotates, `ineg`, `bnot`,
//! constants), compares feeding `select`, diamonds (`brif` to two arms joined by a block with
//! parameters) and counted loops (a header with block parameters, a latch whose `brif` passes
//! arguments both to the header and to the exit block). Loops always terminate (a counter
//! from 0 to a small constant bound), nesting is at most two deep, and there is no division,
//! memory access or call, so every function can also be run.
//!
//! Values are scoped structurally: a value defined in an arm or a loop body is only used
//! inside it; what flows out goes through the join or exit block's parameters. That keeps
//! every use dominated by its definition. Blocks are numbered in text order when rendered.

/// xorshift64* — small, deterministic, good enough for shaping programs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() - 1)]
    }
}

/// One block under construction: its id (renumbered at render time), params and body.
struct BlockText {
    id: usize,
    params: Vec<String>,
    lines: Vec<String>,
}

struct Gen {
    rng: Rng,
    ty: &'static str,
    blocks: Vec<BlockText>,
    next_block: usize,
    next_value: usize,
    insts: usize,
    /// Values usable at the current point, innermost scope last.
    avail: Vec<String>,
}

/// A block reference inside a line, resolved to its text-order number by `render`.
fn bref(id: usize) -> String {
    format!("block#{id}#")
}

impl Gen {
    fn value(&mut self) -> String {
        self.next_value += 1;
        format!("v{}", self.next_value - 1)
    }

    fn new_block_id(&mut self) -> usize {
        self.next_block += 1;
        self.next_block - 1
    }

    /// Start emitting into block `id` with `n` fresh parameters (returned).
    fn open(&mut self, id: usize, n: usize) -> Vec<String> {
        let params: Vec<String> = (0..n).map(|_| self.value()).collect();
        self.blocks.push(BlockText {
            id,
            params: params.clone(),
            lines: Vec::new(),
        });
        params
    }

    fn emit(&mut self, line: String) {
        self.insts += 1;
        self.blocks
            .last_mut()
            .expect("an open block")
            .lines
            .push(line);
    }

    /// A value in scope, mostly a recent one (short live ranges) and sometimes any.
    fn operand(&mut self) -> String {
        let n = self.avail.len();
        let i = if self.rng.chance(70) {
            n - 1 - self.rng.range(0, (n - 1).min(5))
        } else {
            self.rng.range(0, n - 1)
        };
        self.avail[i].clone()
    }

    fn operands(&mut self, n: usize) -> Vec<String> {
        (0..n).map(|_| self.operand()).collect()
    }

    fn iconst(&mut self, k: i64) -> String {
        let v = self.value();
        let ty = self.ty;
        self.emit(format!("{v} = iconst.{ty} {k}"));
        v
    }

    /// One straight-line operation defining a new value in scope.
    fn straight_op(&mut self) {
        let kind = self.rng.range(0, 99);
        let v = if kind < 45 {
            let op = *self.rng.pick(&[
                "iadd", "isub", "imul", "band", "bor", "bxor", "iadd", "isub",
            ]);
            let (a, b) = (self.operand(), self.operand());
            let v = self.value();
            self.emit(format!("{v} = {op} {a}, {b}"));
            v
        } else if kind < 55 {
            let op = *self.rng.pick(&["ishl", "ushr", "sshr", "rotl", "rotr"]);
            let a = self.operand();
            let amount = if self.rng.chance(50) {
                let k = self.rng.range(0, 31) as i64;
                self.iconst(k)
            } else {
                self.operand()
            };
            let v = self.value();
            self.emit(format!("{v} = {op} {a}, {amount}"));
            v
        } else if kind < 62 {
            let op = *self.rng.pick(&["ineg", "bnot"]);
            let a = self.operand();
            let v = self.value();
            self.emit(format!("{v} = {op} {a}"));
            v
        } else if kind < 72 {
            let k = (self.rng.next() % 2001) as i64 - 1000;
            self.iconst(k)
        } else if kind < 92 {
            let c = self.compare();
            let (x, y) = (self.operand(), self.operand());
            let v = self.value();
            self.emit(format!("{v} = select {c}, {x}, {y}"));
            v
        } else {
            let (c, x, y) = (self.operand(), self.operand(), self.operand());
            let v = self.value();
            self.emit(format!("{v} = select {c}, {x}, {y}"));
            v
        };
        self.avail.push(v);
    }

    /// An `icmp` of two values in scope (an `i8` flag, not put in scope).
    fn compare(&mut self) -> String {
        let cc = *self.rng.pick(&[
            "eq", "ne", "slt", "sge", "sgt", "sle", "ult", "uge", "ugt", "ule",
        ]);
        let (a, b) = (self.operand(), self.operand());
        let c = self.value();
        self.emit(format!("{c} = icmp {cc} {a}, {b}"));
        c
    }

    /// Code worth about `budget` instructions at the current point.
    fn region(&mut self, budget: usize, depth: usize) {
        let end = self.insts + budget;
        while self.insts < end {
            let left = end - self.insts;
            let roll = self.rng.range(0, 99);
            if roll < 12 && depth < 3 && left > 12 {
                self.diamond(left.min(60), depth);
            } else if roll < 20 && depth < 2 && left > 16 {
                self.counted_loop(left.min(120), depth);
            } else {
                for _ in 0..self.rng.range(1, 6) {
                    self.straight_op();
                }
            }
        }
    }

    /// `brif` to two arms that join in a block with parameters.
    fn diamond(&mut self, budget: usize, depth: usize) {
        let c = if self.rng.chance(75) {
            self.compare()
        } else {
            self.operand()
        };
        let (then_b, else_b, join_b) = (
            self.new_block_id(),
            self.new_block_id(),
            self.new_block_id(),
        );
        self.emit(format!("brif {c}, {}, {}", bref(then_b), bref(else_b)));
        let nargs = self.rng.range(1, 3);
        let scope = self.avail.len();
        for arm in [then_b, else_b] {
            self.open(arm, 0);
            let size = self.rng.range(1, budget / 2);
            self.region(size, depth + 1);
            let args = self.operands(nargs).join(", ");
            self.emit(format!("jump {}({args})", bref(join_b)));
            self.avail.truncate(scope);
        }
        let params = self.open(join_b, nargs);
        self.avail.extend(params);
    }

    /// `for i in 0..bound` with loop-carried values and results through the exit block.
    fn counted_loop(&mut self, budget: usize, depth: usize) {
        let bound = self.rng.range(1, 6) as i64;
        let limit = self.iconst(bound);
        let zero = self.iconst(0);
        let one = self.iconst(1);
        let carried = self.rng.range(1, 3);
        let init = self.operands(carried).join(", ");
        let (header, exit) = (self.new_block_id(), self.new_block_id());
        self.emit(format!("jump {}({zero}, {init})", bref(header)));
        let scope = self.avail.len();
        let params = self.open(header, carried + 1);
        let counter = params[0].clone();
        self.avail.extend(params[1..].iter().cloned());
        let size = self.rng.range(1, budget);
        self.region(size, depth + 1);
        let next = self.value();
        self.emit(format!("{next} = iadd {counter}, {one}"));
        let more = self.value();
        self.emit(format!("{more} = icmp ult {next}, {limit}"));
        let back = self.operands(carried).join(", ");
        let nout = self.rng.range(1, 3);
        let out = self.operands(nout).join(", ");
        self.emit(format!(
            "brif {more}, {}({next}, {back}), {}({out})",
            bref(header),
            bref(exit)
        ));
        self.avail.truncate(scope);
        let results = self.open(exit, nout);
        self.avail.extend(results);
    }

    /// The function's text, blocks numbered in text order.
    fn render(&self, name: &str, nparams: usize, nrets: usize) -> String {
        let ty = self.ty;
        let mut number = vec![0; self.next_block];
        for (i, b) in self.blocks.iter().enumerate() {
            number[b.id] = i;
        }
        let list = |n: usize| vec![ty; n].join(", ");
        let mut out = format!(
            "function %{name}({}) -> {} {{\n",
            list(nparams),
            list(nrets)
        );
        for b in &self.blocks {
            let params: Vec<String> = b.params.iter().map(|p| format!("{p}: {ty}")).collect();
            if params.is_empty() {
                out.push_str(&format!("block{}:\n", number[b.id]));
            } else {
                out.push_str(&format!("block{}({}):\n", number[b.id], params.join(", ")));
            }
            for line in &b.lines {
                out.push_str("    ");
                out.push_str(&resolve_blocks(line, &number));
                out.push('\n');
            }
        }
        out.push_str("}\n");
        out
    }
}

/// Replace every `block#ID#` in `line` with `blockN`, N = `number[ID]`.
fn resolve_blocks(line: &str, number: &[usize]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("block#") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + "block#".len()..];
        let close = tail.find('#').expect("closed block reference");
        let id: usize = tail[..close].parse().expect("block id");
        out.push_str(&format!("block{}", number[id]));
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

/// One function named `name` of about `size` instructions, fully determined by `seed`.
pub fn function(name: &str, size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let ty = if rng.chance(50) { "i64" } else { "i32" };
    let nparams = rng.range(1, 4);
    let nrets = rng.range(1, 2);
    let mut g = Gen {
        rng,
        ty,
        blocks: Vec::new(),
        next_block: 0,
        next_value: 0,
        insts: 0,
        avail: Vec::new(),
    };
    let entry = g.new_block_id();
    let params = g.open(entry, nparams);
    g.avail.extend(params);
    g.region(size.saturating_sub(1).max(1), 0);
    let rets = g.operands(nrets).join(", ");
    g.emit(format!("return {rets}"));
    g.render(name, nparams, nrets)
}

/// The generated part of the default corpus: `count` functions with sizes spread from a
/// handful of instructions to a few thousand; `large` of them above 1,000 instructions.
pub fn corpus(count: usize, large: usize, seed: u64) -> Vec<(String, String)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let size = if i < large {
                rng.range(1_100, 4_000)
            } else {
                match i % 4 {
                    0 => rng.range(4, 20),
                    1 => rng.range(20, 100),
                    2 => rng.range(100, 400),
                    _ => rng.range(400, 1_000),
                }
            };
            let name = format!("gen{i}_{size}");
            (name.clone(), function(&name, size, rng.next()))
        })
        .collect()
}
