//! DWARF debug info from the code generator's source ranges (`CompiledCode::srclocs`).
//!
//! # Contract
//!
//! One compile unit for all the functions given: a `DW_TAG_subprogram` per function (name,
//! code range, `external` when exported, declaration file and line, frame base = the CFA) and
//! a line program with one sequence per function. A sequence starts at the function's
//! declaration line (so a breakpoint on the function stops after the prologue, at the first
//! row of its body), then has a row where each source range changes the line; bytes outside
//! every range (spill code, islands) keep the previous row's line. Ranges past the code or
//! out of order are ignored, so any input gives a well-formed table. Lines are whatever the ranges carry: CLIF text
//! lines, or a front end's source locations; a function's file is the text it was parsed
//! from, or a name the embedder chooses.
//!
//! Two address forms, as for `.eh_frame` ([`crate::eh_frame`]):
//! - [`DwarfBuilder::absolute`]: addresses are the code's final addresses and sections refer
//!   to each other by plain offsets (a standalone image, as the GDB JIT interface wants);
//! - [`DwarfBuilder::relocatable`]: addresses are relocations against function symbols, and
//!   references to other debug sections are relocations against those sections, so a linker
//!   can merge them with other objects' debug info.
//!
//! DWARF version 4 (file names inline in the line program: every consumer reads it).
//!
//! Cost: O(functions + ranges + total name length).

use std::collections::HashMap;

use gimli::write::{
    Address, AttributeValue, DwarfUnit, EndianVec, Expression, FileId, LineProgram, LineString,
    Range, RangeList, Sections, Writer,
};
use gimli::{Encoding, Format, LineEncoding, LittleEndian};

use crate::section_writer::SectionWriter;
pub use crate::section_writer::{RelocTarget, SectionReloc};

/// One function to describe.
#[derive(Clone, Copy, Debug)]
pub struct DebugFunction<'a> {
    pub name: &'a str,
    /// The source file its lines refer to.
    pub file: &'a str,
    /// The line of its declaration (0: unknown, the first range's line is used).
    pub decl_line: u32,
    /// Its address (absolute builder) or symbol index (relocatable builder).
    pub at: u64,
    /// Its code size in bytes.
    pub len: u32,
    /// `(start, end, line)` code ranges, increasing and disjoint.
    pub lines: &'a [(u32, u32, u32)],
    /// Visible outside its object.
    pub external: bool,
}

/// One written debug section.
#[derive(Clone, Debug)]
pub struct DebugSection {
    pub name: &'static str,
    pub data: Vec<u8>,
    pub relocs: Vec<SectionReloc>,
}

/// Collects functions, then writes the sections.
pub struct DwarfBuilder {
    dwarf: DwarfUnit,
    relocatable: bool,
    files: HashMap<String, FileId>,
    ranges: Vec<Range>,
}

impl DwarfBuilder {
    /// Addresses are final (code in memory); `comp_dir` is where relative file names are.
    pub fn absolute(comp_dir: &str) -> Self {
        Self::new(comp_dir, false)
    }

    /// Addresses are relocations against function symbols (an object file).
    pub fn relocatable(comp_dir: &str) -> Self {
        Self::new(comp_dir, true)
    }

    fn new(comp_dir: &str, relocatable: bool) -> Self {
        let encoding = Encoding {
            format: Format::Dwarf32,
            version: 4,
            address_size: 8,
        };
        let dir = non_empty(comp_dir, ".");
        let program = LineProgram::new(
            encoding,
            LineEncoding::default(),
            LineString::String(dir.as_bytes().to_vec()),
            None,
            LineString::String(b"kestrel".to_vec()),
            None,
        );
        let mut dwarf = DwarfUnit::new(encoding);
        dwarf.unit.line_program = program;
        let root = dwarf.unit.root();
        let producer = dwarf
            .strings
            .add(concat!("Kestrel ", env!("CARGO_PKG_VERSION")));
        let comp_dir = dwarf.strings.add(dir);
        let entry = dwarf.unit.get_mut(root);
        entry.set(gimli::DW_AT_producer, AttributeValue::StringRef(producer));
        entry.set(gimli::DW_AT_comp_dir, AttributeValue::StringRef(comp_dir));
        DwarfBuilder {
            dwarf,
            relocatable,
            files: HashMap::new(),
            ranges: Vec::new(),
        }
    }

    fn address(&self, at: u64) -> Address {
        if self.relocatable {
            Address::Symbol {
                symbol: at as usize,
                addend: 0,
            }
        } else {
            Address::Constant(at)
        }
    }

