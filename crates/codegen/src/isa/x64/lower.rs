//! The glue between the generated x86-64 selector (`lower.rules`) and the Lower driver.
//!
//! # Contract
//!
//! Implements the generated `Context` trait: extractors describe IR instructions to the
//! rules (read-only; they never merge anything), constructors emit [`Inst`]s into the current
//! IR instruction's sequence and return the registers holding results. The only constructors
//! that record a merge are those that consume a merged producer (`alu_imm`, `imul_imm`,
//! `shift_imm`, `cond_of`, and `cmp_cond` for an immediate operand), so a failed rule leaves
//! the use counts untouched. Calls and returns are lowered here directly through the ABI.

use kestrel_ir::{Inst as IrInst, InstructionData, IntCC, Opcode, TrapCode, Type, Value};
use kestrel_regalloc::{RegClass, VReg};

use super::abi;
use super::asm::alu::{AluOp, UnaryOp};
use super::asm::moves::ExtMode;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::shift::ShiftOp;
use super::asm::Size;
use super::inst::{Cond, Inst, RegImm};
use crate::machinst::lower::Lower;
use crate::machinst::{BlockIndex, CodegenError};

mod generated {
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/x64_lower.rs"));
}

/// An IR instruction as the rules see it.
#[derive(Clone, Debug)]
pub enum Op {
    Iconst { imm: i64 },
    Iadd { a: Value, b: Value },
    Isub { a: Value, b: Value },
    Imul { a: Value, b: Value },
    Band { a: Value, b: Value },
    Bor { a: Value, b: Value },
    Bxor { a: Value, b: Value },
    Bnot { a: Value },
    Ineg { a: Value },
    Ishl { a: Value, b: Value },
    Ushr { a: Value, b: Value },
    Sshr { a: Value, b: Value },
    Icmp { cc: IntCC, a: Value, b: Value },
    Select { c: Value, t: Value, f: Value },
    Uextend { a: Value },
    Sextend { a: Value },
    Ireduce { a: Value },
    Udiv { a: Value, b: Value },
    Sdiv { a: Value, b: Value },
    Urem { a: Value, b: Value },
    Srem { a: Value, b: Value },
    Trap { code: TrapCode },
    Trapz { c: Value, code: TrapCode },
    Trapnz { c: Value, code: TrapCode },
    Brif { c: Value },
    Jump {},
    Other {},
}

/// Which division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DivKind {
    Udiv,
    Sdiv,
    Urem,
    Srem,
}

/// A constant operand that a user may fold: the value and its sign-extended bits.
#[derive(Clone, Copy, Debug)]
pub struct Imm {
    value: Value,
    imm: i64,
}

/// A mergeable `icmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct Cmp {
    value: Value,
    cc: IntCC,
    a: Value,
    b: Value,
}

/// The registers an IR instruction's result lives in (none for side effects).
#[derive(Clone, Copy, Debug)]
pub struct Out(Option<VReg>);

/// Selection state for one IR instruction.
pub struct IselCtx<'a, 'f> {
    pub lower: &'a mut Lower<'f, Inst>,
    /// The instruction being lowered.
    pub inst: IrInst,
    /// The lowered successors, for a terminator.
    pub targets: &'a [BlockIndex],
}

/// The operation size for a type whose upper bits may be garbage (8/16 use 32-bit forms).
fn op_size(ty: Type) -> Size {
    if ty.bits() == 64 {
        Size::S64
    } else {
        Size::S32
    }
}

/// The exact size of an integer type.
fn exact_size(ty: Type) -> Size {
    match ty.bits() {
        8 => Size::S8,
        16 => Size::S16,
        32 => Size::S32,
        _ => Size::S64,
    }
}

