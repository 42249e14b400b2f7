//! Guest memory as the WASI calls see it: little-endian loads and stores at 32-bit guest
//! addresses, each bounds-checked. An access out of bounds (or whose end overflows) is
//! [`Errno::FAULT`] and touches nothing: a bad guest pointer is the guest's error, never a
//! host crash.
//!
//! Cost: each access copies the bytes it touches (the memory's buffer is never borrowed
//! past one call, so `memory.grow` between calls cannot leave a dangling slice).

use super::abi::Errno;
use crate::runtime::memory::MemoryBox;

/// The memory the calls of one instance read and write.
#[derive(Copy, Clone)]
pub(crate) struct Guest<'a> {
    pub memory: &'a MemoryBox,
}

impl Guest<'_> {
    pub fn read(&self, addr: u32, len: u32) -> Result<Vec<u8>, Errno> {
        self.memory
            .read(addr as u64, len as usize)
            .ok_or(Errno::FAULT)
    }

    pub fn write(&self, addr: u32, bytes: &[u8]) -> Result<(), Errno> {
        if self.memory.write(addr as u64, bytes) {
            Ok(())
        } else {
            Err(Errno::FAULT)
        }
    }

    /// Whether `len` bytes at `addr` are inside the memory.
    pub fn check(&self, addr: u32, len: u64) -> Result<(), Errno> {
        let end = addr as u64 + len;
        if end <= self.memory.pages() * crate::runtime::memory::PAGE_SIZE {
            Ok(())
        } else {
            Err(Errno::FAULT)
        }
    }

    pub fn write_u32(&self, addr: u32, v: u32) -> Result<(), Errno> {
        self.write(addr, &v.to_le_bytes())
    }

    pub fn write_u64(&self, addr: u32, v: u64) -> Result<(), Errno> {
        self.write(addr, &v.to_le_bytes())
    }

    /// A guest string (`ptr`, `len`), which WASI requires to be UTF-8 (`ILSEQ` if not).
    pub fn read_str(&self, addr: u32, len: u32) -> Result<String, Errno> {
        String::from_utf8(self.read(addr, len)?).map_err(|_| Errno::ILSEQ)
    }

    /// The `(buf, len)` pairs of an iovec array of `count` entries at `addr`, each checked
    /// to lie inside memory, so a call can validate every buffer before doing any I/O.
    pub fn iovecs(&self, addr: u32, count: u32) -> Result<Vec<(u32, u32)>, Errno> {
        use super::abi::layout::IOVEC_SIZE;
        let bytes = self.read(addr, count.checked_mul(IOVEC_SIZE).ok_or(Errno::FAULT)?)?;
        let vecs: Vec<(u32, u32)> = bytes
            .chunks_exact(IOVEC_SIZE as usize)
            .map(|c| {
                (
                    u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                    u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                )
            })
            .collect();
        for &(buf, len) in &vecs {
            self.check(buf, len as u64)?;
        }
        Ok(vecs)
    }

    /// Spread `data` over the buffers of `vecs` in order (what `fd_read` fills); the
    /// buffers were checked by [`Guest::iovecs`].
    pub fn scatter(&self, vecs: &[(u32, u32)], mut data: &[u8]) -> Result<(), Errno> {
        for &(buf, len) in vecs {
            if data.is_empty() {
                break;
            }
            let n = data.len().min(len as usize);
            self.write(buf, &data[..n])?;
            data = &data[n..];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_bounds_and_overflowing_accesses_fault_without_writing() {
        let memory = MemoryBox::new(1, None, crate::config::BoundsChecks::Explicit).unwrap();
        let g = Guest { memory: &memory };
        assert_eq!(g.write_u32(65532, 7), Ok(()));
        assert_eq!(g.read(65532, 4), Ok(vec![7, 0, 0, 0]));
        assert_eq!(g.write_u32(65533, 7), Err(Errno::FAULT));
        assert_eq!(g.write_u64(u32::MAX, 7), Err(Errno::FAULT));
        assert_eq!(g.read(u32::MAX, u32::MAX), Err(Errno::FAULT));
        assert_eq!(g.iovecs(0, u32::MAX), Err(Errno::FAULT));
        // An iovec whose buffer runs past the end is refused before any data moves.
        g.write_u32(0, 65530).unwrap();
        g.write_u32(4, 100).unwrap();
        assert_eq!(g.iovecs(0, 1), Err(Errno::FAULT));
        assert_eq!(g.read_str(65535, 1), Ok("\0".into()));
        g.write(10, &[0xff]).unwrap();
        assert_eq!(g.read_str(10, 1), Err(Errno::ILSEQ));
    }
}
