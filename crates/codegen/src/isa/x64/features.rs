//! CPU features beyond baseline x86-64 that the backend's lowerings use.
//!
//! Contract. Selection (`lower`) consults the target's [`CpuFeatures`] (fixed when its `TargetIsa` is built)
//! and uses an extension only when the target has it; otherwise it emits a baseline
//! fallback computing the same result:
//!
//! - `clz`/`cls` use LZCNT, else BSR with the zero source (ZF set, destination undefined)
//!   replaced by a `cmov` so the result is the width;
//! - `ctz` uses TZCNT (BMI1), else BSF with the same zero handling;
//! - `ishl`/`ushr`/`sshr` of `i32`/`i64` by a register use BMI2's SHLX/SHRX/SARX (count in
//!   any register), else SHL/SHR/SAR with the count in `cl`;
//! - `popcnt` uses POPCNT, else the SWAR bit-count sequence (an `i128` sums its halves);
//! - vectors (`lower_vec.rules`): `shuffle` and `swizzle` need SSSE3's PSHUFB (refused
//!   without it, naming SSSE3); `iabs` uses SSSE3's PABS*, else `(a ^ s) - s`; `imul.i32x4`
//!   uses SSE4.1's PMULLD, else two PMULUDQ; the `min`/`max` forms SSE2 lacks use SSE4.1's
//!   PMINSB…, else a compare and a bit select; `insertlane`/`extractlane` use SSE4.1's
//!   PINSR*/PEXTR*, else PINSRW/PEXTRW, merges, shuffles or a bit select;
//! - `ceil`/`floor`/`trunc`/`nearest` use SSE4.1's ROUNDSS/ROUNDSD, else call the libcalls
//!   `CeilF32`/`CeilF64`, `FloorF32`/…, `TruncF32`/…, `NearestF32`/`NearestF64`, which the
//!   embedder provides (the native test runner registers them);
//! - vector `fma` uses FMA's VFMADD213PS/PD, else calls `FmaF32`/`FmaF64` once per lane
//!   (scalar `fma` always calls them); vector `ceil`/`floor`/`trunc`/`nearest` need SSE4.1's
//!   ROUNDPS/ROUNDPD (refused without it, naming SSE4.1).
//!
//! The rules consult features through extractors (`lacks_sse41`, `wide_with_bmi2`,
//! `has_cmpxchg16b`). 128-bit atomics need CMPXCHG16B and have no fallback: their rules
//! match only with it, and without it a lower-priority rule fails with a typed error naming
//! the instruction and the feature — an error, never wrong code.
//!
//! Defaults come from the host (`is_x86_feature_detected!`); a test file's
//! `target x86_64 has_lzcnt=false …` flags force features off through the flag table
//! ([`IsaFeatures::apply_flag`]; code that runs here can only use what the host has, so a
//! runner intersects with the host's). Flags the backend does not use are reported and
//! change nothing.

use crate::isa::features::{FeatureFlag, IsaFeatures};

/// Optional instruction-set extensions the backend may emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFeatures {
    pub lzcnt: bool,
    pub bmi1: bool,
    pub bmi2: bool,
    pub popcnt: bool,
    pub ssse3: bool,
    pub sse41: bool,
    pub fma: bool,
    pub cmpxchg16b: bool,
}

impl Default for CpuFeatures {
    /// The host's features.
    fn default() -> Self {
        CpuFeatures::host()
    }
}

impl IsaFeatures for CpuFeatures {
    const FLAGS: &'static [FeatureFlag<Self>] = &[
        FeatureFlag {
            name: "has_lzcnt",
            aliases: &[],
            field: |f| &mut f.lzcnt,
        },
        FeatureFlag {
            name: "has_bmi1",
            aliases: &[],
            field: |f| &mut f.bmi1,
        },
        FeatureFlag {
            name: "has_bmi2",
            aliases: &[],
            field: |f| &mut f.bmi2,
        },
        FeatureFlag {
            name: "has_popcnt",
            aliases: &[],
            field: |f| &mut f.popcnt,
        },
        FeatureFlag {
            name: "has_ssse3",
            aliases: &["ssse3"],
            field: |f| &mut f.ssse3,
        },
        FeatureFlag {
            name: "has_sse41",
            aliases: &["sse41"],
            field: |f| &mut f.sse41,
        },
        FeatureFlag {
            name: "has_fma",
            aliases: &[],
            field: |f| &mut f.fma,
        },
        FeatureFlag {
            name: "has_cmpxchg16b",
            aliases: &[],
            field: |f| &mut f.cmpxchg16b,
        },
    ];

    /// The features of the CPU this process runs on (detected once per process: the
    /// default target asks for every instruction it lowers).
    fn host() -> Self {
        static HOST: std::sync::OnceLock<CpuFeatures> = std::sync::OnceLock::new();
        *HOST.get_or_init(detect)
    }

    /// Baseline x86-64 only.
    fn none() -> Self {
        CpuFeatures {
            lzcnt: false,
            bmi1: false,
            bmi2: false,
            popcnt: false,
            ssse3: false,
            sse41: false,
            fma: false,
            cmpxchg16b: false,
        }
    }
}

