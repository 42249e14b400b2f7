//! Control-flow shapes: diamonds, triangles (a critical edge), branch chains with early exits
//! to one join block, `br_table` with cases and a default, counted loops (rule
//! counted-loops), empty blocks, and side exits that return or trap (rule rare-traps).
//!
//! Every shape starts in the current block and leaves a fresh, open block current. All
//! branches go to blocks created later (placed later in the layout), except a loop's back
//! edge. A block is sealed as soon as its last predecessor branch is emitted, so the
//! builder's phis are exact. Join blocks sometimes take user parameters, passed explicitly.

use kestrel_ir::{Block, IntCC, Opcode, Type, Value};

use super::{FuncGen, OrBug};
use crate::draw::Draw;

/// Deepest loop nesting.
const MAX_LOOP_DEPTH: u32 = 2;
/// Largest product of nested trip counts.
const MAX_MULT: u64 = 64;

impl FuncGen<'_, '_> {
    pub(super) fn shape(&mut self, depth: u32) {
        match self.u.below(12) {
            0..=2 => self.diamond(depth),
            3 => self.triangle(depth),
            4 | 5 => self.chain(depth),
            6 => self.table(depth),
            7..=9 => self.counted_loop(depth),
            10 => self.empty_jump(),
            _ => self.side_exit(),
        }
    }

    fn can_branch(&self) -> bool {
        self.ok(Opcode::Brif, Type::I8) || self.ok(Opcode::Brif, Type::I32)
    }

    /// A condition `brif` may test.
    fn branch_condition(&mut self) -> Option<Value> {
        for _ in 0..3 {
            let c = self.condition_value()?;
            if self.ok(Opcode::Brif, self.ty(c)) {
                return Some(c);
            }
        }
        None
    }

    /// 0–`max` parameter types for a join block.
    fn param_types(&mut self, max: usize) -> Vec<Type> {
        let n = self.u.below(max + 1);
        (0..n).filter_map(|_| self.pick_type(0x7f)).collect()
    }

    fn create_with_params(&mut self, types: &[Type]) -> (Block, Vec<Value>) {
        let b = self.b.create_block();
        let params = types
            .iter()
            .map(|&t| self.b.append_block_param(b, t).bug())
            .collect();
        (b, params)
    }

    fn args_for(&mut self, types: &[Type]) -> Vec<Value> {
        types.iter().map(|&t| self.get(t)).collect()
    }

    /// Switch to `b` (sealed by the caller) and keep its parameters as values.
    fn enter(&mut self, b: Block, params: &[Value]) {
        self.b.switch_to_block(b).bug();
        for &p in params {
            self.put(p);
        }
    }

    fn jump_to(&mut self, b: Block, types: &[Type]) {
        let args = self.args_for(types);
        self.b.ins().jump(b, &args).bug();
    }

    fn brif(&mut self, c: Value, t: (Block, &[Value]), e: (Block, &[Value])) {
        if self.u.chance(50) {
            self.b.ins().brif(c, t.0, t.1, e.0, e.1).bug();
        } else {
            // The same edges with the condition's polarity left to the branch order.
            self.b.ins().brif(c, e.0, e.1, t.0, t.1).bug();
        }
    }

    /// `brif c, then(..), else(..)`; both arms rejoin at a block with parameters.
    fn diamond(&mut self, depth: u32) {
        if !self.can_branch() {
            return;
        }
        let Some(c) = self.branch_condition() else {
            return;
        };
        let (tt, et, jt) = (
            self.param_types(1),
            self.param_types(1),
            self.param_types(3),
        );
        let (then_b, then_p) = self.create_with_params(&tt);
        let (else_b, else_p) = self.create_with_params(&et);
        let (join, join_p) = self.create_with_params(&jt);
        let (ta, ea) = (self.args_for(&tt), self.args_for(&et));
        self.brif(c, (then_b, &ta), (else_b, &ea));
        self.b.seal_block(then_b).bug();
        self.b.seal_block(else_b).bug();
        for (b, p) in [(then_b, then_p), (else_b, else_p)] {
            self.enter(b, &p);
            let n = self.u.below(5);
            self.seq(depth + 1, n);
            self.jump_to(join, &jt);
        }
        self.b.seal_block(join).bug();
        self.enter(join, &join_p);
    }

    /// `brif c, then, join(..)` with `then` jumping to `join`: the direct edge is critical.
    fn triangle(&mut self, depth: u32) {
        if !self.can_branch() {
            return;
        }
        let Some(c) = self.branch_condition() else {
            return;
        };
        let jt = self.param_types(2);
        let then_b = self.b.create_block();
        let (join, join_p) = self.create_with_params(&jt);
        let ja = self.args_for(&jt);
        self.brif(c, (then_b, &[]), (join, &ja));
        self.b.seal_block(then_b).bug();
        self.enter(then_b, &[]);
        let n = self.u.below(5);
        self.seq(depth + 1, n);
        self.jump_to(join, &jt);
        self.b.seal_block(join).bug();
        self.enter(join, &join_p);
    }

    /// A deep chain of tests, each of which may leave early for one shared exit block.
    fn chain(&mut self, depth: u32) {
        if !self.can_branch() {
            return;
        }
        let jt = self.param_types(2);
        let (exit, exit_p) = self.create_with_params(&jt);
        let links = self.u.range(2, 6);
        for _ in 0..links {
            let Some(c) = self.branch_condition() else {
                break;
            };
            let next = self.b.create_block();
            let ea = self.args_for(&jt);
            self.brif(c, (next, &[]), (exit, &ea));
            self.b.seal_block(next).bug();
            self.enter(next, &[]);
            let n = self.u.below(3);
            self.seq(depth + 1, n);
        }
        self.jump_to(exit, &jt);
        self.b.seal_block(exit).bug();
        self.enter(exit, &exit_p);
    }

