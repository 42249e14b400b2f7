//! Settings every target shares: what to check, what to keep, how much to optimize, how the
//! frame is built.
//!
//! Contract. [`Flags`] is plain data passed to each compile (`TargetIsa::compile`); every
//! ISA reads all of it the same way. What differs between ISAs, the instruction-set
//! extensions the code may use, is not here: each ISA owns its typed feature set, fixed
//! when its `TargetIsa` is built (`isa::lookup(..)?.set("has_lse").finish()`). The
//! optimization-decision control (`Chaos`) is passed beside the flags, as it is mutable
//! state rather than a setting.
//!
//! Cost: reading a flag is a field access; nothing here runs per instruction.

pub use kestrel_opt::OptLevel;

use crate::machinst::CodegenError;

/// The probe interval's log2 clients that turn stack probes on by default use (4 KiB
/// pages).
pub const DEFAULT_PROBESTACK_SIZE_LOG2: u8 = 12;

/// The probe intervals' log2 every ISA supports (`2^4` to `2^23` bytes).
pub const PROBESTACK_SIZE_LOG2_RANGE: std::ops::RangeInclusive<u8> = 4..=23;

/// Compilation settings shared by every target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// Run the register-allocation checker on every compile.
    pub check_regalloc: bool,
    /// Keep the printed VCode (before and after allocation) in the result.
    pub keep_text: bool,
    /// Run the `MachBuffer` invariant validator on every compile, even in release builds;
    /// a violation is a `CodegenError::Buffer` (costs compile time: off by default).
    pub validate: bool,
    /// Report the lowering rules that fired in `CompiledCode::rules_fired` (indices into
    /// the ISA's `TargetIsa::lowering_rules`).
    pub coverage: bool,
    /// Give every function a frame-pointer frame, even a leaf that needs none, so stack
    /// walkers (profilers, debuggers) can follow the frame chain (CLIF
    /// `preserve_frame_pointers`).
    pub preserve_frame_pointers: bool,
    /// The caller has run the IR verifier on the function already (a test harness that
    /// verifies before interpreting, for instance): skip it, so each compile verifies once.
    /// A function that does not verify must never be compiled with this set.
    pub verified: bool,
    /// How much the mid-end optimizes before lowering (`none` by default: the function is
    /// lowered as given).
    pub opt_level: OptLevel,
    /// Inline stack probes every `2^n` bytes, `n` in [`PROBESTACK_SIZE_LOG2_RANGE`] (CLIF
    /// `enable_probestack`, `probestack_size_log2`; see `probestack.rs` of each ISA);
    /// `None`: no probes.
    pub probestack_size_log2: Option<u8>,
    /// Reserve the ISA's pinned register for `get_pinned_reg`/`set_pinned_reg` (CLIF
    /// `enable_pinned_reg`; x86-64 `r15`, AArch64 `x21`): the allocator never uses it and no
    /// function saves or restores it, so a value set in it outlives the function.
    pub enable_pinned_reg: bool,
}

impl Flags {
    /// The probe interval in bytes (`2^probestack_size_log2`), or an error naming the
    /// setting and `isa` (the target's display name) when it is out of range.
    pub fn probe_interval(&self, isa: &str) -> Result<Option<u32>, CodegenError> {
        match self.probestack_size_log2 {
            None => Ok(None),
            Some(n) if PROBESTACK_SIZE_LOG2_RANGE.contains(&n) => Ok(Some(1u32 << n)),
            Some(n) => Err(CodegenError::unsupported(format!(
                "probestack_size_log2={n}: {isa} probes every 2^{} to 2^{} bytes",
                PROBESTACK_SIZE_LOG2_RANGE.start(),
                PROBESTACK_SIZE_LOG2_RANGE.end()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_intervals_in_range_and_errors_outside() {
        let with = |n| Flags {
            probestack_size_log2: n,
            ..Flags::default()
        };
        assert_eq!(with(None).probe_interval("x86-64"), Ok(None));
        assert_eq!(with(Some(12)).probe_interval("x86-64"), Ok(Some(4096)));
        assert_eq!(with(Some(4)).probe_interval("x86-64"), Ok(Some(16)));
        let err = with(Some(24)).probe_interval("AArch64").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported: probestack_size_log2=24: AArch64 probes every 2^4 to 2^23 bytes"
        );
        assert!(with(Some(3)).probe_interval("x86-64").is_err());
    }
}
