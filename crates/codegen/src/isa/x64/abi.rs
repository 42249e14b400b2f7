//! The x86-64 calling conventions (System V AMD64, Windows x64, winch) as the shared
//! calling-convention and frame code (`machinst::abi`, `machinst::frame`) reads them.
//!
//! # Contract
//!
//! - Arguments: integers in `rdi, rsi, rdx, rcx, r8, r9`, floats in `xmm0`–`xmm7`, in order
//!   per class; the rest on the stack in 8-byte slots at `[rbp + 16 + 8*i]`, in order.
//! - Results: integers in `rax, rdx`, floats in `xmm0, xmm1`; the rest in a return area of
//!   8-byte slots in result order, whose address the caller passes as a hidden first argument
//!   (rdi; the integer parameters then start at rsi).
//! - Callee-saved `rbx, r12`–`r15` are saved only when the allocator used them; everything
//!   else is caller-saved and clobbered by calls.
//! - **Scratch registers.** `r11` and `xmm15` are never allocated, so no value lives in them
//!   across an instruction boundary. Two users rely on that, and only they may write them:
//!   the allocator's edits (moves and spills between instructions), and the encoder, which
//!   uses them as temporaries inside one instruction (`emit.rs`: wide comparisons, i128
//!   selects and conversions, float constants and conversions, atomic loops, jump tables,
//!   stack probes). The regalloc checker enforces this (`MachineEnv::scratch`): no operand
//!   may be allocated to them, and every instruction clobbers them, so a value an edit puts
//!   there must be consumed by edits before the next instruction. The prologue's
//!   stack-limit check also uses `r10`, before any value is in a register other than the
//!   arguments (`r10` carries none).
//! - `rbp` is the frame pointer whenever there is a frame: a function with calls, incoming
//!   stack arguments, stack slots, spills or saved registers. A leaf with none of these sets
//!   up nothing (no `push rbp`, no `sub rsp`) and returns with a bare `ret`.
//! - After the prologue `rsp` is 16-byte aligned, so calls need no adjustment.
//! - `fast` and `cold` are treated as System V (the callee and caller agree because both are
//!   compiled here). `tail` (Cranelift's tail-call convention) places arguments and results
//!   as System V and has its callee-saved registers (rbx, r12–r15), but the callee pops its
//!   stack arguments (`ret N`, N the area rounded up to 16 bytes), and a `return_call`
//!   replaces the frame in place (`inst/control.rs`); an indirect tail call's target is in
//!   `r10` ([`TAIL_TARGET`]), which carries no argument; `windows_fastcall` is Windows x64 (see its functions below);
//!   `winch` is described in [`super::winch`]; other conventions are unsupported.
//! - A function also saves the callee-saved registers of its convention that its calls may
//!   clobber (a System V function calling a winch one saves rbx, r12–r15 around it all).

use std::sync::OnceLock;

use kestrel_ir::{CallConv, Signature, Type, Value};
use kestrel_regalloc::{MachineEnv, PReg, PRegSet, RegClass, VReg};
use smallvec::SmallVec;

use super::asm::Gpr;
use super::inst::{
    gpr_preg, AluInst, CallDest, ControlInst, FrameValue, Inst, Mem, MemInst, StoreKind,
};
use super::winch::{self, area_access as exact_access};
use crate::machinst::abi::{self, Abi, AbiMem, Pairs, RegConv};
pub use crate::machinst::abi::{libcall_signature, Loc, Parts, RetLoc, SigLocs};
use crate::machinst::frame::FrameUse;
use crate::machinst::lower::{Lower, Results, ValueRegs};
use crate::machinst::operands::FixedRegs;
use crate::machinst::CodegenError;

/// The register of an indirect tail call's target: no argument register, not callee-saved,
/// not the scratch `r11`.
pub(super) const TAIL_TARGET: PReg = PReg::new(10, RegClass::Int);

const CALLEE_SAVED: [Gpr; 5] = [Gpr::RBX, Gpr::R12, Gpr::R13, Gpr::R14, Gpr::R15];

pub(super) fn xmm_preg(n: usize) -> PReg {
    PReg::new(n, RegClass::Float)
}

const fn xmms<const N: usize>() -> [PReg; N] {
    let mut regs = [PReg::new(0, RegClass::Float); N];
    let mut i = 0;
    while i < N {
        regs[i] = PReg::new(i, RegClass::Float);
        i += 1;
    }
    regs
}

/// System V parameters: `rdi, rsi, rdx, rcx, r8, r9` and `xmm0`–`xmm7`; an `i128` takes
/// two registers or two 16-byte-aligned slots.
const SYSV_PARAMS: RegConv = RegConv {
    ints: &gprs([7, 6, 2, 1, 8, 9]),
    floats: &xmms::<8>(),
    pairs: Pairs::Together,
};

