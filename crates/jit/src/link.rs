//! Finalizing: resolve imports, lay out the pending functions and data objects in one
//! batch of pages, patch relocations, protect the pages, register trap sites and unwind
//! info.
//!
//! Layout of a batch (one run of pages from the module's arenas, see `memory.rs`):
//! - code: each function at a 16-byte aligned offset, followed by its own call stubs (one
//!   16-byte stub per distinct call target outside the batch, written by the host's
//!   `arch` module: `movabs r11, target; jmp r11` on x86-64, `ldr x16, 8; br x16; .quad
//!   target` on AArch64, through a register that is caller-saved and carries no argument)
//!   and its own GOT (one 8-byte slot per distinct target of a GOT relocation); padding
//!   filled with the host's trapping filler (`int3`; `udf #0` on AArch64);
//!   (all of the above read-execute)
//! - read-only data, from a page boundary (read-only);
//! - writable data, from a page boundary (read-write).
//!
//! Each function's range (code, stubs, GOT) and each data object's range is its own, so
//! freeing one releases the pages only it used (`JitModule::free_function`, `free_data`).
//!
//! Calls inside the batch reach directly (rel32: a batch is under 1 GiB, in one arena; an
//! AArch64 `bl` reaches ±128 MiB, and a batch beyond that is an out-of-range error); a
//! call to anything else is direct when it reaches and goes through its stub when it
//! does not. A `PcRel4` data reference (or an `adrp` one, ±4 GiB) must reach; a GOT
//! reference always does (its slot is next to the function).
//!
//! Postconditions on success: every pending function and data object is finalized at its
//! address, code is read-execute and never writable again, trap sites are visible to the
//! signal handler, and `.eh_frame` for each function is registered with the unwinder. On
//! error, no state changes except imports resolved so far (the batch's pages are given
//! back).
//!
//! Cost: O(code bytes + data bytes + relocations + trap sites + source ranges), with a
//! hash-map lookup per relocation named by name (none for a callee named by id) and per
//! distinct call or GOT target of each function.

use rustc_hash::FxHashMap as HashMap;

use crate::arch::host;
use crate::compiled::{Reloc, RelocKind, RelocTarget};
use crate::error::JitError;
use crate::frames::{FrameGroup, FrameMember, GROUP};
use crate::gdb_jit::GdbRegistration;
use crate::memory::{page_size, BatchPages};
use crate::module::{
    DataState, Decl, JitModule, Linkage, LiveBatch, PlacedFunction, Placement, State,
};
use crate::symbols::lookup_process_symbol;
use crate::traps::registry::{self, FuncEntry, RegionInfo, Registration, TrapEntry};
use crate::FuncId;
use kestrel_module::decls::Name;
use kestrel_module::DataInit;

const FUNC_ALIGN: usize = 16;
const STUB_SIZE: usize = 16;
const GOT_SLOT: usize = 8;
/// Batches stay below this so every rel32 inside one reaches.
const MAX_REGION: usize = i32::MAX as usize / 2;

/// What a relocation points at, before the batch's address is known.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
enum Resolved {
    /// The function at this index of the batch.
    Batch(usize),
    /// The data object at this index of the data batch.
    BatchData(usize),
    /// A fixed address (import, symbol, or function or data of an earlier batch).
    Addr(usize),
}

/// One function's relocation targets, and its own stubs and GOT slots by index.
#[derive(Default)]
struct Targets {
    resolved: Vec<Resolved>,
    stubs: HashMap<usize, usize>,
    got: HashMap<Resolved, usize>,
}

/// Offsets (from the batch base) of everything the batch places.
struct Layout {
    /// Per function: start of its code, of its stubs, of its GOT, and its end.
    funcs: Vec<usize>,
    stubs: Vec<usize>,
    got: Vec<usize>,
    func_ends: Vec<usize>,
    /// Per data object: its start and end (at least one byte).
    data: Vec<usize>,
    data_ends: Vec<usize>,
    /// End of the read-execute part, of the read-only part, and of the batch.
    code_end: usize,
    ro_end: usize,
    total: usize,
}

