//! Straight-line statements: one opcode from the weighted table with a controlling type the
//! filter allows, its operands from the variable pool, its results back into it. The guard
//! rules (div-guard, cvt-guard, add-trap-guard, carry-bool, rare-traps, addr-opaque,
//! nan-canon) are applied here.

use kestrel_ir::{FloatCC, InstructionData as D, IntCC, Opcode, TrapCode, Type, Value};

use super::{FuncGen, OrBug};
use crate::draw::Draw;
use crate::ops::ti;

const INTS: u8 = 0b1_1111;
const FLOATS: u8 = 0b110_0000;

/// Float opcodes whose NaN results are canonicalized (rule nan-canon).
fn needs_canon(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Fadd | Fsub
            | Fmul
            | Fdiv
            | Sqrt
            | Fma
            | Fmin
            | Fmax
            | Ceil
            | Floor
            | Trunc
            | Nearest
            | Fpromote
            | Fdemote
    )
}

/// Mask of the integer types narrower (`wider == false`) or wider than `ty`.
fn ints_beside(ty: Type, wider: bool) -> u8 {
    let mut m = 0;
    for t in [Type::I8, Type::I16, Type::I32, Type::I64, Type::I128] {
        if (wider && t.bits() > ty.bits()) || (!wider && t.bits() < ty.bits()) {
            m |= 1 << ti(t);
        }
    }
    m
}

impl FuncGen<'_, '_> {
    /// Emit one straight-line statement (a few tries to find an allowed opcode and type).
    pub(super) fn straight(&mut self) {
        let total = self.ctx.straight_weight();
        if total == 0 {
            return;
        }
        // Now and then, a shape the mid-end's rules rewrite (see `patterns.rs`).
        if self.u.chance(6) && self.pattern() {
            return;
        }
        for _ in 0..4 {
            let x = self.u.below(total as usize) as u32;
            let Some(op) = self.ctx.straight_op(x) else {
                return;
            };
            if self.try_op(op) {
                return;
            }
        }
    }

