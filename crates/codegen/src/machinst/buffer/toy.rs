//! A toy instruction set for testing the `MachBuffer`: 1-byte opcodes, x86-like little-endian
//! displacements measured from the end of the displacement field, a short (8-bit) branch
//! form that needs veneers, and an interpreter that runs finished code.
//!
//! | bytes | instruction |
//! |---|---|
//! | `00` | `halt` |
//! | `01` | `nop` |
//! | `02 id` | `mark id` — records an event |
//! | `03` | `trap` — must be a trap site; ends the run with its code |
//! | `04 a32` | `call` — `a32` carries an `Abs4` relocation to `User { 0, index }`; event |
//! | `05 d32` | `load` — reads the byte at the label (`Data32`); event |
//! | `10 d32` / `11 d8` | `jmp` (long / short) |
//! | `12 c d32` / `13 c d32` | `br c` taken when condition `c` is true / false |
//! | `14 c d8` / `15 c d8` | the short forms |
//!
//! Condition `c` is a pure function of `c` and the number of events so far, so two correct
//! compilations of one program see the same conditions and produce the same events.

use kestrel_ir::{FunctionName, TrapCode};

use super::{Label, LabelUse, MachBuffer, MachBufferFinalized, RelocKind};

pub const HALT: u8 = 0x00;
pub const NOP: u8 = 0x01;
pub const MARK: u8 = 0x02;
pub const TRAP: u8 = 0x03;
pub const CALL: u8 = 0x04;
pub const LOAD: u8 = 0x05;
pub const JMP: u8 = 0x10;
pub const JMP8: u8 = 0x11;
pub const BRT: u8 = 0x12;
pub const BRF: u8 = 0x13;
pub const BRT8: u8 = 0x14;
pub const BRF8: u8 = 0x15;

/// The toy's label-use kinds.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ToyUse {
    /// 8-bit branch displacement; veneers through a long `jmp`.
    Rel8,
    /// 32-bit branch displacement.
    Rel32,
    /// 32-bit data displacement (no veneer: data cannot be reached through a jump).
    Data32,
}

impl LabelUse for ToyUse {
    const ALIGN: u32 = 1;
    const MAX_VENEER_SIZE: u32 = 5;

    fn max_pos_range(self) -> u32 {
        match self {
            // disp = label - (use + 1) <= 127
            ToyUse::Rel8 => 128,
            ToyUse::Rel32 | ToyUse::Data32 => i32::MAX as u32,
        }
    }

    fn max_neg_range(self) -> u32 {
        match self {
            // disp >= -128
            ToyUse::Rel8 => 127,
            ToyUse::Rel32 | ToyUse::Data32 => i32::MAX as u32 - 4,
        }
    }

    fn patch_size(self) -> u32 {
        match self {
            ToyUse::Rel8 => 1,
            ToyUse::Rel32 | ToyUse::Data32 => 4,
        }
    }

    fn patch(self, bytes: &mut [u8], use_offset: u32, label_offset: u32) {
        let disp = i64::from(label_offset) - i64::from(use_offset + self.patch_size());
        match self {
            ToyUse::Rel8 => bytes[0] = i8::try_from(disp).expect("rel8 in range") as u8,
            ToyUse::Rel32 | ToyUse::Data32 => {
                let d = i32::try_from(disp).expect("rel32 in range");
                bytes.copy_from_slice(&d.to_le_bytes());
            }
        }
    }

    fn supports_veneer(self) -> bool {
        self == ToyUse::Rel8
    }

    fn veneer_size(self) -> u32 {
        5
    }

    fn generate_veneer(self, bytes: &mut [u8], veneer_offset: u32) -> (u32, Self) {
        bytes[0] = JMP;
        (veneer_offset + 1, ToyUse::Rel32)
    }
}

/// The toy's buffer.
pub type ToyBuffer = MachBuffer<ToyUse>;

/// Emit `jmp label` (short form if `short`) and describe it to the buffer.
pub fn jmp(buf: &mut ToyBuffer, label: Label, short: bool) {
    let start = buf.cur_offset();
    if short {
        buf.put_data(&[JMP8, 0]);
        buf.use_label_at_offset(start + 1, label, ToyUse::Rel8);
    } else {
        buf.put1(JMP);
        buf.put4(0);
        buf.use_label_at_offset(start + 1, label, ToyUse::Rel32);
    }
    buf.add_uncond_branch(start, buf.cur_offset(), label);
}

/// Emit `br c` to `label`, taken when condition `c` equals `when`.
pub fn br(buf: &mut ToyBuffer, c: u8, when: bool, label: Label, short: bool) {
    let start = buf.cur_offset();
    let (op, kind) = match (short, when) {
        (false, true) => (BRT, ToyUse::Rel32),
        (false, false) => (BRF, ToyUse::Rel32),
        (true, true) => (BRT8, ToyUse::Rel8),
        (true, false) => (BRF8, ToyUse::Rel8),
    };
    let inverted_op = op ^ 1;
    let len = 2 + kind.patch_size() as usize;
    let mut inst = [0u8; 6];
    inst[0] = op;
    inst[1] = c;
    buf.put_data(&inst[..len]);
    inst[0] = inverted_op;
    buf.use_label_at_offset(start + 2, label, kind);
    buf.add_cond_branch(start, buf.cur_offset(), label, &inst[..len]);
}