impl Layout {
    fn address(&self, base: usize, t: Resolved) -> usize {
        match t {
            Resolved::Batch(q) => base + self.funcs[q],
            Resolved::BatchData(d) => base + self.data[d],
            Resolved::Addr(a) => a,
        }
    }
}

pub(crate) fn finalize(m: &mut JitModule) -> Result<(), JitError> {
    resolve_imports(m)?;

    let batch: Vec<usize> = (0..m.decls.funcs().len())
        .filter(|&i| matches!(m.decls.funcs()[i].state, State::Defined(_)))
        .collect();
    let data_batch: Vec<usize> = (0..m.decls.data_objects().len())
        .filter(|&i| matches!(m.decls.data_objects()[i].state, DataState::Defined(_)))
        .collect();
    if batch.is_empty() && data_batch.is_empty() {
        return Ok(());
    }
    let batch_pos: HashMap<usize, usize> = batch.iter().enumerate().map(|(p, &i)| (i, p)).collect();
    let data_pos: HashMap<usize, usize> = data_batch
        .iter()
        .enumerate()
        .map(|(p, &i)| (i, p))
        .collect();
    let pos = Positions {
        funcs: &batch_pos,
        data: &data_pos,
    };

    // Targets, stubs and GOT slots, before any memory is mapped.
    let mut targets: Vec<Targets> = Vec::with_capacity(batch.len());
    for &i in &batch {
        let func = defined(&m.decls.funcs()[i]);
        let mut t = Targets {
            resolved: Vec::with_capacity(func.relocs.len()),
            ..Targets::default()
        };
        for r in &func.relocs {
            let target = resolve_target(m, &pos, &m.decls.funcs()[i].name, &r.target)?;
            match (r.kind, target) {
                (kind, Resolved::Addr(a)) if kind.is_call() => {
                    let next = t.stubs.len();
                    t.stubs.entry(host::stub_key(a, r.addend)).or_insert(next);
                }
                (kind, _) if kind.uses_got() => {
                    let next = t.got.len();
                    t.got.entry(target).or_insert(next);
                }
                _ => {}
            }
            t.resolved.push(target);
        }
        targets.push(t);
    }
    let mut data_targets: Vec<Vec<Resolved>> = Vec::with_capacity(data_batch.len());
    for &i in &data_batch {
        let desc = defined_data(m, i);
        let from = &m.decls.data_objects()[i].name;
        let resolved = desc
            .relocs
            .iter()
            .map(|r| resolve_name(m, &pos, from, &r.target, true))
            .collect::<Result<Vec<_>, _>>()?;
        data_targets.push(resolved);
    }
    let layout = layout(m, &batch, &data_batch, &targets)?;

    let mut pages = m
        .memory
        .allocate(layout.total, layout.code_end, layout.ro_end)
        .map_err(|source| JitError::Memory {
            op: "mmap of code memory",
            source,
        })?;
    // Each function and data object is one user of the pages its range touches; sealing
    // releases the pages no object touches.
    for p in 0..batch.len() {
        pages.add_user(layout.funcs[p]..layout.func_ends[p]);
    }
    for p in 0..data_batch.len() {
        pages.add_user(layout.data[p]..layout.data_ends[p]);
    }
    let placed = fill(
        m,
        &batch,
        &data_batch,
        &targets,
        &data_targets,
        &layout,
        &mut pages,
    )
    .and_then(|()| {
        m.memory
            .seal(&mut pages)
            .map_err(|source| JitError::Memory {
                op: "mprotect of code and data memory",
                source,
            })
    })
    .and_then(|()| register_traps(m, &batch, &layout, pages.base()));
    let (registration, trap_sites) = match placed {
        Ok(r) => r,
        Err(e) => {
            m.memory.discard(pages);
            return Err(e);
        }
    };
    let base = pages.base();

    // Reuse the slot of a released batch, so finalize/free cycles do not grow the table.
    let batch_index = m.free_batches.pop().unwrap_or(m.batches.len());
    let mut perf_lines = Vec::new();
    // Before the states change: the unwind rules are in the definitions.
    let frames = frame_groups(m, &batch, &layout, base);
    for (p, &i) in batch.iter().enumerate() {
        let f = defined(&m.decls.funcs()[i]);
        let addr = base + layout.funcs[p];
        let name = m.decls.funcs()[i].name.as_str();
        let debug = m.debug_info.then(|| {
            let code = pages.bytes(layout.funcs[p]..layout.funcs[p] + f.code.len());
            GdbRegistration::register(&*m.isa, addr, code, &[(addr, name, f)])
        });
        if m.perf_map {
            perf_lines.push((addr, f.code.len(), i));
        }
        let placement = Placement {
            batch: batch_index,
            range: layout.funcs[p]..layout.func_ends[p],
        };
        m.decls.funcs_mut()[i].state = State::Finalized {
            addr,
            placed: Some(Box::new(PlacedFunction {
                placement,
                trap_sites: trap_sites[p].clone(),
                region_func: p,
                frame_group: p / GROUP,
                debug,
            })),
        };
    }
    for (p, &i) in data_batch.iter().enumerate() {
        let placement = Placement {
            batch: batch_index,
            range: layout.data[p]..layout.data_ends[p],
        };
        m.decls.data_objects_mut()[i].state = DataState::Finalized {
            addr: base + layout.data[p],
            placed: Some(placement),
        };
    }
    if m.perf_map {
        let funcs = m.decls.funcs();
        let named = perf_lines.iter();
        crate::perf_map::append(named.map(|&(a, len, i)| (a, len, funcs[i].name.as_str())));
    }
    let live = Some(LiveBatch {
        traps: registration,
        frames,
        pages,
        live: batch.len() + data_batch.len(),
    });
    if batch_index == m.batches.len() {
        m.batches.push(live);
    } else {
        m.batches[batch_index] = live;
    }
    Ok(())
}

