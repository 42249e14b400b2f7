//! Tests of the block lowering order on functions built with the core IR API.

use kestrel_ir::cfg::ControlFlowGraph;
use kestrel_ir::domtree::DominatorTree;
use kestrel_ir::entity::EntityRef;
use kestrel_ir::{
    AbiParam, Block, BlockCall, CallConv, Function, FunctionName, InstructionData, JumpTableData,
    Opcode, Signature, Type,
};

use super::{BlockLoweringOrder, LoweredBlock, LoweredIndex};
use crate::chaos::Chaos;

/// A function whose block `i` branches to `succs[i]` (none: `return`; one: `jump`; two:
/// `brif v0`; more: `br_table v0` with the first as default) and is cold when listed. Each
/// block starts with a `nop`, so no block is an empty jump the order would bypass (see
/// [`function_with_empty_jumps`]).
fn function(succs: &[&[usize]], cold: &[usize]) -> Function {
    build(succs, cold, true)
}

/// [`function`] without the `nop`s: its blocks with one successor only jump.
fn function_with_empty_jumps(succs: &[&[usize]], cold: &[usize]) -> Function {
    build(succs, cold, false)
}

fn build(succs: &[&[usize]], cold: &[usize], nops: bool) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params = vec![AbiParam::new(Type::I32)];
    let mut f = Function::with_name_signature(FunctionName::Named("f".into()), sig);
    let blocks: Vec<Block> = succs.iter().map(|_| f.dfg.make_block()).collect();
    let v0 = f.dfg.append_block_param(blocks[0], Type::I32);
    for &c in cold {
        f.dfg.set_block_cold(blocks[c], true);
    }
    for (i, s) in succs.iter().enumerate() {
        let call = |f: &mut Function, to: usize| BlockCall::new(blocks[to], &[], &mut f.dfg.pool);
        let data = match s.len() {
            0 => {
                let args = f.dfg.pool.alloc(&[]);
                InstructionData::MultiAry {
                    opcode: Opcode::Return,
                    args,
                }
            }
            1 => InstructionData::Jump {
                opcode: Opcode::Jump,
                destination: call(&mut f, s[0]),
            },
            2 => InstructionData::Brif {
                opcode: Opcode::Brif,
                arg: v0,
                blocks: [call(&mut f, s[0]), call(&mut f, s[1])],
            },
            _ => {
                let default = call(&mut f, s[0]);
                let entries = s[1..].iter().map(|&t| call(&mut f, t)).collect();
                let table = f.jump_tables.push(JumpTableData { default, entries });
                InstructionData::BranchTable {
                    opcode: Opcode::BrTable,
                    arg: v0,
                    table,
                }
            }
        };
        let inst = f.make_inst(data, Type::INVALID);
        // Appending block by block keeps the layout compact (no queued edits).
        f.layout.append_block(blocks[i]);
        if nops {
            let nop = f.make_inst(
                InstructionData::NullAry {
                    opcode: Opcode::Nop,
                },
                Type::INVALID,
            );
            f.layout.append_inst(nop, blocks[i]);
        }
        f.layout.append_inst(inst, blocks[i]);
    }
    f
}

/// The order written compactly: `b3` for a block, `e0.1` for the edge out of block 0's slot 1.
fn describe(order: &BlockLoweringOrder) -> Vec<String> {
    order
        .lowered_order()
        .iter()
        .map(|lb| match *lb {
            LoweredBlock::Orig(b) => format!("b{}", b.index()),
            LoweredBlock::Edge {
                from, succ_index, ..
            } => format!("e{}.{succ_index}", from.index()),
        })
        .collect()
}

fn succs(order: &BlockLoweringOrder, i: usize) -> Vec<usize> {
    order
        .succ_indices(LoweredIndex(i as u32))
        .iter()
        .map(|s| s.index())
        .collect()
}

fn compute(f: &Function) -> BlockLoweringOrder {
    let order = BlockLoweringOrder::new(f, &mut Chaos::disabled());
    check_properties(f, &order, true);
    order
}

/// The order with loop layout but without rotation: the first question the order asks
/// (loop layout) is answered "keep", the second (rotation) "skip", any later one "keep".
fn compute_unrotated(f: &Function) -> BlockLoweringOrder {
    let order = BlockLoweringOrder::new(f, &mut Chaos::from_bytes(&[0b10]));
    check_properties(f, &order, true);
    order
}

