//! Finalizing: resolve imports, lay out the pending functions in one region, patch
//! relocations, protect the region and register its trap sites.
//!
//! Layout of a region: each function at a 16-byte aligned offset, padding filled with `int3`,
//! then one 16-byte call stub per distinct call target outside the region. A stub is
//! `movabs r11, target; jmp r11` (r11 is caller-saved and carries no argument in System V).
//! Calls inside the region always reach with rel32 (a region is under 2 GiB); a call to
//! anything else uses rel32 when it reaches and its stub when it does not. No GOT, no PLT.
//!
//! Postconditions on success: every pending function is `Finalized` at its address, the
//! region is read-execute (never writable again), and its trap sites are visible to the
//! signal handler. On error, no state changes except imports resolved so far.

use std::collections::HashMap;

use crate::compiled::{Reloc, RelocKind, RelocTarget};
use crate::error::JitError;
use crate::memory::CodeRegion;
use crate::module::{Decl, JitModule, Linkage, LiveRegion, State};
use crate::symbols::lookup_process_symbol;
use crate::traps::registry::{self, RegionInfo, TrapEntry};

const FUNC_ALIGN: usize = 16;
const STUB_SIZE: usize = 16;
/// Regions stay below this so every rel32 inside one reaches.
const MAX_REGION: usize = i32::MAX as usize / 2;

/// What a relocation points at, before the region's address is known.
#[derive(Copy, Clone)]
enum Resolved {
    /// The function at this index of the batch.
    Batch(usize),
    /// A fixed address (import, symbol, or function of an earlier region).
    Addr(usize),
}

pub(crate) fn finalize(m: &mut JitModule) -> Result<(), JitError> {
    resolve_imports(m)?;

    let batch: Vec<usize> = (0..m.decls.len())
        .filter(|&i| matches!(m.decls[i].state, State::Defined(_)))
        .collect();
    if batch.is_empty() {
        return Ok(());
    }
    let batch_pos: HashMap<usize, usize> = batch.iter().enumerate().map(|(p, &i)| (i, p)).collect();

    // Layout and target resolution, before any memory is mapped.
    let mut offsets = Vec::with_capacity(batch.len());
    let mut end = 0usize;
    let mut targets: Vec<Vec<Resolved>> = Vec::with_capacity(batch.len());
    let mut stubs: HashMap<usize, usize> = HashMap::new();
    for &i in &batch {
        let func = defined(&m.decls[i]);
        end = end.next_multiple_of(FUNC_ALIGN);
        offsets.push(end);
        end += func.code.len();
        let mut resolved = Vec::with_capacity(func.relocs.len());
        for r in &func.relocs {
            let t = resolve_target(m, &batch_pos, &m.decls[i].name, &r.target)?;
            if let (RelocKind::CallPcRel4, Resolved::Addr(a)) = (r.kind, t) {
                let next = stubs.len();
                stubs.entry(stub_key(a, r.addend)).or_insert(next);
            }
            resolved.push(t);
        }
        targets.push(resolved);
    }
    let stub_start = end.next_multiple_of(FUNC_ALIGN);
    let total = stub_start + stubs.len() * STUB_SIZE;
    if total > MAX_REGION {
        return Err(JitError::CodeTooLarge { bytes: total });
    }

    let mut region = CodeRegion::new_writable(total).map_err(|source| JitError::Memory {
        op: "mmap of code memory",
        source,
    })?;
    let base = region.base();
    {
        let bytes = region.bytes_mut();
        bytes.fill(0xcc);
        for (p, &i) in batch.iter().enumerate() {
            let code = &defined(&m.decls[i]).code;
            bytes[offsets[p]..offsets[p] + code.len()].copy_from_slice(code);
        }
        for (&key, &s) in &stubs {
            let at = stub_start + s * STUB_SIZE;
            write_stub(&mut bytes[at..at + STUB_SIZE], key);
        }
        for (p, &i) in batch.iter().enumerate() {
            let decl = &m.decls[i];
            for (r, &t) in defined(decl).relocs.iter().zip(&targets[p]) {
                let target = match t {
                    Resolved::Batch(q) => base + offsets[q],
                    Resolved::Addr(a) => a,
                };
                let stub = stubs
                    .get(&stub_key(target, r.addend))
                    .map(|&s| base + stub_start + s * STUB_SIZE);
                patch(bytes, base, offsets[p], decl, r, target, stub)?;
            }
        }
    }
    region
        .make_executable()
        .map_err(|source| JitError::Memory {
            op: "mprotect of code memory to read-execute",
            source,
        })?;

    let mut traps = Vec::new();
    for (p, &i) in batch.iter().enumerate() {
        for t in &defined(&m.decls[i]).traps {
            traps.push(TrapEntry {
                region_offset: (offsets[p] + t.offset as usize) as u32,
                func: i as u32,
                func_offset: t.offset,
                code: t.code,
            });
        }
    }
    traps.sort_by_key(|t| t.region_offset);
    traps.dedup_by_key(|t| t.region_offset);
    let registration = registry::register(RegionInfo {
        start: base,
        len: region.len(),
        traps: traps.into_boxed_slice(),
    })
    .ok_or(JitError::TooManyRegions {
        max: registry::MAX_REGIONS,
    })?;

    for (p, &i) in batch.iter().enumerate() {
        m.decls[i].state = State::Finalized(base + offsets[p]);
    }
    m.regions.push(LiveRegion {
        _registration: registration,
        _memory: region,
    });
    Ok(())
}

