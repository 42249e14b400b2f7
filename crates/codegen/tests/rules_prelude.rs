//! Every declaration the ISAs' selection rules share lives once, in the rules prelude
//! (`src/machinst/isel/prelude.rules`): no `decl`, `type`, `extern`, `convert` or
//! `extractor` form of one ISA's `.rules` files (`src/isa/<isa>/*.rules`) is repeated in
//! another's. Forms are compared whole, with comments dropped and white space folded, so a
//! multi-line `type` whose variants differ (each ISA's `AluInst`) is not a repeat.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DECLARATIONS: [&str; 5] = ["decl", "type", "extern", "convert", "extractor"];

/// The top-level declaration forms of a rules source, each as one line of folded text.
fn declarations(source: &str) -> Vec<String> {
    let mut forms = Vec::new();
    let (mut depth, mut form) = (0i32, String::new());
    for line in source.lines() {
        let code = line.split(';').next().unwrap_or("");
        if depth == 0 && !code.trim_start().starts_with('(') {
            continue;
        }
        form.push(' ');
        form.push_str(code);
        depth += code.matches('(').count() as i32 - code.matches(')').count() as i32;
        if depth <= 0 {
            let folded = form.split_whitespace().collect::<Vec<_>>().join(" ");
            let head = folded
                .trim_start_matches('(')
                .split(' ')
                .next()
                .unwrap_or("");
            if DECLARATIONS.contains(&head) {
                forms.push(folded);
            }
            form.clear();
            depth = 0;
        }
    }
    forms
}

/// The declarations found in both ISAs' sources, each with where it stands in each.
fn repeated(a: &[(String, String)], b: &[(String, String)]) -> Vec<String> {
    let in_a: BTreeMap<&str, &str> = a.iter().map(|(f, w)| (f.as_str(), w.as_str())).collect();
    b.iter()
        .filter_map(|(form, at_b)| {
            in_a.get(form.as_str())
                .map(|at_a| format!("{form}  ({at_a} and {at_b})"))
        })
        .collect()
}

/// Each `.rules` file of `dir`'s ISAs: the ISA's name and its declarations with their file.
fn isa_declarations(dir: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut isas = BTreeMap::new();
    for isa in std::fs::read_dir(dir).expect("src/isa is readable") {
        let isa = isa.expect("a directory entry").path();
        if !isa.is_dir() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&isa)
            .expect("an ISA directory is readable")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "rules"))
            .collect();
        files.sort();
        let mut decls = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a rules file is readable");
            let name = file
                .strip_prefix(dir)
                .unwrap_or(&file)
                .display()
                .to_string();
            decls.extend(declarations(&text).into_iter().map(|d| (d, name.clone())));
        }
        let name = isa
            .file_name()
            .expect("a named directory")
            .to_string_lossy()
            .into_owned();
        isas.insert(name, decls);
    }
    isas
}

#[test]
fn no_isa_repeats_another_isas_rule_declarations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/isa");
    let isas = isa_declarations(&dir);
    assert!(
        isas.len() >= 2,
        "expected two ISAs' rules, found {:?}",
        isas.keys()
    );
    let mut shared = Vec::new();
    let names: Vec<&String> = isas.keys().collect();
    for (i, a) in names.iter().enumerate() {
        assert!(!isas[*a].is_empty(), "{a} has no rule declarations");
        for b in &names[i + 1..] {
            shared.extend(repeated(&isas[*a], &isas[*b]));
        }
    }
    assert!(
        shared.is_empty(),
        "{} declarations repeated between ISAs (move them to the prelude):\n{}",
        shared.len(),
        shared.join("\n")
    );
}

#[test]
fn the_prelude_declares_what_the_isas_do_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prelude = std::fs::read_to_string(root.join("src/machinst/isel/prelude.rules"))
        .expect("the prelude is readable");
    let prelude = declarations(&prelude);
    assert!(
        prelude.len() > 100,
        "the prelude has {} declarations",
        prelude.len()
    );
    for (_, decls) in isa_declarations(&root.join("src/isa")) {
        for (form, file) in decls {
            assert!(
                !prelude.contains(&form),
                "{file} repeats the prelude's {form}"
            );
        }
    }
}

/// The check finds a repeat: a one-line declaration, and a multi-line one whose lines are
/// spaced differently; it ignores comments, rules and a same-named type with other variants.
#[test]
fn the_check_reports_a_repeated_declaration() {
    let a = "(type Reg (primitive VReg)) ; a register\n(decl pure f (Reg)\n  Reg)\n\
             (type T (enum (A)))\n(rule (f x) x)\n";
    let b =
        ";; (type Reg (primitive VReg))\n(decl pure  f (Reg) Reg)\n(type Reg (primitive VReg))\n\
             (type T (enum (B)))\n(rule (f x) x)\n";
    let at = |src: &str, file: &str| -> Vec<(String, String)> {
        declarations(src)
            .into_iter()
            .map(|d| (d, file.to_string()))
            .collect()
    };
    let found = repeated(&at(a, "a.rules"), &at(b, "b.rules"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("(decl pure f (Reg) Reg)"), "{found:?}");
    assert!(
        found[1].starts_with("(type Reg (primitive VReg))"),
        "{found:?}"
    );
}
