//! Freeing single functions and data objects of a batch: the pages each one alone used go
//! away (by the JIT's accounting and by `/proc/self/maps`), the rest keeps working, and
//! freed ids can be defined again; a long compile/call/free loop stays flat.

use std::collections::BTreeSet;

use kestrel_ir::{AbiParam, CallConv, Signature, TrapCode, Type};
use kestrel_jit::{
    CallError, CompiledFunction, DataDescription, FuncId, JitError, JitModule, Linkage, Reloc,
    RelocKind, RelocTarget, TrapSite, Value,
};

mod shared {
    pub mod batch;
}
use shared::batch::batch_clif;

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

fn sig_i64() -> Signature {
    let mut s = Signature::new(CallConv::SystemV);
    s.params = vec![AbiParam::new(Type::I64)];
    s.returns = vec![AbiParam::new(Type::I64)];
    s
}

/// Hand-assembled x86-64 bodies.
#[cfg(target_arch = "x86_64")]
mod code {
    use super::*;

    const NOP: u8 = 0x90;

    /// `reads_k(x) = k + x`: `pad` nops, then `mov rax, [rip + k]; add rax, rdi; ret`.
    pub fn reads_k(pad: usize) -> CompiledFunction {
        let mut code = vec![NOP; pad];
        code.extend([0x48, 0x8b, 0x05, 0, 0, 0, 0, 0x48, 0x01, 0xf8, 0xc3]);
        CompiledFunction {
            relocs: vec![Reloc {
                offset: pad as u32 + 3,
                kind: RelocKind::PcRel4,
                target: RelocTarget::Data("k".into()),
                addend: -4,
            }],
            ..CompiledFunction::new(code, sig_i64())
        }
    }

    /// `calls_leaf(x) = leaf(x) + 1`: `call leaf; add rax, 1; ret`.
    pub fn calls_leaf() -> CompiledFunction {
        let code = vec![0xe8, 0, 0, 0, 0, 0x48, 0x83, 0xc0, 0x01, 0xc3];
        CompiledFunction {
            relocs: vec![Reloc {
                offset: 1,
                kind: RelocKind::CallPcRel4,
                target: RelocTarget::Function("leaf".into()),
                addend: -4,
            }],
            ..CompiledFunction::new(code, sig_i64())
        }
    }

    /// `leaf(x) = if x == 0 { trap user9 } else { 3 * x }`, after `pad` nops.
    pub fn leaf(pad: usize) -> CompiledFunction {
        let mut code = vec![NOP; pad];
        // test rdi, rdi; jnz +2; ud2; imul rax, rdi, 3; ret
        code.extend([
            0x48, 0x85, 0xff, 0x75, 0x02, 0x0f, 0x0b, 0x48, 0x6b, 0xc7, 0x03, 0xc3,
        ]);
        CompiledFunction {
            traps: vec![TrapSite {
                offset: leaf_trap(pad),
                code: TrapCode::user(9).unwrap(),
            }],
            ..CompiledFunction::new(code, sig_i64())
        }
    }

    /// The offset of `leaf(pad)`'s trap site.
    pub fn leaf_trap(pad: usize) -> u32 {
        pad as u32 + 5
    }
}

/// The same bodies, hand-assembled for AArch64 (`pad` rounded up to whole instructions).
#[cfg(target_arch = "aarch64")]
mod code {
    use super::*;

    fn words(pad: usize, body: &[u32]) -> Vec<u8> {
        let nops = std::iter::repeat_n(0xd503_201f, pad.div_ceil(4));
        nops.chain(body.iter().copied())
            .flat_map(u32::to_le_bytes)
            .collect()
    }

    /// `reads_k(x) = k + x`: nops, then `adrp x1, k; add x1, x1, :lo12:k; ldr x1, [x1];
    /// add x0, x0, x1; ret`.
    pub fn reads_k(pad: usize) -> CompiledFunction {
        let at = pad.div_ceil(4) as u32 * 4;
        let code = words(
            pad,
            &[
                0x9000_0001,
                0x9100_0021,
                0xf940_0021,
                0x8b01_0000,
                0xd65f_03c0,
            ],
        );
        let k = |offset, kind| Reloc {
            offset,
            kind,
            target: RelocTarget::Data("k".into()),
            addend: 0,
        };
        CompiledFunction {
            relocs: vec![
                k(at, RelocKind::Arm64AdrPage21),
                k(at + 4, RelocKind::Arm64AddLo12),
            ],
            ..CompiledFunction::new(code, sig_i64())
        }
    }

