//! Bad input never panics: mutated versions of the committed modules (byte flips,
//! truncations, insertions, from a fixed-seed generator) are compiled; each must give a
//! module or an error. Those that compile are also instantiated with no imports, which must
//! not panic either (linking errors are expected).

use kestrel_wasm::{Imports, Instance, Module, WasmError};

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn mutate(rng: &mut Rng, original: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len());
        match rng.below(4) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes[at] = rng.next() as u8,
            2 => bytes.truncate(at.max(8)),
            _ => bytes.insert(at, rng.next() as u8),
        }
    }
    bytes
}

#[test]
fn mutated_modules_are_errors_or_modules_never_panics() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/wat");
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let (mut compiled, mut rejected) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let wasm = wat::parse_file(&path).unwrap();
        for _ in 0..1500 {
            let bytes = mutate(&mut rng, &wasm);
            match Module::new(&bytes) {
                Ok(m) => {
                    compiled += 1;
                    match Instance::new(&m, &Imports::new()) {
                        Ok(_) | Err(WasmError::Link { .. } | WasmError::Trap(_)) => {}
                        Err(e) => panic!("{}: unexpected instantiation error {e}", path.display()),
                    }
                }
                Err(WasmError::Invalid { .. } | WasmError::Unsupported { .. }) => rejected += 1,
                Err(e) => panic!("{}: mutated module: unexpected error {e}", path.display()),
            }
        }
    }
    eprintln!("{compiled} compiled, {rejected} rejected");
    // Both outcomes occur, so the test exercises the compiler as well as the validator.
    assert!(
        compiled > 0 && rejected > 0,
        "{compiled} compiled, {rejected} rejected"
    );
}