    fn file(&mut self, name: &str) -> FileId {
        let name = non_empty(name, "kestrel");
        if let Some(&id) = self.files.get(name) {
            return id;
        }
        let program = &mut self.dwarf.unit.line_program;
        let dir = program.default_directory();
        let id = program.add_file(LineString::String(name.as_bytes().to_vec()), dir, None);
        if self.files.is_empty() {
            // The unit is named after its first file.
            let s = self.dwarf.strings.add(name);
            let root = self.dwarf.unit.root();
            let entry = self.dwarf.unit.get_mut(root);
            entry.set(gimli::DW_AT_name, AttributeValue::StringRef(s));
        }
        self.files.insert(name.to_owned(), id);
        id
    }

    /// Describe `f`.
    pub fn add_function(&mut self, f: &DebugFunction) {
        let file = self.file(f.file);
        let start = self.address(f.at);
        let decl_line = match f.decl_line {
            0 => f.lines.first().map_or(0, |r| r.2),
            n => n,
        };

        let program = &mut self.dwarf.unit.line_program;
        program.begin_sequence(Some(start));
        program.row().file = file;
        program.row().address_offset = 0;
        program.row().line = u64::from(decl_line);
        program.generate_row();
        let mut last_line = decl_line;
        let mut last_offset = 0;
        for &(from, _, line) in f.lines.iter().filter(|r| r.0 < f.len) {
            // Rows must not go backwards (the ranges promise it; a caller's may not keep the
            // promise, and a row out of order is dropped rather than corrupting the table).
            // A row with the previous row's line adds nothing: that row already covers it.
            if from < last_offset || line == last_line {
                continue;
            }
            last_offset = from;
            last_line = line;
            program.row().address_offset = u64::from(from);
            program.row().line = u64::from(line);
            program.generate_row();
        }
        program.end_sequence(u64::from(f.len));

        self.ranges.push(Range::StartLength {
            begin: start,
            length: u64::from(f.len),
        });
        let name = self.dwarf.strings.add(f.name);
        let root = self.dwarf.unit.root();
        let id = self.dwarf.unit.add(root, gimli::DW_TAG_subprogram);
        let entry = self.dwarf.unit.get_mut(id);
        entry.set(gimli::DW_AT_name, AttributeValue::StringRef(name));
        entry.set(gimli::DW_AT_low_pc, AttributeValue::Address(start));
        entry.set(
            gimli::DW_AT_high_pc,
            AttributeValue::Udata(u64::from(f.len)),
        );
        if f.external {
            entry.set(gimli::DW_AT_external, AttributeValue::Flag(true));
        }
        entry.set(
            gimli::DW_AT_decl_file,
            AttributeValue::FileIndex(Some(file)),
        );
        entry.set(
            gimli::DW_AT_decl_line,
            AttributeValue::Udata(u64::from(decl_line)),
        );
        let mut frame_base = Expression::new();
        frame_base.op(gimli::DW_OP_call_frame_cfa);
        entry.set(gimli::DW_AT_frame_base, AttributeValue::Exprloc(frame_base));
    }

    /// The non-empty debug sections, with their relocations (none for an absolute builder).
    pub fn finish(mut self) -> Vec<DebugSection> {
        let ranges = self
            .dwarf
            .unit
            .ranges
            .add(RangeList(std::mem::take(&mut self.ranges)));
        let root = self.dwarf.unit.root();
        let entry = self.dwarf.unit.get_mut(root);
        entry.set(
            gimli::DW_AT_low_pc,
            AttributeValue::Address(Address::Constant(0)),
        );
        entry.set(gimli::DW_AT_ranges, AttributeValue::RangeListRef(ranges));

        let mut sections = Sections::new(SectionWriter::new(self.relocatable));
        self.dwarf
            .write(&mut sections)
            .expect("the debug info Kestrel builds is encodable");
        let mut out = Vec::new();
        sections
            .for_each_mut(|id, w| -> Result<(), ()> {
                if w.bytes.len() != 0 {
                    out.push(DebugSection {
                        name: id.name(),
                        data: std::mem::replace(&mut w.bytes, EndianVec::new(LittleEndian))
                            .into_vec(),
                        relocs: std::mem::take(&mut w.relocs),
                    });
                }
                Ok(())
            })
            .expect("collecting sections cannot fail");
        out
    }
}

fn non_empty<'a>(s: &'a str, default: &'a str) -> &'a str {
    if s.is_empty() {
        default
    } else {
        s
    }
}
