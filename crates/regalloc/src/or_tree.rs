//! A segment tree of bit masks answering "the first index in `[lo, hi)` whose mask has one
//! of these bits": the scan's search for the next clobber point that adds a register.
//!
//! Cost: O(n) to build; a search O(log(d + 1) + log n) node tests, `d` the distance from the
//! range's start to the index found (or to the range's end when none is).

/// Masks over indices `0..n`, with the union of every aligned power-of-two block.
#[derive(Default)]
pub(crate) struct OrTree {
    /// Leaves at `size..size + n` (`size` a power of two ≥ n); node k is the union of
    /// nodes 2k and 2k + 1.
    nodes: Vec<u64>,
    size: usize,
}

impl OrTree {
    #[cfg(test)]
    pub fn new(masks: &[u64]) -> OrTree {
        let mut tree = OrTree::default();
        tree.rebuild(masks);
        tree
    }

    /// Rebuilds the tree over `masks`, keeping the node buffer.
    pub fn rebuild(&mut self, masks: &[u64]) {
        let size = masks.len().next_power_of_two().max(1);
        let nodes = &mut self.nodes;
        crate::reuse::refill(nodes, 2 * size, 0);
        nodes[size..size + masks.len()].copy_from_slice(masks);
        for k in (1..size).rev() {
            nodes[k] = nodes[2 * k] | nodes[2 * k + 1];
        }
        self.size = size;
    }

    /// The first index in `[lo, hi)` whose mask meets `want`.
    ///
    /// Bottom-up from leaf `lo`: each step tests the largest node that starts where the
    /// tested part ends, so the walk covers `[lo, answer]` with O(log(answer − lo)) nodes,
    /// then descends O(log n) levels inside the node that holds the answer. A short range
    /// near its answer, the scan's common case, costs a few node tests.
    pub fn first_meeting(&self, lo: usize, hi: usize, want: u64) -> Option<usize> {
        if lo >= hi || want == 0 {
            return None;
        }
        let nodes = &self.nodes;
        // Node `k` covers `[from, from + len)`; every index in `[lo, from)` lacks `want`.
        let (mut k, mut from, mut len) = (self.size + lo, lo, 1);
        while from < hi {
            if nodes[k] & want != 0 {
                // The leftmost leaf under `k` with a wanted bit; at or past `hi`, none
                // of `[from, hi)` has one either.
                while k < self.size {
                    k *= 2;
                    if nodes[k] & want == 0 {
                        k += 1;
                    }
                }
                let index = k - self.size;
                return (index < hi).then_some(index);
            }
            from += len;
            // The next node starting at `from`: climb while `k` is a right child (its
            // parent ends where it does), then take the right sibling.
            while k & 1 == 1 {
                k /= 2;
                len *= 2;
            }
            if k == 0 {
                return None; // `k` was the root: the tree ends here
            }
            k += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::OrTree;

    #[test]
    fn finds_the_first_index_with_a_wanted_bit_in_range() {
        let masks = [0b001, 0b010, 0b001, 0b100, 0b010, 0b000, 0b100];
        let tree = OrTree::new(&masks);
        for lo in 0..masks.len() {
            for hi in lo..=masks.len() {
                for want in 0..8u64 {
                    let expected = (lo..hi).find(|&i| masks[i] & want != 0);
                    assert_eq!(
                        tree.first_meeting(lo, hi, want),
                        expected,
                        "{lo}..{hi} {want:b}"
                    );
                }
            }
        }
        assert_eq!(OrTree::new(&[]).first_meeting(0, 0, 1), None);
        assert_eq!(OrTree::new(&[0b10]).first_meeting(0, 1, 0b10), Some(0));
    }

    #[test]
    fn agrees_with_a_linear_search_over_many_levels() {
        // Sparse pseudo-random masks over 300 indices (a tree of 9 levels, 212 padding).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let masks: Vec<u64> = (0..300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % 5 == 0 {
                    1 << (x >> 60)
                } else {
                    0
                }
            })
            .collect();
        let tree = OrTree::new(&masks);
        for lo in (0..=masks.len()).step_by(7) {
            for hi in (lo..=masks.len()).step_by(5) {
                for bit in 0..16 {
                    let want = 1u64 << bit | 1 << ((bit * 7) % 16);
                    let expected = (lo..hi).find(|&i| masks[i] & want != 0);
                    assert_eq!(tree.first_meeting(lo, hi, want), expected, "{lo}..{hi}");
                }
            }
        }
    }
}
