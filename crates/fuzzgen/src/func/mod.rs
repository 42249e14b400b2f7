//! One function: its preamble, its pool of variables, the statement loop, and the final
//! `return` that combines every variable.
//!
//! Contract. Values flow through builder [`Variable`]s, all declared and defined in the entry
//! block (which dominates everything), so any variable may be read anywhere and the builder's
//! SSA construction makes the phis and block parameters. Values that are not variables are
//! used only in the block that defines them (`recent`), or are defined in the entry block
//! (the canonical NaN constants). Submodules add the statements: `straight` (one opcode at a
//! time), `memory`, `calls` and `control` (shapes of blocks). Every builder error is a
//! generator bug and panics.

mod calls;
mod control;
mod memory;
mod patterns;
mod straight;

use arbitrary::Unstructured;
use kestrel_ir::builder::{BuilderError, FunctionBuilder, Variable};
use kestrel_ir::{
    Block, Function, FunctionName, Inst, InstructionData as D, Opcode, Signature, Type, Value,
};

use crate::draw::Draw;
use crate::ops::{ti, types_in, Ctx};
use crate::values::{iconst_imm, int_bits, CANON_NAN_F32, CANON_NAN_F64};
use crate::GenConfig;

pub(crate) use calls::Callee;
use calls::CalleeRef;
use memory::SlotInfo;

/// A builder result that can only fail through a generator bug.
trait OrBug<T> {
    fn bug(self) -> T;
}

impl<T> OrBug<T> for Result<T, BuilderError> {
    #[track_caller]
    fn bug(self) -> T {
        match self {
            Ok(x) => x,
            Err(e) => panic!("fuzzgen built an invalid function: {e}"),
        }
    }
}

/// Most values kept in `recent` (same-block temporaries).
const RECENT_CAP: usize = 12;

pub(crate) struct FuncGen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    cfg: &'a GenConfig,
    ctx: &'a Ctx,
    b: FunctionBuilder,
    /// Variables by type index ([`ti`]); all defined in the entry block.
    vars: [Vec<Variable>; 7],
    /// Temporaries defined in the current block.
    recent: Vec<Value>,
    recent_block: Option<Block>,
    /// The canonical NaNs (f32, f64), defined in the entry block when floats are usable.
    canon: [Option<Value>; 2],
    slots: Vec<SlotInfo>,
    callees: Vec<CalleeRef>,
    returns: Vec<Type>,
    /// Straight-line instruction target for this function.
    target: usize,
    /// Dynamic cost multiplier (product of enclosing loop trip counts).
    mult: u64,
    /// Estimated dynamic instructions so far, and the limit.
    cost: u64,
    budget: u64,
    /// Instructions counted into `cost` so far.
    ticked: usize,
    loop_depth: u32,
    /// The entry function gets more simultaneously live values.
    is_entry: bool,
}

/// What one function of the module is to be: its name and signature, the functions it may
/// call, its share of the instruction target, and whether it is the entry.
pub struct FuncSpec {
    pub name: FunctionName,
    pub sig: Signature,
    pub callees: Vec<Callee>,
    pub target: usize,
    pub is_entry: bool,
}

impl<'a, 'b> FuncGen<'a, 'b> {
    pub fn new(
        u: &'a mut Unstructured<'b>,
        cfg: &'a GenConfig,
        ctx: &'a Ctx,
        spec: FuncSpec,
    ) -> Self {
        let FuncSpec {
            name,
            sig,
            callees,
            target,
            is_entry,
        } = spec;
        // Callees get a quarter each, so a call at the top level always fits.
        let budget = if is_entry {
            crate::DYNAMIC_BUDGET
        } else {
            crate::DYNAMIC_BUDGET / 4
        };
        let returns = sig.returns.iter().map(|p| p.value_type).collect();
        let mut b = FunctionBuilder::new(name, sig);
        let callees = calls::import(&mut b, callees);
        FuncGen {
            u,
            cfg,
            ctx,
            b,
            vars: Default::default(),
            recent: Vec::with_capacity(RECENT_CAP),
            recent_block: None,
            canon: [None; 2],
            slots: Vec::new(),
            callees,
            returns,
            target,
            mult: 1,
            cost: 0,
            budget,
            ticked: 0,
            loop_depth: 0,
            is_entry,
        }
    }

    /// Generate the function; returns it with its estimated dynamic cost.
    pub fn run(mut self) -> (Function, u64) {
        let entry = self.b.create_block();
        let params = self.b.append_block_params_for_function_params(entry).bug();
        self.b.switch_to_block(entry).bug();
        self.b.seal_block(entry).bug();
        self.make_canon_nans();
        self.make_slots();
        self.init_vars(&params);
        self.init_slots();
        // The statement budget counts from here; the preamble is extra.
        self.target += self.insts();
        let mut guard = 0;
        while !self.done() && guard < 400 {
            self.item(0);
            self.tick();
            guard += 1;
        }
        self.final_return();
        self.tick();
        let cost = self.cost;
        (self.b.finalize().bug(), cost)
    }

