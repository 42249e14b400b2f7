//! Deterministic perturbation of the scan's heuristics ([`crate::Options::perturb`]).
//!
//! Contract: each heuristic choice in [`crate::scan`] that has an equally correct
//! alternative (follow the hint or not, which free register, which legal split gap, spill
//! or take a register when both are legal, reuse a spill slot or not) asks a [`Perturb`].
//! Without a seed every answer is "the usual choice" and costs one branch on a `None`, so
//! the allocation is exactly the unperturbed one. With a seed the answers come from a
//! splitmix64 stream: the same function, machine and seed give the same allocation.

/// The answer source: `None` keeps every heuristic as it is.
pub(crate) struct Perturb(Option<u64>);

impl Perturb {
    pub(crate) fn new(seed: Option<u64>) -> Self {
        Perturb(seed)
    }

    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Take the alternative this time? (With probability `1/n` when perturbing.)
    #[inline]
    pub(crate) fn one_in(&mut self, n: u64) -> bool {
        match &mut self.0 {
            None => false,
            Some(state) => Self::next(state) % n == 0,
        }
    }

    /// A uniform index below `n` when perturbing (and `n > 0`), else `None`.
    #[inline]
    pub(crate) fn pick(&mut self, n: usize) -> Option<usize> {
        match &mut self.0 {
            Some(state) if n > 0 => Some((Self::next(state) % n as u64) as usize),
            _ => None,
        }
    }
}
