//! The x86-64 (System V, Linux) host: see [`super`] for the items each host provides.

use kestrel_ir::CallConv;

/// The host's name, as `target` lines spell it.
pub(crate) const NAME: &str = "x86_64";

/// Hardware encodings of rdi, rsi, rdx, rcx, r8, r9: the trampoline's `gprs` order.
pub(crate) const ARG_GPR_ENC: [usize; 6] = [7, 6, 2, 1, 8, 9];
/// xmm0–xmm7.
pub(crate) const ARG_FPRS: usize = 8;
/// Hardware encodings of rax, rdx: the trampoline's `ret_gprs` order.
pub(crate) const RET_GPR_ENC: [usize; 2] = [0, 2];
/// xmm0, xmm1.
pub(crate) const RET_FPRS: usize = 2;

/// Why the backend refuses a signature the JIT otherwise accepts.
pub(crate) fn refusal(cc: CallConv) -> &'static str {
    if cc == CallConv::WindowsFastcall {
        "windows_fastcall passes no i128 and returns at most one result"
    } else {
        "the x86-64 backend cannot place this signature"
    }
}

/// Whether the return area's address goes in an indirect result register: never, it is a
/// hidden first argument in rdi under every convention.
pub(crate) fn area_ptr_is_indirect(_cc: CallConv) -> bool {
    false
}

/// The PC and SP of an interrupted context.
pub(crate) fn context_pc_sp(uc: &libc::ucontext_t) -> (usize, u64) {
    let gregs = &uc.uc_mcontext.gregs;
    (
        gregs[libc::REG_RIP as usize] as usize,
        gregs[libc::REG_RSP as usize] as u64,
    )
}

/// Make the interrupted context resume at `pc` with stack pointer `sp` and frame pointer
/// `fp` (rbp).
pub(crate) fn redirect(uc: &mut libc::ucontext_t, pc: usize, sp: u64, fp: u64) {
    let gregs = &mut uc.uc_mcontext.gregs;
    gregs[libc::REG_RIP as usize] = pc as i64;
    gregs[libc::REG_RSP as usize] = sp as i64;
    gregs[libc::REG_RBP as usize] = fp as i64;
}

/// Fills the code pages' padding: `int3`.
pub(crate) const PAD_BYTE: u8 = 0xcc;

/// The address a call with this addend lands on: stubs are entered at their start, so a
/// stub stands for `target + addend + 4` (the usual addend -4 of a `call rel32` gives
/// `target`).
pub(crate) fn stub_key(target: usize, addend: i64) -> usize {
    target.wrapping_add_signed(addend as isize + 4)
}

/// `movabs r11, dest; jmp r11; int3 ...` (r11 is caller-saved and carries no argument).
pub(crate) fn write_stub(out: &mut [u8], dest: usize) {
    out[..2].copy_from_slice(&[0x49, 0xbb]);
    out[2..10].copy_from_slice(&(dest as u64).to_le_bytes());
    out[10..13].copy_from_slice(&[0x41, 0xff, 0xe3]);
}

