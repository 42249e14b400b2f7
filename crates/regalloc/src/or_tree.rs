//! A segment tree of bit masks answering "the first index in `[lo, hi)` whose mask has one
//! of these bits": the scan's search for the next clobber point that adds a register.
//!
//! Cost: O(n) to build, O(log n) per search that finds an index, O(log n) per search that
//! finds none (a node whose union lacks the bits is never entered).

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
    pub fn first_meeting(&self, lo: usize, hi: usize, want: u64) -> Option<usize> {
        if lo >= hi || want == 0 {
            return None;
        }
        self.search(1, 0, self.size, lo, hi, want)
    }

    /// Depth-first over node `k` covering `[from, to)`: left child first, so the first hit
    /// is the lowest index; a node outside `[lo, hi)` or without a wanted bit is skipped.
    fn search(
        &self,
        k: usize,
        from: usize,
        to: usize,
        lo: usize,
        hi: usize,
        want: u64,
    ) -> Option<usize> {
        if to <= lo || hi <= from || self.nodes[k] & want == 0 {
            return None;
        }
        if to - from == 1 {
            return Some(from);
        }
        let mid = (from + to) / 2;
        self.search(2 * k, from, mid, lo, hi, want)
            .or_else(|| self.search(2 * k + 1, mid, to, lo, hi, want))
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
    }
}
