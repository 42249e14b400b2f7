//! Unit tests of the `MachBuffer` on the toy ISA: each peephole rule and their combinations,
//! islands with the short-range kind, the constant pool, traps, relocations, errors, and a
//! seeded smoke run of the randomized differential test.

use kestrel_ir::{FunctionName, TrapCode};

use super::toy::{self, ToyBuffer, BRF, BRT, HALT, JMP, MARK, NOP};
use super::{BufferError, Label, MachBufferFinalized, RelocKind};
use crate::chaos::Chaos;

fn on() -> Chaos {
    Chaos::disabled()
}

fn finish(buf: ToyBuffer) -> MachBufferFinalized {
    buf.finish(&mut on()).expect("finish")
}

/// The absolute target of the branch at `at` in finished code.
fn target_of(code: &MachBufferFinalized, at: usize) -> u32 {
    let d = &code.data;
    let (field, size) = match d[at] {
        toy::JMP => (1, 4),
        toy::JMP8 => (1, 1),
        toy::BRT | toy::BRF => (2, 4),
        toy::BRT8 | toy::BRF8 => (2, 1),
        op => panic!("no branch at {at}: {op:#x}"),
    };
    let disp = if size == 1 {
        i64::from(d[at + field] as i8)
    } else {
        i64::from(i32::from_le_bytes(
            d[at + field..at + field + 4].try_into().unwrap(),
        ))
    };
    ((at + field + size) as i64 + disp) as u32
}

fn labels(buf: &mut ToyBuffer, n: usize) -> Vec<Label> {
    (0..n).map(|_| buf.get_label()).collect()
}

fn bind(buf: &mut ToyBuffer, l: Label) {
    buf.bind_label(l, &mut on());
}

#[test]
fn rule1_jump_to_next_is_removed() {
    let mut buf = ToyBuffer::new();
    let l = buf.get_label();
    toy::mark(&mut buf, 1);
    toy::jmp(&mut buf, l, false);
    bind(&mut buf, l);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.data, [MARK, 1, HALT]);
    assert_eq!(code.label_offset(l), Some(2));
}

#[test]
fn rule1_conditional_branch_to_next_is_removed() {
    let mut buf = ToyBuffer::new();
    let l = buf.get_label();
    toy::br(&mut buf, 3, true, l, false);
    bind(&mut buf, l);
    buf.put1(HALT);
    assert_eq!(finish(buf).data, [HALT]);
}

#[test]
fn rule2_inverts_a_conditional_branch_over_a_jump() {
    // brif c, L1, L2; L1: mark 1; halt; L2: mark 2; halt
    let mut buf = ToyBuffer::new();
    let [l1, l2] = labels(&mut buf, 2)[..] else {
        unreachable!()
    };
    toy::brif(&mut buf, 5, l1, l2, false);
    bind(&mut buf, l1);
    toy::mark(&mut buf, 1);
    buf.put1(HALT);
    bind(&mut buf, l2);
    toy::mark(&mut buf, 2);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.data[0], BRF, "condition inverted");
    assert_eq!(code.data[1], 5);
    assert_eq!(code.data.len(), 6 + 3 + 3);
    assert_eq!(target_of(&code, 0), code.label_offset(l2).unwrap());
    assert_eq!(code.label_offset(l1), Some(6));
}

#[test]
fn two_target_branch_to_the_not_taken_block_keeps_one_branch() {
    // brif c, L1, L2; L2: …; L1: …
    let mut buf = ToyBuffer::new();
    let [l1, l2] = labels(&mut buf, 2)[..] else {
        unreachable!()
    };
    toy::brif(&mut buf, 5, l1, l2, false);
    bind(&mut buf, l2);
    toy::mark(&mut buf, 2);
    bind(&mut buf, l1);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.data[0], BRT);
    assert_eq!(code.data.len(), 6 + 2 + 1);
    assert_eq!(target_of(&code, 0), 8);
}

