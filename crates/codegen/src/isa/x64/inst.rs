//! x86-64 machine instructions over virtual registers, and their operands.
//!
//! # Contract
//!
//! Each [`Inst`] variant documents its operand list (the order [`Inst::collect_operands`]
//! reports and the order `emit` reads allocations in). Every operand has a register
//! constraint (any, fixed or reuse), never a stack one, so every allocation `emit` sees is a
//! register; values live in spill slots only between instructions, moved by the allocator's
//! edits.
//!
//! Integer values narrower than 64 bits live in the low bits of a 64-bit register; the upper
//! bits are unspecified. An instruction whose result depends on them (compares, right shifts,
//! division, extension) works at the value's exact width or extends first.

use kestrel_ir::{AtomicRmwOp, FunctionName, TrapCode};
use kestrel_regalloc::{
    Operand, OperandConstraint, OperandKind, OperandPos, PReg, PRegSet, RegClass, VReg,
};

use super::asm::alu::{AluOp, UnaryOp};
use super::asm::bits::{BitCount, ShiftX};
use super::asm::moves::ExtMode;
use super::asm::setcc_cmov_jcc::Cc;
use super::asm::shift::{DoubleShift, ShiftOp};
use super::asm::sse::{FloatSize, RoundMode, SseOp};
use super::asm::{Gpr, Size};
use crate::machinst::BlockIndex;

/// The hardware register `gpr` as an allocator register.
pub fn gpr_preg(gpr: Gpr) -> PReg {
    PReg::new(usize::from(gpr.enc()), RegClass::Int)
}

/// A register operand or a 32-bit immediate (sign-extended to the operation size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegImm {
    Reg(VReg),
    Imm(i32),
}

/// What a condition reads from the flags: one condition code, or two combined (a float
/// compare's `eq` is `E and NP`, its `ne` is `NE or P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    One(Cc),
    And(Cc, Cc),
    Or(Cc, Cc),
}

impl Pred {
    /// The negation (De Morgan for the pairs).
    pub fn invert(self) -> Pred {
        match self {
            Pred::One(c) => Pred::One(c.invert()),
            Pred::And(c, d) => Pred::Or(c.invert(), d.invert()),
            Pred::Or(c, d) => Pred::And(c.invert(), d.invert()),
        }
    }
}

/// A flag-setting test and the condition read from it; fused into the instruction that
/// consumes the flags, so nothing can come between the two.
///
/// Operands: `Cmp`: `[a, b]` (`b` only when a register); `Test`: `[a]`; `CmpMem`: `[a,
/// mem…]`; `Fcmp`: `[a, b]`; `Cmp128`: `[a_lo, a_hi, b_lo, b_hi]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `cmp a, b` at `size`; true when `cc` holds.
    Cmp {
        size: Size,
        cc: Cc,
        a: VReg,
        b: RegImm,
    },
    /// `test a, a` at `size`; `cc` is `NE` (nonzero) or `E` (zero).
    Test { size: Size, cc: Cc, a: VReg },
    /// `cmp a, [mem]` at `size` (a load merged into the compare; a trap site with `trap`
    /// when the access may fault); true when `cc` holds.
    CmpMem {
        size: Size,
        cc: Cc,
        a: VReg,
        mem: Mem,
        trap: Option<TrapCode>,
    },
    /// `ucomis a, b` (float registers); true when `pred` holds. Unordered sets ZF, PF and CF,
    /// `a < b` sets CF, equal sets ZF.
    Fcmp {
        size: FloatSize,
        pred: Pred,
        a: VReg,
        b: VReg,
    },
    /// `cmp a_lo, b_lo; sbb a_hi, b_hi` (on a scratch copy of `a_hi` in r11): the borrow,
    /// sign and overflow of the 128-bit `a - b`, so `cc` is one of `L`, `GE`, `B`, `AE`
    /// (ZF is meaningless).
    Cmp128 { cc: Cc, a: [VReg; 2], b: [VReg; 2] },
}

impl Cond {
    /// The same test with the opposite condition.
    pub fn invert(self) -> Cond {
        match self {
            Cond::Cmp { size, cc, a, b } => Cond::Cmp {
                size,
                cc: cc.invert(),
                a,
                b,
            },
            Cond::Test { size, cc, a } => Cond::Test {
                size,
                cc: cc.invert(),
                a,
            },
            Cond::CmpMem {
                size,
                cc,
                a,
                mem,
                trap,
            } => Cond::CmpMem {
                size,
                cc: cc.invert(),
                a,
                mem,
                trap,
            },
            Cond::Fcmp { size, pred, a, b } => Cond::Fcmp {
                size,
                pred: pred.invert(),
                a,
                b,
            },
            Cond::Cmp128 { cc, a, b } => Cond::Cmp128 {
                cc: cc.invert(),
                a,
                b,
            },
        }
    }

    pub(crate) fn pred(self) -> Pred {
        match self {
            Cond::Cmp { cc, .. }
            | Cond::Test { cc, .. }
            | Cond::CmpMem { cc, .. }
            | Cond::Cmp128 { cc, .. } => Pred::One(cc),
            Cond::Fcmp { pred, .. } => pred,
        }
    }

    fn collect(&self, out: &mut Vec<Operand>) {
        match *self {
            Cond::Cmp { a, b, .. } => {
                out.push(Operand::reg_use(a));
                if let RegImm::Reg(b) = b {
                    out.push(Operand::reg_use(b));
                }
            }
            Cond::Test { a, .. } => out.push(Operand::reg_use(a)),
            Cond::CmpMem { a, mem, .. } => {
                out.push(Operand::reg_use(a));
                mem.collect(out);
            }
            Cond::Fcmp { a, b, .. } => {
                out.push(Operand::reg_use(a));
                out.push(Operand::reg_use(b));
            }
            Cond::Cmp128 { a, b, .. } => {
                for v in a.iter().chain(&b) {
                    out.push(Operand::reg_use(*v));
                }
            }
        }
    }

    /// Number of operands `collect` reports.
    pub(crate) fn num_operands(&self) -> usize {
        match self {
            Cond::Cmp {
                b: RegImm::Reg(_), ..
            }
            | Cond::Fcmp { .. } => 2,
            Cond::CmpMem { mem, .. } => 1 + mem.num_operands(),
            Cond::Cmp128 { .. } => 4,
            _ => 1,
        }
    }

