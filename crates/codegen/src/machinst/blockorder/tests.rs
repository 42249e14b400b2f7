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
/// `brif v0`; more: `br_table v0` with the first as default) and is cold when listed.
fn function(succs: &[&[usize]], cold: &[usize]) -> Function {
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
                    match lowered[s.index()] {
                        LoweredBlock::Orig(t) => assert_eq!(t, d.block),
                        LoweredBlock::Edge {
                            from,
                            succ_index,
                            to,
                        } => assert_eq!((from, succ_index as usize, to), (b, k, d.block)),
                    }
                }
                // Without cold blocks, every block comes after its immediate dominator.
                if !sunk || !order.iter().any(|(j, _)| order.is_cold(j)) {
                    if let Some(idom) = dt.idom(b) {
                        assert!(order.lowered_index_for_block(idom).unwrap() < i);
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
        assert_eq!(seen[b.index()], dt.is_reachable(b), "{b}");
    }
    if sunk {
        let first_cold = order.iter().position(|(i, _)| order.is_cold(i));
        if let Some(k) = first_cold {
            assert!(order.iter().skip(k).all(|(i, _)| order.is_cold(i)));
        }
    }
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
    assert_eq!(describe(&order), ["b0", "b1", "e1.0", "e1.1", "e0.1", "b2"]);
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
    let order = compute(&f);
    // block1 has two incoming slots and block2 two outgoing ones: the back edge is split.
    assert_eq!(describe(&order), ["b0", "b1", "b2", "e2.0", "b4", "b3"]);
    let e = order.lowered_order()[3];
    assert_eq!(
        e,
        LoweredBlock::Edge {
            from: Block::new(2),
            succ_index: 0,
            to: Block::new(1)
        }
    );
    assert_eq!(succs(&order, 3), [1]);
}

#[test]
fn clif_cold_block_and_br_table() {
    let f = parse(
        "function %g(i32) -> i32 {
         block0(v0: i32):
             br_table v0, block3, [block1, block2, block1]
         block1:
             jump block4
         block2 cold:
             trap user1
         block3:
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
