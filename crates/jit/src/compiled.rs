//! The JIT's input: machine code for one function plus the metadata needed to place it.
//!
//! This is deliberately independent of how the code was produced. The code generator's
//! `MachBuffer` output maps onto it one to one (bytes, relocations, trap sites); tests build it
//! from hand-assembled bytes.

use kestrel_codegen::machinst::unwind::UnwindOp;
use kestrel_ir::{FunctionName, Signature, TrapCode};
use kestrel_module::FuncId;

/// Machine code for one function, position-independent except for its relocations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledFunction {
    /// The instruction bytes; execution starts at offset 0.
    pub code: Vec<u8>,
    /// Places in `code` to patch with addresses once they are known.
    pub relocs: Vec<Reloc>,
    /// Instructions that may fault on purpose (`ud2`, `div`, a checked load), by offset.
    pub traps: Vec<TrapSite>,
    /// The signature the code implements; must equal the declared one.
    pub signature: Signature,
    /// Call-frame rule changes by code offset (from the code generator); with none, the
    /// function is described as running on its entry rules throughout (no frame).
    pub unwind: Vec<(u32, UnwindOp)>,
    /// Where the code comes from in the source, for debuggers (see
    /// [`JitBuilder::debug_info`](crate::JitBuilder::debug_info)).
    pub lines: SourceLines,
}

/// The source lines of a function's code: what a debugger shows for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceLines {
    /// The source file (`None`: the code has no file; it is named `kestrel-jit`).
    pub file: Option<String>,
    /// The line of the function's declaration (0: unknown).
    pub decl_line: u32,
    /// `(start, end, line)` code ranges, increasing and disjoint.
    pub ranges: Vec<(u32, u32, u32)>,
}

impl SourceLines {
    /// The line (source location) of the code at `offset`, if a range covers it. O(log
    /// ranges).
    pub fn at(&self, offset: u32) -> Option<u32> {
        let i = self
            .ranges
            .partition_point(|&(start, _, _)| start <= offset);
        self.line_before(i, offset)
    }

    /// The lines of `offsets`, in order: one pass over the ranges when the offsets are
    /// increasing (a function's trap sites are), O(offsets + ranges); a binary search for
    /// any offset below its predecessor.
    pub fn at_each<'a, I>(&'a self, offsets: I) -> impl Iterator<Item = Option<u32>> + 'a
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: 'a,
    {
        let (mut i, mut last) = (0, 0);
        offsets.into_iter().map(move |offset| {
            if offset < last {
                i = self
                    .ranges
                    .partition_point(|&(start, _, _)| start <= offset);
            } else {
                while i < self.ranges.len() && self.ranges[i].0 <= offset {
                    i += 1;
                }
            }
            last = offset;
            self.line_before(i, offset)
        })
    }

    /// The line of range `i - 1` if it covers `offset` (`i`: the first range starting after
    /// `offset`).
    fn line_before(&self, i: usize, offset: u32) -> Option<u32> {
        let &(_, end, line) = self.ranges.get(i.checked_sub(1)?)?;
        (offset < end).then_some(line)
    }
}

impl CompiledFunction {
    /// Code without relocations or trap sites.
    pub fn new(code: Vec<u8>, signature: Signature) -> Self {
        CompiledFunction {
            code,
            relocs: Vec::new(),
            traps: Vec::new(),
            signature,
            unwind: Vec::new(),
            lines: SourceLines::default(),
        }
    }
}

/// How a relocation patches its bytes. The names match the code generator's `RelocKind`.
/// The JIT places the kinds of the machine it runs on (x86-64 kinds on x86-64, `Arm64*` on
/// AArch64, `Abs4`/`Abs8` on both); defining a function with another ISA's kind is
/// [`crate::JitError::ForeignReloc`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RelocKind {
    /// 4-byte absolute address (`S + A`); the address must fit in 32 bits unsigned.
    Abs4,
    /// 8-byte absolute address (`S + A`), e.g. for `func_addr` or a `movabs` call.
    Abs8,
    /// 4-byte PC-relative displacement (`S + A - P`), e.g. a RIP-relative `lea`.
    /// The target must be within ±2 GiB; no stub can help a data reference.
    PcRel4,
    /// 4-byte PC-relative call displacement (`S + A - P`) of an x86 `call rel32`.
    /// A target out of rel32 reach is called through an absolute-address stub.
    CallPcRel4,
    /// 4-byte PC-relative displacement to a slot holding the target's address
    /// (`GOT(S) + A - P`); the JIT makes one read-only slot per target next to the code.
    GotPcRel4,
    /// AArch64 `bl`: the 26-bit word offset to `S + A` (±128 MiB). A target out of reach is
    /// called through a stub next to the function (it jumps through `x16`, which AAPCS64
    /// lets a call clobber).
    Arm64Call26,
    /// AArch64 `adrp`: the distance in 4 KiB pages from the instruction's page to that of
    /// `S + A` (±4 GiB).
    Arm64AdrPage21,
    /// AArch64 `add #imm12`: the low 12 bits of `S + A`.
    Arm64AddLo12,
    /// AArch64 `adrp` of the page of the GOT slot holding the target's address (the JIT
    /// makes one slot per target next to the code, as for `GotPcRel4`).
    Arm64GotPage21,
    /// AArch64 `ldr` of that GOT slot: the low 12 bits of its address, in 8-byte units.
    Arm64GotLo12,
}