    /// `calls_leaf(x) = leaf(x) + 1`: `stp x29, x30, [sp, #-16]!; bl leaf; add x0, x0, #1;
    /// ldp x29, x30, [sp], #16; ret`.
    pub fn calls_leaf() -> CompiledFunction {
        let code = words(
            0,
            &[
                0xa9bf_7bfd,
                0x9400_0000,
                0x9100_0400,
                0xa8c1_7bfd,
                0xd65f_03c0,
            ],
        );
        CompiledFunction {
            relocs: vec![Reloc {
                offset: 4,
                kind: RelocKind::Arm64Call26,
                target: RelocTarget::Function("leaf".into()),
                addend: 0,
            }],
            ..CompiledFunction::new(code, sig_i64())
        }
    }

    /// `leaf(x) = if x == 0 { trap user9 } else { 3 * x }`, after nops: `cbnz x0, +8;
    /// udf #0; add x0, x0, x0, lsl #1; ret`.
    pub fn leaf(pad: usize) -> CompiledFunction {
        let code = words(pad, &[0xb500_0040, 0x0000_0000, 0x8b00_0400, 0xd65f_03c0]);
        CompiledFunction {
            traps: vec![TrapSite {
                offset: leaf_trap(pad),
                code: TrapCode::user(9).unwrap(),
            }],
            ..CompiledFunction::new(code, sig_i64())
        }
    }

    /// The offset of `leaf(pad)`'s trap site.
    pub fn leaf_trap(pad: usize) -> u32 {
        pad.div_ceil(4) as u32 * 4 + 4
    }
}

use code::{calls_leaf, leaf, leaf_trap, reads_k};

/// The objects of one batch, in the order `finalize_definitions` lays functions out
/// (declaration order): `reads_k` (over two pages), `calls_leaf` (small), `leaf` (over two
/// pages), so the three share the middle page; and the writable data object `k`.
struct Batch {
    funcs: [FuncId; 3],
    k: kestrel_jit::DataId,
    /// Code bytes of each function (none of them needs a stub or GOT slot).
    sizes: [usize; 3],
}

const READS_K: usize = 0;
const CALLS_LEAF: usize = 1;
const LEAF: usize = 2;
/// The data object's place in a `live` array after the three functions.
const K: usize = 3;

fn define_batch(m: &mut JitModule, k_value: i64) -> Batch {
    let page = page();
    let bodies = [reads_k(page + 900), calls_leaf(), leaf(page + 500)];
    let sizes = [
        bodies[0].code.len(),
        bodies[1].code.len(),
        bodies[2].code.len(),
    ];
    let names = ["reads_k", "calls_leaf", "leaf"];
    let mut funcs = [FuncId::from_index(0); 3];
    for (i, body) in bodies.into_iter().enumerate() {
        funcs[i] = m
            .declare_function(names[i], Linkage::Local, &sig_i64())
            .unwrap();
        m.define_function(funcs[i], body).unwrap();
    }
    let k = m.declare_data("k", Linkage::Local, true).unwrap();
    m.define_data(k, &DataDescription::bytes(k_value.to_le_bytes()))
        .unwrap();
    Batch { funcs, k, sizes }
}

/// The permission field (`r-xp`, `---p`, …) of the mapping holding `addr`, if any.
fn perms_at(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines().find_map(|l| {
        let mut fields = l.split(' ');
        let (a, b) = fields.next()?.split_once('-')?;
        let (a, b) = (
            usize::from_str_radix(a, 16).ok()?,
            usize::from_str_radix(b, 16).ok()?,
        );
        (a..b)
            .contains(&addr)
            .then(|| fields.next().unwrap().to_string())
    })
}

/// Pages (by number) touched by `[addr, addr + len)`.
fn pages_of(addr: usize, len: usize) -> impl Iterator<Item = usize> {
    let page = page();
    addr / page..(addr + len).div_ceil(page)
}

