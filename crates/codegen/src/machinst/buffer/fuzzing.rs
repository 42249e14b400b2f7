//! Randomized differential testing of the `MachBuffer` on the [toy](super::toy) ISA.
//!
//! Bytes decode into a program: label binds, marks, padding, short and long jumps, naive
//! two-target branches, single conditional branches, calls, constant loads, traps and halts.
//! The program is emitted four times, with islands whenever the buffer asks for one: with
//! every optional transformation skipped (the naive baseline), with none skipped, and under
//! two chaos controls (seeded from the bytes, and reading the input's last bytes as
//! decisions). All four must finish and, run on the toy interpreter, produce the same events
//! and the same ending. The buffer's invariants are checked after every bind and island
//! along the way (debug builds) and before every `finish`.

use kestrel_ir::TrapCode;

use super::toy::{self, Outcome, ToyBuffer};
use super::{Label, MachBufferFinalized};
use crate::chaos::Chaos;

/// Labels a program can name.
const NUM_LABELS: usize = 12;
/// Events after which a run stops (loops are common in random programs).
const MAX_EVENTS: usize = 64;
/// Most bytes one operation (plus an island's jump-around) emits.
const MAX_OP_SIZE: u32 = 48 + 5;

/// One step of a generated program.
#[derive(Copy, Clone, Debug)]
enum Op {
    Bind(usize),
    Mark(u8),
    Pad(u8),
    Jmp { to: usize, short: bool },
    Br { c: u8, when: bool, to: usize, short: bool },
    Brif { c: u8, taken: usize, not_taken: usize, short: bool },
    Call(u32),
    Load(usize),
    Trap(u8),
    Halt,
}

/// A generated program: constants, then operations.
#[derive(Clone, Debug, Default)]
struct Program {
    constants: Vec<(Vec<u8>, u32)>,
    ops: Vec<Op>,
}

impl Program {
    fn decode(bytes: &[u8]) -> Program {
        let mut it = bytes.iter().copied();
        let mut next = move || it.next();
        let mut p = Program::default();
        let nconst = next().map_or(0, |b| b % 4) as usize;
        for k in 0..nconst {
            let len = 1 + (k % 3);
            let bytes = (0..len).map(|i| (k * 16 + i) as u8 | 0x40).collect();
            p.constants.push((bytes, 1 << (k % 3)));
        }
        let label = |b: u8| b as usize % NUM_LABELS;
        while let (Some(kind), Some(a)) = (next(), next()) {
            let short = a & 0x80 != 0;
            let op = match kind % 16 {
                0..=3 => Op::Bind(label(a)),
                4 => Op::Mark(a),
                5 => Op::Pad(a % 48),
                6 | 7 => Op::Jmp {
                    to: label(a),
                    short,
                },
                8 | 9 => Op::Brif {
                    c: kind >> 4,
                    taken: label(a),
                    not_taken: label(a >> 4),
                    short,
                },
                10 => Op::Br {
                    c: kind >> 4,
                    when: a & 0x40 != 0,
                    to: label(a),
                    short,
                },
                11 => Op::Call(u32::from(a % 8)),
                12 if nconst > 0 => Op::Load(a as usize % nconst),
                // Endings are rarer than the rest, so runs go on for a while.
                13 if a < 64 => Op::Trap(a % 4),
                14 if a < 64 => Op::Halt,
                13 | 14 => Op::Pad(a % 48),
                _ => Op::Mark(kind),
            };
            p.ops.push(op);
        }
        p
    }

    /// Emit the program into a fresh buffer under `chaos` and finish it.
    fn build(&self, chaos: &mut Chaos) -> MachBufferFinalized {
        let mut buf = ToyBuffer::new();
        let labels: Vec<Label> = (0..NUM_LABELS).map(|_| buf.get_label()).collect();
        let mut bound = [false; NUM_LABELS];
        let consts: Vec<Label> = self
            .constants
            .iter()
            .map(|(bytes, align)| buf.add_constant(bytes, *align))
            .collect();
        for &op in &self.ops {
            if buf.island_needed(MAX_OP_SIZE) {
                let over = buf.get_label();
                toy::jmp(&mut buf, over, false);
                buf.emit_island(MAX_OP_SIZE, chaos);
                buf.bind_label(over, chaos);
            }
            match op {
                Op::Bind(l) if !bound[l] => {
                    bound[l] = true;
                    buf.bind_label(labels[l], chaos);
                }
                Op::Bind(_) => {}
                Op::Mark(id) => toy::mark(&mut buf, id),
                Op::Pad(n) => (0..n).for_each(|_| buf.put1(toy::NOP)),
                Op::Jmp { to, short } => toy::jmp(&mut buf, labels[to], short),
                Op::Br { c, when, to, short } => toy::br(&mut buf, c, when, labels[to], short),
                Op::Brif {
                    c,
                    taken,
                    not_taken,
                    short,
                } => toy::brif(&mut buf, c, labels[taken], labels[not_taken], short),
                Op::Call(f) => toy::call(&mut buf, f),
                Op::Load(k) => toy::load(&mut buf, consts[k]),
                Op::Trap(code) => toy::trap(&mut buf, TrapCode::user(code + 1).expect("user code")),
                Op::Halt => buf.put1(toy::HALT),
            }
        }
        // Every label a branch may name is bound, at the end if nowhere else, before a halt.
        for (l, done) in labels.iter().zip(bound) {
            if !done {
                buf.bind_label(*l, chaos);
            }
        }
        buf.put1(toy::HALT);
        if let Err(e) = buf.check_invariants() {
            panic!("invariant violated before finish: {e}");
        }
        match buf.finish(chaos) {
            Ok(code) => code,
            Err(e) => panic!("finish failed: {e}\nprogram: {self:?}"),
        }
    }
}

/// Decode `bytes` into a toy program, emit it naively, optimized and under chaos controls
/// derived from the bytes, and check that all builds behave the same. Panics on a difference.
pub fn check_random_sequence(bytes: &[u8]) {
    let program = Program::decode(bytes);
    let naive = program.build(&mut Chaos::skip_all());
    let optimized = program.build(&mut Chaos::disabled());
    let seed = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mixed = program.build(&mut Chaos::from_seed(seed));
    // Decisions the fuzzer can steer directly: one bit per question, from the input's end.
    let steered = program.build(&mut Chaos::from_bytes(
        &bytes[bytes.len().saturating_sub(32)..],
    ));

    let expected = toy::run(&naive, MAX_EVENTS);
    let check = |name: &str, code: &MachBufferFinalized| {
        let got: Outcome = toy::run(code, MAX_EVENTS);
        assert_eq!(
            got, expected,
            "{name} code behaves differently from the naive code\nprogram: {program:?}\n\
             naive: {:02x?}\n{name}: {:02x?}",
            naive.data, code.data
        );
    };
    check("optimized", &optimized);
    check("chaos", &mixed);
    check("steered", &steered);
    assert!(
        matches!(
            expected.end,
            toy::End::Halt | toy::End::Trap(_) | toy::End::Spin | toy::End::Limit
        ),
        "naive code ended badly: {expected:?}\nprogram: {program:?}"
    );
}
