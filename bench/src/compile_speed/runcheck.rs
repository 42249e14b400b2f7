//! A sanity check that the code being timed is right: some generated functions are run
//! natively (Kestrel's code through `kestrel-jit`, via the filetests' native module) and in
//! the interpreter, on a few deterministic arguments, and the results compared.

use kestrel_filetests::native::NativeModule;
use kestrel_interp::{DataValue, Interpreter};
use kestrel_ir::Type;

use super::corpus::Case;
use super::gen::Rng;

/// How many functions agreed, out of how many were run; the disagreements, described.
pub fn check(cases: &[&Case], seed: u64) -> (usize, usize, Vec<String>) {
    let mut rng = Rng::new(seed);
    let mut agreed = 0;
    let mut failures = Vec::new();
    for case in cases {
        let f = &case.kestrel;
        let funcs = vec![f.clone()];
        let name = f.name.to_string();
        let name = name.trim_start_matches('%');
        let module = match NativeModule::compile(&funcs) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: {}", case.label, e.join("; ")));
                continue;
            }
        };
        let mut ok = true;
        for _ in 0..3 {
            let args: Vec<DataValue> = f
                .signature
                .params
                .iter()
                .map(|p| {
                    let x = rng.next() as i64 >> rng.range(0, 60);
                    if p.value_type == Type::I32 {
                        DataValue::I32(x as i32)
                    } else {
                        DataValue::I64(x)
                    }
                })
                .collect();
            let native = module.call(name, &args);
            let interp = Interpreter::new(&funcs)
                .with_fuel(Some(100_000_000))
                .call_index(0, &args)
                .map_err(|e| e.to_string());
            if native != interp {
                ok = false;
                failures.push(format!(
                    "{}{args:?}: native {native:?}, interpreter {interp:?}",
                    case.label
                ));
                break;
            }
        }
        agreed += ok as usize;
    }
    (agreed, cases.len(), failures)
}
