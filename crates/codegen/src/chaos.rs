//! The chaos control: one deterministic source of "skip this optimization?" decisions.
//!
//! Contract. Every optional transformation in the code generator (a branch peephole in the
//! `MachBuffer`, sinking cold blocks in the block order, a merge or fold in instruction
//! selection) asks [`Chaos::should_skip`] before it acts, naming itself with a [`Decision`].
//! The register allocator (its own crate) draws its choices from a seed that
//! [`Chaos::derive_seed`] hands out once per function.
//! A transformation is *optional* exactly when skipping it leaves the output correct, only
//! slower or larger; fuzzing drives the decisions from input bytes to check that claim.
//!
//! - [`Chaos::disabled`] never skips and costs one branch on a `None` per question.
//! - [`Chaos::from_seed`] answers from a seeded pseudo-random stream (skips with probability
//!   1/2), [`Chaos::from_bytes`] from raw fuzzer bytes (one bit per question, then never skips
//!   once the bytes run out), [`Chaos::skip_all`] always skips (the naive baseline).
//! - The same constructor and the same sequence of questions give the same answers.
//! - When enabled, the control counts questions and skips per decision point so a fuzzing
//!   campaign can report which points it exercised ([`Chaos::stats`]).

use std::fmt;

/// A named decision point: an optional transformation that may be skipped.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum Decision {
    /// MachBuffer: delete a branch whose target is the instruction right after it.
    FallthroughRemoval,
    /// MachBuffer: invert a conditional branch over an unconditional one and delete the latter.
    BranchInversion,
    /// MachBuffer: make labels bound at an unconditional jump aliases of its target.
    JumpThreading,
    /// MachBuffer: delete an unconditional branch that directly follows another one.
    DeadBranchRemoval,
    /// MachBuffer: patch an in-range label use directly instead of through a veneer.
    DirectPatch,
    /// Block order: move cold blocks to the end of the layout.
    ColdBlockSinking,
    /// Selection: an `iconst` operand folded into an immediate (ALU, shift, multiply and
    /// compare operands; `imm32` and `cmp_cond` in `isa/x64/lower.rs`).
    ImmOperand,
    /// Selection: a single-use load performed by its ALU or compare user (`load_merge`).
    LoadSink,
    /// Selection: an `icmp` fused into its `brif`, `select`, `trapz` or `trapnz` user
    /// (`icmp_merge`).
    IcmpFusion,
    /// Address mode: a constant address term folded into the displacement (`addr_mem`).
    AddrConstFold,
    /// Address mode: an `iadd` split into base and index (`addr_mem`).
    AddrAddFold,
    /// Address mode: an `ishl` by 0 to 3, or an `imul` by 3, 5 or 9, folded into a scaled
    /// index (`addr_mem`, and `lea_plan` for sums).
    AddrShiftFold,
    /// Register allocation: perturb the allocator's heuristics from a derived seed
    /// ([`Chaos::derive_seed`]).
    RegallocPerturb,
    /// Selection: an `fcmp` fused into its `brif`, `select`, `trapz` or `trapnz` user
    /// (`fcmp_merge`).
    FcmpFusion,
    /// Selection: a `band` fused into its `brif`, `select`, `trapz` or `trapnz` user as a
    /// `test` (`band_merge`, x86-64).
    BandTestFusion,
    /// Block order: lay loops out contiguously with their exits after them, instead of the
    /// plain reverse postorder.
    LoopLayout,
    /// Block order: lay a loop with one back edge out with its exiting header last, so the
    /// latch falls through into it (see `blockorder/layout.rs`).
    LoopRotation,
    /// Block order: send the branches into a block that only jumps on, without arguments,
    /// straight to that jump's destination, leaving the block out.
    EmptyBlockBypass,
}

impl Decision {
    /// Every decision point, in declaration order.
    pub const ALL: [Decision; 18] = [
        Decision::FallthroughRemoval,
        Decision::BranchInversion,
        Decision::JumpThreading,
        Decision::DeadBranchRemoval,
        Decision::DirectPatch,
        Decision::ColdBlockSinking,
        Decision::ImmOperand,
        Decision::LoadSink,
        Decision::IcmpFusion,
        Decision::AddrConstFold,
        Decision::AddrAddFold,
        Decision::AddrShiftFold,
        Decision::RegallocPerturb,
        Decision::FcmpFusion,
        Decision::BandTestFusion,
        Decision::LoopLayout,
        Decision::LoopRotation,
        Decision::EmptyBlockBypass,
    ];

