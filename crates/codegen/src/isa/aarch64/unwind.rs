//! AArch64 call-frame rules (DWARF numbering of the AArch64 ABI: `x0`–`x30` are 0–30, `sp`
//! is 31, `v0`–`v31` are 64–95) for the prologue and epilogues.
//!
//! # Contract
//!
//! The frame `emit.rs` builds is `stp x29, x30, [sp, #-16]!; mov x29, sp; sub sp, sp, N`,
//! then callee-saved stores below x29. From `mov x29, sp` until an epilogue's `ldp x29, x30`
//! the CFA is `x29 + 16`, whatever `sp` does. Each epilogue is bracketed by remember/restore,
//! so code after a `ret` in the middle of the function keeps the body's rules. A function
//! without a frame (`Frame::setup` false) runs on the entry rules of [`CIE`] throughout (the
//! return address stays in x30) and records nothing.
//!
//! Cost: O(saved registers) markers per prologue, three per epilogue.

use super::asm::{Gpr, Vreg as FpReg};
use crate::machinst::buffer::{LabelUse, MachBuffer};
use crate::machinst::unwind::{UnwindCie, UnwindOp};

const SP: u16 = 31;
const FP: u16 = 29;
const LR: u16 = 30;

/// Entry rules: CFA = `sp`, the return address in x30.
pub const CIE: UnwindCie = UnwindCie {
    sp_reg: SP,
    ra_reg: LR,
    cfa_offset: 0,
    ra_offset: None,
    code_align: 4,
    data_align: -8,
};

/// The DWARF number of a general-purpose register.
pub fn dwarf_gpr(r: Gpr) -> u16 {
    u16::from(r.enc())
}

/// The DWARF number of an FP register (its low 64 bits, `d0`–`d31`, are 64–95).
pub fn dwarf_fp(v: FpReg) -> u16 {
    64 + u16::from(v.enc())
}

/// After `stp x29, x30, [sp, #-16]!`: CFA = `sp + 16`, x29 and x30 saved below it.
pub fn after_save_fp_lr<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::DefCfaOffset { offset: 16 });
    buf.add_unwind(UnwindOp::SaveReg {
        reg: FP,
        cfa_offset: -16,
    });
    buf.add_unwind(UnwindOp::SaveReg {
        reg: LR,
        cfa_offset: -8,
    });
}

/// After `mov x29, sp`: CFA = `x29 + 16` for the body.
pub fn after_set_frame<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::DefCfaRegister { reg: FP });
}

/// After storing a callee-saved register at `x29 + fp_offset`.
pub fn after_save<U: LabelUse>(buf: &mut MachBuffer<U>, reg: u16, fp_offset: i32) {
    buf.add_unwind(UnwindOp::SaveReg {
        reg,
        cfa_offset: fp_offset - 16,
    });
}

/// Before an epilogue's first instruction.
pub fn before_epilogue<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::RememberState);
}

/// After the epilogue's `ldp x29, x30, [sp], #16`: CFA = `sp` until `ret`.
pub fn after_restore_fp_lr<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::DefCfa { reg: SP, offset: 0 });
}

/// After the epilogue's `ret`: the body's rules again for whatever code follows.
pub fn after_ret<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::RestoreState);
}