impl RelocKind {
    /// Bytes the relocation rewrites.
    pub fn size(self) -> usize {
        match self {
            RelocKind::Abs8 => 8,
            _ => 4,
        }
    }

    /// The kind's name (as the code generator spells it).
    pub fn name(self) -> &'static str {
        match self {
            RelocKind::Abs4 => "Abs4",
            RelocKind::Abs8 => "Abs8",
            RelocKind::PcRel4 => "PcRel4",
            RelocKind::CallPcRel4 => "CallPcRel4",
            RelocKind::GotPcRel4 => "GotPcRel4",
            RelocKind::Arm64Call26 => "Arm64Call26",
            RelocKind::Arm64AdrPage21 => "Arm64AdrPage21",
            RelocKind::Arm64AddLo12 => "Arm64AddLo12",
            RelocKind::Arm64GotPage21 => "Arm64GotPage21",
            RelocKind::Arm64GotLo12 => "Arm64GotLo12",
        }
    }

    /// A call, which may go through a stub when its target is out of reach.
    pub(crate) fn is_call(self) -> bool {
        matches!(self, RelocKind::CallPcRel4 | RelocKind::Arm64Call26)
    }

    /// A reference to the target's GOT slot rather than to the target.
    pub(crate) fn uses_got(self) -> bool {
        matches!(
            self,
            RelocKind::GotPcRel4 | RelocKind::Arm64GotPage21 | RelocKind::Arm64GotLo12
        )
    }
}

/// What a relocation refers to.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum RelocTarget {
    /// A function declared in the module (local or imported), by its declared name.
    Function(String),
    /// A function declared in the module, by its id: what
    /// [`JitModule::compiled_from_codegen`](crate::JitModule::compiled_from_codegen) makes
    /// of a callee it finds declared, so linking looks nothing up by name.
    Declared(FuncId),
    /// A data object declared in the module, by its declared name.
    Data(String),
    /// A raw symbol that is not declared in the module (a libcall such as `fmod`),
    /// resolved like an import: the builder's symbol table first, then the process.
    Symbol(String),
}

impl From<&FunctionName> for RelocTarget {
    /// A function reference from the IR: `%name` becomes `name`, a user name `u1:2` stays
    /// `u1:2`. Declare module functions under the same spelling.
    fn from(name: &FunctionName) -> Self {
        match name {
            FunctionName::Named(n) => RelocTarget::Function(n.clone()),
            FunctionName::User { .. } => RelocTarget::Function(name.to_string()),
        }
    }
}

/// Patch `kind` at `offset` (from the function's start) with the address of `target` plus
/// `addend`. PC-relative kinds subtract the address of the patched bytes, so a `call rel32`
/// carries the usual addend of -4.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Reloc {
    pub offset: u32,
    pub kind: RelocKind,
    pub target: RelocTarget,
    pub addend: i64,
}

/// The instruction starting at `offset` may fault, and a fault there means `code`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct TrapSite {
    pub offset: u32,
    pub code: TrapCode,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_find_the_range_holding_an_offset() {
        let lines = SourceLines {
            file: None,
            decl_line: 0,
            ranges: vec![(0, 4, 10), (4, 9, 11), (12, 20, 30)],
        };
        let found: Vec<Option<u32>> = [0, 3, 4, 8, 9, 11, 12, 19, 20, 100]
            .iter()
            .map(|&o| lines.at(o))
            .collect();
        let expected = [10, 10, 11, 11, 0, 0, 30, 30, 0, 0].map(|l| (l != 0).then_some(l));
        assert_eq!(found, expected, "gaps and the end have no line");
        assert_eq!(SourceLines::default().at(0), None);
        // In one pass, as the binary search finds them: increasing offsets, repeats, and
        // offsets that go back (searched again).
        let offsets = [0, 3, 3, 4, 9, 12, 19, 20, 100, 5, 2, 13, 13, 21];
        let each: Vec<Option<u32>> = lines.at_each(offsets).collect();
        let one_by_one: Vec<Option<u32>> = offsets.iter().map(|&o| lines.at(o)).collect();
        assert_eq!(each, one_by_one);
        assert_eq!(SourceLines::default().at_each([0, 5]).count(), 2);
    }

    #[test]
    fn ir_names_map_to_declared_names() {
        let named = FunctionName::Named("callee".into());
        assert_eq!(
            RelocTarget::from(&named),
            RelocTarget::Function("callee".into())
        );
        let user = FunctionName::User {
            namespace: 1,
            index: 2,
        };
        assert_eq!(
            RelocTarget::from(&user),
            RelocTarget::Function("u1:2".into())
        );
    }
}
