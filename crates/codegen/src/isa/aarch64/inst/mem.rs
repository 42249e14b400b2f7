//! The AArch64 memory family (`machinst::memory`), with the memory operand [`Mem`]: its
//! operand, access kinds, and its encoding (AArch64 has no memory instructions of its own).

use kestrel_ir::{FunctionName, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::super::abi::PINNED_REG;
use super::super::asm::add_sub::{add_sub_imm, AddSub, AddSubImm};
use super::super::asm::branch::adrp;
use super::super::asm::mem::{ld_st, ld_st_fp, Amode, FpLdSt, IndexExtend, IntLdSt};
use super::super::asm::{Gpr, GprSp, MemSize, PcOffset, Size};
use super::super::emit::{add_offset, amode, copy_reg, fpr, gpr, sp, zr, Buf, Ctx};
use super::super::Aarch64;
use super::{map_operands, FrameValue, LoadKind, OperandSpec, Operands, StoreKind};
use crate::machinst::buffer::RelocKind;
use crate::machinst::frame::Frame;
use crate::machinst::memory::{self, Access, MemEmit, MemEncoder, NoOwn};

/// A memory operand: `[base + off]` with a register base, or a place in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem<R = VReg> {
    Reg {
        base: R,
        off: i32,
    },
    /// `[base + index]` (a 64-bit index, unscaled).
    RegReg {
        base: R,
        index: R,
    },
    /// An explicit stack slot plus `off`.
    Slot {
        slot: u32,
        off: i32,
    },
    /// An incoming stack argument: `[x29 + 16 + off]`.
    IncomingArg {
        off: i32,
    },
    /// An outgoing stack argument of the next call: `[sp + off]`.
    OutgoingArg {
        off: i32,
    },
    /// The outgoing return area (above the outgoing arguments): `[sp + ret_area_base + off]`.
    RetArea {
        off: i32,
    },
}

impl Mem {
    map_operands! {
        /// Operands: `Reg` `[base]`, `RegReg` `[base, index]`, others none; all uses.
        pub(super) nested Mem, |m| {
            Reg { off } [base = m.reg_use(*base)],
            RegReg {} [base = m.reg_use(*base), index = m.reg_use(*index)],
            Slot { slot, off } [],
            IncomingArg { off } [],
            OutgoingArg { off } [],
            RetArea { off } [],
        }
    }
}

impl Mem<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            Mem::Reg { base, off } => format!("[{base}{off:+}]"),
            Mem::RegReg { base, index } => format!("[{base}+{index}]"),
            Mem::Slot { slot, off } => format!("[ss{slot}{off:+}]"),
            Mem::IncomingArg { off } => format!("[in_arg{off:+}]"),
            Mem::OutgoingArg { off } => format!("[out_arg{off:+}]"),
            Mem::RetArea { off } => format!("[ret_area{off:+}]"),
        }
    }
}

/// The AArch64 memory family (`machinst::memory`).
pub type MemInst<R = VReg> = memory::MemInst<Aarch64, R>;

memory::mem_isa! {
    Aarch64 { mem: Mem, load: LoadKind, store: StoreKind, own: NoOwn, addr: "addr" }
}

/// The integer load of `size` bytes, zero-extended or sign-extended to 64 bits.
fn int_load(size: MemSize, signed: bool) -> IntLdSt {
    match (size, signed) {
        (MemSize::S8, false) => IntLdSt::Ldrb,
        (MemSize::S16, false) => IntLdSt::Ldrh,
        (MemSize::S32, false) => IntLdSt::LdrW,
        (MemSize::S64, _) => IntLdSt::LdrX,
        (MemSize::S8, true) => IntLdSt::LdrsbX,
        (MemSize::S16, true) => IntLdSt::LdrshX,
        (MemSize::S32, true) => IntLdSt::Ldrsw,
    }
}

fn int_store(size: MemSize) -> IntLdSt {
    match size {
        MemSize::S8 => IntLdSt::Strb,
        MemSize::S16 => IntLdSt::Strh,
        MemSize::S32 => IntLdSt::StrW,
        MemSize::S64 => IntLdSt::StrX,
    }
}

/// The address mode of an access of `bytes` bytes at `mem` in `frame` (after any
/// instruction that computes a large offset into x17: record a trap site after this).
pub(in crate::isa::aarch64) fn address(
    frame: &Frame,
    buf: &mut Buf,
    mem: &Mem<PReg>,
    bytes: u32,
) -> Amode {
    match *mem {
        Mem::RegReg { base, index } => Amode::RegOffset {
            rn: sp(base),
            rm: zr(index),
            extend: IndexExtend::Lsl,
            scaled: false,
        },
        _ => {
            let (base, off) = place(frame, mem);
            amode(buf, base, off, bytes)
        }
    }
}