/// Check the module against the model "a page is mapped exactly while a live object
/// touches it", and call every function whose code and dependencies are live.
fn check(m: &JitModule, b: &Batch, addrs: &[usize; 3], k_addr: usize, live: &[bool; 4]) {
    let page = page();
    let mut code_pages = BTreeSet::new();
    let mut all_code_pages = BTreeSet::new();
    for f in 0..3 {
        for p in pages_of(addrs[f], b.sizes[f]) {
            all_code_pages.insert(p);
            if live[f] {
                code_pages.insert(p);
            }
        }
    }
    let stats = m.memory_stats();
    assert_eq!(m.code_bytes_mapped(), code_pages.len() * page, "{live:?}");
    assert_eq!(stats.code_bytes, code_pages.len() * page, "{live:?}");
    assert_eq!(stats.data_bytes, if live[K] { page } else { 0 }, "{live:?}");
    for &p in &all_code_pages {
        let perms = perms_at(p * page);
        if code_pages.contains(&p) {
            assert_eq!(perms.as_deref(), Some("r-xp"), "page {p:x}, live {live:?}");
        } else {
            assert_ne!(perms.as_deref().map(|s| &s[..3]), Some("r-x"), "page {p:x}");
            assert_ne!(perms.as_deref().map(|s| &s[..2]), Some("rw"), "page {p:x}");
        }
    }
    let k_perms = perms_at(k_addr);
    if live[K] {
        assert_eq!(k_perms.as_deref(), Some("rw-p"));
    } else {
        assert_ne!(k_perms.as_deref().map(|s| &s[..1]), Some("r"));
    }
    let call = |f: usize, x: i64| unsafe { m.call(b.funcs[f], &[Value::I64(x)]) };
    if live[READS_K] && live[K] {
        let k = unsafe { *(k_addr as *const i64) };
        assert_eq!(call(READS_K, 5).unwrap(), vec![Value::I64(k + 5)]);
    }
    if live[CALLS_LEAF] && live[LEAF] {
        assert_eq!(call(CALLS_LEAF, 4).unwrap(), vec![Value::I64(13)]);
    }
    if live[LEAF] {
        assert_eq!(call(LEAF, 7).unwrap(), vec![Value::I64(21)]);
        match call(LEAF, 0) {
            Err(CallError::Trap(t)) => {
                assert_eq!(t.code, TrapCode::user(9).unwrap());
                assert_eq!(t.func, b.funcs[LEAF]);
            }
            other => panic!("expected a trap, got {other:?}"),
        }
    }
}

/// Every order of freeing 3 functions and 1 data object finalized together.
fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

#[test]
fn each_object_of_a_batch_frees_its_own_pages_in_every_order() {
    let orders = permutations(&[READS_K, CALLS_LEAF, LEAF, K]);
    assert_eq!(orders.len(), 24);
    for order in orders {
        let mut m = JitModule::new();
        let b = define_batch(&mut m, 40);
        m.finalize_definitions().unwrap();
        let addrs = b
            .funcs
            .map(|f| m.get_finalized_function(f).unwrap() as usize);
        let k_addr = m.get_finalized_data(b.k).unwrap() as usize;
        // The layout this test's model relies on: the three share the middle page.
        let mid = |f: usize| pages_of(addrs[f], b.sizes[f]).collect::<BTreeSet<_>>();
        assert_eq!(mid(READS_K).len(), 2);
        assert_eq!(mid(LEAF).len(), 2);
        assert!(mid(CALLS_LEAF).is_subset(&mid(READS_K)));
        assert!(mid(CALLS_LEAF).is_subset(&mid(LEAF)));
        let mut live = [true; 4];
        check(&m, &b, &addrs, k_addr, &live);
        for &item in &order {
            if item == K {
                unsafe { m.free_data(b.k) }.unwrap();
                assert!(matches!(
                    unsafe { m.free_data(b.k) },
                    Err(JitError::NotFreeable { .. })
                ));
            } else {
                unsafe { m.free_function(b.funcs[item]) }.unwrap();
                assert!(matches!(
                    unsafe { m.free_function(b.funcs[item]) },
                    Err(JitError::NotFreeable { .. })
                ));
            }
            live[item] = false;
            check(&m, &b, &addrs, k_addr, &live);
        }
        assert_eq!(m.memory_stats().code_bytes + m.memory_stats().data_bytes, 0);
        assert!(format!("{m:?}").contains("batches: 0"), "{m:?}");

        // Every id can be defined and finalized again, and works.
        let page = page();
        for (f, body) in [reads_k(page + 900), calls_leaf(), leaf(page + 500)]
            .into_iter()
            .enumerate()
        {
            m.define_function(b.funcs[f], body).unwrap();
        }
        m.define_data(b.k, &DataDescription::bytes(100i64.to_le_bytes()))
            .unwrap();
        m.finalize_definitions().unwrap();
        let addrs = b
            .funcs
            .map(|f| m.get_finalized_function(f).unwrap() as usize);
        let k_addr = m.get_finalized_data(b.k).unwrap() as usize;
        check(&m, &b, &addrs, k_addr, &[true; 4]);
    }
}

