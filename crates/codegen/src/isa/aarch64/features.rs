//! Architecture extensions beyond Armv8.0 that the AArch64 lowerings may use.
//!
//! Contract. Selection (`lower.rules`) consults the target's [`CpuFeatures`]
//! (fixed when its `TargetIsa` is built) through extractors and uses an extension only when the target has it;
//! otherwise it emits the Armv8.0 sequence computing the same result:
//!
//! - `lse` (Armv8.1 Large System Extensions): `atomic_rmw` of 8 to 64 bits becomes one
//!   acquire-release instruction (`ldaddal`, `ldclral`, `ldsetal`, `ldeoral`, `swpal`,
//!   `ld{s,u}{min,max}al`; `sub` negates the operand first, `and` inverts it) and
//!   `atomic_cas` becomes `casal`; `nand` and every `i128` access keep the exclusive loops.
//!
//! The default is the base ISA (nothing assumed: the code runs on every AArch64 CPU). A test
//! file's `target aarch64 has_lse` turns the extension on through
//! the flag table ([`IsaFeatures::apply_flag`]); flags the backend does not use are
//! reported and change nothing.

use crate::isa::features::{FeatureFlag, IsaFeatures};

/// Optional architecture extensions the AArch64 backend may emit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuFeatures {
    /// Armv8.1 LSE atomics.
    pub lse: bool,
}

impl IsaFeatures for CpuFeatures {
    const FLAGS: &'static [FeatureFlag<Self>] = &[FeatureFlag {
        name: "has_lse",
        aliases: &[],
        field: |f| &mut f.lse,
    }];

    /// The extensions of the CPU this process runs on (none on another ISA).
    fn host() -> Self {
        #[cfg(target_arch = "aarch64")]
        {
            CpuFeatures {
                lse: std::arch::is_aarch64_feature_detected!("lse"),
            }
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            CpuFeatures::none()
        }
    }

    /// Armv8.0 only.
    fn none() -> Self {
        CpuFeatures { lse: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::aarch64::compiled_words;
    use crate::settings::Flags;

    #[test]
    fn target_flags_select_features() {
        let mut f = CpuFeatures::default();
        assert!(!f.lse, "the base ISA by default");
        assert!(f.apply_flag("has_lse"));
        assert!(f.lse);
        assert!(f.apply_flag("has_lse=false"));
        assert!(!f.lse);
        assert!(!f.apply_flag("has_pauth"), "unused flags are ignored");
    }

    /// The machine words of `text`'s only function compiled for `features`.
    fn words(text: &str, features: CpuFeatures) -> Vec<u32> {
        compiled_words(text, &Flags::default(), features)
    }

    /// Whether `w` is an LSE read-modify-write (`ld<op>`/`swp`) or a `cas`.
    fn is_lse(w: u32) -> bool {
        let rmw = w & 0x3f20_0c00 == 0x3820_0000;
        let cas = w & 0x3fa0_7c00 == 0x08a0_7c00;
        rmw || cas
    }

    /// Whether `w` is a load or store exclusive (`ldaxr`, `stlxr`, …).
    fn is_exclusive(w: u32) -> bool {
        w & 0x3f80_0000 == 0x0800_0000
    }

    #[test]
    fn lse_replaces_the_loops_except_nand() {
        for (ty, op) in [
            ("i8", "add"),
            ("i16", "sub"),
            ("i32", "and"),
            ("i64", "or"),
            ("i8", "xor"),
            ("i16", "xchg"),
            ("i32", "smin"),
            ("i64", "smax"),
            ("i8", "umin"),
            ("i16", "umax"),
        ] {
            let text = format!(
                "function %f(i64, {ty}) -> {ty} {{\nblock0(v0: i64, v1: {ty}):\n    v2 = atomic_rmw.{ty} {op} v0, v1\n    return v2\n}}\n"
            );
            let base = words(&text, CpuFeatures::none());
            assert!(base.iter().any(|&w| is_exclusive(w)), "{ty} {op}");
            assert!(!base.iter().any(|&w| is_lse(w)), "{ty} {op}");
            let lse = words(&text, CpuFeatures::all());
            assert!(lse.iter().any(|&w| is_lse(w)), "{ty} {op}");
            assert!(!lse.iter().any(|&w| is_exclusive(w)), "{ty} {op}");
        }
        let cas = "function %f(i64, i32, i32) -> i32 {\nblock0(v0: i64, v1: i32, v2: i32):\n    v3 = atomic_cas.i32 v0, v1, v2\n    return v3\n}\n";
        assert!(words(cas, CpuFeatures::all()).iter().any(|&w| is_lse(w)));
        assert!(!words(cas, CpuFeatures::none()).iter().any(|&w| is_lse(w)));
        // `nand` has no LSE form: the loop stays.
        let nand = "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = atomic_rmw.i64 nand v0, v1\n    return v2\n}\n";
        let words = words(nand, CpuFeatures::all());
        assert!(words.iter().any(|&w| is_exclusive(w)));
        assert!(!words.iter().any(|&w| is_lse(w)));
    }
}
