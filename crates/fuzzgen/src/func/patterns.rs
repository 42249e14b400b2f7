//! Statements shaped like what the mid-end's rules look for (`kestrel-opt`'s
//! `simplify.rules`), so campaigns exercise every rewrite: an operation on one value twice,
//! with 0, 1 or all ones, doubled negations, constants to reassociate, extension chains and
//! reductions, multiplication and unsigned division by powers of two, division and remainder
//! by other constants (which cannot trap), selects on constants.
//! Every instruction passes the opcode filter like any other; none can trap.

use kestrel_ir::{IntCC, Opcode, Type, Value};

use super::{FuncGen, OrBug};
use crate::draw::Draw;

/// i8 to i64: the types an `iconst` can have.
const NARROW_INTS: u8 = 0b1111;

impl FuncGen<'_, '_> {
    /// Emit one pattern; false if the filter allowed none of the tries.
    pub(super) fn pattern(&mut self) -> bool {
        let Some(ty) = self.pick_type(NARROW_INTS) else {
            return false;
        };
        match self.u.below(8) {
            0 => self.same_operands(ty),
            1 => self.special_constant(ty),
            2 => self.double_unary(ty),
            3 => self.reassociation(ty),
            4 => self.extension_chain(),
            5 => self.power_of_two(ty),
            6 => self.division_by_constant(ty),
            _ => self.constant_select(ty),
        }
    }

    /// `iconst.ty` of `imm` at the type's width, in the parser's form (zero-extended).
    fn iconst(&mut self, ty: Type, imm: i64) -> Option<Value> {
        let imm = match ty.bits() {
            64 => imm,
            bits => imm & ((1i64 << bits) - 1),
        };
        self.ok(Opcode::Iconst, ty)
            .then(|| self.b.ins().iconst(ty, imm).bug())
    }

    /// `x op x` or `icmp cc x, x`.
    fn same_operands(&mut self, ty: Type) -> bool {
        use Opcode::*;
        let op = self.u.pick(&[Isub, Band, Bor, Bxor, Icmp]);
        if !self.ok(op, ty) {
            return false;
        }
        let x = self.get(ty);
        let r = match op {
            Icmp => {
                let cc = self.u.pick(IntCC::ALL);
                self.b.ins().icmp(cc, x, x).bug()
            }
            _ => self.binary(op, x, x),
        };
        self.put(r);
        true
    }

    /// `x op k` (or `k op x`) for `k` in 0, 1, all ones.
    fn special_constant(&mut self, ty: Type) -> bool {
        use Opcode::*;
        let op = self.u.pick(&[
            Iadd, Isub, Imul, Band, Bor, Bxor, Ishl, Ushr, Sshr, Rotl, Rotr,
        ]);
        let imm = self.u.pick(&[0, 1, -1]);
        let Some(k) = self.ok(op, ty).then(|| self.iconst(ty, imm)).flatten() else {
            return false;
        };
        let x = self.get(ty);
        let k_left = matches!(op, Iadd | Imul | Band | Bor | Bxor) && self.u.chance(50);
        let r = if k_left {
            self.binary(op, k, x)
        } else {
            self.binary(op, x, k)
        };
        self.put(r);
        true
    }

    /// `ineg (ineg x)` or `bnot (bnot x)`.
    fn double_unary(&mut self, ty: Type) -> bool {
        let op = self.u.pick(&[Opcode::Ineg, Opcode::Bnot]);
        if !self.ok(op, ty) {
            return false;
        }
        let x = self.get(ty);
        let once = self.unary(op, ty, x);
        let r = self.unary(op, ty, once);
        self.put(r);
        true
    }

    /// `(x op k1) op k2`.
    fn reassociation(&mut self, ty: Type) -> bool {
        use Opcode::*;
        let op = self.u.pick(&[Iadd, Imul, Band, Bor, Bxor]);
        if !self.ok(op, ty) {
            return false;
        }
        let (a, b) = (
            self.u.below(256) as i64 - 128,
            self.u.below(256) as i64 - 128,
        );
        let (Some(k1), Some(k2)) = (self.iconst(ty, a), self.iconst(ty, b)) else {
            return false;
        };
        let x = self.get(ty);
        let inner = self.binary(op, x, k1);
        let r = self.binary(op, inner, k2);
        self.put(r);
        true
    }

