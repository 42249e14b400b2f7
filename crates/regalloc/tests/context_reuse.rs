//! A [`Context`] reused across functions gives every function exactly the allocation a
//! fresh one gives: nothing but capacity carries over, whatever came before (larger or
//! smaller functions, other machines, failed allocations, perturbed runs).

use kestrel_regalloc::stress;
use kestrel_regalloc::{allocate, allocate_in, Context, Options, Output};

fn same(a: &Output, b: &Output) -> bool {
    a.allocs == b.allocs
        && a.inst_alloc_offsets == b.inst_alloc_offsets
        && a.edits == b.edits
        && a.num_spillslots == b.num_spillslots
        && a.stats == b.stats
}

#[test]
fn a_reused_context_allocates_like_a_fresh_one() {
    let mut ctx = Context::new();
    let (mut compared, mut errors) = (0, 0);
    for i in 0..600 {
        let case = stress::case(0x5eed, i);
        let options = Options {
            check: i % 3 == 0,
            perturb: (i % 5 == 0).then_some(i as u64),
            timing: false,
            trust_input: false,
        };
        let fresh = allocate(&case.func, &case.env, options);
        let reused = allocate_in(&mut ctx, &case.func, &case.env, options);
        match (fresh, reused) {
            (Ok(fresh), Ok(reused)) => {
                assert!(same(&fresh, reused), "case {i}: the reused context differs");
                compared += 1;
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "case {i}");
                errors += 1;
            }
            (fresh, reused) => panic!("case {i}: fresh {fresh:?}, reused {reused:?}"),
        }
    }
    assert!(
        compared > 400,
        "only {compared} cases allocated ({errors} errors)"
    );
}

/// `trust_input` only skips checks: an input that passes them is allocated exactly as when
/// they run, and one they reject (a use before its def) is still refused.
#[test]
fn trusting_valid_input_allocates_like_validating_it() {
    let mut ctx = Context::new();
    let mut compared = 0;
    for i in 0..400 {
        let case = stress::case(0x7a11, i);
        let options = Options {
            check: i % 4 == 0,
            perturb: (i % 5 == 0).then_some(i as u64),
            timing: false,
            trust_input: false,
        };
        let Ok(validated) = allocate(&case.func, &case.env, options) else {
            continue;
        };
        let trusted = Options {
            trust_input: true,
            ..options
        };
        let trusted = allocate_in(&mut ctx, &case.func, &case.env, trusted)
            .unwrap_or_else(|e| panic!("case {i}: valid input refused when trusted: {e:?}"));
        assert!(
            same(&validated, trusted),
            "case {i}: trusting changed the allocation"
        );
        compared += 1;
    }
    assert!(compared > 300, "only {compared} cases allocated");
}

/// Two machines with the same registers listed in different orders: what the context keeps
/// about one machine's registers (their places in its lists) must not answer for the
/// other's, so allocating for them in turn matches fresh contexts.
#[test]
fn machines_with_reordered_registers_do_not_share_what_the_context_keeps() {
    let mut ctx = Context::new();
    let options = Options {
        check: true,
        perturb: None,
        timing: false,
        trust_input: false,
    };
    let mut compared = 0;
    for i in 0..200 {
        let case = stress::case(0x0dd5, i);
        let mut reordered = case.env.clone();
        for list in &mut reordered.allocatable {
            list.reverse();
        }
        for env in [&case.env, &reordered, &case.env] {
            let fresh = allocate(&case.func, env, options);
            let reused = allocate_in(&mut ctx, &case.func, env, options);
            match (fresh, reused) {
                (Ok(fresh), Ok(reused)) => {
                    assert!(same(&fresh, reused), "case {i}: the reused context differs");
                    compared += 1;
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "case {i}"),
                (fresh, reused) => panic!("case {i}: fresh {fresh:?}, reused {reused:?}"),
            }
        }
    }
    assert!(compared > 300, "only {compared} allocations compared");
}
