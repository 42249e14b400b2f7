//! Buffers kept between functions: the phases refill vectors they are handed instead of
//! allocating new ones, so a [`crate::Context`] used for many functions stops allocating
//! once its buffers have grown to the largest function's size.
//!
//! Cost: `refill` is O(n) (the same as allocating a zeroed vector of that length).

/// Empties `v` and fills it with `n` copies of `x`, keeping its capacity.
#[inline]
pub(crate) fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}
