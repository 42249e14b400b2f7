//! The AArch64 (AAPCS64, Linux) host: see [`super`] for the items each host provides.

use kestrel_ir::CallConv;

/// The host's name, as `target` lines spell it.
pub(crate) const NAME: &str = "aarch64";

/// x0–x7, the trampoline's `gprs` order.
pub(crate) const ARG_GPR_ENC: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
/// v0–v7.
pub(crate) const ARG_FPRS: usize = 8;
/// x0–x7: the backend returns up to eight integer parts in registers.
pub(crate) const RET_GPR_ENC: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
/// v0–v7.
pub(crate) const RET_FPRS: usize = 8;

/// Why the backend refuses a signature the JIT otherwise accepts.
pub(crate) fn refusal(cc: CallConv) -> &'static str {
    if cc == CallConv::Winch {
        "winch on aarch64 passes no i128 and no extended result"
    } else {
        "the aarch64 backend cannot place this signature"
    }
}

/// Whether the return area's address goes in the indirect result register (AAPCS64's x8)
/// rather than the first argument register (x0, under `winch`).
pub(crate) fn area_ptr_is_indirect(cc: CallConv) -> bool {
    cc != CallConv::Winch
}

/// The PC and SP of an interrupted context.
pub(crate) fn context_pc_sp(uc: &libc::ucontext_t) -> (usize, u64) {
    (uc.uc_mcontext.pc as usize, uc.uc_mcontext.sp)
}

/// Make the interrupted context resume at `pc` with stack pointer `sp` and frame pointer
/// `fp` (x29).
pub(crate) fn redirect(uc: &mut libc::ucontext_t, pc: usize, sp: u64, fp: u64) {
    uc.uc_mcontext.pc = pc as u64;
    uc.uc_mcontext.sp = sp;
    uc.uc_mcontext.regs[29] = fp;
}

/// Fills the code pages' padding: zero words are `udf #0`.
pub(crate) const PAD_BYTE: u8 = 0;

/// The address a call with this addend lands on: `bl` is relative to its own address, so
/// a stub stands for `target + addend`.
pub(crate) fn stub_key(target: usize, addend: i64) -> usize {
    target.wrapping_add_signed(addend as isize)
}

/// `ldr x16, 8; br x16; .quad dest` (x16 is the intra-procedure-call scratch register,
/// which AAPCS64 lets any call clobber).
pub(crate) fn write_stub(out: &mut [u8], dest: usize) {
    out[..4].copy_from_slice(&0x5800_0050u32.to_le_bytes());
    out[4..8].copy_from_slice(&0xd61f_0200u32.to_le_bytes());
    out[8..16].copy_from_slice(&(dest as u64).to_le_bytes());
}

/// Make instruction fetch see the code just written to `[start, start + len)`: clean the
/// data cache to the point of unification and invalidate the instruction cache, line by
/// line (sizes from `CTR_EL0`), with the barriers the architecture requires. The `isb`
/// only orders this thread; other threads reach the code after the `mprotect` that makes
/// it executable (a system call, which is context-synchronizing on return).
pub(crate) fn sync_icache(start: usize, len: usize) {
    if len == 0 {
        return;
    }
    let ctr: u64;
    // SAFETY: reading CTR_EL0 is allowed at EL0 on Linux (the kernel enables or emulates it).
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let dline = 4usize << ((ctr >> 16) & 0xf);
    let iline = 4usize << (ctr & 0xf);
    let end = start + len;
    let mut at = start & !(dline - 1);
    while at < end {
        // SAFETY: cleaning a cache line of mapped, readable memory has no other effect.
        unsafe { core::arch::asm!("dc cvau, {}", in(reg) at, options(nostack)) };
        at += dline;
    }
    // SAFETY: barriers have no memory effect beyond ordering.
    unsafe { core::arch::asm!("dsb ish", options(nostack)) };
    let mut at = start & !(iline - 1);
    while at < end {
        // SAFETY: invalidating instruction-cache lines of mapped memory has no other effect.
        unsafe { core::arch::asm!("ic ivau, {}", in(reg) at, options(nostack)) };
        at += iline;
    }
    // SAFETY: as above.
    unsafe { core::arch::asm!("dsb ish", "isb", options(nostack)) };
}

#[cfg(test)]
mod tests {
    use crate::abi::*;
    use kestrel_codegen::isa::TargetIsa;

    /// The backend the plans below are written for.
    fn isa() -> std::sync::Arc<dyn TargetIsa> {
        kestrel_codegen::isa::lookup("aarch64").unwrap().finish()
    }
    use kestrel_ir::{AbiParam, CallConv, Signature, Type};

    fn sig_cc(cc: CallConv, params: &[Type], returns: &[Type]) -> Signature {
        let mut s = Signature::new(cc);
        s.params = params.iter().map(|t| AbiParam::new(*t)).collect();
        s.returns = returns.iter().map(|t| AbiParam::new(*t)).collect();
        s
    }

    #[test]
    fn i128_takes_an_even_pair_and_the_ninth_integer_the_stack() {
        let mut params = vec![Type::I64, Type::I128];
        params.extend([Type::I64; 6]);
        params.push(Type::F64);
        let plan = classify(&*isa(), &sig_cc(CallConv::SystemV, &params, &[])).unwrap();
        let locs: Vec<Vec<ArgLoc>> = plan.args.iter().map(|a| a.2.clone()).collect();
        assert_eq!(locs[0], [ArgLoc::Gpr(0)]);
        // x1 is skipped: the pair starts at an even register.
        assert_eq!(locs[1], [ArgLoc::Gpr(2), ArgLoc::Gpr(3)]);
        assert_eq!(locs[5], [ArgLoc::Gpr(7)]);
        assert_eq!(locs[6], [ArgLoc::Stack(0)]);
        assert_eq!(locs[7], [ArgLoc::Stack(1)]);
        assert_eq!(locs[8], [ArgLoc::Fpr(0)]);
        assert_eq!(plan.stack_slots, 2);
    }

    #[test]
    fn results_beyond_eight_registers_use_the_area_through_x8_or_x0_under_winch() {
        let plan = classify(
            &*isa(),
            &sig_cc(CallConv::SystemV, &[Type::I64], &[Type::I64; 9]),
        )
        .unwrap();
        assert_eq!(plan.rets[7].1, [RetLoc::Gpr(7)]);
        assert_eq!(plan.rets[8].1, [RetLoc::Area(0)]);
        assert_eq!((plan.ret_area, plan.area_ptr), (8, AreaPtr::Indirect));
        assert_eq!(plan.args[0].2, [ArgLoc::Gpr(0)]);

        let rets = [Type::I32, Type::F64, Type::I64];
        let plan = classify(&*isa(), &sig_cc(CallConv::Winch, &[Type::I64], &rets)).unwrap();
        assert_eq!(plan.area_ptr, AreaPtr::Gpr(0));
        assert_eq!(plan.args[0].2, [ArgLoc::Gpr(1)]);
        assert_eq!(plan.rets[2].1, [RetLoc::Gpr(0)]);
        assert!(plan.ret_area >= 12);
    }
}