#[test]
fn a_second_label_at_the_same_offset_still_enables_inversion() {
    let mut buf = ToyBuffer::new();
    let [l0, l1, l2] = labels(&mut buf, 3)[..] else {
        unreachable!()
    };
    toy::brif(&mut buf, 1, l1, l2, false);
    bind(&mut buf, l0);
    bind(&mut buf, l1);
    buf.put1(HALT);
    bind(&mut buf, l2);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.data[0], BRF);
    assert_eq!(code.label_offset(l0), Some(6));
}

#[test]
fn rule3_threads_jumps_through_aliases() {
    // mark 0; jmp L1; L4: halt; L1: jmp L2; L5: halt; L2: jmp L3; L6: halt; L3: mark 3; halt
    let mut buf = ToyBuffer::new();
    let l = labels(&mut buf, 7);
    toy::mark(&mut buf, 0);
    toy::jmp(&mut buf, l[1], false);
    bind(&mut buf, l[4]);
    buf.put1(HALT);
    bind(&mut buf, l[1]);
    toy::jmp(&mut buf, l[2], false);
    bind(&mut buf, l[5]);
    buf.put1(HALT);
    bind(&mut buf, l[2]);
    toy::jmp(&mut buf, l[3], false);
    bind(&mut buf, l[6]);
    buf.put1(HALT);
    bind(&mut buf, l[3]);
    toy::mark(&mut buf, 3);
    buf.put1(HALT);
    let code = finish(buf);
    let end = code.label_offset(l[3]).unwrap();
    assert_eq!(target_of(&code, 2), end, "first jump goes straight to L3");
    assert_eq!(code.label_offset(l[1]), Some(end));
    assert_eq!(code.label_offset(l[2]), Some(end));
    // The intermediate jumps stay (other code may reach them by offset), threaded too.
    assert_eq!(code.data[8], JMP);
    assert_eq!(target_of(&code, 8), end);
}

#[test]
fn a_chain_of_jumps_to_next_collapses() {
    // mark 0; jmp L1; L1: jmp L2; L2: jmp L3; L3: halt
    let mut buf = ToyBuffer::new();
    let l = labels(&mut buf, 3);
    toy::mark(&mut buf, 0);
    for &label in &l {
        toy::jmp(&mut buf, label, false);
        bind(&mut buf, label);
    }
    buf.put1(HALT);
    assert_eq!(finish(buf).data, [MARK, 0, HALT]);
}

#[test]
fn rule4_removes_a_jump_after_a_jump() {
    let mut buf = ToyBuffer::new();
    let [l1, l2, l3] = labels(&mut buf, 3)[..] else {
        unreachable!()
    };
    bind(&mut buf, l1);
    toy::mark(&mut buf, 1);
    toy::jmp(&mut buf, l1, false);
    toy::jmp(&mut buf, l2, false);
    bind(&mut buf, l3);
    bind(&mut buf, l2);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.data.len(), 2 + 5 + 1);
    assert_eq!(target_of(&code, 2), 0);
}

#[test]
fn a_self_loop_is_never_aliased_to_itself() {
    // L: jmp L; M: halt — and L1: jmp L2; X: halt; L2: jmp L1; Y: halt
    let mut buf = ToyBuffer::new();
    let l = labels(&mut buf, 6);
    bind(&mut buf, l[0]);
    toy::jmp(&mut buf, l[0], false);
    bind(&mut buf, l[1]);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(target_of(&code, 0), 0);
    assert_eq!(toy::run(&code, 4).end, toy::End::Spin);

    let mut buf = ToyBuffer::new();
    let l = labels(&mut buf, 4);
    toy::jmp(&mut buf, l[0], false);
    bind(&mut buf, l[2]);
    buf.put1(HALT);
    bind(&mut buf, l[0]);
    toy::jmp(&mut buf, l[1], false);
    bind(&mut buf, l[3]);
    buf.put1(HALT);
    bind(&mut buf, l[1]);
    toy::jmp(&mut buf, l[0], false);
    let x = buf.get_label();
    bind(&mut buf, x);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(toy::run(&code, 4).end, toy::End::Spin);
}

