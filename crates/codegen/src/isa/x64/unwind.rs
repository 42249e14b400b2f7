//! x86-64 call-frame rules (System V DWARF numbering) for the prologue and epilogues.
//!
//! # Contract
//!
//! The frame `emit.rs` builds is `push rbp; mov rbp, rsp; [stack check]; sub rsp, N;` then
//! callee-saved stores below `rbp`. From `mov rbp, rsp` until an epilogue's `pop rbp` the
//! CFA is `rbp + 16`, whatever `rsp` does (outgoing arguments, calls). Each epilogue is
//! bracketed by remember/restore, so code after a `ret` in the middle of the function keeps
//! the body's rules. A function without a frame (`Frame::setup` false) runs on the entry
//! rules of [`CIE`] throughout and records nothing.
//!
//! Cost: O(saved registers) markers per prologue, three per epilogue.

use super::asm::{Gpr, Xmm};
use crate::machinst::buffer::{LabelUse, MachBuffer};
use crate::machinst::unwind::{UnwindCie, UnwindOp};

/// DWARF number of the return-address column.
const RA: u16 = 16;
const RSP: u16 = 7;
const RBP: u16 = 6;

/// Entry rules: CFA = `rsp + 8`, return address at `CFA - 8`.
pub const CIE: UnwindCie = UnwindCie {
    sp_reg: RSP,
    ra_reg: RA,
    cfa_offset: 8,
    ra_offset: Some(-8),
    code_align: 1,
    data_align: -8,
};

/// The System V DWARF number of a general-purpose register (not hardware order).
pub fn dwarf_gpr(r: Gpr) -> u16 {
    const BY_ENC: [u16; 16] = [0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15];
    BY_ENC[usize::from(r.enc())]
}

/// The System V DWARF number of `xmmN` (17 + N).
pub fn dwarf_xmm(x: Xmm) -> u16 {
    17 + u16::from(x.enc())
}

/// After `push rbp`: CFA = `rsp + 16`, the caller's `rbp` at `CFA - 16`.
pub fn after_push_rbp<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::DefCfaOffset { offset: 16 });
    buf.add_unwind(UnwindOp::SaveReg {
        reg: RBP,
        cfa_offset: -16,
    });
}

/// After `mov rbp, rsp`: CFA = `rbp + 16` for the body.
pub fn after_set_frame<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::DefCfaRegister { reg: RBP });
}

/// After storing a callee-saved register at `rbp + rbp_offset`.
pub fn after_save<U: LabelUse>(buf: &mut MachBuffer<U>, reg: u16, rbp_offset: i32) {
    buf.add_unwind(UnwindOp::SaveReg {
        reg,
        cfa_offset: rbp_offset - 16,
    });
}

/// Before an epilogue's first instruction.
pub fn before_epilogue<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::RememberState);
}

/// After the epilogue's `pop rbp`: CFA = `rsp + 8` until `ret`.
pub fn after_pop_rbp<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::DefCfa {
        reg: RSP,
        offset: 8,
    });
}

/// After the epilogue's `ret`: the body's rules again for whatever code follows.
pub fn after_ret<U: LabelUse>(buf: &mut MachBuffer<U>) {
    buf.add_unwind(UnwindOp::RestoreState);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwarf_numbers_follow_the_system_v_table() {
        assert_eq!(dwarf_gpr(Gpr::RAX), 0);
        assert_eq!(dwarf_gpr(Gpr::RDX), 1);
        assert_eq!(dwarf_gpr(Gpr::RCX), 2);
        assert_eq!(dwarf_gpr(Gpr::RBX), 3);
        assert_eq!(dwarf_gpr(Gpr::RSI), 4);
        assert_eq!(dwarf_gpr(Gpr::RDI), 5);
        assert_eq!(dwarf_gpr(Gpr::RBP), 6);
        assert_eq!(dwarf_gpr(Gpr::RSP), 7);
        assert_eq!(dwarf_gpr(Gpr::R12), 12);
        assert_eq!(dwarf_xmm(Xmm::new(15)), 32);
    }
}