/// Write the batch: code with trapping padding, stubs, GOT slots, data, then patch every
/// relocation. Each byte written once.
fn fill(
    m: &JitModule,
    batch: &[usize],
    data_batch: &[usize],
    targets: &[Targets],
    data_targets: &[Vec<Resolved>],
    layout: &Layout,
    pages: &mut BatchPages,
) -> Result<(), JitError> {
    let base = pages.base();
    let bytes = pages.bytes_mut();
    let mut written = 0;
    for (p, &i) in batch.iter().enumerate() {
        let code = &defined(&m.decls.funcs()[i]).code;
        let at = layout.funcs[p];
        bytes[written..at].fill(host::PAD_BYTE);
        bytes[at..at + code.len()].copy_from_slice(code);
        bytes[at + code.len()..layout.stubs[p]].fill(host::PAD_BYTE);
        for (&key, &s) in &targets[p].stubs {
            let at = layout.stubs[p] + s * STUB_SIZE;
            host::write_stub(&mut bytes[at..at + STUB_SIZE], key);
        }
        for (&t, &g) in &targets[p].got {
            let at = layout.got[p] + g * GOT_SLOT;
            let addr = layout.address(base, t) as u64;
            bytes[at..at + GOT_SLOT].copy_from_slice(&addr.to_le_bytes());
        }
        // The byte an empty function owns, if it has nothing else.
        let got_end = layout.got[p] + targets[p].got.len() * GOT_SLOT;
        bytes[got_end..layout.func_ends[p]].fill(host::PAD_BYTE);
        written = layout.func_ends[p];
    }
    bytes[written..layout.code_end].fill(host::PAD_BYTE);
    for (p, &i) in data_batch.iter().enumerate() {
        let desc = defined_data(m, i);
        let at = layout.data[p];
        if let DataInit::Bytes(b) = &desc.init {
            bytes[at..at + b.len()].copy_from_slice(b);
        }
        for (r, &t) in desc.relocs.iter().zip(&data_targets[p]) {
            let value = (layout.address(base, t) as u64).wrapping_add(r.addend as u64);
            bytes[at + r.offset..at + r.offset + 8].copy_from_slice(&value.to_le_bytes());
        }
    }
    for (p, &i) in batch.iter().enumerate() {
        let decl = &m.decls.funcs()[i];
        let t = &targets[p];
        for (r, &target_of) in defined(decl).relocs.iter().zip(&t.resolved) {
            let target = layout.address(base, target_of);
            let via = match r.kind {
                kind if kind.uses_got() => {
                    Some(base + layout.got[p] + t.got[&target_of] * GOT_SLOT)
                }
                _ => t
                    .stubs
                    .get(&host::stub_key(target, r.addend))
                    .map(|&s| base + layout.stubs[p] + s * STUB_SIZE),
            };
            let name_of_target = || target_name(m, &r.target);
            patch(
                bytes,
                base,
                layout.funcs[p],
                decl,
                r,
                target,
                via,
                &name_of_target,
            )?;
        }
    }
    Ok(())
}

