//! System and miscellaneous instructions: `nop`, `brk`, `udf`, and the barriers `dmb`,
//! `dsb`, `isb`.

use super::WordSink;

/// `nop`.
pub fn nop(sink: &mut impl WordSink) {
    sink.put_word(0xD503_201F);
}

/// `brk #imm`: a breakpoint exception carrying `imm`.
pub fn brk(sink: &mut impl WordSink, imm: u16) {
    sink.put_word(0xD420_0000 | (u32::from(imm) << 5));
}

/// `udf #imm`: a permanently undefined instruction (raises an undefined-instruction trap).
pub fn udf(sink: &mut impl WordSink, imm: u16) {
    sink.put_word(u32::from(imm));
}

/// The domain and access types a barrier orders (the `CRm` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Barrier {
    /// Outer shareable, loads only.
    OshLd = 0b0001,
    OshSt = 0b0010,
    Osh = 0b0011,
    /// Non-shareable.
    NshLd = 0b0101,
    NshSt = 0b0110,
    Nsh = 0b0111,
    /// Inner shareable: what multithreaded user code needs.
    IshLd = 0b1001,
    IshSt = 0b1010,
    Ish = 0b1011,
    /// Full system.
    Ld = 0b1101,
    St = 0b1110,
    Sy = 0b1111,
}

impl Barrier {
    /// All options.
    pub const ALL: [Barrier; 12] = [
        Barrier::OshLd,
        Barrier::OshSt,
        Barrier::Osh,
        Barrier::NshLd,
        Barrier::NshSt,
        Barrier::Nsh,
        Barrier::IshLd,
        Barrier::IshSt,
        Barrier::Ish,
        Barrier::Ld,
        Barrier::St,
        Barrier::Sy,
    ];
}

/// `dmb option`: orders memory accesses before and after it.
pub fn dmb(sink: &mut impl WordSink, option: Barrier) {
    sink.put_word(0xD503_30BF | ((option as u32) << 8));
}

/// `dsb option`: waits for memory accesses before it to complete.
pub fn dsb(sink: &mut impl WordSink, option: Barrier) {
    sink.put_word(0xD503_309F | ((option as u32) << 8));
}

/// `isb`: flushes the pipeline (after code modification or a system register write).
pub fn isb(sink: &mut impl WordSink) {
    sink.put_word(0xD503_3FDF);
}