fn int_cc(cc: IntCC) -> Cc {
    match cc {
        IntCC::Equal => Cc::E,
        IntCC::NotEqual => Cc::NE,
        IntCC::SignedLessThan => Cc::L,
        IntCC::SignedGreaterThanOrEqual => Cc::GE,
        IntCC::SignedGreaterThan => Cc::G,
        IntCC::SignedLessThanOrEqual => Cc::LE,
        IntCC::UnsignedLessThan => Cc::B,
        IntCC::UnsignedGreaterThanOrEqual => Cc::AE,
        IntCC::UnsignedGreaterThan => Cc::A,
        IntCC::UnsignedLessThanOrEqual => Cc::BE,
    }
}

impl IselCtx<'_, '_> {
    fn int(&mut self) -> VReg {
        self.lower.alloc_vreg(RegClass::Int)
    }

    fn ext(&mut self, signed: bool, a: Value, to_bits: u32) -> VReg {
        let from = self.lower.value_type(a).bits();
        let src = self.lower.value_vreg(a);
        let mode = match (from, to_bits == 64) {
            (8, false) => ExtMode::BL,
            (8, true) => ExtMode::BQ,
            (16, false) => ExtMode::WL,
            (16, true) => ExtMode::WQ,
            (32, true) => ExtMode::LQ,
            // Same width (32 → 32 is not an IR extension; a no-op for safety).
            _ => return src,
        };
        let dst = self.int();
        self.lower.emit(Inst::Ext {
            mode,
            signed,
            dst,
            src,
        });
        dst
    }

    fn test(&mut self, c: Value, cc: Cc) -> Cond {
        let size = exact_size(self.lower.value_type(c));
        let a = self.lower.value_vreg(c);
        Cond::Test { size, cc, a }
    }
}

impl generated::Context for IselCtx<'_, '_> {
    fn inst_op(&mut self, i: IrInst) -> Op {
        use InstructionData as D;
        match *self.lower.data(i) {
            D::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Op::Iconst { imm },
            D::Binary {
                opcode,
                args: [a, b],
            } => match opcode {
                Opcode::Iadd => Op::Iadd { a, b },
                Opcode::Isub => Op::Isub { a, b },
                Opcode::Imul => Op::Imul { a, b },
                Opcode::Band => Op::Band { a, b },
                Opcode::Bor => Op::Bor { a, b },
                Opcode::Bxor => Op::Bxor { a, b },
                Opcode::Ishl => Op::Ishl { a, b },
                Opcode::Ushr => Op::Ushr { a, b },
                Opcode::Sshr => Op::Sshr { a, b },
                Opcode::Udiv => Op::Udiv { a, b },
                Opcode::Sdiv => Op::Sdiv { a, b },
                Opcode::Urem => Op::Urem { a, b },
                Opcode::Srem => Op::Srem { a, b },
                _ => Op::Other {},
            },
            D::Unary { opcode, arg: a } => match opcode {
                Opcode::Bnot => Op::Bnot { a },
                Opcode::Ineg => Op::Ineg { a },
                Opcode::Uextend => Op::Uextend { a },
                Opcode::Sextend => Op::Sextend { a },
                Opcode::Ireduce => Op::Ireduce { a },
                _ => Op::Other {},
            },
            D::IntCompare {
                opcode: Opcode::Icmp,
                cond,
                args: [a, b],
            } => Op::Icmp { cc: cond, a, b },
            D::Ternary {
                opcode: Opcode::Select,
                args: [c, t, f],
            } => Op::Select { c, t, f },
            D::Trap {
                opcode: Opcode::Trap,
                code,
            } => Op::Trap { code },
            D::CondTrap { opcode, arg, code } => match opcode {
                Opcode::Trapz => Op::Trapz { c: arg, code },
                Opcode::Trapnz => Op::Trapnz { c: arg, code },
                _ => Op::Other {},
            },
            D::Brif { arg, .. } => Op::Brif { c: arg },
            D::Jump { .. } => Op::Jump {},
            _ => Op::Other {},
        }
    }

    fn result_type(&mut self, i: IrInst) -> Option<Type> {
        let v = self.lower.f.dfg.first_result(i)?;
        Some(self.lower.value_type(v))
    }

    fn int_ty(&mut self, ty: Type) -> Option<Type> {
        (ty.is_int() && ty.bits() <= 64).then_some(ty)
    }

