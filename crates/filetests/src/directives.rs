//! The parts of a test file that are not functions: the header (`test`, `set`, `target`
//! lines) and the `; run:` directives.
//!
//! A run directive is `; run: %f(a, b) == r`, `… != r`, `… == [r1, r2]` for several results,
//! or a bare call `; run: %f(a)` meaning "the result is true (nonzero)". The bare word
//! `; run` calls the function defined just before it with no arguments. Literals are typed by
//! the function's signature and use CLIF's literal syntax.
//!
//! Kestrel adds `; trap: %f(a, b) == CODE`: the call must trap with `CODE` (`int_divz`,
//! `user3`, …). Cranelift's runner sees only a comment there, so files stay portable.

use kestrel_interp::DataValue;
use kestrel_ir::literal::{
    parse_f128, parse_f16, parse_f32, parse_f64, parse_hex_bytes, parse_int_bits,
    parse_vector_lanes,
};
use kestrel_ir::{Function, TrapCode, Type};

/// A `set name[=value]` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub name: String,
    pub value: Option<String>,
    pub line: usize,
}

/// A `target isa flags…` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub isa: String,
    pub flags: Vec<String>,
    pub line: usize,
}

/// Everything in a file outside its functions.
#[derive(Clone, Debug, Default)]
pub struct Header {
    /// The words after `test` (`interpret`, `run`, `compile`, …).
    pub commands: Vec<String>,
    pub settings: Vec<Setting>,
    pub targets: Vec<Target>,
    pub runs: Vec<RawRun>,
}

/// A run directive before its literals are typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRun {
    /// 1-based line number.
    pub line: usize,
    /// The text after `run:` or `trap:` (empty for the bare `; run`).
    pub text: String,
    /// `; trap:` rather than `; run:`.
    pub expects_trap: bool,
}

/// Read the header lines and run directives of a file.
pub fn scan(text: &str) -> Header {
    let mut h = Header::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let s = raw.trim();
        if let Some(rest) = s.strip_prefix("test ") {
            h.commands
                .extend(rest.split_whitespace().take(1).map(str::to_string));
        } else if let Some(rest) = s.strip_prefix("set ") {
            for word in rest.split_whitespace() {
                let (name, value) = match word.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (word.to_string(), None),
                };
                h.settings.push(Setting { name, value, line });
            }
        } else if let Some(rest) = s.strip_prefix("target ") {
            let mut words = rest.split_whitespace();
            if let Some(isa) = words.next() {
                h.targets.push(Target {
                    isa: isa.to_string(),
                    flags: words.map(str::to_string).collect(),
                    line,
                });
            }
        } else if let Some(comment) = s.strip_prefix(';') {
            let c = comment.trim_start();
            if c == "run" {
                h.runs.push(RawRun {
                    line,
                    text: String::new(),
                    expects_trap: false,
                });
            } else if let Some(rest) = c.strip_prefix("run:") {
                // A `;` after the directive starts a comment.
                let rest = rest.split(';').next().unwrap_or("");
                h.runs.push(RawRun {
                    line,
                    text: rest.trim().to_string(),
                    expects_trap: false,
                });
            } else if let Some(rest) = c.strip_prefix("trap:") {
                h.runs.push(RawRun {
                    line,
                    text: rest.trim().to_string(),
                    expects_trap: true,
                });
            }
        }
    }
    h
}

/// How a run's result is judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    Equal(Vec<DataValue>),
    NotEqual(Vec<DataValue>),
    /// Bare call: the single result must be nonzero.
    Truthy,
    /// `; trap:` — the call must trap with this code.
    Trap(TrapCode),
}

/// A typed run directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub line: usize,
    /// The function that runs: the one the directive is attached to.
    pub function: String,
    /// The name written in the directive (may differ; the runner warns).
    pub written_name: String,
    pub args: Vec<DataValue>,
    pub expect: Expectation,
}