/// x86-64 keeps instruction fetch coherent with stores: nothing to do.
pub(crate) fn sync_icache(_start: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use crate::abi::*;
    use kestrel_codegen::isa::TargetIsa;

    /// The backend the plans below are written for.
    fn isa() -> std::sync::Arc<dyn TargetIsa> {
        kestrel_codegen::isa::lookup("x86_64").unwrap().finish()
    }
    use kestrel_ir::AbiParam;
    use kestrel_ir::{ArgumentExtension, CallConv, Signature, Type};

    fn sig(params: &[Type], returns: &[Type]) -> Signature {
        sig_cc(CallConv::SystemV, params, returns)
    }

    fn sig_cc(cc: CallConv, params: &[Type], returns: &[Type]) -> Signature {
        let mut s = Signature::new(cc);
        s.params = params.iter().map(|t| AbiParam::new(*t)).collect();
        s.returns = returns.iter().map(|t| AbiParam::new(*t)).collect();
        s
    }

    fn arg_locs(plan: &CallPlan) -> Vec<Vec<ArgLoc>> {
        plan.args.iter().map(|a| a.2.clone()).collect()
    }

    fn ret_locs(plan: &CallPlan) -> Vec<Vec<RetLoc>> {
        plan.rets.iter().map(|r| r.1.clone()).collect()
    }

    #[test]
    fn i128_skips_to_aligned_stack_pair() {
        let plan = classify(
            &*isa(),
            &sig(
                &[Type::I64; 5]
                    .iter()
                    .copied()
                    .chain([Type::I128, Type::I64, Type::I64, Type::I128])
                    .collect::<Vec<_>>(),
                &[],
            ),
        )
        .unwrap();
        let locs = arg_locs(&plan);
        assert_eq!(locs[4], [ArgLoc::Gpr(4)]);
        assert_eq!(locs[5], [ArgLoc::Stack(0), ArgLoc::Stack(1)]);
        assert_eq!(locs[6], [ArgLoc::Gpr(5)]);
        assert_eq!(locs[7], [ArgLoc::Stack(2)]);
        assert_eq!(locs[8], [ArgLoc::Stack(4), ArgLoc::Stack(5)]);
        assert_eq!(plan.stack_slots, 6);
        assert_eq!(plan.ret_area, 0);
    }

    #[test]
    fn results_beyond_the_registers_go_to_the_area() {
        let plan = classify(
            &*isa(),
            &sig(&[], &[Type::I64, Type::F64, Type::I32, Type::F32]),
        )
        .unwrap();
        assert_eq!(
            ret_locs(&plan),
            [
                vec![RetLoc::Gpr(0)],
                vec![RetLoc::Fpr(0)],
                vec![RetLoc::Gpr(1)],
                vec![RetLoc::Fpr(1)]
            ]
        );
        assert_eq!(plan.ret_area, 0);

        // i64 in rax, the i128 split between rdx and the area, then the area in order.
        let plan = classify(
            &*isa(),
            &sig(
                &[Type::I64],
                &[
                    Type::I64,
                    Type::I128,
                    Type::F32,
                    Type::F32,
                    Type::F64,
                    Type::I8,
                ],
            ),
        )
        .unwrap();
        assert_eq!(
            ret_locs(&plan),
            [
                vec![RetLoc::Gpr(0)],
                vec![RetLoc::Gpr(1), RetLoc::Area(0)],
                vec![RetLoc::Fpr(0)],
                vec![RetLoc::Fpr(1)],
                vec![RetLoc::Area(8)],
                vec![RetLoc::Area(16)],
            ]
        );
        assert_eq!(plan.ret_area, 24);
        // The hidden pointer takes rdi; the first argument moves to rsi.
        assert_eq!(arg_locs(&plan), [vec![ArgLoc::Gpr(1)]]);
    }

    #[test]
    fn tail_is_system_v_and_fastcall_has_a_shadow_area() {
        let tail = classify(
            &*isa(),
            &sig_cc(CallConv::Tail, &[Type::I64; 7], &[Type::I64; 3]),
        )
        .unwrap();
        assert_eq!(tail.ret_area, 8);
        assert_eq!(arg_locs(&tail)[4], [ArgLoc::Gpr(5)]);
        assert_eq!(arg_locs(&tail)[5], [ArgLoc::Stack(0)]);
        let win = classify(
            &*isa(),
            &sig_cc(
                CallConv::WindowsFastcall,
                &[Type::I64, Type::F64, Type::I64, Type::I64, Type::I64],
                &[Type::I64],
            ),
        )
        .unwrap();
        assert_eq!(
            arg_locs(&win),
            [
                vec![ArgLoc::Gpr(3)],
                vec![ArgLoc::Fpr(1)],
                vec![ArgLoc::Gpr(4)],
                vec![ArgLoc::Gpr(5)],
                vec![ArgLoc::Stack(4)],
            ]
        );
        assert_eq!(win.stack_slots, 5);
        assert!(classify(
            &*isa(),
            &sig_cc(CallConv::WindowsFastcall, &[], &[Type::I64, Type::I64])
        )
        .is_err());
    }

    #[test]
    fn winch_packs_the_area_in_reverse() {
        let rets = [Type::I8, Type::F64, Type::I16, Type::F32];
        let plan = classify(&*isa(), &sig_cc(CallConv::Winch, &[Type::I64; 6], &rets)).unwrap();
        // Forward i8 at 0, f64 at 1, i16 at 9 (total 11), mirrored; the f32 in xmm0.
        let expected = [
            [RetLoc::Area(10)],
            [RetLoc::Area(2)],
            [RetLoc::Area(0)],
            [RetLoc::Fpr(0)],
        ];
        assert_eq!(ret_locs(&plan), expected.map(Vec::from));
        assert_eq!(plan.ret_area, 11);
        assert_eq!(arg_locs(&plan)[5], [ArgLoc::Stack(0)]);
        // A `uext` parameter widens every slot to 8 bytes.
        let mut s = sig_cc(CallConv::Winch, &[Type::I8], &rets);
        s.params[0].extension = ArgumentExtension::Uext;
        let expected = [
            [RetLoc::Area(16)],
            [RetLoc::Area(8)],
            [RetLoc::Area(0)],
            [RetLoc::Fpr(0)],
        ];
        assert_eq!(
            ret_locs(&classify(&*isa(), &s).unwrap()),
            expected.map(Vec::from)
        );
    }
}