#[test]
fn freeing_part_of_a_batch_keeps_the_rest_and_later_batches_reuse_the_pages() {
    let mut m = JitModule::new();
    let b = define_batch(&mut m, 1);
    m.finalize_definitions().unwrap();
    let old_leaf = m.get_finalized_function(b.funcs[LEAF]).unwrap() as usize;
    unsafe { m.free_function(b.funcs[LEAF]) }.unwrap();
    unsafe { m.free_function(b.funcs[CALLS_LEAF]) }.unwrap();
    let reserved = m.memory_stats().reserved_bytes;
    // A second batch of one function, with a trap site of its own, placed in freed pages
    // or elsewhere in the arena: no new reservation, and its trap is reported, not an old
    // one.
    let id = m
        .declare_function("leaf2", Linkage::Local, &sig_i64())
        .unwrap();
    m.define_function(id, leaf(10)).unwrap();
    m.finalize_definitions().unwrap();
    assert_eq!(m.memory_stats().reserved_bytes, reserved);
    let new_leaf = m.get_finalized_function(id).unwrap() as usize;
    assert!(new_leaf.abs_diff(old_leaf) < 256 << 20, "same arena");
    match unsafe { m.call(id, &[Value::I64(0)]) } {
        Err(CallError::Trap(t)) => assert_eq!((t.func, t.offset), (id, leaf_trap(10))),
        other => panic!("expected a trap, got {other:?}"),
    }
    let k = unsafe { *(m.get_finalized_data(b.k).unwrap() as *const i64) };
    assert_eq!(k, 1);
    assert_eq!(
        unsafe { m.call(b.funcs[READS_K], &[Value::I64(2)]) }.unwrap(),
        vec![Value::I64(3)]
    );
}

#[test]
fn imports_and_pending_definitions_are_not_freeable() {
    let mut m = JitModule::new();
    let f = m
        .declare_function("pending", Linkage::Local, &sig_i64())
        .unwrap();
    m.define_function(f, leaf(0)).unwrap();
    assert!(matches!(
        unsafe { m.free_function(f) },
        Err(JitError::NotFreeable { .. })
    ));
    let d = m
        .declare_data("pending_data", Linkage::Local, false)
        .unwrap();
    assert!(matches!(
        unsafe { m.free_data(d) },
        Err(JitError::NotFreeable { .. })
    ));
}

#[test]
fn a_long_compile_call_free_loop_keeps_the_mapped_bytes_flat() {
    const PER_BATCH: usize = 4;
    const FUNCTIONS: usize = 5_000;
    let mut m = JitModule::new();
    let mut peak = kestrel_jit::MemoryStats::default();
    let mut after_first = None;
    // One function of each batch outlives it by a cycle, so batches free out of order.
    let mut survivor: Option<(FuncId, kestrel_jit::DataId)> = None;
    for cycle in 0..FUNCTIONS / PER_BATCH {
        let slot = cycle % 2;
        let funcs = kestrel_ir::parse_functions(&batch_clif(slot, PER_BATCH), "loop.clif")
            .expect("valid CLIF");
        let data = m
            .declare_data(&format!("c{slot}_data"), Linkage::Local, false)
            .unwrap();
        m.define_data(data, &DataDescription::bytes((cycle as i64).to_le_bytes()))
            .unwrap();
        // Declared first, so calls between them are linked by id.
        for f in &funcs {
            m.declare_function(&kestrel_jit::ir_name(&f.name), Linkage::Local, &f.signature)
                .unwrap();
        }
        let ids: Vec<FuncId> = funcs
            .iter()
            .map(|f| m.define_ir(f, &Default::default()).unwrap())
            .collect();
        m.finalize_definitions().unwrap();
        let c = cycle as i64;
        // f0(x) = ((x + c) + c + c) * 3 with four functions.
        let got = unsafe { m.call(ids[0], &[Value::I64(1)]) }.unwrap();
        assert_eq!(got, vec![Value::I64((1 + 3 * c) * (PER_BATCH as i64 - 1))]);
        let stats = m.memory_stats();
        peak.code_bytes = peak.code_bytes.max(stats.code_bytes);
        peak.data_bytes = peak.data_bytes.max(stats.data_bytes);
        peak.reserved_bytes = peak.reserved_bytes.max(stats.reserved_bytes);
        if let Some((f, d)) = survivor.take() {
            unsafe { m.free_function(f) }.unwrap();
            unsafe { m.free_data(d) }.unwrap();
        }
        for &id in &ids[1..] {
            unsafe { m.free_function(id) }.unwrap();
        }
        survivor = Some((ids[0], data));
        if cycle == 0 {
            after_first = Some(m.memory_stats());
        }
    }
    let (f, d) = survivor.unwrap();
    unsafe { m.free_function(f) }.unwrap();
    unsafe { m.free_data(d) }.unwrap();
    let end = m.memory_stats();
    assert_eq!((end.code_bytes, end.data_bytes), (0, 0));
    // At most two batches are ever live: each is a few pages of code and one of data.
    let page = page();
    assert!(peak.code_bytes <= 2 * 4 * page, "{peak:?}");
    assert!(peak.data_bytes <= 2 * page, "{peak:?}");
    // The first arena was enough for all 1,250 batches.
    assert_eq!(end.reserved_bytes, after_first.unwrap().reserved_bytes);
    assert!(format!("{m:?}").contains("batch_slots: 2"), "{m:?}");
}
