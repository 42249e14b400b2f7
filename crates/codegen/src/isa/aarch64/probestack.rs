//! Inline stack probes on AArch64 (CLIF `enable_probestack`, `probestack_size_log2`): a
//! frame at least one probe interval `P` (the guard-page size) large touches the stack at
//! every `P` bytes downwards before `sp` moves over it, so the body can never skip past a
//! guard page into other memory.
//!
//! Contract. [`emit_probes`] runs in the prologue after `x29` is set up and the stack-limit
//! check (so a limit traps before anything is touched), before `sub sp, sp, #size`. It
//! stores zero at `sp - k*P` for `k = 1..=size/P`, in that order (the highest address
//! first, as the stack grows). The rest of the frame lies less than `P` below the last
//! probe, and everything below it (a callee's `stp` at most 16 bytes further, as `size` and
//! `P` are multiples of 16) within `P` of it, so no page is skipped. Up to
//! [`MAX_UNROLLED`] probes are straight-line stores; more are a loop of four instructions.
//! It uses only `x16` and `x17`, which hold nothing at entry. `P` is a power of two from
//! 16 bytes to [`MAX_INTERVAL`] (so that stepping by it never needs `x17`).
//!
//! Cost: O(1) code per function; at run time, one store per probed page.

use super::asm::add_sub::{adds_subs_reg, AddSub};
use super::asm::branch::b_cond;
use super::asm::cond::Cond as Cc;
use super::asm::mem::{ld_st, IntLdSt};
use super::asm::{Amode, Gpr, GprSp, GprZr, PcOffset, Size};
use super::emit::{add_offset, Buf};

/// Most probes emitted as straight-line code.
pub const MAX_UNROLLED: u32 = 3;

/// Largest probe interval: a step of it is one or two `sub`s with 12-bit immediates.
pub const MAX_INTERVAL: u32 = 1 << 23;

/// Probe the `size` bytes below `sp` every `interval` bytes (see the module doc).
pub fn emit_probes(buf: &mut Buf, size: u32, interval: u32) {
    debug_assert!(interval.is_power_of_two() && (16..=MAX_INTERVAL).contains(&interval));
    let probes = size / interval;
    let (x16, x17) = (Gpr::X16, Gpr::X17);
    let at_x16 = || Amode::offset(x16.into(), 0, 8).expect("offset 0");
    if probes <= MAX_UNROLLED {
        for k in 1..=probes {
            add_offset(buf, x16.into(), GprSp::SP, -i64::from(k * interval));
            ld_st(buf, IntLdSt::StrX, GprZr::ZR, at_x16());
        }
        return;
    }
    // x17 = the last address to probe; x16 walks down to it.
    add_offset(buf, x17.into(), GprSp::SP, -i64::from(probes * interval));
    add_offset(buf, x16.into(), GprSp::SP, 0);
    let start = buf.cur_offset();
    add_offset(buf, x16.into(), x16.into(), -i64::from(interval));
    ld_st(buf, IntLdSt::StrX, GprZr::ZR, at_x16());
    adds_subs_reg(
        buf,
        AddSub::Sub,
        Size::S64,
        GprZr::ZR,
        x16.into(),
        x17.into(),
    );
    let back = i64::from(start) - i64::from(buf.cur_offset());
    b_cond(buf, Cc::Ne, PcOffset::new(back).expect("a short loop"));
}

#[cfg(test)]
mod tests {
    use crate::isa::aarch64::compiled_words;
    use crate::settings::Flags;

    /// `str xzr, [x16]`: one probe.
    const PROBE: u32 = 0xf900_021f;
    /// `b.ne` (any offset).
    fn is_b_ne(w: u32) -> bool {
        w & 0xff00_001f == 0x5400_0001
    }

    /// The words of a function with a `slot`-byte frame, probing every `2^log2` bytes.
    fn words(slot: u32, log2: Option<u8>) -> Vec<u32> {
        let text = format!(
            "function %f(i64) {{\n    ss0 = explicit_slot {slot}\nblock0(v0: i64):\n    v1 = stack_addr.i64 ss0\n    store.i64 v0, v1\n    return\n}}\n"
        );
        let flags = Flags {
            probestack_size_log2: log2,
            ..Flags::default()
        };
        compiled_words(&text, &flags, Default::default())
    }

    fn probes(words: &[u32]) -> usize {
        words.iter().filter(|&&w| w == PROBE).count()
    }

    #[test]
    fn large_frames_probe_each_page_small_ones_do_not() {
        // Off, or a frame under one page: nothing.
        assert_eq!(probes(&words(1 << 20, None)), 0);
        assert_eq!(probes(&words(4000, Some(12))), 0);
        // Three pages: three straight-line probes, no loop.
        let three = words(3 * 4096, Some(12));
        assert_eq!(probes(&three), 3);
        assert!(!three.iter().any(|&w| is_b_ne(w)));
        // More: one probe in a loop.
        let big = words(1 << 20, Some(12));
        assert_eq!(probes(&big), 1);
        assert!(big.iter().any(|&w| is_b_ne(w)));
    }
}