/// Type a raw directive against the file's functions. `preceding` is the function defined
/// just before the directive (for the bare `; run`).
pub fn parse_run(
    raw: &RawRun,
    funcs: &[Function],
    preceding: Option<usize>,
) -> Result<Run, String> {
    if raw.text.is_empty() {
        let index = preceding.ok_or("`; run` must follow a function")?;
        return Ok(Run {
            line: raw.line,
            function: func_name(&funcs[index]),
            written_name: func_name(&funcs[index]),
            args: Vec::new(),
            expect: Expectation::Truthy,
        });
    }
    let text = raw.text.as_str();
    let name_start = text
        .strip_prefix('%')
        .ok_or("expected `%name(` after `run:`")?;
    let open = name_start
        .find('(')
        .ok_or("expected `(` after the function name")?;
    let name = &name_start[..open];
    let close = matching_paren(name_start, open).ok_or("unbalanced parentheses")?;
    let args_text = &name_start[open + 1..close];
    let rest = name_start[close + 1..].trim();
    // Like Cranelift, a directive runs the function it is attached to (the one defined just
    // before it); the name it writes is only checked, and a mismatch is a warning.
    let func = match preceding {
        Some(i) => &funcs[i],
        None => funcs
            .iter()
            .find(|f| func_name(f) == name)
            .ok_or_else(|| format!("no function named %{name} in this file"))?,
    };
    let param_types: Vec<Type> = func.signature.params.iter().map(|p| p.value_type).collect();
    let return_types: Vec<Type> = func
        .signature
        .returns
        .iter()
        .map(|p| p.value_type)
        .collect();
    let args = parse_values(args_text, &param_types, "argument")?;
    let expect = if raw.expects_trap {
        let code = rest
            .strip_prefix("==")
            .map(str::trim)
            .ok_or("expected `== CODE` after the call in a `trap:` directive")?;
        Expectation::Trap(
            TrapCode::from_name(code).ok_or_else(|| format!("unknown trap code `{code}`"))?,
        )
    } else if rest.is_empty() {
        if return_types.len() != 1 || !return_types[0].is_int() {
            return Err("a run without `==` needs a function returning one integer".into());
        }
        Expectation::Truthy
    } else {
        let (negate, expected) = if let Some(e) = rest.strip_prefix("==") {
            (false, e.trim())
        } else if let Some(e) = rest.strip_prefix("!=") {
            (true, e.trim())
        } else {
            return Err(format!(
                "expected `==` or `!=` after the call, found `{rest}`"
            ));
        };
        // `[a, b]` lists several results; a single vector result is itself `[l0 l1 …]`.
        let single_vector = return_types.len() == 1 && return_types[0].is_vector();
        let list = match expected.strip_prefix('[') {
            Some(inner) if !single_vector => inner
                .strip_suffix(']')
                .ok_or("expected `]` at the end of the result list")?,
            _ => expected,
        };
        let values = parse_values(list, &return_types, "result")?;
        if negate {
            Expectation::NotEqual(values)
        } else {
            Expectation::Equal(values)
        }
    };
    Ok(Run {
        line: raw.line,
        function: func_name(func),
        written_name: name.to_string(),
        args,
        expect,
    })
}