/// System V results: `rax, rdx` and `xmm0, xmm1`, each part on its own.
const SYSV_RESULTS: RegConv = RegConv {
    ints: &gprs([0, 2]),
    floats: &xmms::<2>(),
    pairs: Pairs::Split,
};

pub(super) fn regs_of(ty: Type) -> Result<(RegClass, usize), CodegenError> {
    abi::regs_of::<X64Abi>(ty)
}

/// The bytes of the stack-argument slot a store of `kind` fills: 16 for a vector, else 8.
pub(super) fn out_slot_bytes(kind: &StoreKind) -> u32 {
    match kind {
        StoreKind::Vec => 16,
        StoreKind::Int { .. } | StoreKind::Float { .. } => 8,
    }
}

/// Vectors are carried by System V only (Windows x64 passes them by reference, `winch`
/// has none): the error for a vector in a signature of another convention.
fn refuse_vectors(sig: &Signature) -> Result<(), CodegenError> {
    let vector = sig
        .params
        .iter()
        .chain(&sig.returns)
        .find(|p| p.value_type.is_vector());
    match (sig.call_conv, vector) {
        (CallConv::WindowsFastcall | CallConv::Winch, Some(p)) => {
            Err(CodegenError::unsupported(format!(
                "vector argument or result of type {} under {}",
                p.value_type,
                sig.call_conv.name()
            )))
        }
        _ => Ok(()),
    }
}

/// Windows x64: one result, in rax or xmm0.
fn fastcall_ret_loc(
    sig: &Signature,
    mut each: impl FnMut(usize, RetLoc),
) -> Result<u32, CodegenError> {
    match sig.returns.as_slice() {
        [] => Ok(0),
        [p] => match regs_of(p.value_type)? {
            (RegClass::Int, 1) => {
                each(0, RetLoc::Reg(gpr_preg(Gpr::RAX)));
                Ok(0)
            }
            (RegClass::Float, 1) => {
                each(0, RetLoc::Reg(xmm_preg(0)));
                Ok(0)
            }
            _ => Err(CodegenError::unsupported(
                "an i128 result under windows_fastcall",
            )),
        },
        _ => Err(CodegenError::unsupported(
            "several results under windows_fastcall",
        )),
    }
}

/// Windows x64: argument `i` in rcx, rdx, r8, r9 (or xmm`i`) for `i < 4`, the rest on the
/// stack above the caller's 32-byte shadow area.
fn fastcall_param_locs(
    sig: &Signature,
    mut each: impl FnMut(usize, Loc),
) -> Result<(), CodegenError> {
    const ARGS: [Gpr; 4] = [Gpr::RCX, Gpr::RDX, Gpr::R8, Gpr::R9];
    for (i, p) in sig.params.iter().enumerate() {
        each(
            i,
            match regs_of(p.value_type)? {
                (_, 2) => {
                    return Err(CodegenError::unsupported(
                        "an i128 argument under windows_fastcall",
                    ));
                }
                (RegClass::Int, _) if i < 4 => Loc::Reg(gpr_preg(ARGS[i])),
                (RegClass::Float, _) if i < 4 => Loc::Reg(xmm_preg(i)),
                _ => Loc::Stack(FASTCALL_SHADOW as i32 + 8 * (i as i32 - 4)),
            },
        );
    }
    Ok(())
}

/// The stack space a Windows x64 caller reserves for the callee's register arguments.
const FASTCALL_SHADOW: u32 = 32;

/// Bytes of outgoing-argument area a call of a function of convention `cc` needs at least.
pub fn min_out_area(cc: CallConv) -> u32 {
    if cc == CallConv::WindowsFastcall {
        FASTCALL_SHADOW
    } else {
        0
    }
}

/// Registers a call of a function of convention `cc` may overwrite.
pub(super) fn call_clobbers(cc: CallConv) -> PRegSet {
    let mut set = caller_saved();
    if cc == CallConv::Winch {
        CALLEE_SAVED.iter().for_each(|&g| set.add(gpr_preg(g)));
    }
    set
}

/// The pinned register of `enable_pinned_reg` (as Cranelift's x86-64 backend pins it).
pub const PINNED_REG: PReg = PReg::new(15, RegClass::Int);

/// The allocator's view of the machine.
pub fn machine_env() -> &'static MachineEnv {
    static ENV: OnceLock<MachineEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let ints = [
            Gpr::RAX,
            Gpr::RCX,
            Gpr::RDX,
            Gpr::RSI,
            Gpr::RDI,
            Gpr::R8,
            Gpr::R9,
            Gpr::R10,
            Gpr::RBX,
            Gpr::R12,
            Gpr::R13,
            Gpr::R14,
            Gpr::R15,
        ];
        MachineEnv {
            allocatable: [
                ints.iter().map(|&g| gpr_preg(g)).collect(),
                (0..15).map(xmm_preg).collect(),
            ],
            caller_saved: caller_saved(),
            scratch: [Some(gpr_preg(Gpr::R11)), Some(xmm_preg(15))],
        }
    })
}