    /// Emit `op` if the filter and the usable types allow it; false if nothing was emitted.
    fn try_op(&mut self, op: Opcode) -> bool {
        use Opcode::*;
        let types = self.ctx.types(op);
        match op {
            Nop | Fence | SequencePoint => {
                if !self.ok(op, Type::INVALID) {
                    return false;
                }
                self.emit(D::NullAry { opcode: op }, Type::INVALID);
                return true;
            }
            F32const | F64const => {
                let ty = if op == F32const { Type::F32 } else { Type::F64 };
                if !self.ok(op, Type::INVALID) || !self.ctx.is_usable(ty) {
                    return false;
                }
                let v = self.konst(ty);
                self.put(v);
                return true;
            }
            GetFramePointer | GetStackPointer | GetReturnAddress => return self.addr_probe(op),
            _ => {}
        }
        let types = if needs_canon(op) {
            types & self.canon_types()
        } else {
            types
        };
        let Some(ty) = self.pick_type(types) else {
            return false;
        };
        match op {
            Iconst => {
                let v = self.konst(ty);
                self.put(v);
            }
            Iadd | Isub | Imul | Umulhi | Smulhi | Smin | Umin | Smax | Umax | Band | Bor
            | Bxor | BandNot | BorNot | BxorNot | Fadd | Fsub | Fmul | Fdiv | Fmin | Fmax
            | Fcopysign => {
                let (x, y) = (self.get(ty), self.get(ty));
                let r = self.binary(op, x, y);
                self.put_maybe_canon(op, r);
            }
            Rotl | Rotr | Ishl | Ushr | Sshr => {
                let x = self.get(ty);
                let amount_ty = self.pick_type(INTS).unwrap_or(ty);
                let y = self.get(amount_ty);
                let r = self.binary(op, x, y);
                self.put(r);
            }
            Ineg | Iabs | Bnot | Bitrev | Clz | Cls | Ctz | Bswap | Popcnt | Fneg | Fabs | Sqrt
            | Ceil | Floor | Trunc | Nearest => {
                let x = self.get(ty);
                let r = self.unary(op, ty, x);
                self.put_maybe_canon(op, r);
            }
            Fma => {
                let (x, y, z) = (self.get(ty), self.get(ty), self.get(ty));
                let r = self.ternary(op, x, y, z);
                self.put_maybe_canon(op, r);
            }
            Bmask => {
                let from = self.pick_type(INTS).unwrap_or(ty);
                let x = self.get(from);
                let r = self.unary(op, ty, x);
                self.put(r);
            }
            Iconcat => {
                if !ty.double_width().is_some_and(|w| self.ctx.is_usable(w)) {
                    return false;
                }
                let (x, y) = (self.get(ty), self.get(ty));
                let r = self.binary(op, x, y);
                self.put(r);
            }
            Isplit => {
                let x = self.get(ty);
                let (lo, hi) = self.b.ins().isplit(x).bug();
                self.put(lo);
                self.put(hi);
            }
            Icmp => {
                let cc = self.u.pick(IntCC::ALL);
                let (x, y) = (self.get(ty), self.get(ty));
                let r = self.b.ins().icmp(cc, x, y).bug();
                self.put(r);
            }
            Fcmp => {
                let cc = self.u.pick(FloatCC::ALL);
                let (x, y) = (self.get(ty), self.get(ty));
                let r = self.b.ins().fcmp(cc, x, y).bug();
                self.put(r);
            }
            Select | SelectSpectreGuard => {
                let Some(c) = self.condition_value() else {
                    return false;
                };
                let (x, y) = (self.get(ty), self.get(ty));
                let r = self.ternary(op, c, x, y);
                self.put(r);
            }
            Bitselect => {
                let (c, x, y) = (self.get(ty), self.get(ty), self.get(ty));
                let r = self.ternary(op, c, x, y);
                self.put(r);
            }
            Udiv | Urem | Sdiv | Srem => return self.division(op, ty),
            UaddOverflow | SaddOverflow | UsubOverflow | SsubOverflow | UmulOverflow
            | SmulOverflow => {
                let (x, y) = (self.get(ty), self.get(ty));
                let data = D::Binary {
                    opcode: op,
                    args: [x, y],
                };
                self.put_results(data);
            }
            UaddOverflowCin | SaddOverflowCin | UsubOverflowBin | SsubOverflowBin => {
                let Some(carry) = self.boolean() else {
                    return false;
                };
                let (x, y) = (self.get(ty), self.get(ty));
                let data = D::Ternary {
                    opcode: op,
                    args: [x, y, carry],
                };
                self.put_results(data);
            }
            UaddOverflowTrap => return self.add_trap(ty),
            Uextend | Sextend | Ireduce => {
                let Some(from) = self.pick_type(ints_beside(ty, op == Ireduce)) else {
                    return false;
                };
                let x = self.get(from);
                let r = self.unary(op, ty, x);
                self.put(r);
            }
            Fpromote | Fdemote => {
                let from = if op == Fpromote { Type::F32 } else { Type::F64 };
                if !self.ctx.is_usable(from) {
                    return false;
                }
                let x = self.get(from);
                let r = self.unary(op, ty, x);
                self.put_maybe_canon(op, r);
            }
            FcvtToUintSat | FcvtToSintSat => {
                let Some(from) = self.pick_type(FLOATS) else {
                    return false;
                };
                let x = self.get(from);
                let r = self.unary(op, ty, x);
                self.put(r);
            }
            FcvtToUint | FcvtToSint => return self.float_to_int(op, ty),
            FcvtFromUint | FcvtFromSint => {
                let Some(from) = self.pick_type(INTS) else {
                    return false;
                };
                let x = self.get(from);
                let r = self.unary(op, ty, x);
                self.put(r);
            }
            Bitcast => {
                let from = match ty {
                    Type::I32 => Type::F32,
                    Type::I64 => Type::F64,
                    Type::F32 => Type::I32,
                    Type::F64 => Type::I64,
                    _ => return false,
                };
                if !self.ctx.is_usable(from) {
                    return false;
                }
                let x = self.get(from);
                let Some(r) = self.bitcast(x, ty) else {
                    return false;
                };
                self.put(r);
            }
            Trapz | Trapnz => return self.cond_trap(op),
            _ => return false,
        }
        true
    }

    fn canon_types(&self) -> u8 {
        let mut m = 0;
        for t in [Type::F32, Type::F64] {
            if self.can_canon(t) {
                m |= 1 << ti(t);
            }
        }
        m
    }

    fn put_maybe_canon(&mut self, op: Opcode, r: Value) {
        let r = if needs_canon(op) { self.canon(r) } else { r };
        self.put(r);
    }

    /// Emit `data` and keep both of its results.
    fn put_results(&mut self, data: D) {
        let inst = self.emit(data, Type::INVALID);
        let (a, b) = {
            let rs = self.b.inst_results(inst);
            (rs[0], rs[1])
        };
        self.put(a);
        self.put(b);
    }

