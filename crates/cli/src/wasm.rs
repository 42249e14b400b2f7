//! `kestrel wasm run` and `kestrel wasm compile`: WebAssembly modules through `kestrel-wasm`.
//!
//! A module file is the binary format (it starts with `\0asm`) or the text format (anything
//! else, parsed by the `wat` crate). `run` instantiates the module with WASI preview 1
//! (stdio inherited, `--dir` directories preopened, `--env` variables) and Sightglass's
//! `bench.start`/`bench.end` (no-ops); any other import is refused by name before
//! instantiation. Without `--invoke` it runs `_start` with argv = [FILE, ARGS…] and exits
//! with the program's exit code (codes outside 0..=255, which a process status cannot
//! carry, exit 1 with a note). With `--invoke NAME` it calls that export with ARGS typed by
//! its parameters and prints the results one per line in the Wasm text syntax's literal
//! forms (`i32.const 42` prints `42`; floats print their value, NaNs with their payload
//! bits).
//!
//! A trap exits 2 after printing the trap and, when the runtime can tell, the Wasm function
//! it happened in (by its name-section name) and the byte offset of the trapping instruction
//! in the module (as `wasm-objdump` and Wasmtime number them): it can for traps in the
//! module's own code,
//! since the module imports only host functions here (see `kestrel_wasm::runtime::func`);
//! it cannot for a trap raised by a host function, whose Wasm caller is not recorded.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use kestrel_wasm::wasi::{self, Wasi, WasiCtx};
use kestrel_wasm::{
    BoundsChecks, CompileTimes, Config, Extern, Func, Imports, Instance, InvokeError, Module, Trap,
    Val,
};
use wasmparser::{FuncType, ValType};

/// Reads `path` as a binary module, or as text (any file without the `\0asm` header)
/// converted to one.
fn module_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = kestrel_filetests::input::read_input(path)?;
    if bytes.starts_with(b"\0asm") {
        return Ok(bytes);
    }
    if std::str::from_utf8(&bytes).is_err() {
        return Err(format!(
            "{}: neither a binary module (no `\\0asm` header) nor UTF-8 text",
            path.display()
        ));
    }
    kestrel_wasm::wat_to_binary(&bytes, Some(path)).map_err(|e| match e {
        kestrel_wasm::WasmError::Text { message } => message,
        other => other.to_string(),
    })
}

/// What `kestrel wasm run` was asked.
pub struct RunOptions<'a> {
    pub file: &'a Path,
    pub invoke: Option<&'a str>,
    /// Bounds-check mode and opt level.
    pub config: Config,
    pub args: &'a [String],
    /// `DIR` or `HOST::GUEST`.
    pub dirs: &'a [String],
    /// `KEY=VALUE`.
    pub env: &'a [String],
}

/// The Sightglass benchmark markers: module `bench`, type [] -> [].
const BENCH_MODULE: &str = "bench";
const BENCH_MARKERS: [&str; 2] = ["start", "end"];

/// The imports `run` provides besides WASI: the Sightglass markers the module imports.
/// Any import that is neither is an error naming all such imports.
fn extra_imports(module: &Module, path: &Path) -> Result<Imports, String> {
    let mut imports = Imports::new();
    let mut missing = Vec::new();
    for imp in &module.info().imports {
        if imp.module == wasi::MODULE {
            continue;
        }
        if imp.module == BENCH_MODULE && BENCH_MARKERS.contains(&imp.field.as_str()) {
            let marker = Func::wrap(FuncType::new([], []), |_| Ok(vec![]))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            imports.define(BENCH_MODULE, &imp.field, Extern::Func(marker));
            continue;
        }
        missing.push(format!("{}.{}", imp.module, imp.field));
    }
    if !missing.is_empty() {
        return Err(format!(
            "{}: the module imports {}, which `kestrel wasm run` does not provide (it \
             provides WASI preview 1 and Sightglass's bench.start/bench.end)",
            path.display(),
            missing.join(", ")
        ));
    }
    Ok(imports)
}

