//! The AArch64 backend.
//!
//! So far only the assembler layer exists: [`asm`] encodes instruction forms from hardware
//! registers, sizes, immediates and addressing modes into 32-bit instruction words. Lowering,
//! the ABI and emission will be built on it with the same file shape as `isa::x64`.

pub mod asm;
