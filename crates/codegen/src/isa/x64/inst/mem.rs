//! The memory family: loads, stores and addresses (frame places, symbols).

use std::sync::Arc;

use kestrel_ir::{FunctionName, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::super::asm::misc;
use super::super::asm::moves;
use super::super::asm::sse::{self as sse_enc, FloatSize, SseOp, SseStore};
use super::super::asm::{Amode, Gpr, GprMem, Size, XmmMem};
use super::super::emit::{gpr, xmm, Buf, Ctx};
use super::{map_operands, FrameValue, LoadKind, Mem, OperandSpec, Operands, StoreKind};
use crate::machinst::buffer::RelocKind;

/// One memory instruction. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum MemInst<R = VReg> {
    /// Load from memory; a trap site with `trap` when the access may fault. Operands:
    /// `[address uses, dst def]`.
    Load {
        kind: LoadKind,
        dst: R,
        mem: Mem<R>,
        trap: Option<TrapCode>,
    },
    /// Store to memory. Operands: `[src use, address uses]`.
    Store {
        kind: StoreKind,
        src: R,
        mem: Mem<R>,
        trap: Option<TrapCode>,
    },
    /// Store of a constant: `mov [mem], imm` at `size` (an 8- or 16-bit store keeps the
    /// immediate's low bits; a 64-bit one sign-extends the 32-bit immediate). Operands:
    /// `[address uses]`.
    StoreImm {
        size: Size,
        imm: i32,
        mem: Mem<R>,
        trap: Option<TrapCode>,
    },
    /// `dst = address of the outgoing return area` (of `size` bytes, for the call that
    /// follows). Operands: `[dst def]`.
    RetAreaAddr { dst: R, size: u32 },
    /// `dst = base + disp` or `base + index`, computed by `lea` at `size` (32 bits: the low
    /// half, zero-extended): an add with a third register, setting no flags. Operands:
    /// `[address uses, dst def]`.
    Lea { size: Size, dst: R, mem: Mem<R> },
    /// `dst = address of the stack slot plus disp` (`lea`). Operands: `[dst def]`.
    StackAddr { dst: R, slot: u32, disp: i32 },
    /// `dst = rsp`, `rbp`, or the return address `[rbp + 8]` (`get_stack_pointer`,
    /// `get_frame_pointer`, `get_return_address`; the last two make the function set up a
    /// frame). Operands: `[dst def]`.
    FrameValue { dst: R, what: FrameValue },
    /// `dst = address of name + offset`: `lea dst, [rip + name + offset]` (PC-relative
    /// relocation) when the symbol is colocated, else `mov dst, [rip + GOT(name)]` then
    /// `lea dst, [dst + offset]` if `offset` is not 0. Operands: `[dst def]`.
    SymbolAddr {
        dst: R,
        name: Arc<FunctionName>,
        offset: i32,
        got: bool,
    },
}

impl MemInst {
    map_operands! {
        pub(in crate::isa::x64) MemInst, |m| {
            Load { kind, trap } [mem = mem.map(m), dst = m.reg_def(*dst)],
            Store { kind, trap } [src = m.reg_use(*src), mem = mem.map(m)],
            StoreImm { size, imm, trap } [mem = mem.map(m)],
            Lea { size } [mem = mem.map(m), dst = m.reg_def(*dst)],
            RetAreaAddr { size } [dst = m.reg_def(*dst)],
            StackAddr { slot, disp } [dst = m.reg_def(*dst)],
            FrameValue { what } [dst = m.reg_def(*dst)],
            SymbolAddr { name, offset, got } [dst = m.reg_def(*dst)],
        }
    }
}

impl MemInst<String> {
    pub(super) fn pretty(&self) -> String {
        match self {
            MemInst::Load { kind, dst, mem, .. } => {
                format!("{dst} = load.{kind} {}", mem.pretty())
            }
            MemInst::Store { kind, src, mem, .. } => {
                format!("store.{kind} {src}, {}", mem.pretty())
            }
            MemInst::StoreImm { size, imm, mem, .. } => {
                format!("store.{} {imm}, {}", size.bits(), mem.pretty())
            }
            MemInst::Lea { size, dst, mem } => {
                format!("{dst} = lea.{} {}", size.bits(), mem.pretty())
            }
            MemInst::StackAddr { dst, slot, disp } => format!("{dst} = lea [ss{slot}{disp:+}]"),
            MemInst::FrameValue { dst, what } => format!("{dst} = {}", what.name()),
            MemInst::RetAreaAddr { dst, size } => {
                format!("{dst} = lea [ret_area] ({size} bytes)")
            }
            MemInst::SymbolAddr {
                dst,
                name,
                offset,
                got,
            } => format!(
                "{dst} = {} {name}{}",
                if *got { "got_addr" } else { "pc_addr" },
                match offset {
                    0 => String::new(),
                    o => format!("{o:+}"),
                }
            ),
        }
    }
}