/// Register the unwind info of the batch's functions (still pending), `GROUP` by `GROUP`
/// in batch order.
fn frame_groups(m: &JitModule, batch: &[usize], layout: &Layout, base: usize) -> Vec<FrameGroup> {
    batch
        .chunks(GROUP)
        .enumerate()
        .map(|(g, chunk)| {
            let members = chunk
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    let p = g * GROUP + k;
                    let f = defined(&m.decls.funcs()[i]);
                    FrameMember {
                        key: i,
                        addr: base + layout.funcs[p],
                        len: f.code.len() as u32,
                        unwind: f.unwind.clone(),
                    }
                })
                .collect();
            FrameGroup::new(m.isa.unwind_cie(), members)
        })
        .collect()
}

/// Register the batch's trap sites (none when it placed no function). Returns the
/// registration and, per function, the indices of its sites in the registered list.
fn register_traps(
    m: &JitModule,
    batch: &[usize],
    layout: &Layout,
    base: usize,
) -> Result<(Option<Registration>, Vec<std::ops::Range<usize>>), JitError> {
    if batch.is_empty() {
        return Ok((None, Vec::new()));
    }
    let count: usize = batch
        .iter()
        .map(|&i| defined(&m.decls.funcs()[i]).traps.len())
        .sum();
    let mut traps = Vec::with_capacity(count);
    for (p, &i) in batch.iter().enumerate() {
        let f = defined(&m.decls.funcs()[i]);
        let lines = f.lines.at_each(f.traps.iter().map(|t| t.offset));
        for (t, line) in f.traps.iter().zip(lines) {
            traps.push(TrapEntry {
                region_offset: (layout.funcs[p] + t.offset as usize) as u32,
                func: i as u32,
                func_offset: t.offset,
                code: t.code,
                srcloc: line.unwrap_or(0),
            });
        }
    }
    // Functions are placed in batch order and list their sites by offset, so the list is
    // usually in order already; sorting is for the rest.
    if !traps.is_sorted_by_key(|t| t.region_offset) {
        traps.sort_by_key(|t| t.region_offset);
    }
    traps.dedup_by_key(|t| t.region_offset);
    // Each function's sites lie inside its own code, and functions occupy disjoint
    // increasing ranges, so a function's sites are one contiguous run of the sorted list,
    // and function `p` of the batch is entry `p` of the region's functions.
    let sites = (0..batch.len())
        .map(|p| {
            let at = |off: usize| traps.partition_point(|t| (t.region_offset as usize) < off);
            at(layout.funcs[p])..at(layout.stubs[p])
        })
        .collect();
    let funcs: Vec<FuncEntry> = batch
        .iter()
        .enumerate()
        .map(|(p, &i)| FuncEntry {
            region_offset: layout.funcs[p] as u32,
            len: defined(&m.decls.funcs()[i]).code.len() as u32,
            func: i as u32,
            name: m.decls.funcs()[i].name.as_str().into(),
        })
        .collect();
    debug_assert!(funcs.is_sorted_by_key(|f| f.region_offset));
    let registration = registry::register(RegionInfo::new(
        base,
        layout.code_end,
        traps.into_boxed_slice(),
        funcs.into_boxed_slice(),
    ))
    .ok_or(JitError::TooManyRegions {
        max: registry::MAX_REGIONS,
    })?;
    Ok((Some(registration), sites))
}

