//! End-to-end tests: hand-written functions, typed errors, and seeded smokes of the stress
//! driver and of the fuzz target (every allocation checked by both oracles).

use kestrel_regalloc::gen::{x64_env, TestBlock, TestFunc, TestInst};
use kestrel_regalloc::stress::{self, StressOptions};
use kestrel_regalloc::{
    allocate, checker, exec, Allocation, Block, Inst, InstRange, MachineEnv, Operand,
    OperandConstraint as C, OperandKind, OperandPos, Options, PReg, PRegSet, RegAllocError,
    RegClass, VReg,
};

fn v(n: usize) -> VReg {
    VReg::new(n, RegClass::Int)
}

fn inst(operands: Vec<Operand>) -> TestInst {
    TestInst {
        operands,
        clobbers: PRegSet::empty(),
        is_move: false,
    }
}

/// A block given as (instructions, successors with their arguments, parameters).
type BlockSpec = (Vec<TestInst>, Vec<(u32, Vec<VReg>)>, Vec<VReg>);

/// Builds a function from block specs in emission order.
fn func(blocks: Vec<BlockSpec>) -> TestFunc {
    let mut f = TestFunc::default();
    let mut preds = vec![Vec::new(); blocks.len()];
    for (b, (_, succs, _)) in blocks.iter().enumerate() {
        for (s, _) in succs {
            preds[*s as usize].push(Block(b as u32));
        }
    }
    let mut max_vreg = 0;
    for (b, (insts, succs, params)) in blocks.into_iter().enumerate() {
        let start = f.insts.len() as u32;
        for i in &insts {
            for op in &i.operands {
                max_vreg = max_vreg.max(op.vreg().index() + 1);
            }
        }
        for p in &params {
            max_vreg = max_vreg.max(p.index() + 1);
        }
        f.insts.extend(insts);
        let end = f.insts.len() as u32;
        f.blocks.push(TestBlock {
            insts: InstRange {
                start: Inst(start),
                end: Inst(end),
            },
            succs: succs.iter().map(|(s, _)| Block(*s)).collect(),
            preds: std::mem::take(&mut preds[b]),
            params,
            args: succs.into_iter().map(|(_, a)| a).collect(),
        });
    }
    f.num_vregs = max_vreg;
    f
}

fn env(n: usize) -> MachineEnv {
    MachineEnv {
        allocatable: [
            (0..n).map(|k| PReg::new(k, RegClass::Int)).collect(),
            vec![PReg::new(0, RegClass::Float)],
        ],
        caller_saved: PRegSet::empty(),
        scratch: [Some(PReg::new(15, RegClass::Int)), None],
    }
}

fn check_both(f: &TestFunc, env: &MachineEnv) -> kestrel_regalloc::Output {
    let out = allocate(f, env, checked(None)).expect("allocation");
    exec::compare(f, &out, 1).expect("executor agrees");
    out
}

/// The example of seed 001 (Wimmer & Franz 2010, with block parameters): a loop computing
/// a factorial-like product, allocated with 2 and 3 registers.
fn wimmer_example() -> TestFunc {
    let def = |d: usize, uses: &[usize]| {
        let mut ops = vec![Operand::reg_def(v(d))];
        ops.extend(uses.iter().map(|&u| Operand::reg_use(v(u))));
        inst(ops)
    };
    func(vec![
        // B1: R10, R11 = args; R1 = const 1; jump B2(R1, R11)
        (
            vec![def(10, &[]), def(11, &[]), def(1, &[]), inst(vec![])],
            vec![(1, vec![v(1), v(11)])],
            vec![],
        ),
        // B2(R12, R13): cmp; branch B4 / B3
        (
            vec![def(2, &[13]), inst(vec![Operand::reg_use(v(2))])],
            vec![(3, vec![]), (2, vec![])],
            vec![v(12), v(13)],
        ),
        // B3: R14 = mul R12, R13; R15 = sub R13, 1; jump B2(R14, R15)
        (
            vec![def(14, &[12, 13]), def(15, &[13]), inst(vec![])],
            vec![(1, vec![v(14), v(15)])],
            vec![],
        ),
        // B4: R16 = add R10, R12; ret R16
        (
            vec![def(16, &[10, 12]), inst(vec![Operand::reg_use(v(16))])],
            vec![],
            vec![],
        ),
    ])
}