    fn pretty(&self, ops: &[String]) -> String {
        match *self {
            Cond::Cmp { size, cc, b, .. } => {
                let b = match b {
                    RegImm::Reg(_) => ops[1].clone(),
                    RegImm::Imm(i) => i.to_string(),
                };
                format!("cmp{} {}, {b} ?{cc:?}", size.bits(), ops[0])
            }
            Cond::Test { size, cc, .. } => format!("test{} {} ?{cc:?}", size.bits(), ops[0]),
            Cond::CmpMem { size, cc, mem, .. } => {
                let n = 1 + mem.num_operands();
                let m = mem.pretty(&ops[1..n]);
                format!("cmp{} {}, {m} ?{cc:?}", size.bits(), ops[0])
            }
            Cond::Fcmp { pred, .. } => {
                let p = match pred {
                    Pred::One(c) => format!("{c:?}"),
                    Pred::And(c, d) => format!("{c:?} & {d:?}"),
                    Pred::Or(c, d) => format!("{c:?} | {d:?}"),
                };
                format!("ucomi {}, {} ?{p}", ops[0], ops[1])
            }
            Cond::Cmp128 { cc, .. } => {
                format!(
                    "cmp128 {}:{}, {}:{} ?{cc:?}",
                    ops[1], ops[0], ops[3], ops[2]
                )
            }
        }
    }
}

/// A memory operand: `[base + disp]` with a vreg base, or a place in the frame (`rsp` plus
/// the explicit stack slot's offset plus `disp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    Reg {
        base: VReg,
        disp: i32,
    },
    /// `[base + index << shift + disp]` (`shift` is 0 to 3).
    RegIndex {
        base: VReg,
        index: VReg,
        shift: u8,
        disp: i32,
    },
    Slot {
        slot: u32,
        disp: i32,
    },
    /// The outgoing return area (above the outgoing arguments at the bottom of the frame).
    RetArea {
        disp: i32,
    },
    /// An incoming stack argument: `[rbp + 16 + disp]`.
    IncomingArg {
        disp: i32,
    },
    /// An outgoing stack argument of the next call: `[rsp + disp]`.
    OutgoingArg {
        disp: i32,
    },
}

impl Mem {
    fn collect(&self, out: &mut Vec<Operand>) {
        match *self {
            Mem::Reg { base, .. } => out.push(Operand::reg_use(base)),
            Mem::RegIndex { base, index, .. } => {
                out.push(Operand::reg_use(base));
                out.push(Operand::reg_use(index));
            }
            _ => {}
        }
    }

    /// Number of operands the address takes (0, 1 or 2).
    pub(crate) fn num_operands(&self) -> usize {
        match self {
            Mem::Reg { .. } => 1,
            Mem::RegIndex { .. } => 2,
            _ => 0,
        }
    }

    /// The same place `delta` bytes further (`None` when the displacement overflows).
    pub(crate) fn offset(self, delta: i32) -> Option<Mem> {
        let add = |d: i32| d.checked_add(delta);
        Some(match self {
            Mem::Reg { base, disp } => Mem::Reg {
                base,
                disp: add(disp)?,
            },
            Mem::RegIndex {
                base,
                index,
                shift,
                disp,
            } => Mem::RegIndex {
                base,
                index,
                shift,
                disp: add(disp)?,
            },
            Mem::Slot { slot, disp } => Mem::Slot {
                slot,
                disp: add(disp)?,
            },
            Mem::RetArea { disp } => Mem::RetArea { disp: add(disp)? },
            Mem::IncomingArg { disp } => Mem::IncomingArg { disp: add(disp)? },
            Mem::OutgoingArg { disp } => Mem::OutgoingArg { disp: add(disp)? },
        })
    }

    /// The address as text; `ops` are the names of its operands (from the first).
    fn pretty(&self, ops: &[String]) -> String {
        match (self, ops.first()) {
            (
                Mem::RegIndex {
                    disp, shift: sh, ..
                },
                Some(b),
            ) => {
                let i = ops.get(1).map_or("?", |s| s.as_str());
                format!("[{b}+{i}*{}{disp:+}]", 1 << sh)
            }
            (Mem::RegIndex { disp, .. }, None) => format!("[?{disp:+}]"),
            (Mem::Reg { disp, .. }, Some(b)) => format!("[{b}{disp:+}]"),
            (Mem::Slot { slot, disp }, _) => format!("[ss{slot}{disp:+}]"),
            (Mem::RetArea { disp }, _) => format!("[ret_area{disp:+}]"),
            (Mem::IncomingArg { disp }, _) => format!("[in_arg{disp:+}]"),
            (Mem::OutgoingArg { disp }, _) => format!("[out_arg{disp:+}]"),
            (Mem::Reg { disp, .. }, None) => format!("[?{disp:+}]"),
        }
    }
}

/// How a load reads memory into a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// `mov` at 32 or 64 bits.
    Int(Size),
    /// `movzx` (or `mov r32` for 32 → 64).
    Zext(ExtMode),
    /// `movsx`/`movsxd`.
    Sext(ExtMode),
    /// `movss`/`movsd` into an XMM register.
    Float(FloatSize),
}

/// How a store writes a register to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    Int(Size),
    Float(FloatSize),
}

/// What a call calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallDest {
    /// A named function, by a `call rel32` relocation.
    Direct(FunctionName),
    /// An address in a register (the call's first operand).
    Indirect(VReg),
}

/// A value of the frame itself (see [`Inst::FrameValue`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameValue {
    StackPointer,
    FramePointer,
    ReturnAddress,
}

impl FrameValue {
    /// The IR opcode's name.
    pub fn name(self) -> &'static str {
        match self {
            FrameValue::StackPointer => "get_stack_pointer",
            FrameValue::FramePointer => "get_frame_pointer",
            FrameValue::ReturnAddress => "get_return_address",
        }
    }
}