/// Where each part goes; read-only data before writable data, each from a page boundary.
/// Every data object takes at least one byte, so each object has its own non-empty range.
fn layout(
    m: &JitModule,
    batch: &[usize],
    data_batch: &[usize],
    targets: &[Targets],
) -> Result<Layout, JitError> {
    let mut end = 0usize;
    let n = batch.len();
    let (mut funcs, mut stubs, mut got, mut func_ends) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (p, &i) in batch.iter().enumerate() {
        end = end.next_multiple_of(FUNC_ALIGN);
        funcs.push(end);
        end += defined(&m.decls.funcs()[i]).code.len();
        let stub_start = end.next_multiple_of(FUNC_ALIGN);
        stubs.push(stub_start);
        let got_start = stub_start + targets[p].stubs.len() * STUB_SIZE;
        got.push(got_start);
        end = got_start + targets[p].got.len() * GOT_SLOT;
        // A function with no code still owns a byte, so its range is non-empty.
        end = end.max(funcs[p] + 1);
        func_ends.push(end);
    }
    let code_end = end;
    let page = page_size();
    let mut data = vec![0; data_batch.len()];
    let mut data_ends = vec![0; data_batch.len()];
    let mut end = code_end.next_multiple_of(page);
    let mut ro_end = end;
    for writable in [false, true] {
        for (p, &i) in data_batch.iter().enumerate() {
            if m.decls.data_objects()[i].writable != writable {
                continue;
            }
            let desc = defined_data(m, i);
            end = end.next_multiple_of(desc.align.max(1) as usize);
            data[p] = end;
            end += desc.init.len().max(1);
            data_ends[p] = end;
        }
        end = end.next_multiple_of(page);
        if !writable {
            ro_end = end;
        }
    }
    if end > MAX_REGION {
        return Err(JitError::CodeTooLarge { bytes: end });
    }
    Ok(Layout {
        funcs,
        stubs,
        got,
        func_ends,
        data,
        data_ends,
        code_end,
        ro_end,
        total: end,
    })
}

fn defined(decl: &Decl) -> &crate::CompiledFunction {
    match &decl.state {
        State::Defined(f) => f,
        _ => unreachable!("batch members are defined"),
    }
}

fn defined_data(m: &JitModule, i: usize) -> &kestrel_module::DataDescription {
    match &m.decls.data_objects()[i].state {
        DataState::Defined(d) => d,
        _ => unreachable!("data batch members are defined"),
    }
}

/// Resolve every declared import (function or data) that is not resolved yet.
fn resolve_imports(m: &mut JitModule) -> Result<(), JitError> {
    for i in 0..m.decls.funcs().len() {
        let decl = &m.decls.funcs()[i];
        if decl.linkage == Linkage::Import && matches!(decl.state, State::Declared) {
            let addr = resolve_symbol(m, &decl.name)?;
            m.decls.funcs_mut()[i].state = State::Finalized { addr, placed: None };
        }
    }
    for i in 0..m.decls.data_objects().len() {
        let decl = &m.decls.data_objects()[i];
        if decl.linkage == Linkage::Import && matches!(decl.state, DataState::Declared) {
            let addr = resolve_symbol(m, &decl.name)?;
            m.decls.data_objects_mut()[i].state = DataState::Finalized { addr, placed: None };
        }
    }
    Ok(())
}

/// The builder's symbol table first, then the process.
fn resolve_symbol(m: &JitModule, name: &str) -> Result<usize, JitError> {
    m.symbols
        .get(name)
        .copied()
        .or_else(|| lookup_process_symbol(name))
        .ok_or_else(|| JitError::UndefinedSymbol {
            name: name.to_string(),
        })
}

/// Batch positions of the pending functions and data objects, by declaration index.
struct Positions<'a> {
    funcs: &'a HashMap<usize, usize>,
    data: &'a HashMap<usize, usize>,
}

fn resolve_target(
    m: &JitModule,
    pos: &Positions,
    from: &str,
    target: &RelocTarget,
) -> Result<Resolved, JitError> {
    match target {
        RelocTarget::Symbol(name) => resolve_symbol(m, name).map(Resolved::Addr),
        RelocTarget::Function(name) | RelocTarget::Data(name) => {
            resolve_name(m, pos, from, name, false)
        }
        RelocTarget::Declared(id) => match m.decls.funcs().get(id.index()) {
            Some(_) => resolve_function(m, pos, *id),
            None => Err(JitError::Decl(kestrel_module::DeclError::BadFuncId {
                id: *id,
            })),
        },
    }
}

