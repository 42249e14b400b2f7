//! `kestrel compile`: print each function's VCode, allocated code and disassembly.

use std::path::Path;
use std::process::ExitCode;

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
use kestrel_codegen::isa::x64::{Flags, X64Backend};
use kestrel_filetests::directives::func_name;

/// What to print per function.
pub struct Show {
    pub vcode: bool,
    pub regalloc: bool,
    pub disasm: bool,
}

/// `OFFSET: BYTES  ASM` lines for the instructions in `code[..len]`, decoded at address 0;
/// the bytes after `len` (the constant pool) are shown as data.
fn disassemble(code: &[u8], len: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut decoder = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let mut inst = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut inst);
        let start = inst.ip() as usize;
        let bytes: String = code[start..start + inst.len()]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut text = String::new();
        formatter.format(&inst, &mut text);
        out.push(format!("{start:x}: {bytes}  {text}"));
    }
    if len < code.len() {
        let data: String = code[len..].iter().map(|b| format!("{b:02x}")).collect();
        out.push(format!("{len:x}: {data}  (constant pool)"));
    }
    out
}

pub fn compile(path: &Path, show: Show, check_regalloc: bool) -> Result<ExitCode, String> {
    let funcs = super::commands::load(path)?;
    let flags = Flags {
        check_regalloc: check_regalloc || cfg!(debug_assertions),
        keep_text: show.vcode || show.regalloc,
        ..Flags::default()
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
