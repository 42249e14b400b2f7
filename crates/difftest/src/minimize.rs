//! Shrinking a failing case while it keeps failing the same way.
//!
//! The case is edited as printed text, one line at a time, and every candidate is parsed and
//! verified before the predicate sees it, so an edit never needs to preserve validity by
//! construction. The edits, tried coarse to fine until a whole pass changes nothing:
//!
//! 1. keep a single argument set, then zero each argument;
//! 2. delete a non-entry function, or a non-entry block;
//! 3. turn a `brif`/`br_table` into a `jump` to one of its destinations;
//! 4. delete an instruction (valid when its results are unused), make its result an alias
//!    of one of its operands, or replace its results by constants (`0`);
//! 5. delete a declaration (`ss`, `fn`, `sig`) or a value alias line.
//!
//! Memory writes are never deleted (a load could then read uninitialized stack, a difference
//! the candidate itself causes) and addresses are never replaced by constants.
//!
//! Contract: the returned case satisfies the predicate (the input must), parses, verifies,
//! and is no larger than the input. The predicate is called at most `budget` times.

use kestrel_fuzzgen::TestCase;
use kestrel_interp::DataValue;
use kestrel_ir::{Function, Opcode, Type};

/// Shrink `case`; `still_fails` says whether a candidate fails the way the original did.
pub fn minimize(
    case: &TestCase,
    budget: usize,
    still_fails: &mut dyn FnMut(&TestCase) -> bool,
) -> TestCase {
    let mut m = Minimizer {
        best_size: size(case),
        best: case.clone(),
        trials: 0,
        budget,
        still_fails,
    };
    m.shrink_args();
    loop {
        let before = m.trials;
        let progressed = m.shrink_text_pass();
        if !progressed || m.trials == before || m.trials >= m.budget {
            break;
        }
    }
    m.best
}

struct Minimizer<'p> {
    best: TestCase,
    /// `size(&best)`, kept with it.
    best_size: (usize, usize, usize, usize, usize, usize),
    trials: usize,
    budget: usize,
    still_fails: &'p mut dyn FnMut(&TestCase) -> bool,
}

impl Minimizer<'_> {
    fn try_case(&mut self, candidate: TestCase) -> bool {
        if self.trials >= self.budget {
            return false;
        }
        let candidate_size = size(&candidate);
        if candidate_size >= self.best_size {
            return false;
        }
        self.trials += 1;
        if (self.still_fails)(&candidate) {
            self.best = candidate;
            self.best_size = candidate_size;
            true
        } else {
            false
        }
    }

    fn shrink_args(&mut self) {
        if self.best.args.len() > 1 {
            for i in 0..self.best.args.len() {
                let mut c = self.best.clone();
                c.args = vec![self.best.args[i].clone()];
                if self.try_case(c) {
                    break;
                }
            }
        }
        for set in 0..self.best.args.len() {
            for a in 0..self.best.args[set].len() {
                let zero = zero_of(self.best.args[set][a].ty());
                if self.best.args[set][a] != zero {
                    let mut c = self.best.clone();
                    c.args[set][a] = zero;
                    self.try_case(c);
                }
            }
        }
    }

    /// One pass of text edits over the current best case; true if any edit was kept.
    fn shrink_text_pass(&mut self) -> bool {
        let mut progressed = false;
        let mut edit_index = 0;
        // The text and its edit list change only when an edit is kept.
        let mut text = module_text(&self.best.functions);
        let Some(mut edits) = Edits::of(&text) else {
            return false;
        };
        while let Some(edit) = edits.list.get(edit_index) {
            edit_index += 1;
            let new_text = edit.apply(&text);
            if let Some(functions) = parse_valid(&new_text) {
                let candidate = TestCase {
                    functions,
                    args: self.best.args.clone(),
                };
                if self.try_case(candidate) {
                    progressed = true;
                    // Edits before this index were already tried on an earlier text;
                    // continuing from the same index revisits none of them but may skip a
                    // few new ones (the next pass finds those).
                    edit_index -= 1;
                    text = module_text(&self.best.functions);
                    match Edits::of(&text) {
                        Some(e) => edits = e,
                        None => return progressed,
                    }
                }
            }
            if self.trials >= self.budget {
                break;
            }
        }
        progressed
    }
}

/// What shrinking minimizes, lexicographically: instructions that compute something (not a
/// constant; conditional branches count twice), then all instructions, then nonzero
/// constants, then argument sets, then nonzero arguments, then the printed length. Every
/// kept edit strictly decreases it, so minimization terminates and never grows a case.
fn size(case: &TestCase) -> (usize, usize, usize, usize, usize, usize) {
    let mut computing = 0;
    let mut all = 0;
    for f in &case.functions {
        for &block in f.layout.blocks() {
            for inst in f.layout.block_insts(block) {
                all += 1;
                match f.dfg.inst(inst).opcode() {
                    // A conditional branch weighs more than the jump it can become.
                    Opcode::Brif | Opcode::BrTable => computing += 2,
                    _ if is_constant_like(f, inst) => {}
                    _ => computing += 1,
                }
            }
        }
    }
    let text = module_text(&case.functions);
    let nonzero_constants = text
        .lines()
        .filter(|l| l.contains("const") && !(l.ends_with(" 0") || l.ends_with(" 0.0")))
        .count();
    let nonzero = case
        .args
        .iter()
        .flatten()
        .filter(|&&a| a != zero_of(a.ty()))
        .count();
    (
        computing,
        all,
        nonzero_constants,
        case.args.len(),
        nonzero,
        text.len(),
    )
}

