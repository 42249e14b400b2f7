//! The compile-speed corpus: CLIF text parsed by both compilers, paired function by function,
//! and filtered to what both can compile.
//!
//! Every function that is dropped is counted under a reason (see [`Exclusions`]); nothing
//! leaves the corpus silently. Each kept function has been verified by Kestrel's verifier,
//! compiled once by Kestrel with the register-allocation checker on and once by Cranelift
//! (both for the run's target), and both produced non-empty code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kestrel_codegen::machinst::{CodegenError, CompiledCode};
use kestrel_codegen::settings::Flags;

use super::engines::{Cranelift, Target};

/// One function as both compilers see it.
pub struct Case {
    pub label: String,
    pub generated: bool,
    pub insts: usize,
    pub kestrel: kestrel_ir::Function,
    pub cranelift: cranelift_codegen::ir::Function,
}

/// Dropped functions by reason; `unsupported` holds Kestrel's `Unsupported` errors by
/// opcode (or by description when no instruction is involved).
#[derive(Default)]
pub struct Exclusions {
    pub unsupported: BTreeMap<String, usize>,
    pub other: BTreeMap<String, usize>,
    /// Whole files dropped, with the reader's message.
    pub details: Vec<String>,
}

impl Exclusions {
    pub fn total(&self) -> usize {
        self.unsupported.values().sum::<usize>() + self.other.values().sum::<usize>()
    }

    fn other(&mut self, reason: impl Into<String>, n: usize) {
        *self.other.entry(reason.into()).or_default() += n;
    }
}

/// Every `.clif` file under `dir`, sorted.
pub fn clif_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "clif") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Cranelift's reader gets the functions only: the `test`/`set`/`target` preamble names
/// Kestrel's test drivers and possibly ISAs this Cranelift build lacks.
fn without_preamble(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.starts_with("test ") || l.starts_with("set ") || l.starts_with("target "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cranelift's parse of each function of `text`: the whole text at once, or, when that
/// fails, function by function so that one function Cranelift cannot read (an opcode it
/// does not have) costs only that function.
fn cranelift_functions(text: &str) -> Vec<Result<cranelift_codegen::ir::Function, String>> {
    let text = without_preamble(text);
    if let Ok(fs) = cranelift_reader::parse_functions(&text) {
        return fs.into_iter().map(Ok).collect();
    }
    let mut chunks: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("function ") {
            chunks.push(String::new());
        }
        if let Some(chunk) = chunks.last_mut() {
            chunk.push_str(line);
            chunk.push('\n');
        }
    }
    chunks
        .iter()
        .map(|chunk| match cranelift_reader::parse_functions(chunk) {
            Ok(mut fs) if fs.len() == 1 => Ok(fs.remove(0)),
            Ok(fs) => Err(format!("{} functions in one chunk", fs.len())),
            Err(e) => Err(e.to_string()),
        })
        .collect()
}

fn unsupported_key(e: &CodegenError) -> String {
    match e {
        CodegenError::Unsupported { opcode, what, .. } => match opcode {
            Some(op) => op.name().to_string(),
            None => what.clone(),
        },
        other => other.to_string(),
    }
}

fn inst_count(f: &cranelift_codegen::ir::Function) -> usize {
    f.layout
        .blocks()
        .map(|b| f.layout.block_insts(b).count())
        .sum()
}

/// Parse `text` (named `file`) with both readers and add the compilable pairs to `cases`.
pub fn add_text(
    file: &str,
    text: &str,
    generated: bool,
    cl: &Cranelift,
    cases: &mut Vec<Case>,
    excluded: &mut Exclusions,
) {
    let declared = text
        .lines()
        .filter(|l| l.trim_start().starts_with("function "))
        .count();
    let kfs = match kestrel_ir::parse_functions(text, file) {
        Ok(fs) => fs,
        Err(e) => {
            excluded
                .details
                .push(format!("{file}: Kestrel's reader: {e}"));
            return excluded.other("Kestrel's reader rejects the file", declared);
        }
    };
    let cfs = cranelift_functions(text);
    if kfs.len() != cfs.len() {
        return excluded.other("the readers disagree on the function count", kfs.len());
    }
    for (kf, cf) in kfs.into_iter().zip(cfs) {
        let cf = match cf {
            Ok(cf) => cf,
            Err(e) => {
                excluded
                    .details
                    .push(format!("{file}:{}: Cranelift's reader: {e}", kf.name));
                excluded.other("Cranelift's reader rejects it", 1);
                continue;
            }
        };
        if kestrel_ir::verify_function(&kf).is_err() {
            excluded.other("Kestrel's verifier rejects it", 1);
            continue;
        }
        match checked_compile(&kf, cl.target()) {
            Err(e @ CodegenError::Unsupported { .. }) => {
                *excluded.unsupported.entry(unsupported_key(&e)).or_default() += 1;
                continue;
            }
            Err(e) => {
                excluded
                    .details
                    .push(format!("{file}:{}: Kestrel: {e}", kf.name));
                excluded.other("Kestrel fails on it (not `Unsupported`)", 1);
                continue;
            }
            Ok(code) if code.code.is_empty() => {
                excluded.other("Kestrel produced no code", 1);
                continue;
            }
            Ok(_) => {}
        }
        match compile_catching_panics(cl, &cf) {
            Err(e) => {
                excluded
                    .details
                    .push(format!("{file}:{}: Cranelift: {e}", kf.name));
                excluded.other("Cranelift cannot compile it", 1);
                continue;
            }
            Ok(0) => {
                excluded.other("Cranelift produced no code", 1);
                continue;
            }
            Ok(_) => {}
        }
        cases.push(Case {
            label: format!("{file}:{}", kf.name),
            generated,
            insts: inst_count(&cf),
            kestrel: kf,
            cranelift: cf,
        });
    }
}

/// Kestrel's compile for `target` with the register-allocation checker on.
fn checked_compile(f: &kestrel_ir::Function, target: Target) -> Result<CompiledCode, CodegenError> {
    let checked = Flags {
        check_regalloc: true,
        keep_text: false,
        ..Flags::default()
    };
    target.kestrel_isa().compile_function(f, &checked)
}

/// Compile once with Cranelift, turning a panic inside Cranelift (it has a few on inputs its
/// verifier accepts) into an error, so the function is excluded and listed, not fatal.
fn compile_catching_panics(
    cl: &Cranelift,
    f: &cranelift_codegen::ir::Function,
) -> Result<usize, String> {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cl.compile(&mut Cranelift::context(f))
    }));
    std::panic::set_hook(quiet);
    outcome.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(format!("panicked: {message}"))
    })
}