    fn imm32(&mut self, v: Value) -> Option<Imm> {
        let imm = self.lower.const_value(v)?;
        i32::try_from(imm).ok()?;
        Some(Imm { value: v, imm })
    }

    fn icmp_merge(&mut self, v: Value) -> Option<Cmp> {
        let inst = self.lower.mergeable_inst(v, self.inst)?;
        match *self.lower.data(inst) {
            InstructionData::IntCompare {
                opcode: Opcode::Icmp,
                cond,
                args: [a, b],
            } if self.lower.value_type(a).bits() <= 64 => Some(Cmp {
                value: v,
                cc: cond,
                a,
                b,
            }),
            _ => None,
        }
    }

    fn put_in_reg(&mut self, v: Value) -> VReg {
        self.lower.value_vreg(v)
    }

    fn out_reg(&mut self, r: VReg) -> Out {
        Out(Some(r))
    }

    fn mov_imm(&mut self, ty: Type, n: i64) -> VReg {
        let dst = self.int();
        let bits = ty.bits();
        let imm = if bits >= 64 {
            n as u64
        } else {
            (n as u64) & ((1u64 << bits) - 1)
        };
        self.lower.emit(Inst::MovImm { dst, imm });
        dst
    }

    fn alu(&mut self, ty: Type, op: AluOp, a: VReg, b: VReg) -> VReg {
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Alu {
            op,
            size,
            dst,
            a,
            b: RegImm::Reg(b),
        });
        dst
    }

    fn alu_imm(&mut self, ty: Type, op: AluOp, a: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Alu {
            op,
            size,
            dst,
            a,
            b: RegImm::Imm(k.imm as i32),
        });
        dst
    }

    fn imul(&mut self, ty: Type, a: VReg, b: VReg) -> VReg {
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Imul {
            size,
            dst,
            a,
            b: RegImm::Reg(b),
        });
        dst
    }

    fn imul_imm(&mut self, ty: Type, a: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Imul {
            size,
            dst,
            a,
            b: RegImm::Imm(k.imm as i32),
        });
        dst
    }

    fn unary(&mut self, ty: Type, op: UnaryOp, a: VReg) -> VReg {
        let dst = self.int();
        let size = op_size(ty);
        self.lower.emit(Inst::Unary { op, size, dst, a });
        dst
    }

    fn shift(&mut self, ty: Type, op: ShiftOp, a: VReg, amt: VReg) -> VReg {
        let bits = ty.bits();
        // The hardware masks the count to 5 (6) bits; narrower types need their own mask.
        let amt = if bits < 32 {
            let masked = self.int();
            self.lower.emit(Inst::Alu {
                op: AluOp::And,
                size: Size::S32,
                dst: masked,
                a: amt,
                b: RegImm::Imm(bits as i32 - 1),
            });
            masked
        } else {
            amt
        };
        let size = if op == ShiftOp::Shl {
            op_size(ty)
        } else {
            exact_size(ty)
        };
        let dst = self.int();
        self.lower.emit(Inst::ShiftCl {
            op,
            size,
            dst,
            a,
            amt,
        });
        dst
    }

    fn shift_imm(&mut self, ty: Type, op: ShiftOp, a: VReg, k: Imm) -> VReg {
        self.lower.merge(k.value);
        let imm = (k.imm as u64 & u64::from(ty.bits() - 1)) as u8;
        let size = if op == ShiftOp::Shl {
            op_size(ty)
        } else {
            exact_size(ty)
        };
        let dst = self.int();
        self.lower.emit(Inst::ShiftImm {
            op,
            size,
            dst,
            a,
            imm,
        });
        dst
    }

    fn uext(&mut self, a: Value, ty: Type) -> VReg {
        self.ext(false, a, ty.bits())
    }

    fn sext(&mut self, a: Value, ty: Type) -> VReg {
        self.ext(true, a, ty.bits())
    }

    fn div(&mut self, ty: Type, kind: DivKind, a: Value, b: Value) -> VReg {
        let signed = matches!(kind, DivKind::Sdiv | DivKind::Srem);
        let rem = matches!(kind, DivKind::Urem | DivKind::Srem);
        let (dividend, divisor) = if ty.bits() < 32 {
            (self.ext(signed, a, 32), self.ext(signed, b, 32))
        } else {
            (self.lower.value_vreg(a), self.lower.value_vreg(b))
        };
        let tmp = self.int();
        let dst = self.int();
        self.lower.emit(Inst::Div {
            size: op_size(ty),
            narrow: exact_size(ty),
            signed,
            rem,
            dividend,
            divisor,
            tmp,
            dst,
        });
        dst
    }

    fn setcc(&mut self, cond: Cond) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::Setcc { cond, dst });
        dst
    }

    fn cmov(&mut self, cond: Cond, t: VReg, f: VReg) -> VReg {
        let dst = self.int();
        self.lower.emit(Inst::Cmov { cond, t, f, dst });
        dst
    }

    fn trap(&mut self, code: TrapCode) -> Out {
        self.lower.emit(Inst::Ud2 { code });
        Out(None)
    }

    fn trap_if(&mut self, cond: Cond, code: TrapCode) -> Out {
        self.lower.emit(Inst::TrapIf { cond, code });
        Out(None)
    }

    fn branch(&mut self, cond: Cond) -> Out {
        self.lower.emit(Inst::CondBr {
            cond,
            taken: self.targets[0],
            not_taken: self.targets[1],
        });
        Out(None)
    }

    fn jump(&mut self) -> Out {
        self.lower.emit(Inst::Jmp {
            target: self.targets[0],
        });
        Out(None)
    }

    fn cmp_cond(&mut self, cc: IntCC, a: Value, b: Value) -> Cond {
        let size = exact_size(self.lower.value_type(a));
        let a = self.lower.value_vreg(a);
        let b = match self
            .lower
            .const_value(b)
            .and_then(|k| i32::try_from(k).ok())
        {
            Some(k) => {
                self.lower.merge(b);
                RegImm::Imm(k)
            }
            None => RegImm::Reg(self.lower.value_vreg(b)),
        };
        Cond::Cmp {
            size,
            cc: int_cc(cc),
            a,
            b,
        }
    }

    fn cond_of(&mut self, m: Cmp) -> Cond {
        self.lower.merge(m.value);
        self.cmp_cond(m.cc, m.a, m.b)
    }

    fn nonzero(&mut self, c: Value) -> Cond {
        self.test(c, Cc::NE)
    }

    fn zero(&mut self, c: Value) -> Cond {
        self.test(c, Cc::E)
    }

    fn invert(&mut self, c: Cond) -> Cond {
        c.invert()
    }
}

