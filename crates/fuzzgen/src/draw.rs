//! Infallible draws from [`Unstructured`]: the generator never stops for lack of bytes.
//!
//! When the bytes run out, `arbitrary` returns the low end of every range; [`Draw::chance`] is
//! arranged so that exhausted input then answers "no", which turns rare events (unguarded
//! divisions, traps, shapes) off instead of on.

use arbitrary::Unstructured;

pub(crate) trait Draw {
    /// Uniform-ish in `0..n`; 0 when `n <= 1` or the bytes are exhausted.
    fn below(&mut self, n: usize) -> usize;
    /// In `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize;
    /// True with probability about `percent`/100 (false once the bytes are exhausted).
    fn chance(&mut self, percent: u32) -> bool;
    fn bits64(&mut self) -> u64;
    /// Pick an element of a non-empty slice.
    fn pick<T: Copy>(&mut self, items: &[T]) -> T;
}

impl Draw for Unstructured<'_> {
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.int_in_range(0..=n - 1).unwrap_or(0)
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, percent: u32) -> bool {
        let b: u8 = self.arbitrary().unwrap_or(0);
        ((255 - b as u32) * 100) >> 8 < percent
    }

    fn bits64(&mut self) -> u64 {
        self.arbitrary().unwrap_or(0)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}