    /// A short stable name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Decision::FallthroughRemoval => "fallthrough-removal",
            Decision::BranchInversion => "branch-inversion",
            Decision::JumpThreading => "jump-threading",
            Decision::DeadBranchRemoval => "dead-branch-removal",
            Decision::DirectPatch => "direct-patch",
            Decision::ColdBlockSinking => "cold-block-sinking",
            Decision::ImmOperand => "imm-operand",
            Decision::LoadSink => "load-sink",
            Decision::IcmpFusion => "icmp-fusion",
            Decision::AddrConstFold => "addr-const-fold",
            Decision::AddrAddFold => "addr-add-fold",
            Decision::AddrShiftFold => "addr-shift-fold",
            Decision::RegallocPerturb => "regalloc-perturb",
            Decision::FcmpFusion => "fcmp-fusion",
            Decision::BandTestFusion => "band-test-fusion",
            Decision::LoopLayout => "loop-layout",
            Decision::LoopRotation => "loop-rotation",
            Decision::EmptyBlockBypass => "empty-block-bypass",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How often one decision point was asked and how often it was told to skip.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct DecisionStats {
    pub asked: u64,
    pub skipped: u64,
}

/// Where the answers come from.
#[derive(Clone, Debug)]
enum Source {
    /// xorshift64* state (never zero).
    Seeded(u64),
    /// Fuzzer bytes, read one bit per question.
    Bytes { bytes: Vec<u8>, bit: usize },
    /// Always skip.
    All,
}

#[derive(Clone, Debug)]
struct Enabled {
    source: Source,
    stats: [DecisionStats; Decision::ALL.len()],
}

/// The deterministic decision source threaded through every optional transformation.
#[derive(Clone, Debug, Default)]
pub struct Chaos {
    /// `None` when disabled: nothing is ever skipped and nothing is counted.
    inner: Option<Box<Enabled>>,
}

/// The name used by the rest of the pipeline.
pub type ChaosControl = Chaos;

impl Chaos {
    /// Never skip anything.
    pub fn disabled() -> Self {
        Chaos { inner: None }
    }

    /// Skip each optional transformation with probability 1/2, from a seeded stream.
    pub fn from_seed(seed: u64) -> Self {
        // splitmix64 of the seed gives a well-mixed, nonzero xorshift state.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Self::enabled(Source::Seeded(z | 1))
    }

    /// Answer from fuzzer bytes, one bit per question; once they run out, never skip.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        Self::enabled(Source::Bytes {
            bytes: bytes.to_vec(),
            bit: 0,
        })
    }

    /// Skip every optional transformation: the naive baseline.
    pub fn skip_all() -> Self {
        Self::enabled(Source::All)
    }

    fn enabled(source: Source) -> Self {
        Chaos {
            inner: Some(Box::new(Enabled {
                source,
                stats: Default::default(),
            })),
        }
    }

    /// Whether the control can ever skip (false for [`Chaos::disabled`]).
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Should the optional transformation `what` be skipped this time?
    #[inline]
    pub fn should_skip(&mut self, what: Decision) -> bool {
        match &mut self.inner {
            None => false,
            Some(enabled) => enabled.decide(what),
        }
    }

    /// A seed for the register allocator's perturbation (`kestrel_regalloc::Options::perturb`),
    /// or `None` to keep its heuristics. Asked as [`Decision::RegallocPerturb`]: a "skip"
    /// answer means "perturb"; the seed then comes from the same source (the seeded stream,
    /// up to 64 more fuzzer bits, or a fixed value for [`Chaos::skip_all`]).
    pub fn derive_seed(&mut self) -> Option<u64> {
        let enabled = self.inner.as_mut()?;
        if !enabled.decide(Decision::RegallocPerturb) {
            return None;
        }
        Some(enabled.next_u64())
    }

    /// Questions and skips per decision point (all zero when disabled).
    pub fn stats(&self) -> impl Iterator<Item = (Decision, DecisionStats)> + '_ {
        Decision::ALL.iter().map(move |&d| {
            let s = self
                .inner
                .as_ref()
                .map_or_else(DecisionStats::default, |e| e.stats[d as usize]);
            (d, s)
        })
    }
}

