//! Entity references and the dense maps keyed by them.
//!
//! Every IR entity (value, instruction, block, stack slot, …) is a `u32` index into a dense
//! array owned by the function. [`PrimaryMap`] allocates the indices; [`SecondaryMap`] attaches
//! extra data to existing indices and grows on demand with a default.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A `u32` index naming one entity.
pub trait EntityRef: Copy + Eq + Ord + fmt::Debug {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

macro_rules! entity {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u32);

        impl $name {
            /// The entity with this number (as written in text, e.g. `v3` → 3).
            pub const fn from_u32(n: u32) -> Self {
                $name(n)
            }
            pub const fn as_u32(self) -> u32 {
                self.0
            }
            /// The text prefix (`v`, `block`, …).
            pub const PREFIX: &'static str = $prefix;
        }

        impl EntityRef for $name {
            #[inline]
            fn new(index: usize) -> Self {
                debug_assert!(index < u32::MAX as usize);
                $name(index as u32)
            }
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "{}{}", $prefix, self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    };
}

entity!(
    /// An SSA value: an instruction result or a block parameter.
    Value,
    "v"
);
entity!(
    /// An instruction. After compaction, instructions are numbered in layout order.
    Inst,
    "inst"
);
entity!(
    /// A basic block.
    Block,
    "block"
);
entity!(
    /// An explicit stack slot.
    StackSlot,
    "ss"
);
entity!(
    /// A function signature used by calls.
    SigRef,
    "sig"
);
entity!(
    /// An external function referenced by calls.
    FuncRef,
    "fn"
);
entity!(
    /// A jump table used by `br_table`.
    JumpTable,
    "jt"
);
entity!(
    /// The destinations of a `try_call`: normal successor and handlers.
    ExceptionTable,
    "et"
);
entity!(
    /// A global value (`vmctx`, loads from other global values).
    GlobalValue,
    "gv"
);
entity!(
    /// A constant in the function's constant pool (`vconst`, `f128const`).
    Constant,
    "const"
);
entity!(
    /// A `shuffle` lane mask in the function's immediate pool (printed inline).
    Immediate,
    "imm"
);

/// A dense map that allocates the keys.
#[derive(PartialEq, Eq)]
pub struct PrimaryMap<K: EntityRef, V> {
    items: Vec<V>,
    _key: PhantomData<K>,
}

impl<K: EntityRef, V> PrimaryMap<K, V> {
    pub fn new() -> Self {
        PrimaryMap {
            items: Vec::new(),
            _key: PhantomData,
        }
    }

    pub fn with_capacity(n: usize) -> Self {
        PrimaryMap {
            items: Vec::with_capacity(n),
            _key: PhantomData,
        }
    }

    /// Add a value; returns its new key.
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.items.len());
        self.items.push(v);
        k
    }

    /// The key the next `push` will return.
    pub fn next_key(&self) -> K {
        K::new(self.items.len())
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn is_valid(&self, k: K) -> bool {
        k.index() < self.items.len()
    }

    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        (0..self.items.len()).map(K::new)
    }

    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.items.iter()
    }

    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }

    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Room for `n` more entries without reallocating.
    pub fn reserve(&mut self, n: usize) {
        self.items.reserve(n);
    }

    /// Consume the map into its dense vector (index = key).
    pub fn into_vec(self) -> Vec<V> {
        self.items
    }

    /// Build from a dense vector (index = key).
    pub fn from_vec(items: Vec<V>) -> Self {
        PrimaryMap {
            items,
            _key: PhantomData,
        }
    }
}

impl<K: EntityRef, V> Default for PrimaryMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityRef, V> Index<K> for PrimaryMap<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: EntityRef, V> IndexMut<K> for PrimaryMap<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<K: EntityRef, V: fmt::Debug> fmt::Debug for PrimaryMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A dense map over keys allocated elsewhere; missing entries read as the default.
#[derive(PartialEq, Eq)]
pub struct SecondaryMap<K: EntityRef, V: Clone> {
    items: Vec<V>,
    default: V,
    _key: PhantomData<K>,
}

// Cloning into an existing map reuses its memory (`clone_from`), which the mid-end's
// per-function copy relies on.
impl<K: EntityRef, V: Clone> Clone for PrimaryMap<K, V> {
    fn clone(&self) -> Self {
        PrimaryMap {
            items: self.items.clone(),
            _key: PhantomData,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.items.clone_from(&source.items);
    }
}

impl<K: EntityRef, V: Clone> Clone for SecondaryMap<K, V> {
    fn clone(&self) -> Self {
        SecondaryMap {
            items: self.items.clone(),
            default: self.default.clone(),
            _key: PhantomData,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.items.clone_from(&source.items);
        self.default.clone_from(&source.default);
    }
}

impl<K: EntityRef, V: Clone + Default> SecondaryMap<K, V> {
    pub fn new() -> Self {
        Self::with_default(V::default())
    }
}

impl<K: EntityRef, V: Clone + Default> Default for SecondaryMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityRef, V: Clone> SecondaryMap<K, V> {
    pub fn with_default(default: V) -> Self {
        SecondaryMap {
            items: Vec::new(),
            default,
            _key: PhantomData,
        }
    }

    /// Room for keys below `n` without reallocating (the map's contents are unchanged).
    pub fn reserve(&mut self, n: usize) {
        self.items.reserve(n.saturating_sub(self.items.len()));
    }

    /// Pre-size for keys below `n`.
    pub fn resize(&mut self, n: usize) {
        self.items.resize(n, self.default.clone());
    }

    pub fn get(&self, k: K) -> &V {
        self.items.get(k.index()).unwrap_or(&self.default)
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The entries stored so far (keys past them read as the default).
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }
}

impl<K: EntityRef, V: Clone> Index<K> for SecondaryMap<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        self.get(k)
    }
}

impl<K: EntityRef, V: Clone> IndexMut<K> for SecondaryMap<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        let i = k.index();
        if i >= self.items.len() {
            // Filling a map in key order (a new entity's entry) grows it by one: a push.
            if i == self.items.len() {
                self.items.push(self.default.clone());
            } else {
                self.items.resize(i + 1, self.default.clone());
            }
        }
        &mut self.items[i]
    }
}

impl<K: EntityRef, V: Clone + fmt::Debug> fmt::Debug for SecondaryMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_list().entries(self.items.iter()).finish()
    }
}

/// Empties `v` and fills it with `n` copies of `x`, keeping its capacity (how the passes'
/// working memory is made ready for the next function).
pub fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}
