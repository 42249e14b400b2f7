//! The x86-64 memory family (`machinst::memory`): its operand, access kinds and own
//! instructions (constant stores, `lea`), and its encoding.

use kestrel_ir::{FunctionName, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::super::abi::PINNED_REG;
use super::super::asm::misc;
use super::super::asm::moves;
use super::super::asm::sse::{self as sse_enc, FloatSize, SseOp, SseStore};
use super::super::asm::{Amode, Gpr, GprMem, Size, XmmMem};
use super::super::emit::{gpr, xmm, Buf, Ctx};
use super::super::X64;
use super::{map_operands, FrameValue, LoadKind, Mem, OperandSpec, Operands, StoreKind};
use crate::machinst::buffer::RelocKind;
use crate::machinst::memory::{self, Access, MemEmit, MemEncoder};

/// The x86-64 memory family (`machinst::memory`).
pub type MemInst<R = VReg> = memory::MemInst<X64, R>;

/// The memory instructions only x86-64 has ([`MemInst::Own`]). Each variant's doc gives its
/// operand order.
#[derive(Clone, Copy, Debug)]
pub enum MemOwn<R = VReg> {
    /// Store of a constant: `mov [mem], imm` at `size` (an 8- or 16-bit store keeps the
    /// immediate's low bits; a 64-bit one sign-extends the 32-bit immediate). Operands:
    /// `[address uses]`.
    StoreImm {
        size: Size,
        imm: i32,
        mem: Mem<R>,
        trap: Option<TrapCode>,
    },
    /// `dst = base + disp` or `base + index`, computed by `lea` at `size` (32 bits: the low
    /// half, zero-extended): an add with a third register, setting no flags. Operands:
    /// `[address uses, dst def]`.
    Lea { size: Size, dst: R, mem: Mem<R> },
}

impl MemOwn {
    map_operands! {
        pub(in crate::isa::x64) nested MemOwn, |m| {
            StoreImm { size, imm, trap } [mem = mem.map(m)],
            Lea { size } [mem = mem.map(m), dst = m.reg_def(*dst)],
        }
    }
}

impl MemOwn<String> {
    fn pretty(&self) -> String {
        match self {
            MemOwn::StoreImm { size, imm, mem, .. } => {
                format!("store.{} {imm}, {}", size.bits(), mem.pretty())
            }
            MemOwn::Lea { size, dst, mem } => {
                format!("{dst} = lea.{} {}", size.bits(), mem.pretty())
            }
        }
    }
}

memory::mem_isa! {
    X64 { mem: Mem, load: LoadKind, store: StoreKind, own: MemOwn, addr: "lea" }
}

impl MemEncoder<X64> for MemEmit<'_, Ctx<'_, '_>, Buf> {
    fn load(&mut self, load: Access<'_, LoadKind, Mem<PReg>>) {
        let buf = &mut *self.buf;
        let m = access(self.ctx, buf, load.mem, load.trap);
        let (dst, gm) = (load.reg, GprMem::Mem(m));
        match load.kind {
            LoadKind::Int { size } => moves::mov_r_rm(buf, size, gpr(dst), &gm),
            LoadKind::Zext { mode } => moves::movzx(buf, mode, gpr(dst), &gm),
            LoadKind::Sext { mode } => moves::movsx(buf, mode, gpr(dst), &gm),
            LoadKind::Float {
                size: FloatSize::F32,
            } => sse_enc::sse_r_rm(buf, SseOp::Movss, xmm(dst), &XmmMem::Mem(m)),
            LoadKind::Float {
                size: FloatSize::F64,
            } => sse_enc::sse_r_rm(buf, SseOp::Movsd, xmm(dst), &XmmMem::Mem(m)),
            LoadKind::Vec => sse_enc::sse_r_rm(buf, SseOp::Movdqu, xmm(dst), &XmmMem::Mem(m)),
        };
    }

    fn store(&mut self, store: Access<'_, StoreKind, Mem<PReg>>) {
        let buf = &mut *self.buf;
        let m = access(self.ctx, buf, store.mem, store.trap);
        let src = store.reg;
        match store.kind {
            StoreKind::Int { size } => {
                moves::mov_rm_r(buf, size, &GprMem::Mem(m), gpr(src));
            }
            StoreKind::Float {
                size: FloatSize::F32,
            } => {
                sse_enc::sse_store(buf, SseStore::Movss, &m, xmm(src));
            }
            StoreKind::Float {
                size: FloatSize::F64,
            } => {
                sse_enc::sse_store(buf, SseStore::Movsd, &m, xmm(src));
            }
            StoreKind::Vec => {
                sse_enc::sse_store(buf, SseStore::Movdqu, &m, xmm(src));
            }
        }
    }

    fn stack_addr(&mut self, dst: PReg, slot: u32, off: i32) {
        let m = Mem::<PReg>::Slot { slot, disp: off }.amode(self.ctx.frame);
        misc::lea(self.buf, Size::S64, gpr(dst), &m);
    }

    fn ret_area_addr(&mut self, dst: PReg) {
        let m = Mem::<PReg>::RetArea { disp: 0 }.amode(self.ctx.frame);
        misc::lea(self.buf, Size::S64, gpr(dst), &m);
    }

    fn frame_value(&mut self, dst: PReg, what: FrameValue) {
        let (buf, dst) = (&mut *self.buf, gpr(dst));
        match what {
            FrameValue::StackPointer => {
                moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(dst), Gpr::RSP);
            }
            FrameValue::FramePointer => {
                moves::mov_rm_r(buf, Size::S64, &GprMem::Reg(dst), Gpr::RBP);
            }
            FrameValue::ReturnAddress => {
                let m = Amode::base_disp(Gpr::RBP, 8);
                moves::mov_r_rm(buf, Size::S64, dst, &GprMem::Mem(m));
            }
        };
    }

    fn pinned_reg(&mut self, reg: PReg, write: bool) {
        let (reg, pinned) = (gpr(reg), gpr(PINNED_REG));
        let (dst, src) = if write { (pinned, reg) } else { (reg, pinned) };
        moves::mov_rm_r(self.buf, Size::S64, &GprMem::Reg(dst), src);
    }

    fn symbol_addr(&mut self, dst: PReg, name: &FunctionName, offset: i32, got: bool) {
        let (buf, dst) = (&mut *self.buf, gpr(dst));
        if got {
            let m = GprMem::Mem(Amode::rip(0));
            let fix = moves::mov_r_rm(buf, Size::S64, dst, &m).expect("rip-relative");
            buf.add_reloc(fix.at, RelocKind::GotPcRel4, name.clone(), -4);
            if offset != 0 {
                misc::lea(buf, Size::S64, dst, &Amode::base_disp(dst, offset));
            }
        } else {
            let fix = misc::lea(buf, Size::S64, dst, &Amode::rip(0)).expect("rip-relative");
            let addend = i64::from(offset) - i64::from(fix.end - fix.at);
            buf.add_reloc(fix.at, RelocKind::PcRel4, name.clone(), addend);
        }
    }

    fn own(&mut self, inst: &MemOwn<PReg>) {
        let buf = &mut *self.buf;
        match *inst {
            MemOwn::StoreImm {
                size,
                imm,
                ref mem,
                trap,
            } => {
                let m = access(self.ctx, buf, mem, trap);
                let imm = match size {
                    Size::S8 => i32::from(imm as i8),
                    Size::S16 => i32::from(imm as i16),
                    Size::S32 | Size::S64 => imm,
                };
                moves::mov_rm_imm(buf, size, &GprMem::Mem(m), imm);
            }
            MemOwn::Lea { size, dst, ref mem } => {
                let m = access(self.ctx, buf, mem, None);
                misc::lea(buf, size, gpr(dst), &m);
            }
        }
    }
}

/// The address of `mem` for the access about to be encoded, recorded as a trap site with
/// `trap` when the access may fault.
fn access(ctx: &Ctx<'_, '_>, buf: &mut Buf, mem: &Mem<PReg>, trap: Option<TrapCode>) -> Amode {
    if let Some(code) = trap {
        buf.add_trap(code);
    }
    mem.amode(ctx.frame)
}
