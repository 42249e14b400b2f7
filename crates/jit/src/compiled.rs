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

/// How a relocation patches its bytes: the code generator's own kinds (one type for the
/// `MachBuffer`, this JIT and the object writer). This JIT applies the kinds of its
/// target's code (`TargetIsa::reloc_kinds`); defining a function with another kind is an
/// error ([`crate::JitError::ForeignReloc`]).
pub use kestrel_codegen::machinst::buffer::RelocKind;

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
