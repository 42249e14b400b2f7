//! Exhaustive test of the parallel-move resolver: every mapping (each destination has no
//! source or any one source; sources may repeat) over up to 6 locations, for every split of
//! the locations into registers and slots, with a free scratch register and with a borrowed
//! register (no free register at all).

use kestrel_regalloc::fuzzing::{parallel_moves, test_location, verify_parallel_move};
use kestrel_regalloc::moves::Scratch;
use kestrel_regalloc::{PReg, RegClass, SpillSlot};

fn for_each_mapping(n: usize, mut f: impl FnMut(&[Option<usize>])) {
    let mut digits = vec![0usize; n]; // 0 = no move, k = source k - 1
    loop {
        let mapping: Vec<Option<usize>> = digits.iter().map(|&d| d.checked_sub(1)).collect();
        f(&mapping);
        let mut k = 0;
        loop {
            if k == n {
                return;
            }
            digits[k] += 1;
            if digits[k] <= n {
                break;
            }
            digits[k] = 0;
            k += 1;
        }
    }
}

#[test]
fn every_mapping_up_to_six_locations() {
    let free = Scratch::Free {
        reg: PReg::new(63, RegClass::Int),
        slot: SpillSlot(1000),
    };
    let mut checked = 0usize;
    for n in 1..=6 {
        for regs in 0..=n {
            let borrow_reg = if regs > 0 {
                PReg::new(0, RegClass::Int)
            } else {
                PReg::new(62, RegClass::Int)
            };
            let borrow = Scratch::Borrow {
                reg: borrow_reg,
                save: SpillSlot(1001),
                new_value: SpillSlot(1002),
                cycle: SpillSlot(1003),
            };
            for_each_mapping(n, |mapping| {
                let moves: Vec<_> = mapping
                    .iter()
                    .enumerate()
                    .filter_map(|(dst, src)| {
                        src.map(|s| (test_location(s, regs), test_location(dst, regs)))
                    })
                    .collect();
                for scratch in [free, borrow] {
                    if let Err(err) = verify_parallel_move(&moves, scratch) {
                        panic!("n={n} regs={regs} {scratch:?}: {err}");
                    }
                    checked += 1;
                }
            });
        }
    }
    // sum over n of (n + 1) splits * (n + 1)^n mappings * 2 plans
    assert_eq!(
        checked,
        (1..=6u32)
            .map(|n| 2 * (n as usize + 1).pow(n + 1))
            .sum::<usize>()
    );
}

#[test]
fn swap_through_scratch() {
    let r0 = test_location(0, 2);
    let r1 = test_location(1, 2);
    let mut seq = Vec::new();
    kestrel_regalloc::moves::resolve_parallel(
        &[(r0, r1), (r1, r0)],
        Scratch::Free {
            reg: PReg::new(9, RegClass::Int),
            slot: SpillSlot(7),
        },
        &mut seq,
    );
    assert_eq!(seq.len(), 3, "{seq:?}");
}

#[test]
fn fuzz_target_smoke() {
    let mut rng = kestrel_regalloc::exec::Rng::new(42);
    for _ in 0..3000 {
        let bytes: Vec<u8> = (0..64).map(|_| rng.next_u64() as u8).collect();
        parallel_moves(&bytes);
    }
}
