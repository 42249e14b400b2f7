//! Finalizing: resolve imports, lay out the pending functions and data objects in one
//! region, patch relocations, protect the region, register its trap sites and unwind info.
//!
//! Layout of a region (one mapping):
//! - code: each function at a 16-byte aligned offset, padding filled with `int3`;
//! - call stubs: one 16-byte `movabs r11, target; jmp r11` per distinct call target outside
//!   the region (r11 is caller-saved and carries no argument in System V);
//! - GOT: one 8-byte slot per distinct `GotPcRel4` target;
//!   (all of the above read-execute)
//! - read-only data, from a page boundary (read-only);
//! - writable data, from a page boundary (read-write).
//!
//! Calls inside the region always reach with rel32 (a region is under 1 GiB); a call to
//! anything else uses rel32 when it reaches and its stub when it does not. A `PcRel4` data
//! reference must reach; a `GotPcRel4` always does (its slot is in the region).
//!
//! Postconditions on success: every pending function and data object is finalized at its
//! address, code is read-execute and never writable again, trap sites are visible to the
//! signal handler, and `.eh_frame` for the batch is registered with the unwinder. On error,
//! no state changes except imports resolved so far.
//!
//! Cost: O(code bytes + data bytes + relocations + trap sites + source ranges), with a
//! hash-map lookup per relocation named by name (none for a callee named by id) and per
//! distinct call or GOT target.

use rustc_hash::FxHashMap as HashMap;

use crate::compiled::{Reloc, RelocKind, RelocTarget};
use crate::error::JitError;
use crate::frames::FrameRegistration;
use crate::gdb_jit::GdbRegistration;
use crate::memory::{page_size, CodeRegion};
use crate::module::{DataState, Decl, JitModule, Linkage, LiveRegion, State};
use crate::symbols::lookup_process_symbol;
use crate::traps::registry::{self, FuncEntry, RegionInfo, TrapEntry};
use crate::FuncId;
use kestrel_module::decls::Name;
use kestrel_module::DataInit;

const FUNC_ALIGN: usize = 16;
const STUB_SIZE: usize = 16;
const GOT_SLOT: usize = 8;
/// Regions stay below this so every rel32 inside one reaches.
const MAX_REGION: usize = i32::MAX as usize / 2;

/// What a relocation points at, before the region's address is known.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
enum Resolved {
    /// The function at this index of the batch.
    Batch(usize),
    /// The data object at this index of the data batch.
    BatchData(usize),
    /// A fixed address (import, symbol, or function or data of an earlier region).
    Addr(usize),
}