/// One x86-64 instruction (or a short fixed sequence) over virtual registers.
#[derive(Clone, Debug)]
pub enum Inst {
    /// Entry pseudo-instruction: defines the register arguments. Operands: one late def per
    /// argument, fixed to its register.
    Args { args: Vec<(VReg, PReg)> },
    /// `dst = imm` (the shortest `mov`). Operands: `[dst def]`.
    MovImm { dst: VReg, imm: u64 },
    /// `dst = src`, 64 bits. Operands: `[src use, dst def]`.
    Mov { dst: VReg, src: VReg },
    /// `dst = a op b` (two-address). Operands: `[a use, b use?, dst def reusing a]`.
    Alu {
        op: AluOp,
        size: Size,
        dst: VReg,
        a: VReg,
        b: RegImm,
    },
    /// `dst = a * b`, truncated. Operands as `Alu`.
    Imul {
        size: Size,
        dst: VReg,
        a: VReg,
        b: RegImm,
    },
    /// `dst = a op [mem]` (`op` is not `cmp`) or, with `op` `None`, `dst = a * [mem]`
    /// (truncated): a load merged into its user, a trap site with `trap` when the access may
    /// fault. Operands: `[a use, address uses, dst def reusing a]`.
    AluMem {
        op: Option<AluOp>,
        size: Size,
        dst: VReg,
        a: VReg,
        mem: Mem,
        trap: Option<TrapCode>,
    },
    /// `dst = op a` (`neg`, `not`). Operands: `[a use, dst def reusing a]`.
    Unary {
        op: UnaryOp,
        size: Size,
        dst: VReg,
        a: VReg,
    },
    /// `dst = a op cl`. Operands: `[a use, amt use in rcx, dst def reusing a]`.
    ShiftCl {
        op: ShiftOp,
        size: Size,
        dst: VReg,
        a: VReg,
        amt: VReg,
    },
    /// `dst = a op amt` by BMI2 `shlx`/`shrx`/`sarx` (32 or 64 bits; the count in any
    /// register, masked to the width like `cl`). Operands: `[a use, amt use, dst def]`.
    ShiftX {
        op: ShiftX,
        size: Size,
        dst: VReg,
        a: VReg,
        amt: VReg,
    },
    /// `dst = a op imm`. Operands: `[a use, dst def reusing a]`.
    ShiftImm {
        op: ShiftOp,
        size: Size,
        dst: VReg,
        a: VReg,
        imm: u8,
    },
    /// Zero or sign extension. Operands: `[src use, dst def]`.
    Ext {
        mode: ExtMode,
        signed: bool,
        dst: VReg,
        src: VReg,
    },
    /// `dst = cond ? 1 : 0`. Operands: `[cond…, dst def]`.
    Setcc { cond: Cond, dst: VReg },
    /// `dst = cond ? t : f` (64-bit `cmov`; `cmov c1; cmov c2` for `Pred::Or`, never
    /// `Pred::And`: build it with [`Inst::cmov`]). Operands: `[cond…, t use, f use, dst def
    /// reusing f]`.
    Cmov {
        cond: Cond,
        t: VReg,
        f: VReg,
        dst: VReg,
    },
    /// Division of `dividend` by `divisor` at `size` (32 or 64; narrower types arrive
    /// extended), with the divide-by-zero trap and, for signed division, the overflow trap
    /// (`narrow` is the IR type's width, whose `MIN / -1` overflows). The remainder is left in
    /// `dst` when `rem`. Operands: `[dividend use in rax, divisor use, tmp early def in rdx,
    /// dst def in rax]`.
    Div {
        size: Size,
        narrow: Size,
        signed: bool,
        rem: bool,
        dividend: VReg,
        divisor: VReg,
        tmp: VReg,
        dst: VReg,
    },
    /// `jmp target`. No operands.
    Jmp { target: BlockIndex },
    /// `jcc taken; jmp not_taken` after the test. Operands: `[cond…]`.
    CondBr {
        cond: Cond,
        taken: BlockIndex,
        not_taken: BlockIndex,
    },
    /// A small `br_table`: `targets[0]` is the default, `targets[1 + k]` the target for
    /// index `k`. Emitted as a compare chain (`cmp idx, k; je target_k` …, `jmp default`).
    /// Operands: `[idx use]`.
    JmpTable {
        size: Size,
        idx: VReg,
        targets: Vec<BlockIndex>,
    },
    /// `dst = &table` for the [`Inst::JmpTableSeq`] with the same `targets`: the table (one
    /// 32-bit offset from the table's start per `targets[1..]`) goes to the constant pool.
    /// Operands: `[dst def]`.
    JmpTableBase { dst: VReg, targets: Vec<BlockIndex> },
    /// A `br_table` through a jump table: `cmp idx, n; jae default; movsxd r11, [base +
    /// idx*4]; add r11, base; jmp r11` (`r11` is the edit scratch, free inside an
    /// instruction). `idx` is zero-extended to 64 bits and compared at `size`; `targets` as
    /// in [`Inst::JmpTable`]. Opaque to the buffer's peephole: only the `jae` is a label use.
    /// Operands: `[idx use, base use]`.
    JmpTableSeq {
        size: Size,
        idx: VReg,
        base: VReg,
        targets: Vec<BlockIndex>,
    },
    /// Epilogue and `ret`. Operands: one use per returned value, fixed to its register.
    Ret { rets: Vec<(VReg, PReg)> },
    /// `ud2`, recorded as a trap site with `code`. No operands.
    Ud2 { code: TrapCode },
    /// Trap with `code` when `cond` holds. Operands: `[cond…]`.
    TrapIf { cond: Cond, code: TrapCode },
    /// `dst = op src`: lzcnt, tzcnt, popcnt. Operands: `[src use, dst def]`.
    BitCount {
        op: BitCount,
        size: Size,
        dst: VReg,
        src: VReg,
    },
    /// Byte swap (`bswap`, or `rol r16, 8`). Operands: `[a use, dst def reusing a]`.
    Bswap { size: Size, dst: VReg, a: VReg },
    /// High half of the product (`mul`/`imul` into `rdx:rax`). Operands: `[a use in rax, b use,
    /// dst def in rdx, tmp def in rax]`.
    MulHi {
        size: Size,
        signed: bool,
        a: VReg,
        b: VReg,
        dst: VReg,
        tmp: VReg,
    },
    /// `dst = a op b` at `size` and `flag = cc` of the flags it set (overflow/carry out).
    /// Operands: `[a use, b use?, dst def reusing a, flag def]`.
    AluFlags {
        op: AluOp,
        size: Size,
        dst: VReg,
        a: VReg,
        b: RegImm,
        cc: Cc,
        flag: VReg,
    },
    /// `dst = a op b + carry` (`adc`/`sbb` at `size`) where the carry in is `cin != 0` (an
    /// `i8`), and `flag = cc` afterwards. Operands: `[a use, b use, cin use, dst def reusing a,
    /// flag def]`.
    AluCarry {
        op: AluOp,
        size: Size,
        dst: VReg,
        a: VReg,
        b: VReg,
        cin: VReg,
        cc: Cc,
        flag: VReg,
    },
    /// `dst = a op b`, trapping with `code` when `cc` holds afterwards. Operands as `Alu`.
    AluTrap {
        op: AluOp,
        size: Size,
        dst: VReg,
        a: VReg,
        b: RegImm,
        cc: Cc,
        code: TrapCode,
    },
    /// A float constant (`xorps` for +0, else a constant-pool load). Operands: `[dst def]`.
    XmmConst {
        size: FloatSize,
        dst: VReg,
        bits: u64,
    },
    /// `dst = a op b`, two-address SSE. Operands: `[a use, b use, dst def reusing a]`.
    XmmRmR {
        op: SseOp,
        dst: VReg,
        a: VReg,
        b: VReg,
    },
    /// `dst = op src` (sqrt, conversions between widths). Operands: `[src use, dst def]`.
    XmmUnary { op: SseOp, dst: VReg, src: VReg },
    /// `dst = round(src)` (SSE4.1). Operands: `[src use, dst def]`.
    XmmRound {
        size: FloatSize,
        mode: RoundMode,
        dst: VReg,
        src: VReg,
    },
    /// Float `dst = cond ? t : f`. Operands: `[cond…, t use, f use, dst def reusing f]`.
    XmmSelect {
        cond: Cond,
        t: VReg,
        f: VReg,
        dst: VReg,
    },
    /// `fmin`/`fmax`: NaN if either is NaN, `-0 < +0`. Operands: `[a use, b use, dst def reusing a]`.
    FMinMax {
        size: FloatSize,
        max: bool,
        dst: VReg,
        a: VReg,
        b: VReg,
    },
    /// Bits of a GPR into an XMM register (`movd`/`movq`). Operands: `[src use, dst def]`.
    MovToXmm { size: Size, dst: VReg, src: VReg },
    /// Bits of an XMM register into a GPR. Operands: `[src use, dst def]`.
    MovFromXmm { size: Size, dst: VReg, src: VReg },
    /// Signed integer to float (`cvtsi2ss/sd`). Operands: `[src use, dst def]`.
    CvtIntToFloat {
        fsize: FloatSize,
        isize: Size,
        dst: VReg,
        src: VReg,
    },
    /// Unsigned 64-bit integer to float. Operands: `[src use, dst def]` (early def: written
    /// while `src` is still read).
    CvtU64ToFloat {
        fsize: FloatSize,
        dst: VReg,
        src: VReg,
    },
    /// 128-bit `dst = a op b` on halves: `op_lo` on the low halves, then `op_hi` (which may
    /// consume the carry, `adc`/`sbb`) on the high ones. Operands: `[a_lo, a_hi, b_lo, b_hi
    /// uses, dst_lo def reusing a_lo, dst_hi def reusing a_hi]`.
    /// With `flag`, also `flag = cc` of the final flags (carry or overflow of the whole
    /// 128-bit operation), as one more def.
    Alu128 {
        op_lo: AluOp,
        op_hi: AluOp,
        dst: [VReg; 2],
        a: [VReg; 2],
        b: [VReg; 2],
        /// A carry/borrow in (`cin != 0`), used by `op_lo` (then `adc`/`sbb`).
        cin: Option<VReg>,
        flag: Option<(Cc, VReg)>,
    },
    /// `shld/shrd dst, b, cl` at 64 bits. Operands: `[a use, b use, amt use in rcx, dst def
    /// reusing a]`.
    ShiftDouble {
        op: DoubleShift,
        dst: VReg,
        a: VReg,
        b: VReg,
        amt: VReg,
    },
    /// Load from memory; a trap site with `trap` when the access may fault. Operands:
    /// `[base use?, dst def]`.
    Load {
        kind: LoadKind,
        dst: VReg,
        mem: Mem,
        trap: Option<TrapCode>,
    },
    /// Store to memory. Operands: `[src use, base use?]`.
    Store {
        kind: StoreKind,
        src: VReg,
        mem: Mem,
        trap: Option<TrapCode>,
    },
    /// `dst = address of the outgoing return area` (of `size` bytes, for the call that
    /// follows). Operands: `[dst def]`.
    RetAreaAddr { dst: VReg, size: u32 },
    /// `dst = address of the stack slot plus disp` (`lea`). Operands: `[dst def]`.
    StackAddr { dst: VReg, slot: u32, disp: i32 },
    /// `dst = rsp`, `rbp`, or the return address `[rbp + 8]` (`get_stack_pointer`,
    /// `get_frame_pointer`, `get_return_address`; the last two make the function set up a
    /// frame). Operands: `[dst def]`.
    FrameValue { dst: VReg, what: FrameValue },
    /// `dst = address of name + offset`: `lea dst, [rip + name + offset]` (PC-relative
    /// relocation) when the symbol is colocated, else `mov dst, [rip + GOT(name)]` then
    /// `lea dst, [dst + offset]` if `offset` is not 0. Operands: `[dst def]`.
    SymbolAddr {
        dst: VReg,
        name: FunctionName,
        offset: i32,
        got: bool,
    },
    /// `dst = src` as an integer (`fcvt_to_{s,u}int[_sat]` to 32 or 64 bits): traps with
    /// `bad_toint` on NaN and `int_ovf` out of range, or saturates (`sat`; NaN gives 0).
    /// Operands: `[src use, dst def]`.
    FcvtToInt {
        fsize: FloatSize,
        isize: Size,
        signed: bool,
        sat: bool,
        dst: VReg,
        src: VReg,
    },
    /// `lo = a * b` (one-operand `mul`/`imul` at `size`) and `flag` = the product overflowed.
    /// Operands: `[a use in rax, b use, tmp early def in rdx, lo def in rax, flag def]`.
    MulOverflow {
        size: Size,
        signed: bool,
        a: VReg,
        b: VReg,
        tmp: VReg,
        lo: VReg,
        flag: VReg,
    },
    /// `mfence`. No operands.
    Fence,
    /// `int3` (`debugtrap`): stops in an attached debugger; without one the process gets
    /// SIGTRAP. No operands.
    Debugtrap,
    /// `dst = op([addr])` atomically with `[addr] op= val`: `lock xadd` for add/sub (`val`
    /// negated first for sub), `xchg` for xchg. Operands: `[addr use, val use, dst def
    /// reusing val]`.
    AtomicXadd {
        size: Size,
        op: AtomicRmwOp,
        addr: VReg,
        val: VReg,
        dst: VReg,
    },
    /// Any other read-modify-write as a `lock cmpxchg` loop; `dst` (the old value) is rax.
    /// Operands: `[addr use, val use, dst early def in rax]`.
    AtomicLoop {
        size: Size,
        op: AtomicRmwOp,
        addr: VReg,
        val: VReg,
        dst: VReg,
    },
    /// `lock cmpxchg [addr], repl` with `expected` in rax; the old value in rax. Operands:
    /// `[addr use, expected use in rax, repl use, dst def in rax]`.
    AtomicCas {
        size: Size,
        addr: VReg,
        expected: VReg,
        repl: VReg,
        dst: VReg,
    },
    /// `lock cmpxchg16b [addr]` with `expected` in rdx:rax and `repl` in rcx:rbx; the old
    /// value in rdx:rax. Operands: `[addr use, expected_lo in rax, expected_hi in rdx, repl_lo
    /// in rbx, repl_hi in rcx, dst_lo def in rax, dst_hi def in rdx]`.
    AtomicCas128 {
        addr: VReg,
        expected: [VReg; 2],
        repl: [VReg; 2],
        dst: [VReg; 2],
    },
    /// A 128-bit read-modify-write as a `cmpxchg16b` loop: old value in rdx:rax (`dst`), new
    /// value computed in rcx:rbx (`tmp`). Operands: `[addr use, val_lo use, val_hi use, dst_lo
    /// early def in rax, dst_hi early def in rdx, tmp_lo early def in rbx, tmp_hi early def in
    /// rcx]`.
    AtomicLoop128 {
        op: AtomicRmwOp,
        addr: VReg,
        val: [VReg; 2],
        dst: [VReg; 2],
        tmp: [VReg; 2],
    },
    /// `call dest`. Operands: the target (indirect calls only), argument uses fixed to their
    /// registers, then result defs fixed to theirs; clobbers the caller-saved registers that
    /// are not results.
    Call {
        dest: CallDest,
        uses: Vec<(VReg, PReg)>,
        defs: Vec<(VReg, PReg)>,
        clobbers: PRegSet,
        /// Bytes of outgoing-argument area the callee's convention requires at least (the
        /// Windows x64 shadow space).
        out_area: u32,
    },
}

