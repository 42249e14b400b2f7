//! The `MachBuffer`'s vocabulary: labels, label-use kinds, relocations, trap sites, the
//! finished buffer, and the private records it keeps.

use std::fmt;

use kestrel_ir::{FunctionName, TrapCode};

/// "No offset" / "no alias" in the label tables.
pub(super) const UNBOUND: u32 = u32::MAX;

/// A position in the code, bound once; its uses are patched when its offset is final.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Label(pub(super) u32);

impl Label {
    /// The dense index of the label (0, 1, … in creation order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "label{}", self.0)
    }
}

/// One kind of reference from code to a label (a branch displacement, a PC-relative load),
/// defined by the target: its reach, how to patch it, and how to extend it with a veneer.
///
/// Ranges are measured from the use's offset (the first byte `patch` rewrites) to the
/// label's offset: a use can reach labels in `use - max_neg_range ..= use + max_pos_range`.
pub trait LabelUse: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// Alignment of veneers (and of the start of their island).
    const ALIGN: u32;
    /// The largest `veneer_size` of any kind (sizes the worst-case island).
    const MAX_VENEER_SIZE: u32;

    /// How far forward this use reaches.
    fn max_pos_range(self) -> u32;
    /// How far backward this use reaches.
    fn max_neg_range(self) -> u32;
    /// How many bytes, starting at the use's offset, `patch` rewrites.
    fn patch_size(self) -> u32;
    /// Write the reference to `label_offset` into `bytes` (`patch_size` bytes that start at
    /// `use_offset` in the buffer). Only called with a label in range.
    fn patch(self, bytes: &mut [u8], use_offset: u32, label_offset: u32);
    /// Whether an out-of-reach use can be forwarded through a veneer.
    fn supports_veneer(self) -> bool;
    /// Bytes of the veneer for this kind.
    fn veneer_size(self) -> u32;
    /// Write a veneer into `bytes` (`veneer_size` zeroed bytes at `veneer_offset`); return
    /// the offset and kind of the veneer's own label use, which the buffer then resolves. That
    /// kind must reach further than `self`, so chains of veneers end.
    fn generate_veneer(self, bytes: &mut [u8], veneer_offset: u32) -> (u32, Self);
}

/// How a relocation patches its bytes (resolved by the JIT or the object writer).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RelocKind {
    /// 4-byte absolute address.
    Abs4,
    /// 8-byte absolute address.
    Abs8,
    /// 4-byte PC-relative displacement (`target + addend - offset`).
    PcRel4,
    /// 4-byte PC-relative call displacement (x86 `call rel32`).
    CallPcRel4,
    /// 4-byte PC-relative displacement to a GOT slot holding the target's address
    /// (`GOT(target) + addend - offset`), for a RIP-relative load of an address defined
    /// outside the code's own unit.
    GotPcRel4,
    /// AArch64 `bl`: the 26-bit word offset to `target + addend` (`R_AARCH64_CALL26`; the
    /// linker adds a veneer when the target is out of the ±128 MiB reach).
    Arm64Call26,
    /// AArch64 `adrp`: the distance in 4 KiB pages from the instruction's page to that of
    /// `target + addend` (`R_AARCH64_ADR_PREL_PG_HI21`).
    Arm64AdrPage21,
    /// AArch64 `add #imm12`: the low 12 bits of `target + addend`
    /// (`R_AARCH64_ADD_ABS_LO12_NC`).
    Arm64AddLo12,
    /// AArch64 `adrp` of the page of the GOT slot holding `target`'s address
    /// (`R_AARCH64_ADR_GOT_PAGE`).
    Arm64GotPage21,
    /// AArch64 `ldr` of that GOT slot: the low 12 bits of its address, in 8-byte units
    /// (`R_AARCH64_LD64_GOT_LO12_NC`).
    Arm64GotLo12,
}

impl RelocKind {
    /// Bytes the relocation rewrites.
    pub fn size(self) -> u32 {
        match self {
            RelocKind::Abs8 => 8,
            RelocKind::Abs4
            | RelocKind::PcRel4
            | RelocKind::CallPcRel4
            | RelocKind::GotPcRel4
            | RelocKind::Arm64Call26
            | RelocKind::Arm64AdrPage21
            | RelocKind::Arm64AddLo12
            | RelocKind::Arm64GotPage21
            | RelocKind::Arm64GotLo12 => 4,
        }
    }

    /// A call, which a linker may route through a stub when its target is out of reach.
    pub fn is_call(self) -> bool {
        matches!(self, RelocKind::CallPcRel4 | RelocKind::Arm64Call26)
    }

    /// A reference to the target's GOT slot rather than to the target itself.
    pub fn uses_got(self) -> bool {
        matches!(
            self,
            RelocKind::GotPcRel4 | RelocKind::Arm64GotPage21 | RelocKind::Arm64GotLo12
        )
    }
}