/// Registers a call may overwrite.
pub fn caller_saved() -> PRegSet {
    let mut set: PRegSet = [
        Gpr::RAX,
        Gpr::RCX,
        Gpr::RDX,
        Gpr::RSI,
        Gpr::RDI,
        Gpr::R8,
        Gpr::R9,
        Gpr::R10,
        Gpr::R11,
    ]
    .iter()
    .map(|&g| gpr_preg(g))
    .collect();
    for i in 0..16 {
        set.add(xmm_preg(i));
    }
    set
}

/// [`gen_call`] with arguments already in vregs (one vreg per argument, each one register).
pub fn gen_call_regs(
    ctx: &mut Lower<'_, Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[VReg],
) -> Result<Results, CodegenError> {
    let regs: SmallVec<[ValueRegs; 8]> = args.iter().map(|&v| ValueRegs::one(v)).collect();
    abi::gen_call_parts::<X64Abi>(ctx, callee, sig, &regs)
}

impl Abi for X64Abi {
    type Inst = Inst;
    const FLOAT_SAVE_BYTES: u32 = 16;
    const RET_AREA_ALIGN: u32 = 16;

    fn callee_saved(cc: CallConv) -> &'static [PReg] {
        match cc {
            CallConv::Winch => &[],
            CallConv::WindowsFastcall => &FASTCALL_CALLEE_SAVED,
            _ => &SYSV_CALLEE_SAVED,
        }
    }

    fn min_out_area(cc: CallConv) -> u32 {
        min_out_area(cc)
    }
    const CONV_ERROR_SUFFIX: &'static str = "";
    const STACK_LIMIT_ADD_BITS: u32 = 32;

    fn value_regs(ty: Type) -> Option<(RegClass, usize)> {
        abi::scalar_value_regs(ty)
            .or_else(|| abi::vector_value_regs(ty))
            .or_else(|| vector64_value_regs(ty))
    }

    fn each_param_loc(
        sig: &Signature,
        ret_area: bool,
        each: impl FnMut(usize, Loc),
    ) -> Result<(), CodegenError> {
        refuse_vectors(sig)?;
        if sig.call_conv == CallConv::WindowsFastcall {
            return fastcall_param_locs(sig, each);
        }
        // System V, and winch's parameters.
        abi::assign_in_order::<X64Abi, _>(SYSV_PARAMS, usize::from(ret_area), &sig.params, each)
            .map(drop)
    }

    fn each_ret_loc(sig: &Signature, each: impl FnMut(usize, RetLoc)) -> Result<u32, CodegenError> {
        refuse_vectors(sig)?;
        match sig.call_conv {
            CallConv::WindowsFastcall => fastcall_ret_loc(sig, each),
            CallConv::Winch => winch::each_ret_loc(sig, each),
            _ => abi::assign_in_order::<X64Abi, _>(SYSV_RESULTS, 0, &sig.returns, each),
        }
    }

    fn ret_area_reg(_cc: CallConv) -> PReg {
        gpr_preg(Gpr::RDI)
    }

    abi::abi_inst_builders!(disp);
}

abi::abi_entry_points!(X64Abi, Inst, disp);

/// A 64-bit vector (`i8x8`, `i16x4`, `i32x2`, `f32x2`) lives in the low half of one XMM
/// register, the high half undefined; it is passed like a 128-bit vector and stored as its
/// 8 bytes.
fn vector64_value_regs(ty: Type) -> Option<(RegClass, usize)> {
    let lanes_lowered = ty.lane_type() != Type::F16;
    (ty.is_vector() && ty.bits() == 64 && lanes_lowered).then_some((RegClass::Float, 1))
}

/// x86-64's facts for the shared ABI and frame code.
pub struct X64Abi;

const fn gprs<const N: usize>(encs: [usize; N]) -> [PReg; N] {
    let mut regs = [PReg::new(0, RegClass::Int); N];
    let mut i = 0;
    while i < N {
        regs[i] = PReg::new(encs[i], RegClass::Int);
        i += 1;
    }
    regs
}

/// System V: rbx, r12–r15.
const SYSV_CALLEE_SAVED: [PReg; 5] = gprs([3, 12, 13, 14, 15]);

/// Windows x64: rbx, r12–r15, rsi, rdi, then xmm6–xmm15.
const FASTCALL_CALLEE_SAVED: [PReg; 17] = {
    let ints = gprs([3, 12, 13, 14, 15, 6, 7]);
    let mut regs = [PReg::new(0, RegClass::Int); 17];
    let mut i = 0;
    while i < 17 {
        regs[i] = if i < 7 {
            ints[i]
        } else {
            PReg::new(i - 1, RegClass::Float)
        };
        i += 1;
    }
    regs
};