/// Lower one non-branch IR instruction (calls and returns through the ABI, the rest by the
/// rules).
pub fn lower_inst(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
) -> Result<Option<Vec<VReg>>, CodegenError> {
    let f = lower.f;
    match *f.dfg.inst(inst) {
        InstructionData::MultiAry {
            opcode: Opcode::Return,
            args,
        } => {
            abi::gen_return(lower, f.dfg.pool.get(args))?;
            return Ok(Some(Vec::new()));
        }
        InstructionData::Call { func_ref, args, .. } => {
            let ext = &f.ext_funcs[func_ref];
            let sig = &f.signatures[ext.signature];
            let regs = abi::gen_call(lower, ext.name.clone(), sig, f.dfg.pool.get(args))?;
            return Ok(Some(regs));
        }
        _ => {}
    }
    let mut ctx = IselCtx {
        lower,
        inst,
        targets: &[],
    };
    Ok(generated::constructor_lower(&mut ctx, inst).map(|o| o.0.into_iter().collect()))
}

/// Lower a block terminator with its lowered successors.
pub fn lower_branch(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
    targets: &[BlockIndex],
) -> Option<()> {
    let mut ctx = IselCtx {
        lower,
        inst,
        targets,
    };
    generated::constructor_lower_branch(&mut ctx, inst).map(|_| ())
}