    // ---- Budgets -------------------------------------------------------------------------

    fn insts(&self) -> usize {
        self.b.func().dfg.num_insts()
    }

    /// Charge the instructions emitted since the last tick at the current multiplier.
    fn tick(&mut self) {
        let n = self.insts();
        self.cost += (n - self.ticked) as u64 * self.mult;
        self.ticked = n;
    }

    fn done(&self) -> bool {
        self.insts() >= self.target || self.cost >= self.budget
    }

    /// Emit `n` statements (fewer when the budgets run out).
    fn seq(&mut self, depth: u32, n: usize) {
        for _ in 0..n {
            self.tick();
            if self.done() {
                break;
            }
            self.item(depth);
        }
    }

    /// One statement: a control-flow shape, a memory access, a call or a straight-line op.
    fn item(&mut self, depth: u32) {
        if depth < self.cfg.max_depth && self.u.chance(self.cfg.shape_percent) {
            self.shape(depth);
            return;
        }
        match self.u.below(20) {
            0..=1 if !self.slots.is_empty() => self.memory_op(),
            2 if !self.callees.is_empty() => self.call(),
            _ => self.straight(),
        }
    }

    // ---- Emission helpers ----------------------------------------------------------------

    fn emit(&mut self, data: D, ty: Type) -> Inst {
        self.b.ins().build(data, ty).bug()
    }

    fn emit1(&mut self, data: D, ty: Type) -> Value {
        let inst = self.emit(data, ty);
        self.b.inst_results(inst)[0]
    }

    fn unary(&mut self, opcode: Opcode, ty: Type, arg: Value) -> Value {
        self.emit1(D::Unary { opcode, arg }, ty)
    }

    fn binary(&mut self, opcode: Opcode, x: Value, y: Value) -> Value {
        self.b.ins().binary(opcode, x, y).bug()
    }

    fn ternary(&mut self, opcode: Opcode, x: Value, y: Value, z: Value) -> Value {
        self.b.ins().ternary(opcode, x, y, z).bug()
    }

    fn ty(&self, v: Value) -> Type {
        self.b.func().dfg.value_type(v)
    }

    fn ok(&self, op: Opcode, ty: Type) -> bool {
        self.ctx.ok(op, ty)
    }

    /// A random usable type from `mask` (restricted to usable types).
    fn pick_type(&mut self, mask: u8) -> Option<Type> {
        let mut types = [Type::INVALID; 7];
        let n = types_in(mask & self.ctx.usable, &mut types);
        (n > 0).then(|| types[self.u.below(n)])
    }

    // ---- Values --------------------------------------------------------------------------

    /// A constant of a usable type `ty`.
    fn konst(&mut self, ty: Type) -> Value {
        match ty {
            Type::F32 => {
                let imm = crate::values::f32_bits(self.u);
                self.emit1(
                    D::UnaryIeee32 {
                        opcode: Opcode::F32const,
                        imm,
                    },
                    Type::INVALID,
                )
            }
            Type::F64 => {
                let imm = crate::values::f64_bits(self.u);
                self.emit1(
                    D::UnaryIeee64 {
                        opcode: Opcode::F64const,
                        imm,
                    },
                    Type::INVALID,
                )
            }
            Type::I128 => {
                let bits = int_bits(self.u, 128);
                let lo = self.b.ins().iconst(Type::I64, bits as u64 as i64).bug();
                if self.ok(Opcode::Iconcat, Type::I64) && (self.u.chance(60) || bits >> 64 == 0) {
                    let hi = self
                        .b
                        .ins()
                        .iconst(Type::I64, (bits >> 64) as u64 as i64)
                        .bug();
                    self.b.ins().iconcat(lo, hi).bug()
                } else if self.ok(Opcode::Sextend, Type::I128) {
                    self.unary(Opcode::Sextend, Type::I128, lo)
                } else {
                    self.unary(Opcode::Uextend, Type::I128, lo)
                }
            }
            _ => {
                let imm = iconst_imm(self.u, ty);
                self.b.ins().iconst(ty, imm).bug()
            }
        }
    }

    fn forget_stale_recent(&mut self) {
        let cur = self.b.current_block();
        if self.recent_block != cur {
            self.recent.clear();
            self.recent_block = cur;
        }
    }