/// Declared function `id`: its address, or its place in the batch.
fn resolve_function(m: &JitModule, pos: &Positions, id: FuncId) -> Result<Resolved, JitError> {
    let i = id.index();
    let decl = &m.decls.funcs()[i];
    match decl.state {
        State::Finalized { addr, .. } => Ok(Resolved::Addr(addr)),
        State::Defined(_) => Ok(Resolved::Batch(pos.funcs[&i])),
        State::Declared => Err(JitError::UndefinedFunction {
            name: decl.name.clone(),
        }),
    }
}

/// How errors name a relocation's target.
fn target_name(m: &JitModule, target: &RelocTarget) -> String {
    match target {
        RelocTarget::Function(n) | RelocTarget::Data(n) | RelocTarget::Symbol(n) => n.clone(),
        RelocTarget::Declared(id) => m
            .decls
            .funcs()
            .get(id.index())
            .map_or_else(|| format!("{id:?}"), |d| d.name.clone()),
    }
}

/// A module name (function or data); with `symbol_fallback`, else a symbol.
fn resolve_name(
    m: &JitModule,
    pos: &Positions,
    from: &str,
    name: &str,
    symbol_fallback: bool,
) -> Result<Resolved, JitError> {
    match m.decls.name(name) {
        Some(Name::Func(id)) => resolve_function(m, pos, id),
        Some(Name::Data(id)) => {
            let i = id.index();
            match m.decls.data_objects()[i].state {
                DataState::Finalized { addr, .. } => Ok(Resolved::Addr(addr)),
                DataState::Defined(_) => Ok(Resolved::BatchData(pos.data[&i])),
                DataState::Declared => Err(JitError::UndefinedFunction {
                    name: name.to_string(),
                }),
            }
        }
        None if symbol_fallback => resolve_symbol(m, name).map(Resolved::Addr),
        None => Err(JitError::UnknownFunction {
            from: from.to_string(),
            name: name.to_string(),
        }),
    }
}