fn fixed_use(v: VReg, r: PReg) -> Operand {
    Operand::new(
        v,
        OperandKind::Use,
        OperandPos::Early,
        OperandConstraint::FixedReg(r),
    )
}

fn fixed_def(v: VReg, r: PReg, pos: OperandPos) -> Operand {
    Operand::new(v, OperandKind::Def, pos, OperandConstraint::FixedReg(r))
}

fn reuse_def(v: VReg, input: usize) -> Operand {
    Operand::new(
        v,
        OperandKind::Def,
        OperandPos::Late,
        OperandConstraint::Reuse(input),
    )
}

impl Inst {
    /// `dst = cond ? t : f` as a [`Inst::Cmov`]: a `Pred::And` condition (no two-`cmov`
    /// form) becomes its `Pred::Or` inverse with `t` and `f` swapped.
    pub fn cmov(cond: Cond, t: VReg, f: VReg, dst: VReg) -> Inst {
        match cond.pred() {
            Pred::And(..) => Inst::Cmov {
                cond: cond.invert(),
                t: f,
                f: t,
                dst,
            },
            _ => Inst::Cmov { cond, t, f, dst },
        }
    }

    /// See each variant for the order.
    pub fn collect_operands(&self, out: &mut Vec<Operand>) {
        // `out` may already hold other instructions' operands; reuse indices count from here.
        let base = out.len();
        match self {
            Inst::Args { args } => {
                for &(v, r) in args {
                    out.push(fixed_def(v, r, OperandPos::Late));
                }
            }
            Inst::MovImm { dst, .. } => out.push(Operand::reg_def(*dst)),
            Inst::Mov { dst, src } | Inst::Ext { dst, src, .. } => {
                out.push(Operand::reg_use(*src));
                out.push(Operand::reg_def(*dst));
            }
            Inst::Alu { dst, a, b, .. } | Inst::Imul { dst, a, b, .. } => {
                out.push(Operand::reg_use(*a));
                if let RegImm::Reg(b) = b {
                    out.push(Operand::reg_use(*b));
                }
                out.push(reuse_def(*dst, 0));
            }
            Inst::AluMem { dst, a, mem, .. } => {
                out.push(Operand::reg_use(*a));
                mem.collect(out);
                out.push(reuse_def(*dst, 0));
            }
            Inst::Unary { dst, a, .. } | Inst::ShiftImm { dst, a, .. } => {
                out.push(Operand::reg_use(*a));
                out.push(reuse_def(*dst, 0));
            }
            Inst::ShiftCl { dst, a, amt, .. } => {
                out.push(Operand::reg_use(*a));
                out.push(fixed_use(*amt, gpr_preg(Gpr::RCX)));
                out.push(reuse_def(*dst, 0));
            }
            Inst::ShiftX { dst, a, amt, .. } => {
                out.push(Operand::reg_use(*a));
                out.push(Operand::reg_use(*amt));
                out.push(Operand::reg_def(*dst));
            }
            Inst::Setcc { cond, dst } => {
                cond.collect(out);
                out.push(Operand::reg_def(*dst));
            }
            Inst::Cmov { cond, t, f, dst } => {
                cond.collect(out);
                out.push(Operand::reg_use(*t));
                let f_index = out.len() - base;
                out.push(Operand::reg_use(*f));
                out.push(reuse_def(*dst, f_index));
            }
            Inst::Div {
                dividend,
                divisor,
                tmp,
                dst,
                ..
            } => {
                out.push(fixed_use(*dividend, gpr_preg(Gpr::RAX)));
                out.push(Operand::reg_use(*divisor));
                out.push(fixed_def(*tmp, gpr_preg(Gpr::RDX), OperandPos::Early));
                out.push(fixed_def(*dst, gpr_preg(Gpr::RAX), OperandPos::Late));
            }
            Inst::BitCount { dst, src, .. }
            | Inst::XmmUnary { dst, src, .. }
            | Inst::XmmRound { dst, src, .. }
            | Inst::MovToXmm { dst, src, .. }
            | Inst::MovFromXmm { dst, src, .. }
            | Inst::CvtIntToFloat { dst, src, .. } => {
                out.push(Operand::reg_use(*src));
                out.push(Operand::reg_def(*dst));
            }
            Inst::CvtU64ToFloat { dst, src, .. } => {
                out.push(Operand::reg_use(*src));
                out.push(Operand::new(
                    *dst,
                    OperandKind::Def,
                    OperandPos::Early,
                    OperandConstraint::Reg,
                ));
            }
            Inst::Bswap { dst, a, .. } => {
                out.push(Operand::reg_use(*a));
                out.push(reuse_def(*dst, 0));
            }
            Inst::MulHi { a, b, dst, tmp, .. } => {
                out.push(fixed_use(*a, gpr_preg(Gpr::RAX)));
                out.push(Operand::reg_use(*b));
                out.push(fixed_def(*dst, gpr_preg(Gpr::RDX), OperandPos::Late));
                out.push(fixed_def(*tmp, gpr_preg(Gpr::RAX), OperandPos::Late));
            }
            Inst::AluFlags {
                dst, a, b, flag, ..
            } => {
                out.push(Operand::reg_use(*a));
                if let RegImm::Reg(b) = b {
                    out.push(Operand::reg_use(*b));
                }
                out.push(reuse_def(*dst, 0));
                out.push(Operand::reg_def(*flag));
            }
            Inst::AluCarry {
                dst,
                a,
                b,
                cin,
                flag,
                ..
            } => {
                out.push(Operand::reg_use(*a));
                out.push(Operand::reg_use(*b));
                out.push(Operand::reg_use(*cin));
                out.push(reuse_def(*dst, 0));
                out.push(Operand::reg_def(*flag));
            }
            Inst::AluTrap { dst, a, b, .. } => {
                out.push(Operand::reg_use(*a));
                if let RegImm::Reg(b) = b {
                    out.push(Operand::reg_use(*b));
                }
                out.push(reuse_def(*dst, 0));
            }
            Inst::Alu128 {
                dst,
                a,
                b,
                cin,
                flag,
                ..
            } => {
                for v in a.iter().chain(b).chain(cin) {
                    out.push(Operand::reg_use(*v));
                }
                out.push(reuse_def(dst[0], 0));
                out.push(reuse_def(dst[1], 1));
                if let Some((_, f)) = flag {
                    out.push(Operand::reg_def(*f));
                }
            }
            Inst::ShiftDouble { dst, a, b, amt, .. } => {
                out.push(Operand::reg_use(*a));
                out.push(Operand::reg_use(*b));
                out.push(fixed_use(*amt, gpr_preg(Gpr::RCX)));
                out.push(reuse_def(*dst, 0));
            }
            Inst::XmmConst { dst, .. }
            | Inst::StackAddr { dst, .. }
            | Inst::FrameValue { dst, .. }
            | Inst::RetAreaAddr { dst, .. } => out.push(Operand::reg_def(*dst)),
            Inst::Load { dst, mem, .. } => {
                mem.collect(out);
                out.push(Operand::reg_def(*dst));
            }
            Inst::Store { src, mem, .. } => {
                out.push(Operand::reg_use(*src));
                mem.collect(out);
            }
            Inst::XmmRmR { dst, a, b, .. } | Inst::FMinMax { dst, a, b, .. } => {
                out.push(Operand::reg_use(*a));
                out.push(Operand::reg_use(*b));
                out.push(reuse_def(*dst, 0));
            }
            Inst::XmmSelect { cond, t, f, dst } => {
                cond.collect(out);
                out.push(Operand::reg_use(*t));
                let f_index = out.len() - base;
                out.push(Operand::reg_use(*f));
                out.push(reuse_def(*dst, f_index));
            }
            Inst::Jmp { .. } | Inst::Ud2 { .. } => {}
            Inst::CondBr { cond, .. } | Inst::TrapIf { cond, .. } => cond.collect(out),
            Inst::JmpTable { idx, .. } => out.push(Operand::reg_use(*idx)),
            Inst::JmpTableBase { dst, .. } => out.push(Operand::reg_def(*dst)),
            Inst::JmpTableSeq { idx, base, .. } => {
                out.push(Operand::reg_use(*idx));
                out.push(Operand::reg_use(*base));
            }
            Inst::Ret { rets } => {
                for &(v, r) in rets {
                    out.push(fixed_use(v, r));
                }
            }
            Inst::SymbolAddr { dst, .. } => out.push(Operand::reg_def(*dst)),
            Inst::Fence | Inst::Debugtrap => {}
            Inst::AtomicCas128 {
                addr,
                expected,
                repl,
                dst,
            } => {
                out.push(Operand::reg_use(*addr));
                out.push(fixed_use(expected[0], gpr_preg(Gpr::RAX)));
                out.push(fixed_use(expected[1], gpr_preg(Gpr::RDX)));
                out.push(fixed_use(repl[0], gpr_preg(Gpr::RBX)));
                out.push(fixed_use(repl[1], gpr_preg(Gpr::RCX)));
                out.push(fixed_def(dst[0], gpr_preg(Gpr::RAX), OperandPos::Late));
                out.push(fixed_def(dst[1], gpr_preg(Gpr::RDX), OperandPos::Late));
            }
            Inst::AtomicLoop128 {
                addr,
                val,
                dst,
                tmp,
                ..
            } => {
                out.push(Operand::reg_use(*addr));
                out.push(Operand::reg_use(val[0]));
                out.push(Operand::reg_use(val[1]));
                out.push(fixed_def(dst[0], gpr_preg(Gpr::RAX), OperandPos::Early));
                out.push(fixed_def(dst[1], gpr_preg(Gpr::RDX), OperandPos::Early));
                out.push(fixed_def(tmp[0], gpr_preg(Gpr::RBX), OperandPos::Early));
                out.push(fixed_def(tmp[1], gpr_preg(Gpr::RCX), OperandPos::Early));
            }
            Inst::AtomicXadd { addr, val, dst, .. } => {
                out.push(Operand::reg_use(*addr));
                out.push(Operand::reg_use(*val));
                out.push(reuse_def(*dst, 1));
            }
            Inst::AtomicLoop { addr, val, dst, .. } => {
                out.push(Operand::reg_use(*addr));
                out.push(Operand::reg_use(*val));
                out.push(fixed_def(*dst, gpr_preg(Gpr::RAX), OperandPos::Early));
            }
            Inst::AtomicCas {
                addr,
                expected,
                repl,
                dst,
                ..
            } => {
                out.push(Operand::reg_use(*addr));
                out.push(fixed_use(*expected, gpr_preg(Gpr::RAX)));
                out.push(Operand::reg_use(*repl));
                out.push(fixed_def(*dst, gpr_preg(Gpr::RAX), OperandPos::Late));
            }
            Inst::FcvtToInt { dst, src, .. } => {
                out.push(Operand::reg_use(*src));
                out.push(Operand::reg_def(*dst));
            }
            Inst::MulOverflow {
                a,
                b,
                tmp,
                lo,
                flag,
                ..
            } => {
                out.push(fixed_use(*a, gpr_preg(Gpr::RAX)));
                out.push(Operand::reg_use(*b));
                out.push(fixed_def(*tmp, gpr_preg(Gpr::RDX), OperandPos::Early));
                out.push(fixed_def(*lo, gpr_preg(Gpr::RAX), OperandPos::Late));
                out.push(Operand::reg_def(*flag));
            }
            Inst::Call {
                dest, uses, defs, ..
            } => {
                if let CallDest::Indirect(target) = dest {
                    out.push(Operand::reg_use(*target));
                }
                for &(v, r) in uses {
                    out.push(fixed_use(v, r));
                }
                for &(v, r) in defs {
                    out.push(fixed_def(v, r, OperandPos::Late));
                }
            }
        }
    }

