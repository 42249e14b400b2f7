//! Atomic memory access: exclusive loads and stores (`ldxr`, `ldaxr`, `stxr`, `stlxr`, and
//! the 64-bit pair forms `ldaxp`, `stlxp`),
//! load-acquire and store-release (`ldar`, `stlr`), and the LSE (Armv8.1) read-modify-write
//! operations (`ldadd`, `ldclr`, `ldeor`, `ldset`, `ldsmax`, `ldsmin`, `ldumax`, `ldumin`,
//! `swp`) and compare-and-swap (`cas`), each with its ordering variants.
//!
//! # Contract
//!
//! - Every form addresses `[rn]` with an SP-capable base and no offset, at a [`MemSize`];
//!   data registers are `w` up to 32 bits and `x` for 64.
//! - The ordering picks the mnemonic suffix: `a` (acquire), `l` (release), `al` (both).
//! - An LSE operation whose result register is ZR and that does not acquire is printed as
//!   its `st…` alias (`stadd`, `stclr`, …); it is the same encoding.
//! - A `stxr` status register equal to the data register or the base is CONSTRAINED
//!   UNPREDICTABLE and caught by a `debug_assert!`.

use super::regs::{GprSp, GprZr, MemSize};
use super::{ra_field, rd_field, rm_field, rn_field, WordSink};

const EXCLUSIVE: u32 = 0x0800_0000;

/// Fields of a load/store-exclusive-group word: size, `o2`/`L`/`o1`/`o0` bits and registers.
fn exclusive(size: MemSize, bits: u32, rs: u8, rt: GprZr, rn: GprSp) -> u32 {
    EXCLUSIVE
        | (size.log2_bytes() << 30)
        | bits
        | rm_field(rs)
        | ra_field(31)
        | rn_field(rn.enc())
        | rd_field(rt.enc())
}

const L: u32 = 1 << 22;
const O0: u32 = 1 << 15;
const O2: u32 = 1 << 23;

/// `ldxr rt, [rn]`: load exclusive.
pub fn ldxr(sink: &mut impl WordSink, size: MemSize, rt: GprZr, rn: GprSp) {
    sink.put_word(exclusive(size, L, 31, rt, rn));
}

/// `ldaxr rt, [rn]`: load-acquire exclusive.
pub fn ldaxr(sink: &mut impl WordSink, size: MemSize, rt: GprZr, rn: GprSp) {
    sink.put_word(exclusive(size, L | O0, 31, rt, rn));
}

fn check_status(rs: GprZr, rt: GprZr, rn: GprSp) {
    debug_assert!(
        rs != rt && (rn.gpr().is_none() || rs.enc() != rn.enc()),
        "stxr status register {rs:?} overlaps the data or the base"
    );
}

/// `stxr ws, rt, [rn]`: store exclusive; `ws` is 0 on success, 1 on failure.
pub fn stxr(sink: &mut impl WordSink, size: MemSize, rs: GprZr, rt: GprZr, rn: GprSp) {
    check_status(rs, rt, rn);
    sink.put_word(exclusive(size, 0, rs.enc(), rt, rn));
}

/// `stlxr ws, rt, [rn]`: store-release exclusive.
pub fn stlxr(sink: &mut impl WordSink, size: MemSize, rs: GprZr, rt: GprZr, rn: GprSp) {
    check_status(rs, rt, rn);
    sink.put_word(exclusive(size, O0, rs.enc(), rt, rn));
}

const O1: u32 = 1 << 21;

/// A pair exclusive (64-bit registers `rt`, `rt2`): the exclusive group with `o1` set and
/// `rt2` in the `Rt2` field.
fn exclusive_pair(bits: u32, rs: u8, rt: GprZr, rt2: GprZr, rn: GprSp) -> u32 {
    EXCLUSIVE
        | (MemSize::S64.log2_bytes() << 30)
        | O1
        | bits
        | rm_field(rs)
        | ra_field(rt2.enc())
        | rn_field(rn.enc())
        | rd_field(rt.enc())
}

/// `ldaxp rt, rt2, [rn]`: load-acquire exclusive of 16 bytes (`rt` the lower 8). `rt` and
/// `rt2` must differ (CONSTRAINED UNPREDICTABLE otherwise; a `debug_assert!`).
pub fn ldaxp(sink: &mut impl WordSink, rt: GprZr, rt2: GprZr, rn: GprSp) {
    debug_assert!(rt != rt2, "ldaxp into one register twice");
    sink.put_word(exclusive_pair(L | O0, 31, rt, rt2, rn));
}