    /// An operand of usable type `ty`: a variable, a recent temporary or a fresh constant.
    fn get(&mut self, ty: Type) -> Value {
        self.forget_stale_recent();
        let roll = self.u.below(100);
        if roll < 25 {
            let n = self.recent.len();
            if n > 0 {
                let start = self.u.below(n);
                for k in 0..n {
                    let v = self.recent[(start + k) % n];
                    if self.ty(v) == ty {
                        return v;
                    }
                }
            }
        }
        let vars = &self.vars[ti(ty)];
        if roll >= 90 || vars.is_empty() {
            return self.konst(ty);
        }
        let var = vars[self.u.below(vars.len())];
        match self.b.use_var(var) {
            Ok(v) => v,
            Err(e) => panic!("{e}\n{}", self.b.func()),
        }
    }

    /// Keep a result: assign it to a variable of its type, or keep it as a temporary.
    fn put(&mut self, v: Value) {
        self.forget_stale_recent();
        let ty = self.ty(v);
        let vars = &self.vars[ti(ty)];
        if vars.is_empty() || self.u.chance(30) {
            if self.recent.len() == RECENT_CAP {
                self.recent.remove(0);
            }
            self.recent.push(v);
            return;
        }
        let var = vars[self.u.below(vars.len())];
        self.b.def_var(var, v).bug();
    }

    fn new_var(&mut self, v: Value) {
        let ty = self.ty(v);
        let var = self.b.declare_var(ty);
        self.b.def_var(var, v).bug();
        self.vars[ti(ty)].push(var);
    }

    /// Entry block: one variable per parameter, then constants and values derived from
    /// earlier ones (many values live at once: the register-pressure shape), and at least one
    /// variable of every usable type.
    fn init_vars(&mut self, params: &[Value]) {
        for &p in params {
            self.new_var(p);
        }
        let extra = match (self.is_entry, self.u.chance(35)) {
            (true, true) => self.u.range(12, 28),
            (true, false) => self.u.range(2, 8),
            (false, true) => self.u.range(6, 12),
            (false, false) => self.u.range(1, 4),
        };
        let mut types = [Type::INVALID; 7];
        let n_types = types_in(self.ctx.usable, &mut types);
        for &t in &types[..n_types] {
            if self.vars[ti(t)].is_empty() {
                let v = self.konst(t);
                self.new_var(v);
            }
        }
        for _ in 0..extra {
            let t = types[self.u.below(n_types)];
            let v = if self.u.chance(50) {
                self.konst(t)
            } else {
                self.derived(t)
            };
            self.new_var(v);
        }
    }

    /// A value of `ty` computed from an existing variable and a constant.
    fn derived(&mut self, ty: Type) -> Value {
        let from = if self.u.chance(25) {
            self.pick_type(0x7f).unwrap_or(ty)
        } else {
            ty
        };
        let x = self.get(from);
        let Some(x) = self.convert(x, ty) else {
            return self.konst(ty);
        };
        let k = self.konst(ty);
        self.combine(x, k)
    }

    /// Mix two values of the same type into one, cheaply and without traps.
    fn combine(&mut self, x: Value, y: Value) -> Value {
        let ty = self.ty(x);
        let ops: &[Opcode] = if ty.is_int() {
            &[
                Opcode::Iadd,
                Opcode::Bxor,
                Opcode::Isub,
                Opcode::Imul,
                Opcode::Bor,
            ]
        } else {
            &[Opcode::Fadd, Opcode::Fmul, Opcode::Fsub, Opcode::Bxor]
        };
        let start = self.u.below(ops.len());
        for k in 0..ops.len() {
            let op = ops[(start + k) % ops.len()];
            if self.ok(op, ty) && (ty.is_int() || op == Opcode::Bxor || self.can_canon(ty)) {
                let r = self.binary(op, x, y);
                return if op == Opcode::Bxor || ty.is_int() {
                    r
                } else {
                    self.canon(r)
                };
            }
        }
        x
    }

    // ---- NaN canonicalization (rule nan-canon) -------------------------------------------

    fn make_canon_nans(&mut self) {
        if self.ctx.is_usable(Type::F32) {
            let v = self.emit1(
                D::UnaryIeee32 {
                    opcode: Opcode::F32const,
                    imm: CANON_NAN_F32,
                },
                Type::INVALID,
            );
            self.canon[0] = Some(v);
        }
        if self.ctx.is_usable(Type::F64) {
            let v = self.emit1(
                D::UnaryIeee64 {
                    opcode: Opcode::F64const,
                    imm: CANON_NAN_F64,
                },
                Type::INVALID,
            );
            self.canon[1] = Some(v);
        }
    }

    fn can_canon(&self, ty: Type) -> bool {
        self.ctx.is_usable(ty) && self.ok(Opcode::Fcmp, ty) && self.ok(Opcode::Select, ty)
    }

