//! Golden tests (`test compile precise-output` style): each function in
//! `tests/golden/*.clif` is followed by its expected VCode, allocated code and disassembly
//! as `;` comments. `BLESS=1 cargo test -p kestrel-codegen --test golden` rewrites them;
//! otherwise a mismatch fails with a line diff.
//!
//! Files compile for x86-64 with every extension the backend knows, except those the file's
//! `target x86_64 has_lzcnt=false …` line turns off (to pin the baseline fallbacks); a file
//! whose first `target` line is `target aarch64` compiles for AArch64 instead (its
//! disassembly by yaxpeax-arm).

use std::path::Path;

use kestrel_codegen::disasm::{disassemble, disassemble_aarch64};
use kestrel_codegen::isa::aarch64::Aarch64Isa;
use kestrel_codegen::isa::x64::features::CpuFeatures;
use kestrel_codegen::isa::x64::X64Isa;
use kestrel_codegen::isa::{IsaFeatures, TargetIsa};
use kestrel_codegen::settings::Flags;

/// The machine a golden file compiles for.
#[derive(Clone, Copy)]
enum Isa {
    /// x86-64 with these features.
    X64(CpuFeatures),
    Aarch64,
}

/// The ISA of a golden file: AArch64 when its first `target` line says so, else x86-64 with
/// every feature, less its `target` line's flags.
fn isa_of(text: &str) -> Isa {
    if text
        .lines()
        .find(|l| l.starts_with("target "))
        .is_some_and(|l| l.starts_with("target aarch64"))
    {
        return Isa::Aarch64;
    }
    let mut features = CpuFeatures::all();
    if let Some(line) = text.lines().find(|l| l.starts_with("target x86_64")) {
        for flag in line.split_whitespace().skip(2) {
            features.apply_flag(flag);
        }
    }
    Isa::X64(features)
}

/// The expected comment block for one compiled function.
fn expectation(f: &kestrel_ir::Function, isa: Isa) -> Vec<String> {
    let flags = Flags {
        check_regalloc: true,
        keep_text: true,
        ..Flags::default()
    };
    let mut out = Vec::new();
    let compiled = match isa {
        // A fixed feature set: the expected output must not depend on the machine.
        Isa::X64(features) => X64Isa { features }.compile_function(f, &flags),
        Isa::Aarch64 => Aarch64Isa::default().compile_function(f, &flags),
    };
    match compiled {
        Err(e) => out.push(format!("error: {e}")),
        Ok(code) => {
            out.push("VCode:".into());
            out.extend(code.vcode_text.lines().map(|l| format!("  {l}")));
            out.push("Allocated:".into());
            out.extend(code.regalloc_text.lines().map(|l| format!("  {l}")));
            out.push("Disassembly:".into());
            let len = code.code_size_without_constants as usize;
            let lines = match isa {
                Isa::X64(_) => disassemble(&code.code, len),
                Isa::Aarch64 => disassemble_aarch64(&code.code, len),
            };
            out.extend(lines.into_iter().map(|l| format!("  {l}")));
            for t in &code.traps {
                out.push(format!("  trap {:#x}: {}", t.offset, t.code));
            }
            for r in &code.relocs {
                out.push(format!(
                    "  reloc {:#x}: {:?} {} {}",
                    r.offset, r.kind, r.target, r.addend
                ));
            }
        }
    }
    out
}

/// Rebuild a golden file: its text with each function's comment block replaced.
fn render(text: &str, name: &str) -> String {
    let funcs = kestrel_ir::parse_functions(text, name).expect("golden input parses");
    let isa = isa_of(text);
    let mut out = String::new();
    let mut funcs = funcs.iter();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if line == "}" {
            // Drop the old expectation, then write the new one.
            while lines
                .next_if(|l| l.starts_with(';') || l.is_empty())
                .is_some()
            {}
            let f = funcs.next().expect("one parsed function per closing brace");
            out.push('\n');
            for e in expectation(f, isa) {
                out.push_str(format!("; {e}").trim_end());
                out.push('\n');
            }
            if lines.peek().is_some() {
                out.push('\n');
            }
        }
    }
    out
}

fn diff(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let mut s = String::new();
    for i in 0..w.len().max(g.len()) {
        match (w.get(i), g.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => {
                s.push_str(&format!(
                    "line {}:\n- {}\n+ {}\n",
                    i + 1,
                    a.unwrap_or(&""),
                    b.unwrap_or(&"")
                ));
            }
        }
    }
    s
}

#[test]
fn golden() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("BLESS").is_some();
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/golden exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "clif"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "no golden files");
    for path in entries {
        let text = std::fs::read_to_string(&path).expect("read golden file");
        let got = render(&text, &path.display().to_string());
        if got != text {
            if bless {
                std::fs::write(&path, &got).expect("write golden file");
            } else {
                failures.push(format!("{}:\n{}", path.display(), diff(&text, &got)));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches (rerun with BLESS=1 to accept):\n{}",
        failures.join("\n")
    );
}
