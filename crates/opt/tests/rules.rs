//! The rewrite rules on `rules.clif`: each function is optimized, verified, and run in the
//! interpreter before and after on edge-case arguments (results and trap codes must agree);
//! the rules its `; fires:` lines name must fire, and every named rule of `simplify.rules`
//! must be named by some function.

use std::collections::BTreeSet;

use kestrel_interp::{DataValue, Interpreter};
use kestrel_ir::{Function, Opcode, Type};
use kestrel_opt::{optimize, simplification_rules, OptLevel, OptStats};

const FILE: &str = include_str!("rules.clif");

/// Each function of the file with the rules its `; fires:` lines name.
fn cases() -> Vec<(Function, Vec<String>)> {
    let funcs = kestrel_ir::parse_functions(FILE, "rules.clif").expect("rules.clif parses");
    let mut fires = Vec::new();
    let mut pending = Vec::new();
    for line in FILE.lines() {
        if let Some(names) = line.strip_prefix("; fires:") {
            pending.extend(names.split_whitespace().map(String::from));
        } else if line.starts_with("function") {
            fires.push(std::mem::take(&mut pending));
        }
    }
    assert_eq!(funcs.len(), fires.len());
    funcs.into_iter().zip(fires).collect()
}

/// The name of rule `k` (`FILE:LINE name`), if it has one.
fn rule_name(k: usize) -> Option<&'static str> {
    simplification_rules()[k]
        .split_once(' ')
        .map(|(_, name)| name)
}

fn fired(stats: &OptStats) -> BTreeSet<&'static str> {
    let counts = stats.simplify.fired.iter().enumerate();
    counts
        .filter(|&(_, &n)| n > 0)
        .filter_map(|(k, _)| rule_name(k))
        .collect()
}

/// Edge-case values of `ty`.
fn samples(ty: Type) -> Vec<DataValue> {
    let ints: [i128; 9] = [0, 1, 2, -1, 7, 100, -128, i128::MAX, i128::MIN];
    match ty {
        Type::I8 => ints.iter().map(|&v| DataValue::I8(v as i8)).collect(),
        Type::I16 => ints.iter().map(|&v| DataValue::I16(v as i16)).collect(),
        Type::I32 => ints.iter().map(|&v| DataValue::I32(v as i32)).collect(),
        Type::I64 => ints.iter().map(|&v| DataValue::I64(v as i64)).collect(),
        Type::I128 => ints.iter().map(|&v| DataValue::I128(v)).collect(),
        Type::F32 => [0.0f32, -0.0, 1.5, -3.25, f32::INFINITY]
            .iter()
            .map(|v| DataValue::F32(v.to_bits()))
            .collect(),
        Type::F64 => [0.0f64, -0.0, 1.5, -3.25, f64::NAN]
            .iter()
            .map(|v| DataValue::F64(v.to_bits()))
            .collect(),
        other => panic!("no samples for {other}"),
    }
}

/// Every combination of samples for `params` (the cartesian product).
fn arguments(params: &[Type]) -> Vec<Vec<DataValue>> {
    let mut all = vec![Vec::new()];
    for &ty in params {
        let next = samples(ty);
        all = all
            .into_iter()
            .flat_map(|prefix| {
                next.iter().map(move |v| {
                    let mut args = prefix.clone();
                    args.push(*v);
                    args
                })
            })
            .collect();
    }
    all
}

/// Results or trap code of calling `f` alone in the interpreter.
fn run(f: &Function, args: &[DataValue]) -> Result<Vec<DataValue>, String> {
    let funcs = [f.clone()];
    let mut interp = Interpreter::new(&funcs);
    let name = f.name.to_string();
    interp
        .call(name.trim_start_matches('%'), args)
        .map_err(|e| format!("{:?}", e.trap_code()))
}

fn count(f: &Function, op: Opcode) -> usize {
    let blocks = f.layout.blocks().iter();
    let insts = blocks.flat_map(|&b| f.layout.block_insts(b));
    insts.filter(|&i| f.dfg.inst(i).opcode() == op).count()
}

fn optimized(f: &Function) -> (Function, OptStats) {
    let mut g = f.clone();
    let stats = optimize(&mut g, OptLevel::Speed, true).unwrap_or_else(|e| panic!("{e}\n{f}"));
    (g, stats)
}