#[test]
fn a_two_jump_cycle_at_one_offset_stays_a_loop() {
    // L1: jmp L2; L2: jmp L1; L3: halt — the first jump goes to next, the second loops.
    let mut buf = ToyBuffer::new();
    let l = labels(&mut buf, 3);
    bind(&mut buf, l[0]);
    toy::jmp(&mut buf, l[1], false);
    bind(&mut buf, l[1]);
    toy::jmp(&mut buf, l[0], false);
    bind(&mut buf, l[2]);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.data.len(), 6);
    assert_eq!(target_of(&code, 0), 0);
}

#[test]
fn threading_enables_inversion_and_skip_all_keeps_naive_code() {
    // brif c, L1, L2; L2 is used elsewhere and bound at the jump's start in a loop:
    // L0: mark; brif c, L1, L0; L1: halt
    let build = |chaos: &mut Chaos| {
        let mut buf = ToyBuffer::new();
        let [l0, l1] = labels(&mut buf, 2)[..] else {
            unreachable!()
        };
        buf.bind_label(l0, chaos);
        toy::mark(&mut buf, 7);
        toy::brif(&mut buf, 2, l1, l0, false);
        buf.bind_label(l1, chaos);
        buf.put1(HALT);
        buf.finish(chaos).unwrap()
    };
    let opt = build(&mut Chaos::disabled());
    assert_eq!(opt.data.len(), 2 + 6 + 1);
    assert_eq!(opt.data[2], BRF);
    assert_eq!(target_of(&opt, 2), 0);
    let naive = build(&mut Chaos::skip_all());
    assert_eq!(naive.data.len(), 2 + 6 + 5 + 1);
    assert_eq!(toy::run(&opt, 16), toy::run(&naive, 16));
}

/// Emit `n` nops, emitting an island (behind a jump) whenever the buffer asks.
fn pad_with_islands(buf: &mut ToyBuffer, n: usize) -> usize {
    let mut islands = 0;
    for _ in 0..n {
        if buf.island_needed(1 + 5) {
            let over = buf.get_label();
            toy::jmp(buf, over, false);
            buf.emit_island(6, &mut on());
            bind(buf, over);
            islands += 1;
        }
        buf.put1(NOP);
    }
    islands
}

#[test]
fn a_short_forward_branch_gets_a_veneer_in_an_island() {
    let mut buf = ToyBuffer::new();
    let l = buf.get_label();
    toy::br(&mut buf, 1, true, l, true);
    assert!(!buf.island_needed(0));
    assert_eq!(pad_with_islands(&mut buf, 300), 1);
    bind(&mut buf, l);
    toy::mark(&mut buf, 9);
    buf.put1(HALT);
    let code = finish(buf);
    let veneer = target_of(&code, 0);
    assert!(veneer <= 128, "veneer at {veneer} within rel8 reach");
    assert_eq!(code.data[veneer as usize], JMP);
    assert_eq!(
        target_of(&code, veneer as usize),
        code.label_offset(l).unwrap()
    );
}

#[test]
fn a_short_backward_branch_out_of_range_gets_a_veneer() {
    let mut buf = ToyBuffer::new();
    let l = buf.get_label();
    bind(&mut buf, l);
    toy::mark(&mut buf, 1);
    pad_with_islands(&mut buf, 200);
    let at = buf.cur_offset() as usize;
    toy::br(&mut buf, 1, true, l, true);
    pad_with_islands(&mut buf, 200);
    buf.put1(HALT);
    let code = finish(buf);
    let veneer = target_of(&code, at);
    assert!(veneer as usize > at && veneer as usize - at <= 128);
    assert_eq!(target_of(&code, veneer as usize), 0);
}

