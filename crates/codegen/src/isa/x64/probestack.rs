//! Inline stack probes on x86-64 (CLIF `enable_probestack`, `probestack_size_log2`): a frame
//! at least one probe interval `P` (the guard-page size) large touches the stack at every
//! `P` bytes downwards before `rsp` moves over it, so the body can never skip past a guard
//! page into other memory.
//!
//! Contract. [`emit_probes`] runs in the prologue after `push rbp; mov rbp, rsp` and the
//! stack-limit check (so a limit traps before anything is touched), before `sub rsp, size`.
//! It touches the dword at `rsp - k*P` for `k = 1..=size/P`, in that order (the highest
//! address first, as the stack grows), with `or dword [addr], 0`, which leaves the memory
//! as it was. The rest of the frame lies less than `P` below the last probe, and a callee's
//! pushes (16 bytes, as `size` and `P` are multiples of 16) land at most `P` below it, so
//! no page is skipped. Up to [`MAX_UNROLLED`] probes are straight-line instructions; more
//! are a loop of four instructions. It uses only `r10` and `r11`, which hold no argument at
//! entry (the stack-limit check relies on the same); `rsp` stays put while probing, as Linux
//! (since 4.20) grows a main thread's stack on any access below it. `P` is a power of two
//! from 16 bytes to [`MAX_INTERVAL`], so the unrolled offsets and the step fit 32 bits; the
//! loop's end is computed in 64 bits when the frame is larger than 2 GiB.
//!
//! Cost: O(1) code per function; at run time, one read-modify-write per probed page.

use super::asm::alu::{self, AluOp};
use super::asm::misc;
use super::asm::moves;
use super::asm::setcc_cmov_jcc::{self as cc_ops, Cc};
use super::asm::{Amode, CodeSink, Gpr, GprMem, Size};

/// The probe interval's log2 clients that turn probes on by default use (4 KiB pages).
pub const DEFAULT_SIZE_LOG2: u8 = 12;

/// Most probes emitted as straight-line code.
pub const MAX_UNROLLED: u32 = 3;

/// Smallest and largest probe intervals (`2^4` and `2^23` bytes, as on AArch64).
pub const MIN_INTERVAL: u32 = 1 << 4;
pub const MAX_INTERVAL: u32 = 1 << 23;

/// `or dword [addr], 0`: one probe.
fn probe(sink: &mut impl CodeSink, addr: Amode) {
    alu::alu_rm_imm(sink, AluOp::Or, Size::S32, &GprMem::Mem(addr), 0);
}

/// Probe the `size` bytes below `rsp` every `interval` bytes (see the module doc).
pub fn emit_probes(sink: &mut impl CodeSink, size: u32, interval: u32) {
    debug_assert!(interval.is_power_of_two() && (MIN_INTERVAL..=MAX_INTERVAL).contains(&interval));
    let probes = size / interval;
    let span = probes * interval;
    let step = interval as i32;
    if probes <= MAX_UNROLLED {
        for k in 1..=probes as i32 {
            probe(sink, Amode::base_disp(Gpr::RSP, -k * step));
        }
        return;
    }
    // r10 = the last address to probe; r11 walks down to it.
    match i32::try_from(span) {
        Ok(span) => {
            misc::lea(
                sink,
                Size::S64,
                Gpr::R10,
                &Amode::base_disp(Gpr::RSP, -span),
            );
        }
        Err(_) => {
            // r11 = span (a 32-bit move zero-extends), r10 = rsp - r11.
            moves::mov_r_imm(sink, Size::S32, Gpr::R11, span.into());
            moves::mov_rm_r(sink, Size::S64, &GprMem::Reg(Gpr::R10), Gpr::RSP);
            alu::alu_rm_r(
                sink,
                AluOp::Sub,
                Size::S64,
                &GprMem::Reg(Gpr::R10),
                Gpr::R11,
            );
        }
    }
    moves::mov_rm_r(sink, Size::S64, &GprMem::Reg(Gpr::R11), Gpr::RSP);
    let start = sink.current_offset();
    alu::alu_rm_imm(sink, AluOp::Sub, Size::S64, &GprMem::Reg(Gpr::R11), step);
    probe(sink, Amode::base_disp(Gpr::R11, 0));
    alu::alu_r_rm(
        sink,
        AluOp::Cmp,
        Size::S64,
        Gpr::R11,
        &GprMem::Reg(Gpr::R10),
    );
    // The loop body is a few short instructions: the backward branch fits a rel8.
    let back = i64::from(start) - i64::from(sink.current_offset() + 2);
    cc_ops::jcc_rel8(sink, Cc::NE, i8::try_from(back).expect("a short loop"));
}

