//! `.eh_frame` from the code generator's unwind records (`CompiledCode::unwind`).
//!
//! # Contract
//!
//! One CIE per ISA (its entry rules, [`UnwindCie`]) and one FDE per function, whose
//! instructions are the function's [`UnwindOp`]s at their code offsets (ops at or past the
//! end of the code are dropped: nothing executes there). Two address forms:
//! - [`EhFrameBuilder::absolute`]: FDEs hold absolute addresses (`DW_EH_PE_absptr`), for
//!   code already placed in memory (the JIT registers the section with the unwinder);
//! - [`EhFrameBuilder::relocatable`]: FDEs hold 4-byte PC-relative pointers (`pcrel|sdata4`)
//!   against function symbols, returned as [`EhReloc`]s for an object file.
//!
//! The section ends with a zero terminator, as `__register_frame` and linkers expect.
//!
//! Cost: O(functions + unwind records).

use gimli::write::{
    Address, CallFrameInstruction, CommonInformationEntry, EhFrame, FrameDescriptionEntry,
    FrameTable, Writer,
};
use gimli::{Encoding, Format, Register};

use crate::section_writer::{RelocTarget, SectionWriter};
use kestrel_codegen::machinst::unwind::{UnwindCie, UnwindOp};

/// A 4-byte PC-relative reference from `.eh_frame` at `offset` to function `symbol`
/// (the index given to [`EhFrameBuilder::add_function`]) plus `addend`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct EhReloc {
    pub offset: u32,
    pub symbol: usize,
    pub addend: i64,
}

/// Collects functions, then writes the section.
pub struct EhFrameBuilder {
    table: FrameTable,
    cie: gimli::write::CieId,
    relocatable: bool,
}

impl EhFrameBuilder {
    /// FDEs at absolute addresses (code already in memory).
    pub fn absolute(cie: &UnwindCie) -> Self {
        Self::new(cie, false)
    }

    /// FDEs with relocations against function symbols (an object file).
    pub fn relocatable(cie: &UnwindCie) -> Self {
        Self::new(cie, true)
    }

    fn new(cie: &UnwindCie, relocatable: bool) -> Self {
        let encoding = Encoding {
            format: Format::Dwarf32,
            version: 1,
            address_size: 8,
        };
        let mut entry = CommonInformationEntry::new(
            encoding,
            cie.code_align,
            cie.data_align,
            Register(cie.ra_reg),
        );
        entry.add_instruction(CallFrameInstruction::Cfa(
            Register(cie.sp_reg),
            cie.cfa_offset as i32,
        ));
        if let Some(off) = cie.ra_offset {
            entry.add_instruction(CallFrameInstruction::Offset(Register(cie.ra_reg), off));
        }
        if relocatable {
            entry.fde_address_encoding = gimli::DW_EH_PE_pcrel | gimli::DW_EH_PE_sdata4;
        }
        let mut table = FrameTable::default();
        let cie = table.add_cie(entry);
        EhFrameBuilder {
            table,
            cie,
            relocatable,
        }
    }

    /// Describe a function of `len` bytes with these unwind records. `at` is its address
    /// (absolute builder) or its symbol index (relocatable builder).
    pub fn add_function(&mut self, at: u64, len: u32, unwind: &[(u32, UnwindOp)]) {
        let address = if self.relocatable {
            Address::Symbol {
                symbol: at as usize,
                addend: 0,
            }
        } else {
            Address::Constant(at)
        };
        let mut fde = FrameDescriptionEntry::new(address, len);
        for &(offset, op) in unwind.iter().filter(|&&(o, _)| o < len) {
            fde.add_instruction(offset, instruction(op));
        }
        self.table.add_fde(self.cie, fde);
    }

    /// The section bytes (zero-terminated) and, for a relocatable builder, its relocations.
    pub fn finish(self) -> (Vec<u8>, Vec<EhReloc>) {
        let mut out = EhFrame::from(SectionWriter::new(self.relocatable));
        self.table
            .write_eh_frame(&mut out)
            .expect("the records Kestrel emits are encodable");
        let mut w = out.0;
        w.bytes.write_u32(0).expect("writing to a Vec");
        // An FDE refers only to its function, PC-relatively: no other relocation arises.
        debug_assert!(w.relocs.iter().all(|r| r.pc_relative));
        let relocs = w
            .relocs
            .iter()
            .filter_map(|r| match r.target {
                RelocTarget::Symbol(symbol) => Some(EhReloc {
                    offset: r.offset,
                    symbol,
                    addend: r.addend,
                }),
                RelocTarget::Section(_) => None,
            })
            .collect();
        (w.bytes.into_vec(), relocs)
    }
}

