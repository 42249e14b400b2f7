//! The interpreter's memory: a stack of frames holding explicit stack slots.
//!
//! Addresses are integers in a private address space: stack memory starts at
//! [`STACK_BASE`] (small enough that `i32` addresses work too) and grows upward one frame per
//! call. An access is valid only if every byte lies inside the live part of the stack;
//! anything else (null, a dangling frame, a function address) is an out-of-bounds access,
//! which traps. Values are stored little-endian unless the access says `big`.

use kestrel_ir::immediates::Endianness;

/// Address of the first byte of stack memory.
pub const STACK_BASE: u64 = 0x0001_0000;
/// Where the stack pointer would start if the interpreter's stack grew down like a
/// machine's (the top of a 47-bit user address space): `stack_limit` checks compare with
/// this minus the bytes in use.
pub const VIRTUAL_STACK_TOP: u64 = 1 << 47;
/// Largest total stack size before a call traps with `stk_ovf`.
pub const STACK_LIMIT: usize = 64 << 20;

/// Byte-addressed stack memory.
#[derive(Default, Debug)]
pub struct Memory {
    bytes: Vec<u8>,
}

/// An access outside live memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OutOfBounds;

impl Memory {
    /// Current top of the stack, as an offset (a frame mark).
    pub fn top(&self) -> usize {
        self.bytes.len()
    }

    /// Reserve `size` zeroed bytes aligned to `align` (a power of two); returns the address.
    /// `None` when the stack limit would be exceeded.
    pub fn push_frame_bytes(&mut self, size: usize, align: usize) -> Option<u64> {
        let start = self.bytes.len().next_multiple_of(align.max(1));
        let end = start.checked_add(size)?;
        if end > STACK_LIMIT {
            return None;
        }
        self.bytes.resize(end, 0);
        Some(STACK_BASE + start as u64)
    }

    /// Pop everything above `mark` (a previous [`Self::top`]).
    pub fn pop_to(&mut self, mark: usize) {
        self.bytes.truncate(mark);
    }

    fn range(&self, addr: u64, len: usize) -> Result<std::ops::Range<usize>, OutOfBounds> {
        let offset = addr.checked_sub(STACK_BASE).ok_or(OutOfBounds)? as usize;
        let end = offset.checked_add(len).ok_or(OutOfBounds)?;
        if end > self.bytes.len() {
            return Err(OutOfBounds);
        }
        Ok(offset..end)
    }

    /// Load `len` bytes (1..=16) as a zero-extended integer.
    pub fn load(&self, addr: u64, len: usize, endian: Endianness) -> Result<u128, OutOfBounds> {
        let r = self.range(addr, len)?;
        let mut buf = [0u8; 16];
        buf[..len].copy_from_slice(&self.bytes[r]);
        if endian == Endianness::Big {
            buf[..len].reverse();
        }
        Ok(u128::from_le_bytes(buf))
    }

    /// Store the low `len` bytes (1..=16) of `value`.
    pub fn store(
        &mut self,
        addr: u64,
        len: usize,
        value: u128,
        endian: Endianness,
    ) -> Result<(), OutOfBounds> {
        let r = self.range(addr, len)?;
        let mut buf = value.to_le_bytes();
        if endian == Endianness::Big {
            buf[..len].reverse();
        }
        self.bytes[r].copy_from_slice(&buf[..len]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_loads_and_stores() {
        let mut m = Memory::default();
        let mark = m.top();
        let a = m.push_frame_bytes(16, 8).unwrap();
        m.store(a, 4, 0x1122_3344, Endianness::Little).unwrap();
        assert_eq!(m.load(a, 4, Endianness::Little), Ok(0x1122_3344));
        assert_eq!(m.load(a, 1, Endianness::Little), Ok(0x44));
        assert_eq!(m.load(a, 4, Endianness::Big), Ok(0x4433_2211));
        assert_eq!(m.load(a + 13, 4, Endianness::Little), Err(OutOfBounds));
        assert_eq!(m.load(0, 1, Endianness::Little), Err(OutOfBounds));
        m.pop_to(mark);
        assert_eq!(m.load(a, 1, Endianness::Little), Err(OutOfBounds));
        assert!(m.push_frame_bytes(STACK_LIMIT + 1, 1).is_none());
    }
}