#[test]
fn a_short_branch_in_range_needs_no_veneer_and_chaos_may_force_one() {
    let build = |chaos: &mut Chaos| {
        let mut buf = ToyBuffer::new();
        let l = buf.get_label();
        toy::br(&mut buf, 1, true, l, true);
        toy::mark(&mut buf, 1);
        bind(&mut buf, l);
        buf.put1(HALT);
        buf.finish(chaos).unwrap()
    };
    let direct = build(&mut Chaos::disabled());
    assert_eq!(target_of(&direct, 0), 5);
    let forced = build(&mut Chaos::skip_all());
    let veneer = target_of(&forced, 0) as usize;
    assert_eq!(forced.data[veneer], JMP);
    assert_eq!(target_of(&forced, veneer), 5);
    for cond_events in 0..4 {
        assert_eq!(
            toy::run(&direct, cond_events),
            toy::run(&forced, cond_events)
        );
    }
}

#[test]
fn constants_land_aligned_at_the_end() {
    let mut buf = ToyBuffer::new();
    let a = buf.add_constant(&[0xAB], 1);
    let b = buf.add_constant(&[0xCD, 0xEF], 8);
    toy::load(&mut buf, b);
    toy::load(&mut buf, a);
    buf.put1(HALT);
    let code = finish(buf);
    assert_eq!(code.label_offset(a), Some(11));
    assert_eq!(code.label_offset(b), Some(16));
    assert_eq!(&code.data[16..18], &[0xCD, 0xEF]);
    let out = toy::run(&code, 8);
    assert_eq!(out.events, [toy::Event::Load(0xCD), toy::Event::Load(0xAB)]);
    assert_eq!(out.end, toy::End::Halt);
}

#[test]
fn constant_label_uses_are_patched_through_aliases() {
    // A jump table's shape: data whose words refer to code labels. `l1` is bound at a jump to
    // `l2`, so it becomes an alias and the data word must resolve to `l2`.
    let mut buf = ToyBuffer::new();
    let (l0, l1, l2) = (buf.get_label(), buf.get_label(), buf.get_label());
    let uses = vec![(0, l0, toy::ToyUse::Data32), (4, l1, toy::ToyUse::Data32)];
    let table = buf.add_constant_with_uses(&[0; 8], 4, uses);
    toy::load(&mut buf, table);
    bind(&mut buf, l0);
    toy::mark(&mut buf, 1);
    bind(&mut buf, l1);
    toy::jmp(&mut buf, l2, false);
    // Binding a label after the jump runs the peephole, which threads `l1` to `l2`.
    let after = buf.get_label();
    bind(&mut buf, after);
    toy::mark(&mut buf, 2);
    bind(&mut buf, l2);
    buf.put1(HALT);
    let code = finish(buf);
    let at = code.label_offset(table).unwrap();
    let word = |k: u32| {
        let i = (at + 4 * k) as usize;
        let disp = i32::from_le_bytes(code.data[i..i + 4].try_into().unwrap());
        (i64::from(at + 4 * k + 4) + i64::from(disp)) as u32
    };
    assert_eq!(word(0), code.label_offset(l0).unwrap());
    assert_eq!(word(1), code.label_offset(l2).unwrap());
}

#[test]
fn constants_go_into_an_island_when_one_is_needed() {
    let mut buf = ToyBuffer::new();
    let k = buf.add_constant(&[0x42], 1);
    let l = buf.get_label();
    toy::load(&mut buf, k);
    toy::br(&mut buf, 0, true, l, true);
    pad_with_islands(&mut buf, 300);
    bind(&mut buf, l);
    buf.put1(HALT);
    // The island emitted the constant and patched the load right away.
    assert!(buf.pending_constants.is_empty());
    assert!(buf.deferred_fixups.iter().all(|f| f.label != k));
    let code = finish(buf);
    let at = code.label_offset(k).unwrap() as usize;
    assert!(at < 300, "constant emitted in the island at {at}");
    assert_eq!(code.data[at], 0x42);
    assert_eq!(toy::run(&code, 4).events, [toy::Event::Load(0x42)]);
}

