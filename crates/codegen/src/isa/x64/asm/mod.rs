//! The x86-64 assembler layer: one function per instruction form, writing machine code bytes
//! into a [`CodeSink`].
//!
//! # Contract
//!
//! - **Input:** hardware registers ([`Gpr`], [`Xmm`]), operand sizes ([`Size`]), addressing
//!   modes ([`Amode`]) and immediates. Nothing here knows about virtual registers, labels or
//!   relocations; the backend's `Inst` enum and its emitter are built on top of this layer.
//! - **Output:** the shortest standard encoding of the requested form (REX only when needed,
//!   disp8 when the displacement fits, imm8 forms of ALU immediates), written to the sink.
//! - **Fixups:** every function that can write a 32-bit PC-relative field (RIP-relative memory
//!   operands, `jmp`/`jcc`/`call rel32`) returns a [`Rel32Fixup`] telling the caller where the
//!   field is and what it is relative to, so a `MachBuffer` can patch it once the target is
//!   known. Functions that never write such a field return nothing.
//! - **Illegal combinations** (a 64-bit `movzx` source, an 8-bit `imul r, r/m`, `rsp` as an index,
//!   …) are either unrepresentable in the types or rejected by a documented `debug_assert!` at
//!   the top of the function. No function silently produces a different instruction than the one
//!   asked for, except where its doc says it picks among equivalent forms.
//!
//! # Layout
//!
//! - [`regs`]: register and size types, with hardware numbers and names.
//! - [`operands`]: addressing modes and register-or-memory operands.
//! - [`encoding`]: prefixes, REX, ModRM/SIB/displacement selection, VEX; used by every form.
//! - One file per family: [`alu`], [`shift`], [`mul_div`], [`moves`], [`setcc_cmov_jcc`],
//!   [`sse`], [`bits`], [`misc`].
//!
//! Every form is cross-checked against the iced-x86 decoder in the `tests` module.
//!
//! # Example
//!
//! ```
//! use kestrel_codegen::isa::x64::asm::alu::{alu_r_rm, AluOp};
//! use kestrel_codegen::isa::x64::asm::setcc_cmov_jcc::{jcc_rel32, Cc};
//! use kestrel_codegen::isa::x64::asm::{Amode, Gpr, GprMem, Size};
//!
//! let mut code: Vec<u8> = Vec::new();
//! // add rax, r9
//! alu_r_rm(&mut code, AluOp::Add, Size::S64, Gpr::RAX, &GprMem::Reg(Gpr::R9));
//! // add ecx, [rip + constant], patched later
//! let load = alu_r_rm(&mut code, AluOp::Add, Size::S32, Gpr::RCX, &GprMem::Mem(Amode::rip(0)));
//! // jne <label>, patched later
//! let jump = jcc_rel32(&mut code, Cc::NE, 0);
//! assert_eq!(code[..3], [0x49, 0x03, 0xC1]);
//! assert_eq!(load.map(|f| (f.at, f.end)), Some((5, 9)));
//! assert_eq!((jump.at, jump.end), (11, 15));
//! ```

pub mod alu;
pub mod bits;
pub mod encoding;
pub mod misc;
pub mod moves;
pub mod mul_div;
pub mod operands;
pub mod regs;
pub mod setcc_cmov_jcc;
pub mod shift;
pub mod sse;
pub mod vec;

#[cfg(test)]
mod tests;

pub use operands::{Amode, GprMem, Scale, XmmMem};
pub use regs::{Gpr, Size, Xmm};

/// A byte sink that machine code is written into, little-endian.
///
/// `MachBuffer` implements it for real emission; `Vec<u8>` implements it for tests and tools.
pub trait CodeSink {
    /// Appends one byte.
    fn put1(&mut self, byte: u8);

    /// Appends a little-endian 16-bit value.
    fn put2(&mut self, value: u16) {
        for b in value.to_le_bytes() {
            self.put1(b);
        }
    }

    /// Appends a little-endian 32-bit value.
    fn put4(&mut self, value: u32) {
        for b in value.to_le_bytes() {
            self.put1(b);
        }
    }

    /// Appends a little-endian 64-bit value.
    fn put8(&mut self, value: u64) {
        for b in value.to_le_bytes() {
            self.put1(b);
        }
    }

    /// The offset at which the next byte will be written.
    fn current_offset(&self) -> u32;
}

/// A sink for one short instruction on the stack (a branch's inverted form, kept by the
/// buffer's peephole): no heap allocation per branch. Panics past `N` bytes (an encoder bug).
pub struct ArraySink<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> ArraySink<N> {
    pub fn new() -> Self {
        ArraySink {
            bytes: [0; N],
            len: 0,
        }
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl<const N: usize> Default for ArraySink<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> CodeSink for ArraySink<N> {
    fn put1(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }

    fn current_offset(&self) -> u32 {
        self.len as u32
    }
}

impl CodeSink for Vec<u8> {
    fn put1(&mut self, byte: u8) {
        self.push(byte);
    }

    fn put2(&mut self, value: u16) {
        self.extend_from_slice(&value.to_le_bytes());
    }

    fn put4(&mut self, value: u32) {
        self.extend_from_slice(&value.to_le_bytes());
    }

    fn put8(&mut self, value: u64) {
        self.extend_from_slice(&value.to_le_bytes());
    }

    fn current_offset(&self) -> u32 {
        u32::try_from(self.len()).expect("code buffer exceeds 4 GiB")
    }
}

/// Where a 32-bit PC-relative field was written.
///
/// The four bytes at offset `at` hold a little-endian `i32` that the CPU adds to `end`, the
/// offset of the next instruction (`end - at` is 4 plus the size of any immediate that follows
/// the field). The encoder wrote the displacement it was given (the addend, usually 0 for a
/// label use); to make the field point at `target`, store `addend + target - end`, which
/// [`Rel32Fixup::value_for`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rel32Fixup {
    /// Offset of the first byte of the 32-bit field.
    pub at: u32,
    /// Offset the field is relative to: the end of the instruction.
    pub end: u32,
}

impl Rel32Fixup {
    /// The field value that makes the instruction reach `target` (with a zero addend).
    pub fn value_for(&self, target: u32) -> i32 {
        target.wrapping_sub(self.end) as i32
    }

    /// The distance from the field to the end of the instruction (4 + trailing immediate size).
    pub fn bias(&self) -> u32 {
        self.end - self.at
    }
}
