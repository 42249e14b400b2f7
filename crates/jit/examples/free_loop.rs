//! Compile, call and free functions in batches (four functions and one data object per
//! finalize) and report resident memory, to show that freeing keeps the profile flat.
//!
//! `cargo run --release -p kestrel-jit --example free_loop [FUNCTIONS]` (default 100,000)
//! prints VmRSS after the first 1,000 cycles (batches) and at the end, and the JIT's own
//! accounting. One function and the data object of each batch outlive it by one cycle, so
//! batches are freed piecewise and out of order.

use kestrel_jit::{DataDescription, FuncId, JitModule, Linkage, Value};

#[path = "../tests/shared/batch.rs"]
mod batch;
use batch::batch_clif;

const PER_BATCH: usize = 4;

/// Resident memory of this process in KiB, from /proc/self/status.
fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}

fn main() {
    let functions: usize = std::env::args()
        .nth(1)
        .map(|a| a.replace('_', "").parse().expect("FUNCTIONS is a number"))
        .unwrap_or(100_000);
    let cycles = functions / PER_BATCH;
    let mut m = JitModule::new();
    let mut survivor: Option<(FuncId, kestrel_jit::DataId)> = None;
    let mut rss_at_1000 = None;
    for cycle in 0..cycles {
        let slot = cycle % 2;
        let funcs = kestrel_ir::parse_functions(&batch_clif(slot, PER_BATCH), "free_loop.clif")
            .expect("valid CLIF");
        let data = m
            .declare_data(&format!("c{slot}_data"), Linkage::Local, false)
            .expect("declares");
        m.define_data(data, &DataDescription::bytes((cycle as i64).to_le_bytes()))
            .expect("defines");
        // Declared first, so calls between them are linked by id.
        for f in &funcs {
            m.declare_function(&kestrel_jit::ir_name(&f.name), Linkage::Local, &f.signature)
                .expect("declares");
        }
        let ids: Vec<FuncId> = funcs
            .iter()
            .map(|f| m.define_ir(f, &Default::default()).expect("compiles"))
            .collect();
        m.finalize_definitions().expect("links");
        let c = cycle as i64;
        // SAFETY: the code implements its signature and is memory-safe.
        let got = unsafe { m.call(ids[0], &[Value::I64(1)]) }.expect("runs");
        assert_eq!(got, vec![Value::I64((1 + 3 * c) * (PER_BATCH as i64 - 1))]);
        // SAFETY: nothing runs or refers to the freed objects any more.
        unsafe {
            if let Some((f, d)) = survivor.take() {
                m.free_function(f).expect("frees");
                m.free_data(d).expect("frees");
            }
            for &id in &ids[1..] {
                m.free_function(id).expect("frees");
            }
        }
        survivor = Some((ids[0], data));
        if cycle + 1 == 1000 {
            rss_at_1000 = Some(vm_rss_kib());
        }
    }
    let end = vm_rss_kib();
    let stats = m.memory_stats();
    println!("functions: {}, cycles: {cycles}", cycles * PER_BATCH);
    if let Some(start) = rss_at_1000 {
        let change = (end as f64 - start as f64) / start as f64 * 100.0;
        println!("VmRSS after 1000 cycles: {start} KiB, at the end: {end} KiB ({change:+.2}%)");
    } else {
        println!("VmRSS at the end: {end} KiB (fewer than 1000 cycles)");
    }
    println!("JIT memory at the end (one batch live): {stats:?}");
}
