//! `kestrel compile`: print each function's VCode, allocated code and disassembly, or with
//! `--timing`, where the compile time goes (per phase, per function and in total).
//!
//! `--target`, else the file's first `target` line, picks the ISA: x86-64 (also without
//! one), or AArch64, whose code is disassembled by yaxpeax-arm (`--timing` times the same
//! ISA's compile).

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use std::sync::Arc;

use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::machinst::compile::{CompileContext, PhaseTimes};
use kestrel_codegen::settings::{Flags, OptLevel};

use kestrel_filetests::directives::{func_name, Header};
use kestrel_filetests::target_override::TargetOverride;

/// How to compile: the command line's choices.
pub struct Settings {
    /// Run the register-allocation checker (always on in debug builds).
    pub check_regalloc: bool,
    pub opt_level: OptLevel,
    /// `--target`/`--set`, replacing the file's `target` lines.
    pub target: Option<TargetOverride>,
}

/// What to print per function.
pub struct Show {
    pub vcode: bool,
    pub regalloc: bool,
    pub disasm: bool,
}

/// `-o OUT.o`: every function of the file into one ELF object, exported by name.
pub fn write_object(
    path: &Path,
    out: &Path,
    settings: &Settings,
    debug_info: bool,
) -> Result<ExitCode, String> {
    use kestrel_object::{ir_name, Linkage, Module, ObjectBuilder, ObjectModule};
    let text = kestrel_filetests::input::read_input_text(path)?;
    let header = header_of(&text, settings);
    let (isa, flags, funcs) = file_flags_and_functions(path, &text, &header, settings, false)?;
    let source = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let builder = ObjectBuilder::new(source)
        .flags(flags)
        .target(isa)
        .debug_info(debug_info);
    let mut module = ObjectModule::new(builder);
    let ids = funcs
        .iter()
        .map(|f| module.declare_function(&ir_name(&f.name), Linkage::Export, &f.signature))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    for (f, &id) in funcs.iter().zip(&ids) {
        module.define_function(id, f).map_err(|e| e.to_string())?;
    }
    let bytes = module.finish().map_err(|e| e.to_string())?;
    std::fs::write(out, bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The file's header (its `set` and `target` lines), with the command line's `--target`.
fn header_of(text: &str, settings: &Settings) -> Header {
    let mut header = kestrel_filetests::directives::scan(text);
    crate::target::apply(settings.target.as_ref(), &mut header);
    header
}

/// A file's target, its flags and its functions.
type FileTarget = (Arc<dyn TargetIsa>, Flags, Vec<kestrel_ir::Function>);

/// The file's target and flags (its `set` lines and its first `target` line naming an ISA
/// Kestrel compiles for; see `kestrel_filetests::file_target`) and its functions.
fn file_flags_and_functions(
    path: &Path,
    text: &str,
    header: &Header,
    settings: &Settings,
    keep_text: bool,
) -> Result<FileTarget, String> {
    let (isa, flags) =
        kestrel_filetests::file_target(header).map_err(|e| format!("{}: {e}", path.display()))?;
    let flags = Flags {
        check_regalloc: settings.check_regalloc || cfg!(debug_assertions),
        keep_text,
        opt_level: settings.opt_level,
        ..flags
    };
    // Verification happens in `compile_function`, once per function.
    let funcs = kestrel_ir::text::parse_functions(text, &path.display().to_string())
        .map_err(|e| e.to_string())?;
    Ok((isa, flags, funcs))
}

pub fn compile(
    path: &Path,
    show: Show,
    settings: &Settings,
    timing: bool,
) -> Result<ExitCode, String> {
    let text = kestrel_filetests::input::read_input_text(path)?;
    let header = header_of(&text, settings);
    if timing {
        let (isa, flags) = kestrel_filetests::file_target(&header)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let flags = Flags {
            check_regalloc: settings.check_regalloc || cfg!(debug_assertions),
            opt_level: settings.opt_level,
            ..flags
        };
        return time_phases(path, &text, &flags, &*isa);
    }
    let keep_text = show.vcode || show.regalloc;
    let (isa, flags, funcs) = file_flags_and_functions(path, &text, &header, settings, keep_text)?;
    for (i, f) in funcs.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        let code = isa
            .compile_function(f, &flags)
            .map_err(|e| format!("%{}: {e}", func_name(f)))?;
        outln!("function %{}:", func_name(f));
        if show.vcode {
            outln!("VCode:");
            out!("{}", code.vcode_text);
        }
        if show.regalloc {
            outln!("Allocated:");
            out!("{}", code.regalloc_text);
        }
        if show.disasm {
            if show.vcode || show.regalloc {
                outln!("Disassembly:");
            }
            let lines = isa.disassemble(&code.code, code.code_size_without_constants as usize);
            for line in lines {
                outln!("{line}");
            }
            outln!("code size: {} bytes", code.code.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--timing`: parse and compile every function, printing no code; one row per function
/// (times in milliseconds) and a total row. The clock is read only between phases.
fn time_phases(
    path: &Path,
    text: &str,
    flags: &Flags,
    isa: &dyn TargetIsa,
) -> Result<ExitCode, String> {
    let mut parsed = Vec::new();
    let mut start = Instant::now();
    kestrel_ir::text::parse_each(text, &path.display().to_string(), |f| {
        let now = Instant::now();
        parsed.push((f, now - start));
        start = now;
    })
    .map_err(|e| e.to_string())?;
    let header = [
        "function",
        "insts",
        "blocks",
        "parse",
        "verify",
        "mid-end",
        "lower",
        "liveness",
        "intervals",
        "alloc",
        "resolve",
        "checker",
        "emit",
        "total",
        "peak live",
    ];
    let widths = [24, 8, 7, 9, 9, 9, 9, 9, 10, 9, 9, 9, 9, 10, 10];
    let print_row = |cells: &[String]| {
        let mut line = format!("{:<w$}", cells[0], w = widths[0]);
        for (c, w) in cells[1..].iter().zip(&widths[1..]) {
            line += &format!("{c:>w$}");
        }
        outln!("{}", line.trim_end());
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    print_row(&header);
    let mut total = PhaseTimes::default();
    let (mut total_parse, mut total_insts, mut total_blocks) = (Duration::ZERO, 0, 0);
    // One context for every function, as a client compiling a module keeps.
    let mut ctx = CompileContext::new();
    for (f, parse) in &parsed {
        let mut t = PhaseTimes::default();
        isa.compile_function_timed(&mut ctx, f, flags, &mut t)
            .map_err(|e| format!("%{}: {e}", func_name(f)))?;
        let (insts, blocks) = (f.num_placed_insts(), f.layout.blocks().len());
        print_row(&row(
            &format!("%{}", func_name(f)),
            insts,
            blocks,
            *parse,
            &t,
        ));
        total_parse += *parse;
        total_insts += insts;
        total_blocks += blocks;
        total += &t;
    }
    let label = format!("total ({} functions)", parsed.len());
    print_row(&row(&label, total_insts, total_blocks, total_parse, &total));
    if !flags.check_regalloc {
        outln!("(checker off: --check-regalloc turns it on)");
    }
    Ok(ExitCode::SUCCESS)
}

/// One table row: counts, then each phase in milliseconds, then the peak live vregs.
fn row(name: &str, insts: usize, blocks: usize, parse: Duration, t: &PhaseTimes) -> Vec<String> {
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
    let r = &t.regalloc;
    vec![
        name.to_string(),
        insts.to_string(),
        blocks.to_string(),
        ms(parse),
        ms(t.verify),
        ms(t.mid_end),
        ms(t.front()),
        ms(r.validate + r.liveness),
        ms(r.intervals),
        ms(r.allocation),
        ms(r.resolution),
        ms(r.checker),
        ms(t.emit),
        ms(parse + t.total()),
        t.max_live.to_string(),
    ]
}