#[test]
fn wimmer_example_allocates_with_few_registers() {
    let f = wimmer_example();
    for n in [2, 3, 4] {
        let out = check_both(&f, &env(n));
        if n == 4 {
            assert_eq!(out.stats.spills, 0, "no spills with 4 registers");
        }
    }
}

/// A loop laid out with its header last (rotated, as the code generator's block order
/// does): the header's value `v5` is live at the top of the body before its definition in
/// the linear order, and across a call that clobbers every register, so it must be stored
/// to its slot at its definition, not at the start of its first live range.
#[test]
fn a_header_laid_out_after_its_loop_body() {
    let mut call = inst(vec![]);
    call.clobbers = (0..4).map(|k| PReg::new(k, RegClass::Int)).collect();
    let f = func(vec![
        // b0: v0 = ...; jump b3(v0)
        (
            vec![inst(vec![Operand::reg_def(v(0))]), inst(vec![])],
            vec![(3, vec![v(0)])],
            vec![],
        ),
        // b1 (the loop's top, entered only from b3): call; branch on v5 to b2 or b4
        (
            vec![call, inst(vec![Operand::reg_use(v(5))])],
            vec![(2, vec![]), (4, vec![])],
            vec![],
        ),
        // b2 (the latch): jump b3(v5)
        (vec![inst(vec![])], vec![(3, vec![v(5)])], vec![]),
        // b3(v1) (the header): v5 = v1 + 1; branch on v5 to b1 or b5
        (
            vec![
                inst(vec![Operand::reg_def(v(5)), Operand::reg_use(v(1))]),
                inst(vec![Operand::reg_use(v(5))]),
            ],
            vec![(1, vec![]), (5, vec![])],
            vec![v(1)],
        ),
        // b4: v6 = v5 + 1; ret v6
        (
            vec![
                inst(vec![Operand::reg_def(v(6)), Operand::reg_use(v(5))]),
                inst(vec![Operand::reg_use(v(6))]),
            ],
            vec![],
            vec![],
        ),
        // b5: ret v1
        (vec![inst(vec![Operand::reg_use(v(1))])], vec![], vec![]),
    ]);
    for n in [2, 3, 4] {
        check_both(&f, &env(n));
    }
}

#[test]
fn critical_edge_is_rejected() {
    // b0 -> b1, b0 -> b2, b1 -> b2: the edge b0 -> b2 is critical.
    let f = func(vec![
        (
            vec![
                inst(vec![Operand::reg_def(v(0))]),
                inst(vec![Operand::reg_use(v(0))]),
            ],
            vec![(1, vec![]), (2, vec![])],
            vec![],
        ),
        (vec![inst(vec![])], vec![(2, vec![])], vec![]),
        (vec![inst(vec![])], vec![], vec![]),
    ]);
    let err = allocate(&f, &env(4), Options::default()).unwrap_err();
    assert_eq!(err, RegAllocError::CriticalEdge { from: 0, to: 2 });
    assert!(err.to_string().contains("split it"), "{err}");
}

#[test]
fn not_ssa_is_rejected() {
    let f = func(vec![(
        vec![
            inst(vec![Operand::reg_def(v(0))]),
            inst(vec![Operand::reg_def(v(0))]),
            inst(vec![]),
        ],
        vec![],
        vec![],
    )]);
    let err = allocate(&f, &env(4), Options::default()).unwrap_err();
    assert!(matches!(err, RegAllocError::NotSsa { .. }), "{err}");
    assert!(
        err.to_string().contains("inst0") && err.to_string().contains("inst1"),
        "{err}"
    );
}

