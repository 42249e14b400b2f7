//! The compile-only property over random control-flow shapes: every function the verifier
//! accepts compiles on x86-64 and AArch64 (checker on, both opt levels) with no panic and
//! no error, and the shapes the verifier must refuse (edges into the entry block) are
//! refused.

use kestrel_difftest::campaign::case_bytes;
use kestrel_difftest::cfg_shapes::{check, generate, Verdict};

#[test]
fn every_verified_shape_compiles_on_both_isas() {
    let (mut compiled, mut rejected) = (0, 0);
    for seed in 0..600u64 {
        let mut bytes = Vec::new();
        case_bytes(0xcf65, seed, &mut bytes);
        let text = generate(&mut arbitrary::Unstructured::new(&bytes));
        match check(&text) {
            Ok(Verdict::Compiled) => compiled += 1,
            Ok(Verdict::Rejected(why)) => {
                assert!(
                    why.contains("the entry block cannot be a branch target"),
                    "seed {seed}: the generator's shapes verify except for entry edges, got {why}\n{text}"
                );
                rejected += 1;
            }
            Err(finding) => panic!("seed {seed}: {finding}\n{text}"),
        }
    }
    eprintln!("{compiled} compiled, {rejected} rejected");
    // Both outcomes must be exercised, or the property says little.
    assert!(compiled > 300, "{compiled} compiled, {rejected} rejected");
    assert!(rejected > 10, "{compiled} compiled, {rejected} rejected");
}
