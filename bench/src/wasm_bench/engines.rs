//! The two engines `bench wasm` times, each running a WASI preview 1 program to its end:
//! Kestrel (`kestrel-wasm`, in a chosen bounds-check mode) and Wasmtime 48 (`wasmtime` with
//! `wasmtime-wasi`'s preview 1, `Config::new()`: Cranelift at its default `opt_level`
//! speed, parallel compilation, guard-page memories).
//!
//! Contract: [`compile_*`] time the whole-module compile (validation, translation, code
//! generation and linking, from bytes to a module ready to instantiate); [`run_*`]
//! instantiate with the program's directory preopened as `.`, argv `[name]`, the given
//! stdin, captured stdout, and Sightglass's `bench.start`/`bench.end` as no-ops, and time
//! `_start` alone. Both return what the program printed and its exit code, so the caller
//! can check the engines agree before comparing their times. Cost: the program's own.

use std::path::Path;
use std::time::{Duration, Instant};

use kestrel_wasm::wasi::{Capture, Input, Output, Wasi, WasiCtx};
use kestrel_wasm::{Config, Extern, Func, Imports};

/// What a run printed, its exit code, and how long `_start` took.
pub struct Run {
    pub stdout: Vec<u8>,
    pub status: i32,
    pub time: Duration,
}

pub fn compile_kestrel(
    wasm: &[u8],
    config: &Config,
) -> Result<(kestrel_wasm::Module, Duration), String> {
    let start = Instant::now();
    let module = kestrel_wasm::Module::with_config(wasm, config).map_err(|e| e.to_string())?;
    Ok((module, start.elapsed()))
}

pub fn compile_wasmtime(
    engine: &wasmtime::Engine,
    wasm: &[u8],
) -> Result<(wasmtime::Module, Duration), String> {
    let start = Instant::now();
    let module = wasmtime::Module::new(engine, wasm).map_err(|e| e.to_string())?;
    Ok((module, start.elapsed()))
}

pub fn run_kestrel(
    module: &kestrel_wasm::Module,
    dir: &Path,
    name: &str,
    stdin: &[u8],
) -> Result<Run, String> {
    let stdout = Capture::new();
    let ctx = WasiCtx::new()
        .arg(name)
        .preopen_dir(dir, ".")
        .stdin(Input::Bytes(stdin.to_vec()))
        .stdout(Output::Capture(stdout.clone()))
        .stderr(Output::Discard);
    let wasi = Wasi::new(ctx).map_err(|e| e.to_string())?;
    let mut imports = Imports::new();
    for marker in ["start", "end"] {
        let f = Func::wrap(wasmparser::FuncType::new([], []), |_| Ok(vec![]))
            .map_err(|e| e.to_string())?;
        imports.define("bench", marker, Extern::Func(f));
    }
    let instance = wasi
        .instantiate(module, &imports)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let status = wasi.run_start(&instance).map_err(|e| e.to_string())?;
    let time = start.elapsed();
    Ok(Run {
        stdout: stdout.contents(),
        status,
        time,
    })
}

pub fn run_wasmtime(
    engine: &wasmtime::Engine,
    module: &wasmtime::Module,
    dir: &Path,
    name: &str,
    stdin: &[u8],
) -> Result<Run, String> {
    use wasmtime_wasi::p1::{self, WasiP1Ctx};
    use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
    let e = |e: wasmtime::Error| e.to_string();
    let mut linker: wasmtime::Linker<WasiP1Ctx> = wasmtime::Linker::new(engine);
    p1::add_to_linker_sync(&mut linker, |t| t).map_err(e)?;
    for marker in ["start", "end"] {
        linker.func_wrap("bench", marker, || {}).map_err(e)?;
    }
    let stdout = MemoryOutputPipe::new(1 << 30);
    let ctx = wasmtime_wasi::WasiCtxBuilder::new()
        .arg(name)
        .preopened_dir(dir, ".", wasmtime_wasi::FsPerms::ReadWrite)
        .map_err(e)?
        .stdin(MemoryInputPipe::new(stdin.to_vec()))
        .stdout(stdout.clone())
        .build_p1();
    let mut store = wasmtime::Store::new(engine, ctx);
    let instance = linker.instantiate(&mut store, module).map_err(e)?;
    let entry = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .map_err(e)?;
    let start = Instant::now();
    let result = entry.call(&mut store, ());
    let time = start.elapsed();
    let status = match result {
        Ok(()) => 0,
        Err(err) => match err.downcast_ref::<wasmtime_wasi::I32Exit>() {
            Some(exit) => exit.0,
            None => return Err(err.to_string()),
        },
    };
    drop(store);
    Ok(Run {
        stdout: stdout.contents().to_vec(),
        status,
        time,
    })
}