#[test]
fn rules_preserve_results_and_fire_as_listed() {
    for (f, expected) in cases() {
        let (g, stats) = optimized(&f);
        let params: Vec<Type> = f.signature.params.iter().map(|p| p.value_type).collect();
        for args in arguments(&params) {
            assert_eq!(
                run(&f, &args),
                run(&g, &args),
                "{} on {args:?}:\n{g}",
                f.name
            );
        }
        let fired = fired(&stats);
        for name in &expected {
            assert!(
                fired.contains(name.as_str()),
                "{}: {name} did not fire:\n{g}",
                f.name
            );
        }
    }
}

#[test]
fn every_named_rule_is_exercised() {
    let listed: BTreeSet<String> = cases().into_iter().flat_map(|(_, n)| n).collect();
    let named = (0..simplification_rules().len()).filter_map(rule_name);
    let missing: Vec<&str> = named.filter(|n| !listed.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "rules without a case in rules.clif: {missing:?}"
    );
}

fn case(name: &str) -> Function {
    let cases = cases().into_iter();
    let mut found = cases.map(|(f, _)| f).filter(|f| f.name.to_string() == name);
    found.next().unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn folding_keeps_trapping_divisions() {
    let (g, _) = optimized(&case("%fold_no_trap"));
    assert_eq!(count(&g, Opcode::Udiv), 1, "{g}");
    let (g, _) = optimized(&case("%pow2_signed"));
    assert_eq!(count(&g, Opcode::Sdiv) + count(&g, Opcode::Srem), 2, "{g}");
    assert_eq!(count(&g, Opcode::Udiv), 0, "{g}");
}

#[test]
fn folding_leaves_only_the_live_constant() {
    let (g, stats) = optimized(&case("%fold"));
    assert_eq!(count(&g, Opcode::Iadd), 1, "{g}");
    assert_eq!(count(&g, Opcode::Sdiv), 0, "{g}");
    assert_eq!(count(&g, Opcode::Iconst), 1, "{g}");
    assert!(stats.dead >= 2, "the folded operands are dead: {stats:?}");
}

#[test]
fn gvn_numbers_dominated_copies_only() {
    let (g, stats) = optimized(&case("%gvn"));
    // One `iadd v0, v1` and one `imul` survive: every copy is dominated by block0's.
    assert_eq!(count(&g, Opcode::Iadd), 1, "{g}");
    assert_eq!(count(&g, Opcode::Imul), 1, "{g}");
    assert!(stats.simplify.numbered >= 3, "{stats:?}");
}

/// The block holding the first instruction with opcode `op`.
fn block_of(f: &Function, op: Opcode) -> kestrel_ir::Block {
    let blocks = f.layout.blocks().iter();
    let mut insts = blocks.flat_map(|&b| f.layout.block_insts(b));
    let inst = insts.find(|&i| f.dfg.inst(i).opcode() == op);
    f.layout.inst_block(inst.expect("present")).unwrap()
}

#[test]
fn invariants_leave_their_loops() {
    let (g, stats) = optimized(&case("%licm"));
    assert_eq!(block_of(&g, Opcode::Imul), g.layout.blocks()[0], "{g}");
    assert!(stats.hoisted >= 2, "{stats:?}\n{g}");
    let (g, _) = optimized(&case("%licm_nested"));
    let blocks = g.layout.blocks();
    assert_eq!(block_of(&g, Opcode::Imul), blocks[0], "{g}");
    // `v9 + v5` depends on the outer counter: it leaves the inner loop for its preheader.
    let inner_preheader = blocks[2];
    let adds: Vec<_> = blocks
        .iter()
        .flat_map(|&b| g.layout.block_insts(b).map(move |i| (b, i)))
        .filter(|&(_, i)| g.dfg.inst(i).opcode() == Opcode::Iadd)
        .map(|(b, _)| b)
        .collect();
    assert!(adds.contains(&inner_preheader), "{g}");
}

#[test]
fn decided_branches_drop_unreachable_blocks() {
    let (g, stats) = optimized(&case("%branches"));
    assert_eq!(count(&g, Opcode::Brif), 0, "{g}");
    assert_eq!(stats.cfg.unreachable, 1, "{stats:?}\n{g}");
    // The chain left (block0, block1, block3, each entered only by the one before's jump)
    // merges into one block.
    assert_eq!(stats.cfg.merged, 2, "{stats:?}\n{g}");
    assert_eq!(g.layout.blocks().len(), 1, "{g}");
}
