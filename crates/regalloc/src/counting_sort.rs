//! A stable counting sort, for orders whose keys are small integers (positions, program
//! points, groups).
//!
//! Cost: O(items + keys), two allocations (the counts and the result).

/// `items` sorted by `key`, stably (items with equal keys keep their order); every key is
/// below `keys`.
pub(crate) fn counting_sort<T: Copy>(
    items: &[T],
    keys: usize,
    key: impl Fn(&T) -> usize,
) -> Vec<T> {
    let Some(&any) = items.first() else {
        return Vec::new();
    };
    let mut next = vec![0u32; keys + 1];
    for item in items {
        next[key(item) + 1] += 1;
    }
    for k in 0..keys {
        next[k + 1] += next[k];
    }
    let mut sorted = vec![any; items.len()];
    for item in items {
        let at = &mut next[key(item)];
        sorted[*at as usize] = *item;
        *at += 1;
    }
    sorted
}

#[cfg(test)]
mod tests {
    use super::counting_sort;

    #[test]
    fn sorts_stably_by_key() {
        let items = [(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        let sorted = counting_sort(&items, 4, |&(k, _)| k);
        assert_eq!(sorted, [(0, 'd'), (1, 'b'), (1, 'e'), (3, 'a'), (3, 'c')]);
        assert!(counting_sort::<(usize, char)>(&[], 4, |&(k, _)| k).is_empty());
    }
}