/// The WASI context: argv, `--env`, `--dir`, inherited stdio.
fn wasi_ctx(o: &RunOptions) -> Result<WasiCtx, String> {
    let mut ctx = WasiCtx::new()
        .arg(o.file.display().to_string())
        .inherit_stdio();
    if o.invoke.is_none() {
        ctx = ctx.args(o.args.iter().cloned());
    }
    for kv in o.env {
        let (key, value) = kv
            .split_once('=')
            .ok_or_else(|| format!("--env `{kv}`: expected KEY=VALUE"))?;
        ctx = ctx.env(key, value);
    }
    for dir in o.dirs {
        let (host, guest) = dir.split_once("::").unwrap_or((dir, dir));
        if host.is_empty() || guest.is_empty() {
            return Err(format!("--dir `{dir}`: expected DIR or HOST::GUEST"));
        }
        ctx = ctx.preopen_dir(host, guest);
    }
    Ok(ctx)
}

/// `kestrel wasm run [--dir D] [--env K=V] [--invoke NAME] [--opt-level L] FILE [ARGS…]`.
pub fn run(o: &RunOptions) -> Result<ExitCode, String> {
    let path = o.file;
    let bytes = module_bytes(path)?;
    let module =
        Module::with_config(&bytes, &o.config).map_err(|e| format!("{}: {e}", path.display()))?;
    let imports = extra_imports(&module, path)?;
    let wasi = Wasi::new(wasi_ctx(o)?).map_err(|e| e.to_string())?;
    let instance = match wasi.instantiate(&module, &imports) {
        Ok(instance) => instance,
        Err(kestrel_wasm::WasmError::Trap(Trap::Exit(code))) => return Ok(exit_status(code)),
        Err(e) => return Err(format!("{}: instantiation failed: {e}", path.display())),
    };
    let Some(name) = o.invoke else {
        if !matches!(instance.get_export("_start"), Some(Extern::Func(_))) {
            return Err(no_such_export(&module, path, "_start"));
        }
        return match wasi.run_start(&instance) {
            Ok(code) => Ok(exit_status(code)),
            Err(e) => report_failure(&module, "_start", e),
        };
    };
    invoke(&module, &instance, path, name, o.args)
}

/// The process status for WASI exit code `code`.
fn exit_status(code: i32) -> ExitCode {
    match u8::try_from(code) {
        Ok(status) => ExitCode::from(status),
        Err(_) => {
            eprintln!("note: the program exited with code {code}, outside 0..=255: status 1");
            ExitCode::from(1)
        }
    }
}

/// A trap prints with its function and offset and exits 2; other failures are errors.
fn report_failure(module: &Module, name: &str, e: InvokeError) -> Result<ExitCode, String> {
    match e {
        InvokeError::Trap { trap, func, offset } => {
            let place = match (func, offset) {
                (Some(index), Some(offset)) => format!(
                    " (in {}, at offset {offset:#x})",
                    module.info().describe_func(index)
                ),
                (Some(index), None) => format!(" (in {})", module.info().describe_func(index)),
                (None, _) => String::new(),
            };
            eprintln!("error: wasm trap in `{name}`: {trap}{place}");
            Ok(ExitCode::from(2))
        }
        other => Err(format!("calling `{name}`: {other}")),
    }
}

fn no_such_export(module: &Module, path: &Path, name: &str) -> String {
    let mut funcs: Vec<&str> = module
        .info()
        .exports
        .iter()
        .filter(|(_, kind, _)| *kind == wasmparser::ExternalKind::Func)
        .map(|(n, _, _)| n.as_str())
        .collect();
    funcs.sort_unstable();
    format!(
        "{}: no exported function `{name}` (exported functions: {})",
        path.display(),
        if funcs.is_empty() {
            "none".to_string()
        } else {
            funcs.join(", ")
        }
    )
}

