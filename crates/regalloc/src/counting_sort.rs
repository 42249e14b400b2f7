//! A stable counting sort, for orders whose keys are small integers (positions, program
//! points, groups).
//!
//! Cost: O(items + keys), into buffers the caller keeps (the counts and the result).

use crate::reuse::{refill, running_sum};

/// Refills `sorted` with `items` sorted by `key`, stably (items with equal keys keep their
/// order); every key is below `keys`. `next` is working memory.
pub(crate) fn counting_sort<T: Copy>(
    items: &[T],
    keys: usize,
    key: impl Fn(&T) -> usize,
    next: &mut Vec<u32>,
    sorted: &mut Vec<T>,
) {
    sorted.clear();
    let Some(&any) = items.first() else {
        return;
    };
    refill(next, keys + 1, 0);
    for item in items {
        next[key(item) + 1] += 1;
    }
    running_sum(&mut next[..=keys]);
    sorted.resize(items.len(), any);
    for item in items {
        let at = &mut next[key(item)];
        sorted[*at as usize] = *item;
        *at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::counting_sort;

    #[test]
    fn sorts_stably_by_key() {
        let items = [(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        let (mut next, mut sorted) = (Vec::new(), vec![(9, 'z')]);
        counting_sort(&items, 4, |&(k, _)| k, &mut next, &mut sorted);
        assert_eq!(sorted, [(0, 'd'), (1, 'b'), (1, 'e'), (3, 'a'), (3, 'c')]);
        counting_sort::<(usize, char)>(&[], 4, |&(k, _)| k, &mut next, &mut sorted);
        assert!(sorted.is_empty());
    }
}