    /// `br_table` over a few case blocks (repeats and a default included), joined after.
    fn table(&mut self, depth: u32) {
        if !self.ok(Opcode::BrTable, Type::INVALID) || !self.ctx.is_usable(Type::I32) {
            return;
        }
        let mut index = self.get(Type::I32);
        if self.u.chance(60) && self.ok(Opcode::Band, Type::I32) {
            // Mostly small indices, so the entries are taken.
            let mask = self.b.ins().iconst(Type::I32, 7).bug();
            index = self.b.ins().band(index, mask).bug();
        }
        let n_cases = self.u.range(1, 4);
        let cases: Vec<Block> = (0..n_cases).map(|_| self.b.create_block()).collect();
        let default = if self.u.chance(50) {
            self.b.create_block()
        } else {
            cases[0]
        };
        // Every case is named at least once, so none is unreachable.
        let n_entries = self.u.range(n_cases, 8);
        let mut entries: Vec<Block> = cases.clone();
        entries.extend((n_cases..n_entries).map(|_| self.u.pick(&cases)));
        for k in (1..entries.len()).rev() {
            entries.swap(k, self.u.below(k + 1));
        }
        self.b.ins().br_table(index, default, &entries).bug();
        let jt = self.param_types(2);
        let (join, join_p) = self.create_with_params(&jt);
        let mut targets = cases;
        if !targets.contains(&default) {
            targets.push(default);
        }
        for b in targets {
            self.b.seal_block(b).bug();
            self.enter(b, &[]);
            let n = self.u.below(3);
            self.seq(depth + 1, n);
            self.jump_to(join, &jt);
        }
        self.b.seal_block(join).bug();
        self.enter(join, &join_p);
    }

    /// Rule counted-loops: `header(i)`, body, latch `brif (icmp ult i+1, N), header(i+1), exit`.
    fn counted_loop(&mut self, depth: u32) {
        if self.loop_depth >= MAX_LOOP_DEPTH || !self.ok(Opcode::Brif, Type::I8) {
            return;
        }
        let mut trips = self.u.range(1, 8) as u64;
        while trips > 1 && self.mult * trips > MAX_MULT {
            trips /= 2;
        }
        if self.cost + self.mult * trips * 12 > self.budget {
            return;
        }
        let counter_ok = |g: &Self, t: Type| {
            [Opcode::Iconst, Opcode::Iadd, Opcode::Icmp]
                .iter()
                .all(|&op| g.ok(op, t))
        };
        let ty = match self
            .u
            .pick(&[Type::I32, Type::I64, Type::I8, Type::I16][..])
        {
            t if counter_ok(self, t) => t,
            _ if counter_ok(self, Type::I32) => Type::I32,
            _ => return,
        };
        let header = self.b.create_block();
        let i = self.b.append_block_param(header, ty).bug();
        let exit = self.b.create_block();
        let zero = self.b.ins().iconst(ty, 0).bug();
        self.b.ins().jump(header, &[zero]).bug();
        self.b.switch_to_block(header).bug();
        if self.u.chance(30) {
            self.put(i);
        }
        self.tick();
        self.mult *= trips;
        self.loop_depth += 1;
        let n = self.u.range(1, 6);
        self.seq(depth + 1, n);
        let one = self.b.ins().iconst(ty, 1).bug();
        let next = self.b.ins().iadd(i, one).bug();
        let limit = self.b.ins().iconst(ty, trips as i64).bug();
        if self.u.chance(50) {
            let again = self
                .b
                .ins()
                .icmp(IntCC::UnsignedLessThan, next, limit)
                .bug();
            self.b.ins().brif(again, header, &[next], exit, &[]).bug();
        } else {
            let done = self.b.ins().icmp(IntCC::Equal, next, limit).bug();
            self.b.ins().brif(done, exit, &[], header, &[next]).bug();
        }
        self.tick();
        self.mult /= trips;
        self.loop_depth -= 1;
        self.b.seal_block(header).bug();
        self.b.seal_block(exit).bug();
        self.enter(exit, &[]);
    }

    /// `jump` to a fresh block (the previous block may be empty apart from the jump).
    fn empty_jump(&mut self) {
        let b = self.b.create_block();
        self.b.ins().jump(b, &[]).bug();
        self.b.seal_block(b).bug();
        self.enter(b, &[]);
    }

    /// A rarely taken branch to a block that returns early or traps.
    fn side_exit(&mut self) {
        if !self.can_branch() {
            return;
        }
        let trap = self.u.chance(30) && self.ok(Opcode::Trap, Type::INVALID);
        let c = if trap || self.u.chance(70) {
            self.rare_condition()
        } else {
            self.branch_condition()
        };
        let Some(c) = c.filter(|&c| self.ok(Opcode::Brif, self.ty(c))) else {
            return;
        };
        let out = self.b.create_block();
        let cont = self.b.create_block();
        self.brif(c, (out, &[]), (cont, &[]));
        self.b.seal_block(out).bug();
        self.b.seal_block(cont).bug();
        self.enter(out, &[]);
        if trap {
            let code = self.trap_code();
            self.b.ins().trap(code).bug();
        } else {
            let vals = self.return_values(false);
            self.b.ins().return_(&vals).bug();
        }
        self.enter(cont, &[]);
    }
}