fn detect() -> CpuFeatures {
    #[cfg(target_arch = "x86_64")]
    {
        CpuFeatures {
            lzcnt: std::is_x86_feature_detected!("lzcnt"),
            bmi1: std::is_x86_feature_detected!("bmi1"),
            bmi2: std::is_x86_feature_detected!("bmi2"),
            popcnt: std::is_x86_feature_detected!("popcnt"),
            ssse3: std::is_x86_feature_detected!("ssse3"),
            sse41: std::is_x86_feature_detected!("sse4.1"),
            fma: std::is_x86_feature_detected!("fma"),
            cmpxchg16b: std::is_x86_feature_detected!("cmpxchg16b"),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        CpuFeatures::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::x64::X64Isa;
    use crate::isa::TargetIsa;
    use crate::machinst::{CodegenError, CompiledCode};
    use crate::settings::Flags;

    #[test]
    fn target_flags_force_features() {
        let mut f = CpuFeatures::host();
        assert!(f.apply_flag("has_lzcnt=false"));
        assert!(!f.lzcnt);
        assert!(f.apply_flag("has_popcnt"));
        assert!(f.popcnt);
        assert!(!f.apply_flag("has_avx"), "unused flags are ignored");
    }

    /// Compile `f` (code is only generated, never run) for a CPU with `features`.
    fn compile(
        f: &kestrel_ir::Function,
        features: &CpuFeatures,
    ) -> Result<CompiledCode, CodegenError> {
        X64Isa {
            features: *features,
        }
        .compile_function(f, &Flags::default())
    }

    #[test]
    fn missing_features_are_errors_or_fallbacks() {
        let parse = |text: &str| kestrel_ir::parse_functions(text, "f.clif").unwrap();
        let none = CpuFeatures::none();
        // Bit counts and rounding have baseline fallbacks: accepted without the feature.
        let counts = parse(
            "function %f(i32, f64) -> i32, f64 {\nblock0(v0: i32, v1: f64):\n    v2 = clz v0\n    v3 = ctz v2\n    v4 = popcnt v3\n    v5 = cls v4\n    v6 = nearest v1\n    return v5, v6\n}\n",
        );
        assert!(compile(&counts[0], &none).is_ok());
        // A 128-bit atomic has none: a typed error naming CMPXCHG16B.
        let atomic = parse(
            "function %g(i64) -> i128 {\nblock0(v0: i64):\n    v1 = atomic_load.i128 v0\n    return v1\n}\n",
        );
        let err = compile(&atomic[0], &none).unwrap_err();
        assert!(err.to_string().contains("CMPXCHG16B"), "{err}");
        let mut with = none;
        with.cmpxchg16b = true;
        assert!(compile(&atomic[0], &with).is_ok());
        // So do the other three, each named in its error.
        for (inst, op) in [
            ("atomic_store v1, v0", "atomic_store"),
            ("v2 = atomic_rmw.i128 xchg v0, v1", "atomic_rmw"),
            ("v2 = atomic_cas.i128 v0, v1, v1", "atomic_cas"),
        ] {
            let f = parse(&format!(
                "function %h(i64, i128) {{\nblock0(v0: i64, v1: i128):\n    {inst}\n    return\n}}\n"
            ));
            let err = compile(&f[0], &none).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("CMPXCHG16B"), "{text}");
            assert!(text.contains(&format!("`{op}` of type i128")), "{text}");
            assert!(compile(&f[0], &with).is_ok(), "{inst}");
        }
    }
}