/// The contract's guarantees, checked on any function.
fn check_properties(f: &Function, order: &BlockLoweringOrder, sunk: bool) {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let lowered = order.lowered_order();
    let entry = f.layout.entry_block().unwrap();
    assert_eq!(lowered[0], LoweredBlock::Orig(entry));
    let mut seen = vec![false; f.dfg.num_blocks()];
    for (i, lb) in order.iter() {
        let ss = order.succ_indices(i);
        match lb {
            LoweredBlock::Orig(b) => {
                assert!(dt.is_reachable(b));
                assert!(!std::mem::replace(&mut seen[b.index()], true), "{b} twice");
                assert_eq!(order.lowered_index_for_block(b), Some(i));
                let last = f.layout.last_inst(b).unwrap();
                let dests = match f.dfg.inst(last).opcode().is_branch() {
                    true => f.branch_destinations(last),
                    false => Vec::new(),
                };
                assert_eq!(ss.len(), dests.len(), "one successor per slot");
                for (k, (s, d)) in ss.iter().zip(&dests).enumerate() {
                    let Some(dest) = past_empty_jumps(f, d.block) else {
                        continue; // into a cycle of empty blocks (see the bypass tests)
                    };
                    match lowered[s.index()] {
                        LoweredBlock::Orig(t) => assert_eq!(t, dest),
                        LoweredBlock::Edge {
                            from,
                            succ_index,
                            to,
                        } => assert_eq!((from, succ_index as usize, to), (b, k, dest)),
                    }
                }
                // Without cold blocks, every block comes after its immediate dominator,
                // unless that is the header of a rotated loop around it: laid out after
                // the block, with a branch back to the loop's top at or before it.
                if !sunk || !order.iter().any(|(j, _)| order.is_cold(j)) {
                    // The nearest dominator the order kept (bypassed blocks are left out).
                    let mut dom = dt.idom(b);
                    while let Some(d) = dom.filter(|&d| order.lowered_index_for_block(d).is_none())
                    {
                        dom = dt.idom(d);
                    }
                    if let Some(idom) = dom {
                        let d = order.lowered_index_for_block(idom).unwrap();
                        assert!(
                            d < i || order.succ_indices(d).iter().any(|s| *s <= i),
                            "{b} before its dominator {idom}, which does not close a loop around it"
                        );
                    }
                }
            }
            LoweredBlock::Edge { to, .. } => {
                assert_eq!(ss.len(), 1);
                assert_eq!(lowered[ss[0].index()], LoweredBlock::Orig(to));
                assert_eq!(order.pred_indices(i).len(), 1);
            }
        }
        // No critical edges remain.
        if ss.len() > 1 {
            for s in ss {
                assert_eq!(
                    order.pred_indices(*s).len(),
                    1,
                    "critical edge {i:?} -> {s:?}"
                );
                assert_ne!(lowered[s.index()], LoweredBlock::Orig(entry));
            }
        }
        for s in ss {
            assert!(order.pred_indices(*s).contains(&i));
        }
    }
    for &b in f.layout.blocks() {
        // An empty jump block is bypassed, or kept closing a cycle of them.
        if !empty_jump(f, b) {
            assert_eq!(seen[b.index()], dt.is_reachable(b), "{b}");
        }
    }
    if sunk {
        let first_cold = order.iter().position(|(i, _)| order.is_cold(i));
        if let Some(k) = first_cold {
            assert!(order.iter().skip(k).all(|(i, _)| order.is_cold(i)));
        }
    }
}

/// Whether `b` is a block the order bypasses: not the entry, no parameters, only a `jump`
/// without arguments.
fn empty_jump(f: &Function, b: Block) -> bool {
    let inst = f.layout.last_inst(b).unwrap();
    Some(b) != f.layout.entry_block()
        && f.layout.first_inst(b) == Some(inst)
        && f.dfg.inst(inst).opcode() == Opcode::Jump
        && f.dfg.block_params(b).is_empty()
        && f.dfg
            .block_call_args(&f.branch_destination(inst, 0))
            .is_empty()
}