/// `--invoke NAME ARGS…`: call the export with typed arguments and print its results.
fn invoke(
    module: &Module,
    instance: &Instance,
    path: &Path,
    name: &str,
    args: &[String],
) -> Result<ExitCode, String> {
    let Some(Extern::Func(func)) = instance.get_export(name) else {
        return Err(no_such_export(module, path, name));
    };
    let params = func.ty().params().to_vec();
    if params.len() != args.len() {
        return Err(format!(
            "`{name}` takes {} argument(s) ({}), {} given",
            params.len(),
            type_list(&params),
            args.len()
        ));
    }
    let values = params
        .iter()
        .zip(args)
        .enumerate()
        .map(|(k, (&ty, text))| {
            parse_arg(ty, text).ok_or_else(|| {
                format!(
                    "argument {}: `{text}` is not a valid {}",
                    k + 1,
                    type_name(ty)
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    match func.call(&values) {
        Ok(results) => {
            for value in results {
                outln!("{}", show(value));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(InvokeError::Trap {
            trap: Trap::Exit(code),
            ..
        }) => Ok(exit_status(code)),
        Err(e) => report_failure(module, name, e),
    }
}

/// How `kestrel wasm compile` runs: whether it reports times, and how many times it
/// compiles the module.
pub struct CompileRun {
    pub timing: bool,
    /// At least 1; `--timing` reports the compile with the shortest wall-clock time.
    pub repeat: u32,
}

/// `kestrel wasm compile [--timing] [--repeat N] FILE`: compiles every function (no
/// instantiation), `repeat` times, and prints the function count; with `--timing`, the
/// time of each step of the fastest compile (see [`CompileTimes`]) and functions per second.
pub fn compile(
    path: &Path,
    how: CompileRun,
    config: Config,
    emit_clif: Option<&Path>,
) -> Result<ExitCode, String> {
    let bytes = module_bytes(path)?;
    if let Some(dir) = emit_clif {
        write_clif(&bytes, config.bounds_checks, dir)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let failed = |e: kestrel_wasm::WasmError| format!("{}: {e}", path.display());
    let mut fastest: Option<CompileTimes> = None;
    let mut module = None;
    for _ in 0..how.repeat.max(1) {
        // The previous module is dropped first, as an engine replacing a module does.
        drop(module.take());
        if how.timing {
            let (m, times) = Module::with_config_timed(&bytes, &config).map_err(failed)?;
            if fastest.as_ref().is_none_or(|f| times.wall < f.wall) {
                fastest = Some(times);
            }
            module = Some(m);
        } else {
            module = Some(Module::with_config(&bytes, &config).map_err(failed)?);
        }
    }
    let info = module.as_ref().expect("compiled at least once").info();
    let defined = info.funcs.len() - info.num_imported_funcs as usize;
    outln!(
        "{}: {defined} functions, {} bytes of Wasm",
        path.display(),
        bytes.len()
    );
    if let Some(t) = fastest {
        if how.repeat > 1 {
            outln!("fastest of {} compiles:", how.repeat);
        }
        print_compile_times(&t);
        let info = module.as_ref().expect("compiled at least once").info();
        outln!("slowest functions (validation, translation and backend):");
        for &(index, took) in &t.slowest {
            outln!(
                "{:>12.3} ms  {}",
                took.as_secs_f64() * 1e3,
                info.describe_func(index)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--timing` table: serial steps in wall-clock time, the per-function steps summed
/// over the threads that ran them (with their share of that sum).
fn print_compile_times(t: &CompileTimes) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let summed = ms(t.per_function_total()).max(f64::MIN_POSITIVE);
    let b = &t.backend;
    let r = &b.regalloc;
    outln!("{:<44}{:>10}", "step", "ms");
    outln!(
        "{:<44}{:>10.3}",
        "decode and declare (serial)",
        ms(t.decode)
    );
    outln!(
        "{:<44}{:>10.3}",
        format!("functions, wall clock on {} threads", t.threads),
        ms(t.parallel_wall)
    );
    outln!(
        "{:<44}{:>10.3}  (parallel speedup {:.2})",
        "  summed over threads:",
        summed,
        summed / ms(t.parallel_wall).max(f64::MIN_POSITIVE)
    );
    let steps = [
        ("validate bodies", t.validate_bodies),
        ("translate to IR", t.translate),
        ("verify", b.verify),
        ("mid-end", b.mid_end),
        ("block order and lowering", b.front()),
        ("regalloc: validation and liveness", r.validate + r.liveness),
        ("regalloc: intervals", r.intervals),
        ("regalloc: allocation", r.allocation),
        ("regalloc: resolution", r.resolution),
        ("regalloc: checker", r.checker),
        ("emission", b.emit),
    ];
    for (name, d) in steps {
        outln!(
            "{:<44}{:>10.3}  {:>5.1}%",
            format!("    {name}"),
            ms(d),
            100.0 * ms(d) / summed
        );
    }
    outln!("{:<44}{:>10.3}", "link (serial)", ms(t.link));
    let secs = t.wall.as_secs_f64();
    outln!(
        "validate + translate + compile + link: {:.3} ms ({:.0} functions/s; the clock read \
         between steps adds a little)",
        secs * 1e3,
        t.functions as f64 / secs.max(1e-9)
    );
}

/// Write each defined function's IR, as translated for `checks`, to
/// `dir/wasm-func-INDEX.clif`.
fn write_clif(bytes: &[u8], checks: BoundsChecks, dir: &Path) -> Result<(), String> {
    let (info, funcs) = kestrel_wasm::translate_module(bytes, checks).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (f, index) in funcs.iter().zip(info.num_imported_funcs..) {
        let file = dir.join(format!("wasm-func-{index}.clif"));
        std::fs::write(&file, f.to_string()).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(())
}

fn type_name(ty: ValType) -> String {
    match ty {
        ValType::I32 => "i32".into(),
        ValType::I64 => "i64".into(),
        ValType::F32 => "f32".into(),
        ValType::F64 => "f64".into(),
        other => format!("{other:?}"),
    }
}

fn type_list(types: &[ValType]) -> String {
    let names: Vec<String> = types.iter().map(|&t| type_name(t)).collect();
    names.join(" ")
}

/// An integer in decimal or `0x` hex, with an optional sign; wrapping into the width like
/// the text format's `i32.const` (so `0xffffffff` and `-1` are the same i32).
fn parse_int(text: &str, bits: u32) -> Option<u64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits = digits.replace('_', "");
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<u64>().ok()?,
    };
    let limit = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let fits = if negative {
        magnitude <= limit / 2 + 1
    } else {
        magnitude <= limit
    };
    fits.then(|| {
        let value = if negative {
            magnitude.wrapping_neg()
        } else {
            magnitude
        };
        value & limit
    })
}

fn parse_arg(ty: ValType, text: &str) -> Option<Val> {
    Some(match ty {
        ValType::I32 => Val::I32(parse_int(text, 32)? as u32 as i32),
        ValType::I64 => Val::I64(parse_int(text, 64)? as i64),
        ValType::F32 => Val::F32(text.parse::<f32>().ok()?.to_bits()),
        ValType::F64 => Val::F64(text.parse::<f64>().ok()?.to_bits()),
        _ => return None,
    })
}

fn show(value: Val) -> String {
    match value {
        Val::I32(v) => v.to_string(),
        Val::I64(v) => v.to_string(),
        Val::F32(bits) => show_float(f64::from(f32::from_bits(bits)), u64::from(bits)),
        Val::F64(bits) => show_float(f64::from_bits(bits), bits),
        Val::FuncRef(0) | Val::ExternRef(None) => "null".into(),
        Val::FuncRef(_) => "funcref".into(),
        Val::ExternRef(Some(v)) => format!("externref {v}"),
    }
}

fn show_float(value: f64, bits: u64) -> String {
    if value.is_nan() {
        format!("nan (bits 0x{bits:x})")
    } else {
        format!("{value:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_like_the_text_format_and_reject_overflow() {
        assert_eq!(parse_int("-1", 32), Some(0xffff_ffff));
        assert_eq!(parse_int("0xffffffff", 32), Some(0xffff_ffff));
        assert_eq!(parse_int("4294967296", 32), None);
        assert_eq!(parse_int("-2147483648", 32), Some(0x8000_0000));
        assert_eq!(parse_int("-2147483649", 32), None);
        assert_eq!(parse_int("1_000", 64), Some(1000));
        assert_eq!(parse_int("ten", 32), None);
        assert_eq!(
            parse_arg(ValType::F64, "2.5"),
            Some(Val::F64(2.5f64.to_bits()))
        );
        assert_eq!(show(Val::I32(-7)), "-7");
        assert_eq!(show(Val::F32(1.5f32.to_bits())), "1.5");
    }
}