    /// `r` with any NaN replaced by the canonical one.
    fn canon(&mut self, r: Value) -> Value {
        let ty = self.ty(r);
        let nan = self.canon[(ty == Type::F64) as usize].expect("floats are usable");
        let c = self
            .b
            .ins()
            .fcmp(kestrel_ir::FloatCC::Unordered, r, r)
            .bug();
        self.b.ins().select(c, nan, r).bug()
    }

    // ---- Conversions ---------------------------------------------------------------------

    /// `v` as a value of type `to`, by the cheapest allowed route (bit-preserving when it can
    /// be); `None` when the filter leaves no route.
    fn convert(&mut self, v: Value, to: Type) -> Option<Value> {
        let from = self.ty(v);
        if from == to {
            return Some(v);
        }
        match (from.is_int(), to.is_int()) {
            (true, true) => self.int_resize(v, to),
            (false, false) => {
                let op = if to == Type::F64 {
                    Opcode::Fpromote
                } else {
                    Opcode::Fdemote
                };
                if self.ok(op, to) && self.can_canon(to) {
                    let r = self.unary(op, to, v);
                    Some(self.canon(r))
                } else {
                    let i = self.int_bits_of(v)?;
                    let i = self.int_resize(i, to.as_int())?;
                    self.bitcast(i, to)
                }
            }
            (true, false) => {
                let op = if self.u.chance(50) {
                    Opcode::FcvtFromSint
                } else {
                    Opcode::FcvtFromUint
                };
                if self.u.chance(30) && self.ok(op, to) {
                    return Some(self.unary(op, to, v));
                }
                let i = self.int_resize(v, to.as_int())?;
                self.bitcast(i, to)
            }
            (false, true) => {
                let op = if self.u.chance(50) {
                    Opcode::FcvtToSintSat
                } else {
                    Opcode::FcvtToUintSat
                };
                if self.u.chance(30) && self.ok(op, to) {
                    return Some(self.unary(op, to, v));
                }
                let i = self.int_bits_of(v)?;
                self.int_resize(i, to)
            }
        }
    }

    fn int_bits_of(&mut self, v: Value) -> Option<Value> {
        let to = self.ty(v).as_int();
        self.bitcast(v, to)
    }

    fn bitcast(&mut self, v: Value, to: Type) -> Option<Value> {
        if !self.ok(Opcode::Bitcast, to) {
            return None;
        }
        let data = D::LoadNoOffset {
            opcode: Opcode::Bitcast,
            flags: kestrel_ir::MemFlags::new(),
            arg: v,
        };
        Some(self.emit1(data, to))
    }

    fn int_resize(&mut self, v: Value, to: Type) -> Option<Value> {
        let from = self.ty(v);
        let op = if to.bits() == from.bits() {
            return Some(v);
        } else if to.bits() < from.bits() {
            Opcode::Ireduce
        } else if self.u.chance(50) {
            Opcode::Sextend
        } else {
            Opcode::Uextend
        };
        let op = match op {
            Opcode::Sextend if !self.ok(op, to) => Opcode::Uextend,
            Opcode::Uextend if !self.ok(op, to) => Opcode::Sextend,
            _ => op,
        };
        self.ok(op, to).then(|| self.unary(op, to, v))
    }

    // ---- Returns -------------------------------------------------------------------------

    /// The return values: with `all`, every variable folded into one of them (long live
    /// ranges end here): variables of one type are combined first, then each type's value is
    /// converted once. Otherwise one or two values each.
    fn return_values(&mut self, all: bool) -> Vec<Value> {
        let returns = self.returns.clone();
        if returns.is_empty() {
            return Vec::new();
        }
        let mut acc: Vec<Option<Value>> = vec![None; returns.len()];
        let mut next_slot = 0;
        for t in Type::SCALARS {
            let n = self.vars[ti(t)].len();
            if n == 0 {
                continue;
            }
            let take = if all { n } else { (self.u.below(3)).min(n) };
            let mut folded: Option<Value> = None;
            for k in 0..take {
                let var = self.vars[ti(t)][k];
                let x = self.b.use_var(var).bug();
                folded = Some(match folded {
                    None => x,
                    Some(a) => self.combine(a, x),
                });
            }
            let Some(x) = folded else {
                continue;
            };
            let slot = if next_slot < returns.len() {
                next_slot += 1;
                next_slot - 1
            } else {
                self.u.below(returns.len())
            };
            let Some(x) = self.convert(x, returns[slot]) else {
                continue;
            };
            acc[slot] = Some(match acc[slot] {
                None => x,
                Some(a) => self.combine(a, x),
            });
        }
        returns
            .iter()
            .zip(acc)
            .map(|(&t, a)| a.unwrap_or_else(|| self.get(t)))
            .collect()
    }

    fn final_return(&mut self) {
        let vals = self.return_values(true);
        self.b.ins().return_(&vals).bug();
    }
}