impl Enabled {
    /// 64 bits from the source (for a derived seed); does not count as a question.
    fn next_u64(&mut self) -> u64 {
        match &mut self.source {
            Source::All => 0x5EED_0FC4_A05E_ED00,
            Source::Seeded(state) => xorshift(state),
            Source::Bytes { bytes, bit } => {
                // The remaining bits, up to 64, zero-padded; the stream then moves past them.
                let mut v = 0u64;
                for k in 0..64 {
                    let Some(&byte) = bytes.get(*bit / 8) else {
                        break;
                    };
                    v |= u64::from((byte >> (*bit % 8)) & 1) << k;
                    *bit += 1;
                }
                v
            }
        }
    }

    fn decide(&mut self, what: Decision) -> bool {
        let skip = match &mut self.source {
            Source::All => true,
            Source::Seeded(state) => xorshift(state) >> 63 == 1,
            Source::Bytes { bytes, bit } => match bytes.get(*bit / 8) {
                Some(&byte) => {
                    let b = (byte >> (*bit % 8)) & 1 == 1;
                    *bit += 1;
                    b
                }
                None => false,
            },
        };
        let s = &mut self.stats[what as usize];
        s.asked += 1;
        s.skipped += u64::from(skip);
        skip
    }
}

/// One xorshift64* step: advances `state` (never zero) and returns the scrambled output.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_never_skips_and_counts_nothing() {
        let mut c = Chaos::disabled();
        assert!(!(0..100).any(|_| c.should_skip(Decision::BranchInversion)));
        assert!(c.stats().all(|(_, s)| s == DecisionStats::default()));
    }

    #[test]
    fn seeded_is_deterministic_and_mixed() {
        let run = |seed| {
            let mut c = Chaos::from_seed(seed);
            (0..64)
                .map(|_| c.should_skip(Decision::JumpThreading))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let skips = run(7).iter().filter(|&&b| b).count();
        assert!(skips > 8 && skips < 56, "{skips}");
    }

    #[test]
    fn bytes_are_read_bit_by_bit_then_never_skip() {
        let mut c = Chaos::from_bytes(&[0b0000_0101]);
        let got: Vec<bool> = (0..10)
            .map(|_| c.should_skip(Decision::DirectPatch))
            .collect();
        assert_eq!(&got[..3], &[true, false, true]);
        assert!(got[8..].iter().all(|&b| !b));
        let (_, s) = c
            .stats()
            .find(|(d, _)| *d == Decision::DirectPatch)
            .unwrap();
        assert_eq!(
            s,
            DecisionStats {
                asked: 10,
                skipped: 2
            }
        );
    }

    #[test]
    fn derived_seeds_follow_the_source() {
        assert_eq!(Chaos::disabled().derive_seed(), None);
        assert!(Chaos::skip_all().derive_seed().is_some());
        let seeds = |seed| {
            let mut c = Chaos::from_seed(seed);
            (0..16).map(|_| c.derive_seed()).collect::<Vec<_>>()
        };
        assert_eq!(seeds(3), seeds(3));
        assert!(seeds(3).iter().any(Option::is_some) && seeds(3).iter().any(Option::is_none));
        // One bit says "perturb", the next 64 are the seed, then the bytes are used up.
        let mut c = Chaos::from_bytes(&[0b11, 0, 0, 0, 0, 0, 0, 0, 0x01]);
        assert_eq!(c.derive_seed(), Some(1 | 1 << 63));
        assert_eq!(c.derive_seed(), None);
        let (_, s) = c
            .stats()
            .find(|(d, _)| *d == Decision::RegallocPerturb)
            .unwrap();
        assert_eq!((s.asked, s.skipped), (2, 1));
    }

    #[test]
    fn skip_all_skips() {
        let mut c = Chaos::skip_all();
        assert!(Decision::ALL.iter().all(|&d| c.should_skip(d)));
    }
}