fn instruction(op: UnwindOp) -> CallFrameInstruction {
    match op {
        UnwindOp::DefCfa { reg, offset } => CallFrameInstruction::Cfa(Register(reg), offset as i32),
        UnwindOp::DefCfaRegister { reg } => CallFrameInstruction::CfaRegister(Register(reg)),
        UnwindOp::DefCfaOffset { offset } => CallFrameInstruction::CfaOffset(offset as i32),
        UnwindOp::SaveReg { reg, cfa_offset } => {
            CallFrameInstruction::Offset(Register(reg), cfa_offset)
        }
        UnwindOp::RememberState => CallFrameInstruction::RememberState,
        UnwindOp::RestoreState => CallFrameInstruction::RestoreState,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimli::{BaseAddresses, CieOrFde, EhFrame as ReadEhFrame, LittleEndian, UnwindSection};

    /// The x86-64 CIE, as its `TargetIsa` gives it.
    fn cie() -> UnwindCie {
        let isa = kestrel_codegen::isa::lookup("x86_64").unwrap().finish();
        *isa.unwind_cie()
    }

    fn prologue() -> Vec<(u32, UnwindOp)> {
        vec![
            (1, UnwindOp::DefCfaOffset { offset: 16 }),
            (
                1,
                UnwindOp::SaveReg {
                    reg: 6,
                    cfa_offset: -16,
                },
            ),
            (4, UnwindOp::DefCfaRegister { reg: 6 }),
            (20, UnwindOp::RememberState),
            (24, UnwindOp::DefCfa { reg: 7, offset: 8 }),
            (25, UnwindOp::RestoreState),
            (40, UnwindOp::RestoreState), // at the end: dropped
        ]
    }

    #[test]
    fn absolute_section_reads_back_with_the_rules_at_each_offset() {
        let mut b = EhFrameBuilder::absolute(&cie());
        b.add_function(0x1000, 40, &prologue());
        let (bytes, relocs) = b.finish();
        assert!(relocs.is_empty());
        assert_eq!(&bytes[bytes.len() - 4..], &[0, 0, 0, 0]);
        let section = ReadEhFrame::new(&bytes, LittleEndian);
        let bases = BaseAddresses::default();
        let mut ctx = gimli::UnwindContext::new();
        let fde = section
            .fde_for_address(&bases, 0x1010, ReadEhFrame::cie_from_offset)
            .expect("an FDE covers the body");
        let mut cfa_at = |addr: u64| {
            let row = fde
                .unwind_info_for_address(&section, &bases, &mut ctx, addr)
                .expect("a row");
            match *row.cfa() {
                gimli::CfaRule::RegisterAndOffset { register, offset } => (register.0, offset),
                _ => panic!("an expression CFA"),
            }
        };
        assert_eq!(cfa_at(0x1000), (7, 8), "entry: CFA = rsp + 8");
        assert_eq!(cfa_at(0x1010), (6, 16), "body: CFA = rbp + 16");
        assert_eq!(cfa_at(0x1018), (7, 8), "after pop rbp: CFA = rsp + 8");
        assert_eq!(cfa_at(0x1019), (6, 16), "after the ret: the body's rules");
    }

    #[test]
    fn relocatable_section_has_one_pc_relative_reference_per_function() {
        let mut b = EhFrameBuilder::relocatable(&cie());
        b.add_function(3, 40, &prologue());
        b.add_function(5, 8, &[]);
        let (bytes, relocs) = b.finish();
        assert_eq!(relocs.len(), 2);
        assert_eq!((relocs[0].symbol, relocs[1].symbol), (3, 5));
        let section = ReadEhFrame::new(&bytes, LittleEndian);
        let bases = BaseAddresses::default();
        let mut entries = section.entries(&bases);
        let mut fdes = 0;
        while let Some(entry) = entries.next().expect("well-formed") {
            if let CieOrFde::Fde(_) = entry {
                fdes += 1;
            }
        }
        assert_eq!(fdes, 2);
    }
}
