//! `kestrel-bench emit-clif --out DIR PROGRAM.wasm…`: the CLIF Wasmtime 48.0.8 gives
//! Cranelift for each function of each program, one `.clif` file per function in `DIR`
//! (`compile-speed --corpus DIR` reads it).
//!
//! The same files as `wasmtime compile --emit-clif DIR` of the Wasmtime 48 CLI, with
//! `Config::new()`'s settings, without installing the CLI: the engine is the one this crate
//! already links. Nothing is run; each program is only compiled.

use std::path::PathBuf;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut out: Option<PathBuf> = None;
    let mut programs = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--out" => {
                out = Some(PathBuf::from(it.next().ok_or("--out needs a directory")?));
            }
            "-h" | "--help" => {
                println!("usage: kestrel-bench emit-clif --out DIR PROGRAM.wasm...");
                return Ok(());
            }
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            path => programs.push(PathBuf::from(path)),
        }
    }
    let out = out.ok_or("--out DIR is required")?;
    if programs.is_empty() {
        return Err("no program given (usage: emit-clif --out DIR PROGRAM.wasm...)".into());
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut config = wasmtime::Config::new();
    config.emit_clif(&out);
    let engine = wasmtime::Engine::new(&config).map_err(|e| e.to_string())?;
    for program in &programs {
        let bytes = std::fs::read(program).map_err(|e| format!("{}: {e}", program.display()))?;
        engine
            .precompile_module(&bytes)
            .map_err(|e| format!("{}: {e:#}", program.display()))?;
    }
    let written = std::fs::read_dir(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "clif"))
        })
        .count();
    println!("{written} .clif files in {}", out.display());
    Ok(())
}