    /// An integer value to test for nonzero: a variable or a fresh comparison.
    pub(super) fn condition_value(&mut self) -> Option<Value> {
        if self.u.chance(50) {
            if let Some(t) = self.pick_type(INTS) {
                return Some(self.get(t));
            }
        }
        self.boolean()
    }

    /// A fresh 0-or-1 `i8`: a comparison (rule carry-bool).
    pub(super) fn boolean(&mut self) -> Option<Value> {
        let float = self.u.chance(20);
        if float {
            if let Some(t) = self.pick_type(self.ctx.types(Opcode::Fcmp)) {
                let cc = self.u.pick(FloatCC::ALL);
                let (x, y) = (self.get(t), self.get(t));
                return Some(self.b.ins().fcmp(cc, x, y).bug());
            }
        }
        let t = self.pick_type(self.ctx.types(Opcode::Icmp))?;
        let cc = self.u.pick(IntCC::ALL);
        let (x, y) = (self.get(t), self.get(t));
        Some(self.b.ins().icmp(cc, x, y).bug())
    }

    /// A comparison that is rarely true: `icmp eq x, K` for a random constant `K`.
    pub(super) fn rare_condition(&mut self) -> Option<Value> {
        self.rare_condition_as(false)
    }

    fn unguarded(&mut self) -> bool {
        self.u.chance(self.cfg.unguarded_percent)
    }

    /// Rule div-guard.
    fn division(&mut self, op: Opcode, ty: Type) -> bool {
        let x = self.get(ty);
        let mut d = self.get(ty);
        if !self.unguarded() {
            if !self.ok(Opcode::Bor, ty) || !self.ctx.is_usable(ty) {
                return false;
            }
            let one = self.one(ty);
            d = self.binary(Opcode::Bor, d, one);
            if matches!(op, Opcode::Sdiv | Opcode::Srem) {
                if !self.ok(Opcode::Icmp, ty) || !self.ok(Opcode::Select, ty) {
                    return false;
                }
                let minus_one = self.all_ones(ty);
                let is_m1 = self.b.ins().icmp(IntCC::Equal, d, minus_one).bug();
                d = self.b.ins().select(is_m1, one, d).bug();
            }
        }
        let r = self.binary(op, x, d);
        self.put(r);
        true
    }

    fn one(&mut self, ty: Type) -> Value {
        if ty == Type::I128 {
            let one = self.b.ins().iconst(Type::I64, 1).bug();
            return self
                .int_resize(one, ty)
                .unwrap_or_else(|| panic!("i128 is usable, so it can be made"));
        }
        self.b.ins().iconst(ty, 1).bug()
    }

    fn all_ones(&mut self, ty: Type) -> Value {
        if ty == Type::I128 {
            let m1 = self.b.ins().iconst(Type::I64, -1).bug();
            return if self.ok(Opcode::Sextend, ty) {
                self.unary(Opcode::Sextend, ty, m1)
            } else {
                self.b.ins().iconcat(m1, m1).bug()
            };
        }
        let ones = u64::MAX >> (64 - ty.bits());
        self.b.ins().iconst(ty, ones as i64).bug()
    }

    /// Rule add-trap-guard.
    fn add_trap(&mut self, ty: Type) -> bool {
        let (mut x, mut y) = (self.get(ty), self.get(ty));
        if !self.unguarded() {
            if !self.ok(Opcode::Ushr, ty) {
                return false;
            }
            let one = self.b.ins().iconst(Type::I8, 1).bug();
            x = self.b.ins().ushr(x, one).bug();
            y = self.b.ins().ushr(y, one).bug();
        }
        let code = self.trap_code();
        let data = D::IntAddTrap {
            opcode: Opcode::UaddOverflowTrap,
            args: [x, y],
            code,
        };
        let r = self.emit1(data, Type::INVALID);
        self.put(r);
        true
    }

    /// A trap code: usually `int_ovf`, sometimes a user code.
    pub(super) fn trap_code(&mut self) -> TrapCode {
        if self.u.chance(70) {
            TrapCode::INTEGER_OVERFLOW
        } else {
            TrapCode::user(self.u.range(1, 250) as u8).expect("1..=250 is a user code")
        }
    }