/// A relocation: patch `kind` at `offset` with the address of `target` plus `addend`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Reloc {
    pub offset: u32,
    pub kind: RelocKind,
    pub target: FunctionName,
    pub addend: i64,
}

/// The instruction at `offset` may trap with `code`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct TrapSite {
    pub offset: u32,
    pub code: TrapCode,
}

/// Why a buffer could not be finished. These are backend bugs surfaced as errors so a fuzzer
/// or a driver can report them with context instead of aborting.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum BufferError {
    #[error("{0} is used but never bound")]
    UnboundLabel(Label),
    #[error(
        "the label use at offset {offset:#x} cannot reach {label} at {target:#x} \
         and has no veneer (an island was needed earlier)"
    )]
    OutOfRange { offset: u32, label: Label, target: u32 },
    /// The validator ([`super::MachBuffer::set_validate`]) found an invariant violated.
    #[error("invariant violated: {0}")]
    Invariant(String),
}

/// The finished code: bytes with every label use patched, plus its metadata.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct MachBufferFinalized {
    pub data: Vec<u8>,
    /// Sorted by offset.
    pub relocs: Vec<Reloc>,
    /// Sorted by offset.
    pub traps: Vec<TrapSite>,
    /// Call-frame rule changes, by offset (increasing).
    pub unwind: Vec<(u32, crate::machinst::unwind::UnwindOp)>,
    /// `(start, end, srcloc)` code ranges, increasing and disjoint.
    pub srclocs: Vec<(u32, u32, u32)>,
    /// Final offset of every label (`None` if never bound), by label index; filled by
    /// `MachBuffer::finish`, empty from `MachBuffer::finish_into`.
    pub label_offsets: Vec<Option<u32>>,
}

impl MachBufferFinalized {
    /// The final offset of `label`.
    pub fn label_offset(&self, label: Label) -> Option<u32> {
        self.label_offsets.get(label.index()).copied().flatten()
    }

    /// The trap code of the instruction at `offset`, if it is a trap site.
    pub fn trap_at(&self, offset: u32) -> Option<TrapCode> {
        let i = self.traps.partition_point(|t| t.offset < offset);
        self.traps
            .get(i)
            .filter(|t| t.offset == offset)
            .map(|t| t.code)
    }
}

/// A recorded label use.
#[derive(Copy, Clone, Debug)]
pub(super) struct Fixup<U> {
    pub label: Label,
    pub offset: u32,
    pub kind: U,
}

impl<U: LabelUse> Fixup<U> {
    /// The last label offset this use can reach forward.
    pub fn deadline(&self) -> u32 {
        self.offset.saturating_add(self.kind.max_pos_range())
    }
}

/// Labels bound at one offset; usually one or two, kept inline.
pub(super) type LabelList = smallvec::SmallVec<[Label; 4]>;

/// A branch in the window (see I3 in the module doc).
#[derive(Clone, Debug)]
pub(super) struct Branch {
    pub start: u32,
    pub end: u32,
    pub target: Label,
    /// Index of the branch's own use in `pending_fixups`.
    pub fixup: usize,
    /// For a conditional branch, the bytes of the opposite condition.
    pub inverted: Option<InlineBytes>,
    /// The labels bound at `start`.
    pub labels_here: LabelList,
}

/// Up to 16 bytes stored inline (a branch instruction), so registering one allocates nothing.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) struct InlineBytes {
    len: u8,
    bytes: [u8; 16],
}

impl InlineBytes {
    pub fn new(src: &[u8]) -> Self {
        assert!(src.len() <= 16, "branch instructions are at most 16 bytes");
        let mut bytes = [0; 16];
        bytes[..src.len()].copy_from_slice(src);
        InlineBytes {
            len: src.len() as u8,
            bytes,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl fmt::Debug for InlineBytes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:02x?}", self.as_slice())
    }
}

/// A constant waiting for an island; its label is bound where it lands.
#[derive(Clone, Debug)]
pub(super) struct PendingConstant<U> {
    pub label: Label,
    pub align: u32,
    pub bytes: Vec<u8>,
    /// Label uses inside the bytes (offset from the constant's start), recorded once it lands.
    pub uses: Vec<(u32, Label, U)>,
}

impl<U: LabelUse> PendingConstant<U> {
    /// Bytes it may take, alignment padding included, plus a veneer for each of its uses.
    pub fn worst_case_size(&self) -> u32 {
        let veneers = self.uses.len() as u32 * (U::MAX_VENEER_SIZE + U::ALIGN - 1);
        self.bytes.len() as u32 + self.align - 1 + veneers
    }
}