    /// Registers overwritten beyond the defs.
    pub fn clobbers(&self) -> PRegSet {
        match self {
            Inst::Call { clobbers, .. } => *clobbers,
            _ => PRegSet::empty(),
        }
    }

    /// Printed form, operands named by `ops` (in operand order).
    pub fn pretty(&self, ops: &[String]) -> String {
        let ri = |b: &RegImm, i: usize| match b {
            RegImm::Reg(_) => ops[i].clone(),
            RegImm::Imm(k) => k.to_string(),
        };
        match self {
            Inst::Args { .. } => format!("args {}", ops.join(", ")),
            Inst::MovImm { imm, .. } => format!("{} = mov {:#x}", ops[0], imm),
            Inst::Mov { .. } => format!("{} = mov {}", ops[1], ops[0]),
            Inst::Alu { op, size, b, .. } => {
                let d = ops.len() - 1;
                format!(
                    "{} = {op:?}{} {}, {}",
                    ops[d],
                    size.bits(),
                    ops[0],
                    ri(b, 1)
                )
                .to_lowercase()
            }
            Inst::Imul { size, b, .. } => {
                let d = ops.len() - 1;
                format!("{} = imul{} {}, {}", ops[d], size.bits(), ops[0], ri(b, 1))
            }
            Inst::AluMem { op, size, mem, .. } => {
                let d = ops.len() - 1;
                let name = op.map_or("imul".to_string(), |op| format!("{op:?}").to_lowercase());
                format!(
                    "{} = {name}{} {}, {}",
                    ops[d],
                    size.bits(),
                    ops[0],
                    mem.pretty(&ops[1..d])
                )
            }
            Inst::Unary { op, size, .. } => {
                format!("{} = {op:?}{} {}", ops[1], size.bits(), ops[0]).to_lowercase()
            }
            Inst::ShiftCl { op, size, .. } => {
                format!("{} = {op:?}{} {}, {}", ops[2], size.bits(), ops[0], ops[1]).to_lowercase()
            }
            Inst::ShiftX { op, size, .. } => {
                format!("{} = {op:?}{} {}, {}", ops[2], size.bits(), ops[0], ops[1]).to_lowercase()
            }
            Inst::ShiftImm { op, size, imm, .. } => {
                format!("{} = {op:?}{} {}, {imm}", ops[1], size.bits(), ops[0]).to_lowercase()
            }
            Inst::Ext { mode, signed, .. } => {
                let k = if *signed { "movsx" } else { "movzx" };
                format!("{} = {k}.{mode:?} {}", ops[1], ops[0])
            }
            Inst::Setcc { cond, .. } => {
                let n = cond.num_operands();
                format!("{} = set {}", ops[n], cond.pretty(ops))
            }
            Inst::Cmov { cond, .. } => {
                let n = cond.num_operands();
                format!(
                    "{} = cmov {} ? {} : {}",
                    ops[n + 2],
                    cond.pretty(ops),
                    ops[n],
                    ops[n + 1]
                )
            }
            Inst::Div {
                size, signed, rem, ..
            } => {
                let k = match (signed, rem) {
                    (false, false) => "udiv",
                    (true, false) => "sdiv",
                    (false, true) => "urem",
                    (true, true) => "srem",
                };
                format!(
                    "{} = {k}{} {}, {} (clobbers {})",
                    ops[3],
                    size.bits(),
                    ops[0],
                    ops[1],
                    ops[2]
                )
            }
            Inst::BitCount { op, size, .. } => {
                format!("{} = {op:?}{} {}", ops[1], size.bits(), ops[0]).to_lowercase()
            }
            Inst::Bswap { size, .. } => format!("{} = bswap{} {}", ops[1], size.bits(), ops[0]),
            Inst::MulHi { size, signed, .. } => {
                let k = if *signed { "smulhi" } else { "umulhi" };
                format!(
                    "{} = {k}{} {}, {} (clobbers {})",
                    ops[2],
                    size.bits(),
                    ops[0],
                    ops[1],
                    ops[3]
                )
            }
            Inst::AluFlags {
                op, size, b, cc, ..
            } => {
                let d = ops.len() - 2;
                format!(
                    "{}, {} = {op:?}{} {}, {} ?{cc:?}",
                    ops[d],
                    ops[d + 1],
                    size.bits(),
                    ops[0],
                    ri(b, 1)
                )
                .to_lowercase()
            }
            Inst::AluTrap {
                op,
                size,
                b,
                cc,
                code,
                ..
            } => {
                let d = ops.len() - 1;
                format!(
                    "{} = {op:?}{} {}, {} trap ?{cc:?} {code}",
                    ops[d],
                    size.bits(),
                    ops[0],
                    ri(b, 1)
                )
                .to_lowercase()
            }
            Inst::AluCarry { op, size, cc, .. } => format!(
                "{}, {} = {op:?}{} {}, {}, carry {} ?{cc:?}",
                ops[3],
                ops[4],
                size.bits(),
                ops[0],
                ops[1],
                ops[2]
            )
            .to_lowercase(),
            Inst::XmmConst { bits, .. } => format!("{} = fconst {bits:#x}", ops[0]),
            Inst::XmmRmR { op, .. } => {
                format!("{} = {op:?} {}, {}", ops[2], ops[0], ops[1]).to_lowercase()
            }
            Inst::XmmUnary { op, .. } => format!("{} = {op:?} {}", ops[1], ops[0]).to_lowercase(),
            Inst::XmmRound { mode, .. } => format!("{} = round.{mode:?} {}", ops[1], ops[0]),
            Inst::XmmSelect { cond, .. } => {
                let n = cond.num_operands();
                format!(
                    "{} = fselect {} ? {} : {}",
                    ops[n + 2],
                    cond.pretty(ops),
                    ops[n],
                    ops[n + 1]
                )
            }
            Inst::FMinMax { max, .. } => {
                let k = if *max { "fmax" } else { "fmin" };
                format!("{} = {k} {}, {}", ops[2], ops[0], ops[1])
            }
            Inst::MovToXmm { .. } | Inst::MovFromXmm { .. } => {
                format!("{} = movq {}", ops[1], ops[0])
            }
            Inst::CvtIntToFloat { isize, .. } => {
                format!("{} = cvtsi2f.{} {}", ops[1], isize.bits(), ops[0])
            }
            Inst::CvtU64ToFloat { .. } => format!("{} = cvtu64 {}", ops[1], ops[0]),
            Inst::Alu128 {
                op_lo, op_hi, cin, ..
            } => {
                let d = 4 + usize::from(cin.is_some());
                let carry = if cin.is_some() {
                    format!(", carry {}", ops[4])
                } else {
                    String::new()
                };
                let flag = ops.get(d + 2).map(|f| format!(", {f}")).unwrap_or_default();
                format!(
                    "{}:{}{flag} = {op_lo:?}/{op_hi:?} {}:{}, {}:{}{carry}",
                    ops[d + 1],
                    ops[d],
                    ops[1],
                    ops[0],
                    ops[3],
                    ops[2]
                )
                .to_lowercase()
            }
            Inst::ShiftDouble { op, .. } => {
                format!("{} = {op:?} {}, {}, {}", ops[3], ops[0], ops[1], ops[2]).to_lowercase()
            }
            Inst::Load { kind, mem, .. } => {
                let n = mem.num_operands();
                format!("{} = load.{kind:?} {}", ops[n], mem.pretty(ops))
            }
            Inst::Store { kind, mem, .. } => {
                format!("store.{kind:?} {}, {}", ops[0], mem.pretty(&ops[1..]))
            }
            Inst::StackAddr { slot, disp, .. } => format!("{} = lea [ss{slot}{disp:+}]", ops[0]),
            Inst::FrameValue { what, .. } => format!("{} = {}", ops[0], what.name()),
            Inst::RetAreaAddr { size, .. } => format!("{} = lea [ret_area] ({size} bytes)", ops[0]),
            Inst::Jmp { target } => format!("jmp block{}", target.0),
            Inst::CondBr {
                cond,
                taken,
                not_taken,
            } => format!(
                "br {}, block{}, block{}",
                cond.pretty(ops),
                taken.0,
                not_taken.0
            ),
            Inst::JmpTable { targets, .. } => {
                format!("br_table {}, [{}]", ops[0], block_list(targets))
            }
            Inst::JmpTableBase { targets, .. } => {
                format!("{} = jump_table [{}]", ops[0], block_list(&targets[1..]))
            }
            Inst::JmpTableSeq { size, targets, .. } => format!(
                "br_table.{} {}, {}, [{}]",
                size.bits(),
                ops[0],
                ops[1],
                block_list(targets)
            ),
            Inst::Ret { .. } => format!("ret {}", ops.join(", ")),
            Inst::Ud2 { code } => format!("ud2 {code}"),
            Inst::TrapIf { cond, code } => format!("trap_if {}, {code}", cond.pretty(ops)),
            Inst::SymbolAddr {
                name, offset, got, ..
            } => format!(
                "{} = {} {name}{}",
                ops[0],
                if *got { "got_addr" } else { "pc_addr" },
                match offset {
                    0 => String::new(),
                    o => format!("{o:+}"),
                }
            ),
            Inst::Fence => "mfence".into(),
            Inst::Debugtrap => "int3".into(),
            Inst::AtomicCas128 { .. } => format!(
                "{}:{} = atomic_cas128 [{}], {}:{}, {}:{}",
                ops[6], ops[5], ops[0], ops[2], ops[1], ops[4], ops[3]
            ),
            Inst::AtomicLoop128 { op, .. } => format!(
                "{}:{} = atomic_{op}128 [{}], {}:{}",
                ops[4], ops[3], ops[0], ops[2], ops[1]
            ),
            Inst::AtomicXadd { size, op, .. } | Inst::AtomicLoop { size, op, .. } => {
                format!(
                    "{} = atomic_{op}{} [{}], {}",
                    ops[2],
                    size.bits(),
                    ops[0],
                    ops[1]
                )
            }
            Inst::AtomicCas { size, .. } => format!(
                "{} = atomic_cas{} [{}], {}, {}",
                ops[3],
                size.bits(),
                ops[0],
                ops[1],
                ops[2]
            ),
            Inst::FcvtToInt {
                isize, signed, sat, ..
            } => {
                let k = if *signed { "s" } else { "u" };
                let s = if *sat { "_sat" } else { "" };
                format!("{} = fcvt_to_{k}int{s}.{} {}", ops[1], isize.bits(), ops[0])
            }
            Inst::MulOverflow { size, signed, .. } => {
                let k = if *signed { "smul" } else { "umul" };
                format!(
                    "{}, {} = {k}_overflow{} {}, {} (clobbers {})",
                    ops[3],
                    ops[4],
                    size.bits(),
                    ops[0],
                    ops[1],
                    ops[2]
                )
            }
            Inst::Call { dest, uses, .. } => {
                let (callee, ops) = match dest {
                    CallDest::Direct(name) => (name.to_string(), ops),
                    CallDest::Indirect(_) => (format!("*{}", ops[0]), &ops[1..]),
                };
                let (args, rets) = ops.split_at(uses.len());
                format!("{} = call {callee}({})", rets.join(", "), args.join(", "))
            }
        }
    }
}

/// `block1, block2, …`.
fn block_list(blocks: &[BlockIndex]) -> String {
    let names: Vec<String> = blocks.iter().map(|b| format!("block{}", b.0)).collect();
    names.join(", ")
}
