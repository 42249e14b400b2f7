//! Working memory kept from one function to the next.
//!
//! Passes that compile many functions keep their tables between functions, so only capacity
//! carries over. Emptying a hash map costs its capacity, not its length; a table grown by
//! one huge function would make every later, small function pay that size. The helpers
//! here keep the cost of emptying linear in what the last function used.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// Empty `map` in time linear in its length: a table much larger than its contents (left by
/// an earlier, larger function) is replaced by one sized for them.
pub fn empty_map<K: Eq + Hash, V, S: BuildHasher + Default>(map: &mut HashMap<K, V, S>) {
    let used = map.len();
    if map.capacity() > 4 * used.max(256) {
        *map = HashMap::default();
        map.reserve(used);
    } else {
        map.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_left_by_a_large_function_shrinks_to_what_the_last_one_used() {
        let mut map: HashMap<u32, u32> = (0..100_000).map(|k| (k, k)).collect();
        empty_map(&mut map);
        // The first emptying only learns that the table was full.
        assert!(map.is_empty());
        for k in 0..10 {
            map.insert(k, k);
        }
        empty_map(&mut map);
        assert!(map.is_empty());
        assert!(map.capacity() < 4 * 256, "capacity {}", map.capacity());
    }

    #[test]
    fn a_table_in_steady_use_keeps_its_memory() {
        let mut map: HashMap<u32, u32> = (0..1_000).map(|k| (k, k)).collect();
        let capacity = map.capacity();
        empty_map(&mut map);
        assert!(map.is_empty());
        assert_eq!(map.capacity(), capacity);
    }
}
