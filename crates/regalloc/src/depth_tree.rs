//! A segment tree over the blocks' loop depths answering "the last block of least loop
//! depth in `[lo, hi]`": the scan's choice of a split position between two limits.
//!
//! Cost: O(blocks) to build, O(log blocks) per query. Without it each split would scan the
//! blocks between its limits, O(splits × blocks) in a large function.

/// Per node, the best block of its span as one key: loop depth in the high half and the
/// complement of the block number in the low half, so the least key is the least depth
/// and, among equal depths, the last block.
#[derive(Default)]
pub(crate) struct DepthTree {
    /// Leaves at `size..size + n`; node k is the least of nodes 2k and 2k + 1. Padding
    /// leaves hold `u64::MAX`, which never wins.
    nodes: Vec<u64>,
    size: usize,
}

fn key(depth: u32, block: usize) -> u64 {
    (u64::from(depth) << 32) | u64::from(u32::MAX - block as u32)
}

impl DepthTree {
    /// Rebuilds the tree over `depths` (one per block), keeping the node buffer.
    pub fn rebuild(&mut self, depths: &[u32]) {
        let size = depths.len().next_power_of_two().max(1);
        crate::reuse::refill(&mut self.nodes, 2 * size, u64::MAX);
        for (b, &d) in depths.iter().enumerate() {
            self.nodes[size + b] = key(d, b);
        }
        for k in (1..size).rev() {
            self.nodes[k] = self.nodes[2 * k].min(self.nodes[2 * k + 1]);
        }
        self.size = size;
    }

    /// Whether the tree covers at least `blocks` blocks (it was built for this function).
    pub fn covers(&self, blocks: usize) -> bool {
        self.size >= blocks && !self.nodes.is_empty()
    }

    /// The last block of least loop depth in `[lo, hi]` (requires `lo <= hi` within the
    /// blocks the tree was built over).
    pub fn shallowest_last(&self, lo: usize, hi: usize) -> usize {
        debug_assert!(lo <= hi && hi < self.size);
        let (mut l, mut r) = (lo + self.size, hi + self.size + 1);
        let mut best = u64::MAX;
        // Standard bottom-up walk over the half-open leaf range `[l, r)`.
        while l < r {
            if l & 1 == 1 {
                best = best.min(self.nodes[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.min(self.nodes[r]);
            }
            l /= 2;
            r /= 2;
        }
        (u32::MAX - best as u32) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree agrees with a scan of the range on every range of a few depth patterns.
    #[test]
    fn agrees_with_a_linear_scan() {
        let patterns: [&[u32]; 4] = [
            &[0],
            &[2, 1, 1, 3, 0, 2, 0, 1],
            &[1, 2, 3, 2, 1, 2, 3, 4, 3, 2, 1],
            &[5, 5, 5, 4, 4, 5],
        ];
        for depths in patterns {
            let mut tree = DepthTree::default();
            tree.rebuild(depths);
            assert!(tree.covers(depths.len()));
            for lo in 0..depths.len() {
                for hi in lo..depths.len() {
                    let least = *depths[lo..=hi].iter().min().unwrap();
                    let expected = (lo..=hi).rev().find(|&b| depths[b] == least).unwrap();
                    assert_eq!(
                        tree.shallowest_last(lo, hi),
                        expected,
                        "{depths:?} [{lo}, {hi}]"
                    );
                }
            }
        }
    }
}
