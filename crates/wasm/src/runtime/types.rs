//! Canonical signature ids: one process-wide number per distinct function type, so that
//! `call_indirect` compares a table entry's type with the expected one by a single integer
//! compare, across modules and instances. Ids start at 1 (0 marks a null entry).
//!
//! Cost: a hash lookup under a mutex per query; queried at compile time (once per
//! `call_indirect` site and function) and at instantiation, never while Wasm runs. The table
//! only grows (bounded by the number of distinct signatures seen by the process).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use wasmparser::{FuncType, ValType};

type Key = (Vec<ValType>, Vec<ValType>);

fn registry() -> &'static Mutex<HashMap<Key, u64>> {
    static REGISTRY: OnceLock<Mutex<HashMap<Key, u64>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// The canonical id of `ty`.
pub fn type_id(ty: &FuncType) -> u64 {
    let key = (ty.params().to_vec(), ty.results().to_vec());
    // A poisoned lock only means another thread panicked while inserting; the map is
    // still consistent (insertion is the only mutation).
    let mut map = registry().lock().unwrap_or_else(|e| e.into_inner());
    let next = map.len() as u64 + 1;
    *map.entry(key).or_insert(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_types_share_an_id_and_different_ones_do_not() {
        let a = FuncType::new([ValType::I32], [ValType::I64]);
        let b = FuncType::new([ValType::I32], [ValType::I64]);
        let c = FuncType::new([ValType::I64], [ValType::I32]);
        assert_eq!(type_id(&a), type_id(&b));
        assert_ne!(type_id(&a), type_id(&c));
        assert_ne!(type_id(&a), 0);
    }
}