#[test]
fn pooled_constants_share_one_copy() {
    let mut buf = ToyBuffer::new();
    let a = buf.add_pooled_constant(&[0x11, 0x22], 2);
    let b = buf.add_pooled_constant(&[0x11, 0x22], 2);
    // Other bytes, another length, another alignment: each its own copy.
    let c = buf.add_pooled_constant(&[0x11, 0x23], 2);
    let d = buf.add_pooled_constant(&[0x11], 2);
    let e = buf.add_pooled_constant(&[0x11, 0x22], 4);
    assert_eq!(a, b);
    assert!([c, d, e].iter().all(|&l| l != a) && c != d && d != e && c != e);
    toy::load(&mut buf, a);
    toy::load(&mut buf, b);
    toy::load(&mut buf, c);
    buf.put1(HALT);
    let code = finish(buf);
    let at = code.label_offset(a).unwrap() as usize;
    assert_eq!(&code.data[at..at + 2], &[0x11, 0x22]);
    let out = toy::run(&code, 8);
    let ev = toy::Event::Load;
    assert_eq!(out.events, [ev(0x11), ev(0x11), ev(0x11)]);
    // Exactly four copies of data after the code: the shared one, c, d and e.
    let copies = [a, c, d, e]
        .iter()
        .map(|&l| code.label_offset(l).unwrap())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(copies.len(), 4);
}

#[test]
fn a_pooled_constant_emitted_in_an_island_is_not_shared_after_it() {
    let mut buf = ToyBuffer::new();
    let k = buf.add_pooled_constant(&[0x42], 1);
    let l = buf.get_label();
    toy::load(&mut buf, k);
    toy::br(&mut buf, 0, true, l, true);
    pad_with_islands(&mut buf, 300);
    bind(&mut buf, l);
    // The island emitted `k`; the same bytes now get a fresh copy near their use.
    let again = buf.add_pooled_constant(&[0x42], 1);
    assert_ne!(again, k);
    toy::load(&mut buf, again);
    buf.put1(HALT);
    let code = finish(buf);
    assert!(code.label_offset(again).unwrap() > code.label_offset(l).unwrap());
    assert_eq!(
        toy::run(&code, 4).events,
        [toy::Event::Load(0x42), toy::Event::Load(0x42)]
    );
}

#[test]
fn traps_and_relocations_keep_their_offsets_across_edits() {
    let mut buf = ToyBuffer::new();
    let [l1, l2] = labels(&mut buf, 2)[..] else {
        unreachable!()
    };
    toy::jmp(&mut buf, l1, false);
    bind(&mut buf, l1);
    toy::call(&mut buf, 3);
    toy::brif(&mut buf, 0, l2, l1, false);
    bind(&mut buf, l2);
    toy::trap(&mut buf, TrapCode::INTEGER_DIVISION_BY_ZERO);
    let code = finish(buf);
    assert_eq!(code.relocs.len(), 1);
    let r = &code.relocs[0];
    assert_eq!((r.offset, r.kind, r.addend), (1, RelocKind::Abs4, 0));
    assert_eq!(
        r.target,
        FunctionName::User {
            namespace: 0,
            index: 3
        }
    );
    // call (5) + inverted branch (6) then the trap.
    assert_eq!(code.traps.len(), 1);
    assert_eq!(code.traps[0].offset, 11);
    assert_eq!(code.trap_at(11), Some(TrapCode::INTEGER_DIVISION_BY_ZERO));
    assert_eq!(code.data[5], BRF);
}

#[test]
fn a_trap_after_a_branch_stops_the_branch_from_being_edited() {
    // jmp L; trap; L: — the trap site refers to the bytes after the jump.
    let mut buf = ToyBuffer::new();
    let l = buf.get_label();
    toy::jmp(&mut buf, l, false);
    buf.add_trap(TrapCode::STACK_OVERFLOW);
    bind(&mut buf, l);
    buf.put1(toy::TRAP);
    let code = finish(buf);
    assert_eq!(code.data.len(), 6);
    assert_eq!(code.traps[0].offset, 5);
}

#[test]
fn an_unbound_label_is_an_error() {
    let mut buf = ToyBuffer::new();
    let l = buf.get_label();
    toy::jmp(&mut buf, l, false);
    buf.put1(HALT);
    assert_eq!(buf.finish(&mut on()), Err(BufferError::UnboundLabel(l)));
}

