//! The entry point of the end-to-end differential cargo-fuzz target (`fuzz/`).

use kestrel_fuzzgen::{generate, GenConfig, Unstructured};

use crate::campaign::oracles;
use crate::check::check_case;
use crate::coverage::Coverage;

/// Generate a case from `data`, run it through the interpreter, native code, native code
/// under chaos and the mid-end's oracles, and panic with the case printed if they disagree (the fuzzer's crash signal).
pub fn differential(data: &[u8]) {
    let Ok(case) = generate(&mut Unstructured::new(data), &GenConfig::default()) else {
        return;
    };
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut all = oracles(true, true, true, Vec::new());
    if let Err(finding) = check_case(&case, &mut all, seed, &mut Coverage::default()) {
        let text: String = case
            .functions
            .iter()
            .map(|f| f.to_string() + "\n")
            .collect();
        panic!("{finding}\n{text}");
    }
}