impl MemInst<PReg> {
    pub(in crate::isa::x64) fn emit(&self, ctx: &mut Ctx<'_, '_>, buf: &mut Buf) {
        match self {
            MemInst::Load {
                kind,
                dst,
                mem,
                trap,
            } => {
                let m = access(ctx, buf, mem, *trap);
                let gm = GprMem::Mem(m);
                match *kind {
                    LoadKind::Int { size } => moves::mov_r_rm(buf, size, gpr(*dst), &gm),
                    LoadKind::Zext { mode } => moves::movzx(buf, mode, gpr(*dst), &gm),
                    LoadKind::Sext { mode } => moves::movsx(buf, mode, gpr(*dst), &gm),
                    LoadKind::Float {
                        size: FloatSize::F32,
                    } => sse_enc::sse_r_rm(buf, SseOp::Movss, xmm(*dst), &XmmMem::Mem(m)),
                    LoadKind::Float {
                        size: FloatSize::F64,
                    } => sse_enc::sse_r_rm(buf, SseOp::Movsd, xmm(*dst), &XmmMem::Mem(m)),
                };
            }
            MemInst::Store {
                kind,
                src,
                mem,
                trap,
            } => {
                let m = access(ctx, buf, mem, *trap);
                match *kind {
                    StoreKind::Int { size } => {
                        moves::mov_rm_r(buf, size, &GprMem::Mem(m), gpr(*src));
                    }
                    StoreKind::Float {
                        size: FloatSize::F32,
                    } => {
                        sse_enc::sse_store(buf, SseStore::Movss, &m, xmm(*src));
                    }
                    StoreKind::Float {
                        size: FloatSize::F64,
                    } => {
                        sse_enc::sse_store(buf, SseStore::Movsd, &m, xmm(*src));
                    }
                }
            }
            MemInst::StoreImm {
                size,
                imm,
                mem,
                trap,
            } => {
                let m = access(ctx, buf, mem, *trap);
                let imm = match size {
                    Size::S8 => i32::from(*imm as i8),
                    Size::S16 => i32::from(*imm as i16),
                    Size::S32 | Size::S64 => *imm,
                };
                moves::mov_rm_imm(buf, *size, &GprMem::Mem(m), imm);
            }
            MemInst::Lea { size, dst, mem } => {
                let m = access(ctx, buf, mem, None);
                misc::lea(buf, *size, gpr(*dst), &m);
            }
            MemInst::RetAreaAddr { dst, .. } => {
                let m = Mem::<PReg>::RetArea { disp: 0 }.amode(ctx.frame);
                misc::lea(buf, Size::S64, gpr(*dst), &m);
            }
            MemInst::FrameValue { dst, what } => {
                let dst = gpr(*dst);
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
            MemInst::StackAddr { dst, slot, disp } => {
                let m = Mem::<PReg>::Slot {
                    slot: *slot,
                    disp: *disp,
                }
                .amode(ctx.frame);
                misc::lea(buf, Size::S64, gpr(*dst), &m);
            }
            MemInst::SymbolAddr {
                dst,
                name,
                offset,
                got,
            } => {
                let dst = gpr(*dst);
                if *got {
                    let m = GprMem::Mem(Amode::rip(0));
                    let fix = moves::mov_r_rm(buf, Size::S64, dst, &m).expect("rip-relative");
                    buf.add_reloc(fix.at, RelocKind::GotPcRel4, (**name).clone(), -4);
                    if *offset != 0 {
                        misc::lea(buf, Size::S64, dst, &Amode::base_disp(dst, *offset));
                    }
                } else {
                    let fix = misc::lea(buf, Size::S64, dst, &Amode::rip(0)).expect("rip-relative");
                    let addend = i64::from(*offset) - i64::from(fix.end - fix.at);
                    buf.add_reloc(fix.at, RelocKind::PcRel4, (**name).clone(), addend);
                }
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