#[test]
fn use_not_dominated_is_rejected() {
    // v1 is defined in b1 but used in b3, which b2 also reaches.
    let f = func(vec![
        (
            vec![
                inst(vec![Operand::reg_def(v(0))]),
                inst(vec![Operand::reg_use(v(0))]),
            ],
            vec![(1, vec![]), (2, vec![])],
            vec![],
        ),
        (
            vec![inst(vec![Operand::reg_def(v(1))]), inst(vec![])],
            vec![(3, vec![])],
            vec![],
        ),
        (vec![inst(vec![])], vec![(3, vec![])], vec![]),
        (vec![inst(vec![Operand::reg_use(v(1))])], vec![], vec![]),
    ]);
    let expected = RegAllocError::UseNotDominated {
        vreg: v(1),
        inst: 5,
    };
    let err = allocate(&f, &env(4), Options::default()).unwrap_err();
    assert_eq!(err, expected);
    // Liveness finds it, so trusting the input does not hide it.
    let trusted = Options {
        trust_input: true,
        ..Options::default()
    };
    assert_eq!(allocate(&f, &env(4), trusted).unwrap_err(), expected);
}

#[test]
fn too_many_registers_at_one_instruction() {
    let uses: Vec<Operand> = (0..3).map(|k| Operand::reg_use(v(k))).collect();
    let defs: Vec<TestInst> = (0..3).map(|k| inst(vec![Operand::reg_def(v(k))])).collect();
    let mut insts = defs;
    insts.push(inst(uses));
    insts.push(inst(vec![]));
    let f = func(vec![(insts, vec![], vec![])]);
    let err = allocate(&f, &env(2), Options::default()).unwrap_err();
    assert!(
        matches!(
            err,
            RegAllocError::TooManyRegisters {
                inst: 3,
                needed: 3,
                available: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn bad_reuse_and_entry_params_are_rejected() {
    let f = func(vec![(
        vec![
            inst(vec![Operand::new(
                v(0),
                OperandKind::Def,
                OperandPos::Late,
                C::Reuse(3),
            )]),
            inst(vec![]),
        ],
        vec![],
        vec![],
    )]);
    let err = allocate(&f, &env(2), Options::default()).unwrap_err();
    assert!(
        matches!(
            err,
            RegAllocError::BadOperand {
                inst: 0,
                operand: 0,
                ..
            }
        ),
        "{err}"
    );
    let f = func(vec![(
        vec![inst(vec![Operand::reg_use(v(0))])],
        vec![],
        vec![v(0)],
    )]);
    assert_eq!(
        allocate(&f, &env(2), Options::default()).unwrap_err(),
        RegAllocError::EntryParams
    );
}

#[test]
fn fixed_registers_reuse_and_calls() {
    // v0 = arg in r1; v1 = const; v2 = v1 << v0 (count fixed in r1, reuse); call(v2 in r0)
    // clobbering r0..r2 with result v3 in r0; v0 must survive the call; ret v0 + v3.
    let mut call = inst(vec![
        Operand::new(
            v(2),
            OperandKind::Use,
            OperandPos::Early,
            C::FixedReg(PReg::new(0, RegClass::Int)),
        ),
        Operand::new(
            v(3),
            OperandKind::Def,
            OperandPos::Late,
            C::FixedReg(PReg::new(0, RegClass::Int)),
        ),
    ]);
    call.clobbers = (0..3).map(|k| PReg::new(k, RegClass::Int)).collect();
    let f = func(vec![(
        vec![
            inst(vec![Operand::new(
                v(0),
                OperandKind::Def,
                OperandPos::Late,
                C::FixedReg(PReg::new(1, RegClass::Int)),
            )]),
            inst(vec![Operand::reg_def(v(1))]),
            inst(vec![
                Operand::reg_use(v(1)),
                Operand::new(
                    v(0),
                    OperandKind::Use,
                    OperandPos::Early,
                    C::FixedReg(PReg::new(1, RegClass::Int)),
                ),
                Operand::new(v(2), OperandKind::Def, OperandPos::Late, C::Reuse(0)),
            ]),
            call,
            inst(vec![
                Operand::reg_def(v(4)),
                Operand::reg_use(v(0)),
                Operand::reg_use(v(3)),
            ]),
            inst(vec![Operand::reg_use(v(4))]),
        ],
        vec![],
        vec![],
    )]);
    let out = check_both(&f, &env(4));
    // v0 lives across the call: it cannot stay in a clobbered register.
    let at_add = out.inst_allocs(Inst(4))[1];
    assert!(
        at_add == Allocation::Reg(PReg::new(3, RegClass::Int)) || at_add.is_stack(),
        "{at_add}"
    );
}

#[test]
fn checker_reports_wrong_register_precisely() {
    let f = wimmer_example();
    let env = env(3);
    let mut out = allocate(&f, &env, Options::default()).unwrap();
    // Point the use of v16 (the return value) at a register that holds something else.
    let ret = Inst(f.insts.len() as u32 - 1);
    let k = out.inst_alloc_offsets[ret.index()] as usize;
    let right = out.allocs[k];
    out.allocs[k] = if right == Allocation::Reg(PReg::new(0, RegClass::Int)) {
        Allocation::Reg(PReg::new(1, RegClass::Int))
    } else {
        Allocation::Reg(PReg::new(0, RegClass::Int))
    };
    let err = checker::check(&f, &env, &out).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("inst{}", ret.0)) && msg.contains("expected v16"),
        "{msg}"
    );
    assert!(
        exec::compare(&f, &out, 3).is_err(),
        "the executor sees it too"
    );
}

#[test]
fn stress_smoke_with_faults() {
    let options = StressOptions {
        seed: 2024,
        count: 300,
        inject_faults: true,
        perturb: None,
    };
    let mut text = Vec::new();
    let summary = stress::run(&options, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(summary.checker_failures, 0, "{text}");
    assert_eq!(summary.executor_mismatches, 0, "{text}");
    let changed: usize = summary.faults.iter().map(|c| c.changed).sum();
    let caught: usize = summary.faults.iter().map(|c| c.changed_and_caught).sum();
    assert!(changed > 50, "faults should change results: {text}");
    assert_eq!(
        changed, caught,
        "every fault that changes results is caught: {text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.last().unwrap().starts_with("faults: "), "{text}");
    assert!(
        text.contains("300 functions, 0 checker failures, 0 executor mismatches"),
        "{text}"
    );
    assert!(summary.stats.spills > 0 && summary.stats.reloads > 0 && summary.stats.splits > 0);
}

#[test]
fn fuzz_target_smoke() {
    let mut rng = exec::Rng::new(77);
    for _ in 0..300 {
        let len = 256 + rng.below(3000);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        kestrel_regalloc::fuzzing::allocate_and_check(&bytes);
    }
}

#[test]
fn generated_functions_on_the_full_x64_machine() {
    for index in 0..100 {
        let case = stress::case(99, index);
        let env = x64_env(false, index % 2 == 0);
        let out = allocate(&case.func, &env, checked(None)).expect("allocates and checks");
        exec::compare(&case.func, &out, index as u64).expect("executor agrees");
    }
}

fn checked(perturb: Option<u64>) -> Options {
    Options {
        check: true,
        perturb,
        timing: false,
        trust_input: false,
    }
}

/// Perturbed heuristics (hints ignored, other free registers, other legal split gaps,
/// spills instead of evictions, fresh slots) must keep every allocation correct: the
/// checker and the executor agree for many seeds per generated function.
#[test]
fn perturbed_allocations_pass_the_checker() {
    let mut differed = 0;
    for index in 0..60 {
        let case = stress::case(7, index);
        let env = x64_env(false, index % 2 == 0);
        let plain = allocate(&case.func, &env, checked(None)).expect("allocates");
        for seed in 0..12u64 {
            let out = allocate(&case.func, &env, checked(Some(seed * 1000 + index as u64)))
                .unwrap_or_else(|e| panic!("case {index} seed {seed}: {e}\n{}", case.func));
            exec::compare(&case.func, &out, seed)
                .unwrap_or_else(|m| panic!("case {index} seed {seed}: {m}\n{}", case.func));
            differed += usize::from(out.allocs != plain.allocs || out.edits != plain.edits);
        }
    }
    assert!(
        differed > 300,
        "perturbation changed only {differed} allocations"
    );
}

/// The stress driver's generated functions on their own small machines, perturbed.
#[test]
fn stress_with_perturbation_for_many_seeds() {
    for seed in 1..=8 {
        let options = StressOptions {
            seed,
            count: 100,
            inject_faults: false,
            perturb: Some(seed.wrapping_mul(0x51ED)),
        };
        let mut text = Vec::new();
        let summary = stress::run(&options, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(summary.rejected, 0, "{text}");
        assert_eq!(summary.checker_failures, 0, "{text}");
        assert_eq!(summary.executor_mismatches, 0, "{text}");
    }
}

/// Without a seed the allocation is exactly the unperturbed one (same seed, same result).
#[test]
fn perturbation_is_deterministic() {
    for index in 0..20 {
        let case = stress::case(11, index);
        let a = allocate(&case.func, &case.env, checked(Some(5))).unwrap();
        let b = allocate(&case.func, &case.env, checked(Some(5))).unwrap();
        assert_eq!((a.allocs, a.edits), (b.allocs, b.edits));
    }
}

#[test]
fn inconsistent_predecessors_are_rejected() {
    let mut f = func(vec![
        (vec![inst(vec![])], vec![(1, vec![])], vec![]),
        (vec![inst(vec![])], vec![], vec![]),
    ]);
    f.blocks[1].preds.push(Block(1));
    let err = allocate(&f, &env(2), Options::default()).unwrap_err();
    assert!(matches!(err, RegAllocError::Malformed(_)), "{err}");
}

/// Random corruptions of generated functions (constraints, vregs, clobbers, edges): the
/// allocator must answer with an allocation that checks, or a typed error, never a panic.
#[test]
fn corrupted_functions_never_panic() {
    let mut rng = exec::Rng::new(5);
    let constraints = |rng: &mut exec::Rng, class: RegClass| match rng.below(6) {
        0 => C::Reg,
        1 => C::Stack,
        2 => C::RegOrStack,
        3 => C::Reuse(rng.below(4)),
        _ => C::FixedReg(PReg::new(rng.below(16), class)),
    };
    let mut ok = 0;
    let count = std::env::var("CORRUPT_COUNT").map_or(400, |c| c.parse().unwrap());
    for index in 0..count {
        let mut case = stress::case(31, index);
        let f = &mut case.func;
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(f.insts.len());
            match rng.below(5) {
                0 if !f.insts[i].operands.is_empty() => {
                    let k = rng.below(f.insts[i].operands.len());
                    let op = f.insts[i].operands[k];
                    let c = constraints(&mut rng, op.class());
                    f.insts[i].operands[k] = Operand::new(op.vreg(), op.kind(), op.pos(), c);
                }
                1 if !f.insts[i].operands.is_empty() => {
                    let k = rng.below(f.insts[i].operands.len());
                    let op = f.insts[i].operands[k];
                    let v = VReg::new(rng.below(f.num_vregs + 2), op.class());
                    f.insts[i].operands[k] = Operand::new(v, op.kind(), op.pos(), op.constraint());
                }
                2 => f.insts[i]
                    .clobbers
                    .add(PReg::new(rng.below(16), RegClass::Int)),
                3 if !f.insts[i].operands.is_empty() => {
                    let k = rng.below(f.insts[i].operands.len());
                    f.insts[i].operands.remove(k);
                }
                _ => {
                    let b = rng.below(f.blocks.len());
                    let t = Block(rng.below(f.blocks.len()) as u32);
                    f.blocks[b].succs.push(t);
                    f.blocks[b].args.push(Vec::new());
                    f.blocks[t.index()].preds.push(Block(b as u32));
                }
            }
        }
        if std::env::var("DUMP").is_ok() {
            eprintln!("case {index}\n{}", case.func);
        }
        if let Ok(out) = allocate(&case.func, &case.env, Options::default()) {
            checker::check(&case.func, &case.env, &out)
                .expect("an accepted function allocates correctly");
            exec::compare(&case.func, &out, 9).expect("and runs correctly");
            ok += 1;
        }
    }
    assert!(ok > 20, "some corruptions stay valid ({ok})");
}

#[test]
fn values_of_a_class_without_registers_are_rejected() {
    let f = func(vec![(
        vec![
            inst(vec![Operand::new(
                VReg::new(0, RegClass::Float),
                OperandKind::Def,
                OperandPos::Late,
                C::RegOrStack,
            )]),
            inst(vec![]),
        ],
        vec![],
        vec![],
    )]);
    let mut machine = env(2);
    machine.allocatable[1].clear();
    let err = allocate(&f, &machine, Options::default()).unwrap_err();
    assert!(err.to_string().contains("no Float register"), "{err}");
}

/// An environment with a register listed twice, or a scratch register that is also
/// allocatable, is rejected with a message naming the register; one context that meets a
/// good environment, a bad one and the good one again answers each correctly (its cached
/// facts about the environment follow the environment passed).
#[test]
fn bad_environments_are_rejected_and_the_context_follows_the_env() {
    let f = func(vec![(
        vec![
            inst(vec![Operand::reg_def(v(0))]),
            inst(vec![Operand::reg_use(v(0))]),
        ],
        vec![],
        vec![],
    )]);
    let good = env(3);
    let mut twice = env(3);
    twice.allocatable[0].push(PReg::new(1, RegClass::Int));
    let mut scratch_allocatable = env(3);
    scratch_allocatable.scratch[0] = Some(PReg::new(2, RegClass::Int));
    let mut ctx = kestrel_regalloc::Context::new();
    for (env, expect) in [
        (&good, None),
        (&twice, Some("listed twice")),
        (&good, None),
        (&scratch_allocatable, Some("also allocatable")),
        (&good, None),
    ] {
        let result = kestrel_regalloc::allocate_in(&mut ctx, &f, env, checked(None));
        match (result, expect) {
            (Ok(_), None) => {}
            (Err(RegAllocError::Malformed(msg)), Some(part)) => {
                assert!(msg.contains(part), "{msg}")
            }
            (Ok(_), Some(part)) => panic!("accepted an environment with a register {part}"),
            (Err(e), _) => panic!("unexpected result: {e}"),
        }
    }
}

/// Values spilled across a block boundary share their slots with the block parameters they
/// become, so the edge does not copy them from slot to slot (through the scratch
/// register). The arguments are passed in reverse order, so reusing the least busy slot
/// (the rule without the hint) would not match them.
#[test]
fn block_parameters_take_the_slots_of_their_arguments() {
    let def = |d: usize| inst(vec![Operand::reg_def(v(d))]);
    let use2 = |a: usize, b: usize| inst(vec![Operand::reg_use(v(a)), Operand::reg_use(v(b))]);
    let n = 10;
    let f = func(vec![
        // B0: v1..v6 defined; jump B1(v6, ..., v1).
        (
            (1..=n).map(def).chain([inst(vec![])]).collect(),
            vec![(1, (1..=n).rev().map(v).collect())],
            vec![],
        ),
        // B1(v11..v16): read in pairs; return.
        (
            vec![use2(11, 12), use2(13, 14), use2(15, 16), inst(vec![])],
            vec![],
            (11..=10 + n).map(v).collect(),
        ),
    ]);
    let out = check_both(&f, &env(2));
    assert!(
        out.stats.spills > 0,
        "more values than registers: {:?}",
        out.stats
    );
    // A copy from slot to slot goes through the scratch register r15.
    let scratch = Allocation::Reg(PReg::new(15, RegClass::Int));
    let through_scratch = out
        .edits
        .iter()
        .filter(|(_, e)| e.from == scratch || e.to == scratch)
        .count();
    // At most the one exchange the two values arriving in registers cause (the allocator
    // without the hint copied every spilled value: 18 such edits here).
    assert!(through_scratch <= 4, "{through_scratch}: {:?}", out.edits);
}