/// Where a branch to `b` lands once empty jump blocks are bypassed; `None` if the jumps
/// from `b` run into a cycle.
fn past_empty_jumps(f: &Function, mut b: Block) -> Option<Block> {
    let mut seen = vec![false; f.dfg.num_blocks()];
    while empty_jump(f, b) {
        if std::mem::replace(&mut seen[b.index()], true) {
            return None;
        }
        b = f
            .branch_destination(f.layout.last_inst(b).unwrap(), 0)
            .block;
    }
    Some(b)
}

#[test]
fn a_chain_of_empty_jumps_is_bypassed() {
    // b0 -> b1 -> b2 -> b3, b1 and b2 only jumping: b0 jumps straight to b3.
    let f = function_with_empty_jumps(&[&[1], &[2], &[3], &[]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b3"]);
    assert_eq!(succs(&order, 0), [1]);
    // The entry is never bypassed, even when it only jumps.
    let f = function_with_empty_jumps(&[&[1], &[]], &[]);
    assert_eq!(describe(&compute(&f)), ["b0", "b1"]);
    // Told to skip the bypass, the order keeps every block.
    let order = BlockLoweringOrder::new(&f, &mut Chaos::skip_all());
    check_properties(&f, &order, false);
    assert_eq!(describe(&order), ["b0", "b1"]);
    let f = function_with_empty_jumps(&[&[1], &[2], &[3], &[]], &[]);
    let order = BlockLoweringOrder::new(&f, &mut Chaos::skip_all());
    assert_eq!(describe(&order), ["b0", "b1", "b2", "b3"]);
}

#[test]
fn a_bypass_may_make_an_edge_critical_and_split() {
    // b0 branches to b1 (empty, to b3) and b2; b2 also goes to b3. Bypassed, b0's first
    // slot goes to b3, which now has two incoming slots: that edge gets a block of its own.
    let f = function_with_empty_jumps(&[&[1, 2], &[3], &[4, 3], &[], &[]], &[]);
    let order = compute(&f);
    let d = describe(&order);
    assert!(!d.contains(&"b1".to_string()), "{d:?}");
    assert!(d.contains(&"e0.0".to_string()), "{d:?}");
}

#[test]
fn a_cycle_of_empty_jumps_keeps_one_block() {
    // b1 -> b2 -> b1, both only jumping (an empty infinite loop): the cycle keeps b1, which
    // jumps to itself, and b2 is bypassed.
    let f = function_with_empty_jumps(&[&[1], &[2], &[1]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b1"]);
    assert_eq!(succs(&order, 0), [1]);
    assert_eq!(succs(&order, 1), [1]);
    // Entered in the middle: b0 -> b2 -> b1 -> b2 keeps b2.
    let f = function_with_empty_jumps(&[&[2], &[2], &[1]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b2"]);
    assert_eq!(succs(&order, 1), [1]);
}

#[test]
fn a_diamond_needs_no_edge_blocks() {
    let f = function(&[&[1, 2], &[3], &[3], &[]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b1", "b2", "b3"]);
    assert_eq!(succs(&order, 0), [1, 2]);
    assert_eq!(succs(&order, 1), [3]);
    assert_eq!(order.pred_indices(LoweredIndex(3)).len(), 2);
}

#[test]
fn a_chain_is_laid_out_in_chain_order_whatever_the_layout() {
    // b0 -> b2 -> b1 -> return (laid out b0, b1, b2), with b3 unreachable: the chain's
    // order, which the search would find too.
    let f = function(&[&[2], &[], &[1], &[1]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b2", "b1"]);
    assert_eq!(succs(&order, 0), [1]);
    assert_eq!(succs(&order, 1), [2]);
    assert!(succs(&order, 2).is_empty());
    assert_eq!(order.pred_indices(LoweredIndex(2)), [LoweredIndex(1)]);
    // One block alone; a chain whose last block is cold or that loops back takes the
    // general search (the cold block still sinks last, the loop keeps its contract).
    assert_eq!(describe(&compute(&function(&[&[]], &[]))), ["b0"]);
    let cold = function(&[&[1], &[2], &[]], &[1]);
    assert_eq!(describe(&compute(&cold)), ["b0", "b2", "b1"]);
    let looping = function(&[&[1], &[2], &[1]], &[]);
    assert_eq!(describe(&compute(&looping)), ["b0", "b1", "b2"]);
}

#[test]
fn a_critical_edge_gets_an_edge_block() {
    // b0: brif -> b1, b2; b1: jump b2 — the edge b0 -> b2 is critical.
    let f = function(&[&[1, 2], &[2], &[]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b1", "e0.1", "b2"]);
    assert_eq!(succs(&order, 0), [1, 2]);
    assert_eq!(succs(&order, 2), [3]);
    assert_eq!(
        order.lowered_order()[2],
        LoweredBlock::Edge {
            from: Block::new(0),
            succ_index: 1,
            to: Block::new(2)
        }
    );
}

#[test]
fn a_loop_back_edge_from_a_two_way_branch_is_split() {
    // b0: jump b1; b1: brif -> b1, b2; b2: return
    let f = function(&[&[1], &[1, 2], &[]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b1", "e1.0", "b2"]);
    assert_eq!(succs(&order, 1), [2, 3]);
    assert_eq!(succs(&order, 2), [1]);
}

#[test]
fn a_branch_to_the_entry_is_split() {
    // b0: brif -> b1, b2; b1: brif -> b0, b2; b2: return
    let f = function(&[&[1, 2], &[0, 2], &[]], &[]);
    let order = compute(&f);
    // The entry heads a loop {b0, b1}; both exits to b2 come after it, b0's first.
    assert_eq!(describe(&order), ["b0", "b1", "e1.0", "e0.1", "e1.1", "b2"]);
}

#[test]
fn both_slots_to_one_block_get_their_own_edge_blocks() {
    let f = function(&[&[1, 1], &[]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "e0.0", "e0.1", "b1"]);
}

#[test]
fn br_table_slots_and_unreachable_blocks() {
    // b0: br_table -> b1 (default), b2, b1; b3 is unreachable.
    let f = function(&[&[1, 2, 1], &[], &[], &[1]], &[]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "e0.0", "b2", "e0.2", "b1"]);
    assert_eq!(order.lowered_index_for_block(Block::new(3)), None);
    assert_eq!(succs(&order, 0), [1, 2, 3]);
}

#[test]
fn cold_blocks_sink_to_the_end_unless_chaos_skips_it() {
    // b0: brif -> b1 (cold), b2; b1: jump b3; b2: jump b3; b3: return
    let f = function(&[&[1, 2], &[3], &[3], &[]], &[1]);
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b2", "b3", "b1"]);
    assert!(order.is_cold(LoweredIndex(3)));
    assert!(!order.is_cold(LoweredIndex(0)));

    let unsunk = BlockLoweringOrder::new(&f, &mut Chaos::skip_all());
    check_properties(&f, &unsunk, false);
    assert_eq!(describe(&unsunk), ["b0", "b1", "b2", "b3"]);
}

#[test]
fn random_cfgs_satisfy_the_contract() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..300 {
        let n = 1 + next(10);
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|_| {
                let k = [0, 1, 2, 2, 3][next(5)];
                (0..k).map(|_| next(n)).collect()
            })
            .collect();
        let cold: Vec<usize> = (1..n).filter(|_| next(6) == 0).collect();
        let refs: Vec<&[usize]> = succs.iter().map(|s| s.as_slice()).collect();
        let f = function(&refs, &cold);
        let order = compute(&f);
        let unsunk = BlockLoweringOrder::new(&f, &mut Chaos::skip_all());
        check_properties(&f, &unsunk, false);
        assert_eq!(order.len(), unsunk.len());
    }
}

fn parse(text: &str) -> Function {
    let mut funcs = kestrel_ir::parse_functions(text, "test.clif").expect("parses");
    let f = funcs.pop().expect("one function");
    kestrel_ir::verify_function(&f).expect("verifies");
    f
}

#[test]
fn clif_loop_with_an_if_inside() {
    let f = parse(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             jump block1(v0)
         block1(v1: i32):
             brif v1, block2, block3
         block2:
             v9 = iconst.i32 1
             v2 = isub v1, v9
             brif v2, block1(v2), block4
         block3:
             return v1
         block4:
             v3 = iconst.i32 7
             return v3
         }",
    );
    let unrotated = compute_unrotated(&f);
    // block1 has two incoming slots and block2 two outgoing ones: the back edge is split and
    // stays in the loop; the exits follow the loop, the header's first.
    assert_eq!(describe(&unrotated), ["b0", "b1", "b2", "e2.0", "b3", "b4"]);
    // Rotated: the split back edge falls through into the header, which ends the loop.
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b2", "e2.0", "b1", "b3", "b4"]);
    let e = order.lowered_order()[2];
    assert_eq!(
        e,
        LoweredBlock::Edge {
            from: Block::new(2),
            succ_index: 0,
            to: Block::new(1)
        }
    );
    assert_eq!(succs(&order, 2), [3]);
    assert_eq!(
        succs(&order, 3),
        [1, 4],
        "the header branches back to the loop's top"
    );
}

#[test]
fn clif_cold_block_and_br_table() {
    let f = parse(
        "function %g(i32) -> i32 {
         block0(v0: i32):
             br_table v0, block3, [block1, block2, block1]
         block1:
             v1 = iconst.i32 1
             jump block4
         block2 cold:
             trap user1
         block3:
             v2 = iconst.i32 3
             jump block4
         block4:
             return v0
         }",
    );
    let order = compute(&f);
    assert_eq!(*describe(&order).last().unwrap(), "b2");
    assert!(order.is_cold(order.lowered_index_for_block(Block::new(2)).unwrap()));
    // Slots 1 and 3 both go to block1, which therefore has two incoming slots: both split.
    let b0 = order.lowered_index_for_block(Block::new(0)).unwrap();
    let kinds: Vec<bool> = order
        .succ_indices(b0)
        .iter()
        .map(|s| order.lowered_order()[s.index()].orig_block().is_none())
        .collect();
    assert_eq!(kinds, [false, true, false, true]);
}

/// Emit toy code for `f` in lowered order (a mark per IR block, naive two-target branches,
/// a jump per edge block) under `chaos`.
fn emit_toy(f: &Function, chaos: &mut Chaos) -> crate::machinst::buffer::MachBufferFinalized {
    use crate::machinst::buffer::toy::{self, ToyBuffer};
    let order = BlockLoweringOrder::new(f, chaos);
    let mut buf = ToyBuffer::new();
    let labels: Vec<_> = (0..order.len()).map(|_| buf.get_label()).collect();
    for (i, lb) in order.iter() {
        buf.bind_label(labels[i.index()], chaos);
        let succ: Vec<_> = order
            .succ_indices(i)
            .iter()
            .map(|s| labels[s.index()])
            .collect();
        if let LoweredBlock::Orig(b) = lb {
            toy::mark(&mut buf, b.index() as u8);
        }
        match succ[..] {
            [] => buf.put1(toy::HALT),
            [to] => toy::jmp(&mut buf, to, false),
            [taken, not_taken] => toy::brif(&mut buf, i.index() as u8, taken, not_taken, false),
            _ => panic!("toy lowering has no br_table"),
        }
    }
    buf.finish(chaos).expect("finish")
}

#[test]
fn lowered_diamond_and_loop_have_no_jump_to_next() {
    use crate::machinst::buffer::toy;
    let f = parse(
        "function %h(i32) -> i32 {
         block0(v0: i32):
             brif v0, block1, block2
         block1:
             jump block3(v0)
         block2:
             v1 = iconst.i32 1
             jump block3(v1)
         block3(v2: i32):
             brif v2, block3(v2), block4
         block4:
             return v2
         }",
    );
    let opt = emit_toy(&f, &mut Chaos::disabled());
    let naive = emit_toy(&f, &mut Chaos::skip_all());
    for events in 0..12 {
        assert_eq!(toy::run(&opt, events), toy::run(&naive, events));
    }
    // Walk the optimized code: no branch targets the instruction right after it.
    let (mut at, mut branches) = (0, 0);
    while at < opt.data.len() {
        let (len, target) = match opt.data[at] {
            toy::MARK => (2, None),
            toy::HALT => (1, None),
            toy::JMP => (5, Some(1)),
            toy::BRT | toy::BRF => (6, Some(2)),
            op => panic!("unexpected opcode {op:#x} at {at}"),
        };
        if let Some(field) = target {
            let d = i32::from_le_bytes(opt.data[at + field..at + len].try_into().unwrap());
            assert_ne!(d, 0, "branch at {at} jumps to the next instruction");
            branches += 1;
        }
        at += len;
    }
    // Naive: two per brif, one per jump and per edge block, 7 in all. Optimized: block0's
    // inverted branch, block1's jump over block2, and block3's loop branch, whose edge block
    // is threaded away.
    assert_eq!(branches, 3, "{:02x?}", opt.data);
}

/// Successor lists of a test CFG as plain indices.
type Cfg<'a> = &'a [&'a [usize]];

/// Is the CFG reducible? It is iff removing the edges to a dominator leaves no cycle among
/// the reachable blocks (checked by a topological sort).
fn is_reducible(f: &Function, succs: Cfg) -> bool {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let reach = |i: usize| dt.is_reachable(Block::new(i));
    let forward = |u: usize, v: usize| !dt.dominates(Block::new(v), Block::new(u), &f.layout);
    let mut indegree = vec![0usize; succs.len()];
    for u in (0..succs.len()).filter(|&u| reach(u)) {
        for &v in succs[u].iter().filter(|&&v| forward(u, v)) {
            indegree[v] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..succs.len())
        .filter(|&u| reach(u) && indegree[u] == 0)
        .collect();
    let mut sorted = 0;
    while let Some(u) = ready.pop() {
        sorted += 1;
        for &v in succs[u].iter().filter(|&&v| forward(u, v)) {
            indegree[v] -= 1;
            if indegree[v] == 0 {
                ready.push(v);
            }
        }
    }
    sorted == (0..succs.len()).filter(|&u| reach(u)).count()
}

/// The natural loops of a reducible CFG, computed the textbook way (quadratic, for tests):
/// per header, the blocks that reach one of its back-edge sources without passing it.
fn natural_loops(f: &Function, succs: Cfg) -> Vec<(usize, Vec<bool>)> {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let n = succs.len();
    let mut preds = vec![Vec::new(); n];
    for (u, ss) in succs.iter().enumerate() {
        for &v in ss.iter() {
            preds[v].push(u);
        }
    }
    let mut loops: Vec<(usize, Vec<bool>)> = Vec::new();
    for h in (0..n).filter(|&h| dt.is_reachable(Block::new(h))) {
        let latches: Vec<usize> = preds[h]
            .iter()
            .copied()
            .filter(|&u| {
                dt.is_reachable(Block::new(u))
                    && dt.dominates(Block::new(h), Block::new(u), &f.layout)
            })
            .collect();
        if latches.is_empty() {
            continue;
        }
        let mut body = vec![false; n];
        body[h] = true;
        let mut work = latches;
        while let Some(u) = work.pop() {
            if !std::mem::replace(&mut body[u], true) {
                work.extend(preds[u].iter().filter(|&&p| dt.is_reachable(Block::new(p))));
            }
        }
        loops.push((h, body));
    }
    loops
}

/// Every natural loop is contiguous and starts at its header, or ends with it when rotated
/// (then the block before the header falls into it), edge blocks inside it join two of its
/// blocks, its exits come after it, and the loop depth the register allocator derives from
/// the layout's back edges equals the natural loop depth.
fn check_loop_layout(f: &Function, succs: Cfg, order: &BlockLoweringOrder) {
    let pos = |b: usize| {
        order
            .lowered_index_for_block(Block::new(b))
            .unwrap()
            .index()
    };
    let lowered = order.lowered_order();
    let loops = natural_loops(f, succs);
    for (h, body) in &loops {
        let in_body = (0..succs.len()).filter(|&b| body[b]).map(pos);
        let start = in_body.clone().min().unwrap();
        let end = in_body.max().unwrap();
        for (i, lb) in lowered.iter().enumerate().take(end + 1).skip(start) {
            let inside = match *lb {
                LoweredBlock::Orig(b) => body[b.index()],
                LoweredBlock::Edge { from, to, .. } => body[from.index()] && body[to.index()],
            };
            assert!(
                inside,
                "loop at b{h} is not contiguous at {i}: {:?}",
                describe(order)
            );
        }
        let at = pos(*h);
        assert!(
            at == start || at == end,
            "loop at b{h} neither starts nor ends with its header: {:?}",
            describe(order)
        );
        if at != start {
            let latch = LoweredIndex::new(at - 1);
            assert!(order.succ_indices(latch).contains(&LoweredIndex::new(at)));
        }
        for u in (0..succs.len()).filter(|&u| body[u]) {
            for &x in succs[u].iter().filter(|&&x| !body[x]) {
                let dominates = loops.iter().any(|(g, b)| *g == x && b[u]);
                assert!(
                    dominates || pos(x) > end,
                    "exit b{u} -> b{x}: {:?}",
                    describe(order)
                );
            }
        }
    }
    // Layout loop depth: every backward edge of the layout closes one natural loop (into its
    // header, or out of a rotated header back to its top); per loop, the range from the
    // first target to the last source.
    let block_of = |lb: LoweredBlock| match lb {
        LoweredBlock::Orig(b) => b.index(),
        LoweredBlock::Edge { from, .. } => from.index(),
    };
    let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
    for (i, lb) in order.iter() {
        for &t in order.succ_indices(i) {
            if t <= i {
                let (src, dst) = (block_of(lb), block_of(lowered[t.index()]));
                let closes = |h: usize| loops.iter().any(|(g, b)| *g == h && b[src] && b[dst]);
                let header = if closes(dst) && matches!(lowered[t.index()], LoweredBlock::Orig(_)) {
                    dst
                } else {
                    assert!(
                        closes(src) && matches!(lb, LoweredBlock::Orig(_)),
                        "backward edge {i:?} -> {t:?} closes no loop: {:?}",
                        describe(order)
                    );
                    src
                };
                match ranges.iter_mut().find(|r| r.0 == header) {
                    Some(r) => *r = (header, r.1.min(t.index()), r.2.max(i.index())),
                    None => ranges.push((header, t.index(), i.index())),
                }
            }
        }
    }
    for b in (0..succs.len()).filter(|&b| order.lowered_index_for_block(Block::new(b)).is_some()) {
        let natural = loops.iter().filter(|(_, body)| body[b]).count();
        let laid_out = ranges
            .iter()
            .filter(|r| r.1 <= pos(b) && pos(b) <= r.2)
            .count();
        assert_eq!(
            natural,
            laid_out,
            "loop depth of b{b}: {:?}",
            describe(order)
        );
    }
}

#[test]
fn a_top_tested_loop_keeps_its_body_on_the_fall_through() {
    // b1: brif -> b3 (exit), b2 (body); b2: jump b1.
    let succs: Cfg = &[&[1], &[3, 2], &[1], &[]];
    let f = function(succs, &[]);
    let unrotated = compute_unrotated(&f);
    assert_eq!(describe(&unrotated), ["b0", "b1", "b2", "b3"]);
    check_loop_layout(&f, succs, &unrotated);
    // Rotated, the latch b2 falls through into the header b1, which branches back to it.
    let order = compute(&f);
    assert_eq!(describe(&order), ["b0", "b2", "b1", "b3"]);
    assert_eq!(super::tests::succs(&order, 2), [3, 1]);
    check_loop_layout(&f, succs, &order);
    // The plain reverse postorder puts the exit on the fall-through instead.
    let plain = BlockLoweringOrder::new(&f, &mut Chaos::skip_all());
    check_properties(&f, &plain, false);
    assert_eq!(describe(&plain), ["b0", "b1", "b3", "b2"]);
}

#[test]
fn nested_loops_are_contiguous_inside_their_parent() {
    // Outer loop b1 {b1..b4}: exit b5. Inner loop b2 {b2, b3}: exit b4, which continues the
    // outer loop; b3 also breaks out of both loops to b6.
    let succs: Cfg = &[&[1], &[5, 2], &[4, 3], &[6, 2], &[1], &[], &[]];
    let f = function(succs, &[]);
    let unrotated = compute_unrotated(&f);
    check_loop_layout(&f, succs, &unrotated);
    assert_eq!(
        describe(&unrotated),
        ["b0", "b1", "e1.1", "b2", "b3", "e3.1", "b4", "b6", "b5"]
    );
    // Both loops rotated: each header ends its loop, the inner one inside the outer one.
    let order = compute(&f);
    check_loop_layout(&f, succs, &order);
    assert_eq!(
        describe(&order),
        ["b0", "e1.1", "b3", "e3.1", "b2", "b4", "b1", "b6", "b5"]
    );
}

#[test]
fn clif_collatz_loops_fall_through_into_their_bodies() {
    let f = parse(
        "function %c(i64, i64) -> i64 {
         block0(v0: i64, v1: i64):
             v2 = iconst.i64 1
             jump block1(v2, v2)
         block1(v4: i64, v5: i64):
             v6 = icmp ult v4, v1
             brif v6, block2(v4, v5), block7
         block2(v7: i64, v8: i64):
             v10 = icmp eq v7, v2
             brif v10, block6, block3
         block3:
             v12 = band v7, v2
             brif v12, block4, block5
         block4:
             v16 = iadd v7, v2
             jump block2(v16, v8)
         block5:
             v20 = ushr v7, v2
             jump block2(v20, v8)
         block6:
             v24 = iadd v4, v2
             jump block1(v24, v8)
         block7:
             return v5
         }",
    );
    let unrotated = compute_unrotated(&f);
    // The inner loop (block2..block5) follows its header; its exit block6 comes after it,
    // then the outer loop's exit block7.
    assert_eq!(
        describe(&unrotated),
        ["b0", "b1", "e1.0", "b2", "b3", "b4", "b5", "b6", "b7"]
    );
    // The outer loop has one latch (block6) and is rotated; the inner one has two
    // (block4, block5) and keeps its header first.
    let order = compute(&f);
    assert_eq!(
        describe(&order),
        ["b0", "e1.0", "b2", "b3", "b4", "b5", "b6", "b1", "b7"]
    );
}

#[test]
fn an_irreducible_cycle_is_laid_out_once_and_after_its_dominators() {
    // b1 and b2 form a cycle entered at both: neither dominates the other.
    let succs: Cfg = &[&[1, 2], &[2, 3], &[1, 3], &[]];
    let f = function(succs, &[]);
    assert!(!is_reducible(&f, succs));
    let order = compute(&f);
    assert_eq!(order.len(), 4 + 6, "four blocks, every edge critical");
    // A loop around the cycle, entered only at its header, is still contiguous.
    let succs: Cfg = &[&[1], &[2, 5], &[3, 4], &[4, 1], &[3, 1], &[]];
    let f = function(succs, &[]);
    assert!(!is_reducible(&f, succs));
    let order = compute(&f);
    let b5 = order.lowered_index_for_block(Block::new(5)).unwrap();
    assert_eq!(
        b5.index(),
        order.len() - 1,
        "the exit comes last: {:?}",
        describe(&order)
    );
}

#[test]
fn a_cold_block_in_a_loop_sinks_and_the_hot_loop_stays_contiguous() {
    // b1 {b1..b4}: b2 branches to the cold b3 or to b4; the exit b5.
    let succs: Cfg = &[&[1], &[2, 5], &[3, 4], &[4], &[1], &[]];
    let f = function(succs, &[3]);
    let unrotated = compute_unrotated(&f);
    assert_eq!(
        describe(&unrotated),
        ["b0", "b1", "b2", "e2.1", "b4", "b5", "b3"]
    );
    let order = compute(&f);
    assert_eq!(
        describe(&order),
        ["b0", "b2", "e2.1", "b4", "b1", "b5", "b3"]
    );
    let unsunk = BlockLoweringOrder::new(&f, &mut Chaos::skip_all());
    check_properties(&f, &unsunk, false);
}

#[test]
fn random_reducible_cfgs_get_contiguous_loops() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut checked = 0;
    for _ in 0..2000 {
        let n = 2 + next(12);
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|_| {
                let k = [0, 1, 1, 2, 2, 3][next(6)];
                (0..k).map(|_| next(n)).collect()
            })
            .collect();
        let refs: Vec<&[usize]> = succs.iter().map(|s| s.as_slice()).collect();
        let f = function(&refs, &[]);
        let order = compute(&f);
        let unrotated = compute_unrotated(&f);
        if is_reducible(&f, &refs) {
            check_loop_layout(&f, &refs, &order);
            check_loop_layout(&f, &refs, &unrotated);
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} reducible CFGs");
}