    /// Rule cvt-guard.
    fn float_to_int(&mut self, op: Opcode, ty: Type) -> bool {
        let Some(from) = self.pick_type(FLOATS) else {
            return false;
        };
        let mut x = self.get(from);
        if !self.unguarded() {
            let needed = [Opcode::Fabs, Opcode::Fcmp, Opcode::Select];
            if needed.iter().any(|&o| !self.ok(o, from)) {
                return false;
            }
            let unsigned = op == Opcode::FcvtToUint;
            let abs = self.unary(Opcode::Fabs, from, x);
            if unsigned {
                x = abs;
            }
            let bound_bits = if unsigned { ty.bits() } else { ty.bits() - 1 };
            let bound = 2f64.powi(bound_bits as i32);
            let (limit, zero) = if from == Type::F32 {
                let l = self.f32c((bound as f32).to_bits());
                (l, self.f32c(0))
            } else {
                let l = self.f64c(bound.to_bits());
                (l, self.f64c(0))
            };
            let fits = self.b.ins().fcmp(FloatCC::LessThan, abs, limit).bug();
            x = self.b.ins().select(fits, x, zero).bug();
        }
        let r = self.unary(op, ty, x);
        self.put(r);
        true
    }

    fn f32c(&mut self, imm: u32) -> Value {
        let data = D::UnaryIeee32 {
            opcode: Opcode::F32const,
            imm,
        };
        self.emit1(data, Type::INVALID)
    }

    fn f64c(&mut self, imm: u64) -> Value {
        let data = D::UnaryIeee64 {
            opcode: Opcode::F64const,
            imm,
        };
        self.emit1(data, Type::INVALID)
    }

    /// Rule rare-traps. The condition takes every shape the lowering treats differently: an
    /// `icmp` or `fcmp` the trap can fuse, or a plain value (`bxor` of a comparison with 1).
    /// Each shape traps only when the rare condition holds.
    fn cond_trap(&mut self, op: Opcode) -> bool {
        if !self.ok(op, Type::I8) {
            return false;
        }
        let trap_when_zero = op == Opcode::Trapz;
        let c = match self.u.below(3) {
            // A comparison that is true exactly when the trap must fire (trapnz), or false
            // exactly then (trapz: the inverse comparison).
            0 => self.rare_condition_as(trap_when_zero),
            1 => self.rare_float_condition_as(trap_when_zero),
            // A plain value: the comparison flipped with `bxor 1`.
            _ => self.rare_condition_as(!trap_when_zero).and_then(|c| {
                self.ok(Opcode::Bxor, Type::I8).then(|| {
                    let one = self.b.ins().iconst(Type::I8, 1).bug();
                    self.b.ins().bxor(c, one).bug()
                })
            }),
        };
        let Some(c) = c else {
            return false;
        };
        let code = self.trap_code();
        let data = D::CondTrap {
            opcode: op,
            arg: c,
            code,
        };
        self.emit(data, Type::INVALID);
        true
    }

    /// A rare integer condition (`x == k` or `x < k` unsigned), or its inverse.
    fn rare_condition_as(&mut self, inverse: bool) -> Option<Value> {
        let t = self.pick_type(self.ctx.types(Opcode::Icmp) & self.ctx.types(Opcode::Iconst))?;
        let x = self.get(t);
        let k = self.konst(t);
        let cc = match (self.u.chance(50), inverse) {
            (true, false) => IntCC::Equal,
            (true, true) => IntCC::NotEqual,
            (false, false) => IntCC::UnsignedLessThan,
            (false, true) => IntCC::UnsignedGreaterThanOrEqual,
        };
        Some(self.b.ins().icmp(cc, x, k).bug())
    }

    /// A rare float condition (`x == k`), or its exact inverse (`x != k`, true when unordered).
    fn rare_float_condition_as(&mut self, inverse: bool) -> Option<Value> {
        let floats = (1 << ti(Type::F32)) | (1 << ti(Type::F64));
        let t = self.pick_type(self.ctx.types(Opcode::Fcmp) & floats)?;
        let x = self.get(t);
        let k = self.konst(t);
        let cc = if inverse {
            FloatCC::NotEqual
        } else {
            FloatCC::Equal
        };
        Some(self.b.ins().fcmp(cc, x, k).bug())
    }

    /// Rule addr-opaque: an address only feeds `icmp ne x, 0`.
    fn addr_probe(&mut self, op: Opcode) -> bool {
        if !self.ok(op, Type::I64) || !self.ok(Opcode::Icmp, Type::I64) {
            return false;
        }
        let a = self.emit1(D::NullAry { opcode: op }, Type::I64);
        let zero = self.b.ins().iconst(Type::I64, 0).bug();
        let r = self.b.ins().icmp(IntCC::NotEqual, a, zero).bug();
        self.put(r);
        true
    }
}