/// Patch one relocation of the function at `func_off` in the region at `base`. `via` is
/// the call stub (for a call) or the GOT slot (for a GOT relocation) of the target, which errors
/// call `target_name()`.
#[allow(clippy::too_many_arguments)]
fn patch(
    bytes: &mut [u8],
    base: usize,
    func_off: usize,
    decl: &Decl,
    r: &Reloc,
    target: usize,
    via: Option<usize>,
    target_name: &dyn Fn() -> String,
) -> Result<(), JitError> {
    let at = func_off + r.offset as usize;
    let place = (base + at) as i64;
    let value = (target as i64).wrapping_add(r.addend);
    let out_of_range = || JitError::RelocOutOfRange {
        name: decl.name.clone(),
        offset: r.offset,
        kind: r.kind,
        target: target_name(),
        address: target as u64,
    };
    match r.kind {
        RelocKind::Abs8 => bytes[at..at + 8].copy_from_slice(&value.to_le_bytes()),
        RelocKind::Abs4 => {
            let v = u32::try_from(value).map_err(|_| out_of_range())?;
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        RelocKind::PcRel4 => {
            let v = i32::try_from(value.wrapping_sub(place)).map_err(|_| out_of_range())?;
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        RelocKind::GotPcRel4 => {
            let slot = via.expect("every GOT target has a slot") as i64;
            let v = i32::try_from(slot + r.addend - place).map_err(|_| out_of_range())?;
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        RelocKind::CallPcRel4 => {
            let direct = i32::try_from(value.wrapping_sub(place));
            let v = match (direct, via) {
                (Ok(v), _) => v,
                // Enter the stub, which jumps to `value + 4` (see `stub_key`).
                (Err(_), Some(s)) => {
                    i32::try_from(s as i64 - 4 - place).map_err(|_| out_of_range())?
                }
                (Err(_), None) => return Err(out_of_range()),
            };
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        RelocKind::Arm64Call26 => {
            let reach = |d: i64| d % 4 == 0 && (-(1 << 27)..1 << 27).contains(&d);
            let direct = value.wrapping_sub(place);
            let d = match via {
                _ if reach(direct) => direct,
                // The stub jumps to `value` (see `stub_key`).
                Some(s) if reach(s as i64 - place) => s as i64 - place,
                _ => return Err(out_of_range()),
            };
            patch_word(bytes, at, 0x03ff_ffff, (d >> 2) as u32);
        }
        RelocKind::Arm64AdrPage21 => {
            patch_adrp(bytes, at, value, place).ok_or_else(out_of_range)?
        }
        RelocKind::Arm64AddLo12 => patch_word(bytes, at, 0xfff << 10, (value as u32 & 0xfff) << 10),
        RelocKind::Arm64GotPage21 => {
            let slot = via.expect("every GOT target has a slot") as i64;
            patch_adrp(bytes, at, slot, place).ok_or_else(out_of_range)?
        }
        RelocKind::Arm64GotLo12 => {
            // Slots are 8-byte aligned: the `ldr` offset is the low 12 bits in 8-byte units.
            let slot = via.expect("every GOT target has a slot") as u32;
            patch_word(bytes, at, 0xfff << 10, ((slot & 0xfff) >> 3) << 10)
        }
    }
    Ok(())
}

/// Replace the bits `mask` of the little-endian instruction word at `at` with `bits`.
fn patch_word(bytes: &mut [u8], at: usize, mask: u32, bits: u32) {
    let word = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let word = (word & !mask) | (bits & mask);
    bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
}

/// Set the page distance of the `adrp` at `at` (address `place`) to the page of `value`;
/// `None` when it is beyond the 21-bit reach (±4 GiB).
fn patch_adrp(bytes: &mut [u8], at: usize, value: i64, place: i64) -> Option<()> {
    let pages = (value >> 12) - (place >> 12);
    if !(-(1 << 20)..1 << 20).contains(&pages) {
        return None;
    }
    let imm = pages as u32;
    // immlo is bits 29-30, immhi bits 5-23.
    let bits = ((imm & 3) << 29) | (((imm >> 2) & 0x7_ffff) << 5);
    patch_word(bytes, at, (3 << 29) | (0x7_ffff << 5), bits);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes[..4].try_into().unwrap())
    }

    /// The expected words are `aarch64-linux-gnu-objdump`'s reading of the instructions.
    #[test]
    fn adrp_gets_the_page_distance_and_refuses_beyond_4_gib() {
        let mut b = 0x9000_0000u32.to_le_bytes().to_vec();
        // `adrp x0, #+0x5000` from a page-aligned place: the low 12 bits do not count.
        patch_adrp(&mut b, 0, 0x1000_5123, 0x1000_0004).unwrap();
        assert_eq!(word(&b), 0xb000_0020);
        // One page back: `adrp x0, #-0x1000`.
        patch_adrp(&mut b, 0, 0x0fff_f000, 0x1000_0ffc).unwrap();
        assert_eq!(word(&b), 0xf0ff_ffe0);
        assert!(patch_adrp(&mut b, 0, 0x1_0000_0000 + 0x1000_0000, 0x1000_0000).is_none());
        assert!(patch_adrp(&mut b, 0, 0x1000_0000 - (1 << 32) - 0x1000, 0x1000_0000).is_none());
    }

    #[test]
    fn low_12_bit_fields_keep_the_rest_of_the_instruction() {
        // `add x0, x0, #0` becomes `add x0, x0, #0x13`.
        let mut b = 0x9100_0000u32.to_le_bytes().to_vec();
        patch_word(&mut b, 0, 0xfff << 10, (0x1234_5013u32 & 0xfff) << 10);
        assert_eq!(word(&b), 0x9100_4c00);
        // `ldr x1, [x1]` of a slot at ...020 becomes `ldr x1, [x1, #32]` (8-byte units).
        let mut b = 0xf940_0021u32.to_le_bytes().to_vec();
        patch_word(
            &mut b,
            0,
            0xfff << 10,
            ((0x7000_1020u32 & 0xfff) >> 3) << 10,
        );
        assert_eq!(word(&b), 0xf940_1021);
    }
}
