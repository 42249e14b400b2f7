//! Entry points for the cargo-fuzz targets (kept here so the targets stay a few lines and
//! `cargo test` can run seeded smokes of them).

use arbitrary::{Arbitrary, Unstructured};

use crate::gen::TestCase;
use crate::moves::{resolve_parallel, Scratch};
use crate::{allocate, checker, exec, Allocation, Options, PReg, RegClass, SpillSlot};

/// Allocates a generated function and checks it with both oracles; panics on a bug.
/// Bytes that do not make a case are ignored.
pub fn allocate_and_check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(case) = TestCase::arbitrary(&mut u) else {
        return;
    };
    let out = match allocate(&case.func, &case.env, Options::default()) {
        Ok(out) => out,
        Err(err) => panic!("generated function rejected: {err}\n{}", case.func),
    };
    if let Err(err) = checker::check(&case.func, &case.env, &out) {
        panic!("checker: {err}\n{}", case.func);
    }
    if let Err(m) = exec::compare(&case.func, &out, data.len() as u64) {
        panic!("executor: {m}\n{}", case.func);
    }
}

/// Location `k` of a parallel-move test: the first `regs` are registers, the rest slots.
pub fn test_location(k: usize, regs: usize) -> Allocation {
    if k < regs {
        Allocation::Reg(PReg::new(k, RegClass::Int))
    } else {
        Allocation::Stack(SpillSlot((k - regs) as u32))
    }
}

/// Verifies `resolve_parallel` on one parallel move by running the produced sequence:
/// destinations get their source's old value, everything else but the plan's temporaries
/// keeps its value, and no move goes slot to slot.
pub fn verify_parallel_move(
    moves: &[(Allocation, Allocation)],
    scratch: Scratch,
) -> Result<(), String> {
    let mut seq = Vec::new();
    resolve_parallel(moves, scratch, &mut seq);
    let temps: Vec<Allocation> = match scratch {
        Scratch::Free { reg, slot } => vec![Allocation::Reg(reg), Allocation::Stack(slot)],
        Scratch::Borrow {
            save,
            new_value,
            cycle,
            ..
        } => {
            vec![
                Allocation::Stack(save),
                Allocation::Stack(new_value),
                Allocation::Stack(cycle),
            ]
        }
    };
    let mut state: std::collections::HashMap<Allocation, u64> = std::collections::HashMap::new();
    let initial = |a: Allocation| a.loc_index() as u64 + 1000;
    for &(from, to) in &seq {
        if from.is_stack() && to.is_stack() {
            return Err(format!("slot-to-slot move {from} -> {to} in {seq:?}"));
        }
        let value = state.get(&from).copied().unwrap_or_else(|| initial(from));
        state.insert(to, value);
    }
    let mut touched: Vec<Allocation> = state.keys().copied().collect();
    touched.extend(moves.iter().map(|m| m.1));
    for loc in touched {
        if temps.contains(&loc) {
            continue;
        }
        let expected = moves
            .iter()
            .find(|m| m.1 == loc)
            .map_or(initial(loc), |m| initial(m.0));
        let got = state.get(&loc).copied().unwrap_or_else(|| initial(loc));
        if got != expected {
            return Err(format!(
                "{loc} holds {got}, expected {expected}; moves {moves:?}, sequence {seq:?}"
            ));
        }
    }
    Ok(())
}

/// Fuzzes the parallel-move resolver on arbitrary mappings; panics on a wrong sequence.
pub fn parallel_moves(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let run = |u: &mut Unstructured| -> arbitrary::Result<()> {
        let n = u.int_in_range(1..=16usize)?;
        let regs = u.int_in_range(0..=n)?;
        let mut moves = Vec::new();
        for dst in 0..n {
            if u.ratio(2, 3)? {
                let src = u.int_in_range(0..=n - 1)?;
                moves.push((test_location(src, regs), test_location(dst, regs)));
            }
        }
        let scratch = if u.ratio(1, 2)? {
            Scratch::Free {
                reg: PReg::new(63, RegClass::Int),
                slot: SpillSlot(1000),
            }
        } else {
            let reg = if regs > 0 {
                test_location(u.int_in_range(0..=regs - 1)?, regs)
            } else {
                Allocation::Reg(PReg::new(62, RegClass::Int))
            };
            let reg = reg.as_reg().expect("a register");
            Scratch::Borrow {
                reg,
                save: SpillSlot(1001),
                new_value: SpillSlot(1002),
                cycle: SpillSlot(1003),
            }
        };
        if let Err(err) = verify_parallel_move(&moves, scratch) {
            panic!("{err}");
        }
        Ok(())
    };
    let _ = run(&mut u);
}
