//! Buffers kept between functions: the phases refill vectors they are handed instead of
//! allocating new ones, so a [`crate::Context`] used for many functions stops allocating
//! once its buffers have grown to the largest function's size.
//!
//! Cost: `refill` is O(n) (the same as allocating a zeroed vector of that length);
//! `running_sum` is O(n).

/// Empties `v` and fills it with `n` copies of `x`, keeping its capacity.
#[inline]
pub(crate) fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// Replaces each count by the sum of it and all counts before it (an inclusive prefix
/// sum), as the start tables of the counting sorts build them. The sum is carried in a
/// register: `c[i + 1] += c[i]` would reload each element just stored, a dependency chain
/// through memory that costs several cycles per element.
#[inline]
pub(crate) fn running_sum(counts: &mut [u32]) {
    let mut sum = 0u32;
    for c in counts {
        sum += *c;
        *c = sum;
    }
}
