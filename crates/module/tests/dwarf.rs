//! The DWARF writer, read back with gimli: subprograms with their names and ranges, line rows
//! at each source range, and relocations (not plain values) for addresses and cross-section
//! offsets in the relocatable form.

use gimli::{EndianSlice, LittleEndian, SectionId};
use kestrel_module::debug_info::{DebugFunction, DebugSection, DwarfBuilder, RelocTarget};

const F_LINES: &[(u32, u32, u32)] = &[(4, 10, 7), (10, 12, 8), (16, 20, 9)];
const G_LINES: &[(u32, u32, u32)] = &[(0, 3, 40)];

fn functions() -> [DebugFunction<'static>; 2] {
    [
        DebugFunction {
            name: "f",
            file: "prog.clif",
            decl_line: 5,
            at: 0x1000,
            len: 24,
            lines: F_LINES,
            external: true,
        },
        DebugFunction {
            name: "g",
            file: "other.clif",
            decl_line: 0,
            at: 0x2000,
            len: 3,
            lines: G_LINES,
            external: false,
        },
    ]
}

fn section<'a>(sections: &'a [DebugSection], id: SectionId) -> EndianSlice<'a, LittleEndian> {
    let data = sections
        .iter()
        .find(|s| s.name == id.name())
        .map_or(&[][..], |s| &s.data[..]);
    EndianSlice::new(data, LittleEndian)
}

/// A line-table row: address, file name, line.
type Row = (u64, String, u64);
/// A subprogram: name, low pc, high pc.
type Subprogram = (String, u64, u64);

/// Every row of the line table, and every subprogram.
fn read(sections: &[DebugSection]) -> (Vec<Row>, Vec<Subprogram>) {
    let dwarf = gimli::Dwarf::load(|id| Ok::<_, gimli::Error>(section(sections, id))).unwrap();
    let mut units = dwarf.units();
    let header = units.next().unwrap().expect("one unit");
    let unit = dwarf.unit(header).unwrap();
    let mut rows = Vec::new();
    let program = unit.line_program.clone().expect("a line program");
    let mut it = program.rows();
    while let Some((header, row)) = it.next_row().unwrap() {
        if row.end_sequence() {
            continue;
        }
        let file = row.file(header).unwrap();
        let name = dwarf.attr_string(&unit, file.path_name()).unwrap();
        rows.push((
            row.address(),
            name.to_string_lossy().into_owned(),
            row.line().map_or(0, |l| l.get()),
        ));
    }
    let mut subs = Vec::new();
    let mut entries = unit.entries();
    while let Some(e) = entries.next_dfs().unwrap() {
        if e.tag() != gimli::DW_TAG_subprogram {
            continue;
        }
        let name = dwarf
            .attr_string(&unit, e.attr_value(gimli::DW_AT_name).unwrap())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let low = match e.attr_value(gimli::DW_AT_low_pc) {
            Some(gimli::AttributeValue::Addr(a)) => a,
            other => panic!("low_pc {other:?}"),
        };
        let len = e.attr_value(gimli::DW_AT_high_pc).unwrap().udata_value();
        subs.push((name, low, low + len.unwrap()));
    }
    (rows, subs)
}

#[test]
fn absolute_rows_and_subprograms() {
    let mut b = DwarfBuilder::absolute("/src");
    for f in &functions() {
        b.add_function(f);
    }
    let sections = b.finish();
    assert!(sections.iter().all(|s| s.relocs.is_empty()));
    let (rows, subs) = read(&sections);
    let row = |a: u64, f: &str, l: u64| (a, f.to_string(), l);
    assert_eq!(
        rows,
        [
            row(0x1000, "prog.clif", 5),
            row(0x1004, "prog.clif", 7),
            row(0x100a, "prog.clif", 8),
            row(0x1010, "prog.clif", 9),
            // No declaration line: the first range's line stands for it.
            row(0x2000, "other.clif", 40),
        ]
    );
    assert_eq!(
        subs,
        [("f".into(), 0x1000, 0x1018), ("g".into(), 0x2000, 0x2003)]
    );
}

#[test]
fn relocatable_form_relocates_addresses_and_section_offsets() {
    let mut b = DwarfBuilder::relocatable("/src");
    let mut fs = functions();
    fs[0].at = 0;
    fs[1].at = 1;
    for f in &fs {
        b.add_function(f);
    }
    let sections = b.finish();
    let relocs = |name: &str| {
        sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.relocs.clone())
            .unwrap_or_default()
    };
    // Each line sequence sets its address by a relocation against its function.
    let line: Vec<_> = relocs(".debug_line")
        .iter()
        .map(|r| (r.target, r.size))
        .collect();
    assert_eq!(
        line,
        [(RelocTarget::Symbol(0), 8), (RelocTarget::Symbol(1), 8)]
    );
    // The unit refers to its abbreviations, line program and strings by relocation, and to
    // each function's start by relocation.
    let info = relocs(".debug_info");
    for target in [".debug_abbrev", ".debug_line", ".debug_str"] {
        assert!(
            info.iter()
                .any(|r| r.target == RelocTarget::Section(target) && r.size == 4),
            "no relocation to {target}: {info:?}"
        );
    }
    for s in 0..2 {
        assert!(info.iter().any(|r| r.target == RelocTarget::Symbol(s)));
    }
    // Relocated fields hold zero; the addend carries the value.
    let data = &sections
        .iter()
        .find(|s| s.name == ".debug_info")
        .unwrap()
        .data;
    for r in &info {
        let at = r.offset as usize;
        assert!(data[at..at + r.size as usize].iter().all(|&b| b == 0));
    }
}

#[test]
fn ranges_out_of_order_or_past_the_code_are_ignored() {
    let lines = [(8, 10, 3), (2, 4, 4), (30, 40, 5), (9, 12, 6)];
    let mut b = DwarfBuilder::absolute("/src");
    b.add_function(&DebugFunction {
        name: "h",
        file: "h.clif",
        decl_line: 1,
        at: 0x100,
        len: 20,
        lines: &lines,
        external: true,
    });
    let (rows, _) = read(&b.finish());
    let addrs: Vec<u64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(addrs, [0x100, 0x108, 0x109], "{rows:?}");
}