fn defined(decl: &Decl) -> &crate::CompiledFunction {
    match &decl.state {
        State::Defined(f) => f,
        _ => unreachable!("batch members are defined"),
    }
}

/// Resolve every declared import that is not resolved yet.
fn resolve_imports(m: &mut JitModule) -> Result<(), JitError> {
    for i in 0..m.decls.len() {
        let decl = &m.decls[i];
        if decl.linkage == Linkage::Import && matches!(decl.state, State::Declared) {
            let addr = resolve_symbol(m, &decl.name)?;
            m.decls[i].state = State::Finalized(addr);
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

fn resolve_target(
    m: &JitModule,
    batch_pos: &HashMap<usize, usize>,
    from: &str,
    target: &RelocTarget,
) -> Result<Resolved, JitError> {
    match target {
        RelocTarget::Symbol(name) => resolve_symbol(m, name).map(Resolved::Addr),
        RelocTarget::Function(name) => {
            let id = m.names.get(name).ok_or_else(|| JitError::UnknownFunction {
                from: from.to_string(),
                name: name.clone(),
            })?;
            let i = id.as_u32() as usize;
            match m.decls[i].state {
                State::Finalized(addr) => Ok(Resolved::Addr(addr)),
                State::Defined(_) => Ok(Resolved::Batch(batch_pos[&i])),
                State::Declared => Err(JitError::UndefinedFunction { name: name.clone() }),
            }
        }
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

/// Patch one relocation of the function at `func_off` in the region at `base`.
fn patch(
    bytes: &mut [u8],
    base: usize,
    func_off: usize,
    decl: &Decl,
    r: &Reloc,
    target: usize,
    stub: Option<usize>,
) -> Result<(), JitError> {
    let at = func_off + r.offset as usize;
    let place = (base + at) as i64;
    let value = (target as i64).wrapping_add(r.addend);
    let out_of_range = || JitError::RelocOutOfRange {
        name: decl.name.clone(),
        offset: r.offset,
        kind: r.kind,
        target: match &r.target {
            RelocTarget::Function(n) | RelocTarget::Symbol(n) => n.clone(),
        },
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
        RelocKind::CallPcRel4 => {
            let direct = i32::try_from(value.wrapping_sub(place));
            let v = match (direct, stub) {
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