    /// An extension of `x`, extended again or reduced to a type at most as wide.
    fn extension_chain(&mut self) -> bool {
        use Opcode::*;
        let ints = [Type::I8, Type::I16, Type::I32, Type::I64];
        let (a, b) = (self.u.below(3), 1 + self.u.below(3));
        let (from, mid) = (ints[a.min(b - 1)], ints[b.max(a + 1).min(3)]);
        let first = self.u.pick(&[Uextend, Sextend]);
        if from.bits() >= mid.bits() || !self.ok(first, mid) {
            return false;
        }
        let x = self.get(from);
        let e = self.unary(first, mid, x);
        let widen = mid != Type::I64 && self.u.chance(40);
        let (op, to) = if widen {
            (self.u.pick(&[Uextend, Sextend]), Type::I64)
        } else {
            let narrower: Vec<Type> = ints.into_iter().filter(|t| t.bits() < mid.bits()).collect();
            (Ireduce, self.u.pick(&narrower))
        };
        if !self.ok(op, to) {
            return false;
        }
        let r = self.unary(op, to, e);
        self.put(r);
        true
    }

    /// `x * 2^n`, `x udiv 2^n`, `x urem 2^n`.
    fn power_of_two(&mut self, ty: Type) -> bool {
        use Opcode::*;
        let op = self.u.pick(&[Imul, Udiv, Urem]);
        let n = self.u.below(ty.bits() as usize) as u32;
        let imm = (1u64 << n) as i64;
        let Some(k) = self.ok(op, ty).then(|| self.iconst(ty, imm)).flatten() else {
            return false;
        };
        let x = self.get(ty);
        let r = if op == Imul && self.u.chance(50) {
            self.binary(op, k, x)
        } else {
            self.binary(op, x, k)
        };
        self.put(r);
        true
    }

    /// `x op d` for a division or remainder (`udiv urem sdiv srem`) by a constant `d` that
    /// cannot trap: small (both signs, powers of two among them), or any bits, never 0 nor,
    /// for the signed ones, -1.
    fn division_by_constant(&mut self, ty: Type) -> bool {
        use Opcode::*;
        let op = self.u.pick(&[Udiv, Urem, Sdiv, Srem]);
        let small = 1 + self.u.below(100) as i64;
        let mut d = match self.u.below(4) {
            0 => small,
            1 => -small,
            2 => 1i64 << self.u.below(ty.bits() as usize),
            _ => crate::values::iconst_imm(self.u, ty),
        };
        let bits = ty.bits();
        let at_width = |v: i64| {
            if bits == 64 {
                v
            } else {
                v & ((1i64 << bits) - 1)
            }
        };
        let minus_one = at_width(-1);
        if at_width(d) == 0 || (matches!(op, Sdiv | Srem) && at_width(d) == minus_one) {
            d = 3;
        }
        let Some(k) = self.ok(op, ty).then(|| self.iconst(ty, d)).flatten() else {
            return false;
        };
        let x = self.get(ty);
        let r = self.binary(op, x, k);
        self.put(r);
        true
    }

    /// `select k, x, y` with a constant `k`, or `select c, x, x`.
    fn constant_select(&mut self, ty: Type) -> bool {
        if !self.ok(Opcode::Select, ty) {
            return false;
        }
        let c = if self.u.chance(70) {
            let imm = self.u.pick(&[0, 1, 2]);
            self.iconst(Type::I8, imm)
        } else {
            self.condition_value()
        };
        let Some(c) = c else {
            return false;
        };
        let x = self.get(ty);
        let y = if self.u.chance(30) { x } else { self.get(ty) };
        let r = self.ternary(Opcode::Select, c, x, y);
        self.put(r);
        true
    }
}
