//! Test files: the header, every function as kestrel-ir prints it, and after the entry
//! function one directive per argument set: `; run: %f(a, b) == r` (`== [r1, r2]` for
//! several results, `== []` for none) or `; trap: %f(a, b) == CODE`.

use std::fmt::Write;

use kestrel_interp::DataValue;

use crate::{Outcome, TestCase};

fn list(values: &[DataValue]) -> String {
    let mut s = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write!(s, "{v}").unwrap();
    }
    s
}

pub(crate) fn write(case: &TestCase, outcomes: &[Outcome]) -> String {
    let mut out = String::from("test interpret\ntest run\ntarget x86_64\n\n");
    let name = case.entry_name();
    for (i, f) in case.functions.iter().enumerate() {
        write!(out, "{f}").unwrap();
        if i == 0 {
            for (args, outcome) in case.args.iter().zip(outcomes) {
                let call = format!("%{name}({})", list(args));
                match outcome {
                    Outcome::Returned(r) if r.len() == 1 => {
                        writeln!(out, "; run: {call} == {}", r[0]).unwrap()
                    }
                    Outcome::Returned(r) => {
                        writeln!(out, "; run: {call} == [{}]", list(r)).unwrap()
                    }
                    Outcome::Trapped(code) => writeln!(out, "; trap: {call} == {code}").unwrap(),
                }
            }
        }
        out.push('\n');
    }
    out
}
