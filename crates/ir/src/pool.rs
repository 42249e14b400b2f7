//! The shared pool of variable-length value lists.
//!
//! Call arguments, return values, branch arguments, block parameters and instruction results
//! all live in one `Vec<Value>` owned by the function; an instruction holds a [`ValueList`]
//! (start, length) handle into it, so no instruction owns a heap allocation.
//!
//! Invariants: a list's slots `[start, start+len)` are in bounds and belong to that list alone.
//! Growing a list that is not at the end of the pool moves it to the end (amortised O(1)
//! appends); the abandoned slots become garbage, which [`ValueListPool::compact_into`] drops.

use crate::entity::Value;

/// A handle to a list in the pool. The empty list needs no pool storage.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct ValueList {
    start: u32,
    len: u32,
}

/// Storage for every [`ValueList`] of a function.
#[derive(Debug, Default)]
pub struct ValueListPool {
    data: Vec<Value>,
}

impl Clone for ValueListPool {
    fn clone(&self) -> Self {
        ValueListPool {
            data: self.data.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.data.clone_from(&source.data);
    }
}

impl ValueList {
    pub const EMPTY: ValueList = ValueList { start: 0, len: 0 };

    #[inline]
    pub fn len(self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    fn end(self) -> usize {
        self.start as usize + self.len as usize
    }
}

impl ValueListPool {
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty pool with room for `slots` values.
    pub fn with_capacity(slots: usize) -> Self {
        ValueListPool {
            data: Vec::with_capacity(slots),
        }
    }

    /// Empties the pool, keeping its memory.
    pub fn clear(&mut self) {
        self.data.clear();
    }

    /// Room for `slots` more values.
    pub fn reserve(&mut self, slots: usize) {
        self.data.reserve(slots);
    }

    /// Number of slots in use, garbage included.
    #[inline]
    pub fn capacity_used(&self) -> usize {
        self.data.len()
    }

    /// A new list holding `values`.
    #[inline]
    pub fn alloc(&mut self, values: &[Value]) -> ValueList {
        if values.is_empty() {
            return ValueList::EMPTY;
        }
        let start = self.data.len();
        self.data.extend_from_slice(values);
        ValueList {
            start: start as u32,
            len: values.len() as u32,
        }
    }

    /// A new list holding the values `values` yields.
    #[inline]
    pub fn alloc_iter(&mut self, values: impl IntoIterator<Item = Value>) -> ValueList {
        let start = self.data.len();
        self.data.extend(values);
        ValueList {
            start: start as u32,
            len: (self.data.len() - start) as u32,
        }
    }

    #[inline]
    pub fn get(&self, list: ValueList) -> &[Value] {
        &self.data[list.start as usize..list.end()]
    }

    #[inline]
    pub fn get_mut(&mut self, list: ValueList) -> &mut [Value] {
        &mut self.data[list.start as usize..list.end()]
    }

    /// Append one value, returning the (possibly moved) list.
    pub fn push(&mut self, list: ValueList, v: Value) -> ValueList {
        if list.is_empty() {
            return self.alloc(&[v]);
        }
        if list.end() != self.data.len() {
            // Move the list to the end so it can grow in place. The old slots become garbage.
            let start = self.data.len();
            self.data
                .extend_from_within(list.start as usize..list.end());
            let moved = ValueList {
                start: start as u32,
                len: list.len,
            };
            return self.push(moved, v);
        }
        self.data.push(v);
        ValueList {
            start: list.start,
            len: list.len + 1,
        }
    }

    /// Remove the element at `index`, keeping the order of the others.
    #[inline]
    pub fn remove(&mut self, list: ValueList, index: usize) -> ValueList {
        let slice = self.get_mut(list);
        slice[index..].rotate_left(1);
        ValueList {
            start: list.start,
            len: list.len - 1,
        }
    }

    /// Copy `list` from this pool into `dest`, returning its handle there. Used by compaction
    /// to drop garbage.
    #[inline]
    pub fn compact_into(&self, list: ValueList, dest: &mut ValueListPool) -> ValueList {
        dest.alloc(self.get(list))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u32) -> Value {
        Value::from_u32(n)
    }

    #[test]
    fn push_moves_non_tail_lists() {
        let mut pool = ValueListPool::new();
        let a = pool.alloc(&[v(1), v(2)]);
        let b = pool.alloc(&[v(3)]);
        let a = pool.push(a, v(4));
        assert_eq!(pool.get(a), &[v(1), v(2), v(4)]);
        assert_eq!(pool.get(b), &[v(3)]);
        let b = pool.push(b, v(5));
        assert_eq!(pool.get(b), &[v(3), v(5)]);
        let a = pool.remove(a, 0);
        assert_eq!(pool.get(a), &[v(2), v(4)]);
        let mut fresh = ValueListPool::new();
        let a2 = pool.compact_into(a, &mut fresh);
        assert_eq!(fresh.get(a2), &[v(2), v(4)]);
        assert_eq!(fresh.capacity_used(), 2);
    }

    #[test]
    fn empty_lists_take_no_space() {
        let mut pool = ValueListPool::new();
        let e = pool.alloc(&[]);
        assert!(e.is_empty());
        assert_eq!(pool.get(e), &[]);
        assert_eq!(pool.capacity_used(), 0);
    }
}