/// A constant, or the `uextend.i128` of one (how an i128 zero is written).
fn is_constant_like(f: &Function, inst: kestrel_ir::Inst) -> bool {
    match f.dfg.inst(inst).opcode() {
        Opcode::Iconst | Opcode::F32const | Opcode::F64const => true,
        Opcode::Uextend => f.dfg.inst_args(inst).all(|a| match f.dfg.value_def(a) {
            kestrel_ir::ValueDef::Result(def, _) => f.dfg.inst(def).opcode() == Opcode::Iconst,
            _ => false,
        }),
        _ => false,
    }
}

fn zero_of(ty: Type) -> DataValue {
    DataValue::from_slot(ty, 0).unwrap_or(DataValue::I64(0))
}

fn module_text(functions: &[Function]) -> String {
    functions.iter().map(|f| f.to_string() + "\n").collect()
}

/// Parse and verify a candidate module; `None` if it is not a valid module.
fn parse_valid(text: &str) -> Option<Vec<Function>> {
    let functions = kestrel_ir::parse_functions(text, "candidate.clif").ok()?;
    if functions.is_empty()
        || functions
            .iter()
            .any(|f| kestrel_ir::verify_function(f).is_err())
    {
        return None;
    }
    Some(functions)
}

/// Replace lines `start..end` (0-based, end exclusive) by `with`.
#[derive(Clone, Debug)]
struct Edit {
    start: usize,
    end: usize,
    with: Vec<String>,
}

impl Edit {
    fn apply(&self, text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let mut out = String::with_capacity(text.len());
        for l in &lines[..self.start] {
            out += l;
            out.push('\n');
        }
        for l in &self.with {
            out += l;
            out.push('\n');
        }
        for l in &lines[self.end..] {
            out += l;
            out.push('\n');
        }
        out
    }
}

/// The candidate edits of one text, coarse first.
struct Edits {
    list: Vec<Edit>,
}

impl Edits {
    fn of(text: &str) -> Option<Edits> {
        let functions = kestrel_ir::parse_functions(text, "current.clif").ok()?;
        let lines: Vec<&str> = text.lines().collect();
        let mut fresh = max_value_number(text) + 1;
        let mut coarse = Vec::new();
        let mut branches = Vec::new();
        let mut insts = Vec::new();
        let mut decls = Vec::new();
        for (fi, f) in functions.iter().enumerate() {
            let start = f.source_map.as_ref()?.function.line as usize - 1;
            let end = (start..lines.len()).find(|&i| lines[i].starts_with('}'))? + 1;
            if fi > 0 {
                coarse.push(Edit {
                    start,
                    end,
                    with: Vec::new(),
                });
            }
            let blocks = f.layout.blocks();
            for (bi, &block) in blocks.iter().enumerate() {
                let header = f.block_pos(block)?.line as usize - 1;
                if bi > 0 {
                    let next = match blocks.get(bi + 1) {
                        Some(&b) => f.block_pos(b)?.line as usize - 1,
                        None => end - 1,
                    };
                    coarse.push(Edit {
                        start: header,
                        end: next,
                        with: Vec::new(),
                    });
                }
                for inst in f.layout.block_insts(block) {
                    let line = f.inst_pos(inst)?.line as usize - 1;
                    let op = f.dfg.inst(inst).opcode();
                    let text = lines[line];
                    match op {
                        Opcode::Brif | Opcode::BrTable => {
                            for dest in destinations(text) {
                                branches.push(Edit {
                                    start: line,
                                    end: line + 1,
                                    with: vec![format!("    jump {dest}")],
                                });
                            }
                        }
                        _ if op.is_terminator() => {}
                        // An address must stay one: a zero in its place would make the
                        // native code fault where the interpreter reports an error.
                        Opcode::StackAddr
                        | Opcode::FuncAddr
                        | Opcode::GetFramePointer
                        | Opcode::GetStackPointer
                        | Opcode::GetReturnAddress => {}
                        _ => {
                            // Deleting works when nothing uses the results (verification
                            // rejects the candidate otherwise, without a predicate call).
                            // Memory writes stay: without them a later load could read
                            // uninitialized stack, a disagreement the program itself causes.
                            if !op.can_store() {
                                insts.push(Edit {
                                    start: line,
                                    end: line + 1,
                                    with: Vec::new(),
                                });
                            }
                            let results = f.dfg.inst_results(inst);
                            // A single result can become an alias of a same-typed operand.
                            if let [result] = results {
                                let ty = f.dfg.value_type(*result);
                                for arg in f.dfg.inst_args(inst) {
                                    if f.dfg.value_type(arg) == ty {
                                        insts.push(Edit {
                                            start: line,
                                            end: line + 1,
                                            with: vec![format!("    {result} -> {arg}")],
                                        });
                                    }
                                }
                            }
                            let mut with = Vec::new();
                            for &v in results {
                                constant_lines(
                                    &format!("{v}"),
                                    f.dfg.value_type(v),
                                    &mut fresh,
                                    &mut with,
                                );
                            }
                            let is_constant_zero = with.len() == 1 && with[0].trim() == text.trim();
                            if !results.is_empty() && !is_constant_zero {
                                insts.push(Edit {
                                    start: line,
                                    end: line + 1,
                                    with,
                                });
                            }
                        }
                    }
                }
            }
            // Declarations sit between the signature line and the first block.
            let first_block = f.block_pos(*blocks.first()?)?.line as usize - 1;
            for (i, line) in lines.iter().enumerate().take(first_block).skip(start + 1) {
                let l = line.trim_start();
                if l.starts_with("ss") || l.starts_with("fn") || l.starts_with("sig") {
                    decls.push(Edit {
                        start: i,
                        end: i + 1,
                        with: Vec::new(),
                    });
                }
            }
            // Alias lines (`v5 -> v2`) anywhere in the body.
            for (i, line) in lines.iter().enumerate().take(end).skip(first_block) {
                if line.contains(" -> v") && !line.contains('=') {
                    decls.push(Edit {
                        start: i,
                        end: i + 1,
                        with: Vec::new(),
                    });
                }
            }
        }
        let mut list = coarse;
        list.extend(branches);
        list.extend(insts);
        list.extend(decls);
        Some(Edits { list })
    }
}

