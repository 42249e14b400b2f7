//! Wasm test cases for differential fuzzing: a module from `wasm-smith`, restricted to what
//! Kestrel supports, and the arguments each export is called with, all determined by one
//! seed (`wasm_oracle` runs them).
//!
//! Contract: [`module`] and [`Args`] are pure functions of the seed (a splitmix64 stream
//! feeds `wasm-smith`'s `Unstructured`), so a case is reproduced from its seed alone, and
//! a saved (possibly minimized) module replays with the same arguments. Every generated
//! module terminates: `ensure_termination` threads a fuel global through every loop and
//! function entry, and running out traps with `unreachable` in every engine alike.
//! Cost: linear in the generated module's size.

use arbitrary::Unstructured;
use wasm_smith::{Config, Module};

/// Fuel of `ensure_termination`: loop iterations plus calls over the whole case.
const FUEL: u32 = 20_000;
/// Random bytes handed to wasm-smith per case (it takes what it needs, then zeros).
const ENTROPY: usize = 16 * 1024;

/// A splitmix64 stream: small, fast, and the same on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// wasm-smith's configuration: the Wasm 2.0 core without SIMD (Kestrel's scope), no
/// imports (each engine instantiates alone), everything exported so results and final
/// state are observable, NaNs canonicalized so float results compare bit for bit, memories
/// and tables bounded so that growing fails at the same size in every engine.
pub fn config() -> Config {
    Config {
        simd_enabled: false,
        relaxed_simd_enabled: false,
        threads_enabled: false,
        shared_everything_threads_enabled: false,
        tail_call_enabled: false,
        exceptions_enabled: false,
        gc_enabled: false,
        memory64_enabled: false,
        custom_page_sizes_enabled: false,
        wide_arithmetic_enabled: false,
        custom_descriptors_enabled: false,
        bulk_memory_enabled: true,
        reference_types_enabled: true,
        multi_value_enabled: true,
        saturating_float_to_int_enabled: true,
        sign_extension_ops_enabled: true,
        extended_const_enabled: true,
        canonicalize_nans: true,
        export_everything: true,
        allow_start_export: true,
        max_imports: 0,
        min_types: 2,
        min_funcs: 3,
        max_funcs: 20,
        max_memories: 2,
        memory_max_size_required: true,
        max_memory32_bytes: 64 << 16,
        table_max_size_required: true,
        max_table_elements: 1000,
        max_tables: 2,
        max_instructions: 200,
        ..Config::default()
    }
}

/// The module of case `seed`.
pub fn module(seed: u64) -> Result<Vec<u8>, String> {
    let mut rng = Rng::new(seed);
    let bytes: Vec<u8> = (0..ENTROPY / 8)
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .collect();
    let mut u = Unstructured::new(&bytes);
    let mut module = Module::new(config(), &mut u).map_err(|e| format!("wasm-smith: {e}"))?;
    module
        .ensure_termination(FUEL)
        .map_err(|e| format!("wasm-smith ensure_termination: {e}"))?;
    Ok(module.to_bytes())
}

/// Argument values for the calls of one case.
pub struct Args(Rng);

impl Args {
    /// The arguments of case `seed` (a stream independent of the module's bytes).
    pub fn new(seed: u64) -> Args {
        Args(Rng::new(seed ^ 0x005e_eda7_c50f_ca11))
    }

    pub fn i32(&mut self) -> i32 {
        const EDGES: [i32; 8] = [0, 1, -1, 2, i32::MIN, i32::MAX, 65535, 65536];
        match self.0.below(4) {
            0 => EDGES[self.0.below(EDGES.len() as u64) as usize],
            1 => self.0.below(256) as i32,
            _ => self.0.next_u64() as i32,
        }
    }

    pub fn i64(&mut self) -> i64 {
        const EDGES: [i64; 6] = [0, 1, -1, i64::MIN, i64::MAX, 1 << 32];
        match self.0.below(4) {
            0 => EDGES[self.0.below(EDGES.len() as u64) as usize],
            1 => self.0.below(256) as i64,
            _ => self.0.next_u64() as i64,
        }
    }

    pub fn f32_bits(&mut self) -> u32 {
        const EDGES: [f32; 7] = [0.0, -0.0, 1.0, -1.5, f32::INFINITY, 2147483648.0, 1e-40];
        match self.0.below(3) {
            0 => EDGES[self.0.below(EDGES.len() as u64) as usize].to_bits(),
            1 => (self.0.below(2001) as f32 - 1000.0).to_bits(),
            _ => self.0.next_u64() as u32,
        }
    }

    pub fn f64_bits(&mut self) -> u64 {
        const EDGES: [f64; 7] = [0.0, -0.0, 1.0, -1.5, f64::NEG_INFINITY, 9.3e18, 5e-324];
        match self.0.below(3) {
            0 => EDGES[self.0.below(EDGES.len() as u64) as usize].to_bits(),
            1 => (self.0.below(2001) as f64 - 1000.0).to_bits(),
            _ => self.0.next_u64(),
        }
    }
}