#[test]
fn invariants_hold_along_a_mixed_sequence() {
    let mut buf = ToyBuffer::new();
    let l = labels(&mut buf, 4);
    toy::brif(&mut buf, 1, l[0], l[1], true);
    buf.check_invariants().unwrap();
    bind(&mut buf, l[1]);
    toy::jmp(&mut buf, l[2], false);
    bind(&mut buf, l[3]);
    buf.check_invariants().unwrap();
    bind(&mut buf, l[0]);
    bind(&mut buf, l[2]);
    buf.put1(HALT);
    buf.check_invariants().unwrap();
    finish(buf);
}

#[test]
fn random_sequences_behave_like_the_naive_code() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut byte = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 24) as u8
    };
    for i in 0..400 {
        let len = (i * 7) % 240;
        let bytes: Vec<u8> = (0..len).map(|_| byte()).collect();
        super::fuzzing::check_random_sequence(&bytes);
    }
}

/// A buffer whose tail list claims a label that is not bound there (an I2 violation).
fn corrupted(validate: bool) -> (ToyBuffer, Vec<Label>) {
    let mut buf = ToyBuffer::new();
    buf.set_validate(validate);
    let l = labels(&mut buf, 3);
    toy::mark(&mut buf, 1);
    bind(&mut buf, l[0]);
    buf.labels_at_tail.push(l[2]);
    bind(&mut buf, l[1]);
    (buf, l)
}

#[test]
fn validation_reports_a_violation_from_finish() {
    let (buf, _) = corrupted(true);
    match buf.finish(&mut on()) {
        Err(BufferError::Invariant(e)) => assert!(e.starts_with("I2:"), "{e}"),
        other => panic!("expected an invariant error, got {other:?}"),
    }
}

#[test]
#[should_panic(expected = "MachBuffer invariant violated: I2")]
fn without_validation_tests_panic_on_a_violation() {
    corrupted(false);
}

#[test]
fn validation_passes_a_sound_sequence() {
    let mut buf = ToyBuffer::new();
    buf.set_validate(true);
    let l = labels(&mut buf, 2);
    toy::brif(&mut buf, 1, l[0], l[1], true);
    bind(&mut buf, l[0]);
    buf.put1(NOP);
    bind(&mut buf, l[1]);
    buf.put1(HALT);
    finish(buf);
}

#[test]
fn finishing_into_kept_memory_allocates_no_metadata_the_code_lacks() {
    // A buffer made in kept memory, with code but no traps, relocations or unwind rules:
    // those lists stay unallocated; the code and the kept working lists are filled.
    let mut memory = super::BufferMemory::default();
    for round in 0..2 {
        let mut buf = ToyBuffer::reusing(memory, 64, 4);
        let l = buf.get_label();
        toy::jmp(&mut buf, l, false);
        buf.put1(NOP);
        bind(&mut buf, l);
        buf.put1(HALT);
        memory = super::BufferMemory::default();
        let code = buf.finish_into(&mut on(), &mut memory).expect("finish");
        assert_eq!(code.data, [JMP, 1, 0, 0, 0, NOP, HALT], "round {round}");
        assert_eq!(code.traps.capacity(), 0);
        assert_eq!(code.relocs.capacity(), 0);
        assert_eq!(code.unwind.capacity(), 0);
        // `finish_into` leaves the label offsets out; `finish` reports them.
        assert!(code.label_offsets.is_empty());
    }
    // With a trap site, the list is allocated once, with room for the code's usual share.
    let mut buf = ToyBuffer::reusing(memory, 640, 4);
    toy::trap(&mut buf, TrapCode::INTEGER_DIVISION_BY_ZERO);
    let code = buf
        .finish_into(&mut on(), &mut super::BufferMemory::default())
        .expect("finish");
    assert_eq!(code.traps.len(), 1);
    assert!(code.traps.capacity() >= 640 / 16);
}
