//! A `gimli` section writer shared by the `.eh_frame` and DWARF writers: references that a
//! linker must fix up become relocations, everything else is written in place.
//!
//! # Contract
//!
//! - A symbol address (`Address::Symbol`) is written as zero plus a relocation: absolute at
//!   the address size, or 4-byte PC-relative for an `.eh_frame` pointer encoded
//!   `pcrel|sdata4` (any other encoding of a symbol is an error).
//! - An offset into another section is a relocation against that section in a relocatable
//!   writer, and the plain offset otherwise (a standalone image).
//!
//! Cost: O(bytes + relocations).

use gimli::write::{Address, EndianVec, Writer};
use gimli::{LittleEndian, SectionId};

/// A relocation in a written section.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SectionReloc {
    pub offset: u32,
    /// 4 or 8 bytes.
    pub size: u8,
    pub target: RelocTarget,
    pub addend: i64,
    /// `S + A - P` (an `.eh_frame` pointer) rather than `S + A`.
    pub pc_relative: bool,
}

/// What a [`SectionReloc`] refers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RelocTarget {
    /// A function, by the index its writer was given for it.
    Symbol(usize),
    /// The start of another section, by name (`.debug_line`, ...).
    Section(&'static str),
}

/// See the module documentation.
#[derive(Clone)]
pub struct SectionWriter {
    pub bytes: EndianVec<LittleEndian>,
    pub relocs: Vec<SectionReloc>,
    relocatable: bool,
}

impl SectionWriter {
    /// A writer whose cross-section offsets are relocations (`relocatable`) or plain values.
    pub fn new(relocatable: bool) -> Self {
        SectionWriter {
            bytes: EndianVec::new(LittleEndian),
            relocs: Vec::new(),
            relocatable,
        }
    }

    fn reloc(&mut self, offset: usize, size: u8, target: RelocTarget, addend: i64, pc: bool) {
        self.relocs.push(SectionReloc {
            offset: offset as u32,
            size,
            target,
            addend,
            pc_relative: pc,
        });
    }
}

impl Writer for SectionWriter {
    type Endian = LittleEndian;

    fn endian(&self) -> LittleEndian {
        LittleEndian
    }

    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn write(&mut self, bytes: &[u8]) -> gimli::write::Result<()> {
        self.bytes.write(bytes)
    }

    fn write_at(&mut self, offset: usize, bytes: &[u8]) -> gimli::write::Result<()> {
        self.bytes.write_at(offset, bytes)
    }

    fn write_address(&mut self, address: Address, size: u8) -> gimli::write::Result<()> {
        match address {
            Address::Constant(value) => self.bytes.write_udata(value, size),
            Address::Symbol { symbol, addend } => {
                let at = self.len();
                self.reloc(at, size, RelocTarget::Symbol(symbol), addend, false);
                self.bytes.write_udata(0, size)
            }
        }
    }

    fn write_eh_pointer(
        &mut self,
        address: Address,
        eh_pe: gimli::DwEhPe,
        size: u8,
    ) -> gimli::write::Result<()> {
        match address {
            Address::Symbol { symbol, addend }
                if eh_pe == gimli::DW_EH_PE_pcrel | gimli::DW_EH_PE_sdata4 =>
            {
                let at = self.len();
                self.reloc(at, 4, RelocTarget::Symbol(symbol), addend, true);
                self.bytes.write_u32(0)
            }
            Address::Symbol { .. } => Err(gimli::write::Error::InvalidAddress),
            Address::Constant(_) => self.bytes.write_eh_pointer(address, eh_pe, size),
        }
    }

    fn write_offset(
        &mut self,
        val: usize,
        section: SectionId,
        size: u8,
    ) -> gimli::write::Result<()> {
        if !self.relocatable {
            return self.bytes.write_udata(val as u64, size);
        }
        let at = self.len();
        self.reloc(
            at,
            size,
            RelocTarget::Section(section.name()),
            val as i64,
            false,
        );
        self.bytes.write_udata(0, size)
    }

    fn write_offset_at(
        &mut self,
        offset: usize,
        val: usize,
        section: SectionId,
        size: u8,
    ) -> gimli::write::Result<()> {
        if !self.relocatable {
            return self.bytes.write_udata_at(offset, val as u64, size);
        }
        let target = RelocTarget::Section(section.name());
        self.reloc(offset, size, target, val as i64, false);
        self.bytes.write_udata_at(offset, 0, size)
    }
}
