//! `kestrel compile`: print each function's VCode, allocated code and disassembly.

use std::path::Path;
use std::process::ExitCode;

use kestrel_codegen::disasm::disassemble;
use kestrel_codegen::isa::x64::{Flags, X64Backend};

use kestrel_filetests::directives::func_name;

/// What to print per function.
pub struct Show {
    pub vcode: bool,
    pub regalloc: bool,
    pub disasm: bool,
}

pub fn compile(path: &Path, show: Show, check_regalloc: bool) -> Result<ExitCode, String> {
    let funcs = super::commands::load(path)?;
    // The file's `set` lines and first `target x86_64` line (features it turns off).
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let header = kestrel_filetests::directives::scan(&text);
    let target = header.targets.iter().find(|t| t.isa == "x86_64");
    let flags = Flags {
        check_regalloc: check_regalloc || cfg!(debug_assertions),
        keep_text: show.vcode || show.regalloc,
        ..kestrel_filetests::native_flags(&header, target)
    };
    for (i, f) in funcs.iter().enumerate() {
        if i > 0 {
            println!();
        }
        let code = X64Backend
            .compile_function(f, &flags)
            .map_err(|e| format!("%{}: {e}", func_name(f)))?;
        println!("function %{}:", func_name(f));
        if show.vcode {
            println!("VCode:");
            print!("{}", code.vcode_text);
        }
        if show.regalloc {
            println!("Allocated:");
            print!("{}", code.regalloc_text);
        }
        if show.disasm {
            if show.vcode || show.regalloc {
                println!("Disassembly:");
            }
            for line in disassemble(&code.code, code.code_size_without_constants as usize) {
                println!("{line}");
            }
            println!("code size: {} bytes", code.code.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}