pub fn func_name(f: &Function) -> String {
    match &f.name {
        kestrel_ir::FunctionName::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices().skip(open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_values(text: &str, types: &[Type], what: &str) -> Result<Vec<DataValue>, String> {
    let words: Vec<&str> = if text.trim().is_empty() {
        Vec::new()
    } else {
        split_top_level(text)
    };
    if words.len() != types.len() {
        return Err(format!(
            "expected {} {what}(s), found {}",
            types.len(),
            words.len()
        ));
    }
    words
        .iter()
        .zip(types)
        .map(|(w, &ty)| parse_value(w, ty).map_err(|e| format!("{what} `{w}`: {e}")))
        .collect()
}

/// Split at the commas outside brackets (`[1 2], 3` is two words), trimming each word.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                words.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    words.push(text[start..].trim());
    words
}

/// Parse one literal as a value of type `ty`: a scalar literal, or for a vector `[l0 l1 …]`
/// (lane 0 first) or a `0x…` literal of its width.
pub fn parse_value(text: &str, ty: Type) -> Result<DataValue, String> {
    let slot = match ty {
        t if t.is_vector() => match text.strip_prefix('[') {
            Some(inner) => {
                let inner = inner
                    .strip_suffix(']')
                    .ok_or("expected `]` at the end of the vector")?;
                parse_vector_lanes(inner.split_whitespace(), t)?
            }
            None => parse_hex_bytes(text, t.bytes())?,
        },
        Type::F32 => parse_f32(text).map_err(|e| e.to_string())? as u128,
        Type::F64 => parse_f64(text).map_err(|e| e.to_string())? as u128,
        Type::F16 => parse_f16(text).map_err(|e| e.to_string())? as u128,
        Type::F128 => parse_f128(text).map_err(|e| e.to_string())?,
        t if t.is_int() => parse_int_bits(text, t.bits()).map_err(|e| e.to_string())?,
        t => return Err(format!("type {t} is not supported in run lines")),
    };
    DataValue::from_slot(ty, slot).ok_or_else(|| format!("type {ty} is not a value type"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_header_and_runs() {
        let h = scan(
            "test interpret\ntest run\nset opt_level=speed\nset enable_llvm_abi_extensions\ntarget x86_64 has_avx\n\nfunction %f() -> i8 {\n}\n; run: %f() == 1 ; a comment\n; run\n;run: %g(1)\n",
        );
        assert_eq!(h.commands, ["interpret", "run"]);
        assert_eq!(h.settings[0].value.as_deref(), Some("speed"));
        assert_eq!(h.settings[1].value, None);
        assert_eq!(h.targets[0].isa, "x86_64");
        assert_eq!(h.targets[0].flags, ["has_avx"]);
        assert_eq!(h.runs.len(), 3);
        assert_eq!(h.runs[0].text, "%f() == 1");
        assert!(!h.runs[0].expects_trap);
        assert_eq!(h.runs[1].text, "");
        assert_eq!(h.runs[2].line, 11);
    }

    #[test]
    fn trap_directives() {
        let text = "function %f(i32) -> i32 {\nblock0(v0: i32):\n    return v0\n}\n; trap: %f(1) == int_divz\n; trap: %f(1) == nonsense\n; trap: %f(1)\n";
        let funcs = kestrel_ir::parse_functions(text, "t.clif").unwrap();
        let h = scan(text);
        assert!(h.runs.iter().all(|r| r.expects_trap));
        let run = parse_run(&h.runs[0], &funcs, Some(0)).unwrap();
        assert_eq!(
            run.expect,
            Expectation::Trap(TrapCode::INTEGER_DIVISION_BY_ZERO)
        );
        assert!(parse_run(&h.runs[1], &funcs, Some(0))
            .unwrap_err()
            .contains("unknown trap code"));
        assert!(parse_run(&h.runs[2], &funcs, Some(0)).is_err());
    }

    #[test]
    fn typed_literals() {
        assert_eq!(parse_value("-1", Type::I8), Ok(DataValue::I8(-1)));
        assert_eq!(parse_value("0xff", Type::I8), Ok(DataValue::I8(-1)));
        assert_eq!(
            parse_value("0x1.8p1", Type::F32),
            Ok(DataValue::F32(3.0f32.to_bits()))
        );
        assert!(parse_value("256", Type::I8).is_err());
        assert_eq!(
            parse_value("[1 -1]", Type::I64X2),
            Ok(DataValue::Vector(
                Type::I64X2,
                1 | (u128::from(u64::MAX) << 64)
            ))
        );
        assert_eq!(
            parse_value("0x0001_0002", Type::I16.by(2).unwrap()),
            Ok(DataValue::Vector(Type::I16.by(2).unwrap(), 0x0001_0002))
        );
        assert!(parse_value("[1 2 3]", Type::I64X2).is_err());
        assert_eq!(split_top_level("[1 2], 3"), ["[1 2]", "3"]);
        assert_eq!(
            parse_value("0x1.0p0", Type::F16),
            Ok(DataValue::F16(0x3c00))
        );
        assert!(parse_value("zz", Type::I32).is_err());
    }
}