/// `stlxp ws, rt, rt2, [rn]`: store-release exclusive of 16 bytes; `ws` is 0 on success.
pub fn stlxp(sink: &mut impl WordSink, rs: GprZr, rt: GprZr, rt2: GprZr, rn: GprSp) {
    check_status(rs, rt, rn);
    check_status(rs, rt2, rn);
    sink.put_word(exclusive_pair(O0, rs.enc(), rt, rt2, rn));
}

/// `ldar rt, [rn]`: load-acquire.
pub fn ldar(sink: &mut impl WordSink, size: MemSize, rt: GprZr, rn: GprSp) {
    sink.put_word(exclusive(size, O2 | L | O0, 31, rt, rn));
}

/// `stlr rt, [rn]`: store-release.
pub fn stlr(sink: &mut impl WordSink, size: MemSize, rt: GprZr, rn: GprSp) {
    sink.put_word(exclusive(size, O2 | O0, 31, rt, rn));
}

/// Memory ordering of an LSE operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ordering {
    /// No ordering (no suffix).
    Relaxed,
    /// Acquire (`a`).
    Acquire,
    /// Release (`l`).
    Release,
    /// Acquire and release (`al`).
    AcqRel,
}

impl Ordering {
    /// All orderings.
    pub const ALL: [Ordering; 4] = [
        Ordering::Relaxed,
        Ordering::Acquire,
        Ordering::Release,
        Ordering::AcqRel,
    ];

    /// Whether it acquires and whether it releases.
    pub const fn parts(self) -> (bool, bool) {
        match self {
            Ordering::Relaxed => (false, false),
            Ordering::Acquire => (true, false),
            Ordering::Release => (false, true),
            Ordering::AcqRel => (true, true),
        }
    }
}

/// An LSE read-modify-write operation: `rt = [rn]; [rn] = op([rn], rs)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    /// Clear the bits set in `rs` (and-not).
    Clr,
    Eor,
    /// Set the bits set in `rs` (or).
    Set,
    Smax,
    Smin,
    Umax,
    Umin,
    /// Store `rs`.
    Swp,
}

impl AtomicOp {
    /// All operations.
    pub const ALL: [AtomicOp; 9] = [
        AtomicOp::Add,
        AtomicOp::Clr,
        AtomicOp::Eor,
        AtomicOp::Set,
        AtomicOp::Smax,
        AtomicOp::Smin,
        AtomicOp::Umax,
        AtomicOp::Umin,
        AtomicOp::Swp,
    ];

    /// `o3` and `opc` (bits 12–15).
    const fn bits(self) -> u32 {
        let o3_opc = match self {
            AtomicOp::Add => 0,
            AtomicOp::Clr => 1,
            AtomicOp::Eor => 2,
            AtomicOp::Set => 3,
            AtomicOp::Smax => 4,
            AtomicOp::Smin => 5,
            AtomicOp::Umax => 6,
            AtomicOp::Umin => 7,
            AtomicOp::Swp => 8,
        };
        o3_opc << 12
    }
}

/// `ld<op>{a}{l}{b,h} rs, rt, [rn]` or `swp…`: atomically apply `op` with `rs`, returning
/// the old value in `rt`.
pub fn atomic_rmw(
    sink: &mut impl WordSink,
    op: AtomicOp,
    size: MemSize,
    order: Ordering,
    rs: GprZr,
    rt: GprZr,
    rn: GprSp,
) {
    let (acquire, release) = order.parts();
    let word = 0x3820_0000 | (size.log2_bytes() << 30) | (u32::from(acquire) << 23);
    let word = word | (u32::from(release) << 22) | rm_field(rs.enc()) | op.bits();
    sink.put_word(word | rn_field(rn.enc()) | rd_field(rt.enc()));
}

/// `cas{a}{l}{b,h} rs, rt, [rn]`: if `[rn] == rs` store `rt`; `rs` receives the old value.
pub fn cas(
    sink: &mut impl WordSink,
    size: MemSize,
    order: Ordering,
    rs: GprZr,
    rt: GprZr,
    rn: GprSp,
) {
    let (acquire, release) = order.parts();
    let bits = (1 << 23) | (1 << 21) | (u32::from(acquire) << 22) | (u32::from(release) << 15);
    sink.put_word(exclusive(size, bits, rs.enc(), rt, rn));
}