#[cfg(test)]
mod tests {
    use crate::isa::x64::X64Isa;
    use crate::isa::TargetIsa;
    use crate::settings::Flags;
    use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};

    /// The decoded code of a function with a `slot`-byte frame, probing every `2^log2` bytes.
    fn decoded(slot: u32, log2: Option<u8>) -> Vec<Instruction> {
        let text = format!(
            "function %f(i64) {{\n    ss0 = explicit_slot {slot}\nblock0(v0: i64):\n    v1 = stack_addr.i64 ss0\n    store.i64 v0, v1\n    return\n}}\n"
        );
        let f = &kestrel_ir::parse_functions(&text, "f.clif").unwrap()[0];
        let flags = Flags {
            probestack_size_log2: log2,
            ..Flags::default()
        };
        let code = X64Isa::default().compile_function(f, &flags).unwrap();
        let bytes = &code.code[..];
        let mut decoder = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE);
        let mut out = Vec::new();
        while decoder.can_decode() {
            let i = decoder.decode();
            assert!(!i.is_invalid(), "invalid instruction at {:#x}", i.ip());
            out.push(i);
        }
        out
    }

    /// Whether `i` is `or dword [base + disp], 0`.
    fn is_probe(i: &Instruction, base: Register, disp: i64) -> bool {
        i.mnemonic() == Mnemonic::Or
            && i.op0_kind() == OpKind::Memory
            && i.memory_base() == base
            && i.memory_index() == Register::None
            && i.memory_displacement64() as i64 == disp
            && i.memory_size() == iced_x86::MemorySize::UInt32
            && matches!(i.op1_kind(), OpKind::Immediate8to32 | OpKind::Immediate32)
            && i.immediate(1) == 0
    }

    fn probes(code: &[Instruction]) -> usize {
        code.iter().filter(|i| i.mnemonic() == Mnemonic::Or).count()
    }

    /// The instructions from `push rbp` up to `sub rsp, size`, which must be there.
    fn prologue(code: &[Instruction]) -> &[Instruction] {
        assert_eq!(code[0].mnemonic(), Mnemonic::Push);
        let end = code
            .iter()
            .position(|i| i.mnemonic() == Mnemonic::Sub && i.op0_register() == Register::RSP)
            .expect("the prologue allocates the frame");
        &code[..=end]
    }

    #[test]
    fn off_or_small_frames_do_not_probe() {
        assert_eq!(probes(&decoded(1 << 20, None)), 0);
        assert_eq!(probes(&decoded(4000, Some(12))), 0);
    }

    #[test]
    fn a_few_pages_probe_in_straight_line_from_the_top() {
        let code = decoded(3 * 4096, Some(12));
        let pro = prologue(&code);
        // push rbp; mov rbp, rsp; three probes; sub rsp, size.
        assert_eq!(pro.len(), 6, "{pro:?}");
        for (k, i) in pro[2..5].iter().enumerate() {
            let disp = -4096 * (k as i64 + 1);
            assert!(is_probe(i, Register::RSP, disp), "probe {k}: {i}");
        }
        assert!(!code.iter().any(|i| i.mnemonic() == Mnemonic::Jne));
    }

    #[test]
    fn a_large_frame_probes_in_a_loop_that_ends_at_the_frame() {
        let code = decoded(64 << 20, Some(12));
        let pro = prologue(&code);
        let size = pro.last().unwrap().immediate(1) as i64;
        assert!(size >= 64 << 20);
        let span = size / 4096 * 4096;
        // lea r10, [rsp - span]; mov r11, rsp; loop: sub r11, 4096; or [r11], 0;
        // cmp r11, r10; jne loop.
        let body = &pro[2..pro.len() - 1];
        assert_eq!(body.len(), 6, "{body:?}");
        assert_eq!(body[0].mnemonic(), Mnemonic::Lea);
        assert_eq!(body[0].op0_register(), Register::R10);
        assert_eq!(body[0].memory_base(), Register::RSP);
        assert_eq!(body[0].memory_displacement64() as i64, -span);
        assert_eq!(body[1].mnemonic(), Mnemonic::Mov);
        assert_eq!(
            (body[1].op0_register(), body[1].op1_register()),
            (Register::R11, Register::RSP)
        );
        assert_eq!(body[2].mnemonic(), Mnemonic::Sub);
        assert_eq!(body[2].op0_register(), Register::R11);
        assert_eq!(body[2].immediate(1), 4096);
        assert!(is_probe(&body[3], Register::R11, 0), "{}", body[3]);
        assert_eq!(body[4].mnemonic(), Mnemonic::Cmp);
        assert_eq!(
            (body[4].op0_register(), body[4].op1_register()),
            (Register::R11, Register::R10)
        );
        assert_eq!(body[5].mnemonic(), Mnemonic::Jne);
        assert_eq!(body[5].near_branch64(), body[2].ip());
    }

    #[test]
    fn a_loop_beyond_2_gib_computes_its_end_in_64_bits() {
        let mut bytes = Vec::new();
        super::emit_probes(&mut bytes, 3 << 30, 4096);
        let code: Vec<Instruction> = Decoder::with_ip(64, &bytes, 0, DecoderOptions::NONE)
            .into_iter()
            .collect();
        // mov r11d, span; mov r10, rsp; sub r10, r11; mov r11, rsp; then the loop.
        assert_eq!(code.len(), 8, "{code:?}");
        assert_eq!(code[0].mnemonic(), Mnemonic::Mov);
        assert_eq!(code[0].op0_register(), Register::R11D);
        assert_eq!(code[0].immediate(1), 3 << 30);
        assert_eq!(code[2].mnemonic(), Mnemonic::Sub);
        assert_eq!(
            (code[2].op0_register(), code[2].op1_register()),
            (Register::R10, Register::R11)
        );
        assert!(is_probe(&code[5], Register::R11, 0), "{}", code[5]);
        assert_eq!(code[7].mnemonic(), Mnemonic::Jne);
        assert_eq!(code[7].near_branch64(), code[4].ip());
    }
}