/// Lines defining `name` as a zero of type `ty` (i128 goes through a fresh i64).
fn constant_lines(name: &str, ty: Type, fresh: &mut u32, out: &mut Vec<String>) {
    match ty {
        Type::F32 => out.push(format!("    {name} = f32const 0.0")),
        Type::F64 => out.push(format!("    {name} = f64const 0.0")),
        Type::I128 => {
            let tmp = format!("v{fresh}");
            *fresh += 1;
            out.push(format!("    {tmp} = iconst.i64 0"));
            out.push(format!("    {name} = uextend.i128 {tmp}"));
        }
        t => out.push(format!("    {name} = iconst.{t} 0")),
    }
}

/// The destinations written in a `brif` or `br_table` line, as `blockN(args)` text.
fn destinations(line: &str) -> Vec<String> {
    let body = line.trim();
    let rest = body
        .strip_prefix("brif")
        .or_else(|| body.strip_prefix("br_table"))
        .unwrap_or("");
    split_top_level(rest)
        .into_iter()
        .skip(1) // the condition or index
        .flat_map(|part| {
            let part = part.trim();
            match part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
                Some(inner) => split_top_level(inner),
                None => vec![part.to_string()],
            }
        })
        .map(|d| d.trim().to_string())
        .filter(|d| d.starts_with("block"))
        .collect()
}

/// Split at commas outside parentheses and brackets.
fn split_top_level(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        parts.push(current);
    }
    parts
}

fn max_value_number(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut max = 0;
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if bytes[i] == b'v' && starts_word {
            let digits: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(n) = digits.parse::<u32>() {
                max = max.max(n);
            }
        }
        i += 1;
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_of_branches() {
        assert_eq!(
            destinations("    brif v3, block2(v4, v5), block5"),
            ["block2(v4, v5)", "block5"]
        );
        assert_eq!(
            destinations("    br_table v1, block1(v2), [block2, block3(v5)]"),
            ["block1(v2)", "block2", "block3(v5)"]
        );
    }

    #[test]
    fn shrinks_to_the_failing_instruction() {
        // "Fails" while the function still contains a udiv: everything else should go.
        let text = "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = iadd v0, v1\n    v3 = imul v2, v0\n    v4 = udiv v3, v1\n    v5 = bxor v4, v2\n    brif v5, block1, block2(v5)\nblock1:\n    v6 = iconst.i64 9\n    jump block2(v6)\nblock2(v7: i64):\n    return v7\n}\n";
        let case = TestCase {
            functions: kestrel_ir::parse_functions(text, "t").unwrap(),
            args: vec![vec![DataValue::I64(3), DataValue::I64(4)]; 4],
        };
        let has_udiv = |c: &TestCase| c.functions[0].to_string().contains("udiv");
        let small = minimize(&case, 1000, &mut |c| has_udiv(c));
        assert!(has_udiv(&small));
        assert_eq!(small.args.len(), 1);
        assert_eq!(small.args[0], [DataValue::I64(0), DataValue::I64(0)]);
        let printed = small.functions[0].to_string();
        assert!(
            !printed.contains("imul") && !printed.contains("brif"),
            "{printed}"
        );
        assert!(small.functions[0].num_placed_insts() < case.functions[0].num_placed_insts());
    }
}