/// Offsets (from the region base) of everything the batch places.
struct Layout {
    funcs: Vec<usize>,
    data: Vec<usize>,
    stub_start: usize,
    got_start: usize,
    /// End of the read-execute part, of the read-only part, and of the region.
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
    let mut targets: Vec<Vec<Resolved>> = Vec::with_capacity(batch.len());
    let mut stubs: HashMap<usize, usize> = HashMap::default();
    let mut got: HashMap<Resolved, usize> = HashMap::default();
    for &i in &batch {
        let func = defined(&m.decls.funcs()[i]);
        let mut resolved = Vec::with_capacity(func.relocs.len());
        for r in &func.relocs {
            let t = resolve_target(m, &pos, &m.decls.funcs()[i].name, &r.target)?;
            match (r.kind, t) {
                (RelocKind::CallPcRel4, Resolved::Addr(a)) => {
                    let next = stubs.len();
                    stubs.entry(stub_key(a, r.addend)).or_insert(next);
                }
                (RelocKind::GotPcRel4, _) => {
                    let next = got.len();
                    got.entry(t).or_insert(next);
                }
                _ => {}
            }
            resolved.push(t);
        }
        targets.push(resolved);
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
    let layout = layout(m, &batch, &data_batch, stubs.len(), got.len())?;

    let mut region = CodeRegion::new_writable(layout.total).map_err(|source| JitError::Memory {
        op: "mmap of code memory",
        source,
    })?;
    let base = region.base();
    {
        let bytes = region.bytes_mut();
        // Code, with `int3` in the padding before each function and from the last one to
        // the end of the stubs (each byte written once).
        let mut written = 0;
        for (p, &i) in batch.iter().enumerate() {
            let code = &defined(&m.decls.funcs()[i]).code;
            let at = layout.funcs[p];
            bytes[written..at].fill(0xcc);
            bytes[at..at + code.len()].copy_from_slice(code);
            written = at + code.len();
        }
        bytes[written..layout.got_start].fill(0xcc);
        for (&key, &s) in &stubs {
            let at = layout.stub_start + s * STUB_SIZE;
            write_stub(&mut bytes[at..at + STUB_SIZE], key);
        }
        for (&t, &g) in &got {
            let at = layout.got_start + g * GOT_SLOT;
            let addr = layout.address(base, t) as u64;
            bytes[at..at + GOT_SLOT].copy_from_slice(&addr.to_le_bytes());
        }
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
            for (r, &t) in defined(decl).relocs.iter().zip(&targets[p]) {
                let target = layout.address(base, t);
                let via = match r.kind {
                    RelocKind::GotPcRel4 => Some(base + layout.got_start + got[&t] * GOT_SLOT),
                    _ => stubs
                        .get(&stub_key(target, r.addend))
                        .map(|&s| base + layout.stub_start + s * STUB_SIZE),
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
    }
    region
        .seal(layout.code_end, layout.ro_end)
        .map_err(|source| JitError::Memory {
            op: "mprotect of code and data memory",
            source,
        })?;

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
    let mut funcs: Vec<FuncEntry> = batch
        .iter()
        .enumerate()
        .map(|(p, &i)| FuncEntry {
            region_offset: layout.funcs[p] as u32,
            len: defined(&m.decls.funcs()[i]).code.len() as u32,
            func: i as u32,
            name: m.decls.funcs()[i].name.as_str().into(),
        })
        .collect();
    // Functions are placed at increasing offsets in batch order; sorting is for the rest.
    if !funcs.is_sorted_by_key(|f| f.region_offset) {
        funcs.sort_by_key(|f| f.region_offset);
    }
    let registration = registry::register(RegionInfo {
        start: base,
        len: region.len(),
        traps: traps.into_boxed_slice(),
        funcs: funcs.into_boxed_slice(),
    })
    .ok_or(JitError::TooManyRegions {
        max: registry::MAX_REGIONS,
    })?;
    let placed: Vec<(usize, &crate::CompiledFunction)> = batch
        .iter()
        .enumerate()
        .map(|(p, &i)| (base + layout.funcs[p], defined(&m.decls.funcs()[i])))
        .collect();
    let frames = FrameRegistration::register(&placed);
    let debug = m.debug_info.then(|| {
        let named: Vec<_> = batch
            .iter()
            .zip(&placed)
            .map(|(&i, &(addr, f))| (addr, m.decls.funcs()[i].name.as_str(), f))
            .collect();
        GdbRegistration::register(base, region.bytes(layout.code_end), &named)
    });
    if m.perf_map {
        let named = batch
            .iter()
            .zip(&placed)
            .map(|(&i, &(addr, f))| (addr, f.code.len(), m.decls.funcs()[i].name.as_str()));
        crate::perf_map::append(named);
    }

    // Reuse the slot of a released region, so finalize/free cycles do not grow the table.
    let region_index = m.free_regions.pop().unwrap_or(m.regions.len());
    for (p, &i) in batch.iter().enumerate() {
        m.decls.funcs_mut()[i].state = State::Finalized {
            addr: base + layout.funcs[p],
            region: Some(region_index),
        };
    }
    for (p, &i) in data_batch.iter().enumerate() {
        m.decls.data_objects_mut()[i].state = DataState::Finalized(base + layout.data[p]);
    }
    let live = Some(LiveRegion {
        _debug: debug,
        _frames: frames,
        _registration: registration,
        _memory: region,
        live_functions: batch.len(),
        has_data: !data_batch.is_empty(),
    });
    if region_index == m.regions.len() {
        m.regions.push(live);
    } else {
        m.regions[region_index] = live;
    }
    Ok(())
}

/// Where each part goes; read-only data before writable data, each from a page boundary.
fn layout(
    m: &JitModule,
    batch: &[usize],
    data_batch: &[usize],
    stubs: usize,
    got: usize,
) -> Result<Layout, JitError> {
    let mut end = 0usize;
    let mut funcs = Vec::with_capacity(batch.len());
    for &i in batch {
        end = end.next_multiple_of(FUNC_ALIGN);
        funcs.push(end);
        end += defined(&m.decls.funcs()[i]).code.len();
    }
    let stub_start = end.next_multiple_of(FUNC_ALIGN);
    let got_start = stub_start + stubs * STUB_SIZE;
    let code_end = got_start + got * GOT_SLOT;
    let page = page_size();
    let mut data = vec![0; data_batch.len()];
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
            end += desc.init.len();
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
        data,
        stub_start,
        got_start,
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
            m.decls.funcs_mut()[i].state = State::Finalized { addr, region: None };
        }
    }
    for i in 0..m.decls.data_objects().len() {
        let decl = &m.decls.data_objects()[i];
        if decl.linkage == Linkage::Import && matches!(decl.state, DataState::Declared) {
            let addr = resolve_symbol(m, &decl.name)?;
            m.decls.data_objects_mut()[i].state = DataState::Finalized(addr);
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
                DataState::Finalized(addr) => Ok(Resolved::Addr(addr)),
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

/// The address a call with this addend lands on: stubs are entered at their start, so a
/// stub stands for `target + addend + 4` (the usual addend -4 gives `target`).
fn stub_key(target: usize, addend: i64) -> usize {
    target.wrapping_add_signed(addend as isize + 4)
}

/// `movabs r11, dest; jmp r11; int3 ...`
fn write_stub(out: &mut [u8], dest: usize) {
    out[..2].copy_from_slice(&[0x49, 0xbb]);
    out[2..10].copy_from_slice(&(dest as u64).to_le_bytes());
    out[10..13].copy_from_slice(&[0x41, 0xff, 0xe3]);
}

/// Patch one relocation of the function at `func_off` in the region at `base`. `via` is
/// the call stub (for a call) or the GOT slot (for `GotPcRel4`) of the target, which errors
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
        RelocKind::Foreign(kind) => {
            unreachable!("`define_function` rejects {kind} relocations of other ISAs")
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
    }
    Ok(())
}