/// The naive two-target branch: `br c, taken; jmp not_taken`.
pub fn brif(buf: &mut ToyBuffer, c: u8, taken: Label, not_taken: Label, short: bool) {
    br(buf, c, true, taken, short);
    jmp(buf, not_taken, short);
}

/// Emit `mark id`.
pub fn mark(buf: &mut ToyBuffer, id: u8) {
    buf.put_data(&[MARK, id]);
}

/// Emit a trap site with `code`.
pub fn trap(buf: &mut ToyBuffer, code: TrapCode) {
    buf.add_trap(code);
    buf.put1(TRAP);
}

/// Emit a call of external function `index` (through a relocation).
pub fn call(buf: &mut ToyBuffer, index: u32) {
    let start = buf.cur_offset();
    buf.put1(CALL);
    buf.put4(0);
    let target = FunctionName::User {
        namespace: 0,
        index,
    };
    buf.add_reloc(start + 1, RelocKind::Abs4, target, 0);
}

/// Emit a load of the byte at `label` (a constant).
pub fn load(buf: &mut ToyBuffer, label: Label) {
    let start = buf.cur_offset();
    buf.put1(LOAD);
    buf.put4(0);
    buf.use_label_at_offset(start + 1, label, ToyUse::Data32);
}

/// What a run observed, in order.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Event {
    Mark(u8),
    Call(u32),
    Load(u8),
}

/// How a run ended.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum End {
    Halt,
    Trap(TrapCode),
    /// Ran past the last byte.
    FellOff,
    /// Looped forever without an event.
    Spin,
    /// Reached the event limit.
    Limit,
    /// Bad opcode, bad target, or missing metadata at this offset.
    Fault(u32),
}

/// A finished run.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Outcome {
    pub events: Vec<Event>,
    pub end: End,
}

/// Condition `c` after `events` events.
pub fn condition(c: u8, events: usize) -> bool {
    let x = (u64::from(c) << 32 | events as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 61) & 1 == 1
}

/// Run finished toy code from offset 0 until it ends or records `max_events` events.
pub fn run(code: &MachBufferFinalized, max_events: usize) -> Outcome {
    let data = &code.data;
    let mut events = Vec::new();
    let mut pc: i64 = 0;
    let mut quiet_steps = 0usize;
    let end = loop {
        if events.len() >= max_events {
            break End::Limit;
        }
        // Between events the state is just `pc`, so a run longer than the code is a loop.
        if quiet_steps > data.len() {
            break End::Spin;
        }
        quiet_steps += 1;
        let Ok(at) = usize::try_from(pc) else {
            break End::Fault(pc as u32);
        };
        if at == data.len() {
            break End::FellOff;
        }
        let fault = End::Fault(at as u32);
        let bytes = |n: usize| data.get(at..at + n);
        let rel = |field: usize, size: usize| -> Option<i64> {
            let b = data.get(at + field..at + field + size)?;
            let d = match size {
                1 => i64::from(b[0] as i8),
                _ => i64::from(i32::from_le_bytes(b.try_into().ok()?)),
            };
            Some((at + field + size) as i64 + d)
        };
        let Some(&op) = data.get(at) else {
            break fault;
        };
        match op {
            HALT => break End::Halt,
            NOP => pc += 1,
            MARK => {
                let Some(b) = bytes(2) else { break fault };
                events.push(Event::Mark(b[1]));
                quiet_steps = 0;
                pc += 2;
            }
            TRAP => match code.trap_at(at as u32) {
                Some(c) => break End::Trap(c),
                None => break fault,
            },
            CALL => {
                let reloc = code.relocs.iter().find(|r| r.offset == at as u32 + 1);
                match reloc.map(|r| (&r.target, r.kind)) {
                    Some((FunctionName::User { index, .. }, RelocKind::Abs4)) => {
                        events.push(Event::Call(*index));
                        quiet_steps = 0;
                        pc += 5;
                    }
                    _ => break fault,
                }
            }
            LOAD => {
                let Some(v) = rel(1, 4).and_then(|t| data.get(usize::try_from(t).ok()?)) else {
                    break fault;
                };
                events.push(Event::Load(*v));
                quiet_steps = 0;
                pc += 5;
            }
            JMP | JMP8 => {
                let size = if op == JMP { 4 } else { 1 };
                let Some(t) = rel(1, size) else { break fault };
                pc = t;
            }
            BRT | BRF | BRT8 | BRF8 => {
                let size = if op <= BRF { 4 } else { 1 };
                let Some(t) = rel(2, size) else { break fault };
                let want = op == BRT || op == BRT8;
                pc = if condition(data[at + 1], events.len()) == want {
                    t
                } else {
                    (at + 2 + size) as i64
                };
            }
            _ => break fault,
        }
    };
    Outcome { events, end }
}