/// The base register and byte offset of `mem`, a base-plus-offset place (a
/// register-offset address has none: see [`address`]).
pub(in crate::isa::aarch64) fn place(frame: &Frame, mem: &Mem<PReg>) -> (GprSp, i64) {
    match *mem {
        Mem::Reg { base, off } => (sp(base), i64::from(off)),
        Mem::RegReg { .. } => panic!("a register-offset address has no single base"),
        Mem::Slot { slot, off } => (
            GprSp::SP,
            i64::from(frame.slot_offset(slot)) + i64::from(off),
        ),
        Mem::IncomingArg { off } => (Gpr::FP.into(), 16 + i64::from(off)),
        Mem::OutgoingArg { off } => (GprSp::SP, i64::from(off)),
        Mem::RetArea { off } => (GprSp::SP, i64::from(frame.ret_area_base) + i64::from(off)),
    }
}

/// The address of `mem` for an access of `bytes` bytes, then the access's trap site with
/// `trap` when it may fault (after any instruction that computes the address).
fn access(
    ctx: &Ctx<'_, '_>,
    buf: &mut Buf,
    mem: &Mem<PReg>,
    bytes: u32,
    trap: Option<TrapCode>,
) -> Amode {
    let a = address(ctx.frame, buf, mem, bytes);
    if let Some(code) = trap {
        buf.add_trap(code);
    }
    a
}

impl MemEncoder<Aarch64> for MemEmit<'_, Ctx<'_, '_>, Buf> {
    fn load(&mut self, load: Access<'_, LoadKind, Mem<PReg>>) {
        let (ctx, buf) = (self.ctx, &mut *self.buf);
        match load.kind {
            LoadKind::Int { size, signed } => {
                let a = access(ctx, buf, load.mem, size.bytes(), load.trap);
                ld_st(buf, int_load(size, signed), zr(load.reg), a);
            }
            LoadKind::Float { size } => {
                let a = access(ctx, buf, load.mem, size.bytes(), load.trap);
                ld_st_fp(buf, FpLdSt::Ldr(size), fpr(load.reg), a);
            }
        }
    }

    fn store(&mut self, store: Access<'_, StoreKind, Mem<PReg>>) {
        let (ctx, buf) = (self.ctx, &mut *self.buf);
        match store.kind {
            StoreKind::Int { size } => {
                let a = access(ctx, buf, store.mem, size.bytes(), store.trap);
                ld_st(buf, int_store(size), zr(store.reg), a);
            }
            StoreKind::Float { size } => {
                let a = access(ctx, buf, store.mem, size.bytes(), store.trap);
                ld_st_fp(buf, FpLdSt::Str(size), fpr(store.reg), a);
            }
        }
    }

    fn stack_addr(&mut self, dst: PReg, slot: u32, off: i32) {
        let (base, off) = place(self.ctx.frame, &Mem::Slot { slot, off });
        add_offset(self.buf, sp(dst), base, off);
    }

    fn ret_area_addr(&mut self, dst: PReg) {
        let (base, off) = place(self.ctx.frame, &Mem::RetArea { off: 0 });
        add_offset(self.buf, sp(dst), base, off);
    }

    fn frame_value(&mut self, dst: PReg, what: FrameValue) {
        let (buf, fp) = (&mut *self.buf, GprSp::from(Gpr::FP));
        match what {
            FrameValue::StackPointer => add_offset(buf, sp(dst), GprSp::SP, 0),
            FrameValue::FramePointer => add_offset(buf, sp(dst), fp, 0),
            FrameValue::ReturnAddress => {
                let a = Amode::scaled(fp, 8, 8).expect("8 fits");
                ld_st(buf, IntLdSt::LdrX, zr(dst), a);
            }
        }
    }

    fn pinned_reg(&mut self, reg: PReg, write: bool) {
        let (dst, src) = if write {
            (PINNED_REG, reg)
        } else {
            (reg, PINNED_REG)
        };
        copy_reg(self.buf, dst, src);
    }

    fn symbol_addr(&mut self, dst: PReg, name: &FunctionName, offset: i32, got: bool) {
        let (buf, dst, name) = (&mut *self.buf, gpr(dst), name.clone());
        let page = adrp(buf, dst.into(), PcOffset::ZERO);
        let low_at = buf.cur_offset();
        let zero = AddSubImm::new(0).expect("0 fits");
        if got {
            buf.add_reloc(page.at, RelocKind::Arm64GotPage21, name.clone(), 0);
            ld_st(buf, IntLdSt::LdrX, dst.into(), Amode::base(dst.into()));
            buf.add_reloc(low_at, RelocKind::Arm64GotLo12, name, 0);
            if offset != 0 {
                add_offset(buf, dst.into(), dst.into(), i64::from(offset));
            }
        } else {
            let addend = i64::from(offset);
            buf.add_reloc(page.at, RelocKind::Arm64AdrPage21, name.clone(), addend);
            add_sub_imm(
                buf,
                AddSub::Add,
                Size::S64,
                dst.into(),
                GprSp::from(dst),
                zero,
            );
            buf.add_reloc(low_at, RelocKind::Arm64AddLo12, name, addend);
        }
    }

    fn own(&mut self, inst: &NoOwn<PReg>) {
        inst.absurd()
    }
}
